// A simulated task (struct task_struct): identity, scheduling parameters, the
// program it runs, and the per-policy scheduling state (sched_entity for CFS,
// counter/processor for 2.4) kept side by side as the kernel keeps them in
// one struct.
#pragma once
#include <coroutine>
#include <functional>
#include <list>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "hw/cpumask.hpp"
#include "kernel/coro.hpp"
#include "kernel/sched_lines.hpp"
#include "sim/time.hpp"

namespace kernel {

struct WaitQueue;
struct Task;

class Proc;

enum class TaskState : uint8_t { Running, Interruptible, Dead };
enum class WorkKind : uint8_t { User, Kernel };

// What a task's program wants next, recorded by the primitive awaits.
struct Pending {
  enum Kind : uint8_t { Resume, Work, Block, Exit, Yield, Migrate } kind = Resume;
  int64_t work_left = 0;  // ns of work at full speed (Work)
  WorkKind work_kind = WorkKind::User;
  bool preemptible = true;  // false inside spinlocked sections (e.g. a wake_up() loop)
  // Kernel work that starts at a rescheduling point: the entry from user
  // mode (the previous syscall's return) or a might_sleep() /
  // cond_resched() of CONFIG_PREEMPT_VOLUNTARY. Elsewhere in the kernel a
  // pending need_resched waits.
  bool resched_point = false;
  // >= 0: user work that ends at this wall time whatever the CPU's speed or
  // the time spent preempted, as a loop polling gettimeofday() does
  // (schbench's usec_spin()); kernel work running at the deadline delays
  // the end. work_left then holds the wall time still to spin.
  int64_t until_ns = -1;
  int dest_cpu = -1;  // Migrate: where the stopper moves the task
  const char* migrate_cause = "exec";  // Migrate: "exec" or "affinity" (Observer::on_migrate())
};

// nice -> load weight, kernel/sched/core.c prio_to_weight[] (2.6.23 .. 4.x).
int64_t nice_to_weight(int nice);
// 2^32 / weight, kernel/sched/core.c prio_to_wmult[].
uint32_t nice_to_wmult(int nice);

struct CfsRq;  // kernel/policies/cfs.cpp

// struct sched_entity (v4.0): what CFS queues. A task's own, or, with group
// scheduling, a task group's on one CPU (then my_q is the group's queue
// there and task is null).
struct SchedEntity {
  int64_t load_weight = 1024;
  uint32_t inv_weight = 4194304;
  uint64_t vruntime = 0;
  int64_t exec_start = 0;  // rq clock when it last started running
  int64_t sum_exec_runtime = 0;
  int64_t prev_sum_exec_runtime = 0;
  // PELT (per-entity load tracking, 3.8+): decayed runnable time sums in
  // 1024 ns units, and this entity's contribution to runnable_load_avg.
  uint64_t runnable_avg_sum = 0;
  // v4.1's running_avg_sum: the decayed time the entity ran (only while it is
  // its queue's curr). Read only by the 6.1 what-ifs (LOAD_BALANCE_V61,
  // FIND_IDLEST_V61), as 6.1's util_avg.
  uint64_t running_avg_sum = 0;
  uint64_t avg_period = 0;
  int64_t last_runnable_update = 0;
  int64_t load_avg_contrib = 0;
  // sched_avg.decay_count: > 0 the queue's decay_counter when the entity
  // went to sleep (its contribution is in blocked_load_avg); < 0 the decays
  // carried across a wake-up migration; 0 on a queue or never queued.
  int64_t decay_count = 0;
  bool on_rq = false;
  // WAKE_RENORM_V47: migrate_task_rq_fair() made a waking task's vruntime
  // relative; its enqueue makes it absolute (ENQUEUE_MIGRATED).
  bool migrated_waking = false;
  int depth = 0;
  SchedEntity* parent = nullptr;  // the group entity above; null at the root
  CfsRq* cfs_rq = nullptr;        // the queue it is (to be) queued on
  CfsRq* my_q = nullptr;          // a group entity's own queue
  struct Task* task = nullptr;    // task_of(); null for a group entity
  // se->group_node: where a queued task sits on its runqueue's cfs_tasks
  // list, so a dequeue unlinks it without a walk (CFS only).
  std::list<Task*>::iterator group_node{};
  // Position in the timeline (rbtree): key and insertion order.
  uint64_t tree_key = 0, tree_seq = 0;
  bool in_tree = false;
  // EEVDF_V66 (v6.6 struct sched_entity): the lag saved at dequeue (and,
  // while running, the deadline it was picked with: set_next_entity()'s
  // "HACK"), the virtual deadline, and the requested slice (ns).
  int64_t vlag = 0;
  uint64_t deadline = 0;
  uint64_t slice = 0;
};

struct Task {
  int pid = 0;
  int tgid = 0;
  std::string comm;
  int nice = 0;
  hw::CpuMask cpus_allowed;
  bool kthread = false;  // a kernel thread (spawn_kthread()): not waited for at the end of a run
  TaskState state = TaskState::Running;
  int cpu = 0;          // task_cpu(p): the CPU whose runqueue holds it / it last ran on
  bool on_rq = false;   // queued (including running)
  bool on_cpu = false;  // currently executing
  bool waking = false;  // TASK_WAKING: its CPU chosen, not yet queued
  int waker_cpu = -1;   // the CPU running that try_to_wake_up()
  // A wakeup from interrupt context (an hrtimer's) that found
  // the task still switching out: its flags and CPU, for when the switch is
  // done (Kernel::try_to_wake_up()); -1: none.
  int wake_after_switch_flags = -1;
  int wake_after_switch_cpu = -1;
  bool wake_by_queue = false;  // that wakeup goes through its target's wake list
  bool activation_charged = false;  // its waker paid the lock and ttwu_do_activate() before the enqueue
  // Its waker enqueued it under a busy target's rq->lock, at the start of
  // ttwu_do_activate(); the preemption check follows the activation.
  bool enqueued_at_lock = false;
  bool affinity_changed_while_waking = false;
  Task* parent = nullptr;
  bool shares_mm_with_parent = false;  // a thread (CLONE_VM)
  // Its address space: a thread shares its parent's, fork() and execve()
  // make a new one, and a kernel thread has none (0; it borrows the last).
  uint64_t mm = 0;

