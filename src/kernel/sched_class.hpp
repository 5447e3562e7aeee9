// The policy interface, modelled on the kernel's struct sched_class.
//
// A policy implements these hooks and returns decisions; it never touches the
// clock or the event queue. What it may do to the world goes through
// SchedCore: read the time and CPU states, ask for a reschedule, move a task
// between runqueues, charge CPU time for its own work, and report balancing
// statistics. Each hook says when the core calls it and what holds then.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernel/features.hpp"
#include "kernel/sched_domain.hpp"
#include "kernel/task.hpp"

namespace hw {
class Machine;
}

namespace kernel {

// wake_flags (kernel/sched/sched.h, v4.0)
enum WakeFlag : int { WF_SYNC = 0x01, WF_FORK = 0x02, WF_MIGRATED = 0x04 };

// Flags passed to enqueue/dequeue (ENQUEUE_WAKEUP etc.)
// ENQUEUE_MIGRATED: 4.7+'s flag for a wakee that changed CPU (WAKE_RENORM_V47).
enum EnqueueFlag : int { ENQUEUE_WAKEUP = 1, ENQUEUE_WAKING = 4, ENQUEUE_MIGRATED = 0x20, DEQUEUE_SLEEP = 1 };

enum class CpuIdleType { NotIdle, Idle, NewlyIdle };

// update_avg() (kernel/sched/core.c, 3.10 and 4.0): "s64 diff = sample -
// *avg; *avg += diff >> 3;", an arithmetic shift, so a sample below the
// average lowers it by an eighth of the difference rounded down (toward
// minus infinity), not toward zero. rq->avg_idle is kept with it.
[[nodiscard]] constexpr int64_t update_avg(int64_t avg, int64_t sample) { return avg + ((sample - avg) >> 3); }

// The kernel path a piece of charged CPU time pays for: the statistics add
// it up per path (Summary::work_by_path), so a result can be traced to the
// work that moved. Syscall is a task's own system-call work (entry, pipe and
// socket bodies, copies, the pipe mutex's spin); Process is fork, exec, exit
// and wait; Ipi is the kicking CPU's store and IPI (wakeups, remote
// reschedules, nohz balance kicks); TimerInterrupt is the tick and every
// hrtimer interrupt. 2.4's schedule() holds runqueue_lock for its whole
// goodness() scan: that hold is Schedule, not RqLock.
enum class CostPath : uint8_t {
  Syscall,
  Process,
  ContextSwitch,
  Schedule,
  CacheRefill,
  Wakeup,
  Placement,
  Balance,
  Ipi,
  RqLock,
  TimerInterrupt,
  IdleLoop,
  Count
};
inline constexpr size_t kCostPaths = static_cast<size_t>(CostPath::Count);
// Short names, as the statistics print them.
const char* cost_path_name(CostPath path);

// What the core offers a policy.
class SchedCore {
 public:
  virtual ~SchedCore() = default;
  [[nodiscard]] virtual int64_t now_ns() const = 0;
  [[nodiscard]] virtual int64_t jiffies() const = 0;
  [[nodiscard]] virtual int nr_cpus() const = 0;
  [[nodiscard]] virtual const hw::Machine& machine() const = 0;
  [[nodiscard]] virtual const KernelConfig& config() const = 0;
  [[nodiscard]] virtual SchedDomains& domains() = 0;
  // The CPU whose code is executing right now (the waker's CPU in ttwu).
  [[nodiscard]] virtual int this_cpu() const = 0;
  // idle_cpu(): the CPU runs its idle task, nothing queued, no wakeup pending.
  [[nodiscard]] virtual bool idle_cpu(int cpu) const = 0;
  // rq->curr == rq->idle: the CPU runs its idle loop, or an interrupt
  // taken from it (2.4's test).
  [[nodiscard]] virtual bool running_idle_task(int cpu) const = 0;
  [[nodiscard]] virtual Task* curr(int cpu) const = 0;  // nullptr when idle
  [[nodiscard]] virtual Task* current() const = 0;      // curr(this_cpu())
  // Exit latency of the idle state the CPU is in (-1 when not idle).
  [[nodiscard]] virtual int64_t idle_exit_latency(int cpu) const = 0;
  [[nodiscard]] virtual int64_t idle_stamp(int cpu) const = 0;
  // resched_curr(): set need_resched on cpu; an IPI if it is remote.
  virtual void resched_curr(int cpu) = 0;
  // stop_one_cpu_nowait(): queue work for cpu's stopper thread. The stopper
  // preempts whatever runs there; the policy's cpu_stop_work(cpu) then runs
  // inside that CPU's next schedule(), once the preempted task is back on
  // its runqueue and no longer current. On a CPU with no current task it
  // runs at once.
  virtual void stop_one_cpu_nowait(int cpu) = 0;
  [[nodiscard]] virtual bool need_resched(int cpu) const = 0;
  // Charge kernel CPU time to `cpu` (the current CPU unless stated) for the
  // work of `path`.
  virtual void charge(int cpu, int64_t ns, CostPath path) = 0;
  // Acquire a runqueue lock (per CPU, or the single 2.4 runqueue_lock when
  // cpu == -1) from `by_cpu` for `hold_ns`: spin time emerges from contention.
  // The hold is charged to `path`: CostPath::RqLock for a short enqueue or
  // dequeue, the work's own path when the work itself runs under the lock.
  virtual void lock_rq(int cpu, int by_cpu, int64_t hold_ns, CostPath path) = 0;
  // set_task_cpu(): record a migration (tracing, counters, cache state).
  // `cause` names the code that moves it (Observer::on_migrate()).
  virtual void set_task_cpu(Task* p, int new_cpu, const char* cause) = 0;
  // core.c enqueue_task()/dequeue_task() around a class's own move of a
  // queued task (load balancing): update_rq_clock() and sched_info.
  virtual void sched_info_dequeued(int cpu, Task* p) = 0;
  virtual void sched_info_queued(int cpu, Task* p) = 0;
  // check_preempt_curr()'s tail: the class has decided; the core requests
  // the rq clock skip if the CPU is now going to schedule.
  virtual void rq_clock_skip_request(int cpu) = 0;
  // rq_clock_skip_update(rq, true) as yield_task_fair() calls it: the skip
  // is requested whatever the CPU's need_resched says.
  virtual void rq_clock_skip_update(int cpu) = 0;
  // update_rq_clock(), rq_clock() and rq_clock_task(). The two clocks are
  // one unless the irq_time_accounting build option is set
  // (CONFIG_IRQ_TIME_ACCOUNTING; no paravirt steal time either way). CFS
  // charges runtime and tracks load on rq_clock_task(), so time the clock
  // skips is charged to whichever task runs when it next moves.
  virtual void update_rq_clock(int cpu) = 0;
  [[nodiscard]] virtual int64_t rq_clock(int cpu) const = 0;
  [[nodiscard]] virtual int64_t rq_clock_task(int cpu) const = 0;
  // Statistics hooks.
  virtual void note_balance(int cpu, int level, CpuIdleType idle, bool success, int moved,
                            int64_t cost_ns) = 0;
  virtual void note_wake_affine(bool affine) = 0;
  // trace_sched_stat_runtime() in update_curr(), for a task entity.
  virtual void note_stat_runtime(int cpu, const Task* p, int64_t runtime_ns, uint64_t vruntime) = 0;
  // Kick an idle CPU (IPI) to run nohz_idle_balance() on behalf of idle CPUs;
  // false (no IPI) while its previous kick's bit is still set.
  virtual bool kick_idle_balance(int cpu) = 0;
  // Deterministic per-policy random stream (e.g. for tie breaks).
  virtual uint64_t random_u64() = 0;
  [[nodiscard]] virtual const std::vector<Task*>& all_tasks() const = 0;
};

// check_preempt_wakeup()'s comparisons between one pair of roles: how many,
// how many preempted, and the running entity's vruntime lead over the
// queued one, summed (signed; divide by checks) and binned. The bins show
// how the lead spreads about the wakeup granularity, which the mean hides:
// a mean just under it can hide a third of the checks above it.
struct WakeupCheckTally {
  // Quarter-millisecond bins from -12 ms to +24 ms (the sleeper credit's
  // cap at the largest scaled latency, 24 ms, and twice that ahead), with
  // one bin for each side beyond.
  static constexpr int64_t kLeadBinNs = 250000;
  static constexpr int64_t kLeadLowNs = -12000000;
  static constexpr int64_t kLeadHighNs = 24000000;
  static constexpr size_t kLeadBins = static_cast<size_t>((kLeadHighNs - kLeadLowNs) / kLeadBinNs) + 2;

