// CFS, the Completely Fair Scheduler, as in Linux 4.0 (kernel/sched/fair.c,
// April 2015), with the Linux 3.10 variant selected by the preset version.
//
// What it is: per-CPU runqueues ordered by vruntime (weighted runtime), a
// targeted latency period split among runnable tasks, wakeup preemption with
// a granularity, sleeper credit, and the SMP machinery the seeds are about:
// wake-up placement (select_task_rq_fair: wake_affine with the sync hint,
// wake_wide, select_idle_sibling limited to the waker's or previous CPU's
// LLC), fork balancing (find_idlest_group/cpu), periodic load_balance() over
// the sched-domain hierarchy (find_busiest_group/queue, can_migrate_task,
// task_hot, nr_balance_failed, active balance), newly-idle balancing
// (idle_balance with its era's avg_idle gate and max_newidle_lb_cost) and
// NOHZ idle load balancing by a kicked idle CPU. Load is PELT's
// runnable_load_avg as in 4.0 (3.10: the instantaneous rq weight). Seed 000
// adds two readings of Josef Bacik's unmerged WAKE_IDLE_CPU patch, the
// 2.6.2x SD_WAKE_IDLE search he compared it with, and Mike Galbraith's
// merged wake_wide() rework (WAKE_WIDE_V2). A placement pays for
// the other CPUs' runqueues it reads. What-ifs from later kernels put one
// later rule on this 4.0 at a time; the largest, EEVDF_V66, swaps the
// fair class's own rules for v6.6's EEVDF (section "EEVDF" below).
//
// Group scheduling (CONFIG_FAIR_GROUP_SCHED) is modelled for autogroup
// (sysctl sched_autogroup_enabled=1, 4.0 only): one level of task groups, a
// group entity per CPU whose weight follows calc_cfs_shares() and whose load
// (__update_group_entity_contrib) is the group's share of its tg->load_avg,
// blocked-load accounting (decay_count, removed_load, decay windows of
// 2^20 ns), effective_load() in wake_affine(), task_h_load() in balancing,
// update_blocked_averages(), and pick_next_task_fair()'s put/set of only the
// levels that change.
//
// The same code with every task in the root group is a kernel built with
// CONFIG_FAIR_GROUP_SCHED and autogroup off (sysctl fair_group_sched=1).
// GROUP_RUNNABLE_WEIGHT and GROUP_ENTITY_REFRESH backport v4.15's runnable
// weight of a group entity (its queue's runnable share only) and its
// recomputation at every update into this 4.0 load tracking, as what-ifs;
// load_view_* count how often the load ranks CPUs against their queues.
//
// LOAD_BALANCE_V61 and NEWIDLE_V61 put 6.1's load balancer and newidle
// balancing on this 4.0 (section "LOAD_BALANCE_V61, NEWIDLE_V61" below).
//
// With neither sysctl the model is a kernel built without
// CONFIG_FAIR_GROUP_SCHED: every pick puts and sets the previous task,
// task_h_load() is the task's contribution (3.10: its weight), and no
// update_blocked_averages(); the task load tracking is 4.0's either way
// (a contribution changes only when a 1024 us period has ended).
//
// Where it falls short: with autogroup, a migration inside schedule() (the
// stopper's) puts every level before the pick.
// No cgroups beyond autogroup, no nested groups, no CFS bandwidth, no RT
// class, no NUMA balancing, no rt_avg capacity scaling;
// update_blocked_averages() costs nothing; CPU capacity is static
// (smt_gain/2 for SMT threads). Active balance's stopper moves its task
// when the preempted one's schedule() starts, before that schedule()'s own
// costs are paid, so the new CPU may start it before the trace shows the old
// CPU switch away from it. The stopper is not traced, and a task it leaves
// in place is not switched out and back in. Time spent in balancing and placement is
// charged from the cost model (per CPU scanned), not measured. SD_SERIALIZE
// never contends: a balance pass is instantaneous in simulated time and its
// cost is charged afterwards. The affinity-induced group_imbalanced state
// (LBF_SOME_PINNED -> sgc->imbalance) is tracked, as 4.0 and 6.1
// (LOAD_BALANCE_V61, FIND_IDLEST_V61) set, read and clear it; 3.10's (the
// spread of a group's CPU loads) is not.
#include <algorithm>
#include <array>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "hw/machine.hpp"
#include "kernel/kernel.hpp"
#include "kernel/policies/fair_group.hpp"

namespace kernel {
namespace {

constexpr int64_t NICE_0_LOAD = 1024;
constexpr int64_t SCHED_CAPACITY_SCALE = 1024;
constexpr int CPU_LOAD_IDX_MAX = 5;
constexpr unsigned sched_nr_migrate_break = 32;
constexpr int64_t MAX_PINNED_INTERVAL = 512;

// ---------------------------------------------------------------- PELT --
// kernel/sched/fair.c (v4.0): per-entity load tracking, 1024 ns periods,
// y^32 = 1/2.
constexpr uint32_t runnable_avg_yN_inv[32] = {
    0xffffffff, 0xfa83b2da, 0xf5257d14, 0xefe4b99a, 0xeac0c6e6, 0xe5b906e6, 0xe0ccdeeb, 0xdbfbb796,
    0xd744fcc9, 0xd2a81d91, 0xce248c14, 0xc9b9bd85, 0xc5672a10, 0xc12c4cc9, 0xbd08a39e, 0xb8fbaf46,
    0xb504f333, 0xb123f581, 0xad583ee9, 0xa9a15ab4, 0xa5fed6a9, 0xa2704302, 0x9ef5325f, 0x9b8d39b9,
    0x9837f050, 0x94f4efa8, 0x91c3d373, 0x8ea4398a, 0x8b95c1e3, 0x88980e80, 0x85aac367, 0x82cd8698};
constexpr uint32_t runnable_avg_yN_sum[33] = {
    0,     1002,  1982,  2941,  3880,  4798,  5697,  6576,  7437,  8279,  9103,
    9909,  10698, 11470, 12226, 12966, 13690, 14398, 15091, 15769, 16433, 17082,
    17718, 18340, 18949, 19545, 20128, 20698, 21256, 21802, 22336, 22859, 23371};
constexpr uint64_t LOAD_AVG_PERIOD = 32, LOAD_AVG_MAX = 47742, LOAD_AVG_MAX_N = 345;

uint64_t decay_load(uint64_t val, uint64_t n) {
  if (!n) return val;
  if (n > LOAD_AVG_PERIOD * 63) return 0;
  if (n >= LOAD_AVG_PERIOD) {
    val >>= n / LOAD_AVG_PERIOD;
    n %= LOAD_AVG_PERIOD;
  }
  return static_cast<uint64_t>((static_cast<__uint128_t>(val) * runnable_avg_yN_inv[n]) >> 32);
}

uint32_t compute_runnable_contrib(uint64_t n) {
  if (n <= LOAD_AVG_PERIOD) return runnable_avg_yN_sum[n];
  if (n >= LOAD_AVG_MAX_N) return LOAD_AVG_MAX;
  uint64_t contrib = 0;
  do {
    contrib /= 2;
    contrib += runnable_avg_yN_sum[LOAD_AVG_PERIOD];
    n -= LOAD_AVG_PERIOD;
  } while (n > LOAD_AVG_PERIOD);
  contrib = decay_load(contrib, n);
  return static_cast<uint32_t>(contrib + runnable_avg_yN_sum[n]);
}

// __update_entity_runnable_avg(): returns true when a period rolled over.
// Also 4.0's update_rq_runnable_avg() on a runqueue's RqAvg. An entity also
// sums its running time as v4.1's does (running_avg_sum).
template <class Avg>
bool update_runnable_avg(int64_t now, Avg& sa, bool runnable, bool running = false) {
  constexpr bool tracks_running = requires { sa.running_avg_sum; };
  int64_t delta = now - sa.last_runnable_update;
  if (delta < 0) {
    sa.last_runnable_update = now;
    return false;
  }
  delta >>= 10;
  if (!delta) return false;
  sa.last_runnable_update = now;
  uint64_t d = static_cast<uint64_t>(delta);
  uint64_t delta_w = sa.avg_period % 1024;
  bool decayed = false;
  if (d + delta_w >= 1024) {
    decayed = true;
    delta_w = 1024 - delta_w;
    if (runnable) sa.runnable_avg_sum += delta_w;
    if constexpr (tracks_running)
      if (running) sa.running_avg_sum += delta_w;
    sa.avg_period += delta_w;
    d -= delta_w;
    const uint64_t periods = d / 1024;
    d %= 1024;
    sa.runnable_avg_sum = decay_load(sa.runnable_avg_sum, periods + 1);
    if constexpr (tracks_running) sa.running_avg_sum = decay_load(sa.running_avg_sum, periods + 1);
    sa.avg_period = decay_load(sa.avg_period, periods + 1);
    const uint32_t contrib = compute_runnable_contrib(periods);
    if (runnable) sa.runnable_avg_sum += contrib;
    if constexpr (tracks_running)
      if (running) sa.running_avg_sum += contrib;
    sa.avg_period += contrib;
  }
  if (runnable) sa.runnable_avg_sum += d;
  if constexpr (tracks_running)
    if (running) sa.running_avg_sum += d;
  sa.avg_period += d;
  return decayed;
}

// __update_task_entity_contrib(); returns the change of load_avg_contrib.
int64_t update_contrib(SchedEntity& se) {
  const int64_t old = se.load_avg_contrib;
  se.load_avg_contrib = static_cast<int64_t>(se.runnable_avg_sum * static_cast<uint64_t>(se.load_weight) /
                                             (se.avg_period + 1));
  return se.load_avg_contrib - old;
}

// __calc_delta(): delta * weight / lw, in the kernel's fixed point.
uint64_t calc_delta(uint64_t delta, int64_t weight, int64_t lw_weight) {
  if (lw_weight <= 0) return delta;
  const uint64_t inv = 0xffffffffULL / static_cast<uint64_t>(lw_weight);
  uint64_t fact = static_cast<uint64_t>(weight);
  int shift = 32;
  while (fact >> 32) {
    fact >>= 1;
    --shift;
  }
  fact = static_cast<uint64_t>(static_cast<uint32_t>(fact)) * inv;
  while (fact >> 32) {
    fact >>= 1;
    --shift;
  }
  return static_cast<uint64_t>((static_cast<__uint128_t>(delta) * fact) >> shift);
}

bool entity_before(const SchedEntity* a, const SchedEntity* b) {
  return static_cast<int64_t>(a->vruntime - b->vruntime) < 0;
}

// The rbtree orders by vruntime compared as a signed difference (wrap-safe,
// entity_before()); ties go right, i.e. after earlier insertions.
struct TimelineOrder {
  bool operator()(const std::pair<uint64_t, uint64_t>& a, const std::pair<uint64_t, uint64_t>& b) const {
    const auto d = static_cast<int64_t>(a.first - b.first);
    if (d != 0) return d < 0;
    return a.second < b.second;
  }
};

struct TaskGroup;

}  // namespace

// struct cfs_rq (v4.0): a CPU's root queue, or a task group's queue on it.
struct CfsRq {
  std::set<std::pair<uint64_t, uint64_t>, TimelineOrder> timeline;  // (vruntime, seq)
  std::map<uint64_t, SchedEntity*> by_seq;
  SchedEntity* curr = nullptr;
  SchedEntity* next = nullptr;
  SchedEntity* last = nullptr;
  SchedEntity* skip = nullptr;
  uint64_t min_vruntime = static_cast<uint64_t>(-(1LL << 20));
  // EEVDF_V66: the queued entities' (the running one excluded) weighted
  // keys, sum of (vruntime - min_vruntime) * weight, and their weight.
  int64_t avg_vruntime = 0;
  int64_t avg_load = 0;
  int64_t load_weight = 0;
  int nr_running = 0;    // entities queued here
  int h_nr_running = 0;  // tasks queued here and below
  int64_t runnable_load_avg = 0;
  // Blocked load: the decaying contribution of sleeping entities.
  int64_t blocked_load_avg = 0;
  int64_t removed_load = 0;
  uint64_t decay_counter = 1;
  uint64_t last_decay = 0;
  // A group's queue: its contribution to the group's totals, and the
  // hierarchical load factor.
  TaskGroup* tg = nullptr;  // null for the root queue
  int cpu = 0;
  int64_t tg_load_contrib = 0, tg_runnable_contrib = 0;
  int64_t h_load = 0, last_h_load_update = -1;
  SchedEntity* h_load_next = nullptr;
  bool on_list = false;  // on its CPU's leaf_cfs_rq_list
};

namespace {

// struct task_group: one autogroup, with its queue and entity on each CPU.
struct TaskGroup {
  int id = 0;
  int64_t shares = NICE_0_LOAD;  // sched_create_group(): NICE_0_LOAD
  int64_t load_avg = 0;          // sum of the queues' tg_load_contrib
  int64_t runnable_avg = 0;      // sum of the queues' tg_runnable_contrib
  std::vector<std::unique_ptr<CfsRq>> cfs_rq;
  std::vector<std::unique_ptr<SchedEntity>> se;
};

// set_next_buddy()/set_last_buddy()/set_skip_buddy(): mark se, and each
// ancestor in its parent's queue, as that queue's next/last/skip buddy.
void set_buddy(SchedEntity* se, SchedEntity* CfsRq::*mark) {
  for (; se; se = se->parent) se->cfs_rq->*mark = se;
}

enum class GroupType { Other = 0, Imbalanced, Overloaded };

// 6.1's enum group_type in its order; misfit_task and asym_packing cannot
// arise in the model (every CPU has one capacity) and are left out.
enum class GroupTypeV61 { HasSpare, FullyBusy, Imbalanced, Overloaded };
// 6.1's enum migration_type (migrate_misfit left out): what
// LOAD_BALANCE_V61's env->imbalance counts.
enum class MigrationTypeV61 { Load, Util, Task };

struct SgLbStats {
  int64_t avg_load = 0, group_load = 0, sum_weighted_load = 0, load_per_task = 0, group_capacity = 0;
  int64_t sum_nr_running = 0, group_capacity_factor = 0, idle_cpus = 0, group_weight = 0;
  GroupType group_type = GroupType::Other;
  bool group_has_free_capacity = false;
};

struct SdLbStats {
  int busiest = -1;  // group index
  int local = -1;
  int64_t total_load = 0, total_capacity = 0, avg_load = 0;
  SgLbStats busiest_stat, local_stat;
};

enum LbFlag : unsigned {
  LBF_ALL_PINNED = 1,
  LBF_NEED_BREAK = 2,
  LBF_DST_PINNED = 4,
  LBF_SOME_PINNED = 8,
  LBF_ACTIVE_LB = 16,  // 6.1: the stopper's pass, which ignores cache hotness
};

class Cfs final : public SchedClass {
 public:
  explicit Cfs(SchedCore& core);
  std::string name() const override { return "cfs"; }
  void features_changed() override {
    const bool eevdf = feats_.EEVDF_V66;
    read_features();
    // The queues' avg_vruntime sums are kept only under EEVDF_V66.
    if (feats_.EEVDF_V66 != eevdf)
      throw std::invalid_argument("EEVDF_V66: cannot be switched during a run (--features-at)");
  }
  WakeupChecksByWchan wakeup_checks_by_wchan() const override;
  void task_fork(Task* p) override;
  void init_task_runnable_average(Task* p) override;
  int select_task_rq(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) override;
  const char* wake_placement() const override { return wake_placement_; }
  int select_task_rq_fair(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags);
  // A placement reads other CPUs' runqueues; charged to the deciding CPU.
  void read_rq(int cpu);
  void migrate_task_rq(Task* p, int new_cpu) override;
  void enqueue_task(int cpu, Task* p, int flags) override;
  void dequeue_task(int cpu, Task* p, int flags) override;
  void yield_task(int cpu) override;
  void check_preempt_curr(int cpu, Task* p, int wake_flags) override;
  Task* pick_next_task(int cpu, Task* prev, bool may_balance) override;
  void put_prev_task(int cpu, Task* prev) override;
  void set_curr_task(int cpu, Task* p) override {}
  void task_tick(int cpu, Task* curr) override;
  void trigger_load_balance(int cpu) override;
  void sample_load_view();
  bool group_load_what_if() const { return feats_.GROUP_RUNNABLE_WEIGHT || feats_.GROUP_ENTITY_REFRESH; }
  int64_t load_if_refreshed(int cpu, bool with_blocked) const;
  void nohz_idle_balance(int cpu) override;
  void cpu_stop_work(int cpu) override;
  void cpu_went_idle(int cpu) override;
  void cpu_exited_idle(int cpu) override;
  void set_next_task_idle(int cpu) override;
  bool nohz_idle(int cpu) const override { return nohz_idle_mask_.test(cpu); }
  int nr_running(int cpu) const override { return rq(cpu).cfs.h_nr_running; }
  int64_t runnable_load(int cpu) const override { return rq(cpu).cfs.runnable_load_avg; }
  unsigned long cpu_load0(int cpu) const override { return static_cast<unsigned long>(rq(cpu).cpu_load[0]); }
  bool queue_remote_wakeup(int from, int to) const override {
    // ttwu_queue() (4.0): TTWU_QUEUE && !cpus_share_cache(smp_processor_id(), cpu)
    if (!feats_.TTWU_QUEUE) return false;
    if (!core_.domains().cpus_share_cache(from, to)) return true;
    // ttwu_queue_cond() (6.0+, f3dd3f674555): "If the wakee cpu is idle ...
    // use the wakelist to offload the task activation to the idle ... CPU
    // as the current CPU is likely busy": `cpu != smp_processor_id()` and
    // `!cpu_rq(cpu)->nr_running`. Wakees already on its list are not
    // counted in nr_running, so a CPU with a pending list still qualifies.
    return feats_.TTWU_QUEUE_IDLE_V60 && from != to && nr_running(to) == 0;
  }
  std::string check_invariants() const override;
  std::vector<std::pair<std::string, int64_t>> stats() const override {
    std::vector<std::pair<std::string, int64_t>> v = {{"active_balances", active_balances_},
                                                      {"nohz_kicks", nohz_kicks_}};
    if (feats_.WAKE_IDLE_CPU || feats_.WAKE_IDLE_CPU_LITERAL) {
      v.emplace_back("wake_idle_cpu_slow_paths", wake_idle_fallthroughs_);
      v.emplace_back("wake_idle_cpu_slow_path_busy", wake_idle_busy_results_);
      v.emplace_back("wake_idle_cpu_slow_path_inflight", wake_idle_inflight_results_);
      v.emplace_back("wake_idle_cpu_slow_path_waker_remote", wake_idle_waker_remote_);
      v.emplace_back("wake_idle_cpu_slow_path_moved_socket", wake_idle_moved_socket_);
      v.emplace_back("wake_idle_cpu_slow_path_on_waker_socket", wake_idle_on_waker_socket_);
    }
    if (feats_.SD_WAKE_IDLE) {
      v.emplace_back("sd_wake_idle_searches", sd_wake_idle_searches_);
      v.emplace_back("sd_wake_idle_found", sd_wake_idle_found_);
    }
    // Where select_idle_sibling() found its CPU: target or prev idle, (5.4)
    // the recent_used_cpu, a wholly idle core, an idle CPU (5.4's scan; in
    // 4.0's walk a one-CPU group that is not the target's sibling), the
    // target's idle sibling, or none (the busy target); and (5.4) the
    // select_idle_cpu() scans that SIS_PROP's budget ended before an idle
    // CPU was found. With WAKE_IDLE_CPU a busy target goes on to the slow
    // path.
    v.emplace_back("sis_target_idle", sis_.target);
    v.emplace_back("sis_prev_idle", sis_.prev);
    if (feats_.SELECT_IDLE_V54) v.emplace_back("sis_recent_used_cpu", sis_.recent);
    v.emplace_back("sis_idle_core", sis_.core);
    v.emplace_back("sis_idle_cpu", sis_.cpu);
    v.emplace_back("sis_idle_smt", sis_.smt);
    v.emplace_back("sis_busy_target", sis_.busy);
    if (feats_.SELECT_IDLE_V54) v.emplace_back("sis_scans_cut", sis_.scan_cut);
    if (feats_.WAKE_WIDE && !feats_.WAKE_WIDE_V2) v.emplace_back("wake_wide_refusals", wake_wide_refusals_);
    if (!feats_.WAKE_AFFINE_V54) {
      v.emplace_back("wake_affine_emptied", wake_affine_emptied_);
      v.emplace_back("wake_affine_pulls_across_llc", wake_affine_pulls_across_llc_);
      // The emptied comparisons that pulled (all of them but under
      // WAKE_AFFINE_ALWAYS_COMPARE), and those whose wakee found no idle CPU
      // in the waker's LLC and landed beside the waker.
      v.emplace_back("wake_affine_emptied_pulls", wake_affine_emptied_pulls_);
      v.emplace_back("emptied_pulls_onto_waker_cpu", emptied_pulls_onto_waker_cpu_);
      // The wakeup preemptions by how the wakee was placed: the waker's CPU
      // was its previous one (no wake_affine()), or wake_affine()'s
      // wake_wide() refused, or its load comparison refused, or it pulled
      // after comparing loads, or on an emptied load. The rest
      // of wakeup_preemptions had no affine domain, or were forks and
      // balancing moves. A messaging receiver that preempts its sender
      // reads one message a wakeup: this splits that ping-pong by cause.
      v.emplace_back("wakeup_preemptions_after_local_wakeup", preemptions_by_path_[1]);
      v.emplace_back("wakeup_preemptions_after_wide_refusal", preemptions_by_path_[2]);
      v.emplace_back("wakeup_preemptions_after_refused_pull", preemptions_by_path_[3]);
      v.emplace_back("wakeup_preemptions_after_compared_pull", preemptions_by_path_[4]);
      v.emplace_back("wakeup_preemptions_after_emptied_pull", preemptions_by_path_[5]);
    }
    v.emplace_back("placements", placements_);
    v.emplace_back("placement_rq_reads", placement_scans_);
    // The wakee's side of a batching-or-ping-pong regime: task wakeups whose
    // lag place_entity() capped (vruntime raised to min_vruntime minus the
    // sleeper threshold); the tasks check_preempt_wakeup() compared with the
    // running one (on wakeups, and when fork, balancing or migration queue a
    // task beside it); and how many of those preempted it.
    v.emplace_back("wakeups_lag_capped", lag_capped_);
    // Of those, the wakeups MIGRATED_WAKEE_FULL_CREDIT placed at the
    // threshold as long sleepers (a raise or a fall), with the feature only.
    if (feats_.MIGRATED_WAKEE_FULL_CREDIT)
      v.emplace_back("wakeups_placed_as_long_sleepers", placed_as_long_sleepers_);
    if (feats_.EEVDF_V66) {
      // Under EEVDF_V66 wakeup_credit_us is the lag the wakees were placed
      // with (V - vruntime), and the tick counters stay 0: a slice ends
      // when update_curr() finds the deadline reached. Of the wakeup
      // checks, those whose wakee was ineligible, and those where
      // RUN_TO_PARITY kept an eligible running entity that had not yet had
      // a new slice since its pick.
      v.emplace_back("eevdf_slice_expiries", eevdf_slice_expiries_);
      v.emplace_back("eevdf_wakee_ineligible", eevdf_wakee_ineligible_);
      v.emplace_back("eevdf_parity_held", eevdf_parity_held_);
    }
    // And how far behind min_vruntime the wakees were placed (the sleeper
    // credit, signed: a wakee that ran ahead is placed above; summed, so
    // divide by wakeups_placed), and how far the running entity's vruntime
    // was ahead of the one it was compared with (signed, summed: divide by
    // wakeup_preempt_checks). A check preempts when that lead exceeds the
    // wakeup granularity (4 ms on 8 or more CPUs for a nice-0 wakee; scaled
    // by the weight of the entity compared, so a group entity's differs), so
    // a lead that averages near it marks a ping-pong.
    v.emplace_back("wakeups_placed", wakeups_placed_);
    v.emplace_back("wakeup_credit_us", wakeup_credit_ns_ / 1000);
    // A capped wakeup's credit is the sleeper threshold. An uncapped one's
    // has two parts, summed here over the wakeups_placed - wakeups_lag_capped
    // uncapped wakeups: the wakee's lag when it slept (its queue's
    // min_vruntime minus its vruntime, signed: a wakee still behind from
    // its last placement carries that over, one that ran ahead brings it
    // back), and how far that queue's min_vruntime moved on while it slept
    // (the move renormalizes a migrating wakee's vruntime to its new
    // queue). And how long those wakees slept.
    v.emplace_back("uncapped_lag_at_sleep_us", uncapped_lag_at_sleep_ns_ / 1000);
    v.emplace_back("uncapped_queue_advance_us", uncapped_queue_advance_ns_ / 1000);
    v.emplace_back("uncapped_sleep_us", uncapped_sleep_ns_ / 1000);
    v.emplace_back("wakeup_preempt_checks", wakeup_preempt_checks_);
    v.emplace_back("wakeup_preempt_lead_us", wakeup_preempt_lead_ns_ / 1000);
    v.emplace_back("wakeup_preemptions", wakeup_preemptions_);
    // How deep the running task's queue was at those checks, wakee
    // included (summed: divide by wakeup_preempt_checks), and the checks on
    // a queue of sched_nr_latency tasks or more, where a preemption makes
    // the preempted task the last buddy.
    v.emplace_back("wakeup_preempt_checks_queued", wakeup_preempt_checks_queued_);
    v.emplace_back("wakeup_preempt_checks_scaled", wakeup_preempt_checks_scaled_);
    // The tick's side: ticks that found other entities queued beside the
    // running one (check_preempt_tick(), once per level of a group
    // hierarchy), and the preemptions they requested because the running
    // entity had spent its slice since it was picked, or because its
    // vruntime led the leftmost's by more than a slice. Both read
    // sched_slice(), so the latency's period moves them.
    v.emplace_back("tick_preempt_checks", tick_preempt_checks_);
    v.emplace_back("tick_preemptions_slice_spent", tick_preemptions_slice_spent_);
    v.emplace_back("tick_preemptions_lead", tick_preemptions_lead_);
    // The buddies: wakeup preemptions that made the preempted task the
    // last buddy (LAST_BUDDY, only on a queue of sched_nr_latency tasks or
    // more: check_preempt_wakeup()'s `scale`), and picks where the next or
    // the last buddy ran instead of the leftmost entity (pick_next_entity()).
    // A preempting wakee is always made the next buddy.
    v.emplace_back("last_buddies_set", last_buddies_set_);
    v.emplace_back("last_buddy_picks", last_buddy_picks_);
    v.emplace_back("next_buddy_picks", next_buddy_picks_);
    // /proc/schedstat's load_balance() outcomes, summed over domains.
    static const char* const kIdleName[] = {"busy", "idle", "newidle"};
    for (size_t i = 0; i < lb_stats_.size(); ++i) {
      const std::string t = kIdleName[i];
      v.emplace_back("lb_nobusyg_" + t, lb_stats_[i].nobusyg);
      v.emplace_back("lb_nobusyq_" + t, lb_stats_[i].nobusyq);
      v.emplace_back("lb_failed_" + t, lb_stats_[i].failed);
      v.emplace_back("lb_hot_gained_" + t, lb_stats_[i].hot_gained);
    }
    // se.statistics.nr_failed_migrations_*, summed over tasks, and
    // detach_tasks()' "load/2 > imbalance" skip, which the kernel does not count.
    v.emplace_back("failed_migrations_affine", failed_migrations_affine_);
    v.emplace_back("failed_migrations_running", failed_migrations_running_);
    v.emplace_back("failed_migrations_hot", failed_migrations_hot_);
    v.emplace_back("lb_skipped_too_heavy", skipped_too_heavy_);
    v.emplace_back("load_view_pairs", load_view_pairs_);
    v.emplace_back("load_view_inversions", load_view_inversions_);
    if (group_sched_ && !group_load_what_if()) {
      v.emplace_back("load_view_inversions_if_fresh", load_view_inversions_if_fresh_);
      v.emplace_back("load_view_inversions_if_no_blocked", load_view_inversions_if_no_blocked_);
    }
    return v;
  }

