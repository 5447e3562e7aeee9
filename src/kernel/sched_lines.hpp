// The ttwu_lines switch on the CFS presets (on by default; 2.4's is in
// policies/linux24.cpp): the scheduler's own cache lines on the wake-up
// and switch paths. Without it the model charges a wakeup's fixed costs
// (ttwu_base, rq_lock_hold, the IPI) but no coherence traffic for the
// task_struct and runqueue it touches, so a remote enqueue costs what a local one does. TTWU_QUEUE
// exists because it does not: "This avoids having to take rq->lock and
// doing the task enqueue remotely, saving lots on cacheline transfers"
// (commit 317f394160e9, "sched: Move the second half of ttwu() to the remote
// cpu", 3.0).
//
// The lines, from v4.0's struct layouts as compiled for x86_64 defconfig
// (struct offsets read from DWARF; task_struct is 2304 bytes there, so its
// lines are exact; the idle task of CPU 0 is static and may differ):
//   task  state       L0: state, stack, wake_entry, on_cpu
//         thread_info the thread_info: flags, cpu, saved_preempt_count
//         on_rq       L1: on_rq, wake_cpu, sched_class, se.load, run_node's parent
//         se          L2: se.run_node, se.on_rq, exec_start, vruntime
//         links       L6: se.cfs_rq, se.parent, the nr_wakeups_* statistics
//         stats       L3, L4, L7, L12 as one: se.statistics, se.avg, sched_info
//         pi_lock     L29: pi_lock, pi_blocked_on, plug
//   rq    lock        L0: lock, nr_running, cpu_load[]
//         load        L1, L3, L32, L36 as one: the load sums and averages
//                     (removed_load among them), cfs_tasks, idle_stamp
//         cfs         L2: cfs.min_vruntime, tasks_timeline, rb_leftmost, cfs.curr
//         curr        L33: curr, idle
//         clock       L34: clock, clock_task
//         wake_list   L40: wake_list, idle_state, the ttwu schedstats
//   idle task         the idle task's first line: its stack pointer and
//                     on_cpu, written at each switch to or from idle
// Costs follow the dependency chain, not the line count, by the rule the
// socket's and the pipe's line switches share (hw::LineStalls). The accesses of
// one step are independent and overlap, so a step costs its dearest
// transfer (hw::CacheLine); steps are serialized by a locked instruction or
// by a load whose address comes from the step before. Plain stores retire
// into the store buffer: they take the line (later readers pay for it),
// and their transfer joins the next locked step, or is drained while the
// CPU goes on if none follows on the path.
//
// Where it falls short: one cfs_rq whatever the group hierarchy (autogroup
// adds the group's cfs_rq and entity lines); the idle task's thread_info
// flags stay with kick_cpu(), which charges the waker's store but not the
// target's taking the line back; resched_curr() on a busy CPU reads the
// current task's entity, not its stack pointer; the
// sched_contributes_to_load bitfield's line is left out; the transfers of
// an enqueue by the waker are charged before it takes the target's lock,
// so they do not lengthen the hold other CPUs spin behind; fork, exec and
// balancing moves keep lb_move_task as their cost; hardware that merges a
// load and a store to one line, or prefetches the adjacent line, would pay
// less.
#pragma once
#include <cstdint>

#include "hw/cache_line.hpp"
#include "hw/machine.hpp"

namespace kernel {

struct TaskLines {
  hw::CacheLine state, thread_info, on_rq, se, links, stats, pi_lock;
};

struct RqLines {
  hw::CacheLine lock, load, cfs, curr, clock, wake_list, idle_task;
};

// Each returns the time the accessing CPU stalls, in ns, and moves the
// lines' copies as the accesses do.
namespace sched_lines {

// try_to_wake_up() on the waker up to the wake signal. `from` is the
// wakee's runqueue until this placement and `target` the chosen one.
struct Wakeup {
  int waker;
  TaskLines& p;
  RqLines& from;
  RqLines& target;
  bool migrating;  // set_task_cpu() moves it from `from` to `target`
};
// Through ttwu_queue_remote() onto the target's wake list. `first_on_list`:
// llist_add() found it empty, so set_nr_if_polling() (3.16+,
// `reads_idle_flags`) reads rq->idle.
int64_t wake_by_queue(const hw::Machine& m, const Wakeup& w, bool first_on_list, bool reads_idle_flags);
// Enqueueing it on the target itself, under the target's lock (the
// waker's own for a local wakeup). `curr`: the target's current task, or
// null when it runs its idle task.
int64_t wake_by_enqueue(const hw::Machine& m, const Wakeup& w, TaskLines* curr);
// sched_ttwu_pending() on the target: llist_del_all() before the lock,
// then each task's activation under it.
int64_t take_wake_list(const hw::Machine& m, int cpu, RqLines& rq);
int64_t activate_queued(const hw::Machine& m, int cpu, TaskLines& p, RqLines& rq);
// __schedule() on `cpu` for a prev going to sleep (or dying) or staying
// runnable: up to the pick, and clear_tsk_need_resched(prev) after it.
int64_t deschedule(const hw::Machine& m, int cpu, TaskLines& prev, bool sleeps, RqLines& rq);
// The pick and switch to next, from __schedule() or the idle loop.
int64_t switch_in(const hw::Machine& m, int cpu, TaskLines& next, bool from_idle, RqLines& rq);

}  // namespace sched_lines
}  // namespace kernel
