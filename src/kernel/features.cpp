#include "kernel/features.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace kernel {

const std::vector<FeatureInfo>& feature_catalog() {
  // kernel/sched/features.h (v4.0) for the CFS entries.
  static const std::vector<FeatureInfo> f = {
      {"GENTLE_FAIR_SLEEPERS", "cfs", "halve the sleeper credit of place_entity() (latency/2)"},
      {"START_DEBIT", "cfs", "place a forked task one vslice after min_vruntime"},
      {"NEXT_BUDDY", "cfs", "prefer the last wakee when picking the next entity"},
      {"LAST_BUDDY", "cfs", "prefer the preempted task when picking the next entity"},
      {"CACHE_HOT_BUDDY", "cfs", "task_hot() treats the next buddy as cache hot"},
      {"WAKEUP_PREEMPTION", "cfs", "a waking task may preempt the current one"},
      {"LB_BIAS", "cfs", "source_load()/target_load() use the cpu_load[] history"},
      {"TTWU_QUEUE", "cfs", "wakeups across LLCs are queued on the target's wake list (IPI)"},
      {"TTWU_QUEUE_IDLE_V60", "cfs",
       "what-if from v6.0 (f3dd3f674555 \"sched: Remove the limitation of WF_ON_CPU on wakelist if wakee cpu is "
       "idle\" and 28156108fecb, as 6.1 has them in ttwu_queue_cond()): with TTWU_QUEUE, a wakeup within the LLC "
       "onto another CPU whose runqueue is empty is queued on that CPU's wake list too; off = 4.0's ttwu_queue(), "
       "which queues only across LLCs"},
      {"LB_MIN", "cfs", "load balancing skips tasks with tiny load"},
      {"WAKE_WIDE", "cfs", "wake_affine() refuses affine wakeups when wake_wide() (3.12+)"},
      {"NEWIDLE_COST", "cfs",
       "idle_balance() compares avg_idle with per-domain max_newidle_lb_cost (3.13+); "
       "off = the 3.10 gate avg_idle < sched_migration_cost"},
      {"WAKE_IDLE_CPU", "cfs",
       "Josef Bacik, May 2015: when select_idle_sibling() returns a busy CPU, fall through to "
       "find_idlest_group()/find_idlest_cpu() over the whole machine (not merged)"},
      {"WAKE_IDLE_CPU_LITERAL", "cfs",
       "the same patch read literally: the fall-through only reaches the domains 4.0's loop collected, those "
       "with SD_BALANCE_WAKE below the affine domain (none unless sched_domain_balance_wake=1)"},
      {"SD_WAKE_IDLE", "cfs",
       "the 2.6.2x wake_idle() forward-ported, as Facebook carried it (seed 000): when select_idle_sibling() "
       "returns a busy CPU, take the first idle CPU of each domain, nearest first, up to the whole machine"},
      {"WAKE_WIDE_V2", "cfs",
       "Mike Galbraith, \"sched/fair: Beef up wake_wide()\" (63b0e9edceec, v4.3): symmetric "
       "wake_wide() in select_task_rq_fair(), wide wakeups skip wake_affine()"},
      {"WAKE_AFFINE_V54", "cfs",
       "what-if from v5.4 (wake_affine_idle() then wake_affine_weight(), WA_IDLE/WA_WEIGHT/WA_BIAS): an idle "
       "waking CPU or a sync waker alone on its runqueue pulls the wakee, else runnable loads compared; off = "
       "4.0's effective_load() comparison"},
      {"FIND_IDLEST_V61", "cfs",
       "what-if from v6.1 (57abff067a08 \"sched/fair: Rework find_idlest_group()\", v5.5, with v5.7's cpu_load()): "
       "the slow path ranks groups by type (spare capacity, fully busy, overloaded) and only groups of one type "
       "by load, the queue's whole load average with its sleepers' decaying share; the tools/guest 6.1 runs it; "
       "off = 4.0's runnable load against imbalance_pct/2"},
      {"LOAD_BALANCE_V61", "cfs",
       "what-if from v6.1 (Vincent Guittot's rework, 0b0695f2b34a \"sched/fair: Rework load_balance()\", v5.5, "
       "as 6.1 has it): groups classed as having spare capacity, fully busy or overloaded on the whole load, "
       "runnable and utilisation averages; the imbalance counted in tasks, utilisation or load by class; the "
       "coldest task first; active balance only for a task-count imbalance; 6.1's imbalance_pct and "
       "busy_factor; off = 4.0's load_balance()"},
      {"NEWIDLE_V61", "cfs",
       "what-if from v6.1 as Debian's 6.1.170 ships it: newidle balancing gated by the root domain's overload "
       "and avg_idle against the lowest domain's max_newidle_lb_cost (no sched_migration_cost gate), each "
       "domain tried with the probability of its recent success (NI_RANDOM); off = 4.0's idle_balance()"},
      {"WAKE_AFFINE_ALWAYS_COMPARE", "cfs",
       "what-if (stop 48): 4.0's wake_affine() compares loads even when the sync subtraction leaves the waking "
       "CPU at zero load, where 4.0 skips the comparison and always pulls; a wakee whose previous CPU is idle "
       "then stays there (on linux-3.10 the per-task-load clause still pulls it)"},
      {"SELECT_IDLE_V54", "cfs",
       "what-if from v5.4 (select_idle_sibling() with recent_used_cpu, select_idle_core() gated by "
       "has_idle_cores, select_idle_cpu() with SIS_PROP's scan budget, select_idle_smt()): any idle CPU of "
       "the LLC, not only a fully idle group; off = 4.0's"},
      {"NOHZ_ILB_OTHERS_FIRST", "cfs",
       "Preeti U Murthy, \"sched: Improve load balancing in the presence of idle CPUs\" (v4.1): the "
       "kicked CPU runs nohz_idle_balance() for the other idle CPUs before its own rebalance_domains(); "
       "off = 4.0 and earlier, own domains first and the others only while it has no work"},
      {"GROUP_RUNNABLE_WEIGHT", "cfs",
       "what-if from v4.15 (calc_group_runnable(), 1ea6c46a23f1 \"sched/fair: Propagate an effective "
       "runnable_load_avg\"): "
       "with group scheduling, a group entity adds only its queue's runnable share of its load to its "
       "CPU's runnable load (which task_h_load() then divides too); off = 4.0, runnable plus blocked. "
       "v4.15 = this with GROUP_ENTITY_REFRESH"},
      {"GROUP_ENTITY_REFRESH", "cfs",
       "what-if from v4.15 (update_cfs_group() at every enqueue, dequeue and tick): with group scheduling, "
       "a group entity's contribution is recomputed at every update; off = 4.0, only when a 1024 us "
       "period has ended (update_entity_load_avg() returns early)"},
      {"WAKE_RENORM_V47", "cfs",
       "what-if from v4.7 (2f950354e6d5 \"sched/fair: Fix fairness issue on migration\", 59efa0bac9cf "
       "\"sched/core: Kill sched_class::task_waking to clean up the migration logic\"): a wakee that stays on its "
       "CPU keeps its absolute vruntime; one that migrates is made relative in migrate_task_rq_fair() and "
       "absolute again after update_curr() on its new queue, so that queue's pending runtime is not credited "
       "to it (likewise a task moved by balancing, and a new task's first enqueue: absolute after "
       "update_curr()); with task_waking_fair() gone, record_wakee() is in select_task_rq_fair() (c58d25f371f5 "
       "\"sched/fair: Move record_wakee()\"), which a wakee bound to one CPU skips; off = 4.0's "
       "task_waking_fair(), every wakee made relative at selection and recorded as its waker's flip, and every "
       "relative vruntime made absolute before update_curr()"},
      {"WAKEUP_GRAN_BY_NR_RUNNING", "cfs",
       "what-if from Mel Gorman's \"sched/fair: Scale wakeup granularity relative to nr_running\" (LKML "
       "2021-09-20, v1, not merged): check_preempt_wakeup() multiplies the wakeup granularity by "
       "min(nr_running / 2, sched_nr_latency) of the current task's queue (32 ms at 16 or more tasks on 8+ "
       "CPUs); the pick's buddy checks stay unscaled"},
      {"MIGRATED_WAKEE_FULL_CREDIT", "cfs",
       "what-if from v6.3-rc1's bug (829c1651e9 \"sched/fair: sanitize vruntime of entity being placed\", "
       "fixed by a53ce18cacb4 \"sched/fair: Sanitize vruntime of entity being migrated\"): place_entity() treats an entity "
       "whose exec_start is 0 (a new task, or one migrate_task_rq_fair() moved) as a sleeper of over 60 s and "
       "places it at min_vruntime minus the sleeper threshold whatever its own vruntime, so every wakee that "
       "changes CPU gets the full credit (12 ms on 8+ CPUs) and a new task ignores its parent's vruntime; "
       "off = 4.0, max(own vruntime, that floor)"},
      {"EEVDF_V66", "cfs",
       "what-if from v6.6 (147f3efaa241 \"sched/fair: Implement an EEVDF-like scheduling policy\" and its series): "
       "the fair class's own rules become EEVDF's, on 4.0's wake placement, balancing and load tracking: each "
       "entity asks for a slice (sysctl_sched_base_slice, 4.0's min granularity renamed: 3 ms on 8+ CPUs) and "
       "gets a virtual deadline; the pick is the eligible entity (vruntime at or below the weighted average) with "
       "the earliest deadline; a sleeper or migrating task keeps its lag (clamped to two slices) instead of the "
       "sleeper credit (PLACE_LAG); a new task starts half a slice from its deadline (PLACE_DEADLINE_INITIAL); a "
       "wakee preempts when it is what the pick would run, except that a running entity keeps the CPU until its "
       "slice is used (RUN_TO_PARITY); no wakeup granularity, no buddies but NEXT_BUDDY (off), no tick check "
       "beyond the deadline; not with group scheduling; off = 4.0's CFS"},
      {"EEVDF_NO_RUN_TO_PARITY", "cfs",
       "with EEVDF_V66, 6.6's sched_feat RUN_TO_PARITY written off (63304558ba5d \"sched/eevdf: Curb "
       "wakeup-preemption\" added it on): an eligible wakee with an earlier deadline preempts a running entity "
       "that has not used its slice"},
      {"EEVDF_NO_PLACE_LAG", "cfs",
       "with EEVDF_V66, 6.6's sched_feat PLACE_LAG written off: every enqueue places the entity at the queue's "
       "average vruntime, with no lag kept from before its sleep or move"},
      {"PIPE_V55", "cfs",
       "what-if from v5.5 to 6.x (fs/pipe.c as Linus Torvalds rewrote it in 2019, read from v5.15): pipe_read() "
       "and pipe_write() wait exclusively on separate rd_wait and wr_wait queues; a write wakes the reader only "
       "if the pipe was empty, and a read wakes one writer whenever the pipe was full when the read began, "
       "freed page or not (until 2025), so a writer waiting on a full pipe is woken by nearly every read and "
       "mostly sleeps again; once poll() has looked at a pipe (poll_usage, 5.14-rc7 on) every write wakes its "
       "reader; off = 4.0's, one shared queue, writers woken when a page empties"},
      {"SYNC_WAKEUPS", "linux24", "2.4 sync wakeups skip reschedule_idle() (no IPI, no preemption)"},
      {"SCHEDULE_TAIL_PUSH", "linux24",
       "__schedule_tail() offers a preempted task to another CPU via reschedule_idle()"},
  };
  return f;
}

