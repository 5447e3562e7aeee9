#include "obs/interval.hpp"

#include <cstdio>

#include "kernel/kernel.hpp"

namespace obs {

IntervalStats::IntervalStats(const kernel::Kernel& k, int64_t interval_ns, std::ostream& out)
    : k_(k), interval_ns_(interval_ns), out_(out) {}

void IntervalStats::start() {
  start_ns_ = k_.now_ns();
  next_ns_ = start_ns_ + interval_ns_;
  policy_at_start_ = k_.policy().stats();
  c_ = Counts{};
}

void IntervalStats::advance(int64_t t) {
  while (next_ns_ >= 0 && t >= next_ns_) {
    print(next_ns_);
    next_ns_ += interval_ns_;
  }
}

void IntervalStats::on_switch(int64_t t, int, const kernel::Task* prev, PrevState st,
                              const kernel::Task* next) {
  advance(t);
  if (next_ns_ < 0 || prev == next) return;
  ++c_.switches;
  if (st == PrevState::Preempted) ++c_.involuntary;
  if (st == PrevState::Sleeping) ++c_.sleeps[prev->wchan ? prev->wchan : "schedule"];
}

void IntervalStats::on_wakeup_placement(int64_t t, int, int, bool local) {
  advance(t);
  if (next_ns_ < 0) return;
  ++c_.wakeups;
  c_.remote_wakeups += !local;
}

void IntervalStats::on_migrate(int64_t t, int, const kernel::Task*, int, int, int) {
  advance(t);
  if (next_ns_ < 0) return;
  ++c_.migrations;
}

void IntervalStats::on_idle(int64_t t, int, int state) {
  advance(t);
  if (next_ns_ >= 0 && state >= 0) ++c_.idle_entries;
}

void IntervalStats::finish(int64_t t) {
  if (next_ns_ < 0) return;
  advance(t);
  if (t > next_ns_ - interval_ns_) print(t);
}

void IntervalStats::print(int64_t end_ns) {
  if (!header_printed_) {
    out_ << "#          time   switches involuntary    wakeups     remote migrations idle-entries  sleeps by wchan; "
            "policy counters that changed\n";
    header_printed_ = true;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%15.9f %10lld %11lld %10lld %10lld %10lld %12lld ",
                static_cast<double>(end_ns - start_ns_) / 1e9, static_cast<long long>(c_.switches),
                static_cast<long long>(c_.involuntary), static_cast<long long>(c_.wakeups),
                static_cast<long long>(c_.remote_wakeups), static_cast<long long>(c_.migrations),
                static_cast<long long>(c_.idle_entries));
  out_ << buf;
  for (const auto& [where, n] : c_.sleeps) out_ << " " << where << "=" << n;
  auto policy = k_.policy().stats();
  out_ << ";";
  for (size_t i = 0; i < policy.size(); ++i) {
    const int64_t before = i < policy_at_start_.size() ? policy_at_start_[i].second : 0;
    if (policy[i].second != before) out_ << " " << policy[i].first << "=" << policy[i].second - before;
  }
  out_ << "\n";
  policy_at_start_ = std::move(policy);
  c_ = Counts{};
}

}  // namespace obs
