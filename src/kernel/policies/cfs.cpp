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
// the other CPUs' runqueues it reads.
//
// Where it falls short: no cgroups (task_h_load == load_avg_contrib), no RT
// class, no NUMA balancing, no blocked-load accounting (only runnable load
// feeds decisions, as in 4.0's weighted_cpuload), no rt_avg capacity
// scaling, CPU capacity is static (smt_gain/2 for SMT threads). Active
// balance moves a queued task but not the preempted current one. Time spent
// in balancing and placement is charged from the cost model (per CPU
// scanned), not measured. SD_SERIALIZE never contends: a balance pass is instantaneous
// in simulated time and its cost is charged afterwards. The affinity-induced
// group_imbalanced state (LBF_SOME_PINNED -> sgc->imbalance) is not tracked,
// so pinned workloads balance as if unpinned groups were balanced.
#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>

#include "hw/machine.hpp"
#include "kernel/kernel.hpp"

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
bool update_runnable_avg(int64_t now, Task::SchedEntity& sa, bool runnable) {
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
    sa.avg_period += delta_w;
    d -= delta_w;
    const uint64_t periods = d / 1024;
    d %= 1024;
    sa.runnable_avg_sum = decay_load(sa.runnable_avg_sum, periods + 1);
    sa.avg_period = decay_load(sa.avg_period, periods + 1);
    const uint32_t contrib = compute_runnable_contrib(periods);
    if (runnable) sa.runnable_avg_sum += contrib;
    sa.avg_period += contrib;
  }
  if (runnable) sa.runnable_avg_sum += d;
  sa.avg_period += d;
  return decayed;
}

// __update_task_entity_contrib(); returns the change of load_avg_contrib.
int64_t update_contrib(Task::SchedEntity& se) {
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

bool entity_before(const Task* a, const Task* b) {
  return static_cast<int64_t>(a->se.vruntime - b->se.vruntime) < 0;
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

enum class GroupType { Other = 0, Imbalanced, Overloaded };

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

enum LbFlag : unsigned { LBF_ALL_PINNED = 1, LBF_NEED_BREAK = 2, LBF_DST_PINNED = 4, LBF_SOME_PINNED = 8 };

class Cfs final : public SchedClass {
 public:
  explicit Cfs(SchedCore& core);
  std::string name() const override { return "cfs"; }
  void task_fork(Task* p) override;
  int select_task_rq(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) override;
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
  void nohz_idle_balance(int cpu) override;
  void cpu_went_idle(int cpu) override;
  void cpu_exited_idle(int cpu) override;
  int nr_running(int cpu) const override { return rq(cpu).cfs.nr_running; }
  unsigned long cpu_load0(int cpu) const override { return static_cast<unsigned long>(rq(cpu).cpu_load[0]); }
  bool queue_remote_wakeup(int from, int to) const override {
    // ttwu_queue(): TTWU_QUEUE && !cpus_share_cache(smp_processor_id(), cpu)
    return core_.config().feat("TTWU_QUEUE") && !core_.domains().cpus_share_cache(from, to);
  }
  std::string check_invariants() const override;
  std::vector<std::pair<std::string, int64_t>> stats() const override {
    std::vector<std::pair<std::string, int64_t>> v = {{"active_balances", active_balances_},
                                                      {"nohz_kicks", nohz_kicks_}};
    if (feat("WAKE_IDLE_CPU") || feat("WAKE_IDLE_CPU_LITERAL")) {
      v.emplace_back("wake_idle_cpu_slow_paths", wake_idle_fallthroughs_);
      v.emplace_back("wake_idle_cpu_slow_path_busy", wake_idle_busy_results_);
      v.emplace_back("wake_idle_cpu_slow_path_inflight", wake_idle_inflight_results_);
    }
    if (feat("SD_WAKE_IDLE")) {
      v.emplace_back("sd_wake_idle_searches", sd_wake_idle_searches_);
      v.emplace_back("sd_wake_idle_found", sd_wake_idle_found_);
    }
    v.emplace_back("placements", placements_);
    v.emplace_back("placement_rq_reads", placement_scans_);
    return v;
  }

 private:
  struct CfsRq {
    std::set<std::pair<uint64_t, uint64_t>, TimelineOrder> timeline;  // (vruntime, seq)
    std::map<uint64_t, Task*> by_seq;
    Task* curr = nullptr;
    Task* next = nullptr;
    Task* last = nullptr;
    Task* skip = nullptr;
    uint64_t min_vruntime = static_cast<uint64_t>(-(1LL << 20));
    int64_t load_weight = 0;
    int nr_running = 0;
    int64_t runnable_load_avg = 0;
    std::list<Task*> cfs_tasks;  // most recently enqueued first
  };
  struct Rq {
    CfsRq cfs;
    int64_t cpu_load[CPU_LOAD_IDX_MAX] = {};
    int64_t last_load_update_tick = 0;
    int64_t avg_idle = 0;
    int64_t max_idle_balance_cost = 0;
    int64_t idle_stamp = 0;
    int64_t next_balance = 0;
    int64_t cpu_capacity = 1024;
    bool active_balance = false;
  };
  struct TaskExtra {
    uint64_t seq = 0;  // timeline tie-break: ties go right (later insertion)
    uint64_t key = 0;  // vruntime when inserted (it does not change while queued)
    bool in_tree = false;
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
  };

  Rq& rq(int cpu) { return rqs_[static_cast<size_t>(cpu)]; }
  const Rq& rq(int cpu) const { return rqs_[static_cast<size_t>(cpu)]; }
  TaskExtra& extra(Task* p) {
    if (static_cast<size_t>(p->pid) >= extra_.size()) extra_.resize(static_cast<size_t>(p->pid) + 64);
    return extra_[static_cast<size_t>(p->pid)];
  }
  int64_t now() const { return core_.now_ns(); }
  bool feat(const char* f) const { return core_.config().feat(f); }
  int version() const { return core_.config().preset().version; }

  // fair.c core
  uint64_t sched_period(int nr_running) const;
  uint64_t sched_slice(const CfsRq& cfs, const Task* se) const;
  uint64_t sched_vslice(const CfsRq& cfs, const Task* se) const;
  uint64_t calc_delta_fair(uint64_t delta, const Task* se) const;
  void update_min_vruntime(CfsRq& cfs);
  void update_curr(int cpu);
  void place_entity(CfsRq& cfs, Task* se, bool initial);
  void enqueue_entity(int cpu, Task* se, int flags);
  void dequeue_entity(int cpu, Task* se, int flags);
  void tree_insert(CfsRq& cfs, Task* se);
  void tree_erase(CfsRq& cfs, Task* se);
  Task* pick_first(const CfsRq& cfs) const;
  Task* pick_second(const CfsRq& cfs, const Task* after) const;
  Task* pick_next_entity(CfsRq& cfs);
  void set_next_entity(int cpu, Task* se);
  void clear_buddies(CfsRq& cfs, Task* se);
  int wakeup_preempt_entity(const Task* curr, const Task* se) const;
  void check_preempt_wakeup(int cpu, Task* p, int wake_flags);
  void check_preempt_tick(int cpu, Task* curr);
  void update_entity_load_avg(int cpu, Task* se, bool runnable_now);
  void update_cpu_load(int cpu, int64_t this_load, int64_t pending_updates);

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
  int find_idlest_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu);
  int wake_idle_slow_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu);
  int wake_idle(Task* p, int cpu);
  int select_task_rq_v43(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags);
  bool wake_wide_v43(Task* p) const;

  // balancing
  int load_balance(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing);
  bool should_we_balance(LbEnv& env);
  int find_busiest_group(LbEnv& env, SdLbStats& sds);
  void update_sd_lb_stats(LbEnv& env, SdLbStats& sds);
  void update_sg_lb_stats(LbEnv& env, const SchedGroup& group, int load_idx, bool local,
                          SgLbStats& sgs, bool* overload);
  int64_t sg_capacity_factor(const LbEnv& env, const SchedGroup& group) const;
  void calculate_imbalance(LbEnv& env, SdLbStats& sds);
  void fix_small_imbalance(LbEnv& env, SdLbStats& sds);
  int find_busiest_queue(LbEnv& env, const SchedGroup& group);
  bool can_migrate_task(Task* p, LbEnv& env);
  bool task_hot(Task* p, const LbEnv& env);
  int detach_tasks(LbEnv& env);
  void attach_tasks(LbEnv& env);
  void move_task(Task* p, int src, int dst);
  int idle_balance(int this_cpu);
  void rebalance_domains(int cpu, CpuIdleType idle);
  int64_t get_sd_balance_interval(const SchedDomain& sd, bool cpu_busy) const;
  void active_load_balance(int busiest_cpu, int target_cpu);
  int64_t balance_cost(const LbEnv& env, int moved) const;
  bool nohz_kick_needed(int cpu);

  SchedCore& core_;
  std::vector<Rq> rqs_;
  std::vector<TaskExtra> extra_;
  uint64_t next_seq_ = 0;
  bool rd_overload_ = false;
  hw::CpuMask nohz_idle_mask_;
  int64_t nohz_next_balance_ = 0;
  int64_t max_load_balance_interval_ = 1;
  uint64_t latency_, min_gran_, wakeup_gran_;
  unsigned nr_latency_ = 8;
  int64_t migration_cost_;
  int64_t active_balances_ = 0, nohz_kicks_ = 0, wake_idle_fallthroughs_ = 0, wake_idle_busy_results_ = 0,
          wake_idle_inflight_results_ = 0, sd_wake_idle_searches_ = 0, sd_wake_idle_found_ = 0;
  int64_t placement_scan_ns_ = 0;  // runqueue reads of the select_task_rq() in progress
  hw::CpuMask placement_read_;     // the runqueues it has read (now in cache)
  int64_t placement_scans_ = 0;    // runqueues read by placements, for stats()
  int64_t placements_ = 0;         // select_task_rq() calls, for stats()
  int64_t last_balance_cost_ = 0;
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
  }
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
  // update_max_interval(): HZ * num_online_cpus() / 10
  max_load_balance_interval_ = std::max<int64_t>(1, core.config().hz() * n / 10);
}

