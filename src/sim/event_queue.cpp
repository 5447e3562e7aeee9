#include "sim/event_queue.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace sim {

void EventQueue::schedule(Time at, Phase phase, Action action) {
  if (at < now_) throw std::logic_error("event scheduled in the past");
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = std::move(action);
  } else {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::move(action));
  }
  // (phase, sequence) in one word: 2^60 events are never reached.
  heap_.push_back(Key{at, (static_cast<uint64_t>(phase) << 60) | next_seq_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
}

uint64_t EventQueue::run(Time limit, uint64_t max_events) {
  stopped_ = false;
  uint64_t n = 0;
  while (!heap_.empty() && !stopped_ && n < max_events) {
    if (heap_.front().at > limit) break;
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    const Key k = heap_.back();
    heap_.pop_back();
    // Take the action out before running it: it may schedule events, which
    // may reuse this slot or grow the slot vector.
    Action action = std::move(slots_[k.slot]);
    free_slots_.push_back(k.slot);
    const bool advanced = k.at != now_;
    now_ = k.at;
    if (advanced && advance_listener_) advance_listener_(now_);
    action();
    ++n;
  }
  executed_ += n;
  return n;
}

}  // namespace sim
