// Typed events the kernel emits. Observers (statistics, traces) subscribe;
// observing never changes the simulation.
#pragma once
#include <cstdint>

namespace kernel {
struct Task;
}

namespace obs {

enum class PrevState : uint8_t { Runnable, Preempted, Sleeping, Dead };

class Observer {
 public:
  virtual ~Observer() = default;
  virtual void on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState prev_state,
                         const kernel::Task* next) {}
  virtual void on_waking(int64_t t, int cpu, const kernel::Task* p, int target_cpu) {}
  virtual void on_wakeup(int64_t t, int cpu, const kernel::Task* p, int target_cpu, bool is_new) {}
  // set_task_cpu() moved p; `level` is the lowest sched-domain level
  // spanning both CPUs. `cause` names the code that moved it, a string
  // literal: the wakeup's placement as the class reports it
  // (SchedClass::wake_placement(), e.g. "wake_idle_core", "wake_slow_path"),
  // "fork", "exec", "affinity", the balancer ("balance_newidle",
  // "balance_idle", "balance_busy", "balance_active") or 2.4's
  // "schedule_pick".
  virtual void on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int level,
                          const char* cause) {}
  virtual void on_fork(int64_t t, int cpu, const kernel::Task* parent, const kernel::Task* child) {}
  virtual void on_exit(int64_t t, int cpu, const kernel::Task* p) {}
  // state = idle-state index entered, or -1 on exit from idle.
  virtual void on_idle(int64_t t, int cpu, int state) {}
  // A task started running after `queued_ns` on a runqueue as sched_info
  // reads it on rq->clock (schedstat run_delay, taskstats cpu_delay_total;
  // see Kernel::update_rq_clock()); wakeup_ns is the time since its wakeup
  // (sched_waking) on the simulated clock, or -1 if it was preempted or
  // yielded rather than woken.
  virtual void on_run_delay(int64_t t, int cpu, const kernel::Task* p, int64_t queued_ns,
                            int64_t wakeup_ns) {}
  virtual void on_balance(int64_t t, int cpu, int level, int idle_type, bool success, int moved,
                          int64_t cost_ns) {}
  virtual void on_wake_affine(bool affine) {}
  // A wakeup placed on `target_cpu` by a waker on `waker_cpu`; `level` is the
  // lowest sched-domain level spanning both (-1 when they are one CPU, or
  // when no domain spans both).
  virtual void on_wakeup_placement(int64_t t, int waker_cpu, int target_cpu, bool local, int level) {}
  // CPU `cpu` told `target` to reschedule: with an IPI (sent) or, when the
  // target idles polling or in MWAIT, by setting its flag (the kernel's
  // sched_wake_idle_without_ipi tracepoint).
  virtual void on_ipi(int64_t t, int cpu, int target, bool sent) {}
  // A waker on `cpu` spun `spun_ns` in try_to_wake_up() until its wakee's
  // old CPU had switched away from it (`while (p->on_cpu) cpu_relax();`).
  virtual void on_wait_for_switch(int64_t t, int cpu, int64_t spun_ns) {}
  // CPU `cpu` entered schedule() while a waker held its rq->lock and spins
  // `spun_ns` for it; it picks once the waker's ttwu_do_activate() is done.
  virtual void on_pick_after_lock(int64_t t, int cpu, int64_t spun_ns) {}
  // The fair class's update_curr() charged `runtime_ns` to task `p`, the
  // current task of `cpu`'s runqueue, whose vruntime is now `vruntime` (the
  // kernel's sched_stat_runtime tracepoint). Called only for observers that
  // ask for it: update_curr() runs at every scheduler event.
  [[nodiscard]] virtual bool wants_stat_runtime() const { return false; }
  virtual void on_stat_runtime(int64_t t, int cpu, const kernel::Task* p, int64_t runtime_ns, uint64_t vruntime) {}
};

}  // namespace obs