  int64_t checks = 0, preemptions = 0, lead_ns = 0;
  // Counts of checks by lead. A run's add up to `checks`; an average over
  // repeats keeps their sum over the repeats (only their shares matter).
  std::array<int64_t, kLeadBins> lead_bins{};
  bool operator==(const WakeupCheckTally&) const = default;

  void add_lead(int64_t lead) {
    lead_ns += lead;
    size_t bin = 0;
    if (lead >= kLeadHighNs)
      bin = kLeadBins - 1;
    else if (lead >= kLeadLowNs)
      bin = 1 + static_cast<size_t>((lead - kLeadLowNs) / kLeadBinNs);
    ++lead_bins[bin];
  }
  // The lead below which a share q of the binned checks fall, in ms,
  // interpolated within its bin (so to a quarter millisecond), clipped to
  // -12 ... +24 ms. 0 with no checks.
  [[nodiscard]] double lead_quantile_ms(double q) const {
    int64_t total = 0;
    for (int64_t n : lead_bins) total += n;
    if (total == 0) return 0.0;
    const double want = q * static_cast<double>(total);
    double below = 0.0;
    for (size_t bin = 0; bin < kLeadBins; ++bin) {
      const auto n = static_cast<double>(lead_bins[bin]);
      if (n > 0 && below + n >= want) {
        if (bin == 0) return static_cast<double>(kLeadLowNs) / 1e6;
        if (bin == kLeadBins - 1) return static_cast<double>(kLeadHighNs) / 1e6;
        const double low = static_cast<double>(kLeadLowNs + static_cast<int64_t>(bin - 1) * kLeadBinNs);
        return (low + static_cast<double>(kLeadBinNs) * (want - below) / n) / 1e6;
      }
      below += n;
    }
    return static_cast<double>(kLeadHighNs) / 1e6;
  }
  // Pooling and differences of tallies (repeats, a reset mid-run).
  WakeupCheckTally& operator+=(const WakeupCheckTally& o) {
    checks += o.checks;
    preemptions += o.preemptions;
    lead_ns += o.lead_ns;
    for (size_t bin = 0; bin < kLeadBins; ++bin) lead_bins[bin] += o.lead_bins[bin];
    return *this;
  }
  WakeupCheckTally& operator-=(const WakeupCheckTally& o) {
    checks -= o.checks;
    preemptions -= o.preemptions;
    lead_ns -= o.lead_ns;
    for (size_t bin = 0; bin < kLeadBins; ++bin) lead_bins[bin] -= o.lead_bins[bin];
    return *this;
  }
};
// Keyed by the queued task's wchan (the sleep it woke from; "(fork)" or
// "(moved)" when it was queued by fork or a migration) and the running
// task's (its last sleep's; "-" if it never slept).
using WakeupChecksByWchan = std::map<std::pair<std::string, std::string>, WakeupCheckTally>;

class SchedClass {
 public:
  virtual ~SchedClass() = default;
  [[nodiscard]] virtual std::string name() const = 0;
  // The features were written mid-run (an echo to
  // /sys/kernel/debug/sched_features: static keys flip at once). A policy
  // that asks the config on every use has nothing to do.
  virtual void features_changed() {}
  // The wakeup preemption checks so far, by who met whom (empty for a
  // policy without them). For a messaging run it says which side carries
  // the lag that preempts.
  [[nodiscard]] virtual WakeupChecksByWchan wakeup_checks_by_wchan() const { return {}; }