 private:
  struct Rq {
    CfsRq cfs;
    std::list<Task*> cfs_tasks;  // most recently enqueued first
    // leaf_cfs_rq_list: the queues with something to decay, children first.
    std::list<CfsRq*> leaf_cfs_rqs;
    int64_t cpu_load[CPU_LOAD_IDX_MAX] = {};
    int64_t last_load_update_tick = 0;
    int64_t avg_idle = 0;
    int64_t max_idle_balance_cost = 0;
    int64_t idle_stamp = 0;
    int64_t next_balance = 0;
    int64_t cpu_capacity = 1024;
    bool active_balance = false;
    int push_cpu = -1;  // where the stopper's active balance pushes a task
    // The task schedule() put back but pick_next_task_fair() has not yet
    // handled: with group scheduling the pick puts only the levels that
    // change.
    Task* prev = nullptr;
  };
  struct LbEnv {
    SchedDomain* sd = nullptr;
    int sd_level = 0;
    int src_cpu = -1, dst_cpu = -1, new_dst_cpu = -1;
    const hw::CpuMask* dst_grpmask = nullptr;
    CpuIdleType idle = CpuIdleType::NotIdle;
    int64_t imbalance = 0;
    hw::CpuMask cpus;
    unsigned flags = 0;
    unsigned loop = 0, loop_break = sched_nr_migrate_break, loop_max = 0;
    std::vector<Task*> tasks;
    int64_t cpus_scanned_local = 0, cpus_scanned_remote = 0;
    MigrationTypeV61 migration_type = MigrationTypeV61::Load;  // LOAD_BALANCE_V61
    std::vector<int64_t> util_v61;  // LOAD_BALANCE_V61: cpu_util_cfs() by CPU, read once a pass
    bool task_hot = false;          // LOAD_BALANCE_V61: p->sched_task_hot of the task just checked
  };

  Rq& rq(int cpu) { return rqs_[static_cast<size_t>(cpu)]; }
  const Rq& rq(int cpu) const { return rqs_[static_cast<size_t>(cpu)]; }
  // rq_clock_task(): what CFS charges runtime and tracks load on. It moves
  // only at update_rq_clock() (kernel.cpp), so it lags the simulated time
  // inside a clock-skip window and on an idle CPU.
  int64_t clock_task(int cpu) const { return core_.rq_clock_task(cpu); }
  int version() const { return core_.config().preset().version; }

  // fair.c core
  // sysctl_sched_latency (scaled) and the sched_nr_latency it gives.
  struct Latency {
    uint64_t ns = 0;
    unsigned nr = 8;
  };
  [[nodiscard]] Latency latency_of(uint64_t ns) const;
  uint64_t sched_period(int nr_running, const Latency& latency) const;
  uint64_t sched_slice(const CfsRq& cfs, const SchedEntity* se) const;
  // At another latency (the what-ifs init_load_latency_ns, tick_slice_latency_ns).
  uint64_t sched_slice(const CfsRq& cfs, const SchedEntity* se, const Latency& latency) const;
  uint64_t sched_vslice(const CfsRq& cfs, const SchedEntity* se) const;
  uint64_t calc_delta_fair(uint64_t delta, const SchedEntity* se) const;
  void update_min_vruntime(CfsRq& cfs);
  void update_curr(CfsRq& cfs);
  void place_entity(CfsRq& cfs, SchedEntity* se, bool initial);
  // EEVDF_V66 (v6.6 fair.c): the fair class's rules of 6.6, on 4.0's
  // placement, balancing and load tracking.
  static int64_t entity_key(const CfsRq& cfs, const SchedEntity* se);
  static void avg_vruntime_add(CfsRq& cfs, const SchedEntity* se);
  static void avg_vruntime_sub(CfsRq& cfs, const SchedEntity* se);
  static uint64_t avg_vruntime(const CfsRq& cfs);
  static bool entity_eligible(const CfsRq& cfs, const SchedEntity* se);
  void update_entity_lag(CfsRq& cfs, SchedEntity* se);
  void update_deadline(CfsRq& cfs, SchedEntity* se);
  void place_entity_eevdf(CfsRq& cfs, SchedEntity* se, bool initial, bool wakeup);
  SchedEntity* pick_eevdf(CfsRq& cfs);
  void check_preempt_wakeup_eevdf(int cpu, Task* p, int wake_flags);
  void account_entity_enqueue(CfsRq& cfs, SchedEntity* se);
  void account_entity_dequeue(CfsRq& cfs, SchedEntity* se);
  void enqueue_entity(CfsRq& cfs, SchedEntity* se, int flags);
  void dequeue_entity(CfsRq& cfs, SchedEntity* se, int flags);
  void enqueue_task_fair(int cpu, Task* p, int flags);
  void dequeue_task_fair(int cpu, Task* p, int flags);
  void tree_insert(CfsRq& cfs, SchedEntity* se);
  void tree_erase(CfsRq& cfs, SchedEntity* se);
  SchedEntity* pick_first(const CfsRq& cfs) const;
  SchedEntity* pick_second(const CfsRq& cfs, const SchedEntity* after) const;
  SchedEntity* pick_next_entity(CfsRq& cfs, SchedEntity* curr);
  void set_next_entity(CfsRq& cfs, SchedEntity* se);
  void put_prev_entity(CfsRq& cfs, SchedEntity* prev);
  void put_prev_task_fair(Task* prev);
  Task* pick_next_task_grouped(int cpu, bool may_balance);
  void flush_prev(int cpu);
  Task* most_recently_used(int cpu, Task* p);
  void clear_buddies(CfsRq& cfs, SchedEntity* se);
  // nr_running: the waking check's queue depth, for WAKEUP_GRAN_BY_NR_RUNNING
  // (0 on the pick's calls, which the patch leaves unscaled).
  int wakeup_preempt_entity(const SchedEntity* curr, const SchedEntity* se, int nr_running = 0) const;
  void check_preempt_wakeup(int cpu, Task* p, int wake_flags);
  void check_preempt_tick(CfsRq& cfs, SchedEntity* curr);
  void entity_tick(CfsRq& cfs, SchedEntity* curr);
  void update_cpu_load(int cpu, int64_t this_load, int64_t pending_updates);

  // load tracking (PELT with blocked load, 4.0)
  void update_entity_load_avg(SchedEntity* se, bool update_cfs_rq);
  int64_t update_entity_load_avg_contrib(SchedEntity* se);
  uint64_t synchronize_entity_decay(SchedEntity* se);
  void enqueue_entity_load_avg(CfsRq& cfs, SchedEntity* se, bool wakeup);
  void dequeue_entity_load_avg(CfsRq& cfs, SchedEntity* se, bool sleep);
  void update_cfs_rq_blocked_load(CfsRq& cfs, bool force_update);
  void list_add_leaf_cfs_rq(CfsRq& cfs);
  void update_blocked_averages(int cpu);

  // group scheduling
  TaskGroup* task_group(const Task* p);
  void set_task_rq(Task* p, int cpu);
  int64_t calc_tg_weight(const TaskGroup& tg, const CfsRq& cfs) const;
  int64_t calc_cfs_shares(const CfsRq& cfs, const TaskGroup& tg) const;
  void reweight_entity(CfsRq& cfs, SchedEntity* se, int64_t weight);
  void update_cfs_shares(CfsRq& cfs);
  int64_t effective_load(const TaskGroup* tg, int cpu, int64_t wl, int64_t wg) const;
  void update_cfs_rq_h_load(CfsRq& cfs);
  int64_t task_h_load(Task* p);

  // placement
  int64_t weighted_cpuload(int cpu) const;
  int64_t source_load(int cpu, int type) const;
  int64_t target_load(int cpu, int type) const;
  int64_t capacity_of(int cpu) const { return rq(cpu).cpu_capacity; }
  int64_t cpu_avg_load_per_task(int cpu) const;
  void record_wakee(Task* p);
  bool wake_wide(Task* p) const;
  bool wake_affine(const SchedDomain& sd, Task* p, int sync);
  int select_idle_sibling(Task* p, int target);
  int find_idlest_group(const SchedDomain& sd, Task* p, int this_cpu, uint32_t sd_flag);
  int find_idlest_cpu(const SchedGroup& group, Task* p, int this_cpu);
  int shallowest_idle_or_least_loaded(const SchedGroup& group, Task* p, int this_cpu, bool v61);
  int find_idlest_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu);
  // FIND_IDLEST_V61: 6.1's find_idlest_group() and find_idlest_group_cpu().
  struct GroupStatsV61;
  GroupTypeV61 group_classify_v61(int64_t imbalance_pct, const SchedGroup& group, const GroupStatsV61& sgs) const;
  bool sg_imbalanced(const SchedGroup& group) const {
    return group.sgc >= 0 && sgc_imbalance_[static_cast<size_t>(group.sgc)];
  }
  void update_sg_wakeup_stats(const SchedDomain& sd, const SchedGroup& group, Task* p,
                              const std::vector<int64_t>& util_without_p, GroupStatsV61& sgs);
  int find_idlest_group_v61(const SchedDomain& sd, Task* p, int this_cpu);
  int find_idlest_group_cpu_v61(const SchedGroup& group, Task* p, int this_cpu);
  int64_t cpu_load_v61(int cpu) const;
  std::vector<int64_t> cpu_utils_v61(const Task* without = nullptr) const;
  int64_t own_load_v61(const Task* p) const;
  int imb_numa_nr(int cpu, const SchedDomain& sd) const;
  int wake_idle_slow_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu);
  int wake_idle(Task* p, int cpu);
  int select_task_rq_v43(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags);
  bool wake_wide_v43(Task* p) const;
  // v5.4's wake placement (what-ifs WAKE_AFFINE_V54, SELECT_IDLE_V54).
  bool wake_affine_v54(const SchedDomain& sd, Task* p, int this_cpu, int prev_cpu, int sync);
  int select_idle_sibling_v54(Task* p, int prev, int target);
  int select_idle_core(Task* p, const SchedDomain& llc, int target);
  int select_idle_cpu(Task* p, const SchedDomain& llc, int target);
  int select_idle_smt(Task* p, int target);
  int wake_target(Task* p, int prev, int target, bool want_affine);

  // balancing
  int load_balance(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing);
  bool should_we_balance(LbEnv& env);
  int find_busiest_group(LbEnv& env, SdLbStats& sds);
  void update_sd_lb_stats(LbEnv& env, SdLbStats& sds);
  template <class Sds, class UpdateGroup, class PickBusiest>
  void walk_sd_groups(LbEnv& env, Sds& sds, UpdateGroup update_group, PickBusiest pick_busiest);
  GroupType group_classify(const SchedGroup& group, const SgLbStats& sgs) const;
  // sd_parent->groups->sgc->imbalance: the flag on the parent's local group
  // (from v3.13; see group_classify()).
  void set_group_imbalance(const SchedDomain& parent, bool imbalanced) {
    if (version() < 313) return;
    sgc_imbalance_[static_cast<size_t>(parent.groups.front().sgc)] = imbalanced;
  }
  void update_sg_lb_stats(LbEnv& env, const SchedGroup& group, int load_idx, bool local,
                          SgLbStats& sgs, bool* overload);
  int64_t sg_capacity_factor(const LbEnv& env, const SchedGroup& group) const;
  void calculate_imbalance(LbEnv& env, SdLbStats& sds);
  void fix_small_imbalance(LbEnv& env, SdLbStats& sds);
  int find_busiest_queue(LbEnv& env, const SchedGroup& group);
  bool can_migrate_task(Task* p, LbEnv& env);
  bool task_hot(Task* p, const LbEnv& env);
  int detach_tasks(LbEnv& env);
  static bool detach_loop_ends(LbEnv& env);
  int more_balance(LbEnv& env, int busiest);
  void detach_task(Task* p, LbEnv& env);
  void attach_tasks(LbEnv& env);
  void move_task(Task* p, int src, int dst);
  int idle_balance(int this_cpu);
  void rebalance_domains(int cpu, CpuIdleType idle);
  int64_t get_sd_balance_interval(const SchedDomain& sd, bool cpu_busy) const;
  void active_load_balance(int busiest_cpu, int target_cpu);
  int64_t balance_cost(const LbEnv& env, int moved) const;
  void count_scanned(LbEnv& env, int cpu) const;
  bool nohz_kick_needed(int cpu);
  // LOAD_BALANCE_V61 and NEWIDLE_V61: 6.1's load_balance() and newidle balancing.
  struct SdLbStatsV61;
  static int imbalance_pct_v61(const SchedDomain& sd);
  void update_sg_lb_stats_v61(LbEnv& env, const SchedGroup& group, GroupStatsV61& sgs, bool* overload);
  void update_sd_lb_stats_v61(LbEnv& env, SdLbStatsV61& sds);
  void calculate_imbalance_v61(LbEnv& env, SdLbStatsV61& sds);
  int find_busiest_group_v61(LbEnv& env);
  int find_busiest_queue_v61(LbEnv& env, const SchedGroup& group);
  int detach_tasks_v61(LbEnv& env);
  bool need_active_balance_v61(const LbEnv& env) const;
  bool should_we_balance_v61(LbEnv& env);
  int load_balance_v61(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing);
  bool update_newidle_cost_v61(SchedDomain& sd, int64_t cost, unsigned success);
  static void update_newidle_stats_v61(SchedDomain& sd, unsigned success);
  static bool busier_v61(const GroupStatsV61& sgs, const GroupStatsV61& busiest);
  int64_t task_util_v61(const Task* p) const;
  // The 6.1 what-ifs that read a task's running average (util_avg), which
  // then is kept as 6.1 keeps it: updated before the task runs, seeded at
  // fork.
  bool pelt_v61() const { return feats_.LOAD_BALANCE_V61 || feats_.FIND_IDLEST_V61; }

  SchedCore& core_;
  std::vector<Rq> rqs_;
  std::map<int, std::unique_ptr<TaskGroup>> groups_;  // autogroups by id
  bool group_sched_ = false;  // CONFIG_FAIR_GROUP_SCHED (fair_group_sched, or autogroup)
  uint64_t next_seq_ = 0;
  bool rd_overload_ = false;
  // sgc->imbalance by SchedGroup::sgc: set when a balance at the level below
  // failed to reach balance because of affinity, cleared when one reaches it.
  std::vector<uint8_t> sgc_imbalance_;
  hw::CpuMask nohz_idle_mask_;
  int64_t nohz_next_balance_ = 0;
  // schedstat counters, indexed by CpuIdleType (NotIdle, Idle, NewlyIdle).
  struct LbSchedstat {
    int64_t nobusyg = 0, nobusyq = 0, failed = 0, hot_gained = 0;
  };
  std::array<LbSchedstat, 3> lb_stats_{};
  int64_t failed_migrations_affine_ = 0, failed_migrations_running_ = 0, failed_migrations_hot_ = 0;
  int64_t skipped_too_heavy_ = 0;
  int64_t load_view_pairs_ = 0, load_view_inversions_ = 0, load_view_jiffy_ = -1;
  int64_t load_view_inversions_if_fresh_ = 0, load_view_inversions_if_no_blocked_ = 0;
  int64_t max_load_balance_interval_ = 1;
  uint64_t latency_, min_gran_, wakeup_gran_;
  unsigned nr_latency_ = 8;
  // The latency init_task_runnable_average() and check_preempt_tick() slice
  // with: latency_ and nr_latency_, unless the what-ifs init_load_latency_ns
  // and tick_slice_latency_ns set another.
  Latency init_load_latency_, tick_latency_;
  int64_t migration_cost_;
  int64_t active_balances_ = 0, nohz_kicks_ = 0, wake_idle_fallthroughs_ = 0, wake_idle_busy_results_ = 0,
          wake_idle_inflight_results_ = 0, sd_wake_idle_searches_ = 0, sd_wake_idle_found_ = 0;
  // wake_affine() calls that 4.0's wake_wide() answered before the loads.
  int64_t wake_wide_refusals_ = 0;
  // wake_affine() load comparisons where this_load read zero or below (for
  // a sync wakeup, after the subtraction), where 4.0 pulls whatever
  // prev_cpu's load unless WAKE_AFFINE_ALWAYS_COMPARE; and pulls between
  // CPUs that share no LLC.
  int64_t wake_affine_emptied_ = 0, wake_affine_pulls_across_llc_ = 0;
  int64_t wake_affine_emptied_pulls_ = 0, emptied_pulls_onto_waker_cpu_ = 0;
  std::array<int64_t, 6> preemptions_by_path_{};  // indexed by Task::WakePath
  // Where the fall-through's search starts (the waker's socket) and ends,
  // against the wakee's previous CPU's socket.
  int64_t wake_idle_waker_remote_ = 0, wake_idle_moved_socket_ = 0, wake_idle_on_waker_socket_ = 0;
  int64_t placement_scan_ns_ = 0;  // runqueue reads of the select_task_rq() in progress
  hw::CpuMask placement_read_;     // the runqueues it has read (now in cache)
  int64_t placement_scans_ = 0;    // runqueues read by placements, for stats()
  int64_t placements_ = 0;         // select_task_rq() calls, for stats()
  int64_t lag_capped_ = 0, wakeup_preempt_checks_ = 0, wakeup_preemptions_ = 0;  // for stats()
  int64_t tick_preempt_checks_ = 0, tick_preemptions_slice_spent_ = 0, tick_preemptions_lead_ = 0;
  int64_t last_buddies_set_ = 0, last_buddy_picks_ = 0, next_buddy_picks_ = 0;
  int64_t wakeup_preempt_checks_queued_ = 0, wakeup_preempt_checks_scaled_ = 0;
  int64_t wakeups_placed_ = 0, wakeup_credit_ns_ = 0, wakeup_preempt_lead_ns_ = 0;
  int64_t uncapped_sleep_ns_ = 0, uncapped_lag_at_sleep_ns_ = 0, uncapped_queue_advance_ns_ = 0;
  int64_t placed_as_long_sleepers_ = 0;  // MIGRATED_WAKEE_FULL_CREDIT's wakeups
  // EEVDF_V66: update_deadline()'s reschedules of a running entity that
  // reached its deadline with others queued; and of the wakeup checks,
  // those whose wakee was not eligible, and those whose eligible running
  // entity RUN_TO_PARITY kept (no new slice since its pick).
  int64_t eevdf_slice_expiries_ = 0, eevdf_wakee_ineligible_ = 0, eevdf_parity_held_ = 0;
  // v5.4's LLC-wide state, indexed by llc_id (the LLC's first CPU):
  // sd_llc_shared->has_idle_cores and sd_llc->avg_scan_cost (ns).
  std::vector<char> has_idle_cores_;
  std::vector<int64_t> avg_scan_cost_;
  // Every feature CFS reads, read once at construction: a run's
  // configuration is fixed, and a lookup by name on every wakeup and
  // enqueue was ~5% of a pipe run.
#define CFS_FEATURES(X) \
  X(CACHE_HOT_BUDDY) \
  X(EEVDF_V66) \
  X(EEVDF_NO_PLACE_LAG) \
  X(EEVDF_NO_RUN_TO_PARITY) \
  X(FIND_IDLEST_V61) \
  X(GENTLE_FAIR_SLEEPERS) \
  X(GROUP_ENTITY_REFRESH) \
  X(GROUP_RUNNABLE_WEIGHT) \
  X(LAST_BUDDY) \
  X(LB_BIAS) \
  X(LB_MIN) \
  X(LOAD_BALANCE_V61) \
  X(MIGRATED_WAKEE_FULL_CREDIT) \
  X(NEWIDLE_COST) \
  X(NEWIDLE_V61) \
  X(NEXT_BUDDY) \
  X(NOHZ_ILB_OTHERS_FIRST) \
  X(SD_WAKE_IDLE) \
  X(SELECT_IDLE_V54) \
  X(START_DEBIT) \
  X(TTWU_QUEUE) \
  X(TTWU_QUEUE_IDLE_V60) \
  X(WAKEUP_GRAN_BY_NR_RUNNING) \
  X(WAKEUP_PREEMPTION) \
  X(WAKE_AFFINE_ALWAYS_COMPARE) \
  X(WAKE_AFFINE_V54) \
  X(WAKE_IDLE_CPU) \
  X(WAKE_IDLE_CPU_LITERAL) \
  X(WAKE_RENORM_V47) \
  X(WAKE_WIDE) \
  X(WAKE_WIDE_V2)
  struct FeatureBits {
#define CFS_FEATURE_BIT(name) bool name = false;
    CFS_FEATURES(CFS_FEATURE_BIT)
#undef CFS_FEATURE_BIT
  } feats_;
  struct SisStats {
    int64_t target = 0, prev = 0, recent = 0, core = 0, cpu = 0, smt = 0, busy = 0, scan_cut = 0;
  } sis_;
  const char* wake_placement_ = "wake";
  // The branch that chose the last placement's CPU, read from the counters
  // it moved (the slow path after a busy select_idle_sibling() result wins).
  const char* placement_branch(const Task* p, const SisStats& before, int64_t fallthroughs_before,
                               int64_t sd_wake_idle_found_before) const;
  int64_t last_balance_cost_ = 0;
  // wakeup_checks_by_wchan(), keyed by the labels' pointers (wchans are
  // string literals): a handful of pairs, searched in order.
  struct CheckPair {
    const char* queued;
    const char* running;
    WakeupCheckTally tally;
  };
  std::vector<CheckPair> checks_by_wchan_;
  WakeupCheckTally& check_tally(const Task* queued, const Task* running, int wake_flags);
  void read_features() {
#define CFS_FEATURE_READ(name) feats_.name = core_.config().feat(#name);
    CFS_FEATURES(CFS_FEATURE_READ)
#undef CFS_FEATURE_READ
  }
};

Cfs::Cfs(SchedCore& core) : core_(core) {
  const int n = core.nr_cpus();
  rqs_.resize(static_cast<size_t>(n));
  migration_cost_ = core.config().sysctl("sched_migration_cost_ns");
  core.config().check_consistent();
  for (int c = 0; c < n; ++c) {
    Rq& r = rq(c);
    r.avg_idle = 2 * migration_cost_;  // sched_init()
    r.max_idle_balance_cost = migration_cost_;
    // cpu_capacity: smt_gain (1178) shared by the siblings (arch_scale_cpu_capacity).
    const int sib = core.machine().topo().smt_mask(c).weight();
    r.cpu_capacity = sib > 1 ? 1178 / sib : SCHED_CAPACITY_SCALE;
    r.cfs.cpu = c;
  }
  sgc_imbalance_.assign(static_cast<size_t>(core.domains().nr_sgc()), 0);  // __sdt_alloc(): kzalloc
  // Every CPU entered idle at boot, so each LLC starts with an idle core
  // recorded (__update_idle_core()); the scan cost starts at 0 (kzalloc).
  has_idle_cores_.assign(static_cast<size_t>(n), 1);
  avg_scan_cost_.assign(static_cast<size_t>(n), 0);
  read_features();
  group_sched_ =
      core.config().sysctl("sched_autogroup_enabled") != 0 || core.config().sysctl("fair_group_sched") != 0;
  if (group_sched_ && feats_.EEVDF_V66)
    throw std::invalid_argument("EEVDF_V66: modelled without group scheduling (sched_autogroup_enabled=0, fair_group_sched=0)");
  if (group_sched_ && version() < 400)
    throw std::invalid_argument(
        "sched_autogroup_enabled, fair_group_sched: group scheduling is modelled only as in Linux 4.0");
  // update_sysctl(): factor = 1 + ilog2(min(ncpus, 8)) with SCHED_TUNABLESCALING_LOG.
  const int cpus = std::min(n, 8);
  int factor = 1;
  switch (core.config().sysctl("sched_tunable_scaling")) {
    case 0: factor = 1; break;
    case 2: factor = cpus; break;
    default: {
      int l = 0;
      while ((1 << (l + 1)) <= cpus) ++l;
      factor = 1 + l;
    }
  }
  latency_ = static_cast<uint64_t>(factor * core.config().sysctl("sched_latency_ns"));
  min_gran_ = static_cast<uint64_t>(factor * core.config().sysctl("sched_min_granularity_ns"));
  wakeup_gran_ = static_cast<uint64_t>(factor * core.config().sysctl("sched_wakeup_granularity_ns"));
  // sched_nr_latency is 8 at boot; a write to the sysctls recomputes it as
  // DIV_ROUND_UP(latency, min_granularity) (sched_proc_update_handler(),
  // fair.c 3.10/4.0). The two agree at the defaults (24 / 3 ms on 8+ CPUs).
  nr_latency_ = latency_of(latency_).nr;
  const auto what_if_latency = [&](const char* sysctl) {
    const int64_t ns = core.config().sysctl(sysctl);
    return ns > 0 ? latency_of(static_cast<uint64_t>(factor * ns)) : Latency{latency_, nr_latency_};
  };
  init_load_latency_ = what_if_latency("init_load_latency_ns");
  tick_latency_ = what_if_latency("tick_slice_latency_ns");
  // update_max_interval(): HZ * num_online_cpus() / 10
  max_load_balance_interval_ = std::max<int64_t>(1, core.config().hz() * n / 10);
}

// ------------------------------------------------------------- basics ---

Cfs::Latency Cfs::latency_of(uint64_t ns) const {
  return {ns, static_cast<unsigned>(std::max<uint64_t>(1, (ns + min_gran_ - 1) / std::max<uint64_t>(1, min_gran_)))};
}

uint64_t Cfs::sched_period(int nr_running, const Latency& latency) const {
  uint64_t period = latency.ns;
  if (static_cast<unsigned>(nr_running) > latency.nr) period = min_gran_ * static_cast<uint64_t>(nr_running);
  return period;
}

// The slice of the period at the entity's own level, scaled by its share at
// each level above.
uint64_t Cfs::sched_slice(const CfsRq& cfs, const SchedEntity* se) const {
  return sched_slice(cfs, se, Latency{latency_, nr_latency_});
}

uint64_t Cfs::sched_slice(const CfsRq& cfs, const SchedEntity* se, const Latency& latency) const {
  uint64_t slice = sched_period(cfs.nr_running + (se->on_rq ? 0 : 1), latency);
  for (; se; se = se->parent) {
    const CfsRq& q = *se->cfs_rq;
    const int64_t load = q.load_weight + (se->on_rq ? 0 : se->load_weight);
    slice = calc_delta(slice, se->load_weight, load);
  }
  return slice;
}

uint64_t Cfs::calc_delta_fair(uint64_t delta, const SchedEntity* se) const {
  if (se->load_weight != NICE_0_LOAD) delta = calc_delta(delta, NICE_0_LOAD, se->load_weight);
  return delta;
}

uint64_t Cfs::sched_vslice(const CfsRq& cfs, const SchedEntity* se) const {
  return calc_delta_fair(sched_slice(cfs, se), se);
}

SchedEntity* Cfs::pick_first(const CfsRq& cfs) const {
  if (cfs.timeline.empty()) return nullptr;
  return cfs.by_seq.at(cfs.timeline.begin()->second);
}

SchedEntity* Cfs::pick_second(const CfsRq& cfs, const SchedEntity* after) const {
  auto it = cfs.timeline.find({after->tree_key, after->tree_seq});
  if (it == cfs.timeline.end()) return nullptr;
  ++it;
  if (it == cfs.timeline.end()) return nullptr;
  return cfs.by_seq.at(it->second);
}

void Cfs::tree_insert(CfsRq& cfs, SchedEntity* se) {
  se->tree_seq = next_seq_++;
  se->tree_key = se->vruntime;
  se->in_tree = true;
  cfs.timeline.insert({se->tree_key, se->tree_seq});
  cfs.by_seq[se->tree_seq] = se;
  if (feats_.EEVDF_V66) avg_vruntime_add(cfs, se);
}

void Cfs::tree_erase(CfsRq& cfs, SchedEntity* se) {
  if (!se->in_tree) return;
  if (feats_.EEVDF_V66) avg_vruntime_sub(cfs, se);
  cfs.timeline.erase({se->tree_key, se->tree_seq});
  cfs.by_seq.erase(se->tree_seq);
  se->in_tree = false;
}

