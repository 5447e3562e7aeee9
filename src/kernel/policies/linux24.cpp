// The Linux 2.4 scheduler (kernel/sched.c, 2.4.18/2.4.19).
//
// What it is: one global runqueue (a FIFO list of every runnable task,
// including the ones currently running) under one global runqueue_lock.
// schedule() scans the whole list and runs the task with the best
// goodness(): remaining time slice (counter) + 20 - nice, +15
// (PROC_CHANGE_PENALTY) for the CPU it last ran on, +1 for the same address
// space. When every schedulable candidate has used up its slice, a new epoch
// recalculates counter = counter/2 + NICE_TO_TICKS(nice) over every task in
// the system. Wakeups append to the list and call reschedule_idle(), which
// kicks the task's last CPU if idle, else the longest-idle CPU, else preempts
// the CPU running the weakest task; a sync wakeup (pipes) skips all of that
// so the waker's CPU picks the wakee when it blocks. A preempted task is
// offered to another CPU from __schedule_tail(). The tick decrements counter.
//
// Costs: the scan costs pick_scan_per_task per list entry, plus a cache-line
// transfer for every task_struct last written by another CPU (the task ran,
// was woken or had its counter changed there): the scan reads every runnable
// task's line, so on an SMP box most of them are remote. The scan is done
// with the global lock held, so other CPUs' wakeups and schedules spin
// behind it; the epoch recalculation writes every task in the system.
//
// With the ttwu_lines switch it charges the rest of the scheduler's own
// lines as 2.4.19's sched.c loads and stores them (i386, 64-byte lines, a
// Pentium 4 build: include/linux/sched.h's task_struct gives each task a
// goodness line, the one above, and a line with run_list.prev, sleep_time
// and active_mm, and alloc_lock on a third): runqueue_lock alone on its
// line, runqueue_head, nr_running, each CPU's aligned_data (curr and
// last_schedule), each idle task's need_resched, kstat.context_swtch. They
// follow hw::LineStalls' rule, and those touched under runqueue_lock
// lengthen its hold, stores included (the unlock is a plain store that
// becomes visible after them). Left out: jiffies (sleep_time's load), the
// mm lines of switch_mm() (its locked bit operation only drains the store
// buffer), the thread and stack lines of switch_to(), sys_sched_yield()'s
// lines, the idle CPU's taking back its need_resched line (kick_cpu()'s
// flat store stands for the exchange, as for CFS).
//
// Where it falls short: no RT policies or SCHED_YIELD corner cases beyond a
// one-pass goodness of -1; the BKL is not modelled; the recalculation runs
// under the global lock rather than tasklist_lock (it only matters when
// several CPUs recalculate at once); the i386 HT idle-sibling preference in
// reschedule_idle() is omitted (the 2.4 boxes modelled have no SMT).
#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "hw/cache_line.hpp"
#include "hw/machine.hpp"
#include "kernel/kernel.hpp"

namespace kernel {
namespace {

constexpr int PROC_CHANGE_PENALTY = 15;  // include/asm-i386/smp.h

class Linux24 final : public SchedClass {
 public:
  explicit Linux24(SchedCore& core)
      : core_(core),
        last_schedule_(static_cast<size_t>(core.nr_cpus()), 0),
        sched_lines_(core.config().sysctl("ttwu_lines") != 0),
        sched_data_lines_(static_cast<size_t>(core.nr_cpus())),
        idle_need_resched_lines_(static_cast<size_t>(core.nr_cpus())) {}
  std::string name() const override { return "linux24"; }

  // NICE_TO_TICKS(nice) = TICK_SCALE(20 - nice) + 1, TICK_SCALE per HZ.
  int nice_to_ticks(int nice) const {
    const int x = 20 - nice;
    const int hz = core_.config().hz();
    int scaled = hz < 200 ? x >> 2 : hz < 400 ? x >> 1 : hz < 800 ? x : hz < 1600 ? x << 1 : x << 2;
    return scaled + 1;
  }

