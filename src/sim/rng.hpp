// Named random streams derived from one master seed.
//
// Each component asks for its own stream by name; the stream's state is a hash
// of (master seed, name), so adding a component never shifts another's numbers.
// Generator: xoshiro256** seeded through splitmix64. Distributions are written
// here (not <random>) because libstdc++ and libc++ distributions differ.
#pragma once
#include <cstdint>
#include <string_view>

namespace sim {

class Rng {
 public:
  Rng(uint64_t master_seed, std::string_view stream_name);
  uint64_t next_u64();
  // Uniform integer in [0, bound) without modulo bias (Lemire's method).
  uint64_t below(uint64_t bound);
  // Uniform integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi);
  // Returns true with probability num/den.
  bool chance(uint64_t num, uint64_t den);

 private:
  uint64_t s_[4];
};

uint64_t hash_name(std::string_view name);

}  // namespace sim