void Cfs::update_min_vruntime(CfsRq& cfs) {
  uint64_t vruntime = cfs.min_vruntime;
  // v6.6 reads the running entity only while it is queued.
  const SchedEntity* curr = cfs.curr && (cfs.curr->on_rq || !feats_.EEVDF_V66) ? cfs.curr : nullptr;
  if (curr) vruntime = curr->vruntime;
  if (SchedEntity* left = pick_first(cfs)) {
    if (!curr)
      vruntime = left->vruntime;
    else if (static_cast<int64_t>(left->vruntime - vruntime) < 0)
      vruntime = left->vruntime;
  }
  const auto delta = static_cast<int64_t>(vruntime - cfs.min_vruntime);
  if (delta > 0) {
    // __update_min_vruntime(): the keys move back by delta (avg_vruntime_update()).
    if (feats_.EEVDF_V66) cfs.avg_vruntime -= cfs.avg_load * delta;
    cfs.min_vruntime = vruntime;
  }
}

// update_curr() (4.0 fair.c) reads rq_clock_task(), not the time: after a
// wakeup preemption the clock stays at the wakee's enqueue until the switch
// (rq_clock_skip_update()), so the rest of the waker's slice and its
// schedule() are charged to the wakee, whose exec_start set_next_entity()
// takes from that same stale clock.
void Cfs::update_curr(CfsRq& cfs) {
  SchedEntity* curr = cfs.curr;
  if (!curr) return;
  const int64_t now = clock_task(cfs.cpu);
  const int64_t delta_exec = now - curr->exec_start;
  if (delta_exec <= 0) return;
  curr->exec_start = now;
  curr->sum_exec_runtime += delta_exec;
  curr->vruntime += calc_delta_fair(static_cast<uint64_t>(delta_exec), curr);
  // 4.0 fair.c update_curr(): "if (entity_is_task(curr))
  // trace_sched_stat_runtime(curtask, delta_exec, curr->vruntime);"
  if (curr->task) core_.note_stat_runtime(cfs.cpu, curr->task, delta_exec, curr->vruntime);
  if (feats_.EEVDF_V66) update_deadline(cfs, curr);
  update_min_vruntime(cfs);
}

void Cfs::place_entity(CfsRq& cfs, SchedEntity* se, bool initial) {
  // The credit before the sleeper threshold caps it: how far this queue's
  // min_vruntime is ahead of the wakee's vruntime (task_waking_fair() made
  // that relative to its old queue, enqueue_entity() added this one's).
  const int64_t uncapped_credit = static_cast<int64_t>(cfs.min_vruntime - se->vruntime);
  uint64_t vruntime = cfs.min_vruntime;
  if (initial && feats_.START_DEBIT) vruntime += sched_vslice(cfs, se);
  if (!initial) {
    uint64_t thresh = latency_;
    if (feats_.GENTLE_FAIR_SLEEPERS) thresh >>= 1;
    vruntime -= thresh;
  }
  // MIGRATED_WAKEE_FULL_CREDIT, 829c1651e9 "sched/fair: sanitize vruntime
  // of entity being placed" (v6.3-rc1, fair.c place_entity()): an entity
  // that slept over 60 s is placed at the threshold whatever its own
  // vruntime, the sleep read as rq_clock_task() - se->exec_start. A new
  // task's exec_start is 0, and so is a migrated one's (migrate_task_rq()
  // below), so on a box up for more than a minute every migrated wakee
  // reads as a long sleeper: the bug Vincent Guittot named (LKML
  // 2023-02-21, <CAKfTPtCDxdVEmPQf=6g7n7Y+bkozXAJT1NG92wDc_quNaDiHMg@mail.gmail.com>).
  // The model's rq clock starts 100 s after boot (Kernel::SCHED_CLOCK_AT_START_NS),
  // so the kernel's test reads a zero exec_start as it did there.
  constexpr int64_t kLongSleepNs = 60LL * 1000 * 1000 * 1000;
  const bool long_sleeper =
      feats_.MIGRATED_WAKEE_FULL_CREDIT && clock_task(cfs.cpu) - se->exec_start > kLongSleepNs;
  const bool capped = long_sleeper || static_cast<int64_t>(vruntime - se->vruntime) > 0;
  if (long_sleeper && !initial && se->task) ++placed_as_long_sleepers_;
  if (capped) {
    se->vruntime = vruntime;
    if (!initial && se->task) ++lag_capped_;
  }
  if (!initial && se->task) {
    ++wakeups_placed_;
    wakeup_credit_ns_ += static_cast<int64_t>(cfs.min_vruntime - se->vruntime);
    if (!capped) {
      // A wakeup follows a dequeue_entity() with DEQUEUE_SLEEP, which set both.
      const Task& p = *se->task;
      if (p.slept_at_ns < 0) throw std::logic_error("place_entity(): a task wakeup with no sleep before it");
      uncapped_sleep_ns_ += core_.now_ns() - p.slept_at_ns;
      uncapped_lag_at_sleep_ns_ += p.lag_at_sleep_ns;
      uncapped_queue_advance_ns_ += uncapped_credit - p.lag_at_sleep_ns;
    }
  }
}

// -------------------------------------------------------------- EEVDF ---
// EEVDF_V66, a what-if: the fair class's own rules as v6.6 has them
// (kernel/sched/fair.c after 147f3efaa241 "sched/fair: Implement an
// EEVDF-like scheduling policy" and its series, with features.h's
// defaults PLACE_LAG, PLACE_DEADLINE_INITIAL and RUN_TO_PARITY on,
// NEXT_BUDDY off), put on 4.0's placement, balancing and PELT as the
// stop-60 what-if put 6.3's placement bug there. An entity asks for a
// slice (sysctl_sched_base_slice: 4.0's min granularity renamed, 0.75 ms
// scaled to 3 ms on 8+ CPUs), gets a virtual deadline one slice of its
// weight ahead, and the pick is the eligible entity (vruntime at or
// below the queue's weighted average V) with the earliest deadline. A
// sleeper keeps the lag it had when it left (V - vruntime, clamped to two
// slices), scaled for the weight it brings back; there is no sleeper
// credit, no wakeup granularity and no tick check of the slice beyond the
// deadline's renewal. Where it falls short: pick_eevdf() finds what
// __pick_eevdf()'s heap search over the augmented tree finds, the
// eligible entity with the earliest deadline, by a walk in vruntime
// order, so among queued entities with equal deadlines it takes the
// lowest vruntime where the heap search takes whichever it meets first;
// not combined with group scheduling; reweight_entity()'s lag rescaling
// is not modelled (nice never changes here).

// entity_key(): the entity's vruntime relative to the queue's
// min_vruntime, the origin avg_vruntime is kept against.
int64_t Cfs::entity_key(const CfsRq& cfs, const SchedEntity* se) {
  return static_cast<int64_t>(se->vruntime - cfs.min_vruntime);
}

// avg_vruntime_add()/avg_vruntime_sub(): __enqueue_entity() and
// __dequeue_entity() keep the sums over the tree's entities.
void Cfs::avg_vruntime_add(CfsRq& cfs, const SchedEntity* se) {
  cfs.avg_vruntime += entity_key(cfs, se) * se->load_weight;
  cfs.avg_load += se->load_weight;
}

void Cfs::avg_vruntime_sub(CfsRq& cfs, const SchedEntity* se) {
  cfs.avg_vruntime -= entity_key(cfs, se) * se->load_weight;
  cfs.avg_load -= se->load_weight;
}

// avg_vruntime(): V, the weighted average vruntime of the queued entities
// and the running one, rounded towards minus infinity.
uint64_t Cfs::avg_vruntime(const CfsRq& cfs) {
  int64_t avg = cfs.avg_vruntime;
  int64_t load = cfs.avg_load;
  if (const SchedEntity* curr = cfs.curr; curr && curr->on_rq) {
    avg += entity_key(cfs, curr) * curr->load_weight;
    load += curr->load_weight;
  }
  if (load) {
    if (avg < 0) avg -= load - 1;  // "sign flips effective floor / ceil"
    avg /= load;
  }
  return cfs.min_vruntime + static_cast<uint64_t>(avg);
}

// entity_eligible(): lag >= 0, i.e. vruntime <= V, compared without the
// division: sum((v_i - v0) * w_i) >= (v - v0) * sum(w_i).
bool Cfs::entity_eligible(const CfsRq& cfs, const SchedEntity* se) {
  int64_t avg = cfs.avg_vruntime;
  int64_t load = cfs.avg_load;
  if (const SchedEntity* curr = cfs.curr; curr && curr->on_rq) {
    avg += entity_key(cfs, curr) * curr->load_weight;
    load += curr->load_weight;
  }
  return avg >= entity_key(cfs, se) * load;
}

// update_entity_lag() (at every dequeue): the entity's lag, clamped to
// its weight's share of two slices (a tick at least).
void Cfs::update_entity_lag(CfsRq& cfs, SchedEntity* se) {
  const int64_t lag = static_cast<int64_t>(avg_vruntime(cfs) - se->vruntime);
  const auto limit = static_cast<int64_t>(
      calc_delta_fair(std::max<uint64_t>(2 * se->slice, static_cast<uint64_t>(core_.config().tick_ns())), se));
  se->vlag = std::clamp(lag, -limit, limit);
}

// update_deadline() (from update_curr()): a running entity that reached
// its deadline asks for a new slice, and yields the CPU if others queue.
void Cfs::update_deadline(CfsRq& cfs, SchedEntity* se) {
  if (static_cast<int64_t>(se->vruntime - se->deadline) < 0) return;
  se->slice = min_gran_;
  se->deadline = se->vruntime + calc_delta_fair(se->slice, se);
  if (cfs.nr_running > 1) {
    ++eevdf_slice_expiries_;
    core_.resched_curr(cfs.cpu);
    clear_buddies(cfs, se);
  }
}

// place_entity() of v6.6, called on every enqueue before the entity is
// counted on the queue: placed at V minus its saved lag, the lag grown by
// (W + w) / W so that adding it to the average leaves it that lag
// (PLACE_LAG); a new task starts with half a slice to its deadline
// (PLACE_DEADLINE_INITIAL).
void Cfs::place_entity_eevdf(CfsRq& cfs, SchedEntity* se, bool initial, bool wakeup) {
  const uint64_t vruntime = avg_vruntime(cfs);
  int64_t lag = 0;
  se->slice = min_gran_;
  uint64_t vslice = calc_delta_fair(se->slice, se);
  if (!feats_.EEVDF_NO_PLACE_LAG && cfs.nr_running) {
    lag = se->vlag;
    int64_t load = cfs.avg_load;
    if (const SchedEntity* curr = cfs.curr; curr && curr->on_rq) load += curr->load_weight;
    lag *= load + se->load_weight;
    if (!load) load = 1;
    lag /= load;  // div_s64(): truncates towards zero
  }
  se->vruntime = vruntime - static_cast<uint64_t>(lag);
  if (initial) vslice /= 2;
  se->deadline = se->vruntime + vslice;
  if (wakeup && se->task) {
    ++wakeups_placed_;
    wakeup_credit_ns_ += lag;
  }
}

// pick_eevdf(): the running entity while it is eligible and has not had
// a new slice since it was picked (RUN_TO_PARITY: its deadline is still
// the one set_next_entity() stashed in vlag); else the eligible entity
// with the earliest deadline. Eligibility falls with vruntime, so the
// tree, in vruntime order, is eligible up to its first ineligible entity.
SchedEntity* Cfs::pick_eevdf(CfsRq& cfs) {
  SchedEntity* curr = cfs.curr;
  if (curr && (!curr->on_rq || !entity_eligible(cfs, curr))) curr = nullptr;
  if (!feats_.EEVDF_NO_RUN_TO_PARITY && curr && curr->vlag == static_cast<int64_t>(curr->deadline)) return curr;
  SchedEntity* best = curr;  // __pick_eevdf(): a queued entity must beat it outright
  for (const auto& [key, seq] : cfs.timeline) {
    SchedEntity* se = cfs.by_seq.at(seq);
    if (!entity_eligible(cfs, se)) break;
    if (!best || static_cast<int64_t>(best->deadline - se->deadline) > 0) best = se;
  }
  if (!best) best = pick_first(cfs);  // "EEVDF scheduling fail, picking leftmost"
  return best;
}

// check_preempt_wakeup() of v6.6: the wakee preempts when it is what
// pick_eevdf() would run now.
void Cfs::check_preempt_wakeup_eevdf(int cpu, Task* p, int wake_flags) {
  Task* curr_task = core_.curr(cpu);
  if (!curr_task || curr_task == p) return;
  SchedEntity* se = &curr_task->se;
  SchedEntity* pse = &p->se;
  if (!se->cfs_rq || se->cfs_rq->curr != se) return;
  if (feats_.NEXT_BUDDY && !(wake_flags & WF_FORK)) set_buddy(pse, &CfsRq::next);
  if (core_.need_resched(cpu)) return;
  if (!feats_.WAKEUP_PREEMPTION) return;
  CfsRq& cfs = *se->cfs_rq;  // no groups: both tasks on the root queue
  update_curr(cfs);
  ++wakeup_preempt_checks_;
  wakeup_preempt_checks_queued_ += cfs.nr_running;
  const int64_t lead = static_cast<int64_t>(se->vruntime - pse->vruntime);
  wakeup_preempt_lead_ns_ += lead;
  WakeupCheckTally& pair = check_tally(p, curr_task, wake_flags);
  ++pair.checks;
  pair.add_lead(lead);
  if (!entity_eligible(cfs, pse)) ++eevdf_wakee_ineligible_;
  else if (!feats_.EEVDF_NO_RUN_TO_PARITY && entity_eligible(cfs, se) &&
           se->vlag == static_cast<int64_t>(se->deadline))
    ++eevdf_parity_held_;
  if (pick_eevdf(cfs) == pse) {
    core_.resched_curr(cpu);
    ++wakeup_preemptions_;
    ++pair.preemptions;
  }
}

// ------------------------------------------------------- load tracking ---
// kernel/sched/fair.c (v4.0) update_entity_load_avg() and its helpers.

// __update_entity_load_avg_contrib(): a task's contribution is its runnable
// fraction times its weight; a group entity's is its queue's share of the
// group's load_avg times the group's shares (__update_group_entity_contrib),
// scaled down while the whole group uses less than one CPU.
int64_t Cfs::update_entity_load_avg_contrib(SchedEntity* se) {
  const int64_t old = se->load_avg_contrib;
  if (se->task) return update_contrib(*se);
  CfsRq& q = *se->my_q;
  TaskGroup& tg = *q.tg;
  // __update_tg_runnable_avg(): the fraction of a CPU this queue used.
  int64_t runnable =
      static_cast<int64_t>((se->runnable_avg_sum << fair_group::NICE_0_SHIFT) / (se->avg_period + 1));
  runnable -= q.tg_runnable_contrib;
  if (std::abs(runnable) > q.tg_runnable_contrib / 64) {
    tg.runnable_avg += runnable;
    q.tg_runnable_contrib += runnable;
  }
  se->load_avg_contrib = fair_group::group_entity_contrib(q.tg_load_contrib, tg.shares, tg.load_avg, tg.runnable_avg);
  if (feats_.GROUP_RUNNABLE_WEIGHT)
    se->load_avg_contrib =
        fair_group::runnable_part(se->load_avg_contrib, q.runnable_load_avg, q.blocked_load_avg, q.load_weight);
  return se->load_avg_contrib - old;
}

void Cfs::update_entity_load_avg(SchedEntity* se, bool update_cfs_rq) {
  // With GROUP_ENTITY_REFRESH a group entity is recomputed at every update,
  // as v4.15's update_cfs_group() does at each enqueue, dequeue and tick,
  // not only when a 1024 us period has ended.
  const bool refresh_group = se->my_q && feats_.GROUP_ENTITY_REFRESH;
  if (!update_runnable_avg(clock_task(se->cfs_rq->cpu), *se, se->on_rq, se->cfs_rq->curr == se) &&
      !refresh_group)
    return;
  const int64_t delta = update_entity_load_avg_contrib(se);
  if (!update_cfs_rq) return;
  CfsRq& cfs = *se->cfs_rq;
  if (se->on_rq)
    cfs.runnable_load_avg += delta;
  else
    cfs.blocked_load_avg = -delta < cfs.blocked_load_avg ? cfs.blocked_load_avg + delta : 0;
}

// __synchronize_entity_decay(): age a sleeper's contribution by the decay
// windows its queue went through meanwhile.
uint64_t Cfs::synchronize_entity_decay(SchedEntity* se) {
  const uint64_t decays = se->cfs_rq->decay_counter - static_cast<uint64_t>(se->decay_count);
  se->decay_count = 0;
  if (!decays) return 0;
  se->load_avg_contrib = static_cast<int64_t>(decay_load(static_cast<uint64_t>(se->load_avg_contrib), decays));
  return decays;
}

// update_cfs_rq_blocked_load(): once per 2^20 ns window (or when forced),
// fold in the load of tasks that migrated away, decay the blocked load and
// publish the queue's total to its group, with a 1/8 hysteresis unless
// forced (__update_cfs_rq_tg_load_contrib()).
void Cfs::update_cfs_rq_blocked_load(CfsRq& cfs, bool force_update) {
  const uint64_t window = static_cast<uint64_t>(clock_task(cfs.cpu)) >> 20;
  const uint64_t decays = window - cfs.last_decay;
  if (!decays && !force_update) return;
  if (cfs.removed_load) {
    const int64_t removed = cfs.removed_load;
    cfs.removed_load = 0;
    cfs.blocked_load_avg = removed < cfs.blocked_load_avg ? cfs.blocked_load_avg - removed : 0;
  }
  if (decays) {
    cfs.blocked_load_avg = static_cast<int64_t>(decay_load(static_cast<uint64_t>(cfs.blocked_load_avg), decays));
    cfs.decay_counter += decays;
    cfs.last_decay = window;
  }
  if (!cfs.tg) return;
  const int64_t tg_contrib = cfs.runnable_load_avg + cfs.blocked_load_avg - cfs.tg_load_contrib;
  if (!tg_contrib) return;
  if (force_update || std::abs(tg_contrib) > cfs.tg_load_contrib / 8) {
    cfs.tg->load_avg += tg_contrib;
    cfs.tg_load_contrib += tg_contrib;
  }
}

// enqueue_entity_load_avg(). All of 4.0's load tracking is CONFIG_SMP, not
// CONFIG_FAIR_GROUP_SCHED: without groups the root queue keeps its blocked
// load and decay windows too, though only the groups' loads read them.
void Cfs::enqueue_entity_load_avg(CfsRq& cfs, SchedEntity* se, bool wakeup) {
  // A new task (decay_count 0) is treated as a migration with "an already
  // constructed load_avg_contrib"; so is a group entity never queued before,
  // whose contribution is still the 0 it was allocated with.
  if (se->decay_count <= 0) {
    se->last_runnable_update = clock_task(cfs.cpu);
    if (se->decay_count) {
      // A wake-up migration: approximate the sleep by the carried decays.
      se->last_runnable_update -= (-se->decay_count) << 20;
      update_entity_load_avg(se, false);
      se->decay_count = 0;
    }
    wakeup = false;
  } else {
    synchronize_entity_decay(se);
  }
  if (wakeup) {
    // It slept here: its load leaves the blocked sum.
    cfs.blocked_load_avg =
        se->load_avg_contrib < cfs.blocked_load_avg ? cfs.blocked_load_avg - se->load_avg_contrib : 0;
    update_entity_load_avg(se, false);
  }
  cfs.runnable_load_avg += se->load_avg_contrib;
  update_cfs_rq_blocked_load(cfs, !wakeup);
}

void Cfs::dequeue_entity_load_avg(CfsRq& cfs, SchedEntity* se, bool sleep) {
  update_entity_load_avg(se, true);
  update_cfs_rq_blocked_load(cfs, !sleep);
  cfs.runnable_load_avg -= se->load_avg_contrib;
  if (sleep) {
    cfs.blocked_load_avg += se->load_avg_contrib;
    se->decay_count = static_cast<int64_t>(cfs.decay_counter);
  }
}

// list_add_leaf_cfs_rq(): a child queue goes before its parent (the root).
void Cfs::list_add_leaf_cfs_rq(CfsRq& cfs) {
  if (cfs.on_list) return;
  Rq& r = rq(cfs.cpu);
  if (cfs.tg && r.cfs.on_list)
    r.leaf_cfs_rqs.push_front(&cfs);
  else
    r.leaf_cfs_rqs.push_back(&cfs);
  cfs.on_list = true;
  update_cfs_rq_blocked_load(cfs, false);
}

// update_blocked_averages(): from rebalance_domains() and idle_balance(),
// decay every queue of the CPU and refresh the group entities, so that a
// CPU whose tasks left or sleep shows its load going down.
void Cfs::update_blocked_averages(int cpu) {
  if (!group_sched_) return;  // !CONFIG_FAIR_GROUP_SCHED: an empty stub
  core_.update_rq_clock(cpu);
  auto& leaves = rq(cpu).leaf_cfs_rqs;
  for (auto it = leaves.begin(); it != leaves.end();) {
    CfsRq* cfs = *it++;
    update_cfs_rq_blocked_load(*cfs, true);
    if (!cfs->tg) continue;
    SchedEntity* se = cfs->tg->se[static_cast<size_t>(cpu)].get();
    update_entity_load_avg(se, true);
    if (!se->runnable_avg_sum && !cfs->nr_running) {
      leaves.remove(cfs);
      cfs->on_list = false;
    }
  }
}

// ----------------------------------------------------- group scheduling ---

// The task's autogroup, created on first use (autogroup_create():
// sched_create_group() with NICE_0_LOAD shares; init_tg_cfs_entry() gives
// each CPU a group entity of weight NICE_0_LOAD queued on the root, zeroed
// as kzalloc() leaves it).
TaskGroup* Cfs::task_group(const Task* p) {
  if (!p->autogroup) return nullptr;
  auto& slot = groups_[p->autogroup];
  if (!slot) {
    slot = std::make_unique<TaskGroup>();
    slot->id = p->autogroup;
    for (int c = 0; c < core_.nr_cpus(); ++c) {
      auto q = std::make_unique<CfsRq>();
      q->tg = slot.get();
      q->cpu = c;
      auto se = std::make_unique<SchedEntity>();
      se->load_weight = NICE_0_LOAD;
      se->inv_weight = nice_to_wmult(0);
      se->cfs_rq = &rq(c).cfs;
      se->my_q = q.get();
      slot->cfs_rq.push_back(std::move(q));
      slot->se.push_back(std::move(se));
    }
  }
  return slot.get();
}

// set_task_rq(): the queue (and parent entity) of the task's group on cpu.
void Cfs::set_task_rq(Task* p, int cpu) {
  p->se.task = p;
  if (TaskGroup* tg = task_group(p)) {
    p->se.cfs_rq = tg->cfs_rq[static_cast<size_t>(cpu)].get();
    p->se.parent = tg->se[static_cast<size_t>(cpu)].get();
    p->se.depth = 1;
  } else {
    p->se.cfs_rq = &rq(cpu).cfs;
    p->se.parent = nullptr;
    p->se.depth = 0;
  }
}

// calc_tg_weight(): the group's load as this CPU's queue sees it, its own
// stale contribution replaced by its current weight.
int64_t Cfs::calc_tg_weight(const TaskGroup& tg, const CfsRq& cfs) const {
  return fair_group::tg_weight(tg.load_avg, cfs.tg_load_contrib, cfs.load_weight);
}

int64_t Cfs::calc_cfs_shares(const CfsRq& cfs, const TaskGroup& tg) const {
  return fair_group::cfs_shares(tg.shares, calc_tg_weight(tg, cfs), cfs.load_weight);
}

void Cfs::reweight_entity(CfsRq& cfs, SchedEntity* se, int64_t weight) {
  if (se->on_rq) {
    if (cfs.curr == se) update_curr(cfs);
    account_entity_dequeue(cfs, se);
  }
  se->load_weight = weight;
  se->inv_weight = static_cast<uint32_t>(0xffffffffULL / static_cast<uint64_t>(weight));
  if (se->on_rq) account_entity_enqueue(cfs, se);
}

void Cfs::update_cfs_shares(CfsRq& cfs) {
  if (!cfs.tg) return;
  SchedEntity* se = cfs.tg->se[static_cast<size_t>(cfs.cpu)].get();
  reweight_entity(*se->cfs_rq, se, calc_cfs_shares(cfs, *cfs.tg));
}

// effective_load(): the change of the root load on cpu if wl were added to
// the group's queue there and wg to the group's total (one level: the loop
// of fair.c runs once). The root group's change is wl itself.
int64_t Cfs::effective_load(const TaskGroup* tg, int cpu, int64_t wl, int64_t wg) const {
  if (!tg) return wl;
  const SchedEntity* se = tg->se[static_cast<size_t>(cpu)].get();
  const CfsRq& q = *se->my_q;
  return fair_group::effective_load(tg->shares, calc_tg_weight(*tg, q), q.load_weight, se->load_weight, wl, wg);
}

// update_cfs_rq_h_load(): once per jiffy, the share of the root load that
// reaches the group's queue through its entity.
void Cfs::update_cfs_rq_h_load(CfsRq& cfs) {
  const int64_t jiffies = core_.jiffies();
  if (cfs.last_h_load_update == jiffies) return;
  CfsRq& root = rq(cfs.cpu).cfs;
  if (!cfs.tg) {
    cfs.h_load = cfs.runnable_load_avg;
    cfs.last_h_load_update = jiffies;
    return;
  }
  const SchedEntity* se = cfs.tg->se[static_cast<size_t>(cfs.cpu)].get();
  if (root.last_h_load_update != jiffies) {
    root.h_load = root.runnable_load_avg;
    root.last_h_load_update = jiffies;
  }
  cfs.h_load = root.h_load * se->load_avg_contrib / (root.runnable_load_avg + 1);
  cfs.last_h_load_update = jiffies;
}

// task_h_load(): a task's load as the root sees it. Without group
// scheduling (CONFIG_FAIR_GROUP_SCHED=n) 4.0 takes the task's contribution,
// 3.10 its weight (its load tracking needed CONFIG_FAIR_GROUP_SCHED).
int64_t Cfs::task_h_load(Task* p) {
  if (!group_sched_) return version() >= 400 ? p->se.load_avg_contrib : p->se.load_weight;
  CfsRq& cfs = *p->se.cfs_rq;
  update_cfs_rq_h_load(cfs);
  return p->se.load_avg_contrib * cfs.h_load / (cfs.runnable_load_avg + 1);
}

// ----------------------------------------------------- enqueue/dequeue ---

void Cfs::account_entity_enqueue(CfsRq& cfs, SchedEntity* se) {
  cfs.load_weight += se->load_weight;
  if (se->task) {
    auto& tasks = rq(cfs.cpu).cfs_tasks;
    se->group_node = tasks.insert(tasks.begin(), se->task);
  }
  cfs.nr_running++;
}

void Cfs::account_entity_dequeue(CfsRq& cfs, SchedEntity* se) {
  cfs.load_weight -= se->load_weight;
  if (se->task) rq(cfs.cpu).cfs_tasks.erase(se->group_node);
  cfs.nr_running--;
}

void Cfs::enqueue_entity(CfsRq& cfs, SchedEntity* se, int flags) {
  if (feats_.EEVDF_V66) {
    // v6.6 enqueue_entity(): every enqueue places the entity from its lag,
    // the running one before update_curr(), any other after it, and
    // before it is counted on the queue.
    const bool curr = cfs.curr == se;
    if (curr) place_entity_eevdf(cfs, se, false, flags & ENQUEUE_WAKEUP);
    update_curr(cfs);
    enqueue_entity_load_avg(cfs, se, flags & ENQUEUE_WAKEUP);
    if (!curr) place_entity_eevdf(cfs, se, false, flags & ENQUEUE_WAKEUP);
    account_entity_enqueue(cfs, se);
    if (!curr) tree_insert(cfs, se);
    se->on_rq = true;
    return;
  }
  if (feats_.WAKE_RENORM_V47) {
    // v4.7 enqueue_entity(): the current entity is made absolute before
    // update_curr(), any other after it, "such that we're placed at the
    // current moment in time, instead of some random moment in the past".
    const bool renorm = !(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_MIGRATED);
    const bool curr = cfs.curr == se;
    if (renorm && curr) se->vruntime += cfs.min_vruntime;
    update_curr(cfs);
    if (renorm && !curr) se->vruntime += cfs.min_vruntime;
  } else {
    // 4.0 enqueue_entity(): a relative vruntime (migrating/waking) is made
    // absolute against the new runqueue before update_curr() moves its
    // min_vruntime on.
    if (!(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_WAKING)) se->vruntime += cfs.min_vruntime;
    update_curr(cfs);
  }
  enqueue_entity_load_avg(cfs, se, flags & ENQUEUE_WAKEUP);
  account_entity_enqueue(cfs, se);
  update_cfs_shares(cfs);
  if (flags & ENQUEUE_WAKEUP) place_entity(cfs, se, false);
  if (se != cfs.curr) tree_insert(cfs, se);
  se->on_rq = true;
  if (cfs.nr_running == 1 && group_sched_) list_add_leaf_cfs_rq(cfs);
}

