// Group scheduling for autogroup (CONFIG_FAIR_GROUP_SCHED +
// CONFIG_SCHED_AUTOGROUP, Linux 4.0): the share arithmetic against fair.c's
// worked examples, and what a scheduler developer would check on a run:
// sessions share a CPU as groups, a fresh group's load appears only after
// its first PELT period, the group's totals stay consistent.
#include <gtest/gtest.h>

#include "kernel/policies/fair_group.hpp"
#include "workload/bench/bench.hpp"
#include "../support/sim_fixture.hpp"

using kernel::Co;
using kernel::Proc;
using kernel::Program;
namespace fg = kernel::fair_group;

namespace {
struct GroupSim {
  hw::Machine machine;
  kernel::Kernel k;
  GroupSim(const std::string& machine_name, bool autogroup, uint64_t seed = 1, bool fair_group_sched = false,
           const std::string& features = "")
      : machine(hw::load_machine(machine_name)), k(machine, config(autogroup, fair_group_sched, features), seed) {}
  static kernel::KernelConfig config(bool autogroup, bool fair_group_sched, const std::string& features) {
    kernel::KernelConfig c(kernel::load_preset("linux-4.0"));
    c.apply_features(features);
    c.apply_sysctl(std::string("sched_autogroup_enabled=") + (autogroup ? "1" : "0"));
    c.apply_sysctl(std::string("fair_group_sched=") + (fair_group_sched ? "1" : "0"));
    return c;
  }
  kernel::Task* task(const std::string& comm) {
    for (auto* t : k.all_tasks())
      if (t->comm == comm) return t;
    return nullptr;
  }
};

Co<void> hog(Proc& p, int64_t total) {
  for (int64_t done = 0; done < total; done += 100000) co_await p.user(100000);
}
}  // namespace

// The comment above effective_load(): 7 equal tasks spread {2, 4, 1, 0} over
// 4 CPUs. Waking one more onto CPU 0 moves the group's weight there by
// 5/56 of the shares (3/8 - 2/7); CPU 1's changes by -4/56 (4/8 - 4/7).
TEST(FairGroup, EffectiveLoadFollowsTheWorkedExampleOfFairC) {
  const int64_t S = 1024, total = 7 * 1024;
  const int64_t rw0 = 2 * 1024, rw1 = 4 * 1024;
  const int64_t se0 = fg::cfs_shares(S, fg::tg_weight(total, rw0, rw0), rw0);
  const int64_t se1 = fg::cfs_shares(S, fg::tg_weight(total, rw1, rw1), rw1);
  EXPECT_EQ(se0, S * 2 / 7);
  EXPECT_EQ(se1, S * 4 / 7);
  const int64_t on0 = fg::effective_load(S, fg::tg_weight(total, rw0, rw0), rw0, se0, 1024, 1024);
  const int64_t on1 = fg::effective_load(S, fg::tg_weight(total, rw1, rw1), rw1, se1, 0, 1024);
  EXPECT_NEAR(static_cast<double>(on0), 5.0 / 56 * S, 1.0);
  EXPECT_NEAR(static_cast<double>(on1), -4.0 / 56 * S, 1.0);
}

TEST(FairGroup, SharesAreClampedToMinSharesAndTheGroupsShares) {
  EXPECT_EQ(fg::cfs_shares(1024, 4096, 0), fg::MIN_SHARES);  // an empty queue
  EXPECT_EQ(fg::cfs_shares(1024, 1024, 1024), 1024);          // the group's only queue
  EXPECT_EQ(fg::cfs_shares(1024, 512, 1024), 1024);           // a stale total below this queue
  // 16 pipe pairs in one group, about 16384 of load: a CPU with one runnable
  // task gets 1024 * 1024 / (16384 - 511 + 1024).
  EXPECT_EQ(fg::cfs_shares(1024, fg::tg_weight(16384, 511, 1024), 1024), 62);
}

// A CPU holding one of 32 half-busy tasks of a group shows 1/32 of the
// group's shares; a group using less than one CPU shows its fraction of it.
TEST(FairGroup, AGroupEntityShowsItsQueuesShareOfTheGroup) {
  EXPECT_EQ(fg::group_entity_contrib(511, 1024, 16351, 16 * 1024), 511 * 1024 / 16352);
  EXPECT_EQ(fg::group_entity_contrib(1024, 1024, 1024, 1024), 1023);
  EXPECT_EQ(fg::group_entity_contrib(1024, 1024, 1024, 512), 511);
}

// calc_group_runnable()'s ratio (8): a queue with 1000 runnable and 3000
// blocked shows 1024/4000 of its entity's load (the instant weight, 1024,
// is the larger numerator); a queue whose averages lag
// its instant weight (a task just enqueued) shows all of it; an empty one
// none.
TEST(FairGroup, GroupRunnableWeightCountsTheRunnablePartOnly) {
  EXPECT_EQ(fg::runnable_part(40, 1000, 3000, 1024), 40 * 1024 / 4000);
  EXPECT_EQ(fg::runnable_part(40, 100, 300, 1024), 40);
  EXPECT_EQ(fg::runnable_part(40, 0, 0, 0), 0);
}

