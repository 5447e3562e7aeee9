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

// The draws are inline: every charge of kernel work draws its noise.
class Rng {
 public:
  Rng(uint64_t master_seed, std::string_view stream_name);
  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform integer in [0, bound) without modulo bias (Lemire's method).
  uint64_t below(uint64_t bound) {
    if (bound == 0) return 0;
    __uint128_t m = static_cast<__uint128_t>(next_u64()) * bound;
    auto low = static_cast<uint64_t>(m);
    if (low < bound) {
      const uint64_t threshold = -bound % bound;
      while (low < threshold) {
        m = static_cast<__uint128_t>(next_u64()) * bound;
        low = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }
  // Uniform integer in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  // Returns true with probability num/den.
  bool chance(uint64_t num, uint64_t den) { return below(den) < num; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

uint64_t hash_name(std::string_view name);

}  // namespace sim