void Cfs::dequeue_entity(CfsRq& cfs, SchedEntity* se, int flags) {
  update_curr(cfs);
  dequeue_entity_load_avg(cfs, se, flags & DEQUEUE_SLEEP);
  clear_buddies(cfs, se);
  if (feats_.EEVDF_V66) update_entity_lag(cfs, se);
  if (se != cfs.curr) tree_erase(cfs, se);
  se->on_rq = false;
  account_entity_dequeue(cfs, se);
  // (v6.6 carries the lag instead: e8f331bcc270 "sched/smp: Use lag to
  // simplify cross-runqueue placement".)
  if (!(flags & DEQUEUE_SLEEP) && !feats_.EEVDF_V66) se->vruntime -= cfs.min_vruntime;
  update_min_vruntime(cfs);
  update_cfs_shares(cfs);
  if ((flags & DEQUEUE_SLEEP) && se->task) {
    se->task->slept_at_ns = core_.now_ns();
    se->task->lag_at_sleep_ns = static_cast<int64_t>(cfs.min_vruntime - se->vruntime);
  }
}

// enqueue_task_fair(): queue the task, then each group entity above it that
// is not queued yet (as a wakeup); refresh the levels that already were.
void Cfs::enqueue_task_fair(int cpu, Task* p, int flags) {
  p->enqueued_by_wakeup = flags & ENQUEUE_WAKEUP;  // balancing moves come here directly
  set_task_rq(p, cpu);
  SchedEntity* se = &p->se;
  for (; se; se = se->parent) {
    if (se->on_rq) break;
    CfsRq& cfs = *se->cfs_rq;
    enqueue_entity(cfs, se, flags);
    cfs.h_nr_running++;
    flags = ENQUEUE_WAKEUP;
  }
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    cfs.h_nr_running++;
    update_cfs_shares(cfs);
    update_entity_load_avg(se, true);
  }
  if (rq(cpu).cfs.h_nr_running >= 2) rd_overload_ = true;  // add_nr_running()
}

// dequeue_task_fair(): dequeue upwards while a level empties; a sleeping
// task leaves its group as the next buddy where the group stays queued.
void Cfs::dequeue_task_fair(int cpu, Task* p, int flags) {
  (void)cpu;
  SchedEntity* se = &p->se;
  const bool task_sleep = flags & DEQUEUE_SLEEP;
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    dequeue_entity(cfs, se, flags);
    cfs.h_nr_running--;
    if (cfs.load_weight) {
      if (task_sleep && se->parent)
        set_buddy(se->parent, &CfsRq::next);
      se = se->parent;
      break;
    }
    flags |= DEQUEUE_SLEEP;
  }
  for (; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    cfs.h_nr_running--;
    update_cfs_shares(cfs);
    update_entity_load_avg(se, true);
  }
}

// 4.0 clear_buddies(): the buddy marks of se and of its ancestors that
// carry the same mark.
void Cfs::clear_buddies(CfsRq& cfs, SchedEntity* se) {
  auto clear = [](SchedEntity* s, SchedEntity* CfsRq::*mark) {
    for (; s; s = s->parent) {
      if (s->cfs_rq->*mark != s) break;
      s->cfs_rq->*mark = nullptr;
    }
  };
  if (cfs.last == se) clear(se, &CfsRq::last);
  if (cfs.next == se) clear(se, &CfsRq::next);
  if (cfs.skip == se) clear(se, &CfsRq::skip);
}

int Cfs::wakeup_preempt_entity(const SchedEntity* curr, const SchedEntity* se, int nr_running) const {
  const int64_t vdiff = static_cast<int64_t>(curr->vruntime - se->vruntime);
  if (vdiff <= 0) return -1;
  uint64_t gran_ns = wakeup_gran_;
  // WAKEUP_GRAN_BY_NR_RUNNING, Mel Gorman's "sched/fair: Scale wakeup
  // granularity relative to nr_running" (LKML 2021-09-20, v1, not merged),
  // wakeup_gran(): "if (cfs_rq && cfs_rq->nr_running > 1) gran *=
  // min(cfs_rq->nr_running >> 1, sched_nr_latency);". The factor multiplies
  // the boot-scaled granularity, so on 8 or more CPUs a queue of 16 tasks
  // waits for a lead of 32 ms, not the changelog's "max of 8ms" (which reads
  // the unscaled 1 ms sysctl).
  if (feats_.WAKEUP_GRAN_BY_NR_RUNNING && nr_running > 1)
    gran_ns *= static_cast<uint64_t>(std::min<unsigned>(static_cast<unsigned>(nr_running) >> 1, nr_latency_));
  const auto gran = static_cast<int64_t>(calc_delta_fair(gran_ns, se));
  if (vdiff > gran) return 1;
  return 0;
}

// pick_next_entity(): curr, when given, is still running and not in the
// tree (the group path of pick_next_task_fair()).
SchedEntity* Cfs::pick_next_entity(CfsRq& cfs, SchedEntity* curr) {
  if (feats_.EEVDF_V66) {
    // v6.6 pick_next_entity(): NEXT_BUDDY's wakee if eligible, else pick_eevdf().
    SchedEntity* se = feats_.NEXT_BUDDY && cfs.next && entity_eligible(cfs, cfs.next) ? cfs.next : pick_eevdf(cfs);
    if (se == cfs.next && se != pick_first(cfs)) ++next_buddy_picks_;
    clear_buddies(cfs, se);  // set_next_entity()
    return se;
  }
  SchedEntity* left = pick_first(cfs);
  if (!left || (curr && entity_before(curr, left))) left = curr;
  SchedEntity* se = left;
  if (cfs.skip == se) {
    SchedEntity* second;
    if (se == curr) {
      second = pick_first(cfs);
    } else {
      second = pick_second(cfs, se);
      if (!second || (curr && entity_before(curr, second))) second = curr;
    }
    if (second && wakeup_preempt_entity(second, left) < 1) se = second;
  }
  if (cfs.last && wakeup_preempt_entity(cfs.last, left) < 1) se = cfs.last;
  if (cfs.next && wakeup_preempt_entity(cfs.next, left) < 1) se = cfs.next;
  if (se != left && se == cfs.next) ++next_buddy_picks_;
  if (se != left && se == cfs.last) ++last_buddy_picks_;
  clear_buddies(cfs, se);
  return se;
}

void Cfs::set_next_entity(CfsRq& cfs, SchedEntity* se) {
  tree_erase(cfs, se);
  // 6.1's set_next_entity() updates the load average before the entity
  // becomes curr, so its wait is not counted as running time.
  if (pelt_v61() && se->on_rq) update_entity_load_avg(se, true);
  // v6.6: "HACK, stash a copy of deadline at the point of pick in vlag,
  // which isn't used until dequeue" (RUN_TO_PARITY reads it).
  if (feats_.EEVDF_V66 && se->on_rq) se->vlag = static_cast<int64_t>(se->deadline);
  se->exec_start = clock_task(cfs.cpu);
  cfs.curr = se;
  se->prev_sum_exec_runtime = se->sum_exec_runtime;
}

void Cfs::put_prev_entity(CfsRq& cfs, SchedEntity* prev) {
  if (prev->on_rq) {
    update_curr(cfs);
    tree_insert(cfs, prev);
    update_entity_load_avg(prev, true);
  }
  cfs.curr = nullptr;
}

// put_prev_task_fair(): every level of the task, bottom up.
void Cfs::put_prev_task_fair(Task* prev) {
  for (SchedEntity* se = &prev->se; se; se = se->parent) {
    CfsRq& cfs = *se->cfs_rq;
    if (cfs.curr != se) continue;  // already put (or never set)
    put_prev_entity(cfs, se);
  }
}

void Cfs::flush_prev(int cpu) {
  if (Task* prev = rq(cpu).prev) {
    rq(cpu).prev = nullptr;
    put_prev_task_fair(prev);
  }
}

// ------------------------------------------------------ class hooks ---

void Cfs::task_fork(Task* p) {
  // sched_fork() + task_fork_fair(): the child starts on the parent's CPU
  // with the parent's vruntime, placed one vslice later (START_DEBIT).
  const int cpu = p->parent ? p->parent->cpu : p->cpu;
  p->cpu = cpu;
  const int autogroup = p->autogroup;
  p->se = SchedEntity{};
  p->se.load_weight = nice_to_weight(p->nice);
  p->se.inv_weight = nice_to_wmult(p->nice);
  p->autogroup = autogroup;
  set_task_rq(p, cpu);
  CfsRq& cfs = p->parent ? *p->parent->se.cfs_rq : *p->se.cfs_rq;  // task_cfs_rq(current)
  SchedEntity* curr = cfs.curr;
  core_.update_rq_clock(cpu);
  update_curr(cfs);
  if (feats_.EEVDF_V66) {
    // v6.6 task_fork_fair(): place_entity(cfs_rq, se, ENQUEUE_INITIAL);
    // wake_up_new_task()'s enqueue places it again on its new queue.
    place_entity_eevdf(cfs, &p->se, true, false);
  } else {
    if (curr) p->se.vruntime = curr->vruntime;
    place_entity(cfs, &p->se, true);
    if (core_.config().sysctl("sched_child_runs_first") && curr && entity_before(curr, &p->se)) {
      std::swap(curr->vruntime, p->se.vruntime);
      core_.resched_curr(cpu);
    }
    p->se.vruntime -= cfs.min_vruntime;
  }
  if (p->parent) {
    // dup_task_struct copies the wake_wide bookkeeping. last_wakee is left
    // out (a child's first wakee always counts as a flip; in Linux not when
    // it is the parent's last): copying it would move every fork-heavy run.
    p->wakee_flips = p->parent->wakee_flips;
    p->wakee_flip_decay_ts = p->parent->wakee_flip_decay_ts;
  }
}

// init_task_runnable_average() (4.0 fair.c): "Give new task start runnable
// values to heavy its load in infant time": one slice of the queue fork
// balancing chose, as if it had run all of it. A slice under 1024 ns gives a
// new task no load at all.
void Cfs::init_task_runnable_average(Task* p) {
  set_task_rq(p, p->cpu);  // __set_task_cpu() -> set_task_rq()
  const uint64_t slice = sched_slice(*p->se.cfs_rq, &p->se, init_load_latency_) >> 10;
  p->se.runnable_avg_sum = p->se.avg_period = slice;
  update_contrib(p->se);
  if (pelt_v61()) {
    // 6.1's post_init_entity_util_avg() on the new CPU: the queue's
    // utilisation per unit of load times the task's weight, at most half
    // the capacity the queue has left. The weight is scale_load()ed (x1024
    // on 64-bit) where the queue's load is not, so the cap nearly always
    // decides.
    const int64_t queue_util = cpu_utils_v61(p)[static_cast<size_t>(p->cpu)];
    const int64_t cap = (SCHED_CAPACITY_SCALE - queue_util) / 2;
    int64_t util = 0;
    if (cap > 0)
      util = queue_util ? std::min(cap, queue_util * (p->se.load_weight << 10) / (cpu_load_v61(p->cpu) + 1))
                        : cap;
    p->se.running_avg_sum = static_cast<uint64_t>(util) * (p->se.avg_period + 1) >> 10;
  }
}

void Cfs::migrate_task_rq(Task* p, int /*new_cpu*/) {
  // migrate_task_rq_fair(): a sleeper's load leaves its old queue's blocked
  // sum at that queue's next update; it carries its decays along.
  SchedEntity* se = &p->se;
  if (se->decay_count > 0 && se->cfs_rq) {
    se->decay_count = -static_cast<int64_t>(synchronize_entity_decay(se));
    se->cfs_rq->removed_load += se->load_avg_contrib;
  }
  // "We have migrated, no longer consider this task hot"
  se->exec_start = 0;
  // v4.7 migrate_task_rq_fair(): a waking task (TASK_WAKING) leaves with a
  // vruntime relative to its old queue's min_vruntime, read without
  // updating that queue.
  if (feats_.WAKE_RENORM_V47 && p->waking) {
    se->vruntime -= se->cfs_rq->min_vruntime;
    se->migrated_waking = true;
  }
}

void Cfs::enqueue_task(int cpu, Task* p, int flags) {
  int eflags = flags;
  if (feats_.WAKE_RENORM_V47) {
    if ((flags & ENQUEUE_WAKEUP) && p->se.migrated_waking) eflags |= ENQUEUE_MIGRATED;
    p->se.migrated_waking = false;
  } else if (flags & ENQUEUE_WAKEUP) {
    eflags |= ENQUEUE_WAKING;  // task_waking_fair() made vruntime relative
  }
  enqueue_task_fair(cpu, p, eflags);
  if (flags & ENQUEUE_WAKEUP) {
    // ttwu_do_wakeup(): sample the idle period for avg_idle.
    Rq& r = rq(cpu);
    if (r.idle_stamp) {
      const int64_t delta = core_.rq_clock(cpu) - r.idle_stamp;
      if (version() >= 313) {
        const int64_t max = 2 * r.max_idle_balance_cost;
        r.avg_idle = update_avg(r.avg_idle, delta);
        if (r.avg_idle > max) r.avg_idle = max;
      } else {
        const int64_t max = 2 * migration_cost_;
        if (delta > max)
          r.avg_idle = max;
        else
          r.avg_idle = update_avg(r.avg_idle, delta);
      }
      r.idle_stamp = 0;
    }
  }
}

void Cfs::dequeue_task(int cpu, Task* p, int flags) {
  // A task moved away right after schedule() put it back (the stopper's
  // migration) is put at all levels first.
  if (rq(cpu).prev == p && !(flags & DEQUEUE_SLEEP)) flush_prev(cpu);
  dequeue_task_fair(cpu, p, flags);
}

void Cfs::yield_task(int cpu) {
  Task* task = core_.curr(cpu);
  if (!task || rq(cpu).cfs.h_nr_running == 1) return;
  SchedEntity* curr = &task->se;
  CfsRq& cfs = *curr->cfs_rq;
  if (cfs.curr != curr) return;
  clear_buddies(cfs, curr);
  // "Tell update_rq_clock() that we've just updated, so we don't do
  // microscopic update in schedule() and double the fastpath cost."
  core_.update_rq_clock(cpu);
  update_curr(cfs);
  core_.rq_clock_skip_update(cpu);
  if (feats_.EEVDF_V66) {
    // v6.6 yield_task_fair(): "Tell update_rq_clock() ...", then push the
    // deadline one slice out instead of the skip buddy.
    curr->deadline += calc_delta_fair(curr->slice, curr);
    return;
  }
  set_buddy(curr, &CfsRq::skip);
}

void Cfs::check_preempt_curr(int cpu, Task* p, int wake_flags) {
  const int64_t preemptions_before = wakeup_preemptions_;
  if (!core_.curr(cpu))
    core_.resched_curr(cpu);  // the idle class is always preempted
  else
    check_preempt_wakeup(cpu, p, wake_flags);
  core_.rq_clock_skip_request(cpu);
  if (wakeup_preemptions_ != preemptions_before) ++preemptions_by_path_[static_cast<size_t>(p->wake_path)];
  p->wake_path = Task::WakePath::None;  // a later check is not this wakeup's
}

void Cfs::check_preempt_wakeup(int cpu, Task* p, int wake_flags) {
  if (feats_.EEVDF_V66) return check_preempt_wakeup_eevdf(cpu, p, wake_flags);
  Task* curr_task = core_.curr(cpu);
  if (!curr_task || curr_task == p) return;
  SchedEntity* se = &curr_task->se;
  SchedEntity* pse = &p->se;
  if (!se->cfs_rq || se->cfs_rq->curr != se) return;  // not (yet) this queue's current
  // Buddies only on a queue long enough to stretch the period: the gate
  // came with "sched: Strengthen buddies and mitigate buddy induced
  // latencies" (f685ceacab07, 2.6.32; read from its changelog). The last
  // buddy itself ("sched: backward looking buddy", 4793241be408, 2.6.29)
  // gives the CPU back to a preempted producer.
  const int queued = se->cfs_rq->nr_running;
  const bool scale = static_cast<unsigned>(queued) >= nr_latency_;
  bool next_buddy_marked = false;
  if (feats_.NEXT_BUDDY && scale && !(wake_flags & WF_FORK)) {
    set_buddy(pse, &CfsRq::next);
    next_buddy_marked = true;
  }
  if (core_.need_resched(cpu)) return;  // test_tsk_need_resched(curr)
  if (!feats_.WAKEUP_PREEMPTION) return;
  // find_matching_se(): compare the ancestors that share a queue.
  int se_depth = se->depth, pse_depth = pse->depth;
  while (se_depth > pse_depth) {
    --se_depth;
    se = se->parent;
  }
  while (pse_depth > se_depth) {
    --pse_depth;
    pse = pse->parent;
  }
  while (se->cfs_rq != pse->cfs_rq) {
    se = se->parent;
    pse = pse->parent;
  }
  update_curr(*se->cfs_rq);
  ++wakeup_preempt_checks_;
  wakeup_preempt_checks_queued_ += queued;
  if (scale) ++wakeup_preempt_checks_scaled_;
  const int64_t lead = static_cast<int64_t>(se->vruntime - pse->vruntime);
  wakeup_preempt_lead_ns_ += lead;
  WakeupCheckTally& pair = check_tally(p, curr_task, wake_flags);
  ++pair.checks;
  pair.add_lead(lead);
  // The patch passes task_cfs_rq(curr), the queue counted above.
  if (wakeup_preempt_entity(se, pse, queued) == 1) {
    if (!next_buddy_marked) set_buddy(pse, &CfsRq::next);
    core_.resched_curr(cpu);
    ++wakeup_preemptions_;
    ++pair.preemptions;
    if (!se->on_rq) return;
    if (feats_.LAST_BUDDY && scale && se->task) {
      set_buddy(se, &CfsRq::last);
      ++last_buddies_set_;
    }
  }
}

WakeupCheckTally& Cfs::check_tally(const Task* queued, const Task* running, int wake_flags) {
  const char* queued_as = queued->enqueued_by_wakeup ? (queued->wchan ? queued->wchan : "-")
                          : (wake_flags & WF_FORK) ? "(fork)"
                                                   : "(moved)";
  const char* running_as = running->wchan ? running->wchan : "-";
  for (auto& c : checks_by_wchan_)
    if (c.queued == queued_as && c.running == running_as) return c.tally;
  checks_by_wchan_.push_back({queued_as, running_as, {}});
  return checks_by_wchan_.back().tally;
}

WakeupChecksByWchan Cfs::wakeup_checks_by_wchan() const {
  WakeupChecksByWchan out;
  for (const auto& c : checks_by_wchan_) {
    out[{c.queued, c.running}] += c.tally;  // equal names from two literals merge here
  }
  return out;
}

// LOAD_BALANCE_V61: 6.1's pick_next_task_fair() moves the task it picks to
// the head of cfs_tasks, "so our cfs_tasks list becomes MRU one".
Task* Cfs::most_recently_used(int cpu, Task* p) {
  if (p && feats_.LOAD_BALANCE_V61) {
    auto& tasks = rq(cpu).cfs_tasks;
    tasks.splice(tasks.begin(), tasks, p->se.group_node);
  }
  return p;
}

Task* Cfs::pick_next_task(int cpu, Task* prev, bool may_balance) {
  if (group_sched_) return most_recently_used(cpu, pick_next_task_grouped(cpu, may_balance));
  CfsRq& cfs = rq(cpu).cfs;
  (void)prev;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (cfs.nr_running > 0) {
      SchedEntity* se = pick_next_entity(cfs, nullptr);
      set_next_entity(cfs, se);
      return most_recently_used(cpu, se->task);
    }
    if (!may_balance || attempt > 0) break;
    // pick_next_task_fair() "idle:" -> idle_balance() (v4.0 calls it here).
    if (idle_balance(cpu) <= 0) break;
  }
  return nullptr;
}

// pick_next_task_fair() with CONFIG_FAIR_GROUP_SCHED: walk down from the
// root picking at each level with the running entity still in play, then
// put and set only the levels where the previous and the next task differ
// (the group entity they share stays current, its slice running on).
Task* Cfs::pick_next_task_grouped(int cpu, bool may_balance) {
  Task* prev = rq(cpu).prev;
  for (int attempt = 0; attempt < 2; ++attempt) {
    CfsRq* cfs = &rq(cpu).cfs;
    if (cfs->nr_running > 0) {
      if (!prev) {
        SchedEntity* se = nullptr;  // simple: nothing to put back
        do {
          se = pick_next_entity(*cfs, nullptr);
          set_next_entity(*cfs, se);
          cfs = se->my_q;
        } while (cfs);
        return se->task;
      }
      SchedEntity* se = nullptr;
      do {
        SchedEntity* curr = cfs->curr;
        if (curr && curr->on_rq)
          update_curr(*cfs);
        else
          curr = nullptr;
        se = pick_next_entity(*cfs, curr);
        cfs = se->my_q;
      } while (cfs);
      Task* p = se->task;
      rq(cpu).prev = nullptr;
      if (prev != p) {
        SchedEntity* pse = &prev->se;
        while (se->cfs_rq != pse->cfs_rq) {
          const int se_depth = se->depth, pse_depth = pse->depth;
          if (se_depth <= pse_depth) {
            put_prev_entity(*pse->cfs_rq, pse);
            pse = pse->parent;
          }
          if (se_depth >= pse_depth) {
            set_next_entity(*se->cfs_rq, se);
            se = se->parent;
          }
        }
        put_prev_entity(*se->cfs_rq, pse);
        set_next_entity(*se->cfs_rq, se);
      }
      return p;
    }
    if (!may_balance || attempt > 0) break;
    if (idle_balance(cpu) <= 0) break;
  }
  // Nothing to run: the idle class's pick puts the previous task back.
  flush_prev(cpu);
  return nullptr;
}

void Cfs::put_prev_task(int cpu, Task* prev) {
  if (group_sched_) {
    rq(cpu).prev = prev;  // pick_next_task_fair() puts what changes
    return;
  }
  put_prev_task_fair(prev);
}

// check_preempt_tick() (4.0 fair.c): the tick preempts the running entity
// once it has run its slice since it was picked, or, after the minimum
// granularity, once its vruntime is more than a slice ahead of the leftmost.
// Both read the slice, sched_slice(), so both follow the latency's period.
void Cfs::check_preempt_tick(CfsRq& cfs, SchedEntity* curr) {
  ++tick_preempt_checks_;
  const uint64_t ideal_runtime = sched_slice(cfs, curr, tick_latency_);
  const auto delta_exec = static_cast<uint64_t>(curr->sum_exec_runtime - curr->prev_sum_exec_runtime);
  if (delta_exec > ideal_runtime) {
    ++tick_preemptions_slice_spent_;
    core_.resched_curr(cfs.cpu);
    clear_buddies(cfs, curr);
    return;
  }
  if (delta_exec < min_gran_) return;
  SchedEntity* se = pick_first(cfs);
  if (!se) return;
  const int64_t delta = static_cast<int64_t>(curr->vruntime - se->vruntime);
  if (delta < 0) return;
  if (static_cast<uint64_t>(delta) > ideal_runtime) {
    ++tick_preemptions_lead_;
    core_.resched_curr(cfs.cpu);
  }
}

void Cfs::entity_tick(CfsRq& cfs, SchedEntity* curr) {
  update_curr(cfs);
  update_entity_load_avg(curr, true);
  update_cfs_rq_blocked_load(cfs, true);
  if (group_sched_) update_cfs_shares(cfs);
  // v6.6 has no check_preempt_tick(): update_curr()'s update_deadline()
  // ends the slice.
  if (cfs.nr_running > 1 && !feats_.EEVDF_V66) check_preempt_tick(cfs, curr);
}

void Cfs::task_tick(int cpu, Task* curr) {
  // scheduler_tick(): task_tick_fair -> entity_tick at each level, then
  // update_cpu_load_active.
  for (SchedEntity* se = &curr->se; se; se = se->parent) entity_tick(*se->cfs_rq, se);
  update_cpu_load(cpu, weighted_cpuload(cpu), 1);
}

// proc.c: __update_cpu_load() with decay_load_missed().
void Cfs::update_cpu_load(int cpu, int64_t this_load, int64_t pending_updates) {
  static constexpr int degrade_zero_ticks[CPU_LOAD_IDX_MAX] = {0, 8, 32, 64, 128};
  static constexpr int degrade_factor[CPU_LOAD_IDX_MAX][8] = {{0, 0, 0, 0, 0, 0, 0, 0},
                                                              {64, 32, 8, 0, 0, 0, 0, 0},
                                                              {96, 72, 40, 12, 1, 0, 0, 0},
                                                              {112, 98, 75, 43, 15, 1, 0, 0},
                                                              {120, 112, 98, 76, 45, 16, 2, 0}};
  auto decay_missed = [&](int64_t load, int64_t missed, int idx) -> int64_t {
    if (!missed) return load;
    if (missed >= degrade_zero_ticks[idx]) return 0;
    if (idx == 1) return load >> missed;
    int j = 0;
    while (missed) {
      if (missed % 2) load = (load * degrade_factor[idx][j]) >> 7;
      missed >>= 1;
      ++j;
    }
    return load;
  };
  Rq& r = rq(cpu);
  r.last_load_update_tick = core_.jiffies();
  r.cpu_load[0] = this_load;
  for (int i = 1, scale = 2; i < CPU_LOAD_IDX_MAX; ++i, scale += scale) {
    int64_t old_load = decay_missed(r.cpu_load[i], pending_updates - 1, i);
    int64_t new_load = this_load;
    if (new_load > old_load) new_load += scale - 1;
    r.cpu_load[i] = (old_load * (scale - 1) + new_load) >> i;
  }
}

void Cfs::cpu_exited_idle(int cpu) {
  // tick_nohz_idle_exit() -> update_cpu_load_nohz(): decay cpu_load[] for
  // the ticks missed while idle.
  const int64_t pending = core_.jiffies() - rq(cpu).last_load_update_tick;
  if (pending > 0) update_cpu_load(cpu, 0, pending);
}

void Cfs::cpu_went_idle(int cpu) {
  // nohz_balance_enter_idle(): the tick stops.
  nohz_idle_mask_.set(cpu);
}

// ---------------------------------------------------------- placement ---

int64_t Cfs::weighted_cpuload(int cpu) const {
  // 4.0: cfs.runnable_load_avg (PELT); 3.10: rq->load.weight.
  return version() >= 400 ? rq(cpu).cfs.runnable_load_avg : rq(cpu).cfs.load_weight;
}
int64_t Cfs::source_load(int cpu, int type) const {
  const int64_t total = weighted_cpuload(cpu);
  if (type == 0 || !feats_.LB_BIAS) return total;
  return std::min(rq(cpu).cpu_load[type - 1], total);
}
int64_t Cfs::target_load(int cpu, int type) const {
  const int64_t total = weighted_cpuload(cpu);
  if (type == 0 || !feats_.LB_BIAS) return total;
  return std::max(rq(cpu).cpu_load[type - 1], total);
}
int64_t Cfs::cpu_avg_load_per_task(int cpu) const {
  const int nr = rq(cpu).cfs.h_nr_running;
  return nr ? weighted_cpuload(cpu) / nr : 0;
}

