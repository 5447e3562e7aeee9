// One simulated operating system kernel on a modelled machine: tasks, per-CPU
// execution, try_to_wake_up(), schedule(), the tick, fork/exit/wait and wait
// queues (kernel/sched/core.c, kernel/fork.c, kernel/exit.c). The scheduling
// decisions themselves belong to the policy (SchedClass).
//
// Execution model. Each CPU executes one segment at a time: queued kernel
// overhead (spin, then kernel work) followed by the current task's pending
// work. A segment's length is its work divided by the CPU's current rate
// (SMT sharing); when the rate changes, or an interrupt arrives, the segment
// is brought up to date and re-armed. When a task's work completes its
// program (a coroutine) is resumed until it issues its next action.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <deque>
#include <vector>

#include "hw/cache_line.hpp"
#include "hw/machine.hpp"
#include "kernel/cpuidle_menu.hpp"
#include "kernel/sched_class.hpp"
#include "obs/observer.hpp"
#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

namespace kernel {

class Kernel;
class Proc;

using Program = std::function<Co<void>(Proc&)>;

// A lock modelled analytically: a caller spins until the previous holder's
// hold time has elapsed (4.0 pipe->mutex optimistic spinning; 2.4 PIPE_SEM;
// 2.4's dcache_lock).
struct SpinResource {
  int64_t free_at = 0;
  // Returns the spin time of a caller arriving at `now` that holds it for `hold`.
  int64_t acquire(int64_t now, int64_t hold) {
    const int64_t spin = free_at > now ? free_at - now : 0;
    free_at = now + spin + hold;
    return spin;
  }
};

// A wait queue (wait_queue_head_t), in the list's order: __wake_up_common()
// (kernel/sched/wait.c, 4.0; kernel/sched.c, 2.4) walks it from the head.
// prepare_to_wait() and add_wait_queue() link a waiter at the head
// (__add_wait_queue(): list_add()), so the newest sleeper wakes first;
// the exclusive kinds (prepare_to_wait_exclusive(), add_wait_queue_exclusive())
// link at the tail, and so do futex waiters, whose hash-bucket plist is
// first come, first woken at one priority (futex_wake()). Exclusive
// waiters count against nr_exclusive.
struct WaitQueue {
  struct Waiter {
    Task* task;
    bool exclusive;
  };
  std::deque<Waiter> waiters;  // head first
  [[nodiscard]] bool active() const { return !waiters.empty(); }
};

// The task-side view of the kernel: what a program (or a kernel path running
// on behalf of a task) can do. Owned by the task.
class Proc {
 public:
  Proc(Kernel& k, Task* t) : kernel_(k), task_(t) {}
  [[nodiscard]] Kernel& kernel() const { return kernel_; }
  [[nodiscard]] Task* task() const { return task_; }
  [[nodiscard]] int cpu() const;
  [[nodiscard]] int64_t now() const;
  [[nodiscard]] const hw::Costs& costs() const;
  [[nodiscard]] const KernelConfig& config() const;

  struct Primitive {
    Proc* proc;
    Pending action;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> h) const noexcept;
    void await_resume() const noexcept {}
  };
  // Burn CPU time: user code, or kernel code on behalf of the task.
  Primitive user(int64_t ns) { return {this, {Pending::Work, jittered(ns), WorkKind::User}}; }
  Primitive sys(int64_t ns, CostPath path = CostPath::Syscall) {
    return {this, {Pending::Work, kernel_work(ns, path), WorkKind::Kernel}};
  }
  // A system call's first kernel work: the task comes from user mode, where
  // a pending need_resched is honoured first (the previous call's return).
  Primitive syscall(int64_t ns, CostPath path = CostPath::Syscall) {
    return {this, {Pending::Work, kernel_work(ns, path), WorkKind::Kernel, true, true}};
  }
  // Kernel work after a voluntary preemption point (might_sleep(), e.g. a
  // GFP_KERNEL allocation or mutex_lock()).
  Primitive sys_after_might_sleep(int64_t ns) {
    return {this, {Pending::Work, kernel_work(ns), WorkKind::Kernel, true, true}};
  }
  // Spin in user mode until the wall clock reads `wall_ns` (a busy loop
  // around gettimeofday(), which the vDSO serves without a system call).
  Primitive spin_until(int64_t wall_ns);
  // schedule() with the task already TASK_INTERRUPTIBLE on a wait queue.
  Primitive block() { return {this, {Pending::Block, 0, WorkKind::Kernel}}; }
  Primitive yield() { return {this, {Pending::Yield, 0, WorkKind::Kernel}}; }
  Primitive exit() { return {this, {Pending::Exit, 0, WorkKind::Kernel}}; }

