// A fixed-capacity CPU bitmask (up to 256 CPUs), iterated in ascending order
// like the kernel's cpumask. Also provides the wrap-around walk the kernel
// uses (for_each_cpu_wrap).
#pragma once
#include <array>
#include <bit>
#include <cstdint>
#include <stdexcept>

namespace hw {

class CpuMask {
 public:
  static constexpr int kMaxCpus = 256;
  void set(int cpu) { words_[idx(cpu)] |= bit(cpu); }
  void clear(int cpu) { words_[idx(cpu)] &= ~bit(cpu); }
  [[nodiscard]] bool test(int cpu) const {
    return cpu >= 0 && cpu < kMaxCpus && (words_[static_cast<size_t>(cpu) / 64] & bit(cpu)) != 0;
  }
  [[nodiscard]] int weight() const {
    int w = 0;
    for (auto x : words_) w += std::popcount(x);
    return w;
  }
  [[nodiscard]] bool empty() const {
    for (auto x : words_)
      if (x) return false;
    return true;
  }
  [[nodiscard]] int first() const { return next(-1); }
  // First set CPU strictly greater than `cpu`, or -1.
  [[nodiscard]] int next(int cpu) const {
    for (int c = cpu + 1; c < kMaxCpus;) {
      uint64_t w = words_[static_cast<size_t>(c) / 64] >> (c % 64);
      if (w) return c + std::countr_zero(w);
      c = (c / 64 + 1) * 64;
    }
    return -1;
  }
  CpuMask operator&(const CpuMask& o) const {
    CpuMask r;
    for (size_t i = 0; i < words_.size(); ++i) r.words_[i] = words_[i] & o.words_[i];
    return r;
  }
  CpuMask operator|(const CpuMask& o) const {
    CpuMask r;
    for (size_t i = 0; i < words_.size(); ++i) r.words_[i] = words_[i] | o.words_[i];
    return r;
  }
  CpuMask without(const CpuMask& o) const {
    CpuMask r;
    for (size_t i = 0; i < words_.size(); ++i) r.words_[i] = words_[i] & ~o.words_[i];
    return r;
  }
  [[nodiscard]] bool intersects(const CpuMask& o) const {
    for (size_t i = 0; i < words_.size(); ++i)
      if (words_[i] & o.words_[i]) return true;
    return false;
  }
  [[nodiscard]] bool subset_of(const CpuMask& o) const {
    for (size_t i = 0; i < words_.size(); ++i)
      if (words_[i] & ~o.words_[i]) return false;
    return true;
  }
  bool operator==(const CpuMask&) const = default;

  template <class F>
  void for_each(F&& f) const {
    for (int c = first(); c >= 0; c = next(c)) f(c);
  }
  // for_each_cpu_wrap(cpu, mask, start): start, start+1, ..., wrapping.
  template <class F>
  void for_each_wrap(int start, F&& f) const {
    for (int c = next(start - 1); c >= 0; c = next(c)) f(c);
    for (int c = first(); c >= 0 && c < start; c = next(c)) f(c);
  }

 private:
  static size_t idx(int cpu) {
    if (cpu < 0 || cpu >= kMaxCpus) throw std::out_of_range("cpu index out of range");
    return static_cast<size_t>(cpu) / 64;
  }
  static uint64_t bit(int cpu) { return uint64_t{1} << (static_cast<unsigned>(cpu) % 64); }
  std::array<uint64_t, kMaxCpus / 64> words_{};
};

}  // namespace hw