  std::function<Co<void>(Proc&)> program_fn;
  Co<void> program;
  // do_exit()'s path up to do_notify_parent(), run in the task's context
  // once its program has ended (Proc::exit_notify()); empty until then.
  Co<void> exit_path;
  bool exiting = false;
  std::coroutine_handle<> resume_point;
  Pending pending;

  // ---- CFS ----
  SchedEntity se;
  // The autogroup the task belongs to (0: the root task group). Set when a
  // spawned task becomes a session leader with autogroup enabled; a forked
  // child inherits it (sched_autogroup_fork()).
  int autogroup = 0;
  // wake_wide() bookkeeping (kernel/sched/fair.c record_wakee)
  Task* last_wakee = nullptr;
  unsigned wakee_flips = 0;
  int64_t wakee_flip_decay_ts = 0;  // jiffies
  // v5.4's p->recent_used_cpu (SELECT_IDLE_V54): the CPU the task ran on
  // when it last woke another task with want_affine (or was forked from).
  int recent_used_cpu = -1;
  // Not kernel state: how 4.0's select_task_rq_fair() placed this task's
  // wakeup in progress. Local: the waker's own CPU was its previous one.
  // Wide: wake_wide() refused (4.0's inside wake_affine(), or v4.3's
  // before it). Refused: the load comparison refused. Compared: it pulled
  // with the waker's load above zero. Emptied: it pulled with that load at
  // zero or below (4.0 then does not compare; kept as Emptied under the
  // what-if WAKE_AFFINE_ALWAYS_COMPARE). Kept until check_preempt_curr()
  // sees the wakee, so a preemption can be tied to the placement.
  enum class WakePath : uint8_t { None, Local, Wide, Refused, Compared, Emptied };
  WakePath wake_path = WakePath::None;
  // Not kernel state either: its last sleep, for the sleeper credit's two
  // parts. When it began (now_ns()), and its queue's min_vruntime minus its
  // vruntime once dequeue_entity() had taken it off (negative when it had
  // run ahead of the queue). place_entity() reads both at the wakeup.
  int64_t slept_at_ns = -1;  // -1: has not slept
  int64_t lag_at_sleep_ns = 0;
  // Not kernel state: its last enqueue was a wakeup's (not a balancing
  // move's). The wakeup-check counters label its check by it, since other
  // CPUs' enqueues can come between a wakee's enqueue and its check.
  bool enqueued_by_wakeup = false;

  // ---- Linux 2.4 ----
  int counter = 0;      // remaining ticks of the time slice
  int processor = 0;    // last CPU (p->processor)
  bool yielded = false; // SCHED_YIELD bit

  // ---- accounting and statistics ----
  sim::Time wake_time{-1};      // set at sched_waking, cleared when run
  sim::Time queued_since{-1};   // became runnable but not running
  // sched_info (kernel/sched/stats.h): last_queued on its rq's clock (-1:
  // unset), and the waits closed by dequeues (migrations) since it last ran.
  int64_t sched_info_last_queued = -1;
  int64_t sched_info_dequeued_delay = 0;
  sim::Time last_ran{0};        // time it last left a CPU
  // Memory a run of the task touches: stack, buffers, kernel objects. Set
  // from the what-if sysctl task_working_set_bytes, whose 16 KiB default is
  // the workload models' estimate for the perf bench tasks (no source).
  int64_t working_set_bytes = 16 * 1024;
  // Where the task last went to sleep, as /proc/PID/wchan names it.
  const char* wchan = nullptr;
  // A workload's name for the task's part in it ("sender", "receiver"), for
  // the statistics only: the time on a CPU by role (obs::RoleTimes) is the
  // ledger the fair class charges vruntime from. nullptr: not counted.
  const char* role = nullptr;
  int64_t cache_mark = INT64_MIN / 2;  // its cache CPU's bytes_touched when it left
  int64_t nr_switches = 0;
  int64_t nr_migrations = 0;
  int64_t wakeup_delay_total_ns = 0;  // sched_waking to running, summed
  TaskLines lines;  // the ttwu_lines what-if
  int exit_code = 0;
  bool reaped = false;
  // do_wait()'s zombies: pids of children that exited and are not reaped,
  // lowest first (a parent of 20 000 children must not scan every task).
  std::set<int> dead_children;
  // The wait queue this task's wait_event() entry is on (a task waits on
  // one at a time), so wake_up() tells in O(1) whether it is still queued.
  const WaitQueue* waiting_on = nullptr;
};

}  // namespace kernel