  // wake_up(wq, nr_exclusive, flags) run by this task: each try_to_wake_up()
  // costs the waker time before the next one, with preemption disabled
  // (the wait-queue lock is held), as __wake_up_common() does.
  Co<void> wake_up(WaitQueue& wq, int nr_exclusive, int wake_flags);
  // wait_event_interruptible(wq, cond): sleep on wq until cond() holds;
  // wchan names the kernel function the task sleeps in.
  Co<void> wait_event(WaitQueue& wq, std::function<bool()> cond, const char* wchan, bool exclusive = false);
  // fork()/clone(): charges the fork cost and wakes the new task.
  // The program is taken by lvalue reference and copied when the child is
  // made: GCC 12 destroys class-type temporaries of a co_await expression
  // twice, so callers must pass a named Program, never a lambda temporary.
  Co<Task*> fork(const char* comm, Program& program, bool thread);
  // execve() of a new program image (fs/exec.c do_execveat_common()), with
  // sched_exec()'s balancing (2.6+; 2.4 has none).
  Co<void> exec();
  // do_exit() up to and with exit_notify(), once the program has ended:
  // the task's teardown and its parent's wakeup, in its own context.
  Co<void> exit_notify();
  // wait4(-1): reap one exited child, sleeping until there is one.
  Co<Task*> wait_child();
  // sched_setaffinity(0, mask): the calling task's allowed CPUs; it moves
  // off its CPU at once if that CPU is no longer allowed. Children inherit.
  Co<void> sched_setaffinity(hw::CpuMask mask);
  // nanosleep()/usleep(): sleep on an hrtimer (kernel/time/hrtimer.c
  // hrtimer_nanosleep()) armed on this CPU with the task's timer slack.
  Co<void> nanosleep(int64_t ns);
  // A kernel thread's timed sleep: no system call, an hrtimer armed on this
  // CPU for `expires` (with the default timer slack), sleeping in `wchan`.
  Co<void> kthread_sleep_until(int64_t expires, const char* wchan);

 private:
  int64_t jittered(int64_t ns);
  // The task's own kernel work, jittered, and counted under `path`.
  int64_t kernel_work(int64_t ns, CostPath path = CostPath::Syscall);
  Kernel& kernel_;
  Task* task_;
};

struct RunResult {
  enum class Outcome { Completed, Deadlock, TimeLimit, EventLimit } outcome = Outcome::Completed;
  int64_t end_ns = 0;
  uint64_t events = 0;
  std::string detail;  // for deadlocks: the blocked tasks
};

struct CpuAccounting {
  int64_t user_ns = 0, kernel_ns = 0, spin_ns = 0, idle_ns = 0;
  [[nodiscard]] int64_t total() const { return user_ns + kernel_ns + spin_ns + idle_ns; }
};