void Cfs::record_wakee(Task* p) {
  Task* current = core_.current();
  // Woken from an interrupt taken on an idle CPU. The kernel's current is
  // then the idle task, whose flips count like any waker's; the model keeps
  // none, because its interrupt wakeups (hrtimers) fire on the wakee's own
  // CPU, where select_task_rq_fair() never consults wake_affine(). (An
  // hrtimer's wakeup deferred to its wakee's switch-out runs with that
  // CPU's current task of the moment: Kernel::try_to_wake_up(). A child's
  // exit wakes its parent from the child's own context, as current.)
  if (!current) return;
  const int64_t jiffies = core_.jiffies();
  if (jiffies > current->wakee_flip_decay_ts + core_.config().hz()) {
    // v4.0 halves; 3.12/3.13 wiped the count.
    current->wakee_flips = version() >= 400 ? current->wakee_flips >> 1 : 0;
    current->wakee_flip_decay_ts = jiffies;
  }
  if (current->last_wakee != p) {
    current->last_wakee = p;
    current->wakee_flips++;
  }
}

bool Cfs::wake_wide(Task* p) const {
  Task* current = core_.current();
  if (!current) return false;
  const unsigned factor = static_cast<unsigned>(core_.domains().llc_size(core_.this_cpu()));
  if (p->wakee_flips > factor && current->wakee_flips > factor * p->wakee_flips) return true;
  return false;
}

bool Cfs::wake_affine(const SchedDomain& sd, Task* p, int sync) {
  // v4.3 moved the wake_wide() test into select_task_rq_fair().
  if (feats_.WAKE_WIDE && !feats_.WAKE_WIDE_V2 && wake_wide(p)) {
    ++wake_wide_refusals_;
    p->wake_path = Task::WakePath::Wide;
    return false;
  }
  const int idx = sd.wake_idx;
  const int this_cpu = core_.this_cpu();
  const int prev_cpu = p->cpu;
  read_rq(prev_cpu);
  int64_t load = source_load(prev_cpu, idx);
  int64_t this_load = target_load(this_cpu, idx);
  Task* current = core_.current();
  if (sync && current) {
    // "subtract the (maximum possible) effect of the currently running
    // task": in its group, the change of the group entity's weight.
    const TaskGroup* tg = task_group(current);
    const int64_t weight = current->se.load_weight;
    this_load += effective_load(tg, this_cpu, -weight, -weight);
    load += effective_load(tg, prev_cpu, 0, -weight);
  }
  const TaskGroup* tg = task_group(p);
  const int64_t weight = p->se.load_weight;
  int64_t this_eff_load = 100 * capacity_of(prev_cpu);
  int64_t prev_eff_load = (100 + (sd.imbalance_pct - 100) / 2) * capacity_of(this_cpu);
  if (this_load > 0 || feats_.WAKE_AFFINE_ALWAYS_COMPARE) {
    this_eff_load *= std::max<int64_t>(this_load, 0) + effective_load(tg, this_cpu, weight, weight);
    prev_eff_load *= load + effective_load(tg, prev_cpu, 0, weight);
  }
  bool balanced = this_eff_load <= prev_eff_load;
  // "In low-load situations ... the sync cause above having dropped
  // this_load to 0, we'll always have an imbalance": a waker alone on its
  // runqueue, or on one whose runnable_load_avg is below its full weight,
  // pulls whatever prev_cpu carries.
  if (this_load <= 0) ++wake_affine_emptied_;
  bool affine = balanced;
  if (version() < 314) {
    // 3.10: sync shortcut ("if (sync && balanced) return 1") and the
    // per-task-load clause; the shortcut only skips reading loads.
    if (this_load <= 0 && !feats_.WAKE_AFFINE_ALWAYS_COMPARE) balanced = true;
    affine = balanced || (this_load <= load &&
                          this_load + target_load(prev_cpu, idx) <= cpu_avg_load_per_task(this_cpu));
  }
  if (affine && !core_.domains().cpus_share_cache(this_cpu, prev_cpu)) ++wake_affine_pulls_across_llc_;
  p->wake_path = !affine ? Task::WakePath::Refused : this_load > 0 ? Task::WakePath::Compared : Task::WakePath::Emptied;
  if (p->wake_path == Task::WakePath::Emptied) ++wake_affine_emptied_pulls_;
  core_.note_wake_affine(affine);
  return affine;
}

int Cfs::select_idle_sibling(Task* p, int target) {
  int i = p->cpu;
  read_rq(target);
  if (core_.idle_cpu(target)) {
    ++sis_.target;
    return target;
  }
  // "If the prevous cpu is cache affine and idle, don't be stupid."
  if (i != target && core_.domains().cpus_share_cache(i, target)) {
    read_rq(i);
    if (core_.idle_cpu(i)) {
      ++sis_.prev;
      return i;
    }
  }
  // Iterate the domains from sd_llc down and find an eligible idle group.
  auto& chain = core_.domains().of(target);
  for (int level = core_.domains().llc_level(target); level >= 0; --level) {
    const SchedDomain& sd = chain[static_cast<size_t>(level)];
    for (const SchedGroup& sg : sd.groups) {
      if (!sg.cpus.intersects(p->cpus_allowed)) continue;
      // for_each_cpu(): the first busy CPU (or target) ends the group's test.
      bool all_idle = true;
      sg.cpus.for_each([&](int c) {
        if (!all_idle) return;
        if (c != target) read_rq(c);
        if (c == target || !core_.idle_cpu(c)) all_idle = false;
      });
      if (all_idle) {
        // A group of several CPUs is a wholly idle core (on machines
        // without SMT, a cluster); a one-CPU group below the LLC is the
        // target's idle sibling.
        const int cpu = (sg.cpus & p->cpus_allowed).first();
        if (sg.cpus.weight() > 1)
          ++sis_.core;
        else if (core_.machine().topo().cpu(cpu).core == core_.machine().topo().cpu(target).core)
          ++sis_.smt;
        else
          ++sis_.cpu;
        return cpu;
      }
    }
  }
  ++sis_.busy;
  return target;
}

int Cfs::find_idlest_group(const SchedDomain& sd, Task* p, int this_cpu, uint32_t sd_flag) {
  int idlest = -1;
  int64_t min_load = INT64_MAX, this_load = 0;
  int load_idx = sd.forkexec_idx;
  const int imbalance = 100 + (sd.imbalance_pct - 100) / 2;
  if (sd_flag & SD_BALANCE_WAKE) load_idx = sd.wake_idx;
  for (size_t g = 0; g < sd.groups.size(); ++g) {
    const SchedGroup& group = sd.groups[g];
    if (!group.cpus.intersects(p->cpus_allowed)) continue;
    const bool local_group = group.cpus.test(this_cpu);
    int64_t avg_load = 0;
    group.cpus.for_each([&](int i) {
      read_rq(i);
      avg_load += local_group ? source_load(i, load_idx) : target_load(i, load_idx);
    });
    avg_load = avg_load * SCHED_CAPACITY_SCALE / group.capacity;
    if (local_group)
      this_load = avg_load;
    else if (avg_load < min_load) {
      min_load = avg_load;
      idlest = static_cast<int>(g);
    }
  }
  if (idlest < 0 || 100 * this_load < imbalance * min_load) return -1;
  return idlest;
}

int Cfs::find_idlest_cpu(const SchedGroup& group, Task* p, int this_cpu) {
  return shallowest_idle_or_least_loaded(group, p, this_cpu, false);
}

// find_idlest_cpu() (4.0) and find_idlest_group_cpu() (6.1): the idle CPU
// with the shallowest state (the latest idle_stamp among equals), else the
// least loaded. 4.0 reads weighted_cpuload() and keeps this_cpu on a tie;
// 6.1 (FIND_IDLEST_V61) reads cpu_load(), the blocked load included.
int Cfs::shallowest_idle_or_least_loaded(const SchedGroup& group, Task* p, int this_cpu, bool v61) {
  int64_t min_load = INT64_MAX, min_exit_latency = INT64_MAX, latest_idle_timestamp = 0;
  int least_loaded_cpu = this_cpu, shallowest_idle_cpu = -1;
  (group.cpus & p->cpus_allowed).for_each([&](int i) {
    read_rq(i);
    if (core_.idle_cpu(i)) {
      const int64_t exit_latency = core_.idle_exit_latency(i);
      const int64_t stamp = rq(i).idle_stamp;  // set by idle_balance(), 0 after a pull or wakeup
      if (exit_latency < min_exit_latency) {
        min_exit_latency = exit_latency;
        latest_idle_timestamp = stamp;
        shallowest_idle_cpu = i;
      } else if (exit_latency == min_exit_latency && stamp > latest_idle_timestamp) {
        latest_idle_timestamp = stamp;
        shallowest_idle_cpu = i;
      }
    } else if (shallowest_idle_cpu == -1) {
      const int64_t load = v61 ? cpu_load_v61(i) : weighted_cpuload(i);
      if (load < min_load || (!v61 && load == min_load && i == this_cpu)) {
        min_load = load;
        least_loaded_cpu = i;
      }
    }
  });
  return shallowest_idle_cpu != -1 ? shallowest_idle_cpu : least_loaded_cpu;
}

// ------------------------------------------- FIND_IDLEST_V61 (what-if) ---
//
// 6.1's slow path, which the real patched 6.1 of tools/guest runs (Vincent
// Guittot's rework, "sched/fair: Rework find_idlest_group()", 57abff067a08,
// v5.5, with cpu_load() as v5.7 left it, the queue's load_avg blocked load
// included). kernel/sched/fair.c of 6.1: update_sg_wakeup_stats(),
// group_classify(), update_pick_idlest(), find_idlest_group() and
// find_idlest_group_cpu(). Groups are ranked by type first (spare capacity,
// fully busy, imbalanced by affinity, overloaded), and only groups of one
// type by load (an imbalanced group is never compared: the first is kept,
// and a local one keeps the task); the load is
// the queue's whole average, sleepers' decaying share included, so a CPU a
// task just left still carries it. 4.0's find_idlest_group() ranks every
// group by the runnable load alone and takes another unless the local one
// is within imbalance_pct/2.
//
// Where the model has no 6.1 signal, the reading chosen:
// - load_avg is 4.0's runnable_load_avg + blocked_load_avg (both track
//   runnable time, as 6.1's load_avg does);
// - runnable_avg is the same sum: for nice-0 tasks 6.1's runnable_avg and
//   load_avg are one figure;
// - util_avg is the sum of the running averages (v4.1's running_avg_sum)
//   of the tasks queued on or last asleep on the CPU (cpu_utils_v61()), the
//   wakee's own taken out as cpu_util_without() takes it; with a 6.1
//   what-if on, a task's running average is updated before it runs and
//   seeded at fork, as 6.1's util_avg is (pelt_v61()); stop 66 read 4.0's
//   rq->avg, the time the queue had a task;
// - the wakee's own load, which cpu_load_without() takes off its previous
//   CPU after sync_entity_load_avg(), is its task entity's contribution
//   decayed as its queue's blocked load has been (exact without group
//   scheduling, where that queue is the root's);
// - a CPU's capacity is 6.1's SCHED_CAPACITY_SCALE for every CPU, SMT
//   siblings included (4.0's smt_gain is gone);
// - idle_cpu_without() ignores a pending wakeup on the CPU p runs on (only
//   exec balancing asks it of a running task);
// - the levels keep 4.0's imbalance_pct (125 above the LLC, where 6.1 has
//   117), and each socket is a NUMA node, so the SD_NUMA clauses apply at
//   the level spanning sockets (the two-socket guest of tools/guest has
//   one node: a DIE level without them).
// SD_ASYM_CPUCAPACITY, core scheduling and NUMA balancing do not exist in
// the model, so the misfit, cookie and preferred-node clauses are left out.

// struct sg_lb_stats of 6.1, which update_sg_wakeup_stats() and
// update_sg_lb_stats() (LOAD_BALANCE_V61) fill.
struct Cfs::GroupStatsV61 {
  int64_t group_load = 0, group_util = 0, group_runnable = 0, group_capacity = 0, avg_load = 0;
  int sum_nr_running = 0, sum_h_nr_running = 0, idle_cpus = 0, group_weight = 0;
  GroupTypeV61 group_type = GroupTypeV61::Overloaded;
};

// group_classify() of 6.1: group_is_overloaded(), then sg_imbalanced() (the
// affinity flag load_balance() leaves on the parent level's group, as 4.0's),
// then !group_has_capacity().
GroupTypeV61 Cfs::group_classify_v61(int64_t imbalance_pct, const SchedGroup& group,
                                     const GroupStatsV61& sgs) const {
  const int64_t pct = imbalance_pct;
  const bool overloaded = sgs.sum_nr_running > sgs.group_weight &&
                          (sgs.group_capacity * 100 < sgs.group_util * pct ||
                           sgs.group_capacity * pct < sgs.group_runnable * 100);
  if (overloaded) return GroupTypeV61::Overloaded;
  if (sg_imbalanced(group)) return GroupTypeV61::Imbalanced;
  bool has_capacity = sgs.sum_nr_running < sgs.group_weight;
  if (!has_capacity && sgs.group_capacity * pct >= sgs.group_runnable * 100)
    has_capacity = sgs.group_capacity * 100 > sgs.group_util * pct;
  return has_capacity ? GroupTypeV61::HasSpare : GroupTypeV61::FullyBusy;
}

int64_t Cfs::cpu_load_v61(int cpu) const {
  return rq(cpu).cfs.runnable_load_avg + rq(cpu).cfs.blocked_load_avg;
}

// 6.1's cfs_rq->avg.util_avg is the sum of its attached entities' running
// averages: the queued tasks' and, decaying, those of the tasks that last
// slept there (PELT keeps a sleeper's share on the queue it left until it
// wakes elsewhere). Read here as that sum over the live tasks by their CPU,
// each task's average aged to the reading as its own update would age it;
// cpu_util_cfs() caps it at the capacity. `without` is cpu_util_without()'s
// task, whose share leaves its CPU. One pass over the tasks for every CPU.
std::vector<int64_t> Cfs::cpu_utils_v61(const Task* without) const {
  std::vector<int64_t> util(static_cast<size_t>(core_.nr_cpus()), 0);
  struct {
    uint64_t runnable_avg_sum, running_avg_sum, avg_period;
    int64_t last_runnable_update;
  } avg{};
  for (const Task* t : core_.all_tasks()) {
    if (t == without || t->state == TaskState::Dead || !t->se.cfs_rq) continue;
    const SchedEntity& se = t->se;
    avg = {se.runnable_avg_sum, se.running_avg_sum, se.avg_period, se.last_runnable_update};
    update_runnable_avg(clock_task(t->cpu), avg, se.on_rq, se.cfs_rq->curr == &se);
    util[static_cast<size_t>(t->cpu)] += static_cast<int64_t>((avg.running_avg_sum << 10) / (avg.avg_period + 1));
  }
  for (int64_t& u : util) u = std::min<int64_t>(u, SCHED_CAPACITY_SCALE);
  return util;
}

// The wakee's share of its CPU's load: a queued task's contribution (exec),
// a sleeper's as its queue's blocked load has decayed it since it slept,
// nothing for a task never queued (fork).
int64_t Cfs::own_load_v61(const Task* p) const {
  const SchedEntity& se = p->se;
  if (se.on_rq) return se.load_avg_contrib;
  if (se.decay_count <= 0) return 0;
  const uint64_t decays = se.cfs_rq->decay_counter - static_cast<uint64_t>(se.decay_count);
  return static_cast<int64_t>(decay_load(static_cast<uint64_t>(se.load_avg_contrib), decays));
}

void Cfs::update_sg_wakeup_stats(const SchedDomain& sd, const SchedGroup& group, Task* p,
                                 const std::vector<int64_t>& util_without_p, GroupStatsV61& sgs) {
  sgs = GroupStatsV61{};
  (group.cpus & p->cpus_allowed).for_each([&](int i) {
    read_rq(i);
    int64_t load = cpu_load_v61(i);
    // cpu_load_without(): the wakee's own share leaves its CPU.
    if (i == p->cpu) load = std::max<int64_t>(0, load - own_load_v61(p));
    sgs.group_load += load;
    sgs.group_runnable += load;
    sgs.group_util += util_without_p[static_cast<size_t>(i)];  // cpu_util_without()
    // task_running_on_cpu(): a queued p (exec) does not count itself.
    const bool local = i == p->cpu && p->se.on_rq;
    const int nr_running = this->nr_running(i) - (local ? 1 : 0);
    sgs.sum_nr_running += nr_running;
    // idle_cpu_without()
    if (!nr_running && (local ? core_.curr(i) == p : core_.idle_cpu(i))) ++sgs.idle_cpus;
  });
  sgs.group_weight = group.cpus.weight();
  sgs.group_capacity = SCHED_CAPACITY_SCALE * sgs.group_weight;
  sgs.group_type = group_classify_v61(sd.imbalance_pct, group, sgs);
  // "Computing avg_load makes sense only when group is fully busy or overloaded"
  if (sgs.group_type == GroupTypeV61::FullyBusy || sgs.group_type == GroupTypeV61::Overloaded)
    sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
}

// sd->imb_numa_nr of a NUMA level (6.1 build_sched_domains(), computed over
// every topology level before the degenerate ones are dropped): DIE, the
// node, is the first level above the LLC; it allows the number of LLCs in
// the node, or an eighth of the node's CPUs if the node is one LLC, at
// least 1, and each NUMA level that times how many first-NUMA-level spans
// it holds.
int Cfs::imb_numa_nr(int cpu, const SchedDomain& sd) const {
  const auto& topo = core_.machine().topo();
  const int node_weight = topo.node_mask(topo.cpu(cpu).socket).weight();
  const int nr_llcs = node_weight / core_.domains().llc_size(cpu);
  const int imb = std::max(1, nr_llcs == 1 ? node_weight >> 3 : nr_llcs);
  int first_numa_span = sd.span_weight;
  for (const SchedDomain& level : core_.domains().of(cpu))
    if (level.flags & SD_NUMA) {
      first_numa_span = level.span_weight;
      break;
    }
  return imb * std::max(1, sd.span_weight / first_numa_span);
}

int Cfs::find_idlest_group_v61(const SchedDomain& sd, Task* p, int this_cpu) {
  const std::vector<int64_t> util_without_p = cpu_utils_v61(p);
  GroupStatsV61 local_sgs, idlest_sgs, sgs;
  idlest_sgs.avg_load = INT64_MAX;
  int idlest = -1, local = -1;
  for (size_t g = 0; g < sd.groups.size(); ++g) {
    const SchedGroup& group = sd.groups[g];
    if (!group.cpus.intersects(p->cpus_allowed)) continue;
    if (group.cpus.test(this_cpu)) {
      update_sg_wakeup_stats(sd, group, p, util_without_p, local_sgs);
      local = static_cast<int>(g);
      continue;
    }
    update_sg_wakeup_stats(sd, group, p, util_without_p, sgs);
    // update_pick_idlest()
    bool pick = sgs.group_type < idlest_sgs.group_type;
    if (sgs.group_type == idlest_sgs.group_type) {
      if (sgs.group_type == GroupTypeV61::HasSpare)
        pick = sgs.idle_cpus > idlest_sgs.idle_cpus ||
               (sgs.idle_cpus == idlest_sgs.idle_cpus && sgs.group_util < idlest_sgs.group_util);
      else if (sgs.group_type == GroupTypeV61::Imbalanced)
        pick = false;  // "not used in the slow wakeup path": the first is kept
      else
        pick = sgs.avg_load < idlest_sgs.avg_load;
    }
    if (pick) {
      idlest = static_cast<int>(g);
      idlest_sgs = sgs;
    }
  }
  if (idlest < 0) return -1;
  if (local < 0) return idlest;
  if (local_sgs.group_type < idlest_sgs.group_type) return -1;
  if (local_sgs.group_type > idlest_sgs.group_type) return idlest;
  if (local_sgs.group_type == GroupTypeV61::Imbalanced) return -1;
  if (local_sgs.group_type != GroupTypeV61::HasSpare) {
    const int64_t imbalance = NICE_0_LOAD * (sd.imbalance_pct - 100) / 100;
    if ((sd.flags & SD_NUMA) && idlest_sgs.avg_load + imbalance >= local_sgs.avg_load) return -1;
    if (idlest_sgs.avg_load >= local_sgs.avg_load + imbalance) return -1;
    if (100 * local_sgs.avg_load <= sd.imbalance_pct * idlest_sgs.avg_load) return -1;
    return idlest;
  }
  if (sd.flags & SD_NUMA) {
    // adjust_numa_imbalance(): a pair of tasks may stay local while the
    // destination has few running. p->nr_cpus_allowed != NR_CPUS holds for
    // every task, so the allowance is capped by p's CPUs in the local group.
    constexpr int NUMA_IMBALANCE_MIN = 2;
    const int allowed_local = (sd.groups[static_cast<size_t>(local)].cpus & p->cpus_allowed).weight();
    const int nr = std::min(allowed_local, imb_numa_nr(this_cpu, sd));
    const int imbalance = std::abs(local_sgs.idle_cpus - idlest_sgs.idle_cpus);
    if (local_sgs.sum_nr_running + 1 <= nr && imbalance <= NUMA_IMBALANCE_MIN) return -1;
  }
  if (local_sgs.idle_cpus >= idlest_sgs.idle_cpus) return -1;
  return idlest;
}

int Cfs::find_idlest_group_cpu_v61(const SchedGroup& group, Task* p, int this_cpu) {
  if (group.cpus.weight() == 1) return group.cpus.first();  // "Check if we have any choice"
  return shallowest_idle_or_least_loaded(group, p, this_cpu, true);
}

// The runqueue fields a placement reads on other CPUs (idle_cpu(),
// source_load()/target_load(), the idle state) are the ones
// update_sg_lb_stats() reads per CPU, so each costs lb_per_cpu_local or
// lb_per_cpu_remote (A. Li measured 223 ns for a select_idle_cpu() pass of a
// few CPUs, LKML 2020-11-09, so this is not generous). The owners write
// these lines at every enqueue, so the first read misses; a second read in
// the same placement (the slow path rescans a group one level down) hits,
// as does the deciding CPU's own runqueue.
void Cfs::read_rq(int cpu) {
  const int self = core_.this_cpu();
  if (cpu == self || placement_read_.test(cpu)) return;
  placement_read_.set(cpu);
  const auto& costs = core_.machine().costs();
  const auto& topo = core_.machine().topo();
  placement_scan_ns_ += topo.cpu(cpu).socket == topo.cpu(self).socket ? costs.lb_per_cpu_local
                                                                        : costs.lb_per_cpu_remote;
  ++placement_scans_;
}

int Cfs::select_task_rq(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) {
  placement_scan_ns_ = 0;
  placement_read_ = hw::CpuMask{};
  ++placements_;
  // wake_up_new_task() (v5.4): "recent_used_cpu is initially set as the
  // last CPU used by a task".
  if (sd_flag & SD_BALANCE_FORK) p->recent_used_cpu = prev_cpu;
  const bool local = (sd_flag & SD_BALANCE_WAKE) && prev_cpu == core_.this_cpu();
  p->wake_path = local ? Task::WakePath::Local : Task::WakePath::None;
  const SisStats sis_before = sis_;
  const int64_t fallthroughs_before = wake_idle_fallthroughs_, sd_wake_idle_found_before = sd_wake_idle_found_;
  const int cpu = select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags);
  if (p->wake_path == Task::WakePath::Emptied && cpu == core_.this_cpu()) ++emptied_pulls_onto_waker_cpu_;
  if (sd_flag & SD_BALANCE_WAKE)
    wake_placement_ = placement_branch(p, sis_before, fallthroughs_before, sd_wake_idle_found_before);
  if (placement_scan_ns_ > 0) core_.charge(core_.this_cpu(), placement_scan_ns_, CostPath::Placement);
  return cpu;
}

// A wakeup that moves its task is counted by the branch that chose the CPU:
// a wakee bound to one CPU goes there (an affinity move); else
// WAKE_IDLE_CPU's slow path after a busy select_idle_sibling() result (the
// fall-through ran, whether or not it kept that CPU), SD_WAKE_IDLE's
// search when it found an idle CPU, select_idle_sibling()'s branches
// (target or prev idle, 5.4's recent_used_cpu, a wholly idle core, an idle
// CPU, the target's idle sibling, the busy target), or else the
// find_idlest_group() descent (3.10 without an affine domain).
const char* Cfs::placement_branch(const Task* p, const SisStats& before, int64_t fallthroughs_before,
                                  int64_t sd_wake_idle_found_before) const {
  if (p->cpus_allowed.weight() == 1) return "affinity";
  if (wake_idle_fallthroughs_ != fallthroughs_before) return "wake_slow_path";
  if (sd_wake_idle_found_ != sd_wake_idle_found_before) return "wake_sd_wake_idle";
  if (sis_.target != before.target) return "wake_target_idle";
  if (sis_.prev != before.prev) return "wake_prev_idle";
  if (sis_.recent != before.recent) return "wake_recent_used_cpu";
  if (sis_.core != before.core) return "wake_idle_core";
  if (sis_.cpu != before.cpu) return "wake_idle_cpu";
  if (sis_.smt != before.smt) return "wake_idle_sibling";
  if (sis_.busy != before.busy) return "wake_busy_target";
  return "wake_find_idlest";
}

int Cfs::select_task_rq_fair(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) {
  const int cpu = core_.this_cpu();
  // v4.7's series that killed task_waking_fair() (59efa0bac9cf) moved
  // record_wakee() into select_task_rq_fair() (c58d25f371f5, "sched/fair:
  // Move record_wakee()"), which select_task_rq() skips for a wakee bound
  // to one CPU: from then a per-CPU kworker woken from an interrupt no
  // longer counts as a flip of the task it interrupted. WAKE_RENORM_V47
  // stands for that series.
  const bool v47_wake = feats_.WAKE_RENORM_V47 || feats_.EEVDF_V66;
  if (sd_flag & SD_BALANCE_WAKE) {
    // task_waking_fair(): vruntime relative to the old queue; record_wakee().
    // From v4.7 only a migrating wakee is made relative (migrate_task_rq()).
    if (!v47_wake) p->se.vruntime -= p->se.cfs_rq->min_vruntime;
    if (version() >= 312 && (!v47_wake || p->cpus_allowed.weight() > 1)) record_wakee(p);
  }
  if (p->cpus_allowed.weight() == 1) return p->cpus_allowed.first();
  if (feats_.WAKE_WIDE_V2) return select_task_rq_v43(p, prev_cpu, sd_flag, wake_flags);
  auto& chain = core_.domains().of(cpu);
  const SchedDomain* affine_sd = nullptr;
  int sd_level = -1;
  int new_cpu = cpu;
  const bool want_affine = (sd_flag & SD_BALANCE_WAKE) && p->cpus_allowed.test(cpu);
  const int sync = wake_flags & WF_SYNC;
  for (size_t l = 0; l < chain.size(); ++l) {
    const SchedDomain& tmp = chain[l];
    if (!(tmp.flags & SD_LOAD_BALANCE)) continue;
    // If both cpu and prev_cpu are part of this domain, cpu is a valid
    // SD_WAKE_AFFINE target.
    if (want_affine && (tmp.flags & SD_WAKE_AFFINE) && tmp.span.test(prev_cpu)) {
      affine_sd = &tmp;
      break;
    }
    if (tmp.flags & sd_flag) sd_level = static_cast<int>(l);
  }
  if (affine_sd && cpu != prev_cpu &&
      (feats_.WAKE_AFFINE_V54 ? wake_affine_v54(*affine_sd, p, cpu, prev_cpu, sync)
                               : wake_affine(*affine_sd, p, sync)))
    prev_cpu = cpu;
  if (sd_flag & SD_BALANCE_WAKE) {
    // v4.0: every wakeup ends in select_idle_sibling(); 3.10 only when an
    // affine domain was found, otherwise the find_idlest path below.
    if (version() >= 400 || affine_sd) {
      // 5.4's want_affine excludes wide wakeups; 4.0 tests wake_wide() inside
      // wake_affine(), so the waker records recent_used_cpu only without it.
      const bool affine_v54 = feats_.SELECT_IDLE_V54 && want_affine && !(feats_.WAKE_WIDE && wake_wide(p));
      new_cpu = wake_target(p, p->cpu, prev_cpu, affine_v54);
      if (feats_.WAKE_IDLE_CPU_LITERAL && !core_.idle_cpu(new_cpu)) {
        // The patch as its description reads ("if the cpu is not idle fall
        // through to the logic to find an idle cpu"; the diff itself was not
        // found): `if (idle_cpu(new_cpu)) goto unlock;` and on into
        // `while (sd)`, with sd as the loop above left it.
        if (sd_level < 0) return new_cpu;
        ++wake_idle_fallthroughs_;
        return wake_idle_slow_path(p, cpu, sd_level, sd_flag, new_cpu);
      }
      if (feats_.SD_WAKE_IDLE) return wake_idle(p, new_cpu);
      if (!feats_.WAKE_IDLE_CPU || core_.idle_cpu(new_cpu)) return new_cpu;
      // Josef Bacik's patch: "SD_BALANCE_WAKE's job is to find us an idle
      // cpu, not guarantee affinity" -- the sibling is busy, so fall through
      // to the slow path. The patch text was not found; reading chosen: the
      // search starts at the waker's highest balancing domain (as if every
      // level had SD_BALANCE_WAKE), so an idle CPU anywhere is found.
      sd_level = -1;
      for (size_t l = 0; l < chain.size(); ++l)
        if (chain[l].flags & SD_LOAD_BALANCE) sd_level = static_cast<int>(l);
      ++wake_idle_fallthroughs_;
      return wake_idle_slow_path(p, cpu, sd_level, sd_flag, new_cpu);
    } else {
      new_cpu = prev_cpu;
    }
  }
  return find_idlest_path(p, cpu, sd_level, sd_flag, new_cpu);
}