// ------------------------------------------------------------- basics ---

uint64_t Cfs::sched_period(int nr_running) const {
  uint64_t period = latency_;
  if (static_cast<unsigned>(nr_running) > nr_latency_) period = min_gran_ * static_cast<uint64_t>(nr_running);
  return period;
}

uint64_t Cfs::sched_slice(const CfsRq& cfs, const Task* se) const {
  const bool on_rq = se->on_rq;
  uint64_t slice = sched_period(cfs.nr_running + (on_rq ? 0 : 1));
  int64_t load = cfs.load_weight + (on_rq ? 0 : se->se.load_weight);
  return calc_delta(slice, se->se.load_weight, load);
}

uint64_t Cfs::calc_delta_fair(uint64_t delta, const Task* se) const {
  if (se->se.load_weight != NICE_0_LOAD) delta = calc_delta(delta, NICE_0_LOAD, se->se.load_weight);
  return delta;
}

uint64_t Cfs::sched_vslice(const CfsRq& cfs, const Task* se) const {
  return calc_delta_fair(sched_slice(cfs, se), se);
}

Task* Cfs::pick_first(const CfsRq& cfs) const {
  if (cfs.timeline.empty()) return nullptr;
  return cfs.by_seq.at(cfs.timeline.begin()->second);
}

Task* Cfs::pick_second(const CfsRq& cfs, const Task* after) const {
  const auto& x = extra_[static_cast<size_t>(after->pid)];
  auto it = cfs.timeline.find({x.key, x.seq});
  if (it == cfs.timeline.end()) return nullptr;
  ++it;
  if (it == cfs.timeline.end()) return nullptr;
  return cfs.by_seq.at(it->second);
}

void Cfs::tree_insert(CfsRq& cfs, Task* se) {
  auto& x = extra(se);
  x.seq = next_seq_++;
  x.key = se->se.vruntime;
  x.in_tree = true;
  cfs.timeline.insert({x.key, x.seq});
  cfs.by_seq[x.seq] = se;
}