TEST(Autogroup, EachSpawnedSessionGetsAGroupItsChildrenInherit) {
  GroupSim s("1s2c1t", true);
  static Program child = [](Proc& p) { return hog(p, 1000000); };
  for (const char* name : {"a", "b"})
    s.k.spawn(name, [](Proc& p) -> Co<void> {
      co_await p.fork("child", child, false);
      co_await p.wait_child();
    }, 0);
  ASSERT_EQ(s.k.run(1000000000, 10000000).outcome, kernel::RunResult::Outcome::Completed);
  int groups[2] = {0, 0};
  for (const kernel::Task* t : s.k.all_tasks()) {
    ASSERT_NE(t->autogroup, 0) << t->comm;
    if (t->parent) {
      EXPECT_EQ(t->autogroup, t->parent->autogroup);
    }
    if (t->comm == "a") groups[0] = t->autogroup;
    if (t->comm == "b") groups[1] = t->autogroup;
  }
  EXPECT_NE(groups[0], groups[1]);
  GroupSim off("1s2c1t", false);
  off.k.spawn("a", [](Proc& p) { return hog(p, 100000); }, 0);
  EXPECT_EQ(off.task("a")->autogroup, 0);
}

// The point of autogroup: one CPU, a session of two hogs and a session of
// one. Per task, CFS would give each a third; per group, the lone hog gets
// half and the pair share the other half. A group-aware kernel with autogroup
// off (every task in the root group) shares per task, as one without groups.
TEST(Autogroup, TwoSessionsShareACpuAsTwoEntities) {
  for (auto [autogroup, fair_group_sched] : {std::pair{false, false}, {false, true}, {true, false}}) {
    GroupSim s("1s1c1t", autogroup, 1, fair_group_sched);
    static Program second = [](Proc& p) { return hog(p, 60000000); };
    s.k.spawn("pair", [](Proc& p) -> Co<void> {
      co_await p.fork("pair2", second, false);
      co_await hog(p, 60000000);
      co_await p.wait_child();
    }, 0);
    s.k.spawn("lone", [](Proc& p) { return hog(p, 60000000); }, 0);
    s.k.run(90000000, 100000000);
    EXPECT_EQ(s.k.check_invariants(), "");
    EXPECT_EQ(s.task("lone")->autogroup != 0, autogroup);
    const double lone = static_cast<double>(s.task("lone")->se.sum_exec_runtime);
    const double pair = static_cast<double>(s.task("pair")->se.sum_exec_runtime + s.task("pair2")->se.sum_exec_runtime);
    if (autogroup)
      EXPECT_NEAR(lone / (lone + pair), 0.5, 0.05);
    else
      EXPECT_NEAR(lone / (lone + pair), 1.0 / 3, 0.05);
  }
}

// A group entity is allocated zeroed and its first enqueue is taken as a
// migration with a constructed contribution (enqueue_entity_load_avg()), so
// a fresh group adds nothing to its CPU's load until the entity's first
// 1024 us period rolls over; after that a lone hog in its group weighs what
// it weighs without groups, less the group's runnable scaling.
TEST(Autogroup, AFreshGroupShowsNoLoadUntilItsFirstPeriod) {
  GroupSim on("1s2c1t", true), off("1s2c1t", false);
  for (GroupSim* s : {&on, &off}) s->k.spawn("hog", [](Proc& p) { return hog(p, 300000000); }, 1);
  on.k.run(500000, 1000000);
  off.k.run(500000, 1000000);
  EXPECT_EQ(on.k.policy().runnable_load(1), 0);
  EXPECT_GT(off.k.policy().runnable_load(1), 900);
  on.k.run(3000000, 10000000);
  EXPECT_GT(on.k.policy().runnable_load(1), 0);
  on.k.run(250000000, 100000000);
  off.k.run(250000000, 100000000);
  EXPECT_NEAR(static_cast<double>(on.k.policy().runnable_load(1)),
              static_cast<double>(off.k.policy().runnable_load(1)), 20.0);
  EXPECT_EQ(on.k.check_invariants(), "");
}