class Kernel final : public SchedCore {
 public:
  // kernel/watchdog.c: the softlockup watchdog hrtimer period (4 s).
  static constexpr int64_t WATCHDOG_PERIOD_NS = 4'000'000'000;
  // include/linux/init_task.h: .timer_slack_ns = 50000, inherited by every
  // task that does not change it with prctl(PR_SET_TIMERSLACK).
  static constexpr int64_t TIMER_SLACK_NS = 50'000;
  // sched_clock() (ns since boot) when a run starts: a benchmark runs on a
  // machine that has been up a while. rq->clock only matters by differences
  // except where 0 means "never": a new or migrated task's exec_start, which
  // task_hot() must read as long ago.
  static constexpr int64_t SCHED_CLOCK_AT_START_NS = 100'000'000'000;
  Kernel(hw::Machine& machine, KernelConfig config, uint64_t seed);
  ~Kernel() override;
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  void add_observer(obs::Observer* o) {
    observers_.push_back(o);
    if (o->wants_stat_runtime()) runtime_observers_.push_back(o);
  }
  // Called whenever simulated time moves forward, before the events at the
  // new time run (sim::EventQueue::set_advance_listener()).
  void set_time_listener(std::function<void(int64_t)> listener) {
    events_.set_advance_listener([l = std::move(listener)](sim::Time t) { l(t.ns()); });
  }
  // Writes `list` ("A,NO_B") to the scheduler features at `at_ns`, as an
  // `echo` to /sys/kernel/debug/sched_features during a run does: the new
  // bits hold from that instant, and state the old ones kept (an idle core
  // remembered, a wake list) stays as it was. Throws now on a bad list.
  void set_features_at(int64_t at_ns, const std::string& list);
  // Create the first task of the workload on `cpu`.
  Task* spawn(const std::string& comm, Program program, int cpu);
  // A kernel thread starting on `cpu` (kthread_create_on_node()), bound to
  // it (kthread_bind()) unless `bound` is false (an unbound kworker,
  // rcu_sched). It may run forever: the run ends once the workload's own
  // tasks have exited.
  Task* spawn_kthread(const std::string& comm, Program program, int cpu, bool bound = true);
  // Run until every task has exited, a deadlock, or a limit.
  RunResult run(int64_t time_limit_ns, uint64_t event_limit);

  // An hrtimer that wakes `p`, queued on CPU `c`: it may run from any timer
  // interrupt at or after `soft_ns` and is programmed to fire at `hard_ns`
  // (hrtimer_set_expires_range_ns(); __hrtimer_run_queues() runs every
  // timer whose soft expiry has passed).
  void start_hrtimer(int c, int64_t soft_ns, int64_t hard_ns, Task* p);
  // try_to_wake_up(): select and queue at once, for wakers with no task
  // context to wait in (an hrtimer's). A task's wakeups go through
  // Proc::wake_up().
  int try_to_wake_up(Task* p, int wake_flags);
  // Its two halves: up to select_task_rq()/set_task_cpu() (-1 if p was not
  // asleep; charges the waker), and ttwu_queue() onto the chosen CPU.
  int ttwu_select(Task* p, int wake_flags);
  // ttwu_queue()'s direct path: the target's lock and ttwu_do_activate(),
  // charged to the waker before the enqueue; false for a queued wakeup.
  bool ttwu_lock_and_activate(Task* p, int c);
  void ttwu_queue(Task* p, int c, int wake_flags);
  // What try_to_wake_up() runs on the waker after ttwu_queue() (ttwu_tail).
  void ttwu_finish();
  // Whether the wakee is queued only after the placement's cost (CFS
  // kernels) or before it (2.4: add_to_runqueue(), then reschedule_idle()).
  [[nodiscard]] bool ttwu_enqueues_after_placement() const;
  // set_cpus_allowed_ptr() on a task other than the caller (sched_setaffinity
  // by pid, `taskset -p`): throws std::invalid_argument for a mask with no
  // CPU of this machine, std::logic_error if it would have to move a task
  // that runs or is being woken on another CPU (the stopper's job, modelled
  // only for the caller itself: Proc::sched_setaffinity()).
  void set_cpus_allowed_ptr(Task* p, hw::CpuMask mask);