  // Called when a task is created by fork, before it is enqueued
  // (task_fork_fair / sched_fork). The parent is current.
  virtual void task_fork(Task* p) = 0;
  // A new task's start load, once fork balancing has placed it and before it
  // is enqueued: 4.0's wake_up_new_task() calls init_task_runnable_average()
  // after set_task_cpu() (v4.4 moved it before the placement).
  virtual void init_task_runnable_average(Task* p) {}
  // Choose a runqueue for a waking (SD_BALANCE_WAKE) or new (SD_BALANCE_FORK)
  // task. Called from try_to_wake_up()/wake_up_new_task() on the waker's CPU.
  virtual int select_task_rq(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) = 0;
  // Called with p already migrated (task_cpu(p) == new CPU) before enqueue.
  virtual void migrate_task_rq(Task* p, int new_cpu) = 0;
  // Put p on cpu's runqueue (enqueue_task). p->on_rq is set by the core.
  virtual void enqueue_task(int cpu, Task* p, int flags) = 0;
  // Take p off its runqueue because it sleeps or exits (dequeue_task).
  virtual void dequeue_task(int cpu, Task* p, int flags) = 0;
  // sched_yield() by cpu's current task.
  virtual void yield_task(int cpu) = 0;
  // A task was woken/forked onto cpu: preempt the current task?
  // (check_preempt_curr; also called when cpu is idle.)
  virtual void check_preempt_curr(int cpu, Task* p, int wake_flags) = 0;
  // Pick the next task to run on cpu; prev (may be null) has already been put
  // back (put_prev_task) or dequeued. May run newly-idle balancing, charging
  // its cost. Returns nullptr to go idle.
  // may_balance is false on the re-pick after a balance pass found nothing.
  virtual Task* pick_next_task(int cpu, Task* prev, bool may_balance) = 0;
  // prev stops running on cpu (still queued if runnable).
  virtual void put_prev_task(int cpu, Task* prev) = 0;
  // p starts running on cpu (set_curr_task side of the switch).
  virtual void set_curr_task(int cpu, Task* p) = 0;
  // Every tick on a busy CPU (task_tick); may resched.
  virtual void task_tick(int cpu, Task* curr) = 0;
  // Periodic balancing from the tick (trigger_load_balance/rebalance_domains).
  virtual void trigger_load_balance(int cpu) = 0;
  // Called by a CPU that was kicked to balance for idle CPUs (nohz ILB).
  virtual void nohz_idle_balance(int cpu) {}
  // The work queued by SchedCore::stop_one_cpu_nowait(), run by cpu's stopper.
  virtual void cpu_stop_work(int cpu) {}
  // After a context switch away from prev (2.4 __schedule_tail).
  virtual void schedule_tail(int cpu, Task* prev) {}
  // The task exits (task_dead / release).
  virtual void task_dead(Task* p) {}
  // Runnable tasks queued on cpu including the running one (rq->nr_running).
  [[nodiscard]] virtual int nr_running(int cpu) const = 0;
  // Wake across LLCs through the target's wake list (TTWU_QUEUE)?
  [[nodiscard]] virtual bool queue_remote_wakeup(int from_cpu, int to_cpu) const { return false; }
  // Consistency check for the invariant checker: every runnable task is
  // queued exactly once. Returns an error message or "".
  [[nodiscard]] virtual std::string check_invariants() const = 0;
  // Which branch of the last select_task_rq() for a wakeup chose its CPU, as
  // a string literal naming a migration's cause (Observer::on_migrate()).
  [[nodiscard]] virtual const char* wake_placement() const { return "wake"; }
  // Short per-policy stats for reports (e.g. 2.4 epochs).
  [[nodiscard]] virtual std::vector<std::pair<std::string, int64_t>> stats() const { return {}; }
  // rq->cpu_load[0], which the menu cpuidle governor reads (get_iowait_load()).
  // The load wake-up placement and balancing read for cpu (4.0: the root
  // queue's runnable_load_avg).
  [[nodiscard]] virtual int64_t runnable_load(int cpu) const { return 0; }
  [[nodiscard]] virtual unsigned long cpu_load0(int cpu) const { return 0; }
  // Called when an idle CPU stops its tick (tick_nohz_stop_sched_tick():
  // not when a task was already queued, need_resched set, as it went idle).
  virtual void cpu_went_idle(int cpu) {}
  // Called when a CPU leaves its idle loop and restarts its stopped tick.
  virtual void cpu_exited_idle(int cpu) {}
  // Called when a CPU switches to its idle task (set_next_task_idle()).
  virtual void set_next_task_idle(int cpu) {}
  // Whether cpu is in nohz.idle_cpus_mask (for tests).
  [[nodiscard]] virtual bool nohz_idle(int cpu) const { return false; }
};

}  // namespace kernel