// Sixteen benchmark tasks of one session ping-ponging over 4 CPUs: the
// group's books balance at every step (tg->load_avg is the sum of what its
// queues published, entities are queued exactly when their queues hold
// tasks, the task counts add up) and the run ends.
// The same with every task in the root group (fair_group_sched=1 alone),
// and with v4.15's group load (GROUP_RUNNABLE_WEIGHT, GROUP_ENTITY_REFRESH),
// each half alone and both.
TEST(Autogroup, TheGroupsBooksBalanceThroughAPipeRun) {
  const char* const features[] = {"", "", "GROUP_RUNNABLE_WEIGHT", "GROUP_ENTITY_REFRESH",
                                  "GROUP_RUNNABLE_WEIGHT,GROUP_ENTITY_REFRESH"};
  for (int run = 0; run < 5; ++run) {
    const bool autogroup = run != 1;
    GroupSim s("2s2c1t", autogroup, 1, !autogroup, features[run]);
    workload::Instances bench("pipe", {"-l", "3000"}, 4, workload::StartLayout{});
    bench.start(s.k, [] {});
    kernel::RunResult r;
    for (int64_t t = 100000; t < 2000000000; t += 100000) {
      r = s.k.run(t, 100000000);
      ASSERT_EQ(s.k.check_invariants(), "") << "at " << t << " ns, autogroup " << autogroup;
      if (r.outcome != kernel::RunResult::Outcome::TimeLimit) break;
    }
    EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  }
}

namespace {
bool has_policy_stat(kernel::Kernel& k, const std::string& name) {
  for (const auto& [key, value] : k.policy().stats())
    if (key == name) return true;
  return false;
}
int64_t policy_stat(kernel::Kernel& k, const std::string& name) {
  for (const auto& [key, value] : k.policy().stats())
    if (key == name) return value;
  ADD_FAILURE() << "no policy counter " << name;
  return -1;
}
hw::CpuMask only(int cpu) {
  hw::CpuMask m;
  m.set(cpu);
  return m;
}
Co<void> pinned_burst(Proc& p, int cpu, int64_t work, int64_t sleep) {
  co_await p.sched_setaffinity(only(cpu));
  co_await hog(p, work);
  if (sleep) co_await p.nanosleep(sleep);
}
// One session: three hogs on CPU 0; on CPU 1 one hog and six tasks that
// run 10 ms there and then sleep.
Co<void> hogs_and_sleepers(Proc& p) {
  static Program hog_on_0 = [](Proc& c) { return pinned_burst(c, 0, 300000000, 0); };
  static Program hog_on_1 = [](Proc& c) { return pinned_burst(c, 1, 300000000, 0); };
  static Program sleeper_on_1 = [](Proc& c) { return pinned_burst(c, 1, 10000000, 1000000000); };
  for (int i = 0; i < 3; ++i) co_await p.fork("hog0", hog_on_0, false);
  co_await p.fork("hog1", hog_on_1, false);
  for (int i = 0; i < 6; ++i) co_await p.fork("sleeper1", sleeper_on_1, false);
  for (int i = 0; i < 10; ++i) co_await p.wait_child();
}
}  // namespace

// The load view sample's what-ifs. Once the six have gone to sleep, CPU 0
// runs three of the group's tasks and CPU 1 one, but CPU 1's queue still
// holds their blocked load, and the group entity's contribution counts it
// (tg_load_contrib = runnable + blocked): CPU 1 reads heavier until that
// decays (half-life 32 ms), about 50 samples. Counted without the blocked
// load, CPU 0 reads heavier (the one exception is a sample in the
// first millisecond, while the forks' averages start).
TEST(Autogroup, BlockedLoadMakesTheBusierCpuReadLighter) {
  GroupSim s("1s2c1t", true);
  s.k.spawn("session", [](Proc& p) { return hogs_and_sleepers(p); }, 0);
  s.k.run(200000000, 100000000);
  const int64_t pairs = policy_stat(s.k, "load_view_pairs");
  const int64_t inversions = policy_stat(s.k, "load_view_inversions");
  EXPECT_GE(pairs, 150);  // seven runnable against three until ~60 ms, then three against one
  EXPECT_GE(inversions, 30);
  EXPECT_GE(policy_stat(s.k, "load_view_inversions_if_fresh"), 30);
  EXPECT_LE(policy_stat(s.k, "load_view_inversions_if_no_blocked"), inversions / 10);
  EXPECT_EQ(s.k.check_invariants(), "");
}

// The same with v4.15's runnable weight, recomputed at every update: the
// sleepers' blocked load no longer counts in CPU 1's load: while CPU 1 runs
// seven tasks it reads heavier than CPU 0, and once they sleep CPU 0, with
// three runnable tasks against one, reads heavier.
TEST(Autogroup, WithGroupRunnableWeightTheBusierCpuReadsHeavier) {
  GroupSim s("1s2c1t", true, 1, false, "GROUP_RUNNABLE_WEIGHT,GROUP_ENTITY_REFRESH");
  s.k.spawn("session", [](Proc& p) { return hogs_and_sleepers(p); }, 0);
  s.k.run(200000000, 100000000);
  EXPECT_GE(policy_stat(s.k, "load_view_pairs"), 150);
  EXPECT_LE(policy_stat(s.k, "load_view_inversions"), 2);
  EXPECT_FALSE(has_policy_stat(s.k, "load_view_inversions_if_fresh"));  // 4.0's formula: not reported
  EXPECT_EQ(s.k.check_invariants(), "");
}