void Cfs::tree_erase(CfsRq& cfs, Task* se) {
  auto& x = extra(se);
  if (!x.in_tree) return;
  cfs.timeline.erase({x.key, x.seq});
  cfs.by_seq.erase(x.seq);
  x.in_tree = false;
}

void Cfs::update_min_vruntime(CfsRq& cfs) {
  uint64_t vruntime = cfs.min_vruntime;
  if (cfs.curr) vruntime = cfs.curr->se.vruntime;
  if (Task* left = pick_first(cfs)) {
    if (!cfs.curr)
      vruntime = left->se.vruntime;
    else if (static_cast<int64_t>(left->se.vruntime - vruntime) < 0)
      vruntime = left->se.vruntime;
  }
  if (static_cast<int64_t>(vruntime - cfs.min_vruntime) > 0) cfs.min_vruntime = vruntime;
}

void Cfs::update_curr(int cpu) {
  CfsRq& cfs = rq(cpu).cfs;
  Task* curr = cfs.curr;
  if (!curr) return;
  const int64_t delta_exec = now() - curr->se.exec_start;
  if (delta_exec <= 0) return;
  curr->se.exec_start = now();
  curr->se.sum_exec_runtime += delta_exec;
  curr->se.vruntime += calc_delta_fair(static_cast<uint64_t>(delta_exec), curr);
  update_min_vruntime(cfs);
}

void Cfs::place_entity(CfsRq& cfs, Task* se, bool initial) {
  uint64_t vruntime = cfs.min_vruntime;
  if (initial && feat("START_DEBIT")) vruntime += sched_vslice(cfs, se);
  if (!initial) {
    uint64_t thresh = latency_;
    if (feat("GENTLE_FAIR_SLEEPERS")) thresh >>= 1;
    vruntime -= thresh;
  }
  if (static_cast<int64_t>(vruntime - se->se.vruntime) > 0) se->se.vruntime = vruntime;
}

void Cfs::update_entity_load_avg(int cpu, Task* se, bool runnable_now) {
  if (!update_runnable_avg(now(), se->se, runnable_now)) return;
  const int64_t d = update_contrib(se->se);
  if (se->on_rq) rq(cpu).cfs.runnable_load_avg += d;
}

void Cfs::enqueue_entity(int cpu, Task* se, int flags) {
  CfsRq& cfs = rq(cpu).cfs;
  // enqueue_entity(): a relative vruntime (migrating/waking) is made
  // absolute against the new runqueue.
  if (!(flags & ENQUEUE_WAKEUP) || (flags & ENQUEUE_WAKING)) se->se.vruntime += cfs.min_vruntime;
  update_curr(cpu);
  // enqueue_entity_load_avg(): bring the sleeping/migrated average up to
  // date (not runnable meanwhile) and add it to runnable_load_avg.
  update_runnable_avg(now(), se->se, false);
  update_contrib(se->se);
  cfs.runnable_load_avg += se->se.load_avg_contrib;
  cfs.load_weight += se->se.load_weight;
  cfs.cfs_tasks.push_front(se);
  cfs.nr_running++;
  if (flags & ENQUEUE_WAKEUP) place_entity(cfs, se, false);
  if (se != cfs.curr) tree_insert(cfs, se);
  if (cfs.nr_running >= 2) rd_overload_ = true;  // add_nr_running()
}

void Cfs::dequeue_entity(int cpu, Task* se, int flags) {
  CfsRq& cfs = rq(cpu).cfs;
  update_curr(cpu);
  // dequeue_entity_load_avg(): bring the contribution up to date (and the
  // runqueue sum with it) before removing it.
  update_runnable_avg(now(), se->se, true);
  cfs.runnable_load_avg += update_contrib(se->se);
  clear_buddies(cfs, se);
  if (se != cfs.curr) tree_erase(cfs, se);
  cfs.load_weight -= se->se.load_weight;
  cfs.cfs_tasks.remove(se);
  cfs.nr_running--;
  cfs.runnable_load_avg -= se->se.load_avg_contrib;
  if (!(flags & DEQUEUE_SLEEP)) se->se.vruntime -= cfs.min_vruntime;
  update_min_vruntime(cfs);
}

void Cfs::clear_buddies(CfsRq& cfs, Task* se) {
  if (cfs.last == se) cfs.last = nullptr;
  if (cfs.next == se) cfs.next = nullptr;
  if (cfs.skip == se) cfs.skip = nullptr;
}

int Cfs::wakeup_preempt_entity(const Task* curr, const Task* se) const {
  const int64_t vdiff = static_cast<int64_t>(curr->se.vruntime - se->se.vruntime);
  if (vdiff <= 0) return -1;
  const auto gran = static_cast<int64_t>(calc_delta_fair(wakeup_gran_, se));
  if (vdiff > gran) return 1;
  return 0;
}

Task* Cfs::pick_next_entity(CfsRq& cfs) {
  Task* left = pick_first(cfs);
  Task* se = left;
  if (cfs.skip == se) {
    Task* second = pick_second(cfs, se);
    if (second && wakeup_preempt_entity(second, left) < 1) se = second;
  }
  if (cfs.last && wakeup_preempt_entity(cfs.last, left) < 1) se = cfs.last;
  if (cfs.next && wakeup_preempt_entity(cfs.next, left) < 1) se = cfs.next;
  clear_buddies(cfs, se);
  return se;
}

void Cfs::set_next_entity(int cpu, Task* se) {
  CfsRq& cfs = rq(cpu).cfs;
  tree_erase(cfs, se);
  se->se.exec_start = now();
  cfs.curr = se;
  se->se.prev_sum_exec_runtime = se->se.sum_exec_runtime;
}

// ------------------------------------------------------ class hooks ---