const std::vector<SysctlInfo>& sysctl_catalog() {
  static const std::vector<SysctlInfo> s = {
      {"CONFIG_HZ", "Hz", "build option, not a sysctl: the tick's rate (100, 250, 300 or 1000; the preset's by default)"},
      {"sched_latency_ns", "ns", "CFS targeted preemption latency (before CPU-count scaling)"},
      {"sched_min_granularity_ns", "ns", "CFS minimal preemption granularity (before scaling)"},
      {"sched_wakeup_granularity_ns", "ns", "CFS wakeup preemption granularity (before scaling)"},
      {"sched_migration_cost_ns", "ns", "task_hot() window and idle_balance() gate"},
      {"sched_nr_migrate", "tasks", "max tasks moved per load_balance() pass"},
      {"sched_child_runs_first", "bool", "a forked child runs before its parent"},
      {"sched_tunable_scaling", "enum", "0 none, 1 log (1+ilog2(ncpus)), 2 linear"},
      {"pipe_buffers", "pages", "pipe capacity in pages (16 since 2.6.11; 1 page on 2.4)"},
      {"unix_sndbuf", "bytes", "AF_UNIX sk_sndbuf (wmem_default)"},
      {"unix_skb_truesize_100", "bytes", "skb truesize charged for a 100-byte AF_UNIX write"},
      {"unix_sock_lines", "bool",
       "cost-model switch, not a kernel sysctl (on by default): AF_UNIX sends and receives also pay for the socket's own cache lines as the "
       "preset's net/unix/af_unix.c loads and stores them (v4.0: state lock, queue head, wait queue and entries, "
       "socket flags, sk_wmem_alloc, the sk_buff, the slab pages, the memory a send reuses; 2.4.19: the state "
       "rwlock, the queue head with wmem_alloc, refcnt, callback_lock, err, the socket's flags and wait queue, "
       "the struct file, the sk_buff and the per-CPU arrays of freed ones, dcache_lock after each transfer): a "
       "load without a copy costs a transfer from the nearest copy, a store the farthest other copy; callers "
       "spin on the lock that serializes (4.0's state lock, 2.4's queue lock). 0 = only the data's lines, as "
       "the copy pays them"},
      {"pipe_lines", "bool",
       "cost-model switch, not a kernel sysctl (on by default): pipe reads and writes also pay for the pipe's own cache lines as the "
       "preset's fs/pipe.c loads and stores them (v4.0: pipe->mutex with the wait queue head, nrbufs/curbuf/tmp_page, "
       "the pipe_buffer slots, the sleepers' wait entries, the recycled page the writer copies into; 2.4.19: i_sem "
       "with the inode times, pipe_inode_info with the wait queue, the one page, the entries, and dcache_lock "
       "after each transfer), costed as "
       "unix_sock_lines does. 0 = only the data's lines, as the copy pays them"},
      {"ttwu_lines", "bool",
       "cost-model switch, not a kernel sysctl (on by default): wakeups and switches also pay for the scheduler's own cache lines as the "
       "preset's scheduler loads and stores them, by dependency chain: independent accesses overlap, locked "
       "instructions and dependent loads serialize, plain stores drain from the store buffer. CFS (v4.0's core.c "
       "and fair.c): the wakee's task_struct and thread_info, the target runqueue, the idle task's first line; a "
       "wakeup that enqueues on another CPU's runqueue pulls its lines, one queued with TTWU_QUEUE the wake list, "
       "rq->idle and the task's. 2.4 (2.4.19's sched.c): runqueue_lock, runqueue_head, nr_running, each CPU's "
       "aligned_data, the idle tasks' need_resched, kstat, the tasks' run_list and alloc_lock lines, those under "
       "runqueue_lock lengthening its hold. 0 = these accesses cost nothing beyond ttwu_base, rq_lock_hold, "
       "schedule_base and context_switch (2.4 still charges the goodness scan's lines)"},
      {"irq_time_accounting", "bool",
       "build option CONFIG_IRQ_TIME_ACCOUNTING, not a sysctl (CFS presets; 0, the default, = not built): "
       "update_rq_clock_task() takes the time of interrupt handlers and the softirqs they run out of "
       "rq_clock_task(), so no task's runtime, vruntime or load average pays for it; without it the "
       "interrupted task pays. Interrupt time is the work inside irq_enter()/irq_exit(): the tick's handler "
       "and softirq, an hrtimer's, scheduler_ipi()'s wake-list activations and nohz balance, not a reschedule "
       "IPI's own entry and return (ipi_handler). sched_info's delays stay on rq_clock(). Its capacity side "
       "(sched_rt_avg_update()) is not modelled. On the profiles measured in a guest (kvm-epyc-1s2c, "
       "qemu-tcg-2s1c) tick_handler also holds the host's preemptions of the virtual CPU, steal time, which "
       "only CONFIG_PARAVIRT_TIME_ACCOUNTING would take out: there the option takes out too much"},
      {"sched_domain_balance_wake", "bool",
       "set SD_BALANCE_WAKE in every sched domain, as writing /proc/sys/kernel/sched_domain/cpu*/domain*/flags does"},
      {"fair_group_sched", "bool",
       "build option CONFIG_FAIR_GROUP_SCHED (4.0 only): the group-aware CFS with its full load tracking "
       "(blocked load, task_h_load, the partial put/set of pick_next_task_fair), even with every task in the "
       "root group; implied by sched_autogroup_enabled"},
      {"sched_autogroup_enabled", "bool",
       "group scheduling by session (CONFIG_SCHED_AUTOGROUP): each spawned task starts a session in a new task "
       "group that its children inherit (4.0 only; 0 = a kernel without CONFIG_FAIR_GROUP_SCHED)"},
      {"kworker_noise_period_us", "us",
       "what-if, not a kernel sysctl (0 = off, the default; CFS presets only): one kernel thread bound to each "
       "CPU, as a per-CPU kworker running periodic work (4.0's vmstat_update(), every sysctl_stat_interval = 1 s "
       "on a CPU whose counters changed), wakes every this many "
       "microseconds, first at a random phase (RNG stream kworker-noise), and runs kworker_noise_run_us in the "
       "kernel. It makes the CPU busy for that long, so a wakee whose previous CPU it holds is placed anew: the "
       "machine's own threads are what keeps a benchmark's layout from freezing at launch. The run ends with the "
       "benchmark's tasks, and a deadlock then shows as the time limit"},
      {"kworker_noise_run_us", "us", "with kworker_noise_period_us: the kernel work each wakeup does (less than the period)"},
      {"kworker_noise_unbound", "bool",
       "with kworker_noise_period_us: the threads are not bound to a CPU (an unbound kworker, rcu_sched): each "
       "sleeps on a timer of the CPU it last ran on and select_task_rq() places it when that fires, so from v4.7 "
       "(WAKE_RENORM_V47) too its wakeup counts as a wake_wide() flip of the task the timer interrupted; 0 (the "
       "default) = bound to their CPU"},
      {"launcher_wakee_flips", "flips",
       "environment, not a kernel sysctl (0, the default: a process with no history; CFS presets only): the "
       "wake_wide() flip count (task_struct.wakee_flips) each process the run starts (the benchmark's parent) "
       "begins with, its decay stamp at the start, which its children inherit at fork (dup_task_struct() "
       "copies it and __sched_fork() does not reset it). A real benchmark's parent carries what its shell left "
       "it and a flip for each change of wakee among the kernel threads that interrupts taken while it ran "
       "woke (record_wakee() charges current; from v4.7 only unbound threads count). The patched 6.1 guest's "
       "traces show the result where wake_wide()'s factor, the LLC's size, is 1: in 8 of 9 stock runs of "
       "hackbench -f 2 the parent stayed where it forked and the GO left every worker on its previous CPU, as "
       "a count of 1 does here (tools/guest/trace-layout.py; docs/real-kernels.md). It matters where that "
       "factor is small"},
      {"init_load_latency_ns", "ns",
       "what-if, not a kernel sysctl (0 = off, the default; CFS presets only): the latency, before "
       "CPU-count scaling, with which init_task_runnable_average() computes the slice that starts a new "
       "task's load average (4.0 fair.c reads sched_latency_ns there, and sched_nr_latency from it); set "
       "to 6000000 it holds the new tasks' initial load where the stock latency puts it while "
       "sched_latency_ns moves the period everywhere else"},
      {"tick_slice_latency_ns", "ns",
       "what-if, not a kernel sysctl (0 = off, the default; CFS presets only): the latency, before "
       "CPU-count scaling, with which check_preempt_tick() computes the slice it preempts at (4.0 fair.c "
       "reads sched_latency_ns there, and sched_nr_latency from it); set to 6000000 it holds the tick's "
       "slices where the stock latency puts them while sched_latency_ns moves the period everywhere else"},
      {"task_working_set_bytes", "B",
       "what-if, not a kernel sysctl (16384 by default, an estimate without a source): the memory every run of a "
       "task touches (stack, buffers, kernel objects), which its CPU's private cache keeps warm until other tasks' "
       "runs there evict it, and which a task refills when it runs again after eviction or a move "
       "(docs/cost-model.md, cache warmth). 0 = runs touch nothing that a move must refill"},
      {"intel_idle.max_cstate", "states",
       "boot parameter: register only the first N C-states of the profile (POLL stays); 1 = C1 only (CFS presets)"},
  };
  return s;
}

