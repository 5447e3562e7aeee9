// Simulated time: signed 64-bit integer nanoseconds in a strong type.
// No floating point ever enters the clock, so runs are bit-reproducible.
#pragma once
#include <compare>
#include <cstdint>
#include <limits>

namespace sim {

class Time {
 public:
  constexpr Time() = default;
  constexpr explicit Time(int64_t ns) : ns_(ns) {}
  [[nodiscard]] constexpr int64_t ns() const { return ns_; }
  constexpr auto operator<=>(const Time&) const = default;
  constexpr Time operator+(Time o) const { return Time(ns_ + o.ns_); }
  constexpr Time operator-(Time o) const { return Time(ns_ - o.ns_); }
  constexpr Time& operator+=(Time o) { ns_ += o.ns_; return *this; }
  constexpr Time& operator-=(Time o) { ns_ -= o.ns_; return *this; }
  constexpr Time operator*(int64_t k) const { return Time(ns_ * k); }
  constexpr Time operator/(int64_t k) const { return Time(ns_ / k); }
  static constexpr Time max() { return Time(std::numeric_limits<int64_t>::max()); }
  static constexpr Time zero() { return Time(0); }

 private:
  int64_t ns_ = 0;
};

constexpr Time nsec(int64_t v) { return Time(v); }
constexpr Time usec(int64_t v) { return Time(v * 1000); }
constexpr Time msec(int64_t v) { return Time(v * 1000 * 1000); }
constexpr Time sec(int64_t v) { return Time(v * 1000 * 1000 * 1000); }

}  // namespace sim
