// Scheduler statistics collected from kernel events: the counters that
// explain a benchmark result (context switches, migrations by domain level,
// wakeup placement, run delay, balancing work, idle and wasted CPU time).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/topology.hpp"
#include "kernel/sched_class.hpp"
#include "obs/observer.hpp"

namespace kernel {
class Kernel;
}

namespace obs {

struct BalanceCounters {
  int64_t attempts = 0, successes = 0, tasks_moved = 0, cost_ns = 0;
};

// The time tasks spent off a CPU, one episode per switch-out and the
// switch-in that ends it, as perf sched timehist measures them and LKP's
// perf-sched monitor sums them by the switch-out's call chain: `wait` from a
// sleeping task's switch-out to its wakeup (sched_waking), `delay` from that
// wakeup (or from a preempted task's switch-out) until it runs again
// (timehist's "sch delay"). Sums in ns; a preempted episode has no wait.
struct OffCpuTimes {
  int64_t count = 0;
  int64_t wait_ns = 0, wait_max_ns = 0;
  int64_t delay_ns = 0, delay_max_ns = 0;
};

// Time on a CPU by the tasks of one role (kernel::Task::role), from each
// switch-in to the switch-out that ends it, clipped to the window, and how
// those runs ended: asleep (voluntary, /proc's nvcsw) or preempted
// (nivcsw). `arrivals` and `wait_ns` are the
// role's switch-ins and its time on a runqueue before them, read on
// rq->clock as schedstat's wait_sum/wait_count are (/proc/PID/sched, which
// tools/guest/analyze.py reads): run_ns / arrivals is how long the role
// holds a CPU once it gets one, wait_ns / arrivals how long it queues first.
//
// Two ledgers. `run_ns` splits a switch at its sched_switch: what schedule()
// does before it goes to the task leaving, the rest to the task arriving, as
// a profile's stacks split it. `exec_ns` is what the fair class charged the
// role's tasks in the window (the growth of se.sum_exec_runtime, from which
// vruntime grows at nice 0): update_curr() reads rq->clock, which
// __schedule() takes before it dequeues a sleeper, and set_next_entity()
// starts the next task's run on that clock, so the whole switch is charged
// to the task arriving, and a wakeup that preempts (or wakes an idle CPU)
// skips the next update, so the wakee is charged from its enqueue: the
// preempted task's tail, or the idle exit (4.0 kernel/sched/core.c
// check_preempt_curr(), __schedule(); fair.c update_curr()). So the sum over
// roles can exceed the first ledger's on a machine that idles. It is the ledger /proc/PID/sched and
// tools/probes/messaging-roles.bt read on a real kernel, and the one CFS's
// regime turns on; 0 under a class that keeps none (2.4).
struct RoleTimes {
  int64_t run_ns = 0;
  int64_t sleeps = 0, preempted = 0;
  int64_t arrivals = 0, wait_ns = 0;
  int64_t exec_ns = 0;
};

struct Summary {
  int64_t window_start_ns = 0;  // the timed window: [window_start_ns, +elapsed_ns]
  int64_t elapsed_ns = 0;
  int64_t context_switches = 0;
  // Switches away from a task that was still runnable (preemption; the
  // nonvoluntary_ctxt_switches of /proc/PID/status).
  int64_t involuntary_switches = 0;
  // Times a task went to sleep, by where it slept (its wchan): which side of
  // a channel waits tells a benchmark's regime.
  std::map<std::string, int64_t> sleeps;
  // Off-CPU episodes that began and ended in the window, by where the task
  // left the CPU: its wchan, or "preempted" (kPreemptedKey).
  std::map<std::string, OffCpuTimes> off_cpu;
  // Time on a CPU by role, for workloads that name their tasks' roles.
  std::map<std::string, RoleTimes> cpu_time_by_role;
  // check_preempt_wakeup()'s comparisons in the window, by the queued task's
  // wchan and the running task's (SchedClass::wakeup_checks_by_wchan()).
  kernel::WakeupChecksByWchan wakeup_checks;
  int64_t migrations = 0;
  std::map<std::string, int64_t> migrations_by_level;  // "SMT", "MC", "NUMA", "wake", ...
  // The same moves by the code that made them (Observer::on_migrate()'s
  // cause), and of those the moves that put a task on the core (its SMT
  // siblings; a CPU without them) of the task it last woke
  // (p->last_wakee, record_wakee(), 3.12+), and those that took it off that
  // core: how a waker-wakee pair is gathered onto one core or split apart.
  // Then, by the same keys, the moves between two last-level caches, which
  // leave the task's cache lines behind (a cross-socket slow path, say).
  std::map<std::string, int64_t> migrations_by_cause, migrations_joining_wakee, migrations_leaving_wakee;
  std::map<std::string, int64_t> migrations_across_llc;
  int64_t wakeups = 0, wakeups_local = 0, wakeups_remote = 0;
  // Remote wakeups by the lowest sched-domain level spanning the waker's CPU
  // and the wakee's: where the partners of a channel sit (a pipe pair on one
  // core's two threads wakes at SMT, on two cores at MC).
  std::map<std::string, int64_t> wakeups_by_level;
  int64_t wake_affine_attempts = 0, wake_affine_pulls = 0;
  int64_t run_delay_count = 0;
  double run_delay_avg_us = 0;
  double run_delay_total_ms = 0;  // the delays summed over the run's wakeups
  double run_delay_p50_us = 0, run_delay_p99_us = 0, run_delay_max_us = 0;
  // taskstats delay accounting: cpu_delay_total / cpu_count, i.e. the mean
  // wait on a runqueue per time a task got a CPU (Josef's cpu_delay_req_avg).
  int64_t sched_runs = 0;
  double sched_delay_avg_us = 0;
  double sched_delay_total_ms = 0;  // taskstats cpu_delay_total, summed over the tasks
  // Wakeups placed on a busy CPU while another CPU sat idle, the idle CPUs
  // they passed over, and how long those stayed idle afterwards.
  int64_t busy_placements = 0;
  double busy_placement_idle_cpus_avg = 0;
  double busy_placement_idle_after_us_avg = 0;
  std::map<std::string, BalanceCounters> balance;  // "periodic", "newidle", "idle"
  // Entries into each idle state, shallowest first, as cpuidle's per-state
  // `usage` counter: what the governor chose, hence what wakeups paid.
  std::vector<std::pair<std::string, int64_t>> idle_state_entries;
  // Reschedule IPIs sent, and idle CPUs told to reschedule without one
  // (they polled, or waited in MWAIT on a kernel that relies on it).
  int64_t ipis_sent = 0, idle_wakes_without_ipi = 0;
  // Wakeups whose waker spun until the wakee's old CPU finished switching
  // away from it, and the time spun (kernel time of the waker, not lock spin).
  int64_t wakeups_waited_for_switch = 0, switch_wait_ns = 0;
  // schedule() calls that found their rq->lock held by a waker and picked
  // after it, and the time they spun for the lock (part of spin_ns_total).
  int64_t picks_after_waker_lock = 0, pick_lock_wait_ns = 0;
  std::vector<int64_t> idle_ns_per_cpu;
  int64_t idle_ns_total = 0;
  int64_t busy_ns_total = 0;
  int64_t spin_ns_total = 0;
  int64_t wasted_ns = 0;
  // Interrupt time taken off the tasks' clock (irq_time_accounting); -1
  // when the kernel was built without it.
  int64_t irq_time_ns = -1;
  // Tasks on a runqueue, time-averaged over the window: those running (the
  // CPUs' busy time) and those queued for a CPU (woken or preempted, not yet
  // switched in). /proc/stat's procs_running is nr_running() summed over the
  // CPUs; vmstat prints it as "r" and LKP averages it as vmstat.procs.r.
  int64_t waiting_task_ns = 0;
  // CPU time executed while the CPU's SMT sibling executed too, so at the
  // shared rate (hw::Machine::smt_shared_ns()); 0 without SMT. Where a
  // change moves a throughput load's figure, its share of the busy time
  // says whether the change moved tasks onto or off shared cores.
  int64_t smt_shared_ns = 0;
  bool smt = false;  // the machine has SMT siblings
  double runnable_avg = 0, waiting_avg = 0;
  // Kernel work charged in the window, by path (kernel::CostPath, in its
  // order): ns at a core's full rate. On SMT the busy time exceeds the sum
  // where a CPU's sibling executed at the same time (smt_throughput_permille).
  std::vector<std::pair<std::string, int64_t>> work_by_path;
  // Cache lines switched-in tasks refilled (Kernel::switch_in_refill(),
  // split as hw::Machine::refill_lines() splits them): served inside the
  // CPU's last-level cache, and from beyond it, perf's cache-references that
  // hit and cache-misses, for this one source.
  int64_t refill_lines_within_llc = 0, refill_lines_beyond_llc = 0;
  // Every other line fetched from another CPU's caches
  // (hw::Machine::lines_moved()): kernel objects, messages, the
  // scheduler's. With the refills, the model's side of perf's
  // cache-references that hit and cache-misses.
  int64_t moved_lines_within_llc = 0, moved_lines_beyond_llc = 0;
  std::vector<std::pair<std::string, int64_t>> policy;
};

class StatsCollector final : public Observer {
 public:
  explicit StatsCollector(std::vector<std::string> level_names) : level_names_(std::move(level_names)) {}
  void on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState st,
                 const kernel::Task* next) override;
  void on_wakeup_placement(int64_t t, int waker_cpu, int target_cpu, bool local, int level) override;
  void on_exit(int64_t t, int cpu, const kernel::Task* p) override;
  void on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int level,
                  const char* cause) override;
  void on_run_delay(int64_t t, int cpu, const kernel::Task* p, int64_t queued_ns, int64_t wakeup_ns) override;
  void on_balance(int64_t t, int cpu, int level, int idle_type, bool success, int moved,
                  int64_t cost_ns) override;
  void on_wake_affine(bool affine) override;
  void on_idle(int64_t t, int cpu, int state) override;
  void on_ipi(int64_t t, int cpu, int target, bool sent) override;
  void on_wait_for_switch(int64_t t, int cpu, int64_t spun_ns) override;
  void on_pick_after_lock(int64_t t, int cpu, int64_t spun_ns) override;
  // Starts counting from now (e.g. at a benchmark's start barrier).
  void reset(kernel::Kernel& k);
  [[nodiscard]] Summary summarize(const kernel::Kernel& k) const;

 private:
  [[nodiscard]] size_t level_index(int level) const;
  [[nodiscard]] const std::string& level_name(size_t index) const;
  // Where and when each task last left a CPU, until it runs again; by pid
  // (pids are dense), at_ns < 0 when there is none.
  struct SwitchOut {
    const char* where = nullptr;
    int64_t at_ns = -1;
  };
  std::vector<SwitchOut> switched_out_;
  // When each task last switched in (by pid, -1: not on a CPU), and the
  // role ledger by the role's pointer (string literals), merged by name in
  // summarize().
  std::vector<int64_t> switched_in_at_;
  // The wait on a runqueue before each task's run under way (rq->clock), by
  // pid; -1 once counted.
  std::vector<int64_t> arrival_wait_;
  // se.sum_exec_runtime of each task (by pid) when the window opened.
  std::vector<int64_t> exec_at_reset_;
  void count_arrival(RoleTimes& r, size_t pid);
  std::unordered_map<const char*, RoleTimes> by_role_ptr_;
  void close_run(const kernel::Task* p, int64_t t, PrevState st);
  // Episodes by the wchan's pointer (string literals), merged by name in
  // summarize(): no string is built on the switch path.
  std::unordered_map<const char*, OffCpuTimes> off_cpu_by_ptr_;
  std::vector<std::string> level_names_;
  Summary s_;
  std::vector<int64_t> remote_wakeups_by_level_;  // by level index; the last slot for "other"
  // Migrations by the cause's pointer (string literals), merged by name in
  // summarize(); the topology, from reset(), says which CPUs share a core.
  struct CauseCounts {
    int64_t moves = 0, joined = 0, left = 0, across_llc = 0;
  };
  std::vector<std::pair<const char*, CauseCounts>> by_cause_;
  const hw::Topology* topo_ = nullptr;
  // Every wakeup's run delay, for exact percentiles. Their order means
  // nothing, so summarize() sorts them in place: a copy would double a long
  // run's largest allocation (32 M samples at full-length pipe x16).
  mutable std::vector<int64_t> delays_;
  std::vector<int64_t> idle_entries_;  // by idle state index
  long double queued_total_ns_ = 0;
  int64_t runs_ = 0;
  std::vector<int64_t> idle_at_reset_, busy_at_reset_, spin_at_reset_, work_at_reset_;
  kernel::WakeupChecksByWchan checks_at_reset_;
  int64_t wasted_at_reset_ = 0, waiting_at_reset_ = 0, irq_at_reset_ = 0, smt_shared_at_reset_ = 0;
  int64_t refill_within_at_reset_ = 0, refill_beyond_at_reset_ = 0;
  int64_t moved_within_at_reset_ = 0, moved_beyond_at_reset_ = 0;
  int64_t bp_wakeups_ = 0, bp_idle_ = 0, bp_after_ns_ = 0, bp_after_n_ = 0;
  int64_t t_reset_ = 0;
};

// Counts one sched_switch as /proc does: a switch unless the task picked
// itself again, involuntary when prev was still runnable (preempted), and a
// sleep by the place prev slept (its wchan).
void count_switch(const kernel::Task* prev, PrevState st, const kernel::Task* next, int64_t& switches,
                  int64_t& involuntary, std::map<std::string, int64_t>& sleeps);

// The off_cpu key of a task switched out while still runnable.
inline constexpr const char* kPreemptedKey = "preempted";

// Human-readable block, and the same as JSON (docs/json.md).
// A move of p from `from` to `to` against the core (SMT siblings) of the
// task p last woke: +1 onto it, -1 off it, 0 neither (or no live wakee).
int move_against_last_wakee(const hw::Topology& topo, const kernel::Task* p, int from, int to);
// Summary::migrations_by_cause as "cause moves (+onto -off), ...".
std::string migration_causes_text(const Summary& s);
std::string format_summary(const Summary& s);

}  // namespace obs