void Cfs::task_fork(Task* p) {
  // sched_fork() + task_fork_fair(): the child starts on the parent's CPU
  // with the parent's vruntime, placed one vslice later (START_DEBIT).
  const int cpu = p->parent ? p->parent->cpu : p->cpu;
  p->cpu = cpu;
  p->se = Task::SchedEntity{};
  p->se.load_weight = nice_to_weight(p->nice);
  p->se.inv_weight = nice_to_wmult(p->nice);
  CfsRq& cfs = rq(cpu).cfs;
  Task* curr = cfs.curr;
  update_curr(cpu);
  if (curr) p->se.vruntime = curr->se.vruntime;
  place_entity(cfs, p, true);
  if (core_.config().sysctl("sched_child_runs_first") && curr && entity_before(curr, p)) {
    std::swap(curr->se.vruntime, p->se.vruntime);
    core_.resched_curr(cpu);
  }
  p->se.vruntime -= cfs.min_vruntime;
  // init_task_runnable_average(): a new task starts with its full weight.
  const uint64_t slice = sched_slice(cfs, p) >> 10;
  p->se.runnable_avg_sum = p->se.avg_period = slice;
  p->se.last_runnable_update = now();
  update_contrib(p->se);
  if (p->parent) {
    // dup_task_struct copies the wake_wide bookkeeping.
    p->wakee_flips = p->parent->wakee_flips;
    p->wakee_flip_decay_ts = p->parent->wakee_flip_decay_ts;
  }
}

void Cfs::migrate_task_rq(Task* p, int /*new_cpu*/) {
  // migrate_task_rq_fair(): "no longer consider this task hot".
  p->se.exec_start = 0;
}

void Cfs::enqueue_task(int cpu, Task* p, int flags) {
  int eflags = flags;
  if (flags & ENQUEUE_WAKEUP) eflags |= ENQUEUE_WAKING;  // task_waking_fair() made vruntime relative
  enqueue_entity(cpu, p, eflags);
  if (flags & ENQUEUE_WAKEUP) {
    // ttwu_do_wakeup(): sample the idle period for avg_idle.
    Rq& r = rq(cpu);
    if (r.idle_stamp) {
      const int64_t delta = now() - r.idle_stamp;
      if (version() >= 313) {
        const int64_t max = 2 * r.max_idle_balance_cost;
        r.avg_idle += (delta - r.avg_idle) / 8;
        if (r.avg_idle > max) r.avg_idle = max;
      } else {
        const int64_t max = 2 * migration_cost_;
        if (delta > max)
          r.avg_idle = max;
        else
          r.avg_idle += (delta - r.avg_idle) / 8;
      }
      r.idle_stamp = 0;
    }
  }
}

void Cfs::dequeue_task(int cpu, Task* p, int flags) { dequeue_entity(cpu, p, flags); }

void Cfs::yield_task(int cpu) {
  CfsRq& cfs = rq(cpu).cfs;
  Task* curr = cfs.curr;
  if (!curr || cfs.nr_running == 1) return;
  clear_buddies(cfs, curr);
  update_curr(cpu);
  cfs.skip = curr;
}

void Cfs::check_preempt_curr(int cpu, Task* p, int wake_flags) {
  Task* curr = core_.curr(cpu);
  if (!curr) {
    core_.resched_curr(cpu);  // the idle class is always preempted
    return;
  }
  check_preempt_wakeup(cpu, p, wake_flags);
}

void Cfs::check_preempt_wakeup(int cpu, Task* p, int wake_flags) {
  CfsRq& cfs = rq(cpu).cfs;
  Task* curr = cfs.curr;
  if (!curr || curr == p) return;
  const bool scale = static_cast<unsigned>(cfs.nr_running) >= nr_latency_;
  bool next_buddy_marked = false;
  if (feat("NEXT_BUDDY") && scale && !(wake_flags & WF_FORK)) {
    cfs.next = p;
    next_buddy_marked = true;
  }
  if (core_.need_resched(cpu)) return;  // test_tsk_need_resched(curr)
  if (!feat("WAKEUP_PREEMPTION")) return;
  update_curr(cpu);
  if (wakeup_preempt_entity(curr, p) == 1) {
    if (!next_buddy_marked) cfs.next = p;
    core_.resched_curr(cpu);
    if (feat("LAST_BUDDY") && scale) cfs.last = curr;
  }
}

Task* Cfs::pick_next_task(int cpu, Task* prev, bool may_balance) {
  CfsRq& cfs = rq(cpu).cfs;
  (void)prev;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (cfs.nr_running > 0) {
      Task* se = pick_next_entity(cfs);
      set_next_entity(cpu, se);
      return se;
    }
    if (!may_balance || attempt > 0) break;
    // pick_next_task_fair() "idle:" -> idle_balance() (v4.0 calls it here).
    if (idle_balance(cpu) <= 0) break;
  }
  return nullptr;
}

void Cfs::put_prev_task(int cpu, Task* prev) {
  CfsRq& cfs = rq(cpu).cfs;
  if (prev->on_rq && cfs.curr == prev) {
    update_curr(cpu);
    tree_insert(cfs, prev);
    update_entity_load_avg(cpu, prev, true);
  }
  if (cfs.curr == prev) cfs.curr = nullptr;
}

void Cfs::check_preempt_tick(int cpu, Task* curr) {
  CfsRq& cfs = rq(cpu).cfs;
  const uint64_t ideal_runtime = sched_slice(cfs, curr);
  const auto delta_exec = static_cast<uint64_t>(curr->se.sum_exec_runtime - curr->se.prev_sum_exec_runtime);
  if (delta_exec > ideal_runtime) {
    core_.resched_curr(cpu);
    clear_buddies(cfs, curr);
    return;
  }
  if (delta_exec < min_gran_) return;
  Task* se = pick_first(cfs);
  if (!se) return;
  const int64_t delta = static_cast<int64_t>(curr->se.vruntime - se->se.vruntime);
  if (delta < 0) return;
  if (static_cast<uint64_t>(delta) > ideal_runtime) core_.resched_curr(cpu);
}