  // ---- SchedCore ----
  [[nodiscard]] int64_t now_ns() const override { return events_.now().ns(); }
  [[nodiscard]] int64_t jiffies() const override { return now_ns() / config_.tick_ns(); }
  [[nodiscard]] int nr_cpus() const override { return machine_.nr_cpus(); }
  [[nodiscard]] const hw::Machine& machine() const override { return machine_; }
  [[nodiscard]] const KernelConfig& config() const override { return config_; }
  [[nodiscard]] SchedDomains& domains() override { return domains_; }
  [[nodiscard]] int this_cpu() const override { return this_cpu_; }
  [[nodiscard]] bool idle_cpu(int cpu) const override;
  // rq->curr == rq->idle: idle, or in an interrupt taken from idle (whose
  // schedule() has not run yet, Cpu::pick_after_irq included).
  [[nodiscard]] bool running_idle_task(int c) const override { return cpu(c).idle || cpu(c).irq_from_idle; }
  // Whether CPU c's scheduler tick is running (stopped while it idles, NO_HZ).
  [[nodiscard]] bool tick_running(int c) const { return cpu(c).tick_on; }
  // Whether wakees wait on CPU c's wake list (TTWU_QUEUE) for its IPI.
  [[nodiscard]] bool wake_list_pending(int c) const { return !cpu(c).wake_list.empty(); }
  [[nodiscard]] Task* curr(int cpu) const override { return cpus_[static_cast<size_t>(cpu)].curr; }
  [[nodiscard]] Task* current() const override { return curr(this_cpu_); }
  [[nodiscard]] int64_t idle_exit_latency(int cpu) const override;
  [[nodiscard]] int64_t idle_stamp(int cpu) const override {
    return cpus_[static_cast<size_t>(cpu)].idle_since;
  }
  void resched_curr(int cpu) override;
  void stop_one_cpu_nowait(int cpu) override;
  [[nodiscard]] bool need_resched(int c) const override { return cpu(c).need_resched; }
  // schedstat's sched_count: calls of schedule() on the CPU.
  [[nodiscard]] int64_t sched_count(int c) const { return cpu(c).sched_count; }
  void charge(int cpu, int64_t ns, CostPath path) override;
  void lock_rq(int cpu, int by_cpu, int64_t hold_ns, CostPath path) override;
  // CFS kernels lock per-CPU runqueues in the core (schedule(), wakeups,
  // forks); 2.4's class takes its single runqueue_lock itself.
  [[nodiscard]] bool per_cpu_rq_locks() const;
  void set_task_cpu(Task* p, int new_cpu, const char* cause) override;
  void note_balance(int cpu, int level, CpuIdleType idle, bool success, int moved,
                    int64_t cost_ns) override;
  void note_wake_affine(bool affine) override;
  void note_stat_runtime(int cpu, const Task* p, int64_t runtime_ns, uint64_t vruntime) override;
  bool kick_idle_balance(int cpu) override;
  void sched_info_dequeued(int cpu, Task* p) override;
  void sched_info_queued(int cpu, Task* p) override;
  void rq_clock_skip_request(int cpu) override;
  void rq_clock_skip_update(int cpu) override;
  void update_rq_clock(int c) override;
  [[nodiscard]] int64_t rq_clock(int c) const override { return cpu(c).rq_clock; }
  [[nodiscard]] int64_t rq_clock_task(int c) const override { return cpu(c).rq_clock_task; }
  uint64_t random_u64() override { return policy_rng_.next_u64(); }
  [[nodiscard]] const std::vector<Task*>& all_tasks() const override { return task_ptrs_; }

  // Kernel-wide data outside the scheduler that every task's system calls
  // share, for the line switches on 2.4: dcache_lock, which dnotify_parent()
  // takes after every read() and write() that moved data (2.4.19
  // fs/read_write.c sys_read()/sys_write(), fs/dnotify.c); and the freed
  // sk_buffs each CPU keeps for its next allocations (net/core/skbuff.c's
  // skb_head_pool and mm/slab.c's per-CPU arrays, last in first out), by
  // the CPU that last wrote their data, with what CPUs' arrays gave back to
  // the slabs when full.
  struct SharedLines {
    hw::CacheLine dcache_lock_line;
    SpinResource dcache_lock;
    std::vector<std::vector<int>> freed_skbs;  // per CPU: data writers, newest last
    std::vector<int> slab_skbs;
  };
  [[nodiscard]] SharedLines& shared_lines() { return shared_lines_; }

