#include "sim/event_queue.hpp"

#include <algorithm>
#include <cassert>
#include <stdexcept>

namespace sim {

bool EventQueue::later(const Entry& a, const Entry& b) {
  if (a.at != b.at) return a.at > b.at;
  if (a.phase != b.phase) return a.phase > b.phase;
  return a.seq > b.seq;
}

void EventQueue::schedule(Time at, Phase phase, Action action) {
  if (at < now_) throw std::logic_error("event scheduled in the past");
  heap_.push_back(Entry{at, phase, next_seq_++, std::move(action)});
  std::push_heap(heap_.begin(), heap_.end(), later);
}

uint64_t EventQueue::run(Time limit, uint64_t max_events) {
  stopped_ = false;
  uint64_t n = 0;
  while (!heap_.empty() && !stopped_ && n < max_events) {
    if (heap_.front().at > limit) break;
    std::pop_heap(heap_.begin(), heap_.end(), later);
    Entry e = std::move(heap_.back());
    heap_.pop_back();
    const bool advanced = e.at != now_;
    now_ = e.at;
    if (advanced && advance_listener_) advance_listener_(now_);
    e.action();
    ++n;
  }
  executed_ += n;
  return n;
}

}  // namespace sim
