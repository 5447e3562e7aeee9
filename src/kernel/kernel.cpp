#include "kernel/kernel.hpp"

#include <algorithm>
#include <cassert>
#include <sstream>
#include <stdexcept>

namespace kernel {

// ---------------------------------------------------------------- Proc ----

const char* cost_path_name(CostPath path) {
  switch (path) {
    case CostPath::Syscall: return "syscalls";
    case CostPath::Process: return "process";
    case CostPath::ContextSwitch: return "context_switch";
    case CostPath::Schedule: return "schedule";
    case CostPath::CacheRefill: return "cache_refill";
    case CostPath::Wakeup: return "wakeup";
    case CostPath::Placement: return "placement";
    case CostPath::Balance: return "balance";
    case CostPath::Ipi: return "ipi";
    case CostPath::RqLock: return "rq_lock";
    case CostPath::TimerInterrupt: return "timer_irq";
    case CostPath::IdleLoop: return "idle_loop";
    case CostPath::Count: break;
  }
  return "?";
}

int64_t Proc::jittered(int64_t ns) { return kernel_.jitter(ns); }

int64_t Proc::kernel_work(int64_t ns, CostPath path) {
  const int64_t j = kernel_.jitter(ns);
  if (j > 0) kernel_.work_by_path_[static_cast<size_t>(path)] += j;
  return j;
}

void Proc::Primitive::await_suspend(std::coroutine_handle<> h) const noexcept {
  proc->task_->resume_point = h;
  proc->task_->pending = action;
}

Proc::Primitive Proc::spin_until(int64_t wall_ns) {
  Pending work{Pending::Work, std::max<int64_t>(0, wall_ns - now()), WorkKind::User};
  work.until_ns = wall_ns;
  return {this, work};
}

// kernel/time/hrtimer.c (v4.0) hrtimer_nanosleep() -> do_nanosleep(): arm
// the sleeper's hrtimer with the task's slack, then schedule() until its
// hrtimer_wakeup() runs. The timer goes on this CPU: switch_hrtimer_base()
// keeps it local because the CPU is busy (get_nohz_timer_target()).
Co<void> Proc::nanosleep(int64_t ns) {
  co_await syscall(costs().syscall_entry);
  task_->state = TaskState::Interruptible;
  task_->wchan = "hrtimer_nanosleep";
  const int64_t expires = now() + std::max<int64_t>(0, ns);
  kernel_.start_hrtimer(cpu(), expires, expires + Kernel::TIMER_SLACK_NS, task_);
  co_await block();
}

Co<void> Proc::kthread_sleep_until(int64_t expires, const char* wchan) {
  task_->state = TaskState::Interruptible;
  task_->wchan = wchan;
  expires = std::max(expires, now());
  kernel_.start_hrtimer(cpu(), expires, expires + Kernel::TIMER_SLACK_NS, task_);
  co_await block();
}

Co<void> Proc::wait_event(WaitQueue& wq, std::function<bool()> cond, const char* wchan, bool exclusive) {
  // prepare_to_wait(); if (!cond) schedule(); finish_wait() — the check and
  // the sleep are atomic here because the simulation is single-threaded.
  while (!cond()) {
    task_->state = TaskState::Interruptible;
    task_->wchan = wchan;
    if (exclusive)
      wq.waiters.push_back({task_, true});  // __add_wait_queue_tail()
    else
      wq.waiters.push_front({task_, false});  // __add_wait_queue(): list_add()
    task_->waiting_on = &wq;
    co_await block();
    auto& w = wq.waiters;
    // Its own entry: only the waiter takes it off (finish_wait()).
    if (auto it = std::find_if(w.begin(), w.end(), [&](const auto& x) { return x.task == task_; }); it != w.end())
      w.erase(it);
    task_->waiting_on = nullptr;
  }
}

// kernel/fork.c do_fork(): copy_process() is the call's work, and the child
// exists, woken by wake_up_new_task(), only at its end.
Co<Task*> Proc::fork(const char* comm, Program& program, bool thread) {
  co_await syscall(costs().fork_base, CostPath::Process);
  Task* child = kernel_.new_task(comm, program, task_, thread);
  for (auto* o : kernel_.observers_) o->on_fork(now(), cpu(), task_, child);
  kernel_.wake_up_new_task(child);
  co_return child;
}

// fs/exec.c do_execveat_common() (4.0): once the binary is open, sched_exec()
// -- "execve() is a valuable balancing opportunity, because at this point
// the task has the smallest effective memory and cache footprint"
// (kernel/sched/core.c) -- may move the task to the idlest CPU, and only
// then is the old mm dropped and the new image loaded, on that CPU. The
// work before sched_exec() (credentials, opening the file) is charged with
// the rest, after it. The move assumes a preemptible kernel, as the model
// does elsewhere (CONFIG_PREEMPT_VOLUNTARY): the caller of stop_one_cpu() is
// preempted while still queued, so __migrate_task() moves it; on a
// PREEMPT_NONE kernel it would sleep first and 4.0's stopper would skip it.
Co<void> Proc::exec() {
  const int dest = kernel_.sched_exec_target(task_);
  if (dest != cpu()) {
    Pending migrate{Pending::Migrate, 0, WorkKind::Kernel};
    migrate.dest_cpu = dest;
    co_await Primitive{this, migrate};
  }
  // exec_mmap(): a new mm, activate_mm() loads it on this CPU (its cost is
  // exec_base's).
  task_->mm = kernel_.next_mm_++;
  kernel_.cpu(cpu()).loaded_mm = task_->mm;
  co_await syscall(costs().exec_base, CostPath::Process);
}

// kernel/sched/core.c sched_setaffinity() -> set_cpus_allowed_ptr() (4.0):
// the mask is set, and a running task whose CPU left the mask is moved by
// the stopper to cpumask_any_and(cpu_active_mask, new_mask), as exec's
// balancing moves it. An empty mask is EINVAL and changes nothing.
Co<void> Proc::sched_setaffinity(hw::CpuMask mask) {
  // Into a local, not back into the parameter: with GCC 12 an assignment to
  // this class-type parameter read back empty after the next suspension.
  const hw::CpuMask allowed = mask & kernel_.machine().topo().all();
  co_await syscall(costs().syscall_entry);
  if (allowed.weight() == 0) co_return;
  task_->cpus_allowed = allowed;
  if (allowed.test(cpu())) co_return;
  Pending migrate{Pending::Migrate, 0, WorkKind::Kernel};
  migrate.dest_cpu = allowed.first();
  migrate.migrate_cause = "affinity";
  co_await Primitive{this, migrate};
}

namespace {
// kernel/sched/sched.h (4.0): rq->clock_skip_update bits.
constexpr uint8_t RQCF_REQ_SKIP = 0x01;
constexpr uint8_t RQCF_ACT_SKIP = 0x02;
// The length of a spin that ends on an event, not after a time: longer than
// any run, short enough that arm()'s ns * 1000 / rate cannot overflow.
constexpr int64_t kSpinUntilReleased = 1'000'000'000'000'000;
}  // namespace

Co<void> Proc::wake_up(WaitQueue& wq, int nr_exclusive, int wake_flags) {
  const std::vector<WaitQueue::Waiter> snapshot(wq.waiters.begin(), wq.waiters.end());
  for (const auto& w : snapshot) {
    // Earlier wakeups let time pass: a waiter may have left the queue since.
    if (w.task->waiting_on != &wq) continue;
    if (kernel_.wakee_switching_out(w.task)) {
      // Spins with the wakee's pi_lock held and interrupts off, so neither
      // preemption nor another waker gets in; released by switched_away().
      kernel_.spin_for_switch(cpu(), w.task->cpu);
      co_await Primitive{this, {Pending::Work, kSpinUntilReleased, WorkKind::Kernel, false}};
    }
    if (kernel_.ttwu_enqueues_after_placement()) {
      // try_to_wake_up() (core.c 3.x/4.x) runs its bookkeeping and
      // select_task_rq() before ttwu_queue() enqueues the wakee, so the
      // waker's cost of placing it is on the wakee's path; other wakers
      // meanwhile still see the chosen CPU idle.
      const int target = kernel_.ttwu_select(w.task, wake_flags);
      if (target < 0) continue;
      co_await Primitive{this, {Pending::Work, 0, WorkKind::Kernel, false}};
      if (kernel_.ttwu_lock_and_activate(w.task, target))
        co_await Primitive{this, {Pending::Work, 0, WorkKind::Kernel, false}};
      kernel_.ttwu_queue(w.task, target, wake_flags);
      kernel_.ttwu_finish();
    } else if (!kernel_.try_to_wake_up(w.task, wake_flags)) {
      continue;  // 2.4: add_to_runqueue() first, reschedule_idle() after
    }
    co_await Primitive{this, {Pending::Work, 0, WorkKind::Kernel, false}};
    if (w.exclusive && --nr_exclusive == 0) break;
  }
}

// exit_group() -> do_exit() (kernel/exit.c, 4.0) up to exit_notify(): the
// task drops its mm, files and the rest (exit_base), then do_notify_parent()
// wakes a parent in wait4(), with __wake_up_sync_key() on 4.0 and
// wake_up_interruptible() on 2.4. The wakeup runs in the exiting task's
// context, which is still current and TASK_RUNNING: like any waker's, its
// try_to_wake_up() spins while the parent is still switching out
// (Proc::wake_up()). A need_resched left by the program's last system call
// is honoured at its return, before exit_group() (the syscall primitive);
// after exit_notify() nothing preempts the task (CONFIG_PREEMPT_VOLUNTARY
// has no preemption point there) before do_exit()'s "tsk->state =
// TASK_DEAD; schedule();" (Kernel::do_exit()).
Co<void> Proc::exit_notify() {
  co_await syscall(costs().exit_base, CostPath::Process);
  // trace_sched_process_exit() comes after exit_mm(), before exit_notify().
  for (auto* o : kernel_.observers_) o->on_exit(now(), cpu(), task_);
  Task* parent = task_->parent;
  if (!parent) co_return;
  parent->dead_children.insert(task_->pid);
  if (parent->state != TaskState::Dead)
    co_await wake_up(child_wait(kernel_, parent), 1, config().preset().version >= 300 ? WF_SYNC : 0);
}

WaitQueue& child_wait(Kernel& k, Task* t) {
  return *k.child_waits_[static_cast<size_t>(t->pid - 1)];
}

Co<Task*> Proc::wait_child() {
  // The lowest pid first, as a scan of the task list in pid order finds it.
  auto& zombies = task_->dead_children;
  co_await wait_event(child_wait(kernel_, task_), [&zombies] { return !zombies.empty(); }, "do_wait");
  Task* dead = kernel_.task_ptrs_[static_cast<size_t>(*zombies.begin() - 1)];
  zombies.erase(zombies.begin());
  dead->reaped = true;
  co_await sys(costs().wait_base, CostPath::Process);
  co_return dead;
}

// -------------------------------------------------------------- Kernel ----

Kernel::Kernel(hw::Machine& machine, KernelConfig config, uint64_t seed)
    : machine_(machine),
      config_(std::move(config)),
      written_config_(config_),
      seed_(seed),
      domains_(machine.topo(), config_.preset().version),
      jitter_rng_(seed, "cost-jitter"),
      policy_rng_(seed, "policy"),
      watchdog_rng_(seed, "watchdog-phase"),
      kworker_noise_rng_(seed, "kworker-noise") {
  cpus_.resize(static_cast<size_t>(machine.nr_cpus()));
  for (auto& c : cpus_) {
    c.tick_offset = tick_phase(static_cast<int>(&c - cpus_.data()));
    c.watchdog_offset = static_cast<int64_t>(watchdog_rng_.below(static_cast<uint64_t>(WATCHDOG_PERIOD_NS)));
    // 2.4 has no cpuidle: default_idle() halts (see enter_idle()).
    if (config_.preset().version >= 300) {
      // intel_idle.max_cstate=N registers POLL and the first N C-states.
      const auto& all = machine.profile().idle_states;
      const size_t registered =
          std::min(all.size(), static_cast<size_t>(config_.sysctl("intel_idle.max_cstate")) + 1);
      std::vector<MenuGovernor::State> states;
      for (size_t i = 0; i < registered; ++i)
        states.push_back({static_cast<uint32_t>(all[i].exit_latency_ns / 1000),
                          static_cast<uint32_t>(all[i].target_residency_ns / 1000), all[i].polling});
      c.menu.emplace(std::move(states));
    }
  }
  nr_idle_ = machine.nr_cpus();
  // 2.4's class charges its own lines (policies/linux24.cpp).
  ttwu_lines_ = config_.sysctl("ttwu_lines") != 0 && config_.preset().policy == PolicyKind::Cfs;
  irq_time_accounting_ =
      config_.preset().policy == PolicyKind::Cfs && config_.sysctl("irq_time_accounting") != 0;
  if (config_.sysctl("sched_domain_balance_wake"))
    for (int c = 0; c < machine.nr_cpus(); ++c)
      for (auto& sd : domains_.of(c)) sd.flags |= SD_BALANCE_WAKE;
  policy_ = config_.preset().policy == PolicyKind::Cfs ? make_cfs(*this) : make_linux24(*this);
  machine_.set_rate_listener([this](int c) {
    if (!cpu(c).armed) return;
    sync(c);
    arm(c);
  });
}

Kernel::~Kernel() { machine_.set_rate_listener(nullptr); }

int64_t Kernel::jitter(int64_t ns) {
  const int64_t j = machine_.costs().cost_jitter_permille;
  if (j <= 0 || ns <= 0) return ns;
  return ns * (1000 + jitter_rng_.between(-j, j)) / 1000;
}

Task* Kernel::new_task(const std::string& comm, Program program, Task* parent, bool thread) {
  auto t = std::make_unique<Task>();
  t->pid = next_pid_++;
  t->tgid = thread && parent ? parent->tgid : t->pid;
  // Perfetto splits arguments on spaces and '=': keep comms clean.
  t->comm = comm;
  std::replace_if(t->comm.begin(), t->comm.end(), [](char ch) { return ch == ' ' || ch == '='; }, '_');
  t->parent = parent;
  t->shares_mm_with_parent = thread;
  t->mm = thread && parent ? parent->mm : next_mm_++;  // copy_mm(): CLONE_VM shares it
  // dup_task_struct() copies the parent, affinity included (kernel/fork.c).
  t->cpus_allowed = parent ? parent->cpus_allowed : machine_.topo().all();
  t->nice = parent ? parent->nice : 0;
  t->autogroup = parent ? parent->autogroup : 0;  // sched_autogroup_fork()
  t->se.load_weight = nice_to_weight(t->nice);
  t->se.inv_weight = nice_to_wmult(t->nice);
  t->cpu = parent ? parent->cpu : 0;
  t->processor = t->cpu;
  t->working_set_bytes = config_.sysctl("task_working_set_bytes");
  auto proc = std::make_unique<Proc>(*this, t.get());
  // The task owns its program's callable: a capturing coroutine lambda's
  // captures must outlive the coroutine.
  t->program_fn = std::move(program);
  t->program = t->program_fn(*proc);
  t->resume_point = t->program.handle();
  t->pending = {Pending::Resume, 0, WorkKind::User};
  Task* raw = t.get();
  tasks_.push_back(std::move(t));
  procs_.push_back(std::move(proc));
  task_ptrs_.push_back(raw);
  child_waits_.push_back(std::make_unique<WaitQueue>());
  ++live_tasks_;
  return raw;
}

void Kernel::set_features_at(int64_t at_ns, const std::string& list) {
  if (at_ns < now_ns()) throw std::invalid_argument("features at a time already past: " + list);
  if (at_ns < last_write_at_ns_)
    throw std::invalid_argument("feature writes must be asked for in time order: " + list);
  // Checked against the config all earlier writes will have made.
  written_config_ = written_config_.after_write(list);
  last_write_at_ns_ = at_ns;
  events_.schedule(sim::Time(at_ns), sim::Phase::Control, [this, list] {
    config_.apply_features(list);
    config_.check_consistent();
    policy_->features_changed();
  });
}

Task* Kernel::spawn(const std::string& comm, Program program, int c) { return spawn_on(comm, std::move(program), c, false); }

Task* Kernel::spawn_on(const std::string& comm, Program program, int c, bool kthread, bool bound) {
  if (c < 0 || c >= nr_cpus()) throw std::invalid_argument("spawn: bad cpu");
  Task* t = new_task(comm, std::move(program), nullptr, false);
  t->cpu = c;
  t->processor = c;
  if (kthread) {
    t->kthread = true;
    t->mm = 0;
    if (bound) {
      t->cpus_allowed = hw::CpuMask{};
      t->cpus_allowed.set(c);  // kthread_bind()
    }
    --live_tasks_;  // the run ends without it
  }
  // A spawned task is a session leader (a login shell, an ssh command):
  // sys_setsid() -> sched_autogroup_create_attach(). Kernel threads stay in
  // the root task group.
  if (!kthread && config_.preset().policy == PolicyKind::Cfs && config_.sysctl("sched_autogroup_enabled"))
    t->autogroup = next_autogroup_++;
  policy_->task_fork(t);
  // What the process that starts a benchmark brings from its shell and the
  // interrupts taken while it exec'd; fork copies it to the workers.
  if (!kthread && config_.preset().policy == PolicyKind::Cfs) {
    t->wakee_flips = static_cast<unsigned>(config_.sysctl("launcher_wakee_flips"));
    t->wakee_flip_decay_ts = jiffies();
  }
  policy_->init_task_runnable_average(t);
  this_cpu_ = c;
  activate_task(t, c, 0);
  for (auto* o : observers_) o->on_wakeup(now_ns(), c, t, c, true);
  policy_->check_preempt_curr(c, t, WF_FORK);
  return t;
}

Task* Kernel::spawn_kthread(const std::string& comm, Program program, int c, bool bound) {
  return spawn_on(comm, std::move(program), c, true, bound);
}

namespace {
// The kworker_noise what-if's thread: a per-CPU kworker whose delayed work
// re-arms itself, as vmstat_update() does on a CPU whose counters changed
// (v4.0 mm/vmstat.c: schedule_delayed_work(this_cpu_ptr(&vmstat_work),
// round_jiffies_relative(sysctl_stat_interval)); a CPU whose counters did not
// change is left to vmstat_shepherd(), which this does not model). The timer
// wakes the worker on its CPU; it runs the work in the kernel and sleeps in
// worker_thread() until the next expiry. Readings chosen: an hrtimer with the
// default slack stands for the work's jiffy timer; each CPU's phase is
// random, as round_jiffies() skews each CPU's expiry by 3 jiffies a CPU number
// and the machine has been up a while; the work is booked under the process
// path (CostPath has no kernel-thread path). With kworker_noise_unbound the
// threads are not bound: each sleeps on a timer of the CPU it last ran on
// and is placed by select_task_rq() when it fires, as an unbound kworker or
// rcu_sched is; the wakeup then counts as a wake_wide() flip of the task
// the timer interrupted on any kernel (record_wakee() charges current).
Co<void> periodic_kworker(Proc& p, int64_t first_ns, int64_t period_ns, int64_t run_ns) {
  int64_t next = p.now() + first_ns;
  for (;;) {
    co_await p.kthread_sleep_until(next, "worker_thread");
    co_await p.sys(run_ns, CostPath::Process);
    next += period_ns;
  }
}
}  // namespace

void Kernel::start_kworker_noise() {
  const int64_t period_ns = config_.sysctl("kworker_noise_period_us") * 1000;
  const int64_t run_ns = config_.sysctl("kworker_noise_run_us") * 1000;
  if (period_ns <= 0) return;
  if (config_.preset().policy == PolicyKind::Linux24)
    throw std::invalid_argument("kworker_noise needs hrtimers and kworkers, which 2.4 does not have");
  if (run_ns >= period_ns)
    throw std::invalid_argument("kworker_noise_run_us must be shorter than kworker_noise_period_us");
  const bool bound = config_.sysctl("kworker_noise_unbound") == 0;
  for (int c = 0; c < nr_cpus(); ++c) {
    const auto first = static_cast<int64_t>(kworker_noise_rng_.below(static_cast<uint64_t>(period_ns)));
    Program work = [first, period_ns, run_ns](Proc& p) { return periodic_kworker(p, first, period_ns, run_ns); };
    std::string comm = bound ? "kworker/" : "kworker/u";
    comm += std::to_string(c);
    comm += ":1";
    spawn_kthread(comm, std::move(work), c, bound);
  }
}

bool Kernel::idle_cpu(int c) const {
  const Cpu& k = cpu(c);
  // An interrupt taken from idle runs on the idle task (rq->curr ==
  // rq->idle) until the idle loop switches to a task or idles again, so the
  // CPU counts as idle, for its own handler's placements and for other
  // CPUs', for as long as the handler and its softirq (a nohz balance pass
  // that pulled nothing) take (4.0 core.c idle_cpu()).
  return (k.idle || k.irq_from_idle) && policy_->nr_running(c) == 0 && k.wake_list.empty();
}

// idle_get_state() (4.0 sched.h): the state cpuidle_idle_call() noted before
// cpuidle_enter(). It is cleared only once cpuidle_enter() has returned, and
// cpuidle_enter_state() re-enables interrupts before that, so an interrupt
// taken from idle (and its softirq) still reads the state the CPU entered.
int64_t Kernel::idle_exit_latency(int c) const {
  const Cpu& k = cpu(c);
  if (!k.idle && !k.irq_from_idle) return -1;
  return machine_.profile().idle_states[static_cast<size_t>(k.idle_state)].exit_latency_ns;
}

// ---- work-conservation monitor ----
// Called before every change to the idle and waiting counts, so both
// integrals are exact: the CPU time wasted, and the tasks waiting.
void Kernel::update_wasted() {
  const int64_t t = now_ns();
  // Idle CPUs already being woken for a queued task do not count: the task
  // waits for that CPU's wakeup latency, not for want of a CPU.
  const int idle = nr_idle_ - nr_kicked_idle_;
  const int waiting = nr_waiting_ - nr_kicked_idle_;
  if (idle > 0 && waiting > 0) wasted_ns_ += (t - wasted_since_) * std::min(idle, waiting);
  waiting_task_ns_ += (t - wasted_since_) * nr_waiting_;
  wasted_since_ = t;
}

// ---- accounting of the current segment ----
void Kernel::sync(int c) {
  Cpu& k = cpu(c);
  if (!k.armed) return;
  int64_t wall = now_ns() - k.seg_start;
  k.seg_start = now_ns();
  if (wall <= 0) return;
  auto consume = [&](int64_t& left, int64_t& acct_bucket) {
    if (left <= 0 || wall <= 0) return;
    const int64_t need = (left * 1000 + k.rate - 1) / k.rate;  // wall time to finish it
    if (wall >= need) {
      acct_bucket += need;
      wall -= need;
      left = 0;
    } else {
      acct_bucket += wall;
      left -= wall * k.rate / 1000;
      wall = 0;
    }
  };
  const int64_t before_irq = wall;
  consume(k.irq_spin_left, k.acct.spin_ns);
  consume(k.irq_kern_left, k.acct.kernel_ns);
  k.irq_time += before_irq - wall;
  consume(k.spin_left, k.acct.spin_ns);
  consume(k.kern_left, k.acct.kernel_ns);
  if (k.work_left() == 0) k.in_switch_tail = false;
  if (k.curr && k.curr->pending.kind == Pending::Work && !k.preempt_after_kernel_work) {
    auto& bucket = k.curr->pending.work_kind == WorkKind::User ? k.acct.user_ns : k.acct.kernel_ns;
    if (k.curr->pending.until_ns >= 0) {
      // A wall-clock spin: its remaining work is wall time, whatever the rate.
      const int64_t used = std::min(wall, k.curr->pending.work_left);
      bucket += used;
      k.curr->pending.work_left -= used;
      wall -= used;
    } else {
      consume(k.curr->pending.work_left, bucket);
    }
  }
  if (wall > 0) k.acct.kernel_ns += wall;  // rounding residue
}

void Kernel::arm(int c) {
  Cpu& k = cpu(c);
  int64_t total = k.work_left();
  const bool task_work = k.curr && k.curr->pending.kind == Pending::Work && !k.preempt_after_kernel_work;
  Pending* spin = task_work && k.curr->pending.until_ns >= 0 ? &k.curr->pending : nullptr;
  if (task_work && !spin) total += k.curr->pending.work_left;
  k.rate = machine_.rate_permille(c);
  k.seg_start = now_ns();
  k.armed = true;
  const uint64_t gen = ++k.gen;
  machine_.set_executing(c, true, now_ns());
  // A CPU at work ticks, except in an interrupt taken from idle: that runs
  // with the tick stopped until the idle loop is left (leave_idle_loop()).
  if (!k.tick_on && !k.irq_from_idle) start_tick(c);
  // A waker spinning for a switch-out ends on switched_away(), which re-arms;
  // a segment event 1e15 ns ahead would only keep the queue from emptying
  // (and so hide a deadlock).
  if (k.switch_spin_since >= 0) return;
  int64_t dur = (total * 1000 + k.rate - 1) / k.rate;
  if (spin) {
    // The kernel work first (an interrupt's handler, a switch) delays the
    // loop but not its deadline: it ends at max(deadline, that work's end).
    spin->work_left = std::max<int64_t>(0, spin->until_ns - now_ns() - dur);
    dur += spin->work_left;
  }
  events_.schedule(sim::Time(now_ns() + dur), sim::Phase::Hardware,
                   [this, c, gen] { segment_done(c, gen); });
}

void Kernel::charge(int c, int64_t ns, CostPath path) {
  if (ns <= 0) return;
  work_by_path_[static_cast<size_t>(path)] += ns;
  Cpu& k = cpu(c);
  if (k.armed) {
    sync(c);
    k.kern_left += ns;
    arm(c);
  } else {
    k.kern_left += ns;
  }
}

int64_t Kernel::rq_lock_wait(int c, int by_cpu) const {
  const int64_t free_at = c < 0 ? global_lock_free_at_ : cpu(c).lock_free_at;
  const int holder = c < 0 ? global_lock_holder_ : cpu(c).lock_holder;
  // A CPU whose own earlier hold has not run out yet does not wait for it:
  // the kernel unlocked in between (ttwu_queue() and sched_ttwu_pending()
  // before the __schedule() that follows; 2.4's try_to_wake_up() before
  // schedule()), and this CPU runs the two holds one after the other.
  return holder == by_cpu ? 0 : std::max<int64_t>(0, free_at - now_ns());
}

void Kernel::lock_rq(int c, int by_cpu, int64_t hold_ns, CostPath path) {
  int64_t& free_at = c < 0 ? global_lock_free_at_ : cpu(c).lock_free_at;
  int& holder = c < 0 ? global_lock_holder_ : cpu(c).lock_holder;
  const int64_t t = now_ns();
  const int64_t spin = rq_lock_wait(c, by_cpu);
  free_at = std::max(free_at, t) + hold_ns;
  holder = by_cpu;
  Cpu& k = cpu(by_cpu);
  if (k.armed) sync(by_cpu);
  k.spin_left += spin;
  k.kern_left += hold_ns;
  work_by_path_[static_cast<size_t>(path)] += hold_ns;
  if (k.armed) arm(by_cpu);
}

void Kernel::segment_done(int c, uint64_t gen) {
  Cpu& k = cpu(c);
  if (!k.armed || gen != k.gen) return;
  sync(c);
  k.spin_left = k.kern_left = k.irq_spin_left = k.irq_kern_left = 0;
  k.in_switch_tail = false;
  k.armed = false;
  this_cpu_ = c;
  if (k.preempt_after_kernel_work) {
    // The kernel work charged before the preemption point has run on the
    // task's time; now the return path's schedule(), unless the request
    // went away meanwhile, and then the task's own work goes on.
    k.preempt_after_kernel_work = false;
    if (k.curr && k.need_resched && at_resched_point(k.curr->pending)) return schedule(c, true);
    if (k.curr) return arm(c);
  }
  if (k.curr) {
    k.curr->pending.work_left = 0;
    // Not a preemption point by itself: the kernel code that follows runs
    // until the program's next primitive, which decides (advance()).
    advance(c);
  } else if (k.pick_after_lock) {
    if (k.wakers_activating > 0) {
      // A waker on a slower CPU still holds the lock: spin on.
      k.spin_left += machine_.costs().rq_lock_hold;
      return arm(c);
    }
    // __schedule() has the lock now: what the holder queued is there.
    k.pick_after_lock = false;
    Task* prev = k.switch_from;
    if (prev && prev->state == TaskState::Running && prev->cpu == c) prev->on_cpu = false;
    if (config_.preset().version >= 400) k.clock_skip = static_cast<uint8_t>(k.clock_skip << 1);
    pick_and_switch(c, prev, k.switch_from_state);
  } else {
    // A schedule()/balance path with no task found: pick again, no balance.
    // (Still in prev's schedule(), or the idle loop's own after an
    // interrupt, which balances if the interrupt's entry was all it ran.)
    // The handler's work is done: the idle loop, leaving for a task queued
    // here (during that work, too) or for a pick that may balance, runs its
    // way out first (Kernel::irq_exit()).
    if (k.irq_from_idle && !k.idle_exit_paid &&
        (policy_->nr_running(c) > 0 || (k.pick_after_irq && k.pick_after_irq_may_balance)) &&
        pay_idle_exit_path(c))
      return arm(c);
    const bool may_balance = k.pick_after_irq && k.pick_after_irq_may_balance;
    k.pick_after_irq = k.pick_after_irq_may_balance = false;
    k.need_resched = false;
    Task* next = policy_->pick_next_task(c, nullptr, may_balance);
    if (next)
      finish_switch(c, k.switch_from, next);
    else
      enter_idle(c);
  }
}

// Resume the current task's program until it asks for something that takes
// time or gives up the CPU.
void Kernel::advance(int c) {
  Cpu& k = cpu(c);
  Task* t = k.curr;
  for (;;) {
    this_cpu_ = c;
    t->pending = {Pending::Resume, 0, WorkKind::User};
    t->resume_point.resume();
    t->program.rethrow_if_failed();
    if (t->exiting) {
      t->exit_path.rethrow_if_failed();
      if (t->exit_path.done()) {
        do_exit(t);
        return schedule(c, false);
      }
    } else if (t->program.done()) {
      t->pending = {Pending::Exit, 0, WorkKind::Kernel};
    }
    switch (t->pending.kind) {
      case Pending::Work:
        if (k.need_resched && at_resched_point(t->pending)) return preempt_at_resched_point(c);
        if (t->pending.work_left <= 0 && k.work_left() == 0) continue;
        return arm(c);
      case Pending::Resume:
        continue;
      case Pending::Block:
        return schedule(c, false);
      case Pending::Yield:
        policy_->yield_task(c);
        return schedule(c, true);
      case Pending::Exit:
        // do_exit() runs in the task's context, as a program would.
        t->exiting = true;
        t->exit_path = procs_[static_cast<size_t>(t->pid - 1)]->exit_notify();
        t->resume_point = t->exit_path.handle();
        continue;
      case Pending::Migrate:
        // stop_one_cpu(migration_cpu_stop): the stopper preempts the task
        // and moves it while it is off the CPU (schedule()). Its wakeup
        // enqueues it (update_rq_clock()) and check_preempt_curr() requests
        // the clock skip for the preempted task (4.0 core.c).
        update_rq_clock(c);
        rq_clock_skip_update(c);
        charge(c, jitter(machine_.costs().context_switch), CostPath::ContextSwitch);
        return schedule(c, true);
    }
  }
}

// do_exit()'s end, after exit_notify() (Proc::exit_notify()): 4.0 sets
// TASK_DEAD and schedules away for good (do_task_dead() from 4.9).
void Kernel::do_exit(Task* p) {
  p->state = TaskState::Dead;
  if (!p->kthread && --live_tasks_ == 0) events_.stop();  // spawn_on() never counted a kernel thread
  policy_->task_dead(p);
}

void Kernel::trace_switch(int c, Task* prev, obs::PrevState st, Task* next) {
  for (auto* o : observers_) o->on_switch(now_ns(), c, prev, st, next);
}

// __schedule(): prev gives up the CPU (preempted, sleeping or dead).
void Kernel::schedule(int c, bool preempt) {
  Cpu& k = cpu(c);
  this_cpu_ = c;
  k.in_switch_tail = false;
  ++k.sched_count;
  Task* prev = k.curr;
  const auto& costs = machine_.costs();
  obs::PrevState st = obs::PrevState::Runnable;
  // __schedule() (4.0): "rq->clock_skip_update <<= 1; /* promote REQ to ACT */".
  if (config_.preset().version >= 400) k.clock_skip = static_cast<uint8_t>(k.clock_skip << 1);
  if (prev) {
    if (prev->state != TaskState::Running) {
      st = prev->state == TaskState::Dead ? obs::PrevState::Dead : obs::PrevState::Sleeping;
      update_rq_clock(c);  // deactivate_task() -> dequeue_task()
      policy_->dequeue_task(c, prev, DEQUEUE_SLEEP);
      prev->on_rq = false;
    } else {
      st = preempt ? obs::PrevState::Preempted : obs::PrevState::Runnable;
      update_wasted();
      ++nr_waiting_;
      prev->queued_since = sim::Time(now_ns());
      // 4.0: "if (task_on_rq_queued(prev)) update_rq_clock(rq)"; 3.10's
      // put_prev_task() tests prev->on_rq. Then sched_info_depart():
      // a prev still runnable starts waiting on that clock.
      update_rq_clock(c);
      if (prev->sched_info_last_queued < 0) prev->sched_info_last_queued = sched_info_clock(c);
    }
    // A prev going to sleep stays on_cpu until the switch away from it is
    // done (finish_lock_switch()), after pick_next_task() and the newidle
    // balance in it: switched_away().
    if (prev->state == TaskState::Running) prev->on_cpu = false;
    prev->last_ran = sim::Time(now_ns());
    prev->cache_mark = k.bytes_touched;
    policy_->put_prev_task(c, prev);
    if (prev->state == TaskState::Running && prev->pending.kind == Pending::Migrate) {
      // The stopper runs after its own pick has cleared the skip, so
      // migration_cpu_stop() -> move_queued_task() dequeues on a clock that
      // moves (4.0 core.c __schedule(): "rq->clock_skip_update = 0").
      k.clock_skip = 0;
      move_queued_task(c, prev, prev->pending.dest_cpu, prev->pending.migrate_cause);
    }
  }
  k.need_resched = false;
  charge(c, jitter(costs.schedule_base), CostPath::Schedule);
  // deactivate_task() of a prev that sleeps or dies, after __schedule()'s
  // update_rq_clock(): like the rest of the switch it is charged to the task
  // that runs next (the wait queue's own way in and out, which the sleeper
  // pays, is folded into the same measured cost).
  if (costs.dequeue_sleep > 0 && (st == obs::PrevState::Sleeping || st == obs::PrevState::Dead))
    charge(c, jitter(costs.dequeue_sleep), CostPath::Schedule);
  if (ttwu_lines_ && prev) {
    const bool sleeps = st == obs::PrevState::Sleeping || st == obs::PrevState::Dead;
    charge(c, sched_lines::deschedule(machine_, c, prev->lines, sleeps, k.rq_lines), CostPath::Schedule);
  }
  const int64_t lock_wait = per_cpu_rq_locks() ? rq_lock_wait(c, c) : 0;
  if (per_cpu_rq_locks()) lock_rq(c, c, costs.rq_lock_hold, CostPath::RqLock);
  k.curr = nullptr;
  if (lock_wait > 0 || k.wakers_activating > 0) {
    // 4.0 __schedule() takes rq->lock before pick_next_task(): a waker
    // holding it for ttwu_do_activate() has enqueued its wakee by the time
    // this CPU gets it, so the pick comes after the wait (and, reading
    // chosen, after the rest of the path charged so far). Until then prev
    // is still this CPU's current task to load balancers (task_running()).
    if (prev && prev->state == TaskState::Running && prev->cpu == c) prev->on_cpu = true;
    // The holder's update_rq_clock() came before this CPU's promotion of the
    // skip request, so it is not skipped: promote again at the pick.
    if (config_.preset().version >= 400) k.clock_skip = static_cast<uint8_t>(k.clock_skip >> 1);
    k.switch_from = prev;
    k.switch_from_state = st;
    k.pick_after_lock = true;
    // A waker on a slower CPU may hold the lock past its modelled hold: spin on.
    const int64_t spin = lock_wait > 0 ? lock_wait : costs.rq_lock_hold;
    if (lock_wait == 0) k.spin_left += spin;
    for (auto* o : observers_) o->on_pick_after_lock(now_ns(), c, spin);
    return arm(c);
  }
  pick_and_switch(c, prev, st);
}

void Kernel::pick_and_switch(int c, Task* prev, obs::PrevState st) {
  Cpu& k = cpu(c);
  this_cpu_ = c;
  if (k.stop_work) run_stopper(c);
  Task* next = policy_->pick_next_task(c, prev, true);
  k.clock_skip = 0;
  // clear_tsk_need_resched(prev) after the pick: a task pulled by the newly
  // idle balance inside it "preempts" prev, which is leaving anyway.
  k.need_resched = false;
  if (next) {
    finish_switch(c, prev, next);
    if (prev && prev != next) policy_->schedule_tail(c, prev);
    return;
  }
  k.switch_from = prev;
  k.switch_from_state = st;
  if (prev) policy_->schedule_tail(c, prev);  // may charge this CPU: before it idles
  if (k.work_left() > 0) {
    arm(c);  // the schedule()/newidle path runs before the CPU idles
  } else {
    enter_idle(c);
  }
}

void Kernel::finish_switch(int c, Task* prev, Task* next) {
  Cpu& k = cpu(c);
  const auto& costs = machine_.costs();
  const bool from_idle = k.idle || k.irq_from_idle;  // switching away from the idle task
  k.curr = next;
  k.idle = false;
  k.pick_after_irq = k.pick_after_irq_may_balance = false;
  if (k.irq_from_idle) leave_idle_loop(c);
  k.irq_from_idle = false;
  end_nohz_kick(k);
  if (prev) switched_away(c, prev);
  next->on_cpu = true;
  update_wasted();
  const int64_t queued = next->queued_since.ns();
  if (queued >= 0) --nr_waiting_;
  next->queued_since = sim::Time(-1);
  // sched_info_switch() runs only for prev != next: a prev picked again
  // never departed, so it does not start waiting.
  if (next == prev) next->sched_info_last_queued = -1;
  if (queued >= 0 && next != prev) {
    // schedstat run_delay (time on a runqueue), and wakeup-to-running delay;
    // like sched_info_arrive(), only real switches count.
    const bool woken = next->wake_time.ns() >= 0;
    const int64_t wake_delay = woken ? now_ns() - next->wake_time.ns() : -1;
    if (woken) next->wakeup_delay_total_ns += wake_delay;
    const int64_t sched_info_delay = sched_info_arrive(c, next);
    for (auto* o : observers_) o->on_run_delay(now_ns(), c, next, sched_info_delay, wake_delay);
    next->wake_time = sim::Time(-1);
  }
  if (next != prev) {
    const obs::PrevState st =
        prev ? (prev->state == TaskState::Dead
                    ? obs::PrevState::Dead
                    : prev->state == TaskState::Running
                          ? (k.switch_from == prev ? k.switch_from_state : obs::PrevState::Preempted)
                          : obs::PrevState::Sleeping)
             : obs::PrevState::Runnable;
    trace_switch(c, prev, st, next);
    charge(c, jitter(costs.context_switch), CostPath::ContextSwitch);
    // 4.0 kernel/sched/core.c context_switch(): a task without an mm (a
    // kernel thread; the idle task) borrows oldmm (enter_lazy_tlb()), and
    // switch_mm() loads CR3 only "if (likely(prev != next))"
    // (arch/x86/include/asm/mmu_context.h; 2.4's include/asm-i386 the same).
    // Not modelled: the reload of a lazy CPU that a TLB-flush IPI made
    // leave_mm().
    if (next->mm != 0 && next->mm != k.loaded_mm) {
      k.loaded_mm = next->mm;
      if (costs.switch_mm > 0) charge(c, jitter(costs.switch_mm), CostPath::ContextSwitch);
    }
    if (ttwu_lines_)
      charge(c, sched_lines::switch_in(machine_, c, next->lines, from_idle, k.rq_lines), CostPath::ContextSwitch);
    ++next->nr_switches;
    charge(c, switch_in_refill(next, c), CostPath::CacheRefill);
  }
  k.switch_from = nullptr;
  if (next != prev) k.bytes_touched += next->working_set_bytes;
  next->processor = c;
  policy_->set_curr_task(c, next);
  // A wall-clock spin went on while the task waited: only what is left of
  // it now remains (arm() takes the switch overhead out of it).
  if (next->pending.kind == Pending::Work && next->pending.until_ns >= 0)
    next->pending.work_left = std::max<int64_t>(0, next->pending.until_ns - now_ns());
  if (!(next->pending.kind == Pending::Work && next->pending.work_left > 0)) {
    // Resume the program once the switch overhead has been paid.
    next->pending = {Pending::Work, 0, WorkKind::User};
  }
  k.in_switch_tail = next != prev && k.work_left() > 0;
  arm(c);
}

// Cache warmth: a task's working set stays in the private cache of the CPU
// it last ran on until other tasks' working sets, run there since, have
// filled that cache. What the move costs for the warm and the evicted part
// is the hardware's (hw::Machine::refill_cost()); the lines it brings are
// counted for the statistics (refill_lines()).
int64_t Kernel::switch_in_refill(const Task* t, int c) {
  const auto& costs = machine_.costs();
  const int src = t->processor;
  const int64_t others = std::min(cpu(src).bytes_touched - t->cache_mark, costs.private_cache_bytes);
  int64_t warm = 1000 - others * 1000 / costs.private_cache_bytes;
  // A working set larger than the private cache never fits in it whole.
  if (t->working_set_bytes > 0)
    warm = std::min(warm, costs.private_cache_bytes * 1000 / t->working_set_bytes);
  const auto lines = machine_.refill_lines(src, c, t->working_set_bytes, warm);
  refill_lines_.within_llc += lines.within_llc;
  refill_lines_.beyond_llc += lines.beyond_llc;
  return machine_.refill_cost(src, c, t->working_set_bytes, warm);
}

void Kernel::enter_idle(int c) {
  Cpu& k = cpu(c);
  if (k.switch_from) {
    trace_switch(c, k.switch_from, k.switch_from_state, nullptr);
    switched_away(c, k.switch_from);
  }
  k.switch_from = nullptr;
  k.curr = nullptr;
  update_wasted();
  if (!k.idle) ++nr_idle_;
  k.idle = true;
  k.irq_from_idle = false;
  k.idle_exit_paid = false;  // the loop left and came back: its next way out pays again
  end_nohz_kick(k);
  policy_->set_next_task_idle(c);
  k.armed = false;
  ++k.gen;
  machine_.set_executing(c, false, now_ns());
  k.idle_since = k.idle_acct_since = now_ns();
  k.running_at = -1;
  // A task enqueued here meanwhile set need_resched (resched_curr()).
  // cpu_idle_loop() (4.0 idle.c) then never enters cpuidle, and
  // tick_nohz_idle_enter() keeps the tick: can_stop_idle_tick() returns
  // false on need_resched(), and only tick_nohz_stop_sched_tick() calls
  // nohz_balance_enter_idle() (4.0 tick-sched.c), so the CPU does not join
  // nohz.idle_cpus_mask. (The model's pick finds such a task first, so this
  // is a guard.)
  if (policy_->nr_running(c) > 0) {
    k.idle_state = 0;
    k.governor_chose = false;
    k.in_idle_state = false;
    kick_cpu(c, Kick::Resched);
    return;
  }
  // A wakee on the wake list whose IPI is still in flight is another
  // matter: ttwu_queue_remote() sent the IPI to a busy CPU and set no flag,
  // so the idle loop sees nothing. The CPU stops its tick and enters the
  // state the governor picks, and the IPI wakes it from there
  // (handle_kick()). It counts as being woken meanwhile.
  if (k.kick_pending && !k.kicked_while_idle) {
    ++nr_kicked_idle_;
    k.kicked_while_idle = true;
  }
  k.tick_on = false;
  ++k.tick_gen;
  k.idle_state = choose_idle_state(c);
  k.governor_chose = k.menu.has_value();
  k.in_idle_state = true;
  const int chosen = k.idle_state;
  for (auto* o : observers_) o->on_idle(now_ns(), c, chosen);
  policy_->cpu_went_idle(c);
}

// cpu_idle_loop(): with cpuidle, cpuidle_idle_call() asks the menu governor
// (drivers/cpuidle/governors/menu.c); 2.4's cpu_idle() calls default_idle(),
// which halts: the first state that does not poll (HLT/C1).
//
// tick_nohz_get_sleep_length() is the time to the next timer event once
// tick_nohz_idle_enter() has stopped the tick (NO_HZ idle, as modelled). The
// simulator has no timers besides the tick, so the reading chosen is the one
// per-CPU timer every 4.0 (and 3.10) system has: the softlockup watchdog's
// hrtimer, every get_softlockup_thresh() * NSEC_PER_SEC / 5 = 2 * 10 / 5 =
// 4 s (kernel/watchdog.c, watchdog_thresh = 10), at a per-CPU phase. Other
// timers would only make the sleep shorter. With a far timer, menu's
// next-timer predictor decays towards a few ms and the repeating-interval
// detector and the load-based latency limit decide, as on a real idle CPU.
int Kernel::choose_idle_state(int c) {
  Cpu& k = cpu(c);
  const auto& states = machine_.profile().idle_states;
  if (!k.menu) {
    for (size_t i = 0; i < states.size(); ++i)
      if (!states[i].polling) return static_cast<int>(i);
    return 0;
  }
  const int64_t since = ((now_ns() - k.watchdog_offset) % WATCHDOG_PERIOD_NS + WATCHDOG_PERIOD_NS) %
                        WATCHDOG_PERIOD_NS;
  int64_t next_timer_ns = WATCHDOG_PERIOD_NS - since;
  // tick_nohz_get_sleep_length(): up to the CPU's next clock event, the
  // earliest programmed (hard) expiry of its hrtimers.
  for (const auto& t : k.hrtimers) next_timer_ns = std::min(next_timer_ns, std::max<int64_t>(0, t.hard_ns - now_ns()));
  const auto next_timer_us = static_cast<uint32_t>(next_timer_ns / 1000);
  return k.menu->select(next_timer_us, 0, policy_->cpu_load0(c));
}

void Kernel::exit_idle(int c) {
  Cpu& k = cpu(c);
  if (!k.idle) return;
  const int64_t idled = now_ns() - k.idle_since;
  k.acct.idle_ns += now_ns() - k.idle_acct_since;
  busy_placement_.idle_after_ns += k.placements_pending * now_ns() - k.placements_ts_sum;
  busy_placement_.idle_after_samples += k.placements_pending;
  k.placements_pending = k.placements_ts_sum = 0;
  // cpuidle_enter_state(): dev->last_residency, exit latency included.
  if (k.governor_chose) k.menu->reflect(static_cast<uint32_t>(std::min<int64_t>(idled / 1000, INT32_MAX)));
  k.governor_chose = false;
  update_wasted();
  if (k.kicked_while_idle) {
    // Woken by something else (a timer) while a wakeup IPI is in flight:
    // the CPU no longer counts as idle-and-being-woken.
    --nr_kicked_idle_;
    k.kicked_while_idle = false;
  }
  --nr_idle_;
  k.idle = false;
  k.running_at = -1;
  if (k.in_idle_state)
    for (auto* o : observers_) o->on_idle(now_ns(), c, -1);
  k.in_idle_state = false;
}

// cpu_idle_loop() (4.0 kernel/sched/idle.c) leaves its loop only for
// need_resched(): tick_nohz_idle_exit() then restarts the tick and calls
// update_cpu_load_nohz(), and schedule() switches. An interrupt taken from
// idle that leaves nothing to run returns to the loop with the tick still
// stopped (tick_nohz_irq_exit()) and cpu_load[] as it was. A tick that was
// never stopped (a task was queued at idle entry) has nothing to restart:
// tick_nohz_idle_exit() restarts only "if (ts->tick_stopped)".
//
// tick_nohz_idle_exit() runs before the idle loop's schedule(), so its work
// (`idle_exit_path`: ktime_get(), tick_nohz_stop_idle(), tick_do_update_
// jiffies64(), update_cpu_load_nohz(), tick_nohz_restart()'s hrtimer cancel
// and clockevent reprogram) delays the task the CPU was woken for, and the
// switch to it: the idle loop pays it once the interrupt's handler is done
// and before that schedule() picks (pay_idle_exit_path(), from irq_exit()
// or segment_done()); a switch reached without it pays it here. With the
// path free (every shipped profile) the cpu_load[] update and the tick's
// restart are made at the switch. 2.4 has no NO_HZ idle (2.6.21) and leaves
// its idle loop with nothing to restart.
void Kernel::leave_idle_loop(int c) {
  Cpu& k = cpu(c);
  if (!k.tick_on && !pay_idle_exit_path(c)) {
    policy_->cpu_exited_idle(c);
    start_tick(c);
  }
  k.idle_exit_paid = false;
}

// Whether leaving the idle loop now costs CPU c anything: not with a tick
// never stopped, on 2.4, with the path already paid, or with a free one.
bool Kernel::idle_exit_path_due(int c) const {
  const Cpu& k = cpu(c);
  return !k.tick_on && !k.idle_exit_paid && config_.preset().version >= 300 && machine_.costs().idle_exit_path > 0;
}

// The idle loop's way out, on the idle task before its schedule(): the
// cpu_load[] update, the tick's restart from now (so a tick due within the
// path's work interrupts it, as local_irq_enable() would let it) and the
// path's work. False, and nothing done, if nothing is due.
bool Kernel::pay_idle_exit_path(int c) {
  Cpu& k = cpu(c);
  if (!idle_exit_path_due(c)) return false;
  const int64_t ns = jitter(machine_.costs().idle_exit_path);
  policy_->cpu_exited_idle(c);
  start_tick(c);
  charge(c, ns, CostPath::IdleLoop);
  k.idle_exit_paid = true;
  return true;
}

// Where CPU c's tick falls within the period. 3.x/4.x emulate the tick
// with an hrtimer set up on the jiffy grid (tick_setup_sched_timer(),
// kernel/time/tick-sched.c), offset per CPU only with the skew_tick boot
// option (off by default), so every CPU ticks at the same instants, and a
// tick restarted after idle stays on that grid. 2.4 staggers its local APIC
// timers on purpose ("we introduce an interrupt skew to spread out timer
// events", setup_APIC_timer(), arch/i386/kernel/apic.c): CPU i's starts
// slice * (i + 1) after IRQ0, slice = period / (CPUs + 1).
int64_t Kernel::tick_phase(int c) const {
  if (config_.preset().version >= 300) return 0;
  return config_.tick_ns() / (nr_cpus() + 1) * (c + 1);
}

void Kernel::start_tick(int c) {
  Cpu& k = cpu(c);
  if (k.tick_on) return;
  k.tick_on = true;
  const uint64_t gen = ++k.tick_gen;
  const int64_t period = config_.tick_ns();
  int64_t next = (now_ns() - k.tick_offset) / period * period + k.tick_offset;
  while (next <= now_ns()) next += period;
  events_.schedule(sim::Time(next), sim::Phase::Timer, [this, c, gen] { tick(c, gen); });
}

// An interrupt may preempt a task only in user mode: the kernels modelled are
// not preemptible (2.4; CONFIG_PREEMPT_VOLUNTARY in 3.x/4.x distribution
// builds), so kernel work runs on and need_resched waits for the return to
// user mode or a voluntary point (see at_resched_point()).
bool Kernel::preemptible_now(const Task* t) const {
  return t->pending.preemptible && t->pending.work_kind == WorkKind::User;
}

// Between two primitives: schedule() may run here if the next primitive is
// user code or kernel work that starts at a rescheduling point.
bool Kernel::at_resched_point(const Pending& next) {
  return next.preemptible && (next.work_kind == WorkKind::User || next.resched_point);
}

void Kernel::tick(int c, uint64_t gen) {
  Cpu& k = cpu(c);
  if (gen != k.tick_gen || !k.tick_on) return;
  this_cpu_ = c;
  // An idle loop that found a task queued at its entry keeps its tick
  // (enter_idle()): a tick there is an interrupt taken from idle.
  const bool from_idle = k.idle;
  if (from_idle) {
    exit_idle(c);
    k.irq_from_idle = true;
  }
  sync(c);
  const bool was_armed = k.armed;
  k.armed = false;
  const WorkCharged work_before = work_charged(k);
  const int64_t tick_ns = jitter(machine_.costs().tick_handler);
  k.kern_left += tick_ns;
  work_by_path_[static_cast<size_t>(CostPath::TimerInterrupt)] += tick_ns;
  run_hrtimers(c);  // the tick is an hrtimer: due sleepers run with it
  update_rq_clock(c);  // scheduler_tick()
  if (k.curr) policy_->task_tick(c, k.curr);
  policy_->trigger_load_balance(c);
  account_irq_time(c, work_before);
  events_.schedule(sim::Time(now_ns() + config_.tick_ns()), sim::Phase::Timer,
                   [this, c, gen] { tick(c, gen); });
  if (from_idle) return irq_exit(c, was_armed);
  if (k.curr && k.need_resched && preemptible_now(k.curr)) return preempt_at_resched_point(c);
  arm(c);  // the task, or a kernel-only path, continues
}

// A task at a preemption point must reschedule (the return to user mode from
// an interrupt or a system call; a voluntary point). Whatever kernel work was
// charged to this CPU before that point, and has not run yet, came first in
// the kernel: an interrupt's handler (x86 entry: the handler, then
// prepare_exit_to_usermode() -> schedule(); 4.0's retint_careful), the rest
// of a switch-in whose task had not yet reached user mode, the code a
// program ran since its last primitive. It runs before schedule(), on the
// current task's time: without CONFIG_IRQ_TIME_ACCOUNTING an interrupt's
// time is the interrupted task's, update_curr() reading rq_clock_task() =
// rq_clock(); with it (the irq_time_accounting option, account_irq_time())
// update_rq_clock_task() takes it out of rq_clock_task() and no task pays
// it. Either way the next task's set_next_entity() sets exec_start after
// it. So a tick that finds a task
// just short of its slice leaves it one more tick: at HZ=1000 two hogs run
// 4 ms at a time for a 3 ms slice, each run starting only after the
// handler of the tick that ended the one before (check_preempt_tick()
// preempts on delta_exec > ideal_runtime). Until
// stop 79 schedule() came at once and that work ran after the switch, on
// the next task's time.
void Kernel::preempt_at_resched_point(int c) {
  Cpu& k = cpu(c);
  if (k.work_left() > 0) {
    k.preempt_after_kernel_work = true;
    return arm(c);
  }
  schedule(c, true);
}

// resched_curr(): ask a CPU to reschedule; a remote CPU is kicked (an IPI, or
// for an MWAIT-idle CPU on 3.13+ only the flag store; see kick_cpu()).
void Kernel::resched_curr(int c) {
  Cpu& k = cpu(c);
  if (k.idle) return kick_cpu(c, Kick::Resched);
  if (k.need_resched) return;
  k.need_resched = true;
  if (k.in_switch_tail && k.curr) {
    // The switch has not returned: schedule()'s closing `while
    // (need_resched())` (4.0 core.c schedule(); 2.4's `if
    // (current->need_resched) goto need_resched_back`) picks again as soon
    // as the switch is done, whether or not an interrupt gets there first.
    // (A sleeper woken in 4.0 also meets try_to_freeze() right after its
    // schedule_timeout(), the same point; unix_stream_recvmsg()'s
    // might_sleep() comes a little later, in the socket code.)
    if (k.armed) sync(c);
    if (k.in_switch_tail) {
      k.preempt_after_kernel_work = true;
      if (k.armed) arm(c);
    }
  }
  if (c != this_cpu_ && k.curr) kick_cpu(c, Kick::Resched);
}

// stop_one_cpu_nowait() -> cpu_stop_queue_work() (4.0 kernel/stop_machine.c)
// wakes the CPU's stopper thread, whose stop class preempts any task
// (check_preempt_curr(): a higher class always resched_curr()s). The task
// gives up the CPU at its next preemption point, or sooner if it sleeps, and
// the stopper runs in that schedule(): run_stopper(). The stopper's wakeup
// updates the rq clock (activate_task()) and, as the task must now
// reschedule, requests the clock skip (check_preempt_curr()), as
// Pending::Migrate's does. A CPU with no current task runs the work at once,
// its trip out of idle not charged (reading chosen; CFS's load_balance()
// never asks such a CPU: its curr is the idle task, bound to it).
void Kernel::stop_one_cpu_nowait(int c) {
  Cpu& k = cpu(c);
  if (!k.curr) {
    const int caller = this_cpu_;
    this_cpu_ = c;
    policy_->cpu_stop_work(c);
    this_cpu_ = caller;
    return;
  }
  k.stop_work = true;
  update_rq_clock(c);
  resched_curr(c);
  rq_clock_skip_request(c);
}

// __schedule() picks the stopper before any other class: the preempted task
// has been put back (put_prev_task()), so the work sees it queued and not
// running. The switch into the stopper and back out of it is charged as one
// context switch, as Pending::Migrate's stopper is; a task the stopper
// leaves in place is picked again without a traced switch. The stopper's
// own pick clears the clock skip (4.0 __schedule(): "rq->clock_skip_update =
// 0"), so a task it moves is dequeued on a clock that moves.
void Kernel::run_stopper(int c) {
  Cpu& k = cpu(c);
  k.stop_work = false;
  k.clock_skip = 0;
  charge(c, jitter(machine_.costs().context_switch), CostPath::ContextSwitch);
  policy_->cpu_stop_work(c);
}

// A CPU idling in MWAIT has its monitor armed on the idle task's thread flags
// (mwait_idle_with_hints(), arch/x86/include/asm/mwait.h), and from 3.13 it
// keeps TIF_POLLING_NRFLAG set while it waits there (3.13's intel_idle()
// calls current_set_polling_and_test(); 3.12's does not). A waker that sees
// the flag only sets TIF_NEED_RESCHED; the store ends the MWAIT, and the idle
// loop runs sched_ttwu_pending() and schedule() (cpu_idle_loop(),
// kernel/sched/idle.c, 4.0). For resched_curr() that is resched_task()'s
// tsk_is_polling() test in 3.13, set_nr_and_not_polling() in 4.0; a queued
// wakeup (ttwu_queue_remote()) uses set_nr_if_polling() only from 3.16
// (e3baac47f0e8, "sched/idle: Optimize try-to-wake-up IPI"), and before that
// always sent the IPI. nohz_balancer_kick() always uses
// smp_send_reschedule(): the balance runs in the IPI's softirq. The POLL
// state: 2.4's poll_idle() sets need_resched = -1, which reschedule_idle()
// takes as "no IPI needed"; cpuidle's poll_idle() sets the polling flag in
// 4.0 (drivers/cpuidle/driver.c) but not in 3.10 or 3.13, where
// cpu_idle_loop() has cleared it, so there POLL gets the IPI too (taken as
// 3.16, with the queued-wakeup change; the exact release was not checked).
bool Kernel::wakes_by_store(const Cpu& k, Kick why) const {
  if (!k.idle || why == Kick::Balance) return false;
  const auto& st = machine_.profile().idle_states[static_cast<size_t>(k.idle_state)];
  const int version = config_.preset().version;
  if (st.polling) return version < 300 || version >= 316;
  if (!st.mwait) return false;
  return why == Kick::QueuedWakeup ? version >= 316 : version >= 313;
}

// The waker always writes a line the target owns: TIF_NEED_RESCHED (an
// atomic on its thread flags), the wake list (llist_add()) or the nohz kick
// bit. The IPI, when one is needed, comes on top.
void Kernel::kick_cpu(int target, Kick why) {
  Cpu& k = cpu(target);
  const auto& costs = machine_.costs();
  if (k.kick_pending) {
    // A balance kick while a wakeup by store is in flight still sends its IPI;
    // the CPU, already waking, runs the balance when it handles the first.
    if (why == Kick::Balance && k.pending_by_store && target != this_cpu_) {
      k.pending_by_store = false;
      k.ipi_in_flight = true;
      charge(this_cpu_, costs.ipi_send, CostPath::Ipi);
      for (auto* o : observers_) o->on_ipi(now_ns(), this_cpu_, target, true);
    }
    return;
  }
  k.kick_pending = true;
  k.kick_sent_busy = !k.idle;
  if (k.idle) {
    update_wasted();
    ++nr_kicked_idle_;
    k.kicked_while_idle = true;
  }
  int64_t latency = 0;
  const auto& st = machine_.profile().idle_states[static_cast<size_t>(k.idle_state)];
  if (target != this_cpu_) {
    const int64_t store = machine_.line_transfer(this_cpu_, target);
    machine_.count_lines_moved(target, this_cpu_, 1);  // the store fetches the target's line
    charge(this_cpu_, store, CostPath::Ipi);
    latency += store;
    k.pending_by_store = wakes_by_store(k, why);
    if (!k.pending_by_store) {
      k.ipi_in_flight = true;
      charge(this_cpu_, costs.ipi_send, CostPath::Ipi);
      latency += machine_.topo().distance(this_cpu_, target) == hw::Distance::RemoteNode
                     ? costs.ipi_latency_remote
                     : costs.ipi_latency_llc;
    }
    for (auto* o : observers_) o->on_ipi(now_ns(), this_cpu_, target, !k.pending_by_store);
  }
  // A CPU that went idle at this very instant has not reached MWAIT/HLT:
  // cpu_idle_loop() tests need_resched() before entering the state. (The
  // waker released by switched_away() comes exactly then.)
  if (k.idle && now_ns() > k.idle_since) {
    if (k.running_at >= 0) {
      // Already leaving its state for a timer: the IPI or store is taken
      // once the CPU runs, not after a second exit.
      latency = std::max(latency, k.running_at - now_ns());
    } else {
      latency += st.exit_latency_ns;
      k.running_at = now_ns() + latency;
    }
  }
  events_.schedule(sim::Time(now_ns() + latency), sim::Phase::Interrupt,
                   [this, target] { handle_kick(target); });
}

void Kernel::handle_kick(int c) {
  Cpu& k = cpu(c);
  if (k.kick_sent_busy && k.in_idle_state && now_ns() > k.idle_since) {
    // Sent while the CPU ran, the IPI lands after it entered an idle state:
    // the handler runs once the CPU has left that state (or, if a timer
    // already started the exit, once that exit ends).
    k.kick_sent_busy = false;
    int64_t exit = machine_.profile().idle_states[static_cast<size_t>(k.idle_state)].exit_latency_ns;
    if (k.running_at >= 0) exit = std::min(exit, std::max<int64_t>(0, k.running_at - now_ns()));
    k.running_at = now_ns() + exit;
    if (exit > 0) {
      events_.schedule(sim::Time(now_ns() + exit), sim::Phase::Interrupt, [this, c] { handle_kick(c); });
      return;
    }
  }
  k.kick_sent_busy = false;
  k.kick_pending = false;
  k.pending_by_store = false;
  const bool took_ipi = k.ipi_in_flight;
  k.ipi_in_flight = false;
  this_cpu_ = c;
  if (k.kicked_while_idle) {
    update_wasted();
    --nr_kicked_idle_;
    k.kicked_while_idle = false;
  }
  if (k.idle) {
    exit_idle(c);
    k.irq_from_idle = true;
  }
  sync(c);
  const bool was_armed = k.armed;
  k.armed = false;
  // The interrupt itself, on whatever the CPU was doing (a task, kernel work
  // or the idle task): every IPI the scheduler sends is RESCHEDULE_VECTOR
  // (smp_send_reschedule()), so the vector's entry, smp_reschedule_interrupt()'s
  // ack_APIC_irq() and the return (4.0 arch/x86/kernel/smp.c). scheduler_ipi()
  // adds irq_enter()/irq_exit() only when the wake list or a nohz kick has
  // work (kernel/sched/core.c); that part is not costed. A flag store that
  // ends an MWAIT takes no interrupt: the idle loop sees the flag.
  const int64_t entry_ns = took_ipi ? jitter(machine_.costs().ipi_handler) : 0;
  charge(c, entry_ns, CostPath::Ipi);
  // What follows is interrupt time (irq_time_accounting) only inside
  // scheduler_ipi()'s irq_enter()/irq_exit(), which it takes only for a
  // wake list or a nohz kick; a CPU woken by a flag store runs the wake
  // list from its idle loop (sched_ttwu_pending() in 4.0's
  // cpu_idle_loop()), in no interrupt at all.
  const bool in_irq = took_ipi && (!k.wake_list.empty() || k.balance_kick);
  const WorkCharged work_before = work_charged(k);
  // sched_ttwu_pending(): activate the tasks queued on our wake list.
  // It holds this CPU's rq->lock over all of them (3.10-4.x core.c).
  std::vector<Task*> pending;
  pending.swap(k.wake_list);
  if (!pending.empty() && per_cpu_rq_locks()) {
    int64_t lines = 0;
    if (ttwu_lines_) {
      // llist_del_all() comes before the lock; the activations under it.
      charge(c, sched_lines::take_wake_list(machine_, c, k.rq_lines), CostPath::Wakeup);
      for (auto it = pending.rbegin(); it != pending.rend(); ++it)
        lines += sched_lines::activate_queued(machine_, c, (*it)->lines, k.rq_lines);
    }
    lock_rq(c, c, static_cast<int64_t>(pending.size()) * machine_.costs().rq_lock_hold + lines, CostPath::RqLock);
  }
  // llist_del_all() hands the list over newest first, and 4.0's
  // sched_ttwu_pending() walks it so (3.x's xchg()-ed list likewise).
  for (auto it = pending.rbegin(); it != pending.rend(); ++it) ttwu_do_activate(*it, c, 0);
  if (k.balance_kick) {
    k.balance_kick = false;
    // scheduler_ipi() -> got_nohz_idle_kick() (4.0 core.c): the softirq
    // balances only if this CPU is still idle with nothing to run (the
    // interrupt runs on the idle task, rq->curr == rq->idle); a CPU that
    // has work by now, a wakeup from this very IPI included, cancels the kick.
    if (idle_cpu(c))
      policy_->nohz_idle_balance(c);
    else
      k.nohz_kick_bit = false;
  }
  if (in_irq) account_irq_time(c, work_before);
  irq_exit(c, was_armed, entry_ns);
}

// `entry_ns`: the interrupt's own entry and return, already charged; unlike
// a kernel path it interrupted, it does not keep the idle loop's schedule()
// from balancing.
void Kernel::irq_exit(int c, bool was_armed, int64_t entry_ns) {
  Cpu& k = cpu(c);
  if (k.curr) {
    if (k.need_resched && preemptible_now(k.curr)) return preempt_at_resched_point(c);
    return arm(c);
  }
  if (was_armed) return arm(c);  // a kernel-only path continues; it re-picks when done
  // From idle: schedule() picks what was queued (or balances), once the
  // interrupt has returned. 4.0's cpu_idle_loop() leaves its
  // `while (!need_resched())` loop and calls schedule_preempt_disabled()
  // only after the handler's work (an IPI's wake list, an hrtimer's
  // wakeup and its rest, a kick's balance pass) is done, so the switch, as
  // sched_switch stamps it, comes after that work (reading chosen: a task
  // queued here meanwhile is picked by the same schedule()).
  //
  // tick_nohz_idle_exit() (`idle_exit_path`) runs after the handler and
  // before that schedule() (4.0 cpu_idle_loop()), on the idle task, when
  // the loop leaves for a task queued here or for a pick that may balance
  // (read as the reschedule IPI's need_resched; a nohz kick that found
  // nothing due sets none in 4.0, a case the model does not tell apart):
  // with no handler work left it starts now, else once that work is done
  // (segment_done()), and the pick follows it (pay_idle_exit_path()).
  const bool may_balance = k.work_left() == entry_ns;
  const bool leaves = policy_->nr_running(c) > 0 || may_balance;
  if (leaves && k.work_left() == 0) pay_idle_exit_path(c);
  if (k.work_left() > 0 && (policy_->nr_running(c) > 0 || k.idle_exit_paid || (leaves && idle_exit_path_due(c)))) {
    k.pick_after_irq = true;
    k.pick_after_irq_may_balance = may_balance;
    return arm(c);
  }
  k.need_resched = false;
  Task* next = policy_->pick_next_task(c, nullptr, may_balance);
  if (next) return finish_switch(c, nullptr, next);
  if (k.work_left() > 0) return arm(c);
  enter_idle(c);
}

// ---- hrtimers ----

void Kernel::start_hrtimer(int c, int64_t soft_ns, int64_t hard_ns, Task* p) {
  const uint64_t id = ++next_hrtimer_id_;
  cpu(c).hrtimers.push_back({soft_ns, hard_ns, p, id});
  events_.schedule(sim::Time(hard_ns), sim::Phase::Timer, [this, c, id] { hrtimer_fires(c, id); });
}

// The clock event device fires for a timer still queued. An idle CPU first
// leaves its C-state: the interrupt is handled after the state's exit
// latency, as for an IPI. A CPU already leaving it (an IPI or a store
// reached it first) exits once: the timer is taken when it runs.
// (A kick's handler stays where kick_cpu() put it, even if this timer's
// exit ends sooner: the model schedules each handler once.)
void Kernel::hrtimer_fires(int c, uint64_t id) {
  Cpu& k = cpu(c);
  const bool queued = std::any_of(k.hrtimers.begin(), k.hrtimers.end(),
                                  [id](const Cpu::HrTimer& t) { return t.id == id; });
  if (!queued) return;
  int64_t latency = 0;
  if (k.idle) {
    latency = machine_.profile().idle_states[static_cast<size_t>(k.idle_state)].exit_latency_ns;
    // An IPI still in flight has not started the exit; one that has, or a
    // store, ends it sooner than a new exit would.
    if (k.running_at >= 0) latency = std::min(latency, std::max<int64_t>(0, k.running_at - now_ns()));
    k.running_at = now_ns() + latency;
  }
  events_.schedule(sim::Time(now_ns() + latency), sim::Phase::Interrupt, [this, c] { hrtimer_interrupt(c); });
}

// hrtimer_interrupt(): the local APIC timer interrupt, costed as the tick's
// handler (the same interrupt; no separate figure is sourced).
void Kernel::hrtimer_interrupt(int c) {
  Cpu& k = cpu(c);
  this_cpu_ = c;
  if (k.idle) {
    exit_idle(c);
    k.irq_from_idle = true;
  }
  sync(c);
  const bool was_armed = k.armed;
  k.armed = false;
  const WorkCharged work_before = work_charged(k);
  const int64_t tick_ns = jitter(machine_.costs().tick_handler);
  k.kern_left += tick_ns;
  work_by_path_[static_cast<size_t>(CostPath::TimerInterrupt)] += tick_ns;
  run_hrtimers(c);
  account_irq_time(c, work_before);
  irq_exit(c, was_armed);
}

// __hrtimer_run_queues(): every timer whose soft expiry has passed runs;
// for a sleeper that is hrtimer_wakeup() -> wake_up_process().
// The queue is walked in (hard) expiry order and the walk stops at the first
// timer whose soft expiry is still ahead, as __hrtimer_run_queues() does.
void Kernel::run_hrtimers(int c) {
  Cpu& k = cpu(c);
  std::sort(k.hrtimers.begin(), k.hrtimers.end(), [](const auto& a, const auto& b) {
    return a.hard_ns != b.hard_ns ? a.hard_ns < b.hard_ns : a.id < b.id;
  });
  size_t due = 0;
  while (due < k.hrtimers.size() && k.hrtimers[due].soft_ns <= now_ns()) ++due;
  const std::vector<Cpu::HrTimer> expired(k.hrtimers.begin(), k.hrtimers.begin() + static_cast<long>(due));
  k.hrtimers.erase(k.hrtimers.begin(), k.hrtimers.begin() + static_cast<long>(due));
  for (const auto& t : expired) {
    this_cpu_ = c;
    try_to_wake_up(t.task, 0);
  }
}

// nohz_balancer_kick() (4.0 fair.c): "if (test_and_set_bit(NOHZ_BALANCE_KICK,
// nohz_flags(ilb_cpu))) return;". The bit stays set until the kicked CPU's
// nohz_idle_balance() ends (or got_nohz_idle_kick() finds it busy); the
// model's pass ends when the CPU's interrupt from idle does.
bool Kernel::kick_idle_balance(int c) {
  Cpu& k = cpu(c);
  if (k.nohz_kick_bit) return false;
  k.nohz_kick_bit = true;
  k.balance_kick = true;
  kick_cpu(c, Kick::Balance);
  return true;
}

void Kernel::end_nohz_kick(Cpu& k) {
  if (!k.balance_kick) k.nohz_kick_bit = false;
}

// ---- rq->clock and sched_info ----
//
// schedstat's run_delay and taskstats' cpu_delay_total (what seed 000's
// cpu_delay_req_avg_us divides by cpu_count) are differences of rq->clock
// (kernel/sched/stats.h, 4.0): sched_info_queued() at enqueue_task(),
// sched_info_arrive() at the switch, sched_info_dequeued() when a waiting
// task leaves its rq. rq->clock moves only at update_rq_clock(): enqueue,
// dequeue, the tick, __schedule() for a prev still queued, and CFS's own
// calls (task_fork_fair(), yield_task_fair(), update_blocked_averages(),
// nohz_idle_balance()). And
// check_preempt_curr() ends: "A queue event has occurred, and we're going to
// schedule. In this case, we can save a useless back to back clock update."
// 4.0 requests the skip (RQCF_REQ_SKIP) when rq->curr is queued and needs a
// resched, and __schedule() makes it active (RQCF_ACT_SKIP) until it has
// picked; the idle task counts as queued (init_idle(): idle->on_rq =
// TASK_ON_RQ_QUEUED). 3.10 sets rq->skip_clock_update, which stops every
// update at once; its idle task is not on_rq, and its put_prev_task() leaves
// the clock alone for it (see rq_clock_skip_request()). Either way a wakee that wakes an idle CPU or
// preempts is switched in on the clock of its own enqueue: its delay reads
// ~0 however long the idle exit or the preemption took, and a preempted task
// starts waiting on that earlier clock. CFS also charges runtime on this
// clock (rq_clock_task(); fair.c update_curr()), so the waker's time from the
// enqueue to the switch is charged to the wakee. 2.4 has no sched_info; its
// delays are read on the simulated clock.
//
// With irq_time_accounting (CONFIG_IRQ_TIME_ACCOUNTING, which x86 enables at
// boot on a stable TSC: 4.0 arch/x86/kernel/tsc.c tsc_init() ->
// enable_sched_clock_irqtime()), update_rq_clock_task() (4.0 core.c) takes
// the interrupt time accounted since its last call out of the clock CFS
// charges on, capped at the clock's own step so that rq_clock_task() stays
// monotonic (the rest is taken at a later update). Its other half,
// sched_rt_avg_update(), which lowers the CPU's capacity for load balancing
// by that time, is not modelled: the model has no rt_avg scaling.
void Kernel::update_rq_clock(int c) {
  Cpu& k = cpu(c);
  if (clock_skip_active(k)) return;
  const int64_t clock = SCHED_CLOCK_AT_START_NS + now_ns();
  int64_t delta = clock - k.rq_clock;
  if (delta < 0) return;
  k.rq_clock = clock;
  if (irq_time_accounting_) {
    const int64_t irq_delta = std::min(irq_time_read(c) - k.prev_irq_time, delta);
    k.prev_irq_time += irq_delta;
    delta -= irq_delta;
  }
  k.rq_clock_task += delta;
}

// irqtime_account_irq() (4.0 kernel/sched/cputime.c), called at irq_enter(),
// irq_exit() and around __do_softirq(): the time since its last call goes to
// cpu_hardirq_time if the CPU is in a hard interrupt, to cpu_softirq_time
// if it serves softirqs outside ksoftirqd. So a handler's time counts with
// the softirq its irq_exit() runs (the tick's SCHED_SOFTIRQ balancing, a
// nohz kick's). The model runs a handler's code at its entry and its work
// over the time after: what was charged to the CPU since `before` is the
// handler's. It moves to the CPU's interrupt buckets, which run first, as
// the handler runs before the code it interrupted, and count as interrupt
// time as they run (sync()). (Reading chosen: the kernel adds a handler's
// time at its end, so an update_rq_clock() inside it sees none of it. But
// an interrupt on the same CPU cannot land inside a handler there, it
// waits for it, while the model's tick or IPI does land inside the
// handler's time: as it runs, the part it sees taken out is what the
// deferred one would see. A remote CPU's update_rq_clock() of this
// runqueue inside the handler sees in the kernel none of it, here the part
// run: which task pays moves by at most that, as the cap in
// update_rq_clock_task() moves it in the kernel.)
void Kernel::account_irq_time(int c, WorkCharged before) {
  if (!irq_time_accounting_) return;
  Cpu& k = cpu(c);
  k.irq_spin_left += k.spin_left - before.spin;
  k.irq_kern_left += k.kern_left - before.kern;
  k.spin_left = before.spin;
  k.kern_left = before.kern;
}

int64_t Kernel::irq_time_total() const {
  if (!irq_time_accounting_) return -1;
  int64_t sum = 0;
  for (int c = 0; c < nr_cpus(); ++c) sum += irq_time_read(c);
  return sum;
}

// The CPU's interrupt time up to now: what its buckets ran before its last
// sync(), and since then, as sync() would consume them (first). It reads
// without syncing: a sync() rounds the work left, and a remote
// update_rq_clock() must not move the CPU's timing by it.
int64_t Kernel::irq_time_read(int c) const {
  const Cpu& k = cpu(c);
  if (!k.armed) return k.irq_time;
  int64_t wall = now_ns() - k.seg_start;
  int64_t run = 0;
  for (const int64_t left : {k.irq_spin_left, k.irq_kern_left}) {
    const int64_t need = (left * 1000 + k.rate - 1) / k.rate;
    const int64_t used = std::clamp<int64_t>(wall, 0, need);
    run += used;
    wall -= used;
  }
  return k.irq_time + run;
}

bool Kernel::clock_skip_active(const Cpu& k) const {
  if (config_.preset().policy != PolicyKind::Cfs) return false;
  return config_.preset().version >= 400 ? (k.clock_skip & RQCF_ACT_SKIP) != 0 : k.clock_skip != 0;
}

// A CPU leaving idle switches in on the clock of its last enqueue in both
// versions (4.0: the idle task is queued, so the wakeup requested the skip;
// 3.10: put_prev_task() does not update for it), so the idle task needs no
// request here: the model never updates the clock when idle is prev.
void Kernel::rq_clock_skip_request(int c) {
  const Cpu& k = cpu(c);
  if (!k.curr || !k.need_resched) return;
  rq_clock_skip_update(c);
}

void Kernel::rq_clock_skip_update(int c) {
  Cpu& k = cpu(c);
  if (config_.preset().policy != PolicyKind::Cfs) return;
  if (config_.preset().version >= 400)
    k.clock_skip |= RQCF_REQ_SKIP;
  else
    k.clock_skip = 1;
}

int64_t Kernel::sched_info_clock(int c) const {
  return config_.preset().policy == PolicyKind::Cfs ? cpu(c).rq_clock : now_ns();
}

void Kernel::sched_info_queued(int c, Task* p) {
  update_rq_clock(c);
  if (p->sched_info_last_queued < 0) p->sched_info_last_queued = sched_info_clock(c);
}

void Kernel::sched_info_dequeued(int c, Task* p) {
  update_rq_clock(c);
  if (p->sched_info_last_queued >= 0) p->sched_info_dequeued_delay += sched_info_clock(c) - p->sched_info_last_queued;
  p->sched_info_last_queued = -1;
}

int64_t Kernel::sched_info_arrive(int c, Task* p) {
  int64_t delay = p->sched_info_dequeued_delay;
  if (p->sched_info_last_queued >= 0) delay += sched_info_clock(c) - p->sched_info_last_queued;
  p->sched_info_last_queued = -1;
  p->sched_info_dequeued_delay = 0;
  return delay;
}

// ---- wakeups ----

void Kernel::activate_task(Task* p, int c, int flags) {
  sched_info_queued(c, p);
  policy_->enqueue_task(c, p, flags);
  p->on_rq = true;
  update_wasted();
  ++nr_waiting_;
  p->queued_since = sim::Time(now_ns());
}

// ttwu_do_wakeup() (4.0) runs check_preempt_curr() before
// trace_sched_wakeup(), so a resched without an IPI is traced first.
void Kernel::ttwu_do_activate(Task* p, int c, int wake_flags) {
  // The enqueue and the preemption check cost the CPU that does them: the
  // waker's for a wakeup it activates itself (ttwu_queue(), charged before
  // it by ttwu_lock_and_activate()), the wakee's for one queued on its wake
  // list (sched_ttwu_pending(), from the IPI).
  if (const int64_t activate = machine_.costs().ttwu_activate; activate > 0 && !p->activation_charged)
    charge(this_cpu_, jitter(activate), CostPath::Wakeup);
  p->activation_charged = false;
  if (p->enqueued_at_lock) {
    p->enqueued_at_lock = false;
    --cpu(c).wakers_activating;
  } else {
    activate_task(p, c, ENQUEUE_WAKEUP);
  }
  policy_->check_preempt_curr(c, p, wake_flags);
  for (auto* o : observers_) o->on_wakeup(now_ns(), this_cpu_, p, c, false);
}

// try_to_wake_up() (kernel/sched/core.c, 3.1 to 4.x): "If the owning
// (remote) cpu is still in the middle of schedule() with this task as prev,
// wait until its done referencing the task": `while (p->on_cpu)
// cpu_relax();`, and only then select_task_rq(). A task that blocks is off
// its runqueue at once but on_cpu until its CPU has picked what runs next,
// newidle balance included, and switched to it, so a quick wakeup finds its
// old CPU idle rather than busy. 2.4 does not wait (its try_to_wake_up()
// takes runqueue_lock and leaves placement to reschedule_idle()). A child's
// exit waits like any task's wakeup since stop 81 (Proc::exit_notify());
// wakeups from interrupt context (an hrtimer's) wait too, by running when the
// switch is done (Kernel::try_to_wake_up()). The wait covers the newidle path to
// idle; on a switch to another task the model makes the switch at once and
// charges its costs after, so there is no window to wait out there (the
// placement sees that CPU busy, as the kernel's would after the spin).
bool Kernel::wakee_switching_out(const Task* p) const {
  return config_.preset().policy == PolicyKind::Cfs && p->state == TaskState::Interruptible && p->on_cpu &&
         cpu(p->cpu).curr != p;
}

void Kernel::spin_for_switch(int waker_cpu, int target_cpu) {
  cpu(waker_cpu).switch_spin_since = now_ns();
  cpu(target_cpu).switch_spinners.push_back(waker_cpu);
}

// finish_lock_switch(): prev->on_cpu = 0, which ends the wakers' spins and
// runs an interrupt-context wakeup (an hrtimer's) that waited for it. A prev picked again or
// already running elsewhere keeps on_cpu; its wakers are released all the
// same and find it running.
void Kernel::switched_away(int c, Task* prev) {
  if (cpu(prev->cpu).curr != prev) prev->on_cpu = false;
  if (prev->wake_after_switch_flags >= 0 && !prev->on_cpu) {
    const int flags = prev->wake_after_switch_flags, waker = prev->wake_after_switch_cpu;
    prev->wake_after_switch_flags = prev->wake_after_switch_cpu = -1;
    // After the switch's own bookkeeping, at the same time.
    events_.schedule(sim::Time(now_ns()), sim::Phase::Control, [this, prev, flags, waker] {
      this_cpu_ = waker;
      try_to_wake_up(prev, flags);
    });
  }
  std::vector<int> spinners;
  spinners.swap(cpu(c).switch_spinners);
  for (int s : spinners) {
    Cpu& w = cpu(s);
    if (w.switch_spin_since < 0 || !w.curr) continue;
    if (w.armed) sync(s);
    const int64_t spun = now_ns() - w.switch_spin_since;
    w.switch_spin_since = -1;
    w.curr->pending.work_left = 0;
    for (auto* o : observers_) o->on_wait_for_switch(now_ns(), s, spun);
    if (w.armed) arm(s);
  }
}

// A wakeup from interrupt context (an hrtimer's) spins like any other on a
// wakee still switching out (4.0 try_to_wake_up(): "while (p->on_cpu)
// cpu_relax();"): it cannot co_await as a task's wake_up() does, so it runs
// once the switch is done, from the waker's CPU (switched_away()). Without
// it such a wakee would be placed, and could be moved, while its old CPU
// had not yet picked, which the group pick cannot survive (its prev then
// belongs to another CPU's hierarchy); a child's exit did that until stop
// 81 made it a task's wakeup (Proc::exit_notify()). An hrtimer fires on its
// wakee's own CPU, whose interrupts the kernel keeps off from the switch's
// lock to finish_lock_switch(), so there the deferral only stands in for
// the interrupt's own delay; it runs with that CPU's current task of the
// moment as current.
int Kernel::try_to_wake_up(Task* p, int wake_flags) {
  if (wakee_switching_out(p)) {
    if (p->wake_after_switch_flags < 0) {
      p->wake_after_switch_flags = wake_flags;
      p->wake_after_switch_cpu = this_cpu_;
    }
    return 1;
  }
  const int c = ttwu_select(p, wake_flags);
  if (c < 0) return 0;
  ttwu_lock_and_activate(p, c);
  ttwu_queue(p, c, wake_flags);
  ttwu_finish();
  return 1;
}

// ttwu_queue()'s direct path (3.10-4.x core.c): "raw_spin_lock(&rq->lock);
// ttwu_do_activate(rq, p, 0);". The enqueue comes before check_preempt_curr()
// -> resched_curr() sends the resched IPI (or sets need_resched for a
// polling idle CPU), and the target's __schedule() takes the lock the waker
// holds, so the waker's hold and activation are on the wakee's path. This
// charges them; a waker that lets them pass before ttwu_queue() checks
// preemption (Proc::wake_up()) delays the wakee as the kernel's does. A
// queued wakeup's target pays them itself, in sched_ttwu_pending(). Returns
// whether there is anything to let pass.
//
// ttwu_do_activate() starts with activate_task(): the enqueue, its
// update_curr() of the target's running task and the wakee's placement
// against min_vruntime come at the start of the hold, and ttwu_do_wakeup()'s
// check_preempt_curr() at its end (reading chosen: ttwu_activate split so,
// the check's update_curr() seeing the whole activation). On a busy target
// the wakee is enqueued here, at the lock (stop 78; from stop 76 it was
// enqueued at the end, beside the check, which moved the emulated machine's
// threads from the real kernel's batching into a ping-pong:
// docs/real-kernels.md). Nothing can take it before the check: the
// target's schedule() waits for the lock (schedule()), and the load
// balancers leave it (Cfs::can_migrate_task()), as their wait for this lock
// would. An idle target is enqueued at the end: nothing runs there to move
// min_vruntime meanwhile, and its idle paths pick without the lock.
bool Kernel::ttwu_lock_and_activate(Task* p, int c) {
  if (p->wake_by_queue || !per_cpu_rq_locks()) return false;
  lock_rq(c, this_cpu_, machine_.costs().rq_lock_hold, CostPath::RqLock);
  if (cpu(c).curr) {
    activate_task(p, c, ENQUEUE_WAKEUP);
    p->enqueued_at_lock = true;
    ++cpu(c).wakers_activating;
  }
  if (const int64_t activate = machine_.costs().ttwu_activate; activate > 0) {
    const int64_t ns = jitter(activate);
    charge(this_cpu_, ns, CostPath::Wakeup);
    cpu(c).lock_free_at += ns;  // ttwu_do_activate() runs under the lock
  }
  p->activation_charged = true;
  return true;
}

int Kernel::ttwu_select(Task* p, int wake_flags) {
  if (p->state != TaskState::Interruptible) return -1;
  const int waker = this_cpu_;
  p->wake_time = sim::Time(now_ns());
  p->state = TaskState::Running;  // TASK_WAKING: no other waker takes it
  p->waking = true;
  p->waker_cpu = waker;
  charge(waker, jitter(machine_.costs().ttwu_base), CostPath::Wakeup);
  const int from = p->cpu;
  const int c = select_task_rq(p, SD_BALANCE_WAKE, wake_flags);
  for (auto* o : observers_) o->on_waking(now_ns(), waker, p, c);
  // The class's branch names the move, unless the core overrode its CPU.
  if (c != p->cpu) set_task_cpu(p, c, select_fell_back_ ? "affinity" : policy_->wake_placement());
  // ttwu_queue_cond() is read once, here, for both the waker's lines and
  // ttwu_queue()'s path: the kernel reads it right after select_task_rq(),
  // before the accesses the lines charge, and since 6.0 its answer depends
  // on the target's nr_running, which may change while those are charged.
  p->wake_by_queue = policy_->queue_remote_wakeup(waker, c);
  const int level = c == waker ? -1 : domains_.level_spanning(waker, c);
  for (auto* o : observers_) o->on_wakeup_placement(now_ns(), waker, c, c == waker, level);
  if (ttwu_lines_) charge(waker, ttwu_waker_lines(p, from, c), CostPath::Wakeup);
  if (!idle_cpu(c)) {
    int idle = 0;
    for (int i = 0; i < nr_cpus(); ++i) {
      Cpu& k = cpu(i);
      if (i == c || !k.idle || k.kick_pending || !p->cpus_allowed.test(i)) continue;
      ++idle;
      ++k.placements_pending;
      k.placements_ts_sum += now_ns();
    }
    if (idle) {
      ++busy_placement_.wakeups;
      busy_placement_.idle_cpus += idle;
    }
  }
  return c;
}

// The ttwu_lines what-if: what the waker's accesses to the wakee's
// task_struct and, for a wakeup it enqueues itself, to the target's
// runqueue cost, up to the IPI. Charged before ttwu_queue() so that they
// delay the wakee as they do in the kernel, where they come before the
// IPI or the unlock that lets the target run it.
int64_t Kernel::ttwu_waker_lines(Task* p, int from, int c) {
  const int waker = this_cpu_;
  const sched_lines::Wakeup w{waker, p->lines, cpu(from).rq_lines, cpu(c).rq_lines, from != c};
  // (A sched_setaffinity() racing with the wakeup may still turn a queued
  // wakeup into a direct enqueue in ttwu_queue(); it is charged as queued.)
  if (p->wake_by_queue)
    return sched_lines::wake_by_queue(machine_, w, cpu(c).wake_list.empty(), config_.preset().version >= 316);
  Task* curr = cpu(c).curr;
  return sched_lines::wake_by_enqueue(machine_, w, curr ? &curr->lines : nullptr);
}

void Kernel::ttwu_queue(Task* p, int c, int wake_flags) {
  p->waking = false;
  // A sched_setaffinity() that came while the wakee was being placed (the
  // kernel's waits for pi_lock, so it acts on the queued task).
  const bool moved_away = p->affinity_changed_while_waking && !p->cpus_allowed.test(c);
  p->affinity_changed_while_waking = false;
  if (!moved_away && p->wake_by_queue) {
    // ttwu_queue_remote(): the target enqueues it from the IPI handler.
    cpu(c).wake_list.push_back(p);
    kick_cpu(c, Kick::QueuedWakeup);
    return;
  }
  // ttwu_queue() (3.10-4.x core.c): "raw_spin_lock(&rq->lock);
  // ttwu_do_activate(rq, p, 0);" on the target's lock, the waker's own for a
  // local wakeup. 2.4's enqueue_task() takes its global lock itself.
  if (per_cpu_rq_locks() && !p->activation_charged)
    lock_rq(c, this_cpu_, machine_.costs().rq_lock_hold, CostPath::RqLock);
  ttwu_do_activate(p, c, wake_flags);
  if (moved_away) move_queued_task(c, p, p->cpus_allowed.first(), "affinity");
}

// try_to_wake_up() after ttwu_queue() (4.0 core.c): ttwu_do_wakeup()'s
// idle_stamp update and the runqueue lock's release (the direct path), then
// "stat: ttwu_stat(p, cpu, wake_flags); out:
// raw_spin_unlock_irqrestore(&p->pi_lock, flags);", and the caller's step to
// its next waiter (__wake_up_common(), wake_up_q()). It runs after the
// wakee is enqueued or queued with its IPI sent, so it delays the waker
// and not the wakee; with interrupts and preemption off, so a wakee that
// preempts runs after it (the charged work passes before the preemption
// point). On a wakeup queued on the target's wake list the waker's part is
// shorter (ttwu_do_wakeup() runs on the target, in sched_ttwu_pending()):
// the same cost is charged (reading chosen; it is measured on a direct
// one). 2.4's try_to_wake_up() ends alike, with its runqueue_lock's
// spin_unlock_irqrestore(); the model does not extend that global lock's
// hold by it (the 2.4 profile, p4xeon-4way, has no tail). Measured as the
// span from one wakee's sched_wakeup to the next one's sched_waking in one
// FUTEX_WAKE (tools/probes/futex-wake-all.c); charged on the waker's CPU
// like ttwu_base, which holds the rest of the wakeup.
void Kernel::ttwu_finish() {
  if (const int64_t tail = machine_.costs().ttwu_tail; tail > 0) charge(this_cpu_, jitter(tail), CostPath::Wakeup);
}

bool Kernel::per_cpu_rq_locks() const { return config_.preset().policy == PolicyKind::Cfs; }

bool Kernel::ttwu_enqueues_after_placement() const { return config_.preset().policy == PolicyKind::Cfs; }

void Kernel::wake_up_new_task(Task* p) {
  policy_->task_fork(p);
  const int c = select_task_rq(p, SD_BALANCE_FORK, 0);
  if (c != p->cpu) set_task_cpu(p, c, "fork");
  policy_->init_task_runnable_average(p);
  // 4.0 core.c wake_up_new_task(): "rq = __task_rq_lock(p); activate_task()".
  if (per_cpu_rq_locks()) lock_rq(c, this_cpu_, machine_.costs().rq_lock_hold, CostPath::RqLock);
  activate_task(p, c, 0);
  for (auto* o : observers_) o->on_wakeup(now_ns(), this_cpu_, p, c, true);
  policy_->check_preempt_curr(c, p, WF_FORK);
}

// kernel/sched/core.c select_task_rq() (4.0), for wakeups and forks: the
// class may answer a CPU the task may not use (select_idle_sibling() returns
// an idle prev_cpu without looking at the mask, and find_idlest_group()
// skips disallowed groups, leaving this_cpu), and the core corrects it. 2.4
// does not place tasks, so there is nothing to correct.
int Kernel::select_task_rq(Task* p, uint32_t sd_flag, int wake_flags) {
  const int c = policy_->select_task_rq(p, p->cpu, sd_flag, wake_flags);
  select_fell_back_ = config_.preset().policy == PolicyKind::Cfs && !p->cpus_allowed.test(c);
  return select_fell_back_ ? select_fallback_rq(p) : c;
}

// select_fallback_rq() (4.0): the first allowed CPU on the node of the
// task's CPU, else the first allowed CPU anywhere (every CPU is online: no
// hotplug, no cpuset fallback).
int Kernel::select_fallback_rq(const Task* p) const {
  const auto& topo = machine_.topo();
  const hw::CpuMask same_node = topo.node_mask(topo.cpu(p->cpu).socket) & p->cpus_allowed;
  return same_node.weight() > 0 ? same_node.first() : p->cpus_allowed.first();
}

// kernel/sched/core.c set_cpus_allowed_ptr() (4.0): done if the task may
// stay on its CPU; a sleeping task is placed inside the mask when it next
// wakes (select_task_rq(), with select_fallback_rq()); a queued one moves
// at once (move_queued_task()).
void Kernel::set_cpus_allowed_ptr(Task* p, hw::CpuMask mask) {
  mask = mask & machine_.topo().all();
  if (mask.weight() == 0) throw std::invalid_argument("set_cpus_allowed_ptr: no CPU of this machine in the mask");
  p->cpus_allowed = mask;
  if (mask.test(p->cpu) || p->state != TaskState::Running) return;
  if (p->waking) {
    p->affinity_changed_while_waking = true;  // ttwu_queue() moves it once queued
    return;
  }
  if (curr(p->cpu) == p || !p->on_rq)
    throw std::logic_error("set_cpus_allowed_ptr: moving a task running or waking on another CPU is not modelled");
  move_queued_task(p->cpu, p, mask.first(), "affinity");
}

// sched_exec() (kernel/sched/core.c, 2.6.0 to 4.x): select_task_rq() with
// SD_BALANCE_EXEC from the task's own CPU. 2.4 has no exec balancing.
// It asks the class directly; __migrate_task() refuses a CPU outside the
// mask, so the task then stays.
int Kernel::sched_exec_target(Task* p) {
  if (config_.preset().policy != PolicyKind::Cfs) return p->cpu;
  const int dest = policy_->select_task_rq(p, p->cpu, SD_BALANCE_EXEC, 0);
  return p->cpus_allowed.test(dest) ? dest : p->cpu;
}

// migration_cpu_stop() -> __migrate_task() -> move_queued_task() (4.0):
// the task, queued but not running, goes to dest's runqueue, which may
// preempt what runs there.
void Kernel::move_queued_task(int c, Task* p, int dest, const char* cause) {
  sched_info_dequeued(c, p);
  policy_->dequeue_task(c, p, 0);
  set_task_cpu(p, dest, cause);
  sched_info_queued(dest, p);
  policy_->enqueue_task(dest, p, 0);
  policy_->check_preempt_curr(dest, p, 0);
}

void Kernel::set_task_cpu(Task* p, int new_cpu, const char* cause) {
  const int from = p->cpu;
  if (from == new_cpu) return;
  const int level = domains_.level_spanning(from, new_cpu);
  policy_->migrate_task_rq(p, new_cpu);
  p->cpu = new_cpu;
  ++p->nr_migrations;
  for (auto* o : observers_) o->on_migrate(now_ns(), this_cpu_, p, from, new_cpu, level, cause);
}

void Kernel::note_balance(int c, int level, CpuIdleType idle, bool success, int moved,
                          int64_t cost_ns) {
  for (auto* o : observers_)
    o->on_balance(now_ns(), c, level, static_cast<int>(idle), success, moved, cost_ns);
}

void Kernel::note_wake_affine(bool affine) {
  for (auto* o : observers_) o->on_wake_affine(affine);
}

void Kernel::note_stat_runtime(int c, const Task* p, int64_t runtime_ns, uint64_t vruntime) {
  for (auto* o : runtime_observers_) o->on_stat_runtime(now_ns(), c, p, runtime_ns, vruntime);
}

// ---- the run loop ----

RunResult Kernel::run(int64_t time_limit_ns, uint64_t event_limit) {
  RunResult r;
  if (!booted_) {
    // Every CPU starts in its idle loop, entered at boot as any idle entry:
    // the governor picks its state and the CPU joins nohz.idle_cpus_mask, so
    // a CPU that never ran a task is still found by NOHZ idle balancing.
    booted_ = true;
    start_kworker_noise();
    for (int c = 0; c < nr_cpus(); ++c) {
      Cpu& k = cpu(c);
      if (!k.idle) continue;
      // A CPU that spawn() already handed a task leaves idle at once.
      if (!k.kick_pending && k.wake_list.empty() && policy_->nr_running(c) == 0) {
        k.idle_state = choose_idle_state(c);
        k.governor_chose = k.menu.has_value();
        policy_->cpu_went_idle(c);
      }
      k.in_idle_state = true;
      for (auto* o : observers_) o->on_idle(now_ns(), c, k.idle_state);
    }
  }
  events_.run(sim::Time(time_limit_ns), event_limit);
  if (live_tasks_ > 0) {
    if (events_.empty()) {
      r.outcome = RunResult::Outcome::Deadlock;
      std::ostringstream o;
      int shown = 0;
      for (Task* t : task_ptrs_)
        if (t->state != TaskState::Dead && shown++ < 8)
          o << (shown > 1 ? ", " : "") << t->comm << "-" << t->pid << " (sleeping)";
      r.detail = o.str();
    } else if (events_.executed() >= event_limit) {
      r.outcome = RunResult::Outcome::EventLimit;
    } else {
      r.outcome = RunResult::Outcome::TimeLimit;
    }
  }
  r.end_ns = now_ns();
  r.events = events_.executed();
  flush_accounting();
  return r;
}

Kernel::BusyPlacement Kernel::busy_placement() const {
  BusyPlacement b = busy_placement_;
  // CPUs still idle: they stayed idle at least until now.
  for (const auto& k : cpus_) {
    b.idle_after_ns += k.placements_pending * now_ns() - k.placements_ts_sum;
    b.idle_after_samples += k.placements_pending;
  }
  return b;
}

void Kernel::flush_accounting() {
  for (int c = 0; c < nr_cpus(); ++c) {
    Cpu& k = cpu(c);
    sync(c);
    if (k.idle) {
      k.acct.idle_ns += now_ns() - k.idle_acct_since;
      k.idle_acct_since = now_ns();
    }
  }
  update_wasted();
}

std::string Kernel::check_invariants() const {
  std::ostringstream err;
  for (int c = 0; c < nr_cpus(); ++c) {
    const auto& a = cpu(c).acct;
    if (a.total() != now_ns())
      err << "cpu" << c << ": user+kernel+spin+idle = " << a.total() << " ns != elapsed "
          << now_ns() << " ns; ";
    // update_rq_clock_task(): the task clock is the rq clock less the
    // interrupt time taken out, which is never more than was accounted.
    const Cpu& k = cpu(c);
    if (k.rq_clock_task + k.prev_irq_time != k.rq_clock)
      err << "cpu" << c << ": rq_clock_task " << k.rq_clock_task << " + irq time taken out " << k.prev_irq_time
          << " != rq_clock " << k.rq_clock << "; ";
    if (k.prev_irq_time > irq_time_read(c))
      err << "cpu" << c << ": irq time taken out " << k.prev_irq_time << " > run " << irq_time_read(c) << "; ";
    // A pick deferred past an interrupt's work waits on that work's segment.
    if (k.pick_after_irq && (k.curr || !k.armed)) err << "cpu" << c << ": a pick after an interrupt, not in one; ";
    if (k.idle_exit_paid && (k.curr || !k.irq_from_idle))
      err << "cpu" << c << ": the idle loop's way out paid, not in it; ";
  }
  for (const Task* t : task_ptrs_) {
    // A wakee being placed is off every queue while its waker, which cannot
    // be preempted there, runs try_to_wake_up().
    if (t->waking && !cpu(t->waker_cpu).curr) err << "task " << t->comm << "-" << t->pid << " waking with no waker; ";
    if (t->state == TaskState::Running && !t->on_rq && !t->waking) {
      bool on_list = false;
      for (const auto& k : cpus_)
        on_list |= std::find(k.wake_list.begin(), k.wake_list.end(), t) != k.wake_list.end();
      if (!on_list) err << "task " << t->comm << "-" << t->pid << " runnable but not queued (lost wakeup); ";
    }
    if (t->state == TaskState::Dead && t->on_rq) err << "dead task " << t->pid << " still queued; ";
  }
  err << policy_->check_invariants();
  return err.str();
}

}  // namespace kernel