  [[nodiscard]] SchedClass& policy() { return *policy_; }
  [[nodiscard]] const SchedClass& policy() const { return *policy_; }
  [[nodiscard]] const CpuAccounting& accounting(int cpu) const {
    return cpus_[static_cast<size_t>(cpu)].acct;
  }
  [[nodiscard]] int64_t wasted_ns() const { return wasted_ns_; }
  // With irq_time_accounting: the interrupt time every CPU has run; -1
  // without the option.
  [[nodiscard]] int64_t irq_time_total() const;
  // Tasks queued for a CPU (woken or preempted, not yet switched in),
  // integrated over time up to now: with the CPUs' busy time, the time
  // average of nr_running() that vmstat's "r" samples.
  [[nodiscard]] int64_t waiting_task_ns() const {
    return waiting_task_ns_ + (now_ns() - wasted_since_) * nr_waiting_;
  }
  // Kernel work charged so far, by path (ns at a core's full rate; a CPU
  // whose SMT sibling executes takes longer to run it).
  [[nodiscard]] const std::array<int64_t, kCostPaths>& work_by_path() const { return work_by_path_; }
  // Cache lines switched-in tasks refilled, by where they came from.
  [[nodiscard]] const hw::Machine::RefillLines& refill_lines() const { return refill_lines_; }
  // Wakeups placed on a busy CPU while another allowed CPU sat idle (and not
  // already being woken), and how long those idle CPUs then stayed idle.
  struct BusyPlacement {
    int64_t wakeups = 0;
    int64_t idle_cpus = 0;           // summed over those wakeups
    int64_t idle_after_ns = 0;       // summed remaining idle time of those CPUs
    int64_t idle_after_samples = 0;  // CPUs whose remaining idle time is known
  };
  [[nodiscard]] BusyPlacement busy_placement() const;
  // Bring every CPU's accounting up to now (e.g. before a snapshot).
  void flush_accounting();
  [[nodiscard]] int64_t start_ns() const { return 0; }
  [[nodiscard]] uint64_t seed() const { return seed_; }
  [[nodiscard]] sim::EventQueue& events() { return events_; }
  [[nodiscard]] int64_t jitter(int64_t ns);
  // Checks the DESIGN.md invariants; returns "" or a description.
  [[nodiscard]] std::string check_invariants() const;