  void task_fork(Task* p) override {
    // do_fork(): p->counter = (current->counter + 1) >> 1; current->counter >>= 1.
    Task* parent = p->parent;
    if (!parent) {
      p->counter = nice_to_ticks(p->nice);
      return;
    }
    p->counter = (parent->counter + 1) >> 1;
    parent->counter >>= 1;
    if (parent->counter == 0 && core_.curr(parent->cpu) == parent) core_.resched_curr(parent->cpu);
    p->processor = parent->processor;
  }

  int select_task_rq(Task* p, int prev_cpu, uint32_t, int) override {
    // 2.4 does not place tasks: the global list serves every CPU.
    (void)p;
    return prev_cpu;
  }
  void migrate_task_rq(Task*, int) override {}

  void enqueue_task(int, Task* p, int) override {
    const int w = core_.this_cpu();
    const int64_t lines = sched_lines_ ? add_to_runqueue_lines(p, w) : 0;
    core_.lock_rq(-1, w, core_.machine().costs().rq_lock_hold + lines, CostPath::RqLock);
    // add_to_runqueue(): list_add() at the head, "to the _beginning_ of the
    // run-queue, not the end" (2.4.19 sched.c; 2.4.20 moved it to the tail).
    // goodness() ties go to the first found, so the newest wakee wins them.
    runqueue_.push_front(p);
    write_line(p, w);
  }
  void dequeue_task(int, Task* p, int flags) override {
    // del_from_runqueue() from schedule(), lock already held: its lines are
    // charged in pick_next_task(), in the hold. (Other dequeues, such as an
    // affinity change's, are not a sleep and charge none.)
    auto it = std::find(runqueue_.begin(), runqueue_.end(), p);
    if (it == runqueue_.end()) return;
    if (flags & DEQUEUE_SLEEP)
      dequeued_ = {p, it == runqueue_.begin() ? nullptr : *std::prev(it),
                   std::next(it) == runqueue_.end() ? nullptr : *std::next(it)};
    runqueue_.erase(it);
  }

  void yield_task(int cpu) override {
    Task* curr = core_.curr(cpu);
    if (!curr) return;
    // sys_sched_yield(): only if others wait; then move_last_runqueue().
    int running = 0;
    for (int c = 0; c < core_.nr_cpus(); ++c) running += core_.curr(c) != nullptr;
    if (static_cast<int>(runqueue_.size()) - running <= 0) return;
    curr->yielded = true;
    core_.lock_rq(-1, cpu, core_.machine().costs().rq_lock_hold, CostPath::RqLock);
    runqueue_.remove(curr);
    runqueue_.push_back(curr);
  }

  // try_to_wake_up() tail: if (!synchronous || !(p->cpus_allowed & this_cpu)) reschedule_idle(p).
  void check_preempt_curr(int cpu, Task* p, int wake_flags) override {
    (void)cpu;
    const bool sync = (wake_flags & WF_SYNC) && core_.config().feat("SYNC_WAKEUPS");
    // wake_up_process(child) is asynchronous.
    if ((wake_flags & WF_FORK) || !sync || !p->cpus_allowed.test(core_.this_cpu())) reschedule_idle(p);
    if (sched_lines_) release_lock_lines(core_.this_cpu(), CostPath::Wakeup);  // spin_unlock_irqrestore()
  }

