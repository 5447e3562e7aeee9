// v4.0 kernel/sched/core.c, fair.c, sched.h and stats.h, as read for the
// ttwu_lines what-if (see the header for the lines and the costing).
#include "kernel/sched_lines.hpp"

#include <algorithm>
#include <initializer_list>

namespace kernel::sched_lines {

namespace {
// One step: independent accesses that overlap; it costs the dearest.
int64_t step(std::initializer_list<int64_t> accesses) { return std::max(accesses); }

// try_to_wake_up() up to ttwu_queue(), in both paths. Returns the stall;
// `buffered` gets the transfer of the stores left in the store buffer,
// which the path's next locked instruction waits for.
int64_t wake_prefix(const hw::Machine& m, const Wakeup& w, int64_t& buffered) {
  // raw_spin_lock_irqsave(&p->pi_lock): locked. The line bounces because
  // the wakee's sched_submit_work() reads pi_blocked_on and plug in it.
  int64_t ns = w.p.pi_lock.write(m, w.waker);
  // p->state, p->on_rq, the on_cpu spin, and task_waking_fair()'s
  // cfs_rq->min_vruntime: independent loads.
  ns += step({w.p.state.read(m, w.waker), w.p.on_rq.read(m, w.waker), w.from.cfs.read(m, w.waker)});
  // task_cpu(p) = task_thread_info(p)->cpu, through p->stack.
  ns += w.p.thread_info.read(m, w.waker);
  // p->state = TASK_WAKING; task_waking_fair(): se->vruntime -= min_vruntime.
  buffered = step({w.p.state.write(m, w.waker), w.p.se.write(m, w.waker)});
  if (w.migrating) {
    // set_task_cpu(): migrate_task_rq_fair()'s atomic_long_add() to the old
    // queue's removed_load drains the stores; __set_task_cpu() stores
    // ti->cpu, wake_cpu and se.cfs_rq.
    ns += step({w.from.load.write(m, w.waker), buffered});
    buffered = step({w.p.thread_info.write(m, w.waker), w.p.on_rq.write(m, w.waker), w.p.links.write(m, w.waker)});
  }
  return ns;
}
}  // namespace

int64_t wake_by_queue(const hw::Machine& m, const Wakeup& w, bool first_on_list, bool reads_idle_flags) {
  int64_t buffered = 0;
  int64_t ns = wake_prefix(m, w, buffered);
  // llist_add(&p->wake_entry, &rq->wake_list): the cmpxchg drains the stores.
  ns += step({w.target.wake_list.write(m, w.waker), w.p.state.write(m, w.waker), buffered});
  if (first_on_list && reads_idle_flags) {
    // set_nr_if_polling(rq->idle): rq->idle, then the idle task's stack
    // pointer to find its thread_info (whose flags kick_cpu() charges).
    ns += w.target.curr.read(m, w.waker);
    ns += w.target.idle_task.read(m, w.waker);
  }
  w.p.links.write(m, w.waker);  // ttwu_stat(), after the wake signal
  return ns;
}

int64_t wake_by_enqueue(const hw::Machine& m, const Wakeup& w, TaskLines* curr) {
  int64_t buffered = 0;
  int64_t ns = wake_prefix(m, w, buffered);
  // raw_spin_lock(&rq->lock): locked, drains the stores.
  ns += step({w.target.lock.write(m, w.waker), buffered});
  // update_rq_clock(), enqueue_task_fair() (the load sums and
  // update_rq_runnable_avg(), min_vruntime and the timeline, the wakee's
  // weight, run_node, statistics and sched_info) and check_preempt_curr()'s
  // rq->curr: fixed offsets in the rq and the task, so independent.
  ns += step({w.target.clock.write(m, w.waker), w.target.load.write(m, w.waker), w.target.cfs.write(m, w.waker),
              w.p.on_rq.write(m, w.waker), w.p.stats.write(m, w.waker), w.target.curr.read(m, w.waker)});
  w.p.state.write(m, w.waker);  // ttwu_do_wakeup(): p->state = TASK_RUNNING (owned)
  // Through rq->curr: resched_curr() reads the idle task's thread_info via
  // its stack pointer; check_preempt_wakeup() the running task's entity.
  ns += curr ? curr->se.read(m, w.waker) : w.target.idle_task.read(m, w.waker);
  w.p.links.write(m, w.waker);  // ttwu_stat(), after the wake signal
  return ns;
}

int64_t take_wake_list(const hw::Machine& m, int cpu, RqLines& rq) {
  return rq.wake_list.write(m, cpu);  // idle_set_state(NULL), llist_del_all(): xchg
}

int64_t activate_queued(const hw::Machine& m, int cpu, TaskLines& p, RqLines& rq) {
  // The wake entry, and the enqueue's lines whose addresses come from it
  // as well: se->vruntime += min_vruntime, cfs_rq_of(se), the statistics;
  // the runqueue's own lines are this CPU's, but for the cfs_rq line the
  // waker read.
  int64_t ns = step({p.state.read(m, cpu), p.se.write(m, cpu), p.links.read(m, cpu), p.stats.write(m, cpu),
                     rq.lock.write(m, cpu), rq.load.write(m, cpu), rq.cfs.write(m, cpu)});
  // p->on_rq = 1 and p->state = TASK_RUNNING on lines the waker read or
  // wrote: buffered, drained by __schedule()'s raw_spin_lock_irq(), next.
  ns += step({p.on_rq.write(m, cpu), p.state.write(m, cpu)});
  return ns;
}

int64_t deschedule(const hw::Machine& m, int cpu, TaskLines& prev, bool sleeps, RqLines& rq) {
  int64_t ns = 0;
  if (sleeps) {
    ns += prev.state.write(m, cpu);     // set_current_state(): xchg, in its wait loop
    ns += prev.pi_lock.read(m, cpu);    // sched_submit_work(): pi_blocked_on, plug
  }
  ns += rq.lock.write(m, cpu);          // raw_spin_lock_irq(&rq->lock)
  // update_rq_clock(), and cfs_rq_of(se) for the dequeue or put_prev_entity().
  ns += step({rq.clock.write(m, cpu), prev.links.read(m, cpu)});
  int64_t buffered = 0;
  if (sleeps) {
    // dequeue_task_fair() and p->on_rq = 0.
    ns += step({rq.load.write(m, cpu), rq.cfs.write(m, cpu), prev.se.write(m, cpu), prev.stats.write(m, cpu)});
    buffered = prev.on_rq.write(m, cpu);
  } else {
    ns += step({rq.cfs.write(m, cpu), prev.se.write(m, cpu)});  // put_prev_entity()
  }
  // clear_tsk_need_resched(prev): a locked btr, which drains the stores.
  ns += step({prev.thread_info.write(m, cpu), buffered});
  // rq->curr = next and finish_lock_switch()'s prev->on_cpu = 0: drained
  // while the CPU goes on.
  rq.curr.write(m, cpu);
  prev.state.write(m, cpu);
  return ns;
}

int64_t switch_in(const hw::Machine& m, int cpu, TaskLines& next, bool from_idle, RqLines& rq) {
  int64_t ns = rq.lock.write(m, cpu);  // the pick holds rq->lock
  // update_rq_clock(), pick_next_task_fair(): nr_running, rb_leftmost.
  ns += step({rq.clock.write(m, cpu), rq.cfs.write(m, cpu), rq.load.write(m, cpu)});
  // Through rb_leftmost: __dequeue_entity() of next's run_node,
  // set_next_entity(), sched_info_arrive(), lines an enqueuing waker wrote.
  ns += step({next.on_rq.read(m, cpu), next.se.write(m, cpu), next.stats.write(m, cpu)});
  // rq->curr = next, next->on_cpu = 1, the idle task's on_cpu = 0: drained
  // while next runs.
  rq.curr.write(m, cpu);
  next.state.write(m, cpu);
  if (from_idle) rq.idle_task.write(m, cpu);
  return ns;
}

}  // namespace kernel::sched_lines