void Cfs::task_tick(int cpu, Task* curr) {
  // scheduler_tick(): task_tick_fair -> entity_tick, then update_cpu_load_active.
  update_curr(cpu);
  update_entity_load_avg(cpu, curr, true);
  if (rq(cpu).cfs.nr_running > 1) check_preempt_tick(cpu, curr);
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
  if (type == 0 || !feat("LB_BIAS")) return total;
  return std::min(rq(cpu).cpu_load[type - 1], total);
}
int64_t Cfs::target_load(int cpu, int type) const {
  const int64_t total = weighted_cpuload(cpu);
  if (type == 0 || !feat("LB_BIAS")) return total;
  return std::max(rq(cpu).cpu_load[type - 1], total);
}
int64_t Cfs::cpu_avg_load_per_task(int cpu) const {
  const int nr = rq(cpu).cfs.nr_running;
  return nr ? weighted_cpuload(cpu) / nr : 0;
}

void Cfs::record_wakee(Task* p) {
  Task* current = core_.current();
  if (!current) return;  // woken from an interrupt on an idle CPU
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
  if (feat("WAKE_WIDE") && !feat("WAKE_WIDE_V2") && wake_wide(p)) return false;
  const int idx = sd.wake_idx;
  const int this_cpu = core_.this_cpu();
  const int prev_cpu = p->cpu;
  read_rq(prev_cpu);
  int64_t load = source_load(prev_cpu, idx);
  int64_t this_load = target_load(this_cpu, idx);
  Task* current = core_.current();
  if (sync && current) {
    // effective_load() without cgroups is the weight itself.
    this_load -= current->se.load_weight;
  }
  const int64_t weight = p->se.load_weight;
  int64_t this_eff_load = 100 * capacity_of(prev_cpu);
  int64_t prev_eff_load = (100 + (sd.imbalance_pct - 100) / 2) * capacity_of(this_cpu);
  if (this_load > 0) {
    this_eff_load *= this_load + weight;
    prev_eff_load *= load;
  }
  bool balanced = this_eff_load <= prev_eff_load;
  if (version() < 314) {
    // 3.10: sync shortcut and the per-task-load clause.
    if (this_load <= 0) balanced = true;
    if (sync && balanced) {
      core_.note_wake_affine(true);
      return true;
    }
    const int64_t tl_per_task = cpu_avg_load_per_task(this_cpu);
    if (balanced || (this_load <= load && this_load + target_load(prev_cpu, idx) <= tl_per_task)) {
      core_.note_wake_affine(true);
      return true;
    }
    core_.note_wake_affine(false);
    return false;
  }
  core_.note_wake_affine(balanced);
  return balanced;
}

int Cfs::select_idle_sibling(Task* p, int target) {
  int i = p->cpu;
  read_rq(target);
  if (core_.idle_cpu(target)) return target;
  // "If the prevous cpu is cache affine and idle, don't be stupid."
  if (i != target && core_.domains().cpus_share_cache(i, target)) {
    read_rq(i);
    if (core_.idle_cpu(i)) return i;
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
      if (all_idle) return (sg.cpus & p->cpus_allowed).first();
    }
  }
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
      const int64_t load = weighted_cpuload(i);
      if (load < min_load || (load == min_load && i == this_cpu)) {
        min_load = load;
        least_loaded_cpu = i;
      }
    }
  });
  return shallowest_idle_cpu != -1 ? shallowest_idle_cpu : least_loaded_cpu;
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
  const int cpu = select_task_rq_fair(p, prev_cpu, sd_flag, wake_flags);
  if (placement_scan_ns_ > 0) core_.charge(core_.this_cpu(), placement_scan_ns_);
  return cpu;
}