  Task* pick_next_task(int cpu, Task* prev, bool) override {
    const auto& costs = core_.machine().costs();
    Task* next = nullptr;
    int64_t scanned = 0;
    int64_t miss_ns = sched_lines_ ? schedule_entry_lines(cpu, prev) : 0;
    for (;;) {  // repeat_schedule:
      int c = -1000;
      next = nullptr;
      for (Task* p : runqueue_) {
        ++scanned;
        miss_ns += read_line(p, cpu);
        if (!can_schedule(p, cpu, prev)) continue;
        const int w = goodness(p, cpu, prev);
        if (w > c) {
          c = w;
          next = p;
        }
      }
      if (c != 0) break;
      // New epoch: recalculate counters of every task in the system.
      ++epochs_;
      int64_t all = 0;
      for (Task* t : core_.all_tasks()) {
        if (t->state == TaskState::Dead) continue;
        t->counter = (t->counter >> 1) + nice_to_ticks(t->nice);
        miss_ns += read_line(t, cpu);
        write_line(t, cpu);
        ++all;
      }
      core_.charge(cpu, all * costs.pick_scan_per_task, CostPath::Schedule);
    }
    int64_t pick_lines = 0;
    if (sched_lines_) {
      // sched_data->curr = next; task_set_cpu(next): processor, cpus_runnable.
      const auto& m = core_.machine();
      stalls_.store(std::max(sched_data_lines_[static_cast<size_t>(cpu)].write(m, cpu),
                             next ? store_line(next, cpu) : 0));
      // spin_unlock_irq(): a plain store, visible after those before it.
      pick_lines = stalls_.take_stall() + std::exchange(stalls_.buffered, 0);
    }
    // The scan runs with runqueue_lock held: its length is the hold time.
    core_.lock_rq(-1, cpu, costs.rq_lock_hold + scanned * costs.pick_scan_per_task + miss_ns + pick_lines,
                  CostPath::Schedule);
    scanned_total_ += scanned;
    scan_miss_ns_ += miss_ns;
    last_schedule_[static_cast<size_t>(cpu)] = core_.now_ns();
    if (next) {
      if (next->cpu != cpu) core_.set_task_cpu(next, cpu, "schedule_pick");
      running_on_[next] = cpu;
      write_line(next, cpu);  // task_set_cpu(): processor, cpus_runnable
      // From the idle task, which __schedule_tail() leaves at once.
      if (sched_lines_ && !prev) core_.charge(cpu, switch_lines(cpu, next), CostPath::ContextSwitch);
    }
    return next;
  }

  void put_prev_task(int, Task* prev) override { running_on_.erase(prev); }
  void set_curr_task(int cpu, Task* p) override { running_on_[p] = cpu; }

  // update_process_times(): --counter; need_resched when it reaches 0.
  void task_tick(int cpu, Task* curr) override {
    write_line(curr, cpu);
    if (--curr->counter <= 0) {
      curr->counter = 0;
      core_.resched_curr(cpu);
    }
  }
  void trigger_load_balance(int) override {}  // 2.4 has no balancer: the global queue is the balance

  // __schedule_tail(): a preempted, still runnable task is offered to
  // another CPU through reschedule_idle().
  void schedule_tail(int cpu, Task* prev) override {
    if (sched_lines_) core_.charge(cpu, switch_lines(cpu, core_.curr(cpu)) + schedule_tail_lines(cpu, prev),
                                   CostPath::ContextSwitch);
    // "prev->policy &= ~SCHED_YIELD" after the yielder has been passed over.
    const bool yielded = std::exchange(prev->yielded, false);
    if (!core_.config().feat("SCHEDULE_TAIL_PUSH")) return;
    if (prev->state != TaskState::Running || yielded || prev->on_cpu) return;
    int64_t lines = 0;
    if (sched_lines_) {
      stalls_.locked(lock_line_.write(core_.machine(), cpu));  // spin_lock_irqsave(&runqueue_lock)
      lines = stalls_.take_stall();
    }
    core_.lock_rq(-1, core_.this_cpu(), core_.machine().costs().rq_lock_hold + lines, CostPath::RqLock);
    reschedule_idle(prev);
    if (sched_lines_) release_lock_lines(cpu, CostPath::RqLock);
  }

  void task_dead(Task* p) override {
    // release_task(): the parent gets the child's remaining ticks back.
    // (Done at exit rather than when the parent reaps it; the counter is the
    // same unless the parent's epoch changes in between.)
    if (p->parent) p->parent->counter = std::min(p->parent->counter + p->counter, 20 * core_.config().hz() / 100);
  }

  // Tasks on the global list that this CPU could pick now.
  int nr_running(int cpu) const override {
    int n = 0;
    for (const Task* p : runqueue_)
      if (p->cpus_allowed.test(cpu) && !running_on_.count(p)) ++n;
    return n;
  }

  std::string check_invariants() const override {
    std::ostringstream err;
    std::map<const Task*, int> seen;
    for (const Task* t : runqueue_) {
      if (seen[t]++) err << "task " << t->pid << " on the runqueue twice; ";
      if (t->state != TaskState::Running) err << "sleeping task " << t->pid << " on the runqueue; ";
    }
    for (const Task* t : core_.all_tasks())
      if (t->on_rq && !seen.count(t)) err << "task " << t->pid << " on_rq but not on the runqueue; ";
    return err.str();
  }