const std::vector<std::string>& preset_names() {
  static const std::vector<std::string> n = {"linux-2.4.19", "linux-3.10", "linux-4.0"};
  return n;
}

namespace {
std::map<std::string, int64_t, std::less<>> cfs_sysctls() {
  return {{"sched_latency_ns", 6000000},
          {"sched_min_granularity_ns", 750000},
          {"sched_wakeup_granularity_ns", 1000000},
          {"sched_migration_cost_ns", 500000},
          {"sched_nr_migrate", 32},
          {"sched_child_runs_first", 0},
          {"sched_tunable_scaling", 1},
          {"pipe_buffers", 16},
          // net/core/sock.c: SK_WMEM_MAX = SKB_TRUESIZE(256) * 256 = 212992 on x86_64.
          {"unix_sndbuf", 212992},
          // __alloc_skb: kmalloc-512 for 128+320 B, truesize = SKB_TRUESIZE(192) = 768.
          {"unix_skb_truesize_100", 768},
          // Cost-model switches, not kernel sysctls: each kernel object's
          // own lines, as the preset's source loads and stores them (stop
          // 34); 0 = only the data's lines move, the model before.
          {"unix_sock_lines", 1},
          {"pipe_lines", 1},
          {"ttwu_lines", 1},
          // Off: a kernel built without CONFIG_IRQ_TIME_ACCOUNTING, whose
          // tasks pay for the interrupts they are interrupted by. Whether
          // the seeds' kernels had it is not known.
          {"irq_time_accounting", 0},
          // sd_init(): SD_BALANCE_WAKE is off by default since 2.6.32 (182a85f8a119).
          {"sched_domain_balance_wake", 0},
          // What-if: no periodic kernel threads (the model's machine runs
          // nothing but the benchmark).
          {"kworker_noise_period_us", 0},
          {"kworker_noise_run_us", 0},
          {"kworker_noise_unbound", 0},
          // Environment: the benchmark's parent starts with no wake_wide()
          // history (docs/design.md, "The launcher's wake_wide() history").
          {"launcher_wakee_flips", 0},
          // What-if: the per-task working set, the workload models' estimate
          // for the perf bench tasks (no source; see task.hpp).
          {"init_load_latency_ns", 0},
          {"tick_slice_latency_ns", 0},
          {"task_working_set_bytes", 16 * 1024},
          // Off: the model's figures are for a kernel without group scheduling
          // (distributions of 2015 shipped CONFIG_SCHED_AUTOGROUP=y, enabled).
          {"sched_autogroup_enabled", 0},
          // Off: a kernel built without CONFIG_FAIR_GROUP_SCHED, the model's
          // simplified load path (see policies/cfs.cpp).
          {"fair_group_sched", 0},
          // drivers/idle/intel_idle.c: max_cstate = CPUIDLE_STATE_MAX - 1; the
          // driver registers table entry i (C1 first) only if i + 1 <= max_cstate.
          {"intel_idle.max_cstate", 9}};
}
std::map<std::string, bool, std::less<>> all_features_off() {
  std::map<std::string, bool, std::less<>> m;
  for (const auto& f : feature_catalog()) m[f.name] = false;
  return m;
}
}  // namespace

