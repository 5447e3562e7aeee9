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

#include "hw/machine.hpp"
#include "kernel/kernel.hpp"

namespace kernel {
namespace {

constexpr int PROC_CHANGE_PENALTY = 15;  // include/asm-i386/smp.h

class Linux24 final : public SchedClass {
 public:
  explicit Linux24(SchedCore& core) : core_(core), last_schedule_(static_cast<size_t>(core.nr_cpus()), 0) {}
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
    core_.lock_rq(-1, core_.this_cpu(), core_.machine().costs().rq_lock_hold, CostPath::RqLock);
    // add_to_runqueue(): list_add() at the head, "to the _beginning_ of the
    // run-queue, not the end" (2.4.19 sched.c; 2.4.20 moved it to the tail).
    // goodness() ties go to the first found, so the newest wakee wins them.
    runqueue_.push_front(p);
    write_line(p, core_.this_cpu());
  }
  void dequeue_task(int, Task* p, int) override {
    runqueue_.remove(p);  // del_from_runqueue() from schedule(), lock already held
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
    if (wake_flags & WF_FORK) {
      reschedule_idle(p);  // wake_up_process(child) is asynchronous
      return;
    }
    if (!sync || !p->cpus_allowed.test(core_.this_cpu())) reschedule_idle(p);
  }

  Task* pick_next_task(int cpu, Task* prev, bool) override {
    const auto& costs = core_.machine().costs();
    Task* next = nullptr;
    int64_t scanned = 0;
    int64_t miss_ns = 0;
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
    // The scan runs with runqueue_lock held: its length is the hold time.
    core_.lock_rq(-1, cpu, costs.rq_lock_hold + scanned * costs.pick_scan_per_task + miss_ns, CostPath::Schedule);
    scanned_total_ += scanned;
    scan_miss_ns_ += miss_ns;
    last_schedule_[static_cast<size_t>(cpu)] = core_.now_ns();
    if (next) {
      if (next->cpu != cpu) core_.set_task_cpu(next, cpu);
      running_on_[next] = cpu;
      write_line(next, cpu);  // task_set_cpu(): processor, cpus_runnable
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
  void schedule_tail(int, Task* prev) override {
    // "prev->policy &= ~SCHED_YIELD" after the yielder has been passed over.
    const bool yielded = std::exchange(prev->yielded, false);
    if (!core_.config().feat("SCHEDULE_TAIL_PUSH")) return;
    if (prev->state != TaskState::Running || yielded || prev->on_cpu) return;
    core_.lock_rq(-1, core_.this_cpu(), core_.machine().costs().rq_lock_hold, CostPath::RqLock);
    reschedule_idle(prev);
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
  // Returns the cost of reading the line on `cpu`.
  int64_t read_line(const Task* p, int cpu) {
    Line& l = lines_[p];
    if (l.owner < 0 || l.cached_on.test(cpu)) return 0;
    l.cached_on.set(cpu);
    return core_.machine().line_transfer(l.owner, cpu);
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
  void reschedule_idle(Task* p) {
    int best_cpu = p->processor;
    if (p->cpus_allowed.test(best_cpu) && core_.running_idle_task(best_cpu)) {
      core_.resched_curr(best_cpu);
      return;
    }
    int64_t oldest_idle = INT64_MAX;
    int target = -1;
    int max_prio = 0;
    for (int cpu = 0; cpu < core_.nr_cpus(); ++cpu) {
      if (!p->cpus_allowed.test(cpu)) continue;
      Task* tsk = core_.curr(cpu);
      if (core_.running_idle_task(cpu)) {
        if (last_schedule_[static_cast<size_t>(cpu)] < oldest_idle) {
          oldest_idle = last_schedule_[static_cast<size_t>(cpu)];
          target = cpu;
        }
      } else if (oldest_idle == INT64_MAX && tsk) {
        const int prio = preemption_goodness(tsk, p, cpu);
        if (prio > max_prio) {
          max_prio = prio;
          target = cpu;
        }
      }
    }
    if (target >= 0) core_.resched_curr(target);
  }

  SchedCore& core_;
  std::list<Task*> runqueue_;
  std::map<const Task*, int> running_on_;
  std::vector<int64_t> last_schedule_;
  int64_t epochs_ = 0;
  int64_t scanned_total_ = 0;
  int64_t scan_miss_ns_ = 0;
  std::map<const Task*, Line> lines_;
};

}  // namespace

std::unique_ptr<SchedClass> make_linux24(SchedCore& core) { return std::make_unique<Linux24>(core); }

}  // namespace kernel