// The patch's fall-through. find_idlest_group()/find_idlest_cpu() judge a
// CPU by weighted_cpuload() and idle_cpu(): a CPU with a wakeup still on its
// wake_list (TTWU_QUEUE: across LLCs, and with TTWU_QUEUE_IDLE_V60 to an
// idle CPU of the LLC) or just chosen for one earlier in the
// same batch is not idle yet carries no load, so the search can pick it
// again. Counted, because that is where the patch stacks wakees.
// The search runs over the waker's domains (select_task_rq_fair()'s
// `cpu = smp_processor_id()`), and find_idlest_group() keeps the local group
// unless another is imbalance_pct/2 lighter; so its result is counted by
// socket against the waker's and the wakee's previous CPU's.
int Cfs::wake_idle_slow_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu) {
  const int chosen = find_idlest_path(p, this_cpu, sd_level, sd_flag, new_cpu);
  const auto& topo = core_.machine().topo();
  const int prev_socket = topo.cpu(p->cpu).socket, waker_socket = topo.cpu(this_cpu).socket;
  const int chosen_socket = topo.cpu(chosen).socket;
  if (waker_socket != prev_socket) ++wake_idle_waker_remote_;
  if (chosen_socket != prev_socket) ++wake_idle_moved_socket_;
  if (chosen_socket == waker_socket) ++wake_idle_on_waker_socket_;
  if (!core_.idle_cpu(chosen)) {
    ++wake_idle_busy_results_;
    // Nothing running or queued there yet: only a wakeup in flight.
    if (core_.running_idle_task(chosen) && nr_running(chosen) == 0) ++wake_idle_inflight_results_;
  }
  return chosen;
}

// SD_WAKE_IDLE as Facebook carried it forward ("our forward port of
// SD_WAKE_IDLE", seed 000), after select_idle_sibling(): the wake_idle() of
// 2.6.24-2.6.31 kernel/sched_fair.c. It takes the first CPU that is idle by
// idle_cpu() (occupancy, not load) in each domain in turn, nearest first.
// Which domains the port flagged is not known; the reading chosen is every
// level, the whole machine, as Josef wanted an idle CPU anywhere. Two more
// readings of a port to 4.0: idle_cpu() is 4.0's (a CPU with a wakeup on its
// wake_list is not idle; 2.6's only tested rq->curr == rq->idle), and it
// runs after every select_idle_sibling(), affine wakeups included (2.6.25-31
// returned this_cpu after a successful wake_affine() without it). The
// SD_WAKE_IDLE_FAR/task_hot() branch and the 2.6.29-31 power-savings
// shortcut are left out: neither applies with every level flagged and
// sched_mc_power_savings off.
int Cfs::wake_idle(Task* p, int cpu) {
  // "This cpu is also the best, if it has more than one task already.
  // Siblings must be also busy (in most cases)..."
  if (core_.idle_cpu(cpu) || rq(cpu).cfs.h_nr_running > 1) return cpu;
  ++sd_wake_idle_searches_;
  for (const SchedDomain& sd : core_.domains().of(cpu)) {
    if (!(sd.flags & SD_LOAD_BALANCE)) break;
    int found = -1;
    (sd.span & p->cpus_allowed).for_each([&](int i) {
      if (found >= 0) return;
      read_rq(i);
      if (core_.idle_cpu(i)) found = i;
    });
    if (found >= 0) {
      ++sd_wake_idle_found_;
      return found;
    }
  }
  return cpu;
}

// The slow path of select_task_rq_fair(): descend from the highest domain
// with the flag to the idlest group and CPU, then retry below new_cpu.
int Cfs::find_idlest_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu) {
  const bool wake_path = feats_.WAKE_IDLE_CPU && (sd_flag & SD_BALANCE_WAKE);
  while (sd_level >= 0) {
    auto& cchain = core_.domains().of(this_cpu);
    if (sd_level >= static_cast<int>(cchain.size())) break;
    const SchedDomain& sd = cchain[static_cast<size_t>(sd_level)];
    // With WAKE_IDLE_CPU every balancing level takes part (see above).
    if (!(sd.flags & sd_flag) && !(wake_path && (sd.flags & SD_LOAD_BALANCE))) {
      --sd_level;
      continue;
    }
    const int group =
        feats_.FIND_IDLEST_V61 ? find_idlest_group_v61(sd, p, this_cpu) : find_idlest_group(sd, p, this_cpu, sd_flag);
    if (group < 0) {
      --sd_level;
      continue;
    }
    const SchedGroup& idlest = sd.groups[static_cast<size_t>(group)];
    new_cpu = feats_.FIND_IDLEST_V61 ? find_idlest_group_cpu_v61(idlest, p, this_cpu)
                                     : find_idlest_cpu(idlest, p, this_cpu);
    if (new_cpu == -1 || new_cpu == this_cpu) {
      --sd_level;
      continue;
    }
    // Now try balancing at a lower domain level of new_cpu.
    this_cpu = new_cpu;
    const int weight = sd.span_weight;
    sd_level = -1;
    const auto& nchain = core_.domains().of(this_cpu);
    for (size_t l = 0; l < nchain.size(); ++l) {
      if (weight <= nchain[l].span_weight) break;
      if ((nchain[l].flags & sd_flag) || (wake_path && (nchain[l].flags & SD_LOAD_BALANCE)))
        sd_level = static_cast<int>(l);
    }
  }
  return new_cpu;
}

// select_task_rq_fair() after Mike Galbraith's "sched/fair: Beef up
// wake_wide()" (63b0e9edceec, v4.3): a wide wakeup (a 1:N waker/wakee pair
// whose flip counts exceed the LLC size) skips wake_affine() and stays
// around prev_cpu; explicit domain flags override the heuristic.
// Kept as a separate copy of the 4.0 function on purpose: its domain walk
// differs from 4.0's exactly where the commit changed it (new_cpu defaults to
// prev_cpu, `continue` became `break`, the `else if (!want_affine) break`),
// and side by side the two read like the commit's diff.
int Cfs::select_task_rq_v43(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) {
  const int cpu = core_.this_cpu();
  auto& chain = core_.domains().of(cpu);
  const SchedDomain* affine_sd = nullptr;
  int sd_level = -1;
  int new_cpu = prev_cpu;
  const int sync = wake_flags & WF_SYNC;
  bool want_affine = false;
  if (sd_flag & SD_BALANCE_WAKE) {
    const bool wide = wake_wide_v43(p);
    want_affine = !wide && p->cpus_allowed.test(cpu);
    if (wide && p->wake_path != Task::WakePath::Local) p->wake_path = Task::WakePath::Wide;
  }
  for (size_t l = 0; l < chain.size(); ++l) {
    const SchedDomain& tmp = chain[l];
    if (!(tmp.flags & SD_LOAD_BALANCE)) break;
    if (want_affine && (tmp.flags & SD_WAKE_AFFINE) && tmp.span.test(prev_cpu)) {
      affine_sd = &tmp;
      break;
    }
    if (tmp.flags & sd_flag)
      sd_level = static_cast<int>(l);
    else if (!want_affine)
      break;
  }
  if (affine_sd) {
    sd_level = -1;  // Prefer wake_affine over balance flags
    if (cpu != prev_cpu && (feats_.WAKE_AFFINE_V54 ? wake_affine_v54(*affine_sd, p, cpu, prev_cpu, sync)
                                                    : wake_affine(*affine_sd, p, sync)))
      new_cpu = cpu;
  }
  if (sd_level < 0) {
    if (sd_flag & SD_BALANCE_WAKE) {
      new_cpu = wake_target(p, prev_cpu, new_cpu, want_affine);
      if (!feats_.WAKE_IDLE_CPU || core_.idle_cpu(new_cpu)) return new_cpu;
      for (size_t l = 0; l < chain.size(); ++l)
        if (chain[l].flags & SD_LOAD_BALANCE) sd_level = static_cast<int>(l);
      ++wake_idle_fallthroughs_;
      return wake_idle_slow_path(p, cpu, sd_level, sd_flag, new_cpu);
    }
  }
  return find_idlest_path(p, cpu, sd_level, sd_flag, new_cpu);
}

// wake_wide() of v4.3: "Detect M:N waker/wakee relationships via a
// switching-frequency heuristic."
bool Cfs::wake_wide_v43(Task* p) const {
  Task* current = core_.current();
  if (!current) return false;
  unsigned master = current->wakee_flips;
  unsigned slave = p->wakee_flips;
  const unsigned factor = static_cast<unsigned>(core_.domains().llc_size(core_.this_cpu()));
  if (master < slave) std::swap(master, slave);
  if (slave < factor || master < slave * factor) return false;
  return true;
}

// ------------------------------------------- v5.4 wake placement (what-if) ---
//
// v5.4's kernel/sched/fair.c, read for the what-ifs WAKE_AFFINE_V54 and
// SELECT_IDLE_V54: they swap 4.0's wake_affine() and select_idle_sibling()
// for 5.4's inside whichever select_task_rq_fair() walk runs (4.0's, or
// v4.3's with WAKE_WIDE_V2, which is 5.4's walk). Nothing else of 5.4 comes
// with them: PELT, update_min_vruntime() and the balancer stay 4.0's, so
// they say what 5.4's placement alone does to a 4.0 kernel. Readings chosen:
// avg_idle is 4.0's (capped at 2 * max_idle_balance_cost, as 5.4's is), and the scan time
// select_idle_cpu() averages is the runqueue reads it charges (read_rq()).

// select_idle_sibling()'s entry: 5.4's with recent_used_cpu bookkeeping
// (select_task_rq_fair(): "if (want_affine) current->recent_used_cpu = cpu"),
// or 4.0's.
int Cfs::wake_target(Task* p, int prev, int target, bool want_affine) {
  if (!feats_.SELECT_IDLE_V54) return select_idle_sibling(p, target);
  const int cpu = select_idle_sibling_v54(p, prev, target);
  Task* current = core_.current();
  if (want_affine && current) current->recent_used_cpu = core_.this_cpu();
  return cpu;
}

// wake_affine() = wake_affine_idle(), then wake_affine_weight() (WA_IDLE,
// WA_WEIGHT and WA_BIAS on, as 5.4 ships them). True when the wakee moves to
// this_cpu; wake_affine_idle() may also pick prev_cpu, which is no move.
bool Cfs::wake_affine_v54(const SchedDomain& sd, Task* p, int this_cpu, int prev_cpu, int sync) {
  // In 4.0's walk the wake_wide() test stays where 4.0 has it.
  if (feats_.WAKE_WIDE && !feats_.WAKE_WIDE_V2 && wake_wide(p)) {
    ++wake_wide_refusals_;
    return false;
  }
  int target = -1;
  // wake_affine_idle(): "If this_cpu is idle, it implies the wakeup is from
  // interrupt context. Only allow the move if cache is shared."
  if (core_.idle_cpu(this_cpu) && core_.domains().cpus_share_cache(this_cpu, prev_cpu)) {
    read_rq(prev_cpu);
    target = core_.idle_cpu(prev_cpu) ? prev_cpu : this_cpu;
  } else if (sync && nr_running(this_cpu) == 1) {
    target = this_cpu;
  }
  if (target < 0) {
    // wake_affine_weight(): cpu_runnable_load() is runnable_load_avg, as
    // 4.0's weighted_cpuload().
    int64_t this_eff_load = weighted_cpuload(this_cpu);
    Task* current = core_.current();
    if (sync && current) {
      const int64_t current_load = task_h_load(current);
      if (current_load > this_eff_load) target = this_cpu;
      this_eff_load -= current_load;
    }
    if (target < 0) {
      const int64_t task_load = task_h_load(p);
      this_eff_load = (this_eff_load + task_load) * 100 * capacity_of(prev_cpu);
      read_rq(prev_cpu);
      int64_t prev_eff_load = (weighted_cpuload(prev_cpu) - task_load) * (100 + (sd.imbalance_pct - 100) / 2) *
                              capacity_of(this_cpu);
      // "If sync, adjust the weight of prev_eff_load such that if prev_eff
      // == this_eff that select_idle_sibling() will consider stacking the
      // wakee on top of the waker if no other CPU is idle."
      if (sync) prev_eff_load += 1;
      if (this_eff_load < prev_eff_load) target = this_cpu;
    }
  }
  const bool affine = target == this_cpu;
  core_.note_wake_affine(affine);
  return affine;
}

// select_idle_sibling(p, prev, target): target or prev if idle, the wakee's
// recent_used_cpu, then an idle core, an idle CPU within the scan budget,
// or target's idle SMT sibling, all within target's LLC. The order differs
// from 4.0's where no core is idle: 4.0 takes target's idle sibling, 5.4 the
// first idle CPU of its scan, on another core when threads are numbered
// core-first, which splits a pipe pair across two cores (docs/validation.md).
int Cfs::select_idle_sibling_v54(Task* p, int prev, int target) {
  const auto& doms = core_.domains();
  read_rq(target);
  if (core_.idle_cpu(target)) {
    ++sis_.target;
    return target;
  }
  // "If the previous CPU is cache affine and idle, don't be stupid."
  if (prev != target && doms.cpus_share_cache(prev, target)) {
    read_rq(prev);
    if (core_.idle_cpu(prev)) {
      ++sis_.prev;
      return prev;
    }
  }
  const int recent = p->recent_used_cpu;
  if (recent >= 0 && recent != prev && recent != target && doms.cpus_share_cache(recent, target)) {
    read_rq(recent);
    if (core_.idle_cpu(recent) && p->cpus_allowed.test(recent)) {
      // "Replace recent_used_cpu with prev as it is a potential candidate
      // for the next wake."
      p->recent_used_cpu = prev;
      ++sis_.recent;
      return recent;
    }
  }
  const int level = doms.llc_level(target);
  if (level >= 0) {
    const SchedDomain& llc = doms.of(target)[static_cast<size_t>(level)];
    int i = select_idle_core(p, llc, target);
    if (i >= 0) {
      ++sis_.core;
      return i;
    }
    i = select_idle_cpu(p, llc, target);
    if (i >= 0) {
      ++sis_.cpu;
      return i;
    }
    i = select_idle_smt(p, target);
    if (i >= 0) {
      ++sis_.smt;
      return i;
    }
  }
  ++sis_.busy;
  return target;
}

// "Scan the entire LLC domain for idle cores; this dynamically switches off
// if there are no idle cores left in the system."
int Cfs::select_idle_core(Task* p, const SchedDomain& llc, int target) {
  const auto& topo = core_.machine().topo();
  const size_t id = static_cast<size_t>(core_.domains().llc_id(target));
  if (topo.smt_mask(target).weight() < 2 || !has_idle_cores_[id]) return -1;
  const hw::CpuMask allowed = llc.span & p->cpus_allowed;
  hw::CpuMask cpus = allowed;  // the loop clears each core's siblings
  int found = -1;
  allowed.for_each_wrap(target, [&](int core) {
    if (found >= 0 || !cpus.test(core)) return;
    bool idle = true;
    topo.smt_mask(core).for_each([&](int cpu) {
      cpus.clear(cpu);
      read_rq(cpu);
      if (!core_.idle_cpu(cpu)) idle = false;
    });
    if (idle) found = core;
  });
  if (found < 0) has_idle_cores_[id] = 0;  // "Failed to find an idle core; stop looking for one."
  return found;
}

// "Scan the LLC domain for idle CPUs; this is dynamically regulated by
// comparing the average scan cost (tracked in sd->avg_scan_cost) against
// the average idle time for this rq (as found in rq->avg_idle)." SIS_PROP
// on, SIS_AVG_CPU off (5.4's defaults).
int Cfs::select_idle_cpu(Task* p, const SchedDomain& llc, int target) {
  const int this_cpu = core_.this_cpu();
  if (core_.domains().llc_level(this_cpu) < 0) return -1;
  int64_t& avg_scan_cost = avg_scan_cost_[static_cast<size_t>(core_.domains().llc_id(this_cpu))];
  // "Due to large variance we need a large fuzz factor; hackbench in
  // particularly is sensitive here."
  const int64_t avg_idle = rq(this_cpu).avg_idle / 512;
  const int64_t avg_cost = avg_scan_cost + 1;
  const int64_t span_avg = llc.span_weight * avg_idle;
  int64_t nr = span_avg > 4 * avg_cost ? span_avg / avg_cost : 4;
  const int64_t start = placement_scan_ns_;
  int found = -1;
  bool done = false;
  llc.span.for_each_wrap(target, [&](int cpu) {
    if (done) return;
    if (!--nr) {
      done = true;  // the budget ran out: return si_cpu (-1) without timing the scan
      return;
    }
    if (!p->cpus_allowed.test(cpu)) return;
    read_rq(cpu);
    if (core_.idle_cpu(cpu)) {
      found = cpu;
      done = true;
    }
  });
  if (done && found < 0) {
    ++sis_.scan_cut;
    return -1;
  }
  avg_scan_cost += (placement_scan_ns_ - start - avg_scan_cost) / 8;
  return found;
}

// "Scan the local SMT mask for idle CPUs."
int Cfs::select_idle_smt(Task* p, int target) {
  int found = -1;
  core_.machine().topo().smt_mask(target).for_each([&](int cpu) {
    if (found >= 0 || !p->cpus_allowed.test(cpu)) return;
    read_rq(cpu);
    if (core_.idle_cpu(cpu)) found = cpu;
  });
  return found;
}

// set_next_task_idle() -> __update_idle_core(): "Scans the local SMT mask to
// see if the entire core is idle, and records this information in
// sd_llc_shared->has_idle_cores."
void Cfs::set_next_task_idle(int cpu) {
  if (!feats_.SELECT_IDLE_V54) return;
  const size_t id = static_cast<size_t>(core_.domains().llc_id(cpu));
  if (has_idle_cores_[id]) return;
  bool idle = true;
  core_.machine().topo().smt_mask(cpu).for_each([&](int sibling) {
    if (sibling != cpu && !core_.idle_cpu(sibling)) idle = false;
  });
  if (idle) has_idle_cores_[id] = 1;
}

// ---------------------------------------------------------- balancing ---

int64_t Cfs::balance_cost(const LbEnv& env, int moved) const {
  const auto& c = core_.machine().costs();
  return c.lb_base + env.cpus_scanned_local * c.lb_per_cpu_local +
         env.cpus_scanned_remote * c.lb_per_cpu_remote + moved * c.lb_move_task;
}

bool Cfs::task_hot(Task* p, const LbEnv& env) {
  const CfsRq& src = *p->se.cfs_rq;
  // 6.1: "SMT siblings share cache"
  if (feats_.LOAD_BALANCE_V61 && (env.sd->flags & SD_SHARE_CPUCAPACITY)) return false;
  if (feats_.CACHE_HOT_BUDDY && rq(env.dst_cpu).cfs.h_nr_running && (&p->se == src.next || &p->se == src.last))
    return true;
  if (migration_cost_ == 0) return false;
  return clock_task(env.src_cpu) - p->se.exec_start < migration_cost_;
}

bool Cfs::can_migrate_task(Task* p, LbEnv& env) {
  if (!p->cpus_allowed.test(env.dst_cpu)) {
    ++failed_migrations_affine_;
    env.flags |= LBF_SOME_PINNED;
    if (!env.dst_grpmask || (env.flags & (LBF_DST_PINNED | LBF_ACTIVE_LB))) return false;
    const hw::CpuMask cand = *env.dst_grpmask & env.cpus & p->cpus_allowed;
    if (!cand.empty()) {
      env.flags |= LBF_DST_PINNED;
      env.new_dst_cpu = cand.first();
    }
    return false;
  }
  env.flags &= ~LBF_ALL_PINNED;
  // Enqueued by a waker that still holds this rq->lock for its preemption
  // check (Kernel::ttwu_lock_and_activate()): the kernel's balancer would
  // wait for the lock and then judge the task; this one leaves it to a
  // later pass. After the affinity test, so the pinned flags read as the
  // kernel's would: the task may run on dst_cpu.
  if (p->enqueued_at_lock) return false;
  if (p->on_cpu || core_.curr(env.src_cpu) == p) {
    ++failed_migrations_running_;
    return false;
  }
  if (env.flags & LBF_ACTIVE_LB) return true;  // 6.1's stopper: "Aggressive migration if: 1) active balance"
  const bool hot = task_hot(p, env);
  if (!hot || env.sd->nr_balance_failed > static_cast<unsigned>(env.sd->cache_nice_tries)) {
    // 6.1 counts a hot task's forced move in detach_task(), once it is
    // taken (p->sched_task_hot).
    if (hot && feats_.LOAD_BALANCE_V61)
      env.task_hot = true;
    else if (hot)
      ++lb_stats_[static_cast<size_t>(env.idle)].hot_gained;
    return true;
  }
  ++failed_migrations_hot_;
  return false;
}

// load_balance()'s moves, by the balance that made them.
const char* balance_cause(CpuIdleType idle) {
  switch (idle) {
    case CpuIdleType::NewlyIdle: return "balance_newidle";
    case CpuIdleType::Idle: return "balance_idle";
    case CpuIdleType::NotIdle: return "balance_busy";
  }
  return "balance";
}

void Cfs::move_task(Task* p, int src, int dst) {
  // detach_task() + attach_task(): dequeue (vruntime made relative),
  // set_task_cpu(), enqueue on dst, check preemption there.
  core_.sched_info_dequeued(src, p);
  dequeue_task_fair(src, p, 0);
  core_.set_task_cpu(p, dst, "balance_active");
  core_.sched_info_queued(dst, p);
  enqueue_task_fair(dst, p, 0);
  check_preempt_curr(dst, p, 0);
}

// detach_tasks()'s count of the tasks it has looked at, 4.0's and 6.1's
// alike: past sched_nr_migrate it stops, and every sched_nr_migrate_break
// it stops too with LBF_NEED_BREAK, so that load_balance() drops the
// runqueue locks and comes back for more.
bool Cfs::detach_loop_ends(LbEnv& env) {
  env.loop++;
  if (env.loop > env.loop_max) return true;
  if (env.loop > env.loop_break) {
    env.loop_break += sched_nr_migrate_break;
    env.flags |= LBF_NEED_BREAK;
    return true;
  }
  return false;
}

