// The engine: a single-threaded queue of events in a total order.
//
// Events are ordered by (time, phase, sequence). The phase breaks ties between
// different kinds of events at the same nanosecond so the order never depends
// on insertion accidents:
//   Phase::Hardware  – an execution segment on a CPU completes (work is done
//                      before anything reacts to it at the same instant);
//   Phase::Interrupt – IPIs and wake-list deliveries arrive;
//   Phase::Timer     – scheduler ticks (a tick at the same instant as a
//                      completion sees the completed state);
//   Phase::Control   – harness actions (start barrier, stop, sampling).
// The sequence number is the insertion order, so equal (time, phase) events
// run first-scheduled-first.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "sim/inline_action.hpp"
#include "sim/time.hpp"

namespace sim {

enum class Phase : uint8_t { Hardware = 0, Interrupt = 1, Timer = 2, Control = 3 };

class EventQueue {
 public:
  using Action = InlineAction;

  void schedule(Time at, Phase phase, Action action);
  // Runs events until the queue is empty, stop() is called, or the next
  // event lies beyond `limit`. Returns the number of events executed.
  uint64_t run(Time limit = Time::max(), uint64_t max_events = UINT64_MAX);
  void stop() { stopped_ = true; }
  // Called with the new time whenever time moves forward, before the first
  // event at that time runs (observers that sample at fixed times use it;
  // it must not change the simulation).
  void set_advance_listener(std::function<void(Time)> listener) { advance_listener_ = std::move(listener); }
  [[nodiscard]] Time now() const { return now_; }
  [[nodiscard]] bool empty() const { return heap_.empty(); }
  [[nodiscard]] size_t pending() const { return heap_.size(); }
  [[nodiscard]] uint64_t executed() const { return executed_; }

 private:
  // A 4-ary min-heap of small keys: each key names the slot that holds its
  // action, so a sift moves 24 bytes, not the callable; slots are reused.
  // (time, phase, sequence) is a total order, so the heap's shape never
  // shows in the order events run.
  struct Key {
    Time at;
    uint64_t order;  // phase in the top bits, then the sequence number
    uint32_t slot;
  };
  static bool earlier(const Key& a, const Key& b) {
    if (a.at != b.at) return a.at < b.at;
    return a.order < b.order;
  }
  void sift_up(size_t i, Key k);
  void sift_down(Key k);
  std::vector<Key> heap_;
  std::vector<Action> slots_;
  std::vector<uint32_t> free_slots_;
  Time now_{};
  uint64_t next_seq_ = 0;
  uint64_t executed_ = 0;
  bool stopped_ = false;
  std::function<void(Time)> advance_listener_;
};

}  // namespace sim