 private:
  friend class Proc;
  struct Cpu {
    Task* curr = nullptr;
    // The address space loaded in CR3 (4.0's active_mm of the task last
    // switched in with an mm): the idle task and kernel threads keep it
    // (enter_lazy_tlb()), so switching back to its owner loads nothing.
    uint64_t loaded_mm = 0;
    int64_t sched_count = 0;
    bool idle = true;             // running the idle task
    Task* switch_from = nullptr;  // prev whose switch is not traced yet
    obs::PrevState switch_from_state = obs::PrevState::Runnable;
    int64_t spin_left = 0, kern_left = 0;
    // With irq_time_accounting: an interrupt handler's work (its lock spin,
    // the rest), which runs before anything else charged to the CPU, as the
    // handler runs before the code it interrupted, and counts as interrupt
    // time as it runs (Kernel::account_irq_time()).
    int64_t irq_spin_left = 0, irq_kern_left = 0;
    [[nodiscard]] int64_t work_left() const { return irq_spin_left + irq_kern_left + spin_left + kern_left; }
    int64_t seg_start = 0;
    int rate = 1000;
    uint64_t gen = 0;
    bool armed = false;
    bool need_resched = false;
    bool kick_pending = false;
    bool pending_by_store = false;  // kick_pending, but woken by a flag store (no IPI sent)
    bool ipi_in_flight = false;     // kick_pending, and an IPI was sent: its handler is charged on arrival
    bool kicked_while_idle = false;
    bool kick_sent_busy = false;  // kick_pending, sent while the CPU was not idle (no exit latency in it)
    bool irq_from_idle = false;  // in an interrupt (and its softirq) taken from idle
    // rq->clock as sched_info reads it: the time of its last
    // update_rq_clock(), and the pending skip (RQCF_REQ_SKIP/RQCF_ACT_SKIP
    // in 4.0, rq->skip_clock_update in 3.10).
    int64_t rq_clock = SCHED_CLOCK_AT_START_NS;
    uint8_t clock_skip = 0;
    // rq->clock_task: rq_clock less the interrupt time that
    // update_rq_clock_task() takes out (CONFIG_IRQ_TIME_ACCOUNTING; equal to
    // rq_clock without it), and rq->prev_irq_time, the part of this CPU's
    // interrupt time taken out so far.
    int64_t rq_clock_task = SCHED_CLOCK_AT_START_NS;
    int64_t prev_irq_time = 0;
    // cpu_hardirq_time + cpu_softirq_time: the handlers' time run so far
    // (up to the CPU's last sync()).
    int64_t irq_time = 0;
    bool balance_kick = false;   // a balance kick not yet handled
    bool stop_work = false;      // the stopper has work queued (stop_one_cpu_nowait())
    bool nohz_kick_bit = false;  // NOHZ_BALANCE_KICK: set by the kick, cleared when its pass ends
    std::vector<Task*> wake_list;
    RqLines rq_lines;  // the ttwu_lines switch (CFS)
    // CPUs whose waker spins in try_to_wake_up() until this CPU has switched
    // away from its sleeping prev; and, on the waker's side, since when.
    std::vector<int> switch_spinners;
    int64_t switch_spin_since = -1;
    int idle_state = 0;
    std::optional<MenuGovernor> menu;  // cpuidle governor (CFS kernels)
    bool governor_chose = false;       // this idle period's state came from menu
    bool in_idle_state = false;        // cpuidle entered (not skipped for need_resched)
    // A CPU leaving its idle state runs again at this time: the first IPI,
    // store or timer that reached it started the exit (-1: none yet).
    int64_t running_at = -1;
    int64_t idle_since = 0;
    int64_t idle_acct_since = 0;  // idle time accounted up to here
    uint64_t tick_gen = 0;
    bool tick_on = false;
    int64_t tick_offset = 0;
    int64_t watchdog_offset = 0;  // phase of this CPU's softlockup watchdog hrtimer
    int64_t lock_free_at = 0;
    int lock_holder = -1;  // the CPU that took this rq->lock last
    // schedule() found this rq->lock held by another CPU: its pick waits
    // until it has the lock (segment_done()).
    bool pick_after_lock = false;
    // An interrupt taken from idle woke or queued something: its handler's
    // work runs on the idle task first, and the idle loop's schedule()
    // picks after it (segment_done()), balancing only if the interrupt's
    // own entry was all there was to run (Kernel::irq_exit()).
    bool pick_after_irq = false;
    bool pick_after_irq_may_balance = false;
    // The idle loop's way out (`idle_exit_path`) is charged, before that
    // schedule(): leave_idle_loop() does not charge it again.
    bool idle_exit_paid = false;
    // Wakers that enqueued a wakee here at the lock and have not yet done
    // their preemption check, so still hold the lock (ttwu_do_activate()).
    // The lock's modelled hold is in work ns, a waker's CPU may run slower
    // (a busy SMT sibling): a pick spins on until this is 0.
    int wakers_activating = 0;
    // A reschedule is due at a preemption point, but kernel work charged
    // before it (an interrupt's handler, the rest of a switch-in) has not
    // run yet: it runs first, on the current task's time, and schedule()
    // follows (segment_done()); meanwhile the task's own work waits.
    bool preempt_after_kernel_work = false;
    // The kernel work charged for a switch (schedule()'s and the switch-in's)
    // has not all run yet: the task is still inside schedule(), whose end
    // tests need_resched again (resched_curr()).
    bool in_switch_tail = false;
    int64_t bytes_touched = 0;  // working sets of the tasks run here, summed
    CpuAccounting acct;
    // Busy placements that saw this CPU idle: count and sum of their times.
    int64_t placements_pending = 0;
    int64_t placements_ts_sum = 0;
    struct HrTimer {
      int64_t soft_ns, hard_ns;
      Task* task;
      uint64_t id;
    };
    std::vector<HrTimer> hrtimers;  // queued on this CPU, unordered
  };
  Cpu& cpu(int c) { return cpus_[static_cast<size_t>(c)]; }
  [[nodiscard]] const Cpu& cpu(int c) const { return cpus_[static_cast<size_t>(c)]; }