  std::vector<std::pair<std::string, int64_t>> stats() const override {
    return {{"epochs", epochs_},
            {"goodness_evaluations", scanned_total_},
            {"scan_line_miss_us", scan_miss_ns_ / 1000}};
  }

 private:
  // Which CPUs hold a task_struct's scheduling cache line (MESI, simplified:
  // a write leaves it only in the writer's cache).
  struct Line {
    hw::CpuMask cached_on;
    int owner = -1;
  };
  void write_line(const Task* p, int cpu) {
    Line& l = lines_[p];
    l.cached_on = hw::CpuMask{};
    l.cached_on.set(cpu);
    l.owner = cpu;
  }
  // The copy a fetch on `cpu` takes its data from, for the tally of lines
  // moved (the cost is the owner's, as before the tally).
  int nearest_copy(const Line& l, int cpu) const {
    int source = l.owner;
    for (int c = 0; c < core_.nr_cpus(); ++c)
      if (c != cpu && l.cached_on.test(c) &&
          core_.machine().line_transfer(c, cpu) < core_.machine().line_transfer(source, cpu))
        source = c;
    return source;
  }
  // Returns the cost of reading the line on `cpu`.
  int64_t read_line(const Task* p, int cpu) {
    Line& l = lines_[p];
    if (l.owner < 0 || l.cached_on.test(cpu)) return 0;
    core_.machine().count_lines_moved(nearest_copy(l, cpu), cpu, 1);
    l.cached_on.set(cpu);
    return core_.machine().line_transfer(l.owner, cpu);
  }
  // Returns the cost of a store to it on `cpu`: the farthest other copy
  // (hw::CacheLine's rule), then it is `cpu`'s alone.
  int64_t store_line(const Task* p, int cpu) {
    const Line& l = lines_[p];
    if (l.owner >= 0 && !l.cached_on.test(cpu)) core_.machine().count_lines_moved(nearest_copy(l, cpu), cpu, 1);
    int64_t farthest = 0;
    for (int c = 0; c < core_.nr_cpus(); ++c)
      if (c != cpu && l.cached_on.test(c)) farthest = std::max(farthest, core_.machine().line_transfer(c, cpu));
    write_line(p, cpu);
    return farthest;
  }

