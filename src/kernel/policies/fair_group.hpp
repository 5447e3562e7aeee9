// The arithmetic of CFS group scheduling, kernel/sched/fair.c (v4.0): how a
// task group's weight (shares) is split over its per-CPU entities, and how
// much load such an entity shows its CPU. Kept as plain functions of the
// fields they read so that they can be checked against fair.c's own worked
// examples.
#pragma once
#include <algorithm>
#include <cstdint>

namespace kernel::fair_group {

constexpr int64_t NICE_0_LOAD = 1024;
constexpr int NICE_0_SHIFT = 10;
constexpr int64_t MIN_SHARES = 2;

// calc_tg_weight(): the group's load as one CPU's queue sees it: the
// published tg->load_avg with the queue's own (possibly stale) part replaced
// by its current weight.
inline int64_t tg_weight(int64_t tg_load_avg, int64_t queue_tg_load_contrib, int64_t queue_weight) {
  return tg_load_avg - queue_tg_load_contrib + queue_weight;
}

// calc_cfs_shares(): the group entity's weight on one CPU, the group's
// shares in proportion to the queue's weight, in [MIN_SHARES, shares].
inline int64_t cfs_shares(int64_t tg_shares, int64_t tg_weight_seen, int64_t queue_weight) {
  int64_t shares = tg_shares * queue_weight;
  if (tg_weight_seen) shares /= tg_weight_seen;
  return std::clamp(shares, MIN_SHARES, tg_shares);
}

// effective_load() for a group directly below the root: the change of the
// group entity's weight on a CPU if wl is added to the group's queue there
// and wg to the group's total.
inline int64_t effective_load(int64_t tg_shares, int64_t tg_weight_seen, int64_t queue_weight,
                              int64_t entity_weight, int64_t wl, int64_t wg) {
  const int64_t W = wg + tg_weight_seen;
  const int64_t w = queue_weight + wl;
  int64_t shares = (W > 0 && w < W) ? w * tg_shares / W : tg_shares;
  if (shares < MIN_SHARES) shares = MIN_SHARES;
  return shares - entity_weight;
}

// __update_group_entity_contrib(): the load a group entity adds to its CPU,
// its queue's share of the group's load_avg times the shares, scaled by the
// group's runnable fraction while the group uses less than one CPU.
inline int64_t group_entity_contrib(int64_t queue_tg_load_contrib, int64_t tg_shares, int64_t tg_load_avg,
                                    int64_t tg_runnable_avg) {
  int64_t contrib = queue_tg_load_contrib * tg_shares / (tg_load_avg + 1);
  if (tg_runnable_avg < NICE_0_LOAD) {
    contrib *= tg_runnable_avg;
    contrib >>= NICE_0_SHIFT;
  }
  return contrib;
}

// GROUP_RUNNABLE_WEIGHT, a what-if from v4.15: calc_group_runnable() in
// kernel/sched/fair.c (Peter Zijlstra's "A bit of a cgroup/PELT overhaul":
// 1ea6c46a23f1 "sched/fair: Propagate an effective runnable_load_avg", and
// 2c8e4dce7963 for the max()es) notes that a group entity's weight
// "includes blocked load and does not represent the runnable weight", and
// counts only the runnable part in its parent's runnable load:
//   runnable = contrib * max(runnable_load_avg, load.weight)
//                      / max(runnable_load_avg + blocked_load_avg, load.weight)
// (the max()es take the instant weight while the averages lag, its (8);
// v4.15 has runnable_weight where this has load.weight, the same thing in 4.0,
// whose queues hold only runnable entities). v4.15 also clamps the result to
// [MIN_SHARES, shares]; the ratio here never exceeds 1, and an empty queue's
// entity, which would get MIN_SHARES, is not queued.
inline int64_t runnable_part(int64_t contrib, int64_t queue_runnable_load, int64_t queue_blocked_load,
                             int64_t queue_weight) {
  const int64_t load = std::max(queue_runnable_load + queue_blocked_load, queue_weight);
  if (load == 0) return 0;
  return contrib * std::max(queue_runnable_load, queue_weight) / load;
}

}  // namespace kernel::fair_group