  Task* new_task(const std::string& comm, Program program, Task* parent, bool thread);
  void wake_up_new_task(Task* p);
  int sched_exec_target(Task* p);
  void move_queued_task(int c, Task* p, int dest, const char* cause);
  // The last select_task_rq() replaced the class's CPU, one the task may not
  // use, with select_fallback_rq()'s: its move is an affinity move.
  bool select_fell_back_ = false;
  int select_task_rq(Task* p, uint32_t sd_flag, int wake_flags);
  [[nodiscard]] int select_fallback_rq(const Task* p) const;
  void ttwu_do_activate(Task* p, int cpu, int wake_flags);
  int64_t ttwu_waker_lines(Task* p, int from, int c);
  void activate_task(Task* p, int cpu, int flags);
  // rq->clock and the sched_info accounting on it (schedstat run_delay,
  // taskstats cpu_delay_total): see kernel.cpp.
  [[nodiscard]] bool clock_skip_active(const Cpu& k) const;
  int64_t sched_info_arrive(int c, Task* p);
  [[nodiscard]] int64_t sched_info_clock(int c) const;  // rq_clock(rq); 2.4: the simulated clock
  void do_exit(Task* p);
  bool wakee_switching_out(const Task* p) const;
  void spin_for_switch(int waker_cpu, int target_cpu);
  void switched_away(int c, Task* prev);

  void sync(int c);
  void arm(int c);
  void segment_done(int c, uint64_t gen);
  void advance(int c);
  void schedule(int c, bool preempt);
  // The rest of __schedule() from pick_next_task() on, with rq->lock held.
  void pick_and_switch(int c, Task* prev, obs::PrevState st);
  // How long `by_cpu` would spin for rq `c`'s lock (-1: the global lock) now.
  [[nodiscard]] int64_t rq_lock_wait(int c, int by_cpu) const;
  void run_stopper(int c);
  void finish_switch(int c, Task* prev, Task* next);
  void enter_idle(int c);
  int choose_idle_state(int c);
  // What a task switched in on `c` pays to refill its working set; counts
  // the lines (refill_lines_).
  [[nodiscard]] int64_t switch_in_refill(const Task* t, int c);
  void exit_idle(int c);
  void leave_idle_loop(int c);
  bool pay_idle_exit_path(int c);
  [[nodiscard]] bool idle_exit_path_due(int c) const;
  // Why a CPU is being told to look at its runqueue; it decides whether an
  // idle CPU that waits in MWAIT can be woken by a store instead of an IPI.
  enum class Kick : uint8_t { Resched, QueuedWakeup, Balance };
  void kick_cpu(int target, Kick why);
  [[nodiscard]] bool wakes_by_store(const Cpu& k, Kick why) const;
  void handle_kick(int c);
  void hrtimer_fires(int c, uint64_t id);
  void hrtimer_interrupt(int c);
  // Run every hrtimer of CPU c whose soft expiry has passed (from an interrupt).
  void run_hrtimers(int c);
  // Return from an interrupt on CPU c: preempt, resume or pick.
  void irq_exit(int c, bool was_armed, int64_t entry_ns = 0);
  // irqtime_account_irq() for the handler that entered with `before` of
  // work charged to the CPU, and irq_time_read().
  struct WorkCharged {
    int64_t spin = 0, kern = 0;
  };
  [[nodiscard]] static WorkCharged work_charged(const Cpu& k) { return {k.spin_left, k.kern_left}; }
  void account_irq_time(int c, WorkCharged before);
  [[nodiscard]] int64_t irq_time_read(int c) const;
  void preempt_at_resched_point(int c);
  void start_tick(int c);
  [[nodiscard]] int64_t tick_phase(int c) const;
  void tick(int c, uint64_t gen);
  [[nodiscard]] bool preemptible_now(const Task* t) const;
  static bool at_resched_point(const Pending& next);
  void update_wasted();
  static void end_nohz_kick(Cpu& k);
  void trace_switch(int c, Task* prev, obs::PrevState st, Task* next);