  // ---- the ttwu_lines switch (see the header) ----
  hw::CacheLine& links(const Task* p) { return task_lines_[p].links; }
  // try_to_wake_up() up to add_to_runqueue(), on the waker `w`; returns
  // the stall inside the lock. __wake_up_common()'s load of p->state (or
  // task_on_runqueue()'s of run_list.next) comes before the lock.
  int64_t add_to_runqueue_lines(Task* p, int w) {
    const auto& m = core_.machine();
    core_.charge(w, read_line(p, w), CostPath::Wakeup);
    stalls_.locked(lock_line_.write(m, w));  // spin_lock_irqsave(&runqueue_lock)
    stalls_.store(store_line(p, w));         // p->state = TASK_RUNNING
    // list_add(&p->run_list, &runqueue_head): head->next; nr_running++.
    stalls_.load(std::max(head_line_.read(m, w), nr_running_line_.read(m, w)));
    // The old first task's run_list.prev (the head's when none), p's
    // run_list.prev, head->next, nr_running.
    Task* first = runqueue_.empty() ? nullptr : runqueue_.front();
    stalls_.store(std::max({first ? links(first).write(m, w) : head_line_.write(m, w), links(p).write(m, w),
                            head_line_.write(m, w), nr_running_line_.write(m, w)}));
    return stalls_.take_stall();
  }
  // The unlock of runqueue_lock: what the holder stalled on since, and the
  // stores it leaves buffered, lengthen the hold (kernel.cpp's lock_rq()
  // extends the holder's own).
  void release_lock_lines(int cpu, CostPath path) {
    const int64_t ns = stalls_.take_stall() + std::exchange(stalls_.buffered, 0);
    if (ns) core_.lock_rq(-1, cpu, ns, path);
  }
  // schedule() on `cpu` up to the goodness loop: a sleeping prev's state
  // store (pipe_wait()'s, before schedule()); this_cpu = prev->processor;
  // then under the lock del_from_runqueue() (nr_running, prev's
  // run_list.prev and sleep_time, the neighbours' links or the head),
  // prev->need_resched = 0, and runqueue_head's next. Returns the stall
  // inside the lock, for the hold.
  int64_t schedule_entry_lines(int cpu, Task* prev) {
    const auto& m = core_.machine();
    const bool sleeps = prev && dequeued_.prev == prev;
    if (sleeps) stalls_.store(store_line(prev, cpu));
    if (prev) stalls_.load(read_line(prev, cpu));
    core_.charge(cpu, stalls_.take_stall(), CostPath::Schedule);
    stalls_.locked(lock_line_.write(m, cpu));  // spin_lock_irq(&runqueue_lock)
    if (sleeps) {
      stalls_.load(std::max(nr_running_line_.read(m, cpu), links(prev).read(m, cpu)));
      Task* pred = dequeued_.pred;
      Task* succ = dequeued_.succ;
      stalls_.store(std::max({nr_running_line_.write(m, cpu), links(prev).write(m, cpu),
                              succ ? links(succ).write(m, cpu) : head_line_.write(m, cpu),
                              pred ? store_line(pred, cpu) : head_line_.write(m, cpu), store_line(prev, cpu)}));
    }
    dequeued_ = {};
    if (prev) stalls_.store(store_line(prev, cpu));
    else (void)idle_need_resched_lines_[static_cast<size_t>(cpu)].write(m, cpu);
    stalls_.load(head_line_.read(m, cpu));  // list_for_each(): head->next
    return stalls_.take_stall();
  }
  // After the unlock, for a real switch to `next` (null: the idle task):
  // last_schedule and kstat.context_swtch; switch_mm()'s locked bit
  // operation (or the lazy-TLB atomic_inc()) drains them;
  // BUG_ON(next->active_mm != mm) loads next's second line.
  int64_t switch_lines(int cpu, Task* next) {
    const auto& m = core_.machine();
    stalls_.load(kstat_line_.read(m, cpu));
    stalls_.store(std::max(sched_data_lines_[static_cast<size_t>(cpu)].write(m, cpu), kstat_line_.write(m, cpu)));
    stalls_.locked(0);
    if (next) stalls_.load(links(next).read(m, cpu));
    return stalls_.take_stall();
  }
  // __schedule_tail(prev): prev->policy &= ~SCHED_YIELD; task_lock(prev);
  // task_release_cpu(prev); mb(), which waits for that store; and
  // task_unlock()'s plain store at the end, left buffered.
  int64_t schedule_tail_lines(int cpu, Task* prev) {
    const auto& m = core_.machine();
    stalls_.store(store_line(prev, cpu));
    stalls_.locked(task_lines_[prev].alloc.write(m, cpu));
    stalls_.store(store_line(prev, cpu));
    stalls_.locked(0);
    (void)task_lines_[prev].alloc.write(m, cpu);
    return stalls_.take_stall();
  }

  // can_schedule(p, cpu): not running on another CPU, allowed here.
  bool can_schedule(const Task* p, int cpu, const Task* prev) const {
    if (!p->cpus_allowed.test(cpu)) return false;
    auto it = running_on_.find(p);
    if (it != running_on_.end() && it->second != cpu) return false;
    return p != prev || p->state == TaskState::Running;
  }

  // goodness(p, this_cpu, this_mm)
  int goodness(const Task* p, int this_cpu, const Task* prev) const {
    if (p->yielded) return -1;
    int w = p->counter;
    if (w == 0) return 0;
    if (p->processor == this_cpu) w += PROC_CHANGE_PENALTY;
    if (prev && (p->tgid == prev->tgid)) w += 1;  // same mm
    w += 20 - p->nice;
    return w;
  }

  int preemption_goodness(const Task* curr, const Task* p, int cpu) const {
    return goodness(p, cpu, curr) - goodness(curr, cpu, curr);
  }