int Cfs::select_task_rq_fair(Task* p, int prev_cpu, uint32_t sd_flag, int wake_flags) {
  const int cpu = core_.this_cpu();
  if (sd_flag & SD_BALANCE_WAKE) {
    // task_waking_fair(): vruntime relative to the old queue; record_wakee().
    p->se.vruntime -= rq(p->cpu).cfs.min_vruntime;
    if (version() >= 312) record_wakee(p);
  }
  if (p->cpus_allowed.weight() == 1) return p->cpus_allowed.first();
  if (feat("WAKE_WIDE_V2")) return select_task_rq_v43(p, prev_cpu, sd_flag, wake_flags);
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
  if (affine_sd && cpu != prev_cpu && wake_affine(*affine_sd, p, sync)) prev_cpu = cpu;
  if (sd_flag & SD_BALANCE_WAKE) {
    // v4.0: every wakeup ends in select_idle_sibling(); 3.10 only when an
    // affine domain was found, otherwise the find_idlest path below.
    if (version() >= 400 || affine_sd) {
      new_cpu = select_idle_sibling(p, prev_cpu);
      if (feat("WAKE_IDLE_CPU_LITERAL") && !core_.idle_cpu(new_cpu)) {
        // The patch as its diff reads: `if (idle_cpu(new_cpu)) goto unlock;`
        // and on into `while (sd)`, with sd as the loop above left it.
        if (sd_level < 0) return new_cpu;
        ++wake_idle_fallthroughs_;
        return wake_idle_slow_path(p, cpu, sd_level, sd_flag, new_cpu);
      }
      if (feat("SD_WAKE_IDLE")) return wake_idle(p, new_cpu);
      if (!feat("WAKE_IDLE_CPU") || core_.idle_cpu(new_cpu)) return new_cpu;
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
// wake_list (TTWU_QUEUE, across LLCs) or just chosen for one earlier in the
// same batch is not idle yet carries no load, so the search can pick it
// again. Counted, because that is where the patch stacks wakees.
int Cfs::wake_idle_slow_path(Task* p, int this_cpu, int sd_level, uint32_t sd_flag, int new_cpu) {
  const int chosen = find_idlest_path(p, this_cpu, sd_level, sd_flag, new_cpu);
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
  if (core_.idle_cpu(cpu) || rq(cpu).cfs.nr_running > 1) return cpu;
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
  const bool wake_path = feat("WAKE_IDLE_CPU") && (sd_flag & SD_BALANCE_WAKE);
  while (sd_level >= 0) {
    auto& cchain = core_.domains().of(this_cpu);
    if (sd_level >= static_cast<int>(cchain.size())) break;
    const SchedDomain& sd = cchain[static_cast<size_t>(sd_level)];
    // With WAKE_IDLE_CPU every balancing level takes part (see above).
    if (!(sd.flags & sd_flag) && !(wake_path && (sd.flags & SD_LOAD_BALANCE))) {
      --sd_level;
      continue;
    }
    const int group = find_idlest_group(sd, p, this_cpu, sd_flag);
    if (group < 0) {
      --sd_level;
      continue;
    }
    new_cpu = find_idlest_cpu(sd.groups[static_cast<size_t>(group)], p, this_cpu);
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
  if (sd_flag & SD_BALANCE_WAKE) want_affine = !wake_wide_v43(p) && p->cpus_allowed.test(cpu);
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
    if (cpu != prev_cpu && wake_affine(*affine_sd, p, sync)) new_cpu = cpu;
  }
  if (sd_level < 0) {
    if (sd_flag & SD_BALANCE_WAKE) {
      new_cpu = select_idle_sibling(p, new_cpu);
      if (!feat("WAKE_IDLE_CPU") || core_.idle_cpu(new_cpu)) return new_cpu;
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

// ---------------------------------------------------------- balancing ---

int64_t Cfs::balance_cost(const LbEnv& env, int moved) const {
  const auto& c = core_.machine().costs();
  return c.lb_base + env.cpus_scanned_local * c.lb_per_cpu_local +
         env.cpus_scanned_remote * c.lb_per_cpu_remote + moved * c.lb_move_task;
}

bool Cfs::task_hot(Task* p, const LbEnv& env) {
  const CfsRq& src = rq(env.src_cpu).cfs;
  if (feat("CACHE_HOT_BUDDY") && rq(env.dst_cpu).cfs.nr_running && (p == src.next || p == src.last))
    return true;
  if (migration_cost_ == 0) return false;
  return now() - p->se.exec_start < migration_cost_;
}

bool Cfs::can_migrate_task(Task* p, LbEnv& env) {
  if (!p->cpus_allowed.test(env.dst_cpu)) {
    env.flags |= LBF_SOME_PINNED;
    if (!env.dst_grpmask || (env.flags & LBF_DST_PINNED)) return false;
    const hw::CpuMask cand = *env.dst_grpmask & env.cpus & p->cpus_allowed;
    if (!cand.empty()) {
      env.flags |= LBF_DST_PINNED;
      env.new_dst_cpu = cand.first();
    }
    return false;
  }
  env.flags &= ~LBF_ALL_PINNED;
  if (p->on_cpu || core_.curr(env.src_cpu) == p) return false;
  const bool hot = task_hot(p, env);
  return !hot || env.sd->nr_balance_failed > static_cast<unsigned>(env.sd->cache_nice_tries);
}

void Cfs::move_task(Task* p, int src, int dst) {
  // detach_task() + attach_task(): dequeue (vruntime made relative),
  // set_task_cpu(), enqueue on dst, check preemption there.
  dequeue_entity(src, p, 0);
  core_.set_task_cpu(p, dst);
  enqueue_entity(dst, p, 0);
  check_preempt_curr(dst, p, 0);
}

int Cfs::detach_tasks(LbEnv& env) {
  if (env.imbalance <= 0) return 0;
  std::list<Task*>& tasks = rq(env.src_cpu).cfs.cfs_tasks;
  int detached = 0;
  // Walk the list head first; skipped tasks rotate to the tail.
  size_t budget = tasks.size();
  while (!tasks.empty() && budget-- > 0) {
    Task* p = tasks.front();
    env.loop++;
    if (env.loop > env.loop_max) break;
    if (env.loop > env.loop_break) {
      env.loop_break += sched_nr_migrate_break;
      env.flags |= LBF_NEED_BREAK;
      break;
    }
    if (!can_migrate_task(p, env)) {
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    const int64_t load = p->se.load_avg_contrib;
    if (feat("LB_MIN") && load < 16 && !env.sd->nr_balance_failed) {
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    if (load / 2 > env.imbalance) {
      tasks.splice(tasks.end(), tasks, tasks.begin());
      continue;
    }
    dequeue_entity(env.src_cpu, p, 0);
    env.tasks.push_back(p);
    detached++;
    env.imbalance -= load;
    // Kernels of this era ship CONFIG_PREEMPT_VOLUNTARY, not CONFIG_PREEMPT:
    // newidle balancing may move more than one task.
    if (env.imbalance <= 0) break;
  }
  return detached;
}

void Cfs::attach_tasks(LbEnv& env) {
  for (Task* p : env.tasks) {
    core_.set_task_cpu(p, env.dst_cpu);
    enqueue_entity(env.dst_cpu, p, 0);
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

void Cfs::update_sg_lb_stats(LbEnv& env, const SchedGroup& group, int load_idx, bool local,
                             SgLbStats& sgs, bool* overload) {
  sgs = SgLbStats{};
  const int dst_node = core_.machine().topo().cpu(env.dst_cpu).socket;
  (group.cpus & env.cpus).for_each([&](int i) {
    if (core_.machine().topo().cpu(i).socket == dst_node)
      env.cpus_scanned_local++;
    else
      env.cpus_scanned_remote++;
    const int64_t load = local ? target_load(i, load_idx) : source_load(i, load_idx);
    sgs.group_load += load;
    sgs.sum_nr_running += rq(i).cfs.nr_running;
    if (rq(i).cfs.nr_running > 1) *overload = true;
    sgs.sum_weighted_load += weighted_cpuload(i);
    if (core_.idle_cpu(i)) sgs.idle_cpus++;
  });
  sgs.group_capacity = group.capacity;
  sgs.avg_load = sgs.group_load * SCHED_CAPACITY_SCALE / sgs.group_capacity;
  if (sgs.sum_nr_running) sgs.load_per_task = sgs.sum_weighted_load / sgs.sum_nr_running;
  sgs.group_weight = group.cpus.weight();
  sgs.group_capacity_factor = sg_capacity_factor(env, group);
  sgs.group_type = sgs.sum_nr_running > sgs.group_capacity_factor ? GroupType::Overloaded : GroupType::Other;
  sgs.group_has_free_capacity = sgs.group_capacity_factor > sgs.sum_nr_running;
}

void Cfs::update_sd_lb_stats(LbEnv& env, SdLbStats& sds) {
  auto& chain = core_.domains().of(env.dst_cpu);
  const SchedDomain* child = env.sd_level > 0 ? &chain[static_cast<size_t>(env.sd_level - 1)] : nullptr;
  const bool prefer_sibling = child && (child->flags & SD_PREFER_SIBLING);
  const int load_idx = env.idle == CpuIdleType::NotIdle     ? env.sd->busy_idx
                       : env.idle == CpuIdleType::NewlyIdle ? env.sd->newidle_idx
                                                            : env.sd->idle_idx;
  bool overload = false;
  for (size_t g = 0; g < env.sd->groups.size(); ++g) {
    const SchedGroup& sg = env.sd->groups[g];
    const bool local = sg.cpus.test(env.dst_cpu);
    SgLbStats tmp;
    SgLbStats& sgs = local ? sds.local_stat : tmp;
    if (local) sds.local = static_cast<int>(g);
    update_sg_lb_stats(env, sg, load_idx, local, sgs, &overload);
    if (!local) {
      if (prefer_sibling && sds.local >= 0 && sds.local_stat.group_has_free_capacity) {
        sgs.group_capacity_factor = std::min<int64_t>(sgs.group_capacity_factor, 1);
        sgs.group_type =
            sgs.sum_nr_running > sgs.group_capacity_factor ? GroupType::Overloaded : GroupType::Other;
      }
      // update_sd_pick_busiest()
      const auto& b = sds.busiest_stat;
      bool pick = false;
      if (sgs.group_type > b.group_type)
        pick = true;
      else if (sgs.group_type == b.group_type && sgs.avg_load > b.avg_load)
        pick = true;
      if (pick) {
        sds.busiest = static_cast<int>(g);
        sds.busiest_stat = sgs;
      }
    }
    sds.total_load += sgs.group_load;
    sds.total_capacity += sgs.group_capacity;
  }
  if (env.sd_level == static_cast<int>(chain.size()) - 1) rd_overload_ = overload;
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
    if (capacity_factor && rq(i).cfs.nr_running == 1 && wl > env.imbalance) return;
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

// load_balance(): one pass at one domain level for this_cpu. Returns the
// number of tasks moved; charges its cost to the CPU executing it.
int Cfs::load_balance(int this_cpu, int level, CpuIdleType idle, bool* continue_balancing) {
  auto& chain = core_.domains().of(this_cpu);
  SchedDomain& sd = chain[static_cast<size_t>(level)];
  LbEnv env;
  env.sd = &sd;
  env.sd_level = level;
  env.dst_cpu = this_cpu;
  env.dst_grpmask = idle == CpuIdleType::NewlyIdle ? nullptr : &sd.groups.front().cpus;
  env.idle = idle;
  env.cpus = core_.machine().topo().all();
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
      balanced = true;
      break;
    }
    const int busiest = find_busiest_queue(env, sd.groups[static_cast<size_t>(group)]);
    if (busiest < 0) {
      balanced = true;
      break;
    }
    ld_moved = 0;
    if (rq(busiest).cfs.nr_running > 1) {
      env.flags |= LBF_ALL_PINNED;
      env.src_cpu = busiest;
      env.loop_max = static_cast<unsigned>(
          std::min<int64_t>(core_.config().sysctl("sched_nr_migrate"), rq(busiest).cfs.nr_running));
      bool redo = false;
      for (;;) {  // more_balance:
        core_.lock_rq(busiest, core_.this_cpu(), core_.machine().costs().rq_lock_hold);
        const int cur = detach_tasks(env);
        if (cur) {
          attach_tasks(env);
          ld_moved += cur;
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
        break;
      }
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
      if (idle != CpuIdleType::NewlyIdle) sd.nr_balance_failed++;
      if (sd.nr_balance_failed > static_cast<unsigned>(sd.cache_nice_tries + 2)) {
        Task* bcurr = core_.curr(busiest);
        if (bcurr && !bcurr->cpus_allowed.test(this_cpu)) {
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
  if (balanced || all_pinned || one_pinned) {
    if (!one_pinned) sd.nr_balance_failed = 0;
    if (((env.flags & LBF_ALL_PINNED) && sd.balance_interval_ms < MAX_PINNED_INTERVAL) ||
        sd.balance_interval_ms < sd.max_interval_ms)
      sd.balance_interval_ms *= 2;
    ld_moved = 0;
  }
  const int64_t cost = balance_cost(env, ld_moved);
  core_.charge(core_.this_cpu(), cost);
  core_.note_balance(this_cpu, level, idle, ld_moved > 0, ld_moved, cost);
  last_balance_cost_ = cost;
  return ld_moved;
}

// active_load_balance_cpu_stop(): the busiest CPU's stopper pushes one
// queued task to the CPU that asked. Modelled at the request time.
void Cfs::active_load_balance(int busiest_cpu, int target_cpu) {
  Rq& b = rq(busiest_cpu);
  b.active_balance = false;
  if (b.cfs.nr_running <= 1) return;
  const int level = core_.domains().level_spanning(target_cpu, busiest_cpu);
  if (level < 0) return;
  LbEnv env;
  env.sd = &core_.domains().of(target_cpu)[static_cast<size_t>(level)];
  env.sd_level = level;
  env.dst_cpu = target_cpu;
  env.src_cpu = busiest_cpu;
  env.idle = CpuIdleType::Idle;
  env.cpus = core_.machine().topo().all();
  for (Task* p : b.cfs.cfs_tasks) {
    if (!can_migrate_task(p, env)) continue;
    move_task(p, busiest_cpu, target_cpu);
    ++active_balances_;
    core_.charge(core_.this_cpu(), core_.machine().costs().lb_move_task);
    break;
  }
}

int64_t Cfs::get_sd_balance_interval(const SchedDomain& sd, bool cpu_busy) const {
  int64_t interval = sd.balance_interval_ms;
  if (cpu_busy) interval *= sd.busy_factor;
  // msecs_to_jiffies()
  interval = (interval * core_.config().hz() + 999) / 1000;
  return std::clamp<int64_t>(interval, 1, max_load_balance_interval_);
}

int Cfs::idle_balance(int this_cpu) {
  Rq& r = rq(this_cpu);
  const int64_t jiffies = core_.jiffies();
  int64_t next_balance = jiffies + core_.config().hz();
  int pulled_task = 0;
  int64_t curr_cost = 0;
  auto& chain = core_.domains().of(this_cpu);
  r.idle_stamp = now();
  const bool newidle_cost = feat("NEWIDLE_COST");
  const bool gated = r.avg_idle < migration_cost_ || (version() >= 317 && !rd_overload_);
  if (gated || chain.empty()) {
    if (!chain.empty())
      next_balance = std::min(next_balance,
                              chain.front().last_balance + get_sd_balance_interval(chain.front(), false));
  } else {
    for (size_t l = 0; l < chain.size(); ++l) {
      SchedDomain& sd = chain[l];
      bool continue_balancing = true;
      if (!(sd.flags & SD_LOAD_BALANCE)) continue;
      if (newidle_cost && r.avg_idle < curr_cost + sd.max_newidle_lb_cost) {
        next_balance = std::min(next_balance, sd.last_balance + get_sd_balance_interval(sd, false));
        break;
      }
      if (sd.flags & SD_BALANCE_NEWIDLE) {
        pulled_task = load_balance(this_cpu, static_cast<int>(l), CpuIdleType::NewlyIdle, &continue_balancing);
        const int64_t domain_cost = last_balance_cost_;
        if (domain_cost > sd.max_newidle_lb_cost) sd.max_newidle_lb_cost = domain_cost;
        curr_cost += domain_cost;
      }
      next_balance = std::min(next_balance, sd.last_balance + get_sd_balance_interval(sd, false));
      if (pulled_task || r.cfs.nr_running > 0) break;
    }
    if (curr_cost > r.max_idle_balance_cost) r.max_idle_balance_cost = curr_cost;
    if (r.cfs.nr_running && !pulled_task) pulled_task = 1;
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
  auto& chain = core_.domains().of(cpu);
  for (size_t l = 0; l < chain.size(); ++l) {
    SchedDomain& sd = chain[l];
    if (feat("NEWIDLE_COST") && jiffies > sd.next_decay_max_lb_cost) {
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
  // nohz_balance_exit_idle(): we are busy again.
  nohz_idle_mask_.clear(cpu);
  if (nohz_idle_mask_.empty()) return false;
  if (core_.jiffies() < nohz_next_balance_) return false;
  if (rq(cpu).cfs.nr_running >= 2) return true;
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

void Cfs::trigger_load_balance(int cpu) {
  if (core_.domains().of(cpu).empty()) return;
  if (core_.jiffies() >= rq(cpu).next_balance)
    rebalance_domains(cpu, core_.idle_cpu(cpu) ? CpuIdleType::Idle : CpuIdleType::NotIdle);
  const bool kick = nohz_kick_needed(cpu);
  if (kick) {
    // nohz_balancer_kick(): the first idle CPU balances for all idle CPUs.
    ++nohz_next_balance_;  // nohz.next_balance++
    int ilb = -1;
    nohz_idle_mask_.for_each([&](int c) {
      if (ilb < 0 && core_.idle_cpu(c)) ilb = c;
    });
    if (ilb >= 0) {
      ++nohz_kicks_;
      core_.kick_idle_balance(ilb);
    }
  }
}

void Cfs::nohz_idle_balance(int this_cpu) {
  int64_t next = core_.jiffies() + 60 * core_.config().hz();
  const hw::CpuMask mask = nohz_idle_mask_;
  mask.for_each([&](int balance_cpu) {
    if (balance_cpu == this_cpu || !core_.idle_cpu(balance_cpu)) return;
    if (core_.curr(this_cpu) || rq(this_cpu).cfs.nr_running) return;  // need_resched(): stop
    Rq& r = rq(balance_cpu);
    if (core_.jiffies() >= r.next_balance) {
      // update_idle_cpu_load()
      const int64_t pending = core_.jiffies() - r.last_load_update_tick;
      if (weighted_cpuload(balance_cpu) == 0 && pending > 0) update_cpu_load(balance_cpu, 0, pending);
      rebalance_domains(balance_cpu, CpuIdleType::Idle);
    }
    next = std::min(next, r.next_balance);
  });
  if (rq(this_cpu).cfs.nr_running == 0 && core_.jiffies() >= rq(this_cpu).next_balance)
    rebalance_domains(this_cpu, CpuIdleType::Idle);
  nohz_next_balance_ = std::min(next, rq(this_cpu).next_balance);
}

std::string Cfs::check_invariants() const {
  std::ostringstream err;
  std::map<const Task*, int> seen;
  for (int c = 0; c < core_.nr_cpus(); ++c) {
    const CfsRq& cfs = rq(c).cfs;
    int count = 0;
    for (const Task* t : cfs.cfs_tasks) {
      if (seen[t]++) err << "task " << t->pid << " queued twice; ";
      if (t->cpu != c) err << "task " << t->pid << " on rq " << c << " but task_cpu " << t->cpu << "; ";
      ++count;
    }
    if (count != cfs.nr_running) err << "cpu" << c << " nr_running mismatch; ";
    if (cfs.timeline.size() + (cfs.curr ? 1 : 0) != static_cast<size_t>(cfs.nr_running))
      err << "cpu" << c << " rbtree size mismatch; ";
  }
  for (const Task* t : core_.all_tasks())
    if (t->on_rq && !seen.count(t)) err << "task " << t->pid << " on_rq but on no runqueue; ";
  return err.str();
}

}  // namespace

std::unique_ptr<SchedClass> make_cfs(SchedCore& core) { return std::make_unique<Cfs>(core); }

}  // namespace kernel
