#include "kernel/cpuidle_menu.hpp"

#include <climits>
#include <cmath>

namespace kernel {
namespace {

// include/linux/sched.h: the load average fixed point (FSHIFT 11).
constexpr unsigned long FSHIFT = 11;
constexpr unsigned long FIXED_1 = 1UL << FSHIFT;
constexpr unsigned long load_int(unsigned long x) { return x >> FSHIFT; }
constexpr unsigned long load_frac(unsigned long x) { return load_int((x & (FIXED_1 - 1)) * 100); }

constexpr int get_loadavg(unsigned long load) {
  return static_cast<int>(load_int(load) * 10 + load_frac(load) / 10);
}

// "We keep two groups of stats; one with no IO pending, one without."
int which_bucket(uint32_t duration, unsigned long nr_iowaiters, int buckets) {
  int bucket = nr_iowaiters ? buckets / 2 : 0;
  if (duration < 10) return bucket;
  if (duration < 100) return bucket + 1;
  if (duration < 1000) return bucket + 2;
  if (duration < 10000) return bucket + 3;
  if (duration < 100000) return bucket + 4;
  return bucket + 5;
}

// "The busier the system, the less impact of C states is acceptable."
int performance_multiplier(unsigned long nr_iowaiters, unsigned long load) {
  int mult = 1;
  mult += 2 * get_loadavg(load);
  mult += 10 * static_cast<int>(nr_iowaiters);
  return mult;
}

uint64_t div_round64(uint64_t dividend, uint32_t divisor) { return (dividend + divisor / 2) / divisor; }

// lib/int_sqrt.c: floor of the square root.
uint64_t int_sqrt(uint64_t x) {
  auto r = static_cast<uint64_t>(std::sqrt(static_cast<long double>(x)));
  while (r * r > x) --r;
  while ((r + 1) * (r + 1) <= x) ++r;
  return r;
}

// PM_QOS_CPU_DMA_LAT_DEFAULT_VALUE: no latency constraint.
constexpr uint32_t PM_QOS_DEFAULT_LATENCY_US = 2000000000U;

}  // namespace

MenuGovernor::MenuGovernor(std::vector<State> states)
    : states_(std::move(states)), state_start_(!states_.empty() && states_[0].polling ? 1 : 0) {
  // menu_enable_device(): "we actually want to start out with a unity factor".
  correction_factor_.fill(RESOLUTION * DECAY);
}

void MenuGovernor::get_typical_interval() {
  uint32_t thresh = UINT_MAX;  // discard outliers above this value
  for (;;) {
    uint32_t max = 0;
    uint64_t avg = 0;
    int divisor = 0;
    for (uint32_t value : intervals_) {
      if (value <= thresh) {
        avg += value;
        divisor++;
        if (value > max) max = value;
      }
    }
    if (divisor == INTERVALS)
      avg >>= INTERVAL_SHIFT;
    else
      avg /= static_cast<uint64_t>(divisor);

    uint64_t stddev = 0;
    for (uint32_t value : intervals_) {
      if (value <= thresh) {
        const int64_t diff = static_cast<int64_t>(value) - static_cast<int64_t>(avg);
        stddev += static_cast<uint64_t>(diff * diff);
      }
    }
    if (divisor == INTERVALS)
      stddev >>= INTERVAL_SHIFT;
    else
      stddev /= static_cast<uint64_t>(divisor);

    // 64-bit unsigned long: the ULONG_MAX guard never rejects.
    stddev = int_sqrt(stddev);
    if ((avg > stddev * 6 && divisor * 4 >= INTERVALS * 3) || stddev <= 20) {
      if (next_timer_us_ > avg) predicted_us_ = static_cast<uint32_t>(avg);
      return;
    }
    // Drop the largest outlier and retry, down to 3/4 of the samples.
    if (divisor * 4 <= INTERVALS * 3) return;
    thresh = max - 1;
  }
}

int MenuGovernor::select(uint32_t next_timer_us, unsigned long nr_iowaiters, unsigned long cpu_load) {
  if (needs_update_) {
    update();
    needs_update_ = false;
  }
  last_state_idx_ = state_start_ - 1;
  uint32_t latency_req = PM_QOS_DEFAULT_LATENCY_US;

  next_timer_us_ = next_timer_us;
  bucket_ = which_bucket(next_timer_us_, nr_iowaiters, BUCKETS);
  predicted_us_ = static_cast<uint32_t>(div_round64(
      static_cast<uint64_t>(next_timer_us_) * correction_factor_[static_cast<size_t>(bucket_)],
      RESOLUTION * DECAY));
  get_typical_interval();

  const auto interactivity_req =
      static_cast<uint32_t>(predicted_us_ / static_cast<uint32_t>(performance_multiplier(nr_iowaiters, cpu_load)));
  if (latency_req > interactivity_req) latency_req = interactivity_req;

  // "We want to default to C1 (hlt), not to busy polling unless the timer
  // is happening really really soon."
  if (next_timer_us_ > 5 && state_start_ < static_cast<int>(states_.size())) last_state_idx_ = state_start_;

  for (int i = state_start_; i < static_cast<int>(states_.size()); i++) {
    const State& s = states_[static_cast<size_t>(i)];
    if (s.target_residency_us > predicted_us_) continue;
    if (s.exit_latency_us > latency_req) continue;
    last_state_idx_ = i;
  }
  // -1 sends cpuidle_idle_call() to the default arch idle, x86 default_idle()
  // (HLT), without cpuidle_reflect(): no update follows. HLT is the first
  // non-polling state; a table with no such state (none is committed) falls
  // back to state 0.
  if (last_state_idx_ < 0) return state_start_ < static_cast<int>(states_.size()) ? state_start_ : 0;
  needs_update_ = true;  // cpuidle_reflect() once the state is left
  return last_state_idx_;
}

void MenuGovernor::reflect(uint32_t last_residency_us) { last_residency_us_ = last_residency_us; }

void MenuGovernor::update() {
  const State& target = states_[static_cast<size_t>(last_state_idx_)];
  uint32_t measured_us = last_residency_us_;
  // "Any measured amount of time will include the exit latency."
  if (measured_us > target.exit_latency_us) measured_us -= target.exit_latency_us;
  if (measured_us > next_timer_us_) measured_us = next_timer_us_;

  uint32_t new_factor = correction_factor_[static_cast<size_t>(bucket_)];
  new_factor -= new_factor / DECAY;
  if (next_timer_us_ > 0 && measured_us < MAX_INTERESTING)
    new_factor += RESOLUTION * measured_us / next_timer_us_;
  else
    new_factor += RESOLUTION;  // idle so long that it counts as a perfect prediction
  correction_factor_[static_cast<size_t>(bucket_)] = new_factor;

  intervals_[static_cast<size_t>(interval_ptr_++)] = measured_us;
  if (interval_ptr_ >= INTERVALS) interval_ptr_ = 0;
}

}  // namespace kernel
