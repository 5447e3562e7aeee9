// The menu cpuidle governor as in Linux 4.0 (drivers/cpuidle/governors/menu.c:
// menu_select(), menu_update(), get_typical_interval()). It decides which
// idle state a CPU enters, and so how long a wakeup sent to it waits for the
// state's exit latency.
//
// What it does: predict the idle time as the time to the next timer scaled by
// a learned correction factor (one per order of magnitude), or as the average
// of the last 8 idle periods when they repeat; then pick the deepest state
// whose target residency fits the prediction and whose exit latency is below
// prediction / performance_multiplier, where the multiplier grows with the
// CPU's load (rq->cpu_load[0]) and its iowaiters. So a busy CPU only takes
// short naps in C1, and only a CPU with a long, regular idle pattern goes
// deep. Like the kernel, it works in integer microseconds; the rounding is
// part of its behaviour.
//
// Where it falls short: the caller supplies the time to the next timer
// (tick_nohz_get_sleep_length()); the simulator has no timers besides the
// tick, see Kernel::enter_idle() for the reading chosen. PM QoS latency
// requests are not modelled (the default, no constraint, applies). 3.10's
// menu differs in details (it also kept a separate exit-latency estimate);
// the 4.0 version is used for every CFS kernel.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

namespace kernel {

class MenuGovernor {
 public:
  struct State {
    uint32_t exit_latency_us;
    uint32_t target_residency_us;
    bool polling;  // the POLL state; CPUIDLE_DRIVER_STATE_START skips it
  };
  explicit MenuGovernor(std::vector<State> states);

  // menu_select(): the state to enter. next_timer_us is
  // tick_nohz_get_sleep_length(); cpu_load is rq->cpu_load[0] and
  // nr_iowaiters rq->nr_iowait, as get_iowait_load() returns them.
  int select(uint32_t next_timer_us, unsigned long nr_iowaiters, unsigned long cpu_load);
  // cpuidle_enter_state() measured last_residency_us in the state that
  // select() chose; cpuidle_reflect() then marks the data for menu_update().
  void reflect(uint32_t last_residency_us);

  [[nodiscard]] uint32_t predicted_us() const { return predicted_us_; }

 private:
  static constexpr int BUCKETS = 12;
  static constexpr int INTERVAL_SHIFT = 3;
  static constexpr int INTERVALS = 1 << INTERVAL_SHIFT;
  static constexpr uint32_t RESOLUTION = 1024;
  static constexpr uint32_t DECAY = 8;
  static constexpr uint32_t MAX_INTERESTING = 50000;

  void update();
  void get_typical_interval();

  std::vector<State> states_;
  int state_start_;  // CPUIDLE_DRIVER_STATE_START: 1 when state 0 is POLL
  int last_state_idx_ = 0;
  bool needs_update_ = false;
  uint32_t last_residency_us_ = 0;
  uint32_t next_timer_us_ = 0;
  uint32_t predicted_us_ = 0;
  int bucket_ = 0;
  std::array<uint32_t, BUCKETS> correction_factor_{};
  std::array<uint32_t, INTERVALS> intervals_{};
  int interval_ptr_ = 0;
};

}  // namespace kernel
