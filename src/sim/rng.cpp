#include "sim/rng.hpp"

namespace sim {
namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

uint64_t hash_name(std::string_view name) {
  // FNV-1a, 64 bit.
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

Rng::Rng(uint64_t master_seed, std::string_view stream_name) {
  uint64_t x = master_seed ^ rotl(hash_name(stream_name), 17);
  for (auto& s : s_) s = splitmix64(x);
}

}  // namespace sim