int Cfs::detach_tasks(LbEnv& env) {
  if (env.imbalance <= 0) return 0;
  std::list<Task*>& tasks = rq(env.src_cpu).cfs_tasks;
  int detached = 0;
  // Walk the list head first; skipped tasks rotate to the tail. Only
  // env.loop_max bounds the walk: after an LBF_DST_PINNED redo, whose
  // loop_max still counts the tasks moved away, 4.0 goes round the list
  // again and rotates the tasks it skipped once more.
  while (!tasks.empty()) {
    Task* p = tasks.front();
    if (detach_loop_ends(env)) break;
    if (!can_migrate_task(p, env)) {
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    const int64_t load = task_h_load(p);
    if (feats_.LB_MIN && load < 16 && !env.sd->nr_balance_failed) {
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    if (load / 2 > env.imbalance) {
      ++skipped_too_heavy_;
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    detach_task(p, env);
    detached++;
    env.imbalance -= load;
    // Kernels of this era ship CONFIG_PREEMPT_VOLUNTARY, not CONFIG_PREEMPT:
    // newidle balancing may move more than one task.
    if (env.imbalance <= 0) break;
  }
  return detached;
}

// detach_task() of 4.0 and 6.1 (kernel/sched/fair.c): off the source queue
// and onto the destination CPU (set_task_cpu(); migrate_task_rq_fair() also
// forgets the task's cache heat) while still under the source's lock.
// detach_tasks() list_add()s it to the head of env->tasks. The kernel keeps
// it TASK_ON_RQ_MIGRATING until attach_tasks() enqueues it under the
// destination's lock; the model does both at one instant. In between, the
// rest of the detach loop and the lock hand-over, only a wakeup that reads
// idle_cpu(dst) could tell: not in a newidle pass, whose rq->curr is still
// prev (4.0 core.c idle_cpu()), only in a pass run from the idle loop, and
// those are rare (messaging -g 10 -l 2000, seed 1: 33 that moved tasks a
// run, each pass 6 us of balancing in all, against 36 k wakeups per
// CPU-second: a few of a run's 2.3 M wakeups could fall in such a window).
void Cfs::detach_task(Task* p, LbEnv& env) {
  core_.sched_info_dequeued(env.src_cpu, p);
  dequeue_task_fair(env.src_cpu, p, 0);
  core_.set_task_cpu(p, env.dst_cpu, balance_cause(env.idle));
  env.tasks.insert(env.tasks.begin(), p);
}

// attach_tasks() takes env->tasks from its head, so the last task detached
// is enqueued first, and the first detached ends at the head of the
// destination's cfs_tasks (account_entity_enqueue()'s list_add()).
void Cfs::attach_tasks(LbEnv& env) {
  for (Task* p : env.tasks) {
    core_.sched_info_queued(env.dst_cpu, p);
    enqueue_task_fair(env.dst_cpu, p, 0);
    check_preempt_curr(env.dst_cpu, p, 0);
  }
  env.tasks.clear();
}

int64_t Cfs::sg_capacity_factor(const LbEnv& env, const SchedGroup& group) const {
  const int64_t cpus = group.cpus.weight();
  const int64_t capacity_orig = group.capacity;
  const int64_t capacity = group.capacity;
  const int64_t smt = (SCHED_CAPACITY_SCALE * cpus + capacity_orig - 1) / capacity_orig;
  int64_t factor = cpus / smt;
  factor = std::min(factor, (capacity + SCHED_CAPACITY_SCALE / 2) / SCHED_CAPACITY_SCALE);
  if (!factor && (env.sd->flags & SD_SHARE_CPUCAPACITY)) factor = capacity * 32 > capacity_orig * 29;
  return factor;
}

// A balance pass pays per runqueue it reads, by whether it is on the
// destination's socket (balance_cost()).
void Cfs::count_scanned(LbEnv& env, int cpu) const {
  const auto& topo = core_.machine().topo();
  if (topo.cpu(cpu).socket == topo.cpu(env.dst_cpu).socket)
    env.cpus_scanned_local++;
  else
    env.cpus_scanned_remote++;
}

// group_classify() and sg_imbalanced() (v4.0): a group is overloaded when it
// runs more tasks than its capacity factor, else imbalanced while the level
// below, balancing inside it, last failed because of affinity. The flag came
// with Peter Zijlstra's group_imb rewrite (v3.13); 3.10 judged group_imb
// from the spread of its CPUs' loads, which is not modelled, so the 3.10
// preset has neither.
GroupType Cfs::group_classify(const SchedGroup& group, const SgLbStats& sgs) const {
  if (sgs.sum_nr_running > sgs.group_capacity_factor) return GroupType::Overloaded;
  if (group.sgc >= 0 && sgc_imbalance_[static_cast<size_t>(group.sgc)]) return GroupType::Imbalanced;
  return GroupType::Other;
}

void Cfs::update_sg_lb_stats(LbEnv& env, const SchedGroup& group, int load_idx, bool local,
                             SgLbStats& sgs, bool* overload) {
  sgs = SgLbStats{};
  (group.cpus & env.cpus).for_each([&](int i) {
    count_scanned(env, i);
    const int64_t load = local ? target_load(i, load_idx) : source_load(i, load_idx);
    sgs.group_load += load;
    sgs.sum_nr_running += rq(i).cfs.h_nr_running;
    if (rq(i).cfs.h_nr_running > 1) *overload = true;
    sgs.sum_weighted_load += weighted_cpuload(i);
    if (core_.idle_cpu(i)) sgs.idle_cpus++;
  });
  sgs.group_capacity = group.capacity;
  sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
  if (sgs.sum_nr_running) sgs.load_per_task = sgs.sum_weighted_load / sgs.sum_nr_running;
  sgs.group_weight = group.cpus.weight();
  sgs.group_capacity_factor = sg_capacity_factor(env, group);
  sgs.group_type = group_classify(group, sgs);
  sgs.group_has_free_capacity = sgs.group_capacity_factor > sgs.sum_nr_running;
}

// The walk over a domain's groups that update_sd_lb_stats() makes in 4.0
// and in 6.1 alike (kernel/sched/fair.c): each group's statistics, the
// local group's kept in sds.local_stat; every other group offered to the
// kernel's update_sd_pick_busiest(); the totals; and at the top level the
// root domain's overload. What differs between the two kernels is the
// statistics and the pick, which the callers pass.
template <class Sds, class UpdateGroup, class PickBusiest>
void Cfs::walk_sd_groups(LbEnv& env, Sds& sds, UpdateGroup update_group, PickBusiest pick_busiest) {
  bool overload = false;
  for (size_t g = 0; g < env.sd->groups.size(); ++g) {
    const SchedGroup& sg = env.sd->groups[g];
    const bool local = sg.cpus.test(env.dst_cpu);
    decltype(sds.local_stat) tmp;
    auto& sgs = local ? sds.local_stat : tmp;
    if (local) sds.local = static_cast<int>(g);
    update_group(sg, local, sgs, &overload);
    if (!local) pick_busiest(static_cast<int>(g), sgs);
    sds.total_load += sgs.group_load;
    sds.total_capacity += sgs.group_capacity;
  }
  if (env.sd_level == static_cast<int>(core_.domains().of(env.dst_cpu).size()) - 1) rd_overload_ = overload;
}

void Cfs::update_sd_lb_stats(LbEnv& env, SdLbStats& sds) {
  auto& chain = core_.domains().of(env.dst_cpu);
  const SchedDomain* child = env.sd_level > 0 ? &chain[static_cast<size_t>(env.sd_level - 1)] : nullptr;
  const bool prefer_sibling = child && (child->flags & SD_PREFER_SIBLING);
  const int load_idx = env.idle == CpuIdleType::NotIdle     ? env.sd->busy_idx
                       : env.idle == CpuIdleType::NewlyIdle ? env.sd->newidle_idx
                                                            : env.sd->idle_idx;
  walk_sd_groups(
      env, sds,
      [&](const SchedGroup& sg, bool local, SgLbStats& sgs, bool* overload) {
        update_sg_lb_stats(env, sg, load_idx, local, sgs, overload);
      },
      [&](int g, SgLbStats& sgs) {
        if (prefer_sibling && sds.local >= 0 && sds.local_stat.group_has_free_capacity) {
          sgs.group_capacity_factor = std::min<int64_t>(sgs.group_capacity_factor, 1);
          sgs.group_type = group_classify(env.sd->groups[static_cast<size_t>(g)], sgs);
        }
        // update_sd_pick_busiest()
        const auto& b = sds.busiest_stat;
        if (sgs.group_type > b.group_type || (sgs.group_type == b.group_type && sgs.avg_load > b.avg_load)) {
          sds.busiest = g;
          sds.busiest_stat = sgs;
        }
      });
}

void Cfs::fix_small_imbalance(LbEnv& env, SdLbStats& sds) {
  SgLbStats& local = sds.local_stat;
  SgLbStats& busiest = sds.busiest_stat;
  int64_t imbn = 2;
  if (!local.sum_nr_running)
    local.load_per_task = cpu_avg_load_per_task(env.dst_cpu);
  else if (busiest.load_per_task > local.load_per_task)
    imbn = 1;
  const int64_t scaled_busy_load_per_task = busiest.load_per_task * SCHED_CAPACITY_SCALE / busiest.group_capacity;
  if (busiest.avg_load + scaled_busy_load_per_task >= local.avg_load + scaled_busy_load_per_task * imbn) {
    env.imbalance = busiest.load_per_task;
    return;
  }
  int64_t capa_now = 0, capa_move = 0;
  capa_now += busiest.group_capacity * std::min(busiest.load_per_task, busiest.avg_load);
  capa_now += local.group_capacity * std::min(local.load_per_task, local.avg_load);
  capa_now /= SCHED_CAPACITY_SCALE;
  if (busiest.avg_load > scaled_busy_load_per_task)
    capa_move += busiest.group_capacity *
                 std::min(busiest.load_per_task, busiest.avg_load - scaled_busy_load_per_task);
  int64_t tmp;
  if (busiest.avg_load * busiest.group_capacity < busiest.load_per_task * SCHED_CAPACITY_SCALE)
    tmp = busiest.avg_load * busiest.group_capacity / local.group_capacity;
  else
    tmp = busiest.load_per_task * SCHED_CAPACITY_SCALE / local.group_capacity;
  capa_move += local.group_capacity * std::min(local.load_per_task, local.avg_load + tmp);
  capa_move /= SCHED_CAPACITY_SCALE;
  if (capa_move > capa_now) env.imbalance = busiest.load_per_task;
}

void Cfs::calculate_imbalance(LbEnv& env, SdLbStats& sds) {
  SgLbStats& local = sds.local_stat;
  SgLbStats& busiest = sds.busiest_stat;
  if (busiest.group_type == GroupType::Imbalanced)
    busiest.load_per_task = std::min(busiest.load_per_task, sds.avg_load);
  if (busiest.avg_load <= sds.avg_load || local.avg_load >= sds.avg_load) {
    env.imbalance = 0;
    return fix_small_imbalance(env, sds);
  }
  int64_t load_above_capacity = INT64_MAX;
  if (busiest.group_type == GroupType::Overloaded && local.group_type == GroupType::Overloaded) {
    load_above_capacity = (busiest.sum_nr_running - busiest.group_capacity_factor) * NICE_0_LOAD *
                          SCHED_CAPACITY_SCALE / busiest.group_capacity;
  }
  const int64_t max_pull = std::min(busiest.avg_load - sds.avg_load, load_above_capacity);
  env.imbalance = std::min(max_pull * busiest.group_capacity,
                           (sds.avg_load - local.avg_load) * local.group_capacity) /
                  SCHED_CAPACITY_SCALE;
  if (env.imbalance < busiest.load_per_task) return fix_small_imbalance(env, sds);
}

int Cfs::find_busiest_group(LbEnv& env, SdLbStats& sds) {
  update_sd_lb_stats(env, sds);
  SgLbStats& local = sds.local_stat;
  SgLbStats& busiest = sds.busiest_stat;
  if (sds.busiest < 0 || busiest.sum_nr_running == 0) goto out_balanced;
  sds.avg_load = SCHED_CAPACITY_SCALE * sds.total_load / sds.total_capacity;
  if (busiest.group_type == GroupType::Imbalanced) goto force_balance;
  // SD_BALANCE_NEWIDLE trumps SMP nice when underutilized.
  if (env.idle == CpuIdleType::NewlyIdle && local.group_has_free_capacity && !busiest.group_has_free_capacity)
    goto force_balance;
  if (local.avg_load >= busiest.avg_load) goto out_balanced;
  if (local.avg_load >= sds.avg_load) goto out_balanced;
  if (env.idle == CpuIdleType::Idle) {
    if (busiest.group_type != GroupType::Overloaded && local.idle_cpus <= busiest.idle_cpus + 1)
      goto out_balanced;
  } else {
    if (100 * busiest.avg_load <= env.sd->imbalance_pct * local.avg_load) goto out_balanced;
  }
force_balance:
  calculate_imbalance(env, sds);
  return sds.busiest;
out_balanced:
  env.imbalance = 0;
  return -1;
}

int Cfs::find_busiest_queue(LbEnv& env, const SchedGroup& group) {
  int busiest = -1;
  int64_t busiest_load = 0, busiest_capacity = 1;
  (group.cpus & env.cpus).for_each([&](int i) {
    const int64_t capacity = capacity_of(i);
    int64_t capacity_factor = (capacity + SCHED_CAPACITY_SCALE / 2) / SCHED_CAPACITY_SCALE;
    if (!capacity_factor && (env.sd->flags & SD_SHARE_CPUCAPACITY)) capacity_factor = 1;
    const int64_t wl = weighted_cpuload(i);
    if (capacity_factor && rq(i).cfs.h_nr_running == 1 && wl > env.imbalance) return;
    if (wl * busiest_capacity > busiest_load * capacity) {
      busiest_load = wl;
      busiest_capacity = capacity;
      busiest = i;
    }
  });
  return busiest;
}

bool Cfs::should_we_balance(LbEnv& env) {
  if (env.idle == CpuIdleType::NewlyIdle) return true;
  const SchedGroup& sg = env.sd->groups.front();
  int balance_cpu = -1;
  (sg.cpus & env.cpus).for_each([&](int c) {
    if (balance_cpu < 0 && core_.idle_cpu(c)) balance_cpu = c;
  });
  if (balance_cpu == -1) balance_cpu = sg.cpus.first();
  return balance_cpu == env.dst_cpu;
}

// load_balance()'s more_balance loop, 4.0's and 6.1's alike: detach and
// attach from busiest in breathers of sched_nr_migrate_break, then retry
// any other CPU of the local group the pinned tasks allow. Returns the
// tasks moved.
int Cfs::more_balance(LbEnv& env, int busiest) {
  int moved = 0;
  for (;;) {
    core_.lock_rq(busiest, core_.this_cpu(), core_.machine().costs().rq_lock_hold, CostPath::RqLock);
    const int cur = feats_.LOAD_BALANCE_V61 ? detach_tasks_v61(env) : detach_tasks(env);
    if (cur) {
      attach_tasks(env);
      moved += cur;
    }
    if (env.flags & LBF_NEED_BREAK) {
      env.flags &= ~LBF_NEED_BREAK;
      continue;
    }
    if ((env.flags & LBF_DST_PINNED) && env.imbalance > 0) {
      env.cpus.clear(env.dst_cpu);
      env.dst_cpu = env.new_dst_cpu;
      env.flags &= ~LBF_DST_PINNED;
      env.loop = 0;
      env.loop_break = sched_nr_migrate_break;
      continue;
    }
    return moved;
  }
}

// load_balance(): one pass at one domain level for this_cpu. Returns the
// number of tasks moved; charges its cost to the CPU executing it.
int Cfs::load_balance(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing) {
  if (feats_.LOAD_BALANCE_V61) return load_balance_v61(this_cpu, level, idle, continue_balancing);
  auto& chain = core_.domains().of(this_cpu);
  SchedDomain& sd = chain[static_cast<size_t>(level)];
  LbEnv env;
  env.sd = &sd;
  env.sd_level = level;
  env.dst_cpu = this_cpu;
  env.dst_grpmask = idle == CpuIdleType::NewlyIdle ? nullptr : &sd.groups.front().cpus;
  env.idle = idle;
  env.cpus = core_.machine().topo().all();
  const SchedDomain* sd_parent = static_cast<size_t>(level) + 1 < chain.size() ? &chain[static_cast<size_t>(level) + 1] : nullptr;
  int ld_moved = 0;
  bool active_balance = false;
  bool balanced = false, all_pinned = false, one_pinned = false;
  for (;;) {  // redo:
    if (!should_we_balance(env)) {
      *continue_balancing = false;
      balanced = true;
      break;
    }
    SdLbStats sds;
    const int group = find_busiest_group(env, sds);
    if (group < 0) {
      ++lb_stats_[static_cast<size_t>(idle)].nobusyg;
      balanced = true;
      break;
    }
    const int busiest = find_busiest_queue(env, sd.groups[static_cast<size_t>(group)]);
    if (busiest < 0) {
      ++lb_stats_[static_cast<size_t>(idle)].nobusyq;
      balanced = true;
      break;
    }
    ld_moved = 0;
    if (rq(busiest).cfs.h_nr_running > 1) {
      env.flags |= LBF_ALL_PINNED;
      env.src_cpu = busiest;
      env.loop_max = static_cast<unsigned>(
          std::min<int64_t>(core_.config().sysctl("sched_nr_migrate"), rq(busiest).cfs.h_nr_running));
      bool redo = false;
      ld_moved = more_balance(env, busiest);
      // "We failed to reach balance because of affinity": the parent level
      // sees this domain's group as imbalanced.
      if (sd_parent && (env.flags & LBF_SOME_PINNED) && env.imbalance > 0) set_group_imbalance(*sd_parent, true);
      if (env.flags & LBF_ALL_PINNED) {
        env.cpus.clear(busiest);
        if (!env.cpus.empty()) {
          env.loop = 0;
          env.loop_break = sched_nr_migrate_break;
          redo = true;
        } else {
          all_pinned = true;
        }
      }
      if (redo) continue;
      if (all_pinned) break;
    }
    if (!ld_moved) {
      ++lb_stats_[static_cast<size_t>(idle)].failed;
      if (idle != CpuIdleType::NewlyIdle) sd.nr_balance_failed++;
      if (sd.nr_balance_failed > static_cast<unsigned>(sd.cache_nice_tries + 2)) {
        // "don't kick the active_load_balance_cpu_stop, if the curr task on
        // busiest cpu can't be moved to this_cpu". A busiest CPU with no
        // task running has its idle task as curr, which init_idle() binds
        // to that CPU, so 4.0 takes out_one_pinned there too.
        Task* bcurr = core_.curr(busiest);
        if (!bcurr || !bcurr->cpus_allowed.test(this_cpu)) {
          env.flags |= LBF_ALL_PINNED;
          one_pinned = true;
          break;
        }
        if (!rq(busiest).active_balance) {
          rq(busiest).active_balance = true;
          active_balance = true;
          active_load_balance(busiest, this_cpu);
        }
        sd.nr_balance_failed = static_cast<unsigned>(sd.cache_nice_tries + 1);
      }
    } else {
      sd.nr_balance_failed = 0;
    }
    if (!active_balance) {
      sd.balance_interval_ms = sd.min_interval_ms;
    } else if (sd.balance_interval_ms < sd.max_interval_ms) {
      sd.balance_interval_ms *= 2;
    }
    break;
  }
  // out_balanced: "We reach balance although we may have faced some affinity
  // constraints. Clear the imbalance flag if it was set." All pinned or one
  // pinned leaves it set, so the parent level can try. But an all-pinned
  // pass whose redo without that CPU finds the level balanced ends here
  // too, and 4.0 clears the flag it has just set (afdeee0510db, 2014; from
  // f6cad8df6b30, 2019, an LBF_ALL_PINNED pass keeps it). So does a pass
  // that should_we_balance() leaves to another CPU of its group.
  if (balanced && sd_parent) set_group_imbalance(*sd_parent, false);
  if (balanced || all_pinned || one_pinned) {
    if (!one_pinned) sd.nr_balance_failed = 0;
    if (((env.flags & LBF_ALL_PINNED) && sd.balance_interval_ms < MAX_PINNED_INTERVAL) ||
        sd.balance_interval_ms < sd.max_interval_ms)
      sd.balance_interval_ms *= 2;
    ld_moved = 0;
  }
  const int64_t cost = balance_cost(env, ld_moved);
  core_.charge(core_.this_cpu(), cost, CostPath::Balance);
  core_.note_balance(this_cpu, level, idle, ld_moved > 0, ld_moved, cost);
  last_balance_cost_ = cost;
  return ld_moved;
}

// load_balance() (4.0 fair.c) kicks the busiest CPU's stopper:
// stop_one_cpu_nowait(active_load_balance_cpu_stop). rq->active_balance
// stays set until the stopper has run, so no second kick is queued.
void Cfs::active_load_balance(int busiest_cpu, int target_cpu) {
  rq(busiest_cpu).push_cpu = target_cpu;
  core_.stop_one_cpu_nowait(busiest_cpu);
}

// active_load_balance_cpu_stop() (4.0 fair.c), on the busiest CPU. The
// stopper has preempted the task that ran there, so detach_one_task() may
// move that task too: this is how a CPU running a single task is relieved of
// it. "busiest_rq->nr_running <= 1" counts the stopper itself, so one CFS
// task is enough.
void Cfs::cpu_stop_work(int busiest_cpu) {
  // Picking the stopper puts the previous task at every level (4.0
  // pick_next_task_fair()'s simple path), whatever the stopper then moves.
  flush_prev(busiest_cpu);
  Rq& b = rq(busiest_cpu);
  if (!b.active_balance) return;
  b.active_balance = false;
  const int target_cpu = b.push_cpu;
  if (b.cfs.h_nr_running < 1 || target_cpu < 0 || target_cpu == busiest_cpu) return;
  const int level = core_.domains().level_spanning(target_cpu, busiest_cpu);
  if (level < 0) return;
  LbEnv env;
  env.sd = &core_.domains().of(target_cpu)[static_cast<size_t>(level)];
  env.sd_level = level;
  env.dst_cpu = target_cpu;
  env.src_cpu = busiest_cpu;
  env.idle = CpuIdleType::Idle;
  env.cpus = core_.machine().topo().all();
  auto push = [&](Task* p) {
    move_task(p, busiest_cpu, target_cpu);
    ++active_balances_;
    core_.charge(core_.this_cpu(), core_.machine().costs().lb_move_task, CostPath::Balance);
  };
  if (feats_.LOAD_BALANCE_V61) {
    // 6.1's detach_one_task(): from the tail, cache hotness ignored.
    // "Active balancing done, reset the failure counter."
    env.flags |= LBF_ACTIVE_LB;
    for (auto it = b.cfs_tasks.rbegin(); it != b.cfs_tasks.rend(); ++it)
      if (can_migrate_task(*it, env)) {
        env.sd->nr_balance_failed = 0;
        return push(*it);
      }
    return;
  }
  for (Task* p : b.cfs_tasks)
    if (can_migrate_task(p, env)) return push(p);
}

int64_t Cfs::get_sd_balance_interval(const SchedDomain& sd, bool cpu_busy) const {
  int64_t interval = sd.balance_interval_ms;
  // LOAD_BALANCE_V61: 6.1's sd_init() busy_factor, and "Reduce likelihood of
  // busy balancing at higher domains racing with balancing at lower domains".
  const bool v61 = feats_.LOAD_BALANCE_V61;
  if (cpu_busy) interval *= v61 ? 16 : sd.busy_factor;
  // msecs_to_jiffies()
  interval = (interval * core_.config().hz() + 999) / 1000;
  if (cpu_busy && v61) interval -= 1;
  return std::clamp<int64_t>(interval, 1, max_load_balance_interval_);
}

// idle_balance() of 4.0, or with NEWIDLE_V61 sched_balance_newidle() of
// Debian's 6.1.170: no sched_migration_cost gate, only the root domain's
// overload and avg_idle against the lowest domain's costliest pass, and
// NI_RANDOM, each domain's pass run with the probability of its recent
// success ("sched/fair: Proportional newidle balance", Peter Zijlstra,
// 2025, backported to 6.1.y); a domain that pulls often is tried nearly
// always, one that never does twice in 1024 tries.
int Cfs::idle_balance(int this_cpu) {
  const bool v61 = feats_.NEWIDLE_V61;
  Rq& r = rq(this_cpu);
  int64_t next_balance = core_.jiffies() + core_.config().hz();
  int pulled_task = 0;
  int64_t curr_cost = 0;
  auto& chain = core_.domains().of(this_cpu);
  r.idle_stamp = core_.rq_clock(this_cpu);
  auto update_next_balance = [&](const SchedDomain& sd) {
    next_balance = std::min(next_balance, sd.last_balance + get_sd_balance_interval(sd, false));
  };
  const bool gated = v61 ? !rd_overload_ || (!chain.empty() && r.avg_idle < chain.front().max_newidle_lb_cost)
                         : r.avg_idle < migration_cost_ || (version() >= 317 && !rd_overload_);
  if (gated || chain.empty()) {
    if (!chain.empty()) update_next_balance(chain.front());
  } else {
    update_blocked_averages(this_cpu);
    for (size_t l = 0; l < chain.size(); ++l) {
      SchedDomain& sd = chain[l];
      bool continue_balancing = true;
      // 6.1 has no SD_LOAD_BALANCE; every level of the model sets it.
      if (!(sd.flags & SD_LOAD_BALANCE)) continue;
      if (v61) update_next_balance(sd);  // 6.1 moves it before the cost check
      if ((v61 || feats_.NEWIDLE_COST) && r.avg_idle < curr_cost + sd.max_newidle_lb_cost) {
        if (!v61) update_next_balance(sd);
        break;
      }
      if (sd.flags & SD_BALANCE_NEWIDLE) {
        unsigned weight = 1;
        if (v61) {
          // "Throw a 1k sided dice; and only run newidle_balance according
          // to the success rate."
          const unsigned d1k = static_cast<unsigned>(core_.random_u64() % 1024);
          weight = 1 + sd.newidle_ratio;
          if (d1k > weight) {
            update_newidle_stats_v61(sd, 0);
            continue;
          }
          weight = (1024 + weight / 2) / weight;
        }
        pulled_task = load_balance(this_cpu, static_cast<int>(l), CpuIdleType::NewlyIdle, &continue_balancing);
        const int64_t domain_cost = last_balance_cost_;
        curr_cost += domain_cost;
        if (v61)
          update_newidle_cost_v61(sd, domain_cost, weight * (pulled_task ? 1 : 0));
        else if (domain_cost > sd.max_newidle_lb_cost)
          sd.max_newidle_lb_cost = domain_cost;
      }
      if (!v61) update_next_balance(sd);
      if (pulled_task || r.cfs.h_nr_running > 0) break;
    }
    if (curr_cost > r.max_idle_balance_cost) r.max_idle_balance_cost = curr_cost;
    if (r.cfs.h_nr_running && !pulled_task) pulled_task = 1;
  }
  if (r.next_balance > next_balance) r.next_balance = next_balance;
  if (pulled_task) r.idle_stamp = 0;
  return pulled_task;
}

void Cfs::rebalance_domains(int cpu, CpuIdleType idle) {
  Rq& r = rq(cpu);
  bool continue_balancing = true;
  const int64_t jiffies = core_.jiffies();
  int64_t next_balance = jiffies + 60 * core_.config().hz();
  bool update_next_balance = false, need_decay = false;
  int64_t max_cost = 0;
  update_blocked_averages(cpu);
  auto& chain = core_.domains().of(cpu);
  for (size_t l = 0; l < chain.size(); ++l) {
    SchedDomain& sd = chain[l];
    if (feats_.NEWIDLE_V61) {
      need_decay = update_newidle_cost_v61(sd, 0, 0);  // 6.1: the last domain's answer
    } else if (feats_.NEWIDLE_COST && jiffies > sd.next_decay_max_lb_cost) {
      sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
      sd.next_decay_max_lb_cost = jiffies + core_.config().hz();
      need_decay = true;
    }
    max_cost += sd.max_newidle_lb_cost;
    if (!(sd.flags & SD_LOAD_BALANCE)) continue;
    if (!continue_balancing) {
      if (need_decay) continue;
      break;
    }
    int64_t interval = get_sd_balance_interval(sd, idle != CpuIdleType::Idle);
    if (jiffies >= sd.last_balance + interval) {
      if (load_balance(cpu, static_cast<int>(l), idle, &continue_balancing))
        idle = core_.idle_cpu(cpu) ? CpuIdleType::Idle : CpuIdleType::NotIdle;
      sd.last_balance = jiffies;
      interval = get_sd_balance_interval(sd, idle != CpuIdleType::Idle);
    }
    if (next_balance > sd.last_balance + interval) {
      next_balance = sd.last_balance + interval;
      update_next_balance = true;
    }
  }
  if (need_decay) r.max_idle_balance_cost = std::max(migration_cost_, max_cost);
  if (update_next_balance) r.next_balance = next_balance;
}

bool Cfs::nohz_kick_needed(int cpu) {
  // "if (unlikely(rq->idle_balance)) return false;": a tick taken on the idle
  // task (scheduler_tick(): rq->idle_balance = idle_cpu(cpu)) leaves the CPU
  // in the nohz mask.
  if (core_.idle_cpu(cpu)) return false;
  // nohz_balance_exit_idle(): we are busy again.
  nohz_idle_mask_.clear(cpu);
  if (nohz_idle_mask_.empty()) return false;
  if (core_.jiffies() < nohz_next_balance_) return false;
  if (rq(cpu).cfs.h_nr_running >= 2) return true;
  // sd_busy: more than one busy CPU in our LLC.
  const int llc = core_.domains().llc_level(cpu);
  if (llc >= 0 && llc + 1 < static_cast<int>(core_.domains().of(cpu).size())) {
    int busy = 0;
    core_.domains().of(cpu)[static_cast<size_t>(llc)].span.for_each([&](int c) {
      if (!nohz_idle_mask_.test(c)) ++busy;
    });
    if (busy > 1) return true;
  }
  return false;
}

// Not a kernel counter: how well the load that placement and balancing read
// (weighted_cpuload()) ranks CPUs by what they have queued. Once a jiffy, at
// the first tick, over every ordered pair of CPUs where one has two or more
// runnable tasks more (cfs h_nr_running) than the other, count the pairs
// where it does not read heavier. A task that mostly sleeps carries little load,
// so some inversions are normal; with autogroup in 4.0 a CPU's load is its
// group entity's share of the group's runnable *and blocked* load
// (__update_cfs_rq_tg_load_contrib(), __update_group_entity_contrib()),
// refreshed once per 1024 us period, so it follows where the group's tasks
// slept as much as where they queue.
// With 4.0's group scheduling two what-ifs say which term inverts: the same
// count with every group entity's contribution recomputed from its queue's
// load at the sample (as if tg_load_contrib, tg->load_avg and the entity's
// contrib had just been refreshed), with and without the queues' blocked
// load. (Not reported with GROUP_RUNNABLE_WEIGHT or GROUP_ENTITY_REFRESH,
// which change the formula or its timing.)
void Cfs::sample_load_view() {
  const int64_t jiffy = core_.jiffies();
  if (jiffy == load_view_jiffy_) return;
  load_view_jiffy_ = jiffy;
  const int n = core_.machine().topo().nr_cpus();
  const bool what_ifs = group_sched_ && !group_load_what_if();
  std::vector<int64_t> fresh, runnable_only;
  if (what_ifs)
    for (int cpu = 0; cpu < n; ++cpu) {
      fresh.push_back(load_if_refreshed(cpu, true));
      runnable_only.push_back(load_if_refreshed(cpu, false));
    }
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b) {
      if (rq(a).cfs.h_nr_running < rq(b).cfs.h_nr_running + 2) continue;
      ++load_view_pairs_;
      if (weighted_cpuload(a) <= weighted_cpuload(b)) ++load_view_inversions_;
      if (!what_ifs) continue;
      if (fresh[a] <= fresh[b]) ++load_view_inversions_if_fresh_;
      if (runnable_only[a] <= runnable_only[b]) ++load_view_inversions_if_no_blocked_;
    }
}

int64_t Cfs::load_if_refreshed(int cpu, bool with_blocked) const {
  int64_t load = rq(cpu).cfs.runnable_load_avg;
  for (const auto& [id, tg] : groups_) {
    const SchedEntity& se = *tg->se[static_cast<size_t>(cpu)];
    if (!se.on_rq) continue;
    auto queue_load = [&](const CfsRq& q) { return q.runnable_load_avg + (with_blocked ? q.blocked_load_avg : 0); };
    int64_t group_load = 0;
    for (const auto& q : tg->cfs_rq) group_load += queue_load(*q);
    load += fair_group::group_entity_contrib(queue_load(*tg->cfs_rq[static_cast<size_t>(cpu)]), tg->shares,
                                             group_load, tg->runnable_avg) -
            se.load_avg_contrib;
  }
  return load;
}

void Cfs::trigger_load_balance(int cpu) {
  sample_load_view();
  if (core_.domains().of(cpu).empty()) return;
  if (core_.jiffies() >= rq(cpu).next_balance)
    rebalance_domains(cpu, core_.idle_cpu(cpu) ? CpuIdleType::Idle : CpuIdleType::NotIdle);
  const bool kick = nohz_kick_needed(cpu);
  if (kick) {
    // nohz_balancer_kick(): find_new_ilb() takes the first CPU of
    // nohz.idle_cpus_mask, and only if it is idle (a CPU that has woken but
    // not yet ticked is still in the mask: then nobody is kicked).
    ++nohz_next_balance_;  // nohz.next_balance++
    int ilb = -1;
    nohz_idle_mask_.for_each([&](int c) {
      if (ilb == -1) ilb = core_.idle_cpu(c) ? c : -2;
    });
    if (ilb >= 0 && core_.kick_idle_balance(ilb)) ++nohz_kicks_;
  }
}

// run_rebalance_domains() on a kicked CPU (4.0 kernel/sched/fair.c): the
// CPU's own domains first (rebalance_domains() balances those that are due),
// then nohz_idle_balance() for the other tickless idle CPUs, which stops as
// soon as this CPU has work (need_resched()): a kick whose CPU pulls a task
// for itself balances nobody else, and nohz.next_balance becomes that CPU's
// next_balance, now a busy CPU's interval. A kicked CPU has
// rq->idle_balance = 1 (scheduler_ipi()), so both run as CPU_IDLE.
// NOHZ_ILB_OTHERS_FIRST is the v4.1 order ("Do nohz_idle_balance *before*
// rebalance_domains to give the idle CPUs a chance to load balance").
void Cfs::nohz_idle_balance(int this_cpu) {
  Rq& this_rq = rq(this_cpu);
  const bool others_first = feats_.NOHZ_ILB_OTHERS_FIRST;
  if (!others_first) rebalance_domains(this_cpu, CpuIdleType::Idle);
  const hw::CpuMask mask = nohz_idle_mask_;
  bool stop = false;
  mask.for_each([&](int balance_cpu) {
    if (stop || balance_cpu == this_cpu || !core_.idle_cpu(balance_cpu)) return;
    if (core_.curr(this_cpu) || this_rq.cfs.h_nr_running) {  // need_resched()
      stop = true;
      return;
    }
    Rq& r = rq(balance_cpu);
    if (core_.jiffies() >= r.next_balance) {
      core_.update_rq_clock(balance_cpu);  // then update_idle_cpu_load()
      const int64_t pending = core_.jiffies() - r.last_load_update_tick;
      if (weighted_cpuload(balance_cpu) == 0 && pending > 0) update_cpu_load(balance_cpu, 0, pending);
      rebalance_domains(balance_cpu, CpuIdleType::Idle);
    }
    this_rq.next_balance = std::min(this_rq.next_balance, r.next_balance);
  });
  nohz_next_balance_ = this_rq.next_balance;
  if (others_first) rebalance_domains(this_cpu, CpuIdleType::Idle);
}

// ------------------------------- LOAD_BALANCE_V61, NEWIDLE_V61 (what-ifs) ---
//
// 6.1's load balancer, which the real 6.1 of tools/guest runs (Vincent
// Guittot's rework, "sched/fair: Rework load_balance()", v5.5, as 6.1 has
// it). kernel/sched/fair.c of Debian's linux-source-6.1 (6.1.170):
// update_sg_lb_stats(), group_classify(), update_sd_pick_busiest(),
// update_sd_lb_stats(), calculate_imbalance(), find_busiest_group(),
// find_busiest_queue(), detach_tasks(), need_active_balance(),
// should_we_balance(), load_balance() and active_load_balance_cpu_stop();
// and sched_balance_newidle() with its NI_RANDOM, update_newidle_stats()
// and update_newidle_cost() (NEWIDLE_V61). Where 4.0 compares
// cpu_load[idx] histories against imbalance_pct and moves runnable load,
// 6.1 classes each group (spare capacity, fully busy, overloaded) and,
// by the two groups' classes, moves tasks to even the idle CPUs or the
// task counts, utilisation to fill spare capacity, or load to even the
// averages; its load is the queue's whole average, sleepers included.
//
// Readings chosen, FIND_IDLEST_V61's (section above) for the signals: load_avg
// and runnable_avg are 4.0's runnable + blocked load, util_avg the sum of
// the running averages of the tasks queued on or last asleep on the CPU
// (cpu_utils_v61()), a CPU's capacity SCHED_CAPACITY_SCALE. A task's
// util_est is its running average. A fork starts at
// post_init_entity_util_avg()'s utilisation, but as a 4.0-style ratio over
// its first slice of history, so it fades faster than 6.1's PELT sum would.
// The levels take 6.1's sd_init() imbalance_pct (110 for SMT, 117 above,
// where FIND_IDLEST_V61 keeps 4.0's) and busy_factor (16), and every level
// but NUMA prefers siblings, as 6.1's sd_init() sets SD_PREFER_SIBLING. The
// pick moves a task to the head of cfs_tasks (6.1's MRU list), so the
// balancer, which walks from the tail, tries the task that ran least
// recently first. Debian's kernel is CONFIG_PREEMPTION, so a newidle pass
// moves one task. Task counts are CFS tasks', the model's only class.
// The affinity class (group_imbalanced) reads and writes the sgc flag 4.0's
// balancer keeps; 6.1 clears it at out_balanced only when the pass is not
// LBF_ALL_PINNED (f6cad8df6b30), a should_we_balance() exit included.
// Left out: the misfit and asym-packing classes, NUMA balancing's fbq
// types, a pending wakeup (ttwu_pending) in the newidle checks,
// nohz_newidle_balance(), and 6.1's nohz kick rules (the 4.0 kick stays);
// the rest of 6.1 (its wake path, PELT) is not here.

struct Cfs::SdLbStatsV61 {
  int busiest = -1, local = -1;  // group indices
  int64_t total_load = 0, total_capacity = 0, avg_load = 0;
  GroupStatsV61 busiest_stat, local_stat;
  bool prefer_sibling = false;
  SdLbStatsV61() {
    // init_sd_lb_stats()
    busiest_stat.idle_cpus = INT_MAX;
    busiest_stat.group_type = GroupTypeV61::HasSpare;
  }
};

int Cfs::imbalance_pct_v61(const SchedDomain& sd) { return (sd.flags & SD_SHARE_CPUCAPACITY) ? 110 : 117; }

int64_t Cfs::task_util_v61(const Task* p) const {
  return static_cast<int64_t>((p->se.running_avg_sum << 10) / (p->se.avg_period + 1));
}

void Cfs::update_sg_lb_stats_v61(LbEnv& env, const SchedGroup& group, GroupStatsV61& sgs, bool* overload) {
  sgs = GroupStatsV61{};
  (group.cpus & env.cpus).for_each([&](int i) {
    count_scanned(env, i);
    const int64_t load = cpu_load_v61(i);
    sgs.group_load += load;
    sgs.group_util += env.util_v61[static_cast<size_t>(i)];
    sgs.group_runnable += load;
    sgs.sum_h_nr_running += rq(i).cfs.h_nr_running;
    const int nr = nr_running(i);
    sgs.sum_nr_running += nr;
    if (nr > 1) *overload = true;
    if (!nr && core_.idle_cpu(i)) sgs.idle_cpus++;
  });
  sgs.group_weight = group.cpus.weight();
  sgs.group_capacity = SCHED_CAPACITY_SCALE * sgs.group_weight;
  sgs.group_type = group_classify_v61(imbalance_pct_v61(*env.sd), group, sgs);
  // "Computing avg_load makes sense only when group is overloaded"
  if (sgs.group_type == GroupTypeV61::Overloaded)
    sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
}

// update_sd_lb_stats() of 6.1: 4.0's walk over the groups
// (Cfs::walk_sd_groups()) with 6.1's statistics and update_sd_pick_busiest(),
// which skips an empty group; and prefer_sibling from the child domain's
// flags, not SD_PREFER_SIBLING.
void Cfs::update_sd_lb_stats_v61(LbEnv& env, SdLbStatsV61& sds) {
  walk_sd_groups(
      env, sds,
      [&](const SchedGroup& sg, bool, GroupStatsV61& sgs, bool* overload) {
        update_sg_lb_stats_v61(env, sg, sgs, overload);
      },
      [&](int g, const GroupStatsV61& sgs) {
        if (sgs.sum_h_nr_running && busier_v61(sgs, sds.busiest_stat)) {
          sds.busiest = g;
          sds.busiest_stat = sgs;
        }
      });
  auto& chain = core_.domains().of(env.dst_cpu);
  const SchedDomain* child = env.sd_level > 0 ? &chain[static_cast<size_t>(env.sd_level - 1)] : nullptr;
  sds.prefer_sibling = child && !(child->flags & SD_NUMA);
}

void Cfs::calculate_imbalance_v61(LbEnv& env, SdLbStatsV61& sds) {
  GroupStatsV61& local = sds.local_stat;
  const GroupStatsV61& busiest = sds.busiest_stat;
  // "In the group_imb case we cannot rely on group-wide averages to ensure
  // CPU-load equilibrium, try to move any task to fix the imbalance."
  if (busiest.group_type == GroupTypeV61::Imbalanced) {
    env.migration_type = MigrationTypeV61::Task;
    env.imbalance = 1;
    return;
  }
  // "Try to use spare capacity of local group without overloading it or
  // emptying busiest."
  if (local.group_type == GroupTypeV61::HasSpare) {
    if (busiest.group_type > GroupTypeV61::FullyBusy && !(env.sd->flags & SD_SHARE_PKG_RESOURCES)) {
      env.migration_type = MigrationTypeV61::Util;
      env.imbalance = std::max(local.group_capacity, local.group_util) - local.group_util;
      if (env.idle != CpuIdleType::NotIdle && env.imbalance == 0) {
        env.migration_type = MigrationTypeV61::Task;
        env.imbalance = 1;
      }
      return;
    }
    env.migration_type = MigrationTypeV61::Task;
    if (busiest.group_weight == 1 || sds.prefer_sibling)
      env.imbalance = std::max(0, busiest.sum_nr_running - local.sum_nr_running);  // lsub_positive()
    else
      env.imbalance = std::max(0, local.idle_cpus - busiest.idle_cpus);
    // adjust_numa_imbalance(): a small imbalance may stay while the
    // destination runs few tasks.
    constexpr int64_t NUMA_IMBALANCE_MIN = 2;
    if ((env.sd->flags & SD_NUMA) && local.sum_nr_running + 1 <= imb_numa_nr(env.dst_cpu, *env.sd) &&
        env.imbalance <= NUMA_IMBALANCE_MIN)
      env.imbalance = 0;
    env.imbalance >>= 1;
    return;
  }
  // "Local is fully busy but has to take more load to relieve the busiest group"
  if (local.group_type < GroupTypeV61::Overloaded) {
    local.avg_load = local.group_load * SCHED_CAPACITY_SCALE / local.group_capacity;
    if (local.avg_load >= busiest.avg_load) {
      env.imbalance = 0;
      return;
    }
    sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
    if (local.avg_load >= sds.avg_load) {
      env.imbalance = 0;
      return;
    }
  }
  env.migration_type = MigrationTypeV61::Load;
  // 6.1's averages are unsigned: a negative difference wraps to a huge one
  // and min() takes the other.
  auto above = [](int64_t a, int64_t b, int64_t capacity) {
    return a >= b ? (a - b) * capacity : INT64_MAX;
  };
  env.imbalance = std::min(above(busiest.avg_load, sds.avg_load, busiest.group_capacity),
                           above(sds.avg_load, local.avg_load, local.group_capacity)) /
                  SCHED_CAPACITY_SCALE;
}

int Cfs::find_busiest_group_v61(LbEnv& env) {
  SdLbStatsV61 sds;
  env.util_v61 = cpu_utils_v61();
  update_sd_lb_stats_v61(env, sds);
  env.imbalance = 0;
  if (sds.busiest < 0) return -1;
  const GroupStatsV61& busiest = sds.busiest_stat;
  const GroupStatsV61& local = sds.local_stat;
  // "If the busiest group is imbalanced the below checks don't work":
  // force_balance.
  if (busiest.group_type == GroupTypeV61::Imbalanced) {
    calculate_imbalance_v61(env, sds);
    return env.imbalance ? sds.busiest : -1;
  }
  if (local.group_type > busiest.group_type) return -1;
  // "When groups are overloaded, use the avg_load to ensure fairness between tasks."
  if (local.group_type == GroupTypeV61::Overloaded) {
    if (local.avg_load >= busiest.avg_load) return -1;
    sds.avg_load = sds.total_load * SCHED_CAPACITY_SCALE / sds.total_capacity;
    if (local.avg_load >= sds.avg_load) return -1;
    if (100 * busiest.avg_load <= imbalance_pct_v61(*env.sd) * local.avg_load) return -1;
  }
  const bool force = sds.prefer_sibling && local.group_type == GroupTypeV61::HasSpare &&
                     busiest.sum_nr_running > local.sum_nr_running + 1;
  if (!force && busiest.group_type != GroupTypeV61::Overloaded) {
    // Neither group is overloaded: only an idle CPU evens the idle CPUs.
    if (env.idle == CpuIdleType::NotIdle) return -1;
    if (busiest.group_weight > 1 && local.idle_cpus <= busiest.idle_cpus + 1) return -1;
    if (busiest.sum_h_nr_running == 1) return -1;
  }
  calculate_imbalance_v61(env, sds);
  return env.imbalance ? sds.busiest : -1;
}

int Cfs::find_busiest_queue_v61(LbEnv& env, const SchedGroup& group) {
  int busiest = -1;
  int64_t busiest_util = 0, busiest_load = 0;
  int busiest_nr = 0;
  // Every CPU has one capacity, so 6.1's load/capacity cross-products
  // compare loads.
  (group.cpus & env.cpus).for_each([&](int i) {
    const int nr = rq(i).cfs.h_nr_running;
    if (!nr) return;
    switch (env.migration_type) {
      case MigrationTypeV61::Load: {
        const int64_t load = cpu_load_v61(i);
        // check_cpu_capacity() is false: no RT or IRQ pressure in the model.
        if (nr == 1 && load > env.imbalance) return;
        if (load > busiest_load) {
          busiest_load = load;
          busiest = i;
        }
        break;
      }
      case MigrationTypeV61::Util: {
        const int64_t util = env.util_v61[static_cast<size_t>(i)];
        if (nr <= 1) return;
        if (busiest_util < util) {
          busiest_util = util;
          busiest = i;
        }
        break;
      }
      case MigrationTypeV61::Task:
        if (busiest_nr < nr) {
          busiest_nr = nr;
          busiest = i;
        }
        break;
    }
  });
  return busiest;
}

// detach_tasks() of 6.1: from the tail of cfs_tasks (the task that ran
// least recently), each task counted in the migration type's unit; a task
// too big for what is left is skipped less strictly after each failed pass
// (shr_bound()) and goes to the head.
int Cfs::detach_tasks_v61(LbEnv& env) {
  std::list<Task*>& tasks = rq(env.src_cpu).cfs_tasks;
  if (nr_running(env.src_cpu) <= 1) {
    env.flags &= ~LBF_ALL_PINNED;
    return 0;
  }
  if (env.imbalance <= 0) return 0;
  const unsigned shift = std::min(env.sd->nr_balance_failed, 63u);
  int detached = 0;
  while (!tasks.empty()) {
    // "We don't want to steal all, otherwise we may be treated likewise".
    // 6.1 counts rq->nr_running; the model queues only fair tasks (its
    // stopper is not a queued task), so that is cfs.h_nr_running. 4.0's
    // detach_tasks() has no such gate.
    if (env.idle != CpuIdleType::NotIdle && nr_running(env.src_cpu) <= 1) break;
    if (detach_loop_ends(env)) break;
    Task* p = tasks.back();
    env.task_hot = false;
    bool take = can_migrate_task(p, env);
    if (take) {
      switch (env.migration_type) {
        case MigrationTypeV61::Load: {
          const int64_t load = std::max<int64_t>(task_h_load(p), 1);
          if (feats_.LB_MIN && load < 16 && !env.sd->nr_balance_failed)
            take = false;
          else if ((load >> shift) > env.imbalance) {
            ++skipped_too_heavy_;
            take = false;
          } else {
            env.imbalance -= load;
          }
          break;
        }
        case MigrationTypeV61::Util: {
          const int64_t util = task_util_v61(p);
          if ((util >> shift) > env.imbalance) {
            ++skipped_too_heavy_;
            take = false;
          } else {
            env.imbalance -= util;
          }
          break;
        }
        case MigrationTypeV61::Task:
          env.imbalance--;
          break;
      }
    }
    if (!take) {
      tasks.splice(tasks.begin(), tasks, std::prev(tasks.end()));
      continue;
    }
    if (env.task_hot) ++lb_stats_[static_cast<size_t>(env.idle)].hot_gained;
    detach_task(p, env);
    detached++;
    // CONFIG_PREEMPTION: "NEWIDLE balancing is a source of latency"
    if (env.idle == CpuIdleType::NewlyIdle) break;
    if (env.imbalance <= 0) break;
  }
  return detached;
}

bool Cfs::need_active_balance_v61(const LbEnv& env) const {
  // imbalanced_active_balance(); the asym-packing, reduced-capacity and
  // misfit cases cannot arise in the model.
  return env.migration_type == MigrationTypeV61::Task &&
         env.sd->nr_balance_failed > static_cast<unsigned>(env.sd->cache_nice_tries + 2);
}

bool Cfs::should_we_balance_v61(LbEnv& env) {
  // "we bail out if we already have tasks or a wakeup pending"
  if (env.idle == CpuIdleType::NewlyIdle) return nr_running(env.dst_cpu) == 0;
  return should_we_balance(env);
}

int Cfs::load_balance_v61(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing) {
  auto& chain = core_.domains().of(this_cpu);
  SchedDomain& sd = chain[static_cast<size_t>(level)];
  const hw::CpuMask& balance_mask = sd.groups.front().cpus;  // group_balance_mask(sd->groups)
  LbEnv env;
  env.sd = &sd;
  env.sd_level = level;
  env.dst_cpu = this_cpu;
  // can_migrate_task() finds no other destination for a newidle pass.
  env.dst_grpmask = idle == CpuIdleType::NewlyIdle ? nullptr : &balance_mask;
  env.idle = idle;
  env.cpus = sd.span;
  const SchedDomain* sd_parent = static_cast<size_t>(level) + 1 < chain.size() ? &chain[static_cast<size_t>(level) + 1] : nullptr;
  int ld_moved = 0;
  bool active_balance = false;
  auto finish = [&](int moved) {
    const int64_t cost = balance_cost(env, moved);
    core_.charge(core_.this_cpu(), cost, CostPath::Balance);
    core_.note_balance(this_cpu, level, idle, moved > 0, moved, cost);
    last_balance_cost_ = cost;
    return moved;
  };
  // out_balanced / out_all_pinned / out_one_pinned
  enum class Out { Balanced, AllPinned, OnePinned };
  auto out = [&](Out how) {
    // "We reach balance although we may have faced some affinity
    // constraints. Clear the imbalance flag only if other tasks got a chance
    // to move and fix the imbalance" (f6cad8df6b30, which 4.0 lacks).
    if (how == Out::Balanced && sd_parent && !(env.flags & LBF_ALL_PINNED)) set_group_imbalance(*sd_parent, false);
    if (how != Out::OnePinned) sd.nr_balance_failed = 0;
    // "sched_balance_newidle() disregards balance intervals"
    if (idle != CpuIdleType::NewlyIdle &&
        (((env.flags & LBF_ALL_PINNED) && sd.balance_interval_ms < MAX_PINNED_INTERVAL) ||
         sd.balance_interval_ms < sd.max_interval_ms))
      sd.balance_interval_ms *= 2;
    return finish(0);
  };
  for (;;) {  // redo:
    if (!should_we_balance_v61(env)) {
      *continue_balancing = false;
      return out(Out::Balanced);
    }
    const int group = find_busiest_group_v61(env);
    if (group < 0) {
      ++lb_stats_[static_cast<size_t>(idle)].nobusyg;
      return out(Out::Balanced);
    }
    const int busiest = find_busiest_queue_v61(env, sd.groups[static_cast<size_t>(group)]);
    if (busiest < 0) {
      ++lb_stats_[static_cast<size_t>(idle)].nobusyq;
      return out(Out::Balanced);
    }
    env.src_cpu = busiest;
    ld_moved = 0;
    env.flags |= LBF_ALL_PINNED;
    if (nr_running(busiest) > 1) {
      env.loop_max = static_cast<unsigned>(
          std::min<int64_t>(core_.config().sysctl("sched_nr_migrate"), nr_running(busiest)));
      ld_moved = more_balance(env, busiest);
      // "We failed to reach balance because of affinity."
      if (sd_parent && (env.flags & LBF_SOME_PINNED) && env.imbalance > 0) set_group_imbalance(*sd_parent, true);
      if (env.flags & LBF_ALL_PINNED) {
        env.cpus.clear(busiest);
        if (!env.cpus.subset_of(balance_mask)) {  // !cpumask_subset(cpus, env.dst_grpmask)
          env.loop = 0;
          env.loop_break = sched_nr_migrate_break;
          continue;
        }
        // "Let the imbalance flag set so parent level can try to migrate them."
        return out(Out::AllPinned);
      }
    }
    break;
  }
  if (!ld_moved) {
    ++lb_stats_[static_cast<size_t>(idle)].failed;
    // "Increment the failure counter only on periodic balance."
    if (idle != CpuIdleType::NewlyIdle) sd.nr_balance_failed++;
    if (need_active_balance_v61(env)) {
      // "Don't kick the active_load_balance_cpu_stop, if the curr task on
      // busiest CPU can't be moved to this_cpu" (an idle CPU's idle task is
      // bound to it).
      Task* bcurr = core_.curr(env.src_cpu);
      if (!bcurr || !bcurr->cpus_allowed.test(this_cpu)) return out(Out::OnePinned);
      env.flags &= ~LBF_ALL_PINNED;
      if (!rq(env.src_cpu).active_balance) {
        rq(env.src_cpu).active_balance = true;
        active_balance = true;
        active_load_balance(env.src_cpu, this_cpu);
      }
    }
  } else {
    sd.nr_balance_failed = 0;
  }
  if (!active_balance || need_active_balance_v61(env)) sd.balance_interval_ms = sd.min_interval_ms;
  return finish(ld_moved);
}

void Cfs::update_newidle_stats_v61(SchedDomain& sd, unsigned success) {
  sd.newidle_call++;
  sd.newidle_success += success;
  if (sd.newidle_call >= 1024) {
    sd.newidle_ratio = sd.newidle_success;
    sd.newidle_call /= 2;
    sd.newidle_success /= 2;
  }
}

// Returns whether it decayed the domain's costliest pass: by ~1% a second
// from the last new maximum or decay (next_decay_max_lb_cost is 6.1's
// last_decay_max_lb_cost + HZ).
bool Cfs::update_newidle_cost_v61(SchedDomain& sd, int64_t cost, unsigned success) {
  if (cost) update_newidle_stats_v61(sd, success);
  const int64_t now = core_.jiffies();
  if (cost > sd.max_newidle_lb_cost) {
    sd.max_newidle_lb_cost = cost;
    sd.next_decay_max_lb_cost = now + core_.config().hz();
  } else if (now > sd.next_decay_max_lb_cost) {
    sd.max_newidle_lb_cost = sd.max_newidle_lb_cost * 253 / 256;
    sd.next_decay_max_lb_cost = now + core_.config().hz();
    return true;
  }
  return false;
}

// update_sd_pick_busiest() of 6.1, for the classes the model has.
bool Cfs::busier_v61(const GroupStatsV61& sgs, const GroupStatsV61& busiest) {
  if (sgs.group_type != busiest.group_type) return sgs.group_type > busiest.group_type;
  switch (sgs.group_type) {
    case GroupTypeV61::Overloaded:
    case GroupTypeV61::FullyBusy:  // avg_load is 0 for both: the first is kept
      return sgs.avg_load > busiest.avg_load;
    case GroupTypeV61::Imbalanced:
      // "Select the 1st imbalanced group as we don't have any way to choose
      // one more than another."
      return false;
    case GroupTypeV61::HasSpare:
      // "Select not overloaded group with lowest number of idle cpus and
      // highest number of running tasks."
      if (sgs.idle_cpus > busiest.idle_cpus) return false;
      return sgs.idle_cpus < busiest.idle_cpus || sgs.sum_nr_running > busiest.sum_nr_running;
  }
  return false;
}

std::string Cfs::check_invariants() const {
  std::ostringstream err;
  std::map<const Task*, int> seen;
  auto check_queue = [&](const CfsRq& cfs, const char* what, int c) {
    const size_t running = cfs.curr && cfs.curr->on_rq ? 1 : 0;
    if (cfs.timeline.size() + running != static_cast<size_t>(cfs.nr_running))
      err << what << " cpu" << c << " rbtree size mismatch; ";
    // The queue's runnable load is the sum of its queued entities' contribs
    // (kept by deltas: enqueue/dequeue_entity_load_avg(), update_entity_load_avg()).
    int64_t queued_load = running ? cfs.curr->load_avg_contrib : 0;
    for (const auto& [seq, se] : cfs.by_seq) queued_load += se->load_avg_contrib;
    if (queued_load != cfs.runnable_load_avg)
      err << what << " cpu" << c << " runnable_load_avg " << cfs.runnable_load_avg << " != queued " << queued_load << "; ";
    if (cfs.blocked_load_avg < 0) err << what << " cpu" << c << " negative blocked load; ";
    if (feats_.EEVDF_V66) {
      // avg_vruntime and avg_load, kept by deltas, against the tree.
      int64_t keys = 0, load = 0;
      for (const auto& [seq, se] : cfs.by_seq) {
        keys += entity_key(cfs, se) * se->load_weight;
        load += se->load_weight;
      }
      if (keys != cfs.avg_vruntime || load != cfs.avg_load)
        err << what << " cpu" << c << " avg_vruntime " << cfs.avg_vruntime << "/" << cfs.avg_load << " != tree "
            << keys << "/" << load << "; ";
    }
  };
  for (int c = 0; c < core_.nr_cpus(); ++c) {
    const Rq& r = rq(c);
    int count = 0;
    for (const Task* t : r.cfs_tasks) {
      if (seen[t]++) err << "task " << t->pid << " queued twice; ";
      if (t->cpu != c) err << "task " << t->pid << " on rq " << c << " but task_cpu " << t->cpu << "; ";
      ++count;
    }
    if (count != r.cfs.h_nr_running) err << "cpu" << c << " h_nr_running mismatch; ";
    check_queue(r.cfs, "root", c);
    int group_tasks = 0;
    for (const auto& [id, tg] : groups_) {
      const CfsRq& q = *tg->cfs_rq[static_cast<size_t>(c)];
      check_queue(q, "group", c);
      group_tasks += q.h_nr_running;
      if ((q.nr_running > 0) != tg->se[static_cast<size_t>(c)]->on_rq)
        err << "group " << id << " cpu" << c << " entity queued without tasks (or the reverse); ";
    }
    int root_tasks = 0;
    for (const Task* t : r.cfs_tasks)
      if (!t->autogroup) ++root_tasks;
    if (root_tasks + group_tasks != r.cfs.h_nr_running) err << "cpu" << c << " group task counts mismatch; ";
  }
  for (const auto& [id, tg] : groups_) {
    int64_t sum = 0;
    for (const auto& q : tg->cfs_rq) sum += q->tg_load_contrib;
    if (sum != tg->load_avg) err << "group " << id << " load_avg " << tg->load_avg << " != sum " << sum << "; ";
  }
  for (const Task* t : core_.all_tasks())
    if (t->on_rq && !seen.count(t)) err << "task " << t->pid << " on_rq but on no runqueue; ";
  return err.str();
}

}  // namespace

std::unique_ptr<SchedClass> make_cfs(SchedCore& core) { return std::make_unique<Cfs>(core); }

}  // namespace kernel