  hw::Machine& machine_;
  KernelConfig config_;
  // set_features_at(): the config once every write asked for has been
  // made, and the last write's time (writes are asked for in time order).
  KernelConfig written_config_;
  int64_t last_write_at_ns_ = -1;
  uint64_t seed_;
  SchedDomains domains_;
  sim::EventQueue events_;
  sim::Rng jitter_rng_, policy_rng_, watchdog_rng_, kworker_noise_rng_;
  Task* spawn_on(const std::string& comm, Program program, int cpu, bool kthread, bool bound = true);
  // The kworker_noise_* what-if's per-CPU threads, started at boot.
  void start_kworker_noise();
  std::unique_ptr<SchedClass> policy_;
  std::vector<Cpu> cpus_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<std::unique_ptr<Proc>> procs_;
  std::vector<Task*> task_ptrs_;
  SharedLines shared_lines_;
  std::vector<std::unique_ptr<WaitQueue>> child_waits_;  // per task, wait_chldexit
  std::vector<obs::Observer*> observers_;
  std::vector<obs::Observer*> runtime_observers_;  // those that want_stat_runtime()
  int this_cpu_ = 0;
  bool booted_ = false;
  bool ttwu_lines_ = false;  // --sysctl ttwu_lines=1 (kernel/sched_lines.hpp)
  bool irq_time_accounting_ = false;  // --sysctl irq_time_accounting=1 (update_rq_clock())
  int next_autogroup_ = 1;
  int next_pid_ = 1;
  uint64_t next_mm_ = 1;
  int live_tasks_ = 0;
  int64_t global_lock_free_at_ = 0;
  int global_lock_holder_ = -1;
  // Work-conservation monitor.
  int nr_idle_ = 0;
  int nr_waiting_ = 0;
  int64_t wasted_since_ = 0;
  int64_t wasted_ns_ = 0;
  int64_t waiting_task_ns_ = 0;
  std::array<int64_t, kCostPaths> work_by_path_{};
  hw::Machine::RefillLines refill_lines_;
  int nr_kicked_idle_ = 0;  // idle CPUs with a wakeup IPI in flight
  uint64_t next_hrtimer_id_ = 0;
  BusyPlacement busy_placement_;
  friend WaitQueue& child_wait(Kernel& k, Task* t);
};

// Proc's accessors, here where Kernel is complete: the paths call them at
// every step, so they are inline.
inline int Proc::cpu() const { return task_->cpu; }
inline int64_t Proc::now() const { return kernel_.now_ns(); }
inline const hw::Costs& Proc::costs() const { return kernel_.machine().costs(); }
inline const KernelConfig& Proc::config() const { return kernel_.config(); }

// Factory (kernel/policies/*.cpp).
std::unique_ptr<SchedClass> make_cfs(SchedCore& core);
std::unique_ptr<SchedClass> make_linux24(SchedCore& core);

}  // namespace kernel
