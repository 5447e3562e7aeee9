#include "obs/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "kernel/kernel.hpp"

namespace obs {

void count_switch(const kernel::Task* prev, PrevState st, const kernel::Task* next, int64_t& switches,
                  int64_t& involuntary, std::map<std::string, int64_t>& sleeps) {
  if (prev == next) return;
  ++switches;
  if (st == PrevState::Preempted) ++involuntary;
  if (st == PrevState::Sleeping) ++sleeps[prev->wchan ? prev->wchan : "schedule"];
}

// A run of a task with a role ends: its time since the switch-in, or since
// the window opened, goes to the role's ledger.
void StatsCollector::close_run(const kernel::Task* p, int64_t t, PrevState st) {
  const auto pid = static_cast<size_t>(p->pid);
  if (pid >= switched_in_at_.size() || switched_in_at_[pid] < 0) return;
  auto& r = by_role_ptr_[p->role];
  r.run_ns += t - std::max(switched_in_at_[pid], t_reset_);
  r.sleeps += st == PrevState::Sleeping;
  r.preempted += st == PrevState::Preempted;
  count_arrival(r, pid);
  switched_in_at_[pid] = -1;
}

// The run's arrival, if it came in the window: noted at the switch-in
// (on_run_delay()) and given to the role when the run closes, since a
// workload names a task's role during its first run.
void StatsCollector::count_arrival(RoleTimes& r, size_t pid) {
  if (pid >= arrival_wait_.size() || arrival_wait_[pid] < 0) return;
  if (switched_in_at_[pid] >= t_reset_) {
    ++r.arrivals;
    r.wait_ns += arrival_wait_[pid];
  }
  arrival_wait_[pid] = -1;
}

// A task's last run ends at its exit, as its sum_exec_runtime does at the
// sched_process_exit tracepoint: the run's last exit has no switch after it.
void StatsCollector::on_exit(int64_t t, int, const kernel::Task* p) {
  if (p->role && p->pid >= 0) close_run(p, t, PrevState::Dead);
}

void StatsCollector::on_switch(int64_t t, int, const kernel::Task* prev, PrevState st,
                               const kernel::Task* next) {
  count_switch(prev, st, next, s_.context_switches, s_.involuntary_switches, s_.sleeps);
  if (prev == next) return;
  if (prev && prev->role && prev->pid >= 0) close_run(prev, t, st);
  // Every switch-in is noted: a workload names a role from the task's code,
  // so during its first run.
  if (next && next->pid >= 0) {
    const auto pid = static_cast<size_t>(next->pid);
    if (switched_in_at_.size() <= pid) switched_in_at_.resize(pid + 1, -1);
    switched_in_at_[pid] = t;
  }
  if (!prev || prev->pid < 0) return;
  const auto pid = static_cast<size_t>(prev->pid);
  if (switched_out_.size() <= pid) switched_out_.resize(pid + 1);
  auto& out = switched_out_[pid];
  switch (st) {
    case PrevState::Sleeping: out = {prev->wchan ? prev->wchan : "schedule", t}; break;
    case PrevState::Preempted: out = {kPreemptedKey, t}; break;
    case PrevState::Runnable: out = {"runnable", t}; break;
    case PrevState::Dead: out = {}; break;
  }
}

// A level's slot: the sched-domain level, or one past the last for "other"
// (no domain spans both CPUs).
size_t StatsCollector::level_index(int level) const {
  return level >= 0 && level < static_cast<int>(level_names_.size()) ? static_cast<size_t>(level)
                                                                     : level_names_.size();
}

const std::string& StatsCollector::level_name(size_t index) const {
  static const std::string other = "other";
  return index < level_names_.size() ? level_names_[index] : other;
}

void StatsCollector::on_wakeup_placement(int64_t, int, int, bool local, int level) {
  ++s_.wakeups;
  if (local) {
    ++s_.wakeups_local;
  } else {
    ++s_.wakeups_remote;
    // Counted by index here (a wakeup is the hot path), named in summarize().
    const size_t i = level_index(level);
    if (remote_wakeups_by_level_.size() <= i) remote_wakeups_by_level_.resize(i + 1);
    ++remote_wakeups_by_level_[i];
  }
}

// A task's last wakee (record_wakee(): the task it last woke) is its
// partner in a waker-wakee pair; its CPU is where it runs or last ran. A
// balance pass that moves both partners moves them one at a time, as
// detach_tasks() calls set_task_cpu() for each in turn, so the first counts
// as leaving its partner's core and the second as joining it.
int move_against_last_wakee(const hw::Topology& topo, const kernel::Task* p, int from, int to) {
  const kernel::Task* wakee = p->last_wakee;
  if (!wakee || wakee == p || wakee->state == kernel::TaskState::Dead) return 0;
  const hw::CpuMask core = topo.smt_mask(wakee->cpu);
  if (core.test(to) && !core.test(from)) return 1;
  if (core.test(from) && !core.test(to)) return -1;
  return 0;
}

void StatsCollector::on_migrate(int64_t, int, const kernel::Task* p, int from, int to, int level,
                                const char* cause) {
  // The workload's own tasks: an unbound kernel thread (kworker_noise_unbound)
  // moves too, and a bound one never does.
  if (p->kthread) return;
  ++s_.migrations;
  ++s_.migrations_by_level[level_name(level_index(level))];
  auto it = std::find_if(by_cause_.begin(), by_cause_.end(), [&](const auto& c) { return c.first == cause; });
  if (it == by_cause_.end()) it = by_cause_.insert(by_cause_.end(), {cause, CauseCounts{}});
  CauseCounts& c = it->second;
  ++c.moves;
  if (!topo_) return;
  const int pair = move_against_last_wakee(*topo_, p, from, to);
  c.joined += pair > 0;
  c.left += pair < 0;
  c.across_llc += topo_->cpu(from).llc != topo_->cpu(to).llc;
}

// The switch-in ends the task's off-CPU episode. Its switch-out is known
// only if it happened since reset(), as perf sched timehist knows only the
// switch-outs it recorded.
void StatsCollector::on_run_delay(int64_t t, int, const kernel::Task* p, int64_t queued_ns, int64_t wakeup_ns) {
  queued_total_ns_ += queued_ns;
  ++runs_;
  if (p->pid >= 0) {
    if (arrival_wait_.size() <= static_cast<size_t>(p->pid)) arrival_wait_.resize(static_cast<size_t>(p->pid) + 1, -1);
    arrival_wait_[static_cast<size_t>(p->pid)] = queued_ns;
  }
  if (wakeup_ns >= 0) delays_.push_back(wakeup_ns);
  const auto pid = static_cast<size_t>(p->pid);
  if (p->pid < 0 || pid >= switched_out_.size() || switched_out_[pid].at_ns < 0) return;
  const SwitchOut out = switched_out_[pid];
  switched_out_[pid] = {};
  const int64_t woken_at = wakeup_ns >= 0 ? t - wakeup_ns : out.at_ns;
  const int64_t wait = std::max<int64_t>(0, woken_at - out.at_ns);
  const int64_t delay = t - std::max(woken_at, out.at_ns);
  auto& o = off_cpu_by_ptr_[out.where];
  ++o.count;
  o.wait_ns += wait;
  o.wait_max_ns = std::max(o.wait_max_ns, wait);
  o.delay_ns += delay;
  o.delay_max_ns = std::max(o.delay_max_ns, delay);
}

void StatsCollector::on_balance(int64_t, int, int, int idle_type, bool success, int moved,
                                int64_t cost_ns) {
  static const char* names[] = {"periodic", "idle", "newidle"};
  auto& b = s_.balance[names[std::clamp(idle_type, 0, 2)]];
  ++b.attempts;
  b.successes += success;
  b.tasks_moved += moved;
  b.cost_ns += cost_ns;
}

void StatsCollector::on_wake_affine(bool affine) {
  ++s_.wake_affine_attempts;
  s_.wake_affine_pulls += affine;
}

void StatsCollector::on_idle(int64_t, int, int state) {
  if (state < 0) return;  // leaving idle
  const auto i = static_cast<size_t>(state);
  if (idle_entries_.size() <= i) idle_entries_.resize(i + 1);
  ++idle_entries_[i];
}

void StatsCollector::on_ipi(int64_t, int, int, bool sent) { ++(sent ? s_.ipis_sent : s_.idle_wakes_without_ipi); }

void StatsCollector::on_wait_for_switch(int64_t, int, int64_t spun_ns) {
  ++s_.wakeups_waited_for_switch;
  s_.switch_wait_ns += spun_ns;
}

void StatsCollector::on_pick_after_lock(int64_t, int, int64_t spun_ns) {
  ++s_.picks_after_waker_lock;
  s_.pick_lock_wait_ns += spun_ns;
}

void StatsCollector::reset(kernel::Kernel& k) {
  k.flush_accounting();
  s_ = Summary{};
  switched_out_.clear();
  off_cpu_by_ptr_.clear();
  by_role_ptr_.clear();  // runs under way keep their switch-in: close_run() clips them
  delays_.clear();
  idle_entries_.clear();
  remote_wakeups_by_level_.clear();
  by_cause_.clear();
  topo_ = &k.machine().topo();
  queued_total_ns_ = 0;
  runs_ = 0;
  t_reset_ = k.now_ns();
  exec_at_reset_.clear();
  for (const kernel::Task* t : k.all_tasks()) {
    if (!t || t->pid < 0) continue;
    const auto pid = static_cast<size_t>(t->pid);
    if (exec_at_reset_.size() <= pid) exec_at_reset_.resize(pid + 1, 0);
    exec_at_reset_[pid] = t->se.sum_exec_runtime;
  }
  idle_at_reset_.clear();
  busy_at_reset_.clear();
  spin_at_reset_.clear();
  for (int c = 0; c < k.nr_cpus(); ++c) {
    const auto& a = k.accounting(c);
    idle_at_reset_.push_back(a.idle_ns);
    busy_at_reset_.push_back(a.user_ns + a.kernel_ns + a.spin_ns);
    spin_at_reset_.push_back(a.spin_ns);
  }
  wasted_at_reset_ = k.wasted_ns();
  smt_shared_at_reset_ = k.machine().smt_shared_ns(k.now_ns());
  waiting_at_reset_ = k.waiting_task_ns();
  irq_at_reset_ = std::max<int64_t>(0, k.irq_time_total());
  work_at_reset_.assign(k.work_by_path().begin(), k.work_by_path().end());
  checks_at_reset_ = k.policy().wakeup_checks_by_wchan();
  refill_within_at_reset_ = k.refill_lines().within_llc;
  refill_beyond_at_reset_ = k.refill_lines().beyond_llc;
  moved_within_at_reset_ = k.machine().lines_moved().within_llc;
  moved_beyond_at_reset_ = k.machine().lines_moved().beyond_llc;
  const auto bp = k.busy_placement();
  bp_wakeups_ = bp.wakeups;
  bp_idle_ = bp.idle_cpus;
  bp_after_ns_ = bp.idle_after_ns;
  bp_after_n_ = bp.idle_after_samples;
}

Summary StatsCollector::summarize(const kernel::Kernel& k) const {
  Summary s = s_;
  for (const auto& [cause, c] : by_cause_) {
    s.migrations_by_cause[cause] += c.moves;
    s.migrations_joining_wakee[cause] += c.joined;
    s.migrations_leaving_wakee[cause] += c.left;
    s.migrations_across_llc[cause] += c.across_llc;
  }
  s.window_start_ns = t_reset_;
  s.elapsed_ns = k.now_ns() - t_reset_;
  s.idle_ns_per_cpu.clear();
  for (int c = 0; c < k.nr_cpus(); ++c) {
    const auto& a = k.accounting(c);
    const size_t i = static_cast<size_t>(c);
    const bool snap = i < idle_at_reset_.size();
    const int64_t idle = a.idle_ns - (snap ? idle_at_reset_[i] : 0);
    s.idle_ns_per_cpu.push_back(idle);
    s.idle_ns_total += idle;
    s.busy_ns_total += a.user_ns + a.kernel_ns + a.spin_ns - (snap ? busy_at_reset_[i] : 0);
    s.spin_ns_total += a.spin_ns - (snap ? spin_at_reset_[i] : 0);
  }
  s.wasted_ns = k.wasted_ns() - wasted_at_reset_;
  s.waiting_task_ns = k.waiting_task_ns() - waiting_at_reset_;
  s.smt_shared_ns = k.machine().smt_shared_ns(k.now_ns()) - smt_shared_at_reset_;
  s.smt = k.machine().topo().threads_per_core() > 1;
  if (k.irq_time_total() >= 0) s.irq_time_ns = k.irq_time_total() - irq_at_reset_;
  if (s.elapsed_ns > 0) {
    const auto el = static_cast<double>(s.elapsed_ns);
    s.waiting_avg = static_cast<double>(s.waiting_task_ns) / el;
    s.runnable_avg = static_cast<double>(s.busy_ns_total) / el + s.waiting_avg;
  }
  s.refill_lines_within_llc = k.refill_lines().within_llc - refill_within_at_reset_;
  s.refill_lines_beyond_llc = k.refill_lines().beyond_llc - refill_beyond_at_reset_;
  s.moved_lines_within_llc = k.machine().lines_moved().within_llc - moved_within_at_reset_;
  s.moved_lines_beyond_llc = k.machine().lines_moved().beyond_llc - moved_beyond_at_reset_;
  // Summed by name: a machine with several NUMA distances has one "NUMA"
  // level per distance.
  for (size_t i = 0; i < remote_wakeups_by_level_.size(); ++i)
    if (remote_wakeups_by_level_[i] > 0) s.wakeups_by_level[level_name(i)] += remote_wakeups_by_level_[i];
  for (size_t i = 0; i < kernel::kCostPaths; ++i)
    s.work_by_path.emplace_back(kernel::cost_path_name(static_cast<kernel::CostPath>(i)),
                                k.work_by_path()[i] - (i < work_at_reset_.size() ? work_at_reset_[i] : 0));
  const auto bp = k.busy_placement();
  s.busy_placements = bp.wakeups - bp_wakeups_;
  if (s.busy_placements > 0)
    s.busy_placement_idle_cpus_avg =
        static_cast<double>(bp.idle_cpus - bp_idle_) / static_cast<double>(s.busy_placements);
  if (bp.idle_after_samples > bp_after_n_)
    s.busy_placement_idle_after_us_avg = static_cast<double>(bp.idle_after_ns - bp_after_ns_) / 1000.0 /
                                         static_cast<double>(bp.idle_after_samples - bp_after_n_);
  const auto& states = k.machine().profile().idle_states;
  for (size_t i = 0; i < states.size(); ++i)
    s.idle_state_entries.emplace_back(states[i].name, i < idle_entries_.size() ? idle_entries_[i] : 0);
  for (const auto& [where, o] : off_cpu_by_ptr_) {
    auto& m = s.off_cpu[where];
    m.count += o.count;
    m.wait_ns += o.wait_ns;
    m.delay_ns += o.delay_ns;
    m.wait_max_ns = std::max(m.wait_max_ns, o.wait_max_ns);
    m.delay_max_ns = std::max(m.delay_max_ns, o.delay_max_ns);
  }
  for (const auto& [role, r] : by_role_ptr_) {
    auto& m = s.cpu_time_by_role[role];
    m.run_ns += r.run_ns;
    m.sleeps += r.sleeps;
    m.preempted += r.preempted;
    m.arrivals += r.arrivals;
    m.wait_ns += r.wait_ns;
  }
  // What the fair class charged each role in the window, as of each task's
  // last update_curr() (as /proc/PID/sched reads it).
  for (const kernel::Task* t : k.all_tasks()) {
    if (!t || !t->role || t->pid < 0) continue;
    const auto pid = static_cast<size_t>(t->pid);
    const int64_t at_reset = pid < exec_at_reset_.size() ? exec_at_reset_[pid] : 0;
    if (t->se.sum_exec_runtime > at_reset) s.cpu_time_by_role[t->role].exec_ns += t->se.sum_exec_runtime - at_reset;
  }
  // Runs still under way count up to now, as the window closes on them. A
  // CPU in the middle of its schedule() path has no curr, so a run it is
  // ending is left out; messaging closes its window after its workers exit.
  for (int c = 0; c < k.nr_cpus(); ++c) {
    const kernel::Task* p = k.curr(c);
    if (!p || !p->role || p->pid < 0) continue;
    const auto pid = static_cast<size_t>(p->pid);
    if (pid < switched_in_at_.size() && switched_in_at_[pid] >= 0) {
      auto& r = s.cpu_time_by_role[p->role];
      r.run_ns += k.now_ns() - std::max(switched_in_at_[pid], t_reset_);
      if (pid < arrival_wait_.size() && arrival_wait_[pid] >= 0 && switched_in_at_[pid] >= t_reset_) {
        ++r.arrivals;
        r.wait_ns += arrival_wait_[pid];
      }
    }
  }
  s.sched_runs = runs_;
  if (runs_) s.sched_delay_avg_us = static_cast<double>(queued_total_ns_ / 1000.0L / runs_);
  s.sched_delay_total_ms = static_cast<double>(queued_total_ns_ / 1e6L);
  std::vector<int64_t>& d = delays_;
  s.run_delay_count = static_cast<int64_t>(d.size());
  if (!d.empty()) {
    std::sort(d.begin(), d.end());
    long double sum = 0;
    for (auto v : d) sum += v;
    s.run_delay_avg_us = static_cast<double>(sum / d.size() / 1000.0L);
    s.run_delay_total_ms = static_cast<double>(sum / 1e6L);
    auto pct = [&](double q) {
      size_t i = static_cast<size_t>(q * static_cast<double>(d.size() - 1) + 0.5);
      return static_cast<double>(d[std::min(i, d.size() - 1)]) / 1000.0;
    };
    s.run_delay_p50_us = pct(0.50);
    s.run_delay_p99_us = pct(0.99);
    s.run_delay_max_us = static_cast<double>(d.back()) / 1000.0;
  }
  s.policy = k.policy().stats();
  for (auto [pair, t] : k.policy().wakeup_checks_by_wchan()) {
    if (const auto before = checks_at_reset_.find(pair); before != checks_at_reset_.end()) t -= before->second;
    if (t.checks > 0) s.wakeup_checks[pair] = t;
  }
  return s;
}

namespace {
// "MC 12, NUMA 3, SMT 40": a per-level counter on one line.
std::string levels_text(const std::map<std::string, int64_t>& by_level) {
  std::string text;
  for (const auto& [lvl, n] : by_level) text += (text.empty() ? "" : ", ") + lvl + " " + std::to_string(n);
  return text;
}
}  // namespace

// "wake_idle_core 41 (+3 -5, 9 across LLCs)": the moves of a cause, and of
// them those that put the task on its last wakee's core (+), those that took
// it off (-) and, when there are any, those between two LLCs.
std::string migration_causes_text(const Summary& s) {
  std::string text;
  for (const auto& [cause, n] : s.migrations_by_cause) {
    const auto count = [&](const std::map<std::string, int64_t>& m) {
      const auto it = m.find(cause);
      return it == m.end() ? int64_t{0} : it->second;
    };
    const int64_t across = count(s.migrations_across_llc);
    text += (text.empty() ? "" : ", ") + cause + " " + std::to_string(n) + " (+" +
            std::to_string(count(s.migrations_joining_wakee)) + " -" +
            std::to_string(count(s.migrations_leaving_wakee)) +
            (across ? ", " + std::to_string(across) + " across LLCs" : "") + ")";
  }
  return text;
}

std::string format_summary(const Summary& s) {
  std::ostringstream o;
  char buf[256];
  const double el = static_cast<double>(s.elapsed_ns) / 1e9;
  o << "# scheduler statistics (simulated " << (el < 1e-3 ? 0 : el) << " s)\n";
  std::snprintf(buf, sizeof buf, "  context switches      %12lld  (%lld involuntary)\n",
                static_cast<long long>(s.context_switches), static_cast<long long>(s.involuntary_switches));
  o << buf;
  if (!s.sleeps.empty()) {
    o << "  sleeps in            ";
    for (const auto& [where, n] : s.sleeps) o << " " << where << " " << n;
    o << "\n";
  }
  if (!s.off_cpu.empty()) {
    o << "  off CPU by wchan (ms)  episodes, then wait (asleep until woken) and delay (woken or preempted until run),"
         " as perf sched timehist\n";
    for (const auto& [where, w] : s.off_cpu) {
      const double n = static_cast<double>(std::max<int64_t>(w.count, 1));
      std::snprintf(buf, sizeof buf,
                    "    %-24s %10lld  wait avg %8.3f max %9.3f  delay avg %8.3f max %9.3f\n", where.c_str(),
                    static_cast<long long>(w.count), static_cast<double>(w.wait_ns) / n / 1e6,
                    static_cast<double>(w.wait_max_ns) / 1e6, static_cast<double>(w.delay_ns) / n / 1e6,
                    static_cast<double>(w.delay_max_ns) / 1e6);
      o << buf;
    }
  }
  if (!s.cpu_time_by_role.empty()) {
    int64_t total = 0, total_exec = 0;
    for (const auto& [role, r] : s.cpu_time_by_role) {
      total += r.run_ns;
      total_exec += r.exec_ns;
    }
    o << "  time on a CPU by role  ms, share, then how its runs ended: asleep (voluntary) or preempted, and per"
         " arrival on a CPU its run and its wait before it (us; /proc/PID/sched's wait_sum/wait_count)";
    if (total_exec > 0) o << "; then what the fair class charged it (ms, share: se.sum_exec_runtime, whose switch is the arriving task's)";
    o << "\n";
    for (const auto& [role, r] : s.cpu_time_by_role) {
      // A role whose runs all began before the window has no arrival to divide by.
      char per_arrival[64] = "  run         -  wait         -";
      if (r.arrivals > 0) {
        const double arrivals = static_cast<double>(r.arrivals);
        std::snprintf(per_arrival, sizeof per_arrival, "  run %9.1f  wait %9.1f",
                      static_cast<double>(r.run_ns) / arrivals / 1e3, static_cast<double>(r.wait_ns) / arrivals / 1e3);
      }
      char charged[64] = "";
      if (total_exec > 0)
        std::snprintf(charged, sizeof charged, "  charged %10.3f  %5.1f%%", static_cast<double>(r.exec_ns) / 1e6,
                      100.0 * static_cast<double>(r.exec_ns) / static_cast<double>(total_exec));
      std::snprintf(buf, sizeof buf, "    %-24s %10.3f  %5.1f%%  asleep %10lld  preempted %10lld%s%s\n", role.c_str(),
                    static_cast<double>(r.run_ns) / 1e6,
                    total > 0 ? 100.0 * static_cast<double>(r.run_ns) / static_cast<double>(total) : 0.0,
                    static_cast<long long>(r.sleeps), static_cast<long long>(r.preempted), per_arrival, charged);
      o << buf;
    }
  }
  if (!s.wakeup_checks.empty()) {
    o << "  wakeup checks by wchan  queued task's <- running task's: checks, share preempted, the running"
         " task's vruntime lead (ms: mean, then p10 p50 p90)\n";
    for (const auto& [pair, t] : s.wakeup_checks) {
      const double n = static_cast<double>(t.checks);
      std::snprintf(buf, sizeof buf, "    %-50s %10lld  preempted %5.1f%%  lead avg %7.3f  p10 %7.3f p50 %7.3f p90 %7.3f\n",
                    (pair.first + " <- " + pair.second).c_str(), static_cast<long long>(t.checks),
                    100.0 * static_cast<double>(t.preemptions) / n, static_cast<double>(t.lead_ns) / n / 1e6,
                    t.lead_quantile_ms(0.10), t.lead_quantile_ms(0.50), t.lead_quantile_ms(0.90));
      o << buf;
    }
  }
  std::snprintf(buf, sizeof buf, "  migrations            %12lld", static_cast<long long>(s.migrations));
  o << buf;
  if (!s.migrations_by_level.empty()) o << "  (" << levels_text(s.migrations_by_level) << ")";
  o << "\n";
  if (!s.migrations_by_cause.empty())
    o << "  migrations by cause   " << migration_causes_text(s) << "  (+ onto, - off the core of the task it last woke)\n";
  std::snprintf(buf, sizeof buf, "  refilled lines        %12lld  (%lld from beyond the LLC)\n",
                static_cast<long long>(s.refill_lines_within_llc + s.refill_lines_beyond_llc),
                static_cast<long long>(s.refill_lines_beyond_llc));
  o << buf;
  std::snprintf(buf, sizeof buf, "  moved lines           %12lld  (%lld from beyond the LLC: kernel data, messages)\n",
                static_cast<long long>(s.moved_lines_within_llc + s.moved_lines_beyond_llc),
                static_cast<long long>(s.moved_lines_beyond_llc));
  o << buf;
  std::snprintf(buf, sizeof buf, "  wakeups               %12lld  (local %lld, remote %lld, affine %lld of %lld)\n",
                static_cast<long long>(s.wakeups), static_cast<long long>(s.wakeups_local),
                static_cast<long long>(s.wakeups_remote), static_cast<long long>(s.wake_affine_pulls),
                static_cast<long long>(s.wake_affine_attempts));
  o << buf;
  if (!s.wakeups_by_level.empty())
    o << "  remote wakeups by level  " << levels_text(s.wakeups_by_level)
      << "  (the lowest sched domain spanning the waker's CPU and the wakee's)\n";
  std::snprintf(buf, sizeof buf,
                "  run delay (us)        avg %.2f  p50 %.2f  p99 %.2f  max %.2f  (%lld samples)\n",
                s.run_delay_avg_us, s.run_delay_p50_us, s.run_delay_p99_us, s.run_delay_max_us,
                static_cast<long long>(s.run_delay_count));
  o << buf;
  std::snprintf(buf, sizeof buf, "  sched delay (us)      avg %.2f per run on a CPU (taskstats cpu_delay_total/cpu_count, %lld runs)\n",
                s.sched_delay_avg_us, static_cast<long long>(s.sched_runs));
  o << buf;
  std::snprintf(buf, sizeof buf,
                "  wakeups onto busy CPUs %11lld  while other CPUs idled (avg %.1f idle CPUs, which then stayed idle %.1f us)\n",
                static_cast<long long>(s.busy_placements), s.busy_placement_idle_cpus_avg,
                s.busy_placement_idle_after_us_avg);
  o << buf;
  for (const auto& [kind, b] : s.balance) {
    std::snprintf(buf, sizeof buf, "  balance %-9s     %12lld attempts, %lld successful, %lld tasks moved, %.3f ms\n",
                  kind.c_str(), static_cast<long long>(b.attempts), static_cast<long long>(b.successes),
                  static_cast<long long>(b.tasks_moved), static_cast<double>(b.cost_ns) / 1e6);
    o << buf;
  }
  const double ncpu = static_cast<double>(s.idle_ns_per_cpu.size());
  std::snprintf(buf, sizeof buf, "  idle time             %12.3f ms total, %.1f%% of CPU time\n",
                static_cast<double>(s.idle_ns_total) / 1e6,
                s.elapsed_ns > 0 ? 100.0 * static_cast<double>(s.idle_ns_total) /
                                       (static_cast<double>(s.elapsed_ns) * ncpu)
                                 : 0.0);
  o << buf;
  std::snprintf(buf, sizeof buf, "  runnable tasks        avg %.1f  (%.2f a CPU; running %.1f, queued %.1f: vmstat's r)\n",
                s.runnable_avg, ncpu > 0 ? s.runnable_avg / ncpu : 0.0, s.runnable_avg - s.waiting_avg,
                s.waiting_avg);
  o << buf;
  if (s.smt) {
    std::snprintf(buf, sizeof buf, "  beside a busy sibling %12.3f ms, %.1f%% of busy time (at the SMT-shared rate)\n",
                  static_cast<double>(s.smt_shared_ns) / 1e6,
                  s.busy_ns_total > 0 ? 100.0 * static_cast<double>(s.smt_shared_ns) / static_cast<double>(s.busy_ns_total)
                                      : 0.0);
    o << buf;
  }
  o << "  idle per cpu (ms)    ";
  for (size_t i = 0; i < s.idle_ns_per_cpu.size(); ++i) {
    std::snprintf(buf, sizeof buf, " %.2f", static_cast<double>(s.idle_ns_per_cpu[i]) / 1e6);
    o << buf;
  }
  o << "\n";
  if (!s.idle_state_entries.empty()) {
    o << "  idle states entered  ";
    for (const auto& [name, n] : s.idle_state_entries) o << " " << name << " " << n;
    o << "\n";
  }
  std::snprintf(buf, sizeof buf, "  IPIs sent             %12lld  (idle CPUs woken without one: %lld)\n",
                static_cast<long long>(s.ipis_sent), static_cast<long long>(s.idle_wakes_without_ipi));
  o << buf;
  std::snprintf(buf, sizeof buf, "  lock spin time        %12.3f ms\n", static_cast<double>(s.spin_ns_total) / 1e6);
  o << buf;
  std::snprintf(buf, sizeof buf, "  wakeups spun on a switch-out %5lld  (%.3f ms: the wakee's old CPU was still in schedule())\n",
                static_cast<long long>(s.wakeups_waited_for_switch), static_cast<double>(s.switch_wait_ns) / 1e6);
  o << buf;
  std::snprintf(buf, sizeof buf, "  picks after a waker's lock %7lld  (%.1f us spun: schedule() found its rq->lock held by ttwu)\n",
                static_cast<long long>(s.picks_after_waker_lock), static_cast<double>(s.pick_lock_wait_ns) / 1e3);
  o << buf;
  std::snprintf(buf, sizeof buf, "  wasted CPU time       %12.3f ms (a CPU idle while a task waited)\n",
                static_cast<double>(s.wasted_ns) / 1e6);
  o << buf;
  if (!s.work_by_path.empty()) {
    o << "  kernel work (ms)     ";
    for (const auto& [path, ns] : s.work_by_path) {
      std::snprintf(buf, sizeof buf, " %s %.3f", path.c_str(), static_cast<double>(ns) / 1e6);
      o << buf;
    }
    o << "  (charged at a core's full rate)\n";
  }
  if (s.irq_time_ns >= 0) {
    std::snprintf(buf, sizeof buf,
                  "  interrupt time        %12.3f ms off the tasks' clock (irq_time_accounting: handlers and their "
                  "softirqs)\n",
                  static_cast<double>(s.irq_time_ns) / 1e6);
    o << buf;
  }
  // One column for every run, so that summaries of two variants diff cleanly.
  for (const auto& [k, v] : s.policy) {
    std::snprintf(buf, sizeof buf, "  %-36s%12lld\n", k.c_str(), static_cast<long long>(v));
    o << buf;
  }
  return o.str();
}

}  // namespace obs