Preset load_preset(const std::string& name) {
  Preset p;
  p.name = name;
  p.features = all_features_off();
  if (name == "linux-4.0" || name == "linux-3.10") {
    p.policy = PolicyKind::Cfs;
    // CONFIG_HZ=1000 as in the RHEL 7 / Fedora server configs of the era.
    p.hz = 1000;
    p.version = name == "linux-4.0" ? 400 : 310;
    p.description = name == "linux-4.0"
                        ? "CFS as in Linux 4.0 (kernel/sched/fair.c, April 2015)"
                        : "CFS as in Linux 3.10: no wake_wide(), 2.6.32-style idle_balance() gate";
    for (const char* f : {"GENTLE_FAIR_SLEEPERS", "START_DEBIT", "LAST_BUDDY", "CACHE_HOT_BUDDY",
                          "WAKEUP_PREEMPTION", "LB_BIAS", "TTWU_QUEUE"})
      p.features[f] = true;
    p.features["WAKE_WIDE"] = p.version >= 312;
    p.features["NEWIDLE_COST"] = p.version >= 313;
    p.sysctls = cfs_sysctls();
  } else if (name == "linux-2.4.19") {
    p.policy = PolicyKind::Linux24;
    p.hz = 100;  // asm-i386/param.h
    p.version = 204;
    p.description = "Linux 2.4.19: one global runqueue, goodness() scan, counter epochs";
    p.features["SYNC_WAKEUPS"] = true;
    p.features["SCHEDULE_TAIL_PUSH"] = true;
    p.sysctls = cfs_sysctls();
    p.sysctls["pipe_buffers"] = 1;  // one 4 KiB page (fs/pipe.c, PIPE_SIZE)
    // 2.4.19: SK_WMEM_MAX = 65535; truesize = SKB_DATA_ALIGN(100) + sizeof(sk_buff) = 128 + 160.
    p.sysctls["unix_sndbuf"] = 65535;
    p.sysctls["unix_skb_truesize_100"] = 288;
  } else {
    std::string known;
    for (const auto& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown kernel preset '" + name + "' (known: " + known + ")");
  }
  return p;
}

void KernelConfig::apply_features(const std::string& list) {
  std::stringstream ss(list);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item.erase(std::remove_if(item.begin(), item.end(), ::isspace), item.end());
    if (item.empty()) continue;
    bool value = true;
    std::string name = item;
    if (name.rfind("NO_", 0) == 0) {
      value = false;
      name = name.substr(3);
    }
    auto it = preset_.features.find(name);
    if (it == preset_.features.end())
      throw std::invalid_argument("unknown feature '" + name + "' (see 'schedlab features')");
    it->second = value;
  }
}

