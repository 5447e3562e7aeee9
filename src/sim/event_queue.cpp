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
  heap_.emplace_back();
  sift_up(heap_.size() - 1, Key{at, (static_cast<uint64_t>(phase) << 60) | next_seq_++, slot});
}

// Four children a node: half the depth of a binary heap, and the children
// of one node share a cache line or two.
void EventQueue::sift_up(size_t i, Key k) {
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!earlier(k, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = k;
}

// Puts k, the heap's old last key, in place of the removed root.
void EventQueue::sift_down(Key k) {
  const size_t n = heap_.size();
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = std::min(first + 4, n);
    for (size_t c = first + 1; c < end; ++c)
      if (earlier(heap_[c], heap_[best])) best = c;
    if (!earlier(heap_[best], k)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = k;
}

uint64_t EventQueue::run(Time limit, uint64_t max_events) {
  stopped_ = false;
  uint64_t n = 0;
  while (!heap_.empty() && !stopped_ && n < max_events) {
    if (heap_.front().at > limit) break;
    const Key k = heap_.front();
    const Key last = heap_.back();
    heap_.pop_back();
    if (!heap_.empty()) sift_down(last);
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