  // reschedule_idle(p): find a CPU for a newly runnable task.
  // With ttwu_lines: cpu_curr() of p's last CPU (its aligned_data line);
  // when that CPU idles, send_now_idle's load of its idle task's
  // need_resched, whose store kick_cpu() charges. Otherwise the scan's
  // cpu_curr() and last_schedule() of every allowed CPU, independent loads,
  // then, through them, the goodness fields and active_mm of each busy
  // CPU's task met before the first idle CPU, one step too.
  void reschedule_idle(Task* p) {
    const int w = core_.this_cpu();
    const auto& m = core_.machine();
    int best_cpu = p->processor;
    if (sched_lines_) stalls_.load(sched_data_lines_[static_cast<size_t>(best_cpu)].read(m, w));
    if (p->cpus_allowed.test(best_cpu) && core_.running_idle_task(best_cpu)) {
      if (sched_lines_) send_now_idle_lines(best_cpu, w);
      core_.resched_curr(best_cpu);
      return;
    }
    int64_t oldest_idle = INT64_MAX;
    int target = -1;
    int max_prio = 0;
    int64_t sched_data = 0, currents = 0;
    for (int cpu = 0; cpu < core_.nr_cpus(); ++cpu) {
      if (!p->cpus_allowed.test(cpu)) continue;
      Task* tsk = core_.curr(cpu);
      if (sched_lines_) sched_data = std::max(sched_data, sched_data_lines_[static_cast<size_t>(cpu)].read(m, w));
      if (core_.running_idle_task(cpu)) {
        if (last_schedule_[static_cast<size_t>(cpu)] < oldest_idle) {
          oldest_idle = last_schedule_[static_cast<size_t>(cpu)];
          target = cpu;
        }
      } else if (oldest_idle == INT64_MAX && tsk) {
        if (sched_lines_) currents = std::max({currents, read_line(tsk, w), links(tsk).read(m, w)});
        const int prio = preemption_goodness(tsk, p, cpu);
        if (prio > max_prio) {
          max_prio = prio;
          target = cpu;
        }
      }
    }
    if (sched_lines_) {
      stalls_.load(sched_data);
      stalls_.load(currents);
      if (target >= 0 && core_.running_idle_task(target)) send_now_idle_lines(target, w);
      if (target >= 0 && !core_.running_idle_task(target)) write_line(core_.curr(target), w);  // tsk->need_resched = 1
    }
    if (target >= 0) core_.resched_curr(target);
  }
  // send_now_idle: need_resched = tsk->need_resched; tsk->need_resched = 1.
  void send_now_idle_lines(int cpu, int w) {
    auto& line = idle_need_resched_lines_[static_cast<size_t>(cpu)];
    stalls_.load(line.read(core_.machine(), w));
    (void)line.write(core_.machine(), w);
  }

  SchedCore& core_;
  std::list<Task*> runqueue_;
  std::map<const Task*, int> running_on_;
  std::vector<int64_t> last_schedule_;
  int64_t epochs_ = 0;
  int64_t scanned_total_ = 0;
  int64_t scan_miss_ns_ = 0;
  std::map<const Task*, Line> lines_;
  // The ttwu_lines switch.
  bool sched_lines_;
  struct TaskLines24 {
    hw::CacheLine links;  // run_list.prev, sleep_time, next_task/prev_task, active_mm
    hw::CacheLine alloc;  // alloc_lock's line
  };
  std::map<const Task*, TaskLines24> task_lines_;
  hw::CacheLine lock_line_, head_line_, nr_running_line_, kstat_line_;
  std::vector<hw::CacheLine> sched_data_lines_;         // aligned_data[cpu]
  std::vector<hw::CacheLine> idle_need_resched_lines_;  // each idle task's goodness line
  hw::LineStalls stalls_;  // the path in progress on the CPU that runs
  struct Dequeued {
    Task* prev = nullptr;
    Task* pred = nullptr;
    Task* succ = nullptr;
  } dequeued_;  // del_from_runqueue()'s, for the pick that follows
};

}  // namespace

std::unique_ptr<SchedClass> make_linux24(SchedCore& core) { return std::make_unique<Linux24>(core); }

}  // namespace kernel
