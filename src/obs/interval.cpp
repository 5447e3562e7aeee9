#include "obs/interval.hpp"

#include <cstdio>
#include <stdexcept>

#include "kernel/kernel.hpp"
#include "obs/stats.hpp"

namespace obs {

namespace {
std::map<std::string, int64_t> policy_counters(const kernel::Kernel& k) {
  std::map<std::string, int64_t> m;
  for (const auto& [name, value] : k.policy().stats()) m[name] = value;
  return m;
}
}  // namespace

IntervalStats::IntervalStats(const kernel::Kernel& k, int64_t interval_ns, std::ostream& out)
    : k_(k), interval_ns_(interval_ns), out_(out), smt_(k.machine().topo().threads_per_core() > 1) {
  if (interval_ns <= 0) throw std::invalid_argument("interval must be positive");
}

void IntervalStats::start() {
  start_ns_ = k_.now_ns();
  next_end_ns_ = start_ns_ + interval_ns_;
  policy_at_last_line_ = policy_counters(k_);
  busy_at_last_line_ = k_.machine().executing_ns(start_ns_);
  smt_shared_at_last_line_ = k_.machine().smt_shared_ns(start_ns_);
  counts_ = Counts{};
}

void IntervalStats::advance_to(int64_t t) {
  while (started() && next_end_ns_ <= t) {
    print(next_end_ns_);
    next_end_ns_ += interval_ns_;
  }
}

void IntervalStats::on_switch(int64_t, int, const kernel::Task* prev, PrevState st, const kernel::Task* next) {
  if (started()) count_switch(prev, st, next, counts_.switches, counts_.involuntary, counts_.sleeps);
}

void IntervalStats::on_wakeup_placement(int64_t, int waker_cpu, int target_cpu, bool local, int) {
  if (!started()) return;
  ++counts_.wakeups;
  if (local) return;
  ++counts_.remote_wakeups;
  if (smt_ && waker_cpu >= 0 && k_.machine().topo().smt_mask(waker_cpu).test(target_cpu))
    ++counts_.smt_pair_wakeups;
}

void IntervalStats::on_migrate(int64_t, int, const kernel::Task* p, int from, int to, int, const char* cause) {
  if (!started()) return;
  ++counts_.migrations;
  // By cause the workload's tasks only, as the summary counts them; the
  // column above counts an unbound kernel thread's moves too.
  if (p->kthread) return;
  auto& m = counts_.by_cause[cause];
  ++m.moves;
  const int pair = move_against_last_wakee(k_.machine().topo(), p, from, to);
  m.joined += pair > 0;
  m.left += pair < 0;
}

void IntervalStats::on_idle(int64_t, int, int state) {
  if (started() && state >= 0) ++counts_.idle_entries;
}

void IntervalStats::finish(int64_t t) {
  if (!started()) return;
  while (next_end_ns_ < t) {
    print(next_end_ns_);
    next_end_ns_ += interval_ns_;
  }
  const bool partial_interval = t > next_end_ns_ - interval_ns_;
  if (partial_interval || !counts_.empty()) print(t);
}

void IntervalStats::print(int64_t end_ns) {
  std::string line;
  if (!header_printed_) {
    line = "#          time   switches involuntary    wakeups     remote migrations idle-entries  sleeps by wchan; "
           "migrations by cause=moves/+onto/-off the core of the task it last woke; policy counters that changed";
    if (smt_) line += " | on SMT: wakeups between a core's threads, busy CPU time, busy beside a busy sibling";
    line += "\n";
    header_printed_ = true;
  }
  char buf[160];
  std::snprintf(buf, sizeof buf, "%15.9f %10lld %11lld %10lld %10lld %10lld %12lld ",
                static_cast<double>(end_ns - start_ns_) / 1e9, static_cast<long long>(counts_.switches),
                static_cast<long long>(counts_.involuntary), static_cast<long long>(counts_.wakeups),
                static_cast<long long>(counts_.remote_wakeups), static_cast<long long>(counts_.migrations),
                static_cast<long long>(counts_.idle_entries));
  line += buf;
  for (const auto& [where, n] : counts_.sleeps) line += " " + where + "=" + std::to_string(n);
  line += ";";
  for (const auto& [cause, m] : counts_.by_cause)
    line += " " + cause + "=" + std::to_string(m.moves) + "/+" + std::to_string(m.joined) + "/-" +
            std::to_string(m.left);
  line += ";";
  auto policy = policy_counters(k_);
  for (const auto& [name, value] : policy) {
    const auto before = policy_at_last_line_.find(name);
    const int64_t delta = value - (before == policy_at_last_line_.end() ? 0 : before->second);
    if (delta != 0) line += " " + name + "=" + std::to_string(delta);
  }
  if (smt_) {
    const int64_t busy = k_.machine().executing_ns(end_ns), shared = k_.machine().smt_shared_ns(end_ns);
    line += " | smt_pair_wakeups=" + std::to_string(counts_.smt_pair_wakeups) +
            " busy_us=" + std::to_string(busy / 1000 - busy_at_last_line_ / 1000) +
            " smt_shared_us=" + std::to_string(shared / 1000 - smt_shared_at_last_line_ / 1000);
    busy_at_last_line_ = busy;
    smt_shared_at_last_line_ = shared;
  }
  line += "\n";
  out_ << line;  // one write per line: the stream may be unbuffered stderr
  policy_at_last_line_ = std::move(policy);
  counts_ = Counts{};
}

}  // namespace obs