void KernelConfig::apply_sysctl(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos)
    throw std::invalid_argument("sysctl '" + assignment + "' must be name=value");
  std::string name = assignment.substr(0, eq);
  std::string val = assignment.substr(eq + 1);
  if (name == "CONFIG_HZ") {
    // A build option, not a sysctl: the kernel a real machine runs may be
    // built with another tick than the preset's (Debian's 6.1 guest of
    // tools/guest: 250). Only the values Kconfig offers (kernel/Kconfig.hz).
    if (val != "100" && val != "250" && val != "300" && val != "1000")
      throw std::invalid_argument("CONFIG_HZ must be 100, 250, 300 or 1000");
    if (preset_.policy == PolicyKind::Linux24)
      throw std::invalid_argument("CONFIG_HZ: 2.4's HZ is fixed at 100 (the option came with 2.6.13)");
    preset_.hz = std::stoi(val);
    return;
  }
  auto it = preset_.sysctls.find(name);
  if (it == preset_.sysctls.end())
    throw std::invalid_argument("unknown sysctl '" + name + "' (see 'schedlab features')");
  int64_t v = 0;
  try {
    size_t used = 0;
    v = std::stoll(val, &used);
    if (used != val.size()) throw std::invalid_argument("junk");
  } catch (const std::exception&) {
    throw std::invalid_argument("sysctl " + name + ": '" + val + "' is not an integer");
  }
  if (v < 0 || v > 10LL * 1000 * 1000 * 1000)
    throw std::invalid_argument("sysctl " + name + "=" + val + " is out of range");
  if ((name == "pipe_buffers" || name == "sched_nr_migrate" || name == "unix_sndbuf" ||
       name == "unix_skb_truesize_100" || name == "intel_idle.max_cstate") && v == 0)
    throw std::invalid_argument("sysctl " + name + " must be positive");
  if (name == "pipe_buffers" && v > 1024) throw std::invalid_argument("pipe_buffers too large");
  if (name == "unix_sock_lines" && v > 1) throw std::invalid_argument("unix_sock_lines must be 0 or 1");
  if (name == "pipe_lines" && v > 1) throw std::invalid_argument("pipe_lines must be 0 or 1");
  if (name == "ttwu_lines" && v > 1) throw std::invalid_argument("ttwu_lines must be 0 or 1");
  if (name == "irq_time_accounting" && v > 1) throw std::invalid_argument("irq_time_accounting must be 0 or 1");
  if (name == "irq_time_accounting" && v == 1 && preset_.policy != PolicyKind::Cfs)
    throw std::invalid_argument("irq_time_accounting: " + preset_.name + " has no such option (a build option of the CFS era)");
  if (name == "kworker_noise_unbound" && v > 1) throw std::invalid_argument("kworker_noise_unbound must be 0 or 1");
  if (name == "launcher_wakee_flips" && v > 1000000)
    throw std::invalid_argument("launcher_wakee_flips must be at most 1000000");
  if (name == "kworker_noise_period_us" && v > 0 && v < 100)
    throw std::invalid_argument("kworker_noise_period_us must be 0 (off) or at least 100");
  if (name == "task_working_set_bytes" && v > 4 * 1024 * 1024)
    throw std::invalid_argument("task_working_set_bytes must be at most 4 MiB");
  if (name == "sched_tunable_scaling" && v > 2)
    throw std::invalid_argument("sched_tunable_scaling must be 0, 1 or 2");
  it->second = v;
}

void KernelConfig::check_consistent() const {
  if (feat("WAKE_IDLE_CPU") && feat("WAKE_IDLE_CPU_LITERAL"))
    throw std::invalid_argument("WAKE_IDLE_CPU and WAKE_IDLE_CPU_LITERAL are two readings of one patch: pick one");
  if (feat("SD_WAKE_IDLE") && (feat("WAKE_IDLE_CPU") || feat("WAKE_IDLE_CPU_LITERAL")))
    throw std::invalid_argument("SD_WAKE_IDLE is what the WAKE_IDLE_CPU patch was compared with: pick one");
}

KernelConfig KernelConfig::after_write(const std::string& list) const {
  if (list.find_first_not_of(", ") == std::string::npos)
    throw std::invalid_argument("a feature write names no feature: '" + list + "'");
  KernelConfig next = *this;
  next.apply_features(list);
  next.check_consistent();
  if (next.feat("WAKE_RENORM_V47") != feat("WAKE_RENORM_V47"))
    throw std::invalid_argument("WAKE_RENORM_V47 cannot be written during a run: " + list);
  return next;
}

bool KernelConfig::feat(std::string_view name) const {
  auto it = preset_.features.find(name);
  if (it == preset_.features.end()) throw std::logic_error("feature not declared: " + std::string(name));
  return it->second;
}

int64_t KernelConfig::sysctl(std::string_view name) const {
  auto it = preset_.sysctls.find(name);
  if (it == preset_.sysctls.end()) throw std::logic_error("sysctl not declared: " + std::string(name));
  return it->second;
}

std::string KernelConfig::describe() const {
  std::ostringstream o;
  o << "kernel " << preset_.name << " HZ=" << preset_.hz << "\nfeatures:";
  for (const auto& f : feature_catalog()) {
    const std::string policy = preset_.policy == PolicyKind::Cfs ? "cfs" : "linux24";
    if (f.policy != policy) continue;
    o << ' ' << (feat(f.name) ? "" : "NO_") << f.name;
  }
  o << "\nsysctls:";
  for (const auto& [k, v] : preset_.sysctls) o << ' ' << k << '=' << v;
  o << '\n';
  return o.str();
}

}  // namespace kernel
