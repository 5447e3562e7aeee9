#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "kernel/features.hpp"
#include "kernel/sched_class.hpp"
#include "kernel/sched_domain.hpp"
#include "obs/observer.hpp"
#include "obs/stats.hpp"
#include "../support/sim_fixture.hpp"

using kernel::Co;
using kernel::Proc;
using testsupport::hog;
using testsupport::TinySim;

TEST(Features, PresetsSetEraDefaults) {
  auto p40 = kernel::load_preset("linux-4.0");
  EXPECT_EQ(p40.policy, kernel::PolicyKind::Cfs);
  EXPECT_TRUE(p40.features.at("WAKE_WIDE"));
  EXPECT_TRUE(p40.features.at("NEWIDLE_COST"));
  auto p310 = kernel::load_preset("linux-3.10");
  EXPECT_FALSE(p310.features.at("WAKE_WIDE"));
  EXPECT_FALSE(p310.features.at("NEWIDLE_COST"));
  auto p24 = kernel::load_preset("linux-2.4.19");
  EXPECT_EQ(p24.policy, kernel::PolicyKind::Linux24);
  EXPECT_EQ(p24.hz, 100);
  EXPECT_EQ(p24.sysctls.at("pipe_buffers"), 1);
  EXPECT_THROW(kernel::load_preset("linux-9.9"), std::invalid_argument);
}

TEST(Features, FeatureAndSysctlOverridesAreValidated) {
  kernel::KernelConfig c(kernel::load_preset("linux-4.0"));
  c.apply_features("NO_TTWU_QUEUE, NEXT_BUDDY");
  EXPECT_FALSE(c.feat("TTWU_QUEUE"));
  EXPECT_TRUE(c.feat("NEXT_BUDDY"));
  EXPECT_THROW(c.apply_features("NO_SUCH_FEATURE"), std::invalid_argument);
  c.apply_sysctl("sched_migration_cost_ns=250000");
  EXPECT_EQ(c.sysctl("sched_migration_cost_ns"), 250000);
  EXPECT_THROW(c.apply_sysctl("sched_migration_cost_ns"), std::invalid_argument);
  EXPECT_THROW(c.apply_sysctl("bogus=1"), std::invalid_argument);
  EXPECT_THROW(c.apply_sysctl("sched_nr_migrate=-5"), std::invalid_argument);
  EXPECT_THROW(c.apply_sysctl("pipe_buffers=0"), std::invalid_argument);
  EXPECT_THROW(c.apply_sysctl("sched_latency_ns=12abc"), std::invalid_argument);
}

TEST(Features, ConfigHzIsABuildOptionSetLikeASysctl) {
  kernel::KernelConfig c(kernel::load_preset("linux-4.0"));
  EXPECT_EQ(c.tick_ns(), 1000000);
  c.apply_sysctl("CONFIG_HZ=250");
  EXPECT_EQ(c.hz(), 250);
  EXPECT_EQ(c.tick_ns(), 4000000);
  EXPECT_NE(c.describe().find("HZ=250"), std::string::npos);
  EXPECT_THROW(c.apply_sysctl("CONFIG_HZ=500"), std::invalid_argument);
  EXPECT_THROW(c.apply_sysctl("CONFIG_HZ=0"), std::invalid_argument);
  kernel::KernelConfig old(kernel::load_preset("linux-2.4.19"));
  EXPECT_THROW(old.apply_sysctl("CONFIG_HZ=1000"), std::invalid_argument);
}

TEST(SchedDomains, HaswellHasSmtMcNumaLikeTopologyC) {
  auto prof = hw::load_machine("haswell-2s8c2t");
  kernel::SchedDomains sd(prof.topology, 400);
  const auto& d = sd.of(0);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].name, "SMT");
  EXPECT_EQ(d[0].span_weight, 2);
  EXPECT_EQ(d[0].imbalance_pct, 110);
  EXPECT_EQ(d[1].name, "MC");
  EXPECT_EQ(d[1].span_weight, 16);
  EXPECT_EQ(d[1].groups.size(), 8u);
  EXPECT_TRUE(d[1].flags & kernel::SD_PREFER_SIBLING);  // inherited from the degenerate DIE
  EXPECT_EQ(d[2].name, "NUMA");
  EXPECT_EQ(d[2].span_weight, 32);
  EXPECT_TRUE(d[2].flags & kernel::SD_SERIALIZE);
  EXPECT_TRUE(d[2].flags & kernel::SD_WAKE_AFFINE);  // distance 21 <= RECLAIM_DISTANCE
  EXPECT_EQ(d[2].groups.size(), 2u);
  EXPECT_TRUE(d[2].groups[0].cpus.test(0));  // local group first
  EXPECT_EQ(sd.llc_size(0), 16);
  EXPECT_TRUE(sd.cpus_share_cache(0, 23));
  EXPECT_FALSE(sd.cpus_share_cache(0, 8));
  EXPECT_EQ(sd.level_spanning(0, 16), 0);
  EXPECT_EQ(sd.level_spanning(0, 8), 2);
  EXPECT_EQ(d[0].groups[0].capacity, 589);  // smt_gain 1178 / 2
}

// Every CPU's copy of a group points at one sched_group_capacity, so the
// group_imbalanced flag one CPU sets is the one the others read.
TEST(SchedDomains, CopiesOfAGroupShareOneSgc) {
  auto prof = hw::load_machine("haswell-2s8c2t");
  kernel::SchedDomains sd(prof.topology, 400);
  const int socket0_at_numa = sd.of(0)[2].groups[0].sgc;  // CPUs 0-7, 16-23
  EXPECT_EQ(sd.of(23)[2].groups[0].sgc, socket0_at_numa);
  EXPECT_EQ(sd.of(8)[2].groups[1].sgc, socket0_at_numa);  // seen from socket 1
  EXPECT_NE(sd.of(8)[2].groups[0].sgc, socket0_at_numa);
  const int core0_at_mc = sd.of(0)[1].groups[0].sgc;  // CPUs 0 and 16
  EXPECT_EQ(sd.of(16)[1].groups[0].sgc, core0_at_mc);
  EXPECT_NE(core0_at_mc, socket0_at_numa);
  EXPECT_NE(sd.of(0)[0].groups[0].sgc, sd.of(0)[1].groups[0].sgc);  // {0} at SMT, {0,16} at MC
  // 32 single-CPU groups at SMT, 16 cores at MC, 2 sockets at NUMA.
  EXPECT_EQ(sd.nr_sgc(), 32 + 16 + 2);
}

namespace {
hw::CpuMask cpu_set(std::initializer_list<int> list) {
  hw::CpuMask m;
  for (int c : list) m.set(c);
  return m;
}
kernel::SchedDomains domains_of(const char* topology, std::vector<std::vector<int>> distances, int version = 400) {
  auto prof = hw::load_machine(topology);
  prof.topology.set_node_distances(distances);
  return kernel::SchedDomains(prof.topology, version);
}
}  // namespace

// Groups are built before the degenerate domains are dropped, from each
// CPU's own child span: on one CPU a node with nodes 0-2 near (20) and node 3
// far (30), CPU 3's near level is itself alone and goes, but its top level
// still has node 0-2's near span as one group, as CPU 0's top level does.
TEST(SchedDomains, AGroupIsItsCpusChildSpanWhereThatLevelIsGoneHere) {
  const auto sd = domains_of("4s1c1t", {{10, 20, 20, 30}, {20, 10, 20, 30}, {20, 20, 10, 30}, {30, 30, 30, 10}});
  ASSERT_EQ(sd.of(3).size(), 1u);
  const auto& top3 = sd.of(3)[0];
  ASSERT_EQ(top3.groups.size(), 2u);
  EXPECT_EQ(top3.groups[0].cpus, cpu_set({3}));
  EXPECT_EQ(top3.groups[1].cpus, cpu_set({0, 1, 2}));
  ASSERT_EQ(sd.of(0).size(), 2u);
  EXPECT_EQ(sd.of(0)[1].groups[0].cpus, cpu_set({0, 1, 2}));
  EXPECT_EQ(sd.of(0)[1].groups[0].sgc, top3.groups[1].sgc);
}

// The same distances with two CPUs a node: node 3's near NUMA level spans
// only node 3, as its MC level does, but it has SD_NUMA (and SD_SERIALIZE),
// which MC lacks, and SD_WAKE_AFFINE (20 <= RECLAIM_DISTANCE), so 4.0's
// sd_parent_degenerate() keeps it, with one group; its DIE level, with no
// flag MC lacks, goes.
TEST(SchedDomains, ANumaLevelWithItsChildsSpanStaysOn40) {
  const auto sd = domains_of("4s2c1t", {{10, 20, 20, 30}, {20, 10, 20, 30}, {20, 20, 10, 30}, {30, 30, 30, 10}});
  const auto& chain = sd.of(6);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[0].name, "MC");
  EXPECT_EQ(chain[1].name, "NUMA");
  EXPECT_EQ(chain[1].numa_distance, 20);
  EXPECT_EQ(chain[1].span, cpu_set({6, 7}));
  ASSERT_EQ(chain[1].groups.size(), 1u);
  EXPECT_TRUE(chain[1].flags & kernel::SD_LOAD_BALANCE);
  EXPECT_EQ(chain[2].numa_distance, 30);
  EXPECT_EQ(sd.of(0).size(), 3u);  // MC {0,1}, NUMA 20 {0-5}, NUMA 30
}

// build_sched_domains() ends a CPU's chain at the first level spanning every
// CPU, and build_overlap_sched_groups() skips a CPU with no domain at the
// level it builds. Node 1 is 20 from every node, so its chain ends at the
// 20 level; CPU 3's 30 level, {1,2,3}, takes its groups from CPUs 2 and 3
// ({1,2} and {1,3}), not from CPU 1, whose span would make it one group.
TEST(SchedDomains, ACpuWhoseChainEndedLowerGivesNoGroup) {
  const auto sd = domains_of("4s1c1t", {{10, 20, 30, 40}, {20, 10, 20, 20}, {30, 20, 10, 30}, {40, 20, 30, 10}});
  ASSERT_EQ(sd.of(1).size(), 1u);
  const auto& chain = sd.of(3);
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[1].span, cpu_set({1, 2, 3}));
  ASSERT_EQ(chain[1].groups.size(), 2u);
  EXPECT_EQ(chain[1].groups[0].cpus, cpu_set({1, 3}));
  EXPECT_EQ(chain[1].groups[1].cpus, cpu_set({1, 2}));
}

// 4.0's sched_init_numa() reads node 0's row alone: a distance that only
// other nodes see makes no level.
TEST(SchedDomains, NumaLevelsComeFromNodeZerosRow) {
  const auto sd = domains_of("4s1c1t", {{10, 20, 20, 20}, {20, 10, 30, 30}, {20, 30, 10, 30}, {20, 30, 30, 10}});
  for (int c = 0; c < 4; ++c) {
    ASSERT_EQ(sd.of(c).size(), 1u) << "cpu " << c;
    EXPECT_EQ(sd.of(c)[0].numa_distance, 20);
  }
  EXPECT_EQ(sd.of(1)[0].span, cpu_set({0, 1}));
}

TEST(SchedDomains, P4XeonIsOneFlatDomainWithoutSharedCache) {
  auto prof = hw::load_machine("p4xeon-4way");
  kernel::SchedDomains sd(prof.topology, 400);
  ASSERT_EQ(sd.of(2).size(), 1u);
  EXPECT_EQ(sd.of(2)[0].name, "DIE");
  EXPECT_EQ(sd.of(2)[0].groups.size(), 4u);
  EXPECT_FALSE(sd.of(2)[0].flags & kernel::SD_SHARE_PKG_RESOURCES);
  EXPECT_EQ(sd.llc_level(2), -1);
  EXPECT_FALSE(sd.cpus_share_cache(0, 1));
}

TEST(SchedDomains, WestmereHasThreeNumaLevels) {
  auto prof = hw::load_machine("westmere-8s10c2t");
  kernel::SchedDomains sd(prof.topology, 400);
  std::vector<int> spans;
  for (const auto& d : sd.of(0)) spans.push_back(d.span_weight);
  EXPECT_EQ(spans, (std::vector<int>{2, 20, 40, 80, 160}));
  kernel::SchedDomains sd310(prof.topology, 310);
  EXPECT_EQ(sd310.of(0)[1].busy_factor, 64);  // SD_MC_INIT
}

namespace {
Co<void> sleeper(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.wait_event(*wq, [flag] { return *flag; }, "test_wait");
  co_await p.user(1000);
}
Co<void> waker(Proc& p, kernel::WaitQueue* wq, bool* flag, int ms = 10) {
  // Long enough to be preempted by the tick, so the sleeper gets to sleep.
  for (int i = 0; i < ms; ++i) co_await p.user(1000000);
  *flag = true;
  co_await p.wake_up(*wq, 1, 0);
}
Co<void> forever_blocked(Proc& p, kernel::WaitQueue* wq) {
  co_await p.wait_event(*wq, [] { return false; }, "test_wait");
}
}  // namespace

TEST(Kernel, CfsSharesOneCpuFairlyBetweenTwoHogs) {
  TinySim s("1s1c1t", "linux-4.0");
  s.k.spawn("a", [](Proc& p) { return hog(p, 60000000, 100000); }, 0);
  s.k.spawn("b", [](Proc& p) { return hog(p, 60000000, 100000); }, 0);
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  // Both finish within one scheduling period of each other: fair sharing.
  const int64_t a_end = s.task("a")->last_ran.ns(), b_end = s.task("b")->last_ran.ns();
  EXPECT_LT(std::abs(a_end - b_end), 7000000);
  EXPECT_GT(s.task("a")->nr_switches, 5);
  EXPECT_GE(r.end_ns, 120000000);
}

// Two hogs sharing one CPU evict each other's working set: each switch
// refills the part the other's run pushed out of the private cache.
TEST(Kernel, TheWorkingSetWhatIfSetsWhatEveryRunTouchesAndASwitchRefills) {
  auto refill_of_two_hogs = [](int64_t working_set) {
    TinySim s("1s1c1t", "linux-4.0", 1, "", {"task_working_set_bytes=" + std::to_string(working_set)});
    s.k.spawn("a", [](Proc& p) { return hog(p, 60000000, 100000); }, 0);
    s.k.spawn("b", [](Proc& p) { return hog(p, 60000000, 100000); }, 0);
    auto r = s.run();
    EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
    EXPECT_EQ(s.task("a")->working_set_bytes, working_set);
    EXPECT_GT(s.task("a")->nr_switches, 5);
    return s.k.work_by_path()[static_cast<size_t>(kernel::CostPath::CacheRefill)];
  };
  EXPECT_EQ(refill_of_two_hogs(0), 0);
  const int64_t small = refill_of_two_hogs(16 * 1024), large = refill_of_two_hogs(64 * 1024);
  EXPECT_GT(small, 0);
  // Four times the lines, and each switch finds four times the share evicted
  // (the runs are long enough, 16 switches a hog, that these outweigh the
  // two cold starts, which grow only with the size).
  EXPECT_GT(large, 8 * small);
  EXPECT_THROW(TinySim::make_config("linux-4.0", "", {"task_working_set_bytes=8388608"}), std::invalid_argument);
}

// One socket whose two cores share the LLC: every refilled line comes from
// inside it. (On 1s1c1t the LLC spans no other core, and evicted lines come
// from memory.)
TEST(Kernel, RefilledLinesOnOneSocketAllComeFromInsideItsLlc) {
  TinySim s("1s2c1t", "linux-4.0");
  for (const char* name : {"a", "b", "c"}) s.k.spawn(name, [](Proc& p) { return hog(p, 30000000, 100000); }, 0);
  s.run();
  EXPECT_GT(s.k.refill_lines().within_llc, 0);
  EXPECT_EQ(s.k.refill_lines().beyond_llc, 0);
}

TEST(Kernel, WakeupRecordsRunDelayAndEveryCpuAccountsForAllTime) {
  TinySim s("1s1c1t", "linux-4.0");
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper(p, &wq, &flag); }, 0);
  s.k.spawn("waker", [&](Proc& p) { return waker(p, &wq, &flag); }, 0);
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  // Woken on the waker's CPU, the sleeper waits for the waker to leave it.
  EXPECT_GT(s.task("sleeper")->wakeup_delay_total_ns, 0);
  EXPECT_EQ(s.k.accounting(0).total(), r.end_ns);
}

TEST(Kernel, DeadlockIsReportedNotHung) {
  TinySim s("1s2c1t", "linux-4.0");
  kernel::WaitQueue wq;
  s.k.spawn("stuck", [&](Proc& p) { return forever_blocked(p, &wq); }, 0);
  auto r = s.run();
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  EXPECT_NE(r.detail.find("stuck"), std::string::npos);
}

TEST(Kernel, Linux24RecalculatesCountersInEpochs) {
  TinySim s("1s1c1t", "linux-2.4.19");
  for (const char* n : {"a", "b", "c"}) s.k.spawn(n, [](Proc& p) { return hog(p, 200000000, 1000000); }, 0);
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  int64_t epochs = 0;
  for (const auto& [k, v] : s.k.policy().stats())
    if (k == "epochs") epochs = v;
  // 600 ms of work in 60 ms slices (NICE_TO_TICKS(0) = 6 at HZ=100).
  EXPECT_GE(epochs, 2);
  for (const char* n : {"a", "b", "c"}) EXPECT_GE(s.task(n)->nr_switches, 2) << n;
  // 2.4.19's add_to_runqueue() links at the head and goodness() ties go to
  // the first found: the last spawned runs first in each epoch, the first
  // spawned last, running its final slices back to back.
  EXPECT_GT(s.task("c")->nr_switches, s.task("a")->nr_switches);
}

TEST(Kernel, ForkBalancingSpreadsChildrenToIdleCpus) {
  TinySim s("2s2c1t", "linux-4.0");
  s.k.spawn("parent", [](Proc& p) -> Co<void> {
    kernel::Program child = [](Proc& c) { return hog(c, 5000000, 500000); };
    for (int i = 0; i < 3; ++i) co_await p.fork("child", child, false);
    for (int i = 0; i < 3; ++i) co_await p.wait_child();
  }, 0);
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  std::set<int> cpus;
  for (auto* t : s.k.all_tasks())
    if (t->comm == "child") cpus.insert(t->processor);
  EXPECT_GE(cpus.size(), 3u);
}

namespace {
Co<void> unpin_fork_and_record(Proc& p, kernel::Task** child, int64_t* contrib_at_fork) {
  hw::CpuMask both;
  both.set(0);
  both.set(1);
  co_await p.sched_setaffinity(both);
  kernel::Program work = [](Proc& c) { return hog(c, 1000000, 100000); };
  *child = co_await p.fork("child", work, false);
  *contrib_at_fork = (*child)->se.load_avg_contrib;
  co_await p.wait_child();
}
}  // namespace

namespace {
struct ForkedChild {
  int64_t contrib = -1;  // its load_avg_contrib right after the fork
  int64_t end_ns = 0;    // when the run ended
};
// A parent beside seven hogs pinned to CPU 0 unpins itself and forks a
// child, which fork balancing puts on idle CPU 1.
const std::vector<std::string> kForkSysctls = {"sched_latency_ns=100000", "sched_min_granularity_ns=10000"};
ForkedChild fork_beside_seven_hogs(const std::vector<std::string>& sysctls) {
  TinySim s("1s2c1t", "linux-4.0", 1, "", sysctls);
  kernel::Task* child = nullptr;
  ForkedChild out;
  hw::CpuMask cpu0;
  cpu0.set(0);
  for (int i = 0; i < 7; ++i)
    s.k.spawn("hog", [](Proc& p) { return hog(p, 2000000, 100000); }, 0)->cpus_allowed = cpu0;
  s.k.spawn("parent", [&](Proc& p) { return unpin_fork_and_record(p, &child, &out.contrib); }, 0)->cpus_allowed =
      cpu0;
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_NE(child, nullptr);
  if (child) {
    EXPECT_EQ(child->processor, 1);
  }
  out.end_ns = s.k.now_ns();
  return out;
}
}  // namespace

// wake_up_new_task() (4.0 core.c) places the child before
// init_task_runnable_average() gives it one slice of the chosen queue. With
// seven hogs beside the parent on CPU 0 that slice is 20 us there (19/20 of
// a full weight) and 200 us on idle CPU 1 (195/196), where fork balancing
// puts the child. (v4.4 moved the call before the placement.)
TEST(Kernel, ANewTaskStartsWithTheSliceOfTheCpuForkBalancingChose) {
  EXPECT_EQ(fork_beside_seven_hogs(kForkSysctls).contrib, 1024 * 195 / 196);
}

// The what-if init_load_latency_ns starts the child's average on the slice
// another latency gives: 50 us once scaled on two CPUs (48 periods of 1024
// ns, 48/49 of a full weight) in place of the 200 us sched_latency_ns gives.
// Nothing else reads it: with it at the latency already in force the run is
// the same.
TEST(Kernel, TheInitLoadWhatIfStartsANewTaskOnItsOwnLatencysSlice) {
  auto held = kForkSysctls;
  held.push_back("init_load_latency_ns=25000");
  EXPECT_EQ(fork_beside_seven_hogs(held).contrib, 1024 * 48 / 49);
  auto same = kForkSysctls;
  same.push_back("init_load_latency_ns=100000");
  const ForkedChild stock = fork_beside_seven_hogs(kForkSysctls), at_same = fork_beside_seven_hogs(same);
  EXPECT_EQ(at_same.contrib, stock.contrib);
  EXPECT_EQ(at_same.end_ns, stock.end_ns);
}

namespace {
Co<void> exec_and_record(Proc& p, int* before, int* after, int64_t* took) {
  *before = p.cpu();
  const int64_t start = p.now();
  co_await p.exec();
  *after = p.cpu();
  *took = p.now() - start;
}
}  // namespace

// sched_exec(): an execve() on a CPU that another task keeps busy moves the
// task to an idle CPU before the new image is loaded there; 2.4 has no exec
// balancing, so the task stays and shares the CPU.
TEST(Kernel, ExecMovesTheTaskOffABusyCpuFrom26On) {
  for (const std::string preset : {"linux-4.0", "linux-2.4.19"}) {
    TinySim s("1s2c1t", preset);
    int before = -1, after = -1;
    int64_t took = 0;
    kernel::Task* h = s.k.spawn("hog", [](Proc& p) { return hog(p, 20000000, 1000000); }, 0);
    hw::CpuMask only_cpu0;
    only_cpu0.set(0);
    h->cpus_allowed = only_cpu0;  // the hog stays: only the exec can move
    s.k.spawn("sh", [&](Proc& p) { return exec_and_record(p, &before, &after, &took); }, 0);
    ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed) << preset;
    EXPECT_EQ(s.k.check_invariants(), "") << preset;
    EXPECT_EQ(before, 0) << preset;
    EXPECT_EQ(after, preset == "linux-4.0" ? 1 : 0) << preset;
    EXPECT_GE(took, s.machine.costs().exec_base * 9 / 10) << preset;
  }
}

// ---- CPU affinity ----
namespace {
hw::CpuMask cpus(std::initializer_list<int> list) {
  hw::CpuMask m;
  for (int c : list) m.set(c);
  return m;
}
// Hogs of `total` ns in `chunk` pieces, all spawned on `cpu`; with `pin`
// they may run only there.
std::vector<kernel::Task*> spawn_hogs(TinySim& s, std::initializer_list<const char*> names, int64_t total,
                                      int64_t chunk, int cpu, bool pin = false) {
  std::vector<kernel::Task*> tasks;
  for (const char* name : names) {
    tasks.push_back(s.k.spawn(name, [=](Proc& p) { return hog(p, total, chunk); }, cpu));
    if (pin) tasks.back()->cpus_allowed = cpus({cpu});
  }
  return tasks;
}
Co<void> record_mask_and_cpu(Proc& p, hw::CpuMask* mask, int* cpu) {
  *mask = p.task()->cpus_allowed;
  *cpu = p.cpu();
  co_return;
}
Co<void> pin_then_fork(Proc& p, hw::CpuMask mask, int* pinned_on, hw::CpuMask* child_mask, int* child_cpu) {
  co_await p.sched_setaffinity(mask);
  *pinned_on = p.cpu();
  kernel::Program child = [child_mask, child_cpu](Proc& c) { return record_mask_and_cpu(c, child_mask, child_cpu); };
  co_await p.fork("child", child, false);
  co_await p.user(2000000);  // keep the parent's CPU busy while the child is placed and runs
  co_await p.wait_child();
}
Co<void> record_cpu_after_wait(Proc& p, kernel::WaitQueue* wq, bool* flag, int* ran_on) {
  co_await p.wait_event(*wq, [flag] { return *flag; }, "test_wait");
  *ran_on = p.cpu();
}
// sched_setaffinity(pid, mask) on a sleeping task only sets its mask
// (set_cpus_allowed_ptr()); it moves when it next wakes.
Co<void> repin_then_wake(Proc& p, kernel::Task** sleeper, hw::CpuMask mask, kernel::WaitQueue* wq, bool* flag,
                         int* sleeper_cpu_then) {
  co_await p.user(1000000);
  p.kernel().set_cpus_allowed_ptr(*sleeper, mask);
  *sleeper_cpu_then = (*sleeper)->cpu;
  *flag = true;
  co_await p.wake_up(*wq, 1, 0);
}
}  // namespace

// set_cpus_allowed_ptr(): a task that leaves its CPU's mask moves to the
// first allowed CPU at once; its children inherit the mask (dup_task_struct)
// and fork balancing places them inside it.
TEST(Kernel, SetAffinityMovesTheCallerAndChildrenInheritTheMask) {
  TinySim s("p4xeon-4way", "linux-4.0");
  int pinned_on = -1, child_cpu = -1;
  hw::CpuMask child_mask;
  s.k.spawn("parent", [&](Proc& p) { return pin_then_fork(p, cpus({2, 3}), &pinned_on, &child_mask, &child_cpu); },
            0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_EQ(pinned_on, 2);
  EXPECT_EQ(child_mask, cpus({2, 3}));
  EXPECT_EQ(child_cpu, 3);  // the idle allowed CPU, not the idle CPUs 0 and 1
}

// core.c select_task_rq(): the wakee's previous CPU (2, node 1) is idle, so
// select_idle_sibling() answers it, but the mask {1, 3} no longer allows it;
// select_fallback_rq() takes the first allowed CPU on that node, 3, not 1.
TEST(Kernel, AWakeupOutsideTheMaskFallsBackToAnAllowedCpuOnTheSameNode) {
  TinySim s("2s2c1t", "linux-4.0");
  kernel::WaitQueue wq;
  bool flag = false;
  int ran_on = -1, sleeper_cpu_then = -1;
  kernel::Task* sleeper = s.k.spawn("sleeper", [&](Proc& p) { return record_cpu_after_wait(p, &wq, &flag, &ran_on); }, 2);
  kernel::Task* w = s.k.spawn("waker", [&](Proc& p) {
    return repin_then_wake(p, &sleeper, cpus({1, 3}), &wq, &flag, &sleeper_cpu_then);
  }, 0);
  w->cpus_allowed = cpus({0});
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_EQ(sleeper_cpu_then, 2);  // asleep: the mask changed, the task did not move
  EXPECT_EQ(ran_on, 3);
}

namespace {
// At 1 ms, `taskset -p` whichever of the two hogs on CPU 0 is waiting.
Co<void> repin_the_waiting_hog(Proc& p, kernel::Task* a, kernel::Task* b, hw::CpuMask mask,
                               kernel::Task** target, int* target_cpu_then) {
  co_await p.user(1000000);
  *target = p.kernel().curr(0) == a ? b : a;
  p.kernel().set_cpus_allowed_ptr(*target, mask);
  *target_cpu_then = (*target)->cpu;
}
}  // namespace

// set_cpus_allowed_ptr() on another task: a queued task whose CPU leaves
// its mask is moved at once (move_queued_task()), not at its next wakeup.
TEST(Kernel, TasksetOnAQueuedTaskMovesIt) {
  TinySim s("p4xeon-4way", "linux-4.0");
  const auto hogs = spawn_hogs(s, {"a", "b"}, 20000000, 20000000, 0, true);
  kernel::Task* a = hogs[0];
  kernel::Task* b = hogs[1];
  kernel::Task* waiting = nullptr;
  int moved_to = -1;
  kernel::Task* c = s.k.spawn("taskset", [&](Proc& p) {
    return repin_the_waiting_hog(p, a, b, cpus({3}), &waiting, &moved_to);
  }, 1);
  c->cpus_allowed = cpus({1});
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  ASSERT_NE(waiting, nullptr);
  EXPECT_EQ(moved_to, 3);
  EXPECT_EQ(waiting->cpu, 3);
  EXPECT_LT(s.k.accounting(3).idle_ns, 2000000);  // it ran there from 1 ms on
}

// ---- hrtimer sleeps and wall-clock spins ----
namespace {
Co<void> nap(Proc& p, int64_t ns, int64_t* asked, int64_t* back) {
  *asked = p.now();
  co_await p.nanosleep(ns);
  *back = p.now();
}
// Sleep on a timer with a wide slack window, as start_hrtimer() allows.
Co<void> slack_sleep(Proc& p, int64_t soft, int64_t hard, int64_t* asked, int64_t* back) {
  *asked = p.now();
  p.task()->state = kernel::TaskState::Interruptible;
  p.kernel().start_hrtimer(p.cpu(), p.now() + soft, p.now() + hard, p.task());
  co_await p.block();
  *back = p.now();
}
Co<void> spinner(Proc& p, int64_t until, int64_t* back) {
  co_await p.spin_until(until);
  *back = p.now();
}
}  // namespace

TEST(Timer, NanosleepOnAnIdleCpuWakesAtTheHardExpiryPlusTheExitLatency) {
  TinySim s("1s1c1t", "linux-4.0");
  int64_t asked = 0, back = 0;
  s.k.spawn("napper", [&](Proc& p) { return nap(p, 1000000, &asked, &back); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  // Expiry = the call's return from its syscall entry + 1 ms; it fires at
  // the hard expiry (+50 us slack), then the CPU leaves its C-state.
  const int64_t slept = back - asked;
  EXPECT_GE(slept, 1000000 + kernel::Kernel::TIMER_SLACK_NS);
  EXPECT_LE(slept, 1000000 + kernel::Kernel::TIMER_SLACK_NS + 200000);
}

TEST(Timer, TheTickRunsATimerOnceItsSoftExpiryHasPassed) {
  TinySim s("1s1c1t", "linux-4.0");
  int64_t asked = 0, back = 0;
  // A hog keeps CPU 0 busy, so its tick runs every 1 ms (HZ=1000) and
  // serves the timer long before the 20 ms hard expiry.
  s.k.spawn("hog", [](Proc& p) { return hog(p, 30000000, 100000); }, 0);
  s.k.spawn("sleeper", [&](Proc& p) { return slack_sleep(p, 2000000, 20000000, &asked, &back); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_GE(back - asked, 2000000);
  EXPECT_LT(back - asked, 3000000 + 1000000);  // next tick, plus waiting out the hog's turn
}

TEST(Spin, SpinUntilEndsOnTheWallClockWhenAnSmtSiblingSlowsIt) {
  TinySim s("1s1c2t", "linux-4.0");
  int64_t back = 0;
  s.k.spawn("hog", [](Proc& p) { return hog(p, 20000000, 100000); }, 1);
  s.k.spawn("spin", [&](Proc& p) { return spinner(p, 10000000, &back); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  // Ticks during the spin delay the loop, not its deadline.
  EXPECT_EQ(back, 10000000);
}

// __schedule() clears need_resched after pick_next_task(): a task that the
// newly idle balance pulls inside the pick "preempts" the leaving prev (the
// CPU has no current task then), and that mark must not carry over to it.
TEST(Schedule, ATaskPulledByTheNewidleBalanceStartsWithoutAReschedMark) {
  TinySim s("1s2c1t", "linux-4.0");
  // hogB runs on CPU 0 and hogA waits; the napper leaves CPU 1 and pulls
  // hogA, which has never run and so is not cache hot (its exec_start is 0,
  // long before CPU 0's rq clock: see SCHED_CLOCK_AT_START_NS).
  kernel::Task* a = s.k.spawn("hogA", [](Proc& p) { return hog(p, 20000000, 1000000); }, 0);
  s.k.spawn("hogB", [](Proc& p) { return hog(p, 20000000, 1000000); }, 0);
  s.k.spawn("napper", [](Proc& p) -> Co<void> {
    co_await p.user(600000);
    co_await p.nanosleep(50000000);
  }, 1);
  s.k.run(550000, 1000000);
  const int64_t before = s.k.sched_count(1);
  s.k.run(650000, 1000000);
  ASSERT_EQ(s.k.curr(1), a) << "the newly idle CPU 1 pulled the waiting hogA";
  // One schedule(): the napper's. A mark left on hogA would make it call
  // schedule() again at once.
  EXPECT_EQ(s.k.sched_count(1) - before, 1);
  EXPECT_FALSE(s.k.need_resched(1));
  EXPECT_EQ(s.k.check_invariants(), "");
}

namespace {
struct SwitchTailWakeups {
  int in_tail = 0;        // wakeups of the sleeper during a kernel hog's switch-in
  int run_after_tail = 0;  // ... after which it ran once that switch was done
  int64_t worst_ns = 0;    // the longest such wait, from the switch-in
};
// On CPU 2, two hogs of kernel work that reach a preemption point only
// every 10 ms (cond_resched() before each piece) take turns, each switch-in
// costing 2 ms; a sleeper pinned there is woken every 3.3 ms from CPU 3, in
// the same LLC.
SwitchTailWakeups wakeups_during_switch_tails() {
  constexpr int64_t kSwitchNs = 2000000;
  const auto profile = std::filesystem::path(::testing::TempDir()) / "schedlab_switch_tail.toml";
  std::ofstream(profile) << "[machine]\nextends = \"haswell-2s8c2t\"\nname = \"switch_tail\"\ntopology = \"2s2c1t\"\n"
                         << "[costs]\ncontext_switch = { value = " << kSwitchNs
                         << ", unit = \"ns\", source = \"test\" }\n"
                         << "cost_jitter_permille = { value = 0, unit = \"permille\", source = \"test\" }\n";
  TinySim s(profile.string(), "linux-4.0");
  struct Seen final : obs::Observer {
    SwitchTailWakeups out;
    int64_t hog_in_at = -1, woken_in_tail_at = -1;
    void on_wakeup(int64_t t, int, const kernel::Task* p, int target, bool is_new) override {
      // Well inside the 2 ms of the switch that began at hog_in_at.
      if (!is_new && p->comm == "sleeper" && target == 2 && hog_in_at >= 0 && t - hog_in_at < kSwitchNs * 3 / 4) {
        ++out.in_tail;
        woken_in_tail_at = hog_in_at;
      }
    }
    void on_switch(int64_t t, int c, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (c != 2 || !next) return;
      hog_in_at = next->comm == "sleeper" ? -1 : t;
      if (next->comm == "sleeper" && woken_in_tail_at >= 0) {
        const int64_t waited = t - woken_in_tail_at;
        out.worst_ns = std::max(out.worst_ns, waited);
        out.run_after_tail += waited < kSwitchNs + 500000;
        woken_in_tail_at = -1;
      }
    }
  } seen;
  s.k.add_observer(&seen);
  const hw::CpuMask on2 = cpus({2}), on3 = cpus({3});
  for (const char* name : {"khog1", "khog2"}) {
    s.k.spawn(name, [on2](Proc& p) -> Co<void> {
      co_await p.sched_setaffinity(on2);
      for (int i = 0; i < 8; ++i) co_await p.sys_after_might_sleep(10000000);
    }, 2);
  }
  kernel::WaitQueue wq;
  bool flag = false;
  bool done = false;
  s.k.spawn("sleeper", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(on2);
    while (!done) {
      co_await p.wait_event(wq, [&] { return flag || done; }, "test_wait");
      flag = false;
    }
  }, 2);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(on3);
    for (int i = 0; i < 50; ++i) {
      co_await p.user(3300000);
      flag = true;
      co_await p.wake_up(wq, 1, 0);
    }
    done = true;
    co_await p.wake_up(wq, 1, 0);
  }, 3);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return seen.out;
}
}  // namespace

// schedule() ends in `while (need_resched())` (4.0 core.c; 2.4's `goto
// need_resched_back`): a wakeup that asks a CPU to reschedule while its
// switch is still under way is served when the switch is done, even if the
// task switched in goes on in the kernel, where no interrupt may preempt it.
// Before stop 98 such a wakee waited for that task's next preemption point,
// here the end of its 10 ms piece of kernel work.
TEST(Schedule, AReschedRequestedDuringTheSwitchIsServedWhenTheSwitchIsDone) {
  const auto seen = wakeups_during_switch_tails();
  ASSERT_GE(seen.in_tail, 3);
  EXPECT_EQ(seen.run_after_tail, seen.in_tail);
  EXPECT_LT(seen.worst_ns, 2500000);
}

TEST(Timer, ASleeperWokenOnItsIdleCpuStaysThere) {
  // hrtimer_wakeup() runs on the sleeper's CPU, which is still idle in the
  // interrupt (rq->curr == rq->idle): select_idle_sibling() keeps it there.
  TinySim s("1s4c1t", "linux-4.0");
  s.k.spawn("napper", [](Proc& p) -> Co<void> {
    for (int i = 0; i < 5; ++i) co_await p.nanosleep(1000000);
  }, 1);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.task("napper")->nr_migrations, 0);
  EXPECT_EQ(s.task("napper")->cpu, 1);
}

TEST(Spin, SpinUntilLosesTheTimeItSpentPreempted) {
  TinySim s("1s1c1t", "linux-4.0");
  int64_t back = 0;
  s.k.spawn("spin", [&](Proc& p) { return spinner(p, 10000000, &back); }, 0);
  s.k.spawn("hog", [](Proc& p) { return hog(p, 20000000, 100000); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  // The spinner shares the CPU with the hog: it stops the first time it
  // runs after the deadline (within one 3 ms slice of two tasks), although
  // it got far less than the 10 ms of CPU a plain 10 ms loop would need.
  EXPECT_GE(back, 10000000);
  EXPECT_LT(back, 13500000);
  EXPECT_LT(s.task("spin")->se.sum_exec_runtime, 8000000);
}

namespace {
// Each CPU_IDLE balance pass, with the CPU most recently kicked by an IPI.
struct KickAndBalance : obs::Observer {
  int last_kicked = -1;
  std::vector<std::pair<int, int>> idle_passes;  // (balancing CPU, last kicked CPU)
  void on_balance(int64_t, int cpu, int, int idle_type, bool, int, int64_t) override {
    if (idle_type == static_cast<int>(kernel::CpuIdleType::Idle)) idle_passes.emplace_back(cpu, last_kicked);
  }
  void on_ipi(int64_t, int, int target, bool sent) override {
    if (sent) last_kicked = target;
  }
};
}  // namespace

// run_rebalance_domains() (4.0 fair.c): the kicked CPU balances its own
// domains first; once it has pulled a task, nohz_idle_balance() stops
// (need_resched()) without balancing the other idle CPUs, and sets
// nohz.next_balance to the kicked CPU's next_balance, which is now a busy
// CPU's (4 ms x busy_factor 32 on this 4-CPU MC domain). So CPU 0's other
// extra hogs wait ~128 ms for the next kick while the CPUs no kick reached
// idle.
TEST(NohzBalance, AKickedCpuThatPullsForItselfBalancesNobodyElse) {
  TinySim s("1s4c1t", "linux-4.0");
  KickAndBalance seen;
  s.k.add_observer(&seen);
  spawn_hogs(s, {"h1", "h2", "h3", "h4"}, 500000000, 1000000, 0);
  s.k.run(100000000, 1000000);
  ASSERT_FALSE(seen.idle_passes.empty());
  for (const auto& [cpu, kicked] : seen.idle_passes) EXPECT_EQ(cpu, kicked) << "an idle CPU balanced on another's kick";
  // Which CPUs a kick reached by then depends on the interrupts' timing; each
  // kicked CPU runs what it pulled, and some CPU still idles.
  for (const auto& [cpu, kicked] : seen.idle_passes) EXPECT_NE(s.k.curr(cpu), nullptr) << "cpu " << cpu;
  int idle_at_100ms = 0;
  for (int c = 1; c < 4; ++c) idle_at_100ms += s.k.curr(c) == nullptr;
  EXPECT_GE(idle_at_100ms, 1) << "the kick after a self-pull waits for the busy interval";
  s.k.run(300000000, 1000000);
  for (int c = 0; c < 4; ++c) EXPECT_NE(s.k.curr(c), nullptr) << "cpu " << c;
  EXPECT_EQ(s.k.check_invariants(), "");
}

// The v4.1 order (NOHZ_ILB_OTHERS_FIRST): the kicked CPU balances the other
// idle CPUs before itself, so a kick that ends with work for the kicked CPU
// no longer pushes nohz.next_balance out to a busy interval, and the next
// tick's kick fills CPU 3 within milliseconds.
TEST(NohzBalance, WithTheV41OrderNoIdleCpuWaitsForABusyInterval) {
  TinySim s("1s4c1t", "linux-4.0", 1, "NOHZ_ILB_OTHERS_FIRST");
  spawn_hogs(s, {"h1", "h2", "h3", "h4"}, 500000000, 1000000, 0);
  s.k.run(20000000, 1000000);
  for (int c = 0; c < 4; ++c) EXPECT_NE(s.k.curr(c), nullptr) << "cpu " << c;
  EXPECT_EQ(s.k.check_invariants(), "");
}

namespace {
int64_t policy_stat(kernel::Kernel& k, const std::string& name) {
  for (const auto& [key, v] : k.policy().stats())
    if (key == name) return v;
  ADD_FAILURE() << "no policy counter " << name;
  return -1;
}
}  // namespace

namespace {
// Wakes at every multiple of `period`, runs `work`, sleeps again: tasks
// started together wake together and queue behind each other.
Co<void> periodic_worker(Proc& p, int64_t period, int64_t work, int rounds) {
  for (int i = 0; i < rounds; ++i) {
    co_await p.user(work);
    co_await p.nanosleep(period - p.now() % period);
  }
}
}  // namespace

// The load view sample: three hogs on CPU 0 against one on CPU 1 read
// heavier, so every sampled pair agrees with the queues.
TEST(LoadView, HogsReadAsHeavyAsTheirQueues) {
  TinySim s("1s2c1t", "linux-4.0");
  spawn_hogs(s, {"a", "b", "c"}, 40000000, 1000000, 0, true);
  spawn_hogs(s, {"d"}, 40000000, 1000000, 1, true);
  s.k.run(30000000, 1000000);
  EXPECT_GE(policy_stat(s.k, "load_view_pairs"), 25);
  EXPECT_EQ(policy_stat(s.k, "load_view_inversions"), 0);
}

// Three tasks that run 3 ms in 40 ms queue three deep on CPU 0 when they
// wake together, yet their decayed runnable averages add up to less than
// one hog's: the more loaded queue reads lighter.
TEST(LoadView, SleepyTasksQueuedTogetherReadLighterThanOneHog) {
  TinySim s("1s2c1t", "linux-4.0");
  for (const char* name : {"w1", "w2", "w3"})
    s.k.spawn(name, [](Proc& p) { return periodic_worker(p, 40000000, 3000000, 10); }, 0)->cpus_allowed = cpus({0});
  spawn_hogs(s, {"hog"}, 400000000, 1000000, 1, true);
  s.k.run(400000000, 1000000);
  const int64_t pairs = policy_stat(s.k, "load_view_pairs");
  const int64_t inversions = policy_stat(s.k, "load_view_inversions");
  // Ten wake-ups, each about three ticks deep. Only the first agrees with
  // the queues, before the averages decay from init_task_runnable_average()'s
  // full weight.
  EXPECT_GE(pairs, 20);
  EXPECT_GE(inversions, pairs - 4);
}

namespace {
// After each wake-up: the task's contribution, and what it would be if
// recomputed from its runnable average now.
Co<void> short_sleeps_recording_load(Proc& p, int* recomputed, int* stale) {
  for (int i = 0; i < 200; ++i) {
    co_await p.user(20000);
    co_await p.nanosleep(30000);
    const kernel::SchedEntity& se = p.task()->se;
    const auto fresh = static_cast<int64_t>(se.runnable_avg_sum * 1024 / (se.avg_period + 1));
    ++(se.load_avg_contrib == fresh ? *recomputed : *stale);
  }
}
}  // namespace

// 4.0's task load tracking is CONFIG_SMP, with or without group scheduling:
// update_entity_load_avg() recomputes a contribution only when
// __update_entity_runnable_avg() reports a period roll-over (avg_period
// % 1024 wrapping), so a task waking every ~100 us often keeps a stale one.
TEST(LoadTracking, AContributionIsRecomputedOnlyWhenAPeriodRollsOver) {
  TinySim s("1s1c1t", "linux-4.0");
  int recomputed = 0, stale = 0;
  s.k.spawn("sleepy", [&](Proc& p) { return short_sleeps_recording_load(p, &recomputed, &stale); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_GT(recomputed, 0);
  EXPECT_GT(stale, 20);
}

// schedstat: a task the balancer may not move counts in the task's
// nr_failed_migrations_affine, and a pass that finds only pinned tasks is
// "balanced" (out_all_pinned), not lb_failed.
TEST(Schedstat, PinnedTasksCountAsAffineFailuresNotAsFailedBalances) {
  TinySim s("1s2c1t", "linux-4.0");
  spawn_hogs(s, {"hogA", "hogB"}, 50000000, 1000000, 0, true);
  s.k.run(40000000, 1000000);
  EXPECT_EQ(s.task("hogA")->cpu, 0);
  EXPECT_EQ(s.task("hogB")->cpu, 0);
  EXPECT_GT(policy_stat(s.k, "failed_migrations_affine"), 0);
  EXPECT_EQ(policy_stat(s.k, "lb_failed_busy") + policy_stat(s.k, "lb_failed_idle") +
                policy_stat(s.k, "lb_failed_newidle"),
            0);
  EXPECT_EQ(s.k.check_invariants(), "");
}

namespace {
// `work` ns of work, then `nap` ns asleep, `rounds` times.
Co<void> napping_worker(Proc& p, int rounds, int64_t work, int64_t nap) {
  for (int i = 0; i < rounds; ++i) {
    co_await p.user(work);
    co_await p.nanosleep(nap);
  }
}
// Newidle passes on CPU 0 of 1s2c1t, in each of two seconds, while it
// works 50 us and sleeps 100 us at a time, and two workers pinned to CPU 1
// keep it overloaded: each sleeps 20 us every 2 ms, and each wakeup marks
// the root domain overloaded again (add_nr_running()), which a pass that
// finds only pinned tasks clears.
std::pair<int64_t, int64_t> newidle_passes_while_napping(const char* features) {
  TinySim s("1s2c1t", "linux-4.0", 1, features);
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  for (const char* name : {"busyA", "busyB"})
    s.k.spawn(name, [](Proc& p) { return napping_worker(p, 1000, 2000000, 20000); }, 1)->cpus_allowed = cpus({1});
  s.k.spawn("napper", [](Proc& p) { return napping_worker(p, 13000, 50000, 100000); }, 0)->cpus_allowed = cpus({0});
  s.k.run(1000000000, 100000000);
  const int64_t first = stats.summarize(s.k).balance["newidle"].attempts;
  s.k.run(2000000000, 100000000);
  EXPECT_EQ(s.k.check_invariants(), "");
  return {first, stats.summarize(s.k).balance["newidle"].attempts - first};
}
}  // namespace

// 4.0's idle_balance() skips a CPU whose average idle period is below
// sched_migration_cost (0.5 ms), so a CPU idling 100 us at a time seldom
// balances. 6.1's (NEWIDLE_V61) compares it only with the domain's costliest
// pass, so it tries, but NI_RANDOM tries each domain with the probability
// of its recent success: with nothing movable every pass fails, and the
// rate halves with every 512 tries.
TEST(Cfs, NewidleV61TriesShortIdlePeriodsLessAsItsPassesFail) {
  const auto [first40, second40] = newidle_passes_while_napping("");
  const auto [first61, second61] = newidle_passes_while_napping("NEWIDLE_V61");
  EXPECT_LT(first40 + second40, 20);
  EXPECT_GT(first61, 100);
  EXPECT_LT(second61 * 2, first61);
}

// Writing the granularity sysctls recomputes sched_nr_latency =
// DIV_ROUND_UP(latency, min_granularity) (sched_proc_update_handler()).
// Unscaled latency 40 ms and minimum granularity 3 ms give 14, so ten hogs
// on one CPU share a 40 ms period: 4 ms slices. A run starts when the tick
// handler that ended the one before has run (the switch comes on its return
// path), so the tick at its slice finds it just short and the next one ends
// it: 5 ms runs, about 200 in the hogs' second of work. With the boot value
// 8 the period would be 10 x 3 ms: 3 ms slices, 4 ms runs, about 250.
TEST(Kernel, WrittenGranularitiesRecomputeNrLatency) {
  TinySim s("1s1c1t", "linux-4.0", 1, "",
            {"sched_tunable_scaling=0", "sched_latency_ns=40000000", "sched_min_granularity_ns=3000000"});
  for (int i = 0; i < 10; ++i) s.k.spawn("hog", [](Proc& p) { return hog(p, 100000000, 1000000); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  int64_t runs = 0;
  for (auto* t : s.k.all_tasks()) runs += t->nr_switches;
  EXPECT_GT(runs, 180);
  EXPECT_LT(runs, 225);
}

namespace {
// Each wakeup's sched_waking -> sched_wakeup gap, and each run's delay as
// sched_info reads it (`queued`) beside the time since its wakeup and the
// time since it was last switched out (`true_wait`, for preempted tasks).
struct WakeAndRunDelays final : obs::Observer {
  struct Run {
    std::string comm;
    int64_t queued, since_wakeup, true_wait;
  };
  std::map<const kernel::Task*, int64_t> waking_at, switched_out_at;
  std::vector<int64_t> waking_to_queued;
  std::vector<Run> runs;
  int64_t sleeper_runtime = 0;  // what CFS charged the sleeper (sum_exec_runtime)
  void on_waking(int64_t t, int, const kernel::Task* p, int) override { waking_at[p] = t; }
  void on_wakeup(int64_t t, int, const kernel::Task* p, int, bool is_new) override {
    if (!is_new) waking_to_queued.push_back(t - waking_at[p]);
  }
  void on_switch(int64_t t, int, const kernel::Task* prev, obs::PrevState st, const kernel::Task*) override {
    if (prev && st == obs::PrevState::Preempted) switched_out_at[prev] = t;
  }
  void on_run_delay(int64_t t, int, const kernel::Task* p, int64_t queued, int64_t since_wakeup) override {
    const auto out = switched_out_at.find(p);
    runs.push_back({p->comm, queued, since_wakeup, out == switched_out_at.end() ? -1 : t - out->second});
    if (out != switched_out_at.end()) switched_out_at.erase(out);
  }
  [[nodiscard]] std::vector<Run> of(const std::string& comm) const {
    std::vector<Run> r;
    for (const auto& run : runs)
      if (run.comm == comm) r.push_back(run);
    return r;
  }
};

// The sleeper blocks on `sleeper_cpu` and the waker on CPU 0 wakes it,
// spends `tail_ns` more in the kernel (no rescheduling point) and goes on in
// user mode. On 1s2c1t the sleeper's previous CPU 1 is idle and shares the
// cache, so it goes back there.
constexpr int64_t kKernelTailNs = 5000;
WakeAndRunDelays observe_wakeup(const char* machine, const char* preset, const char* features, int sleeper_cpu,
                                int64_t tail_ns = kKernelTailNs) {
  TinySim s(machine, preset, 1, features);
  WakeAndRunDelays d;
  s.k.add_observer(&d);
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper(p, &wq, &flag); }, sleeper_cpu);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    co_await waker(p, &wq, &flag);
    co_await p.sys(tail_ns);
    co_await p.user(2000000);
  }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  d.sleeper_runtime = s.task("sleeper")->se.sum_exec_runtime;
  return d;
}
WakeAndRunDelays wake_across(const char* preset) { return observe_wakeup("1s2c1t", preset, "", 1); }
WakeAndRunDelays wake_on_one_cpu(const char* preset, const char* features) {
  return observe_wakeup("1s1c1t", preset, features, 0);
}
}  // namespace

// try_to_wake_up() (core.c 4.0) runs select_task_rq() and its bookkeeping
// before ttwu_queue() enqueues the wakee; 2.4 enqueues first
// (add_to_runqueue()) and looks for a CPU after (reschedule_idle()).
TEST(Wakeup, TheWakeeIsQueuedOnlyAfterTheWakersPlacementWork) {
  const int64_t ttwu_base = hw::load_machine("1s2c1t").costs.ttwu_base;
  const auto cfs = wake_across("linux-4.0");
  ASSERT_EQ(cfs.waking_to_queued.size(), 1U);
  EXPECT_GE(cfs.waking_to_queued[0], ttwu_base * 97 / 100);  // cost jitter is +-2%
  const auto o24 = wake_across("linux-2.4.19");
  ASSERT_EQ(o24.waking_to_queued.size(), 1U);
  EXPECT_EQ(o24.waking_to_queued[0], 0);
}

// A wakee that wakes an idle CPU is switched in on the rq clock of its own
// enqueue (4.0: the skip check_preempt_curr() requests for the idle task;
// 3.10: its put_prev_task() leaves the clock alone), so schedstat/taskstats
// read no delay although the idle exit took time. 2.4 reads the time.
TEST(Schedstat, AWakeeThatWakesAnIdleCpuReadsNoDelay) {
  for (const char* preset : {"linux-4.0", "linux-3.10"}) {
    const auto runs = wake_across(preset).of("sleeper");
    ASSERT_EQ(runs.size(), 2U) << preset;  // its start, and after the wakeup
    EXPECT_GT(runs[1].since_wakeup, 0) << preset;
    EXPECT_EQ(runs[1].queued, 0) << preset;
  }
  const auto runs24 = wake_across("linux-2.4.19").of("sleeper");
  ASSERT_EQ(runs24.size(), 2U);
  EXPECT_GT(runs24[1].queued, 0);
  EXPECT_LE(runs24[1].queued, runs24[1].since_wakeup);
}


// Without a wakeup preemption nothing requests the skip: the wakee's wait
// behind the waker (until the tick preempts it) is read in full, from its
// enqueue. On its busy CPU the waker enqueues it at the lock, before the
// activation and the check that sched_wakeup traces (ttwu_do_activate():
// activate_task(), then ttwu_do_wakeup()), so the wait reads that much
// longer than from the trace's wakeup.
TEST(Schedstat, AWakeeQueuedBehindItsWakerReadsItsWholeWait) {
  const auto d = wake_on_one_cpu("linux-4.0", "NO_WAKEUP_PREEMPTION");
  const auto runs = d.of("sleeper");
  ASSERT_EQ(runs.size(), 2U);
  ASSERT_EQ(d.waking_to_queued.size(), 1U);
  EXPECT_GT(runs[1].queued, 100000);
  const auto& c = hw::load_machine("1s1c1t").costs;
  const int64_t from_the_check = runs[1].since_wakeup - d.waking_to_queued[0];
  EXPECT_GE(runs[1].queued - from_the_check, (c.rq_lock_hold + c.ttwu_activate) * 97 / 100);  // cost jitter is +-2%
  EXPECT_LE(runs[1].queued - from_the_check, (c.rq_lock_hold + c.ttwu_activate) * 103 / 100);
}

// A wakee that preempts its waker runs on its enqueue's clock (no delay),
// and the preempted waker starts waiting on that earlier clock, so its own
// wait reads longer, by the kernel time between the wakeup and the switch.
TEST(Schedstat, APreemptingWakeeReadsNoDelayAndItsVictimReadsMore) {
  for (const char* preset : {"linux-4.0", "linux-3.10"}) {
    const auto d = wake_on_one_cpu(preset, "");
    const auto sleeper_runs = d.of("sleeper");
    ASSERT_EQ(sleeper_runs.size(), 2U) << preset;
    EXPECT_GT(sleeper_runs[1].since_wakeup, 0) << preset;
    EXPECT_EQ(sleeper_runs[1].queued, 0) << preset;
    // The waker's run after the sleeper's: it was preempted by the wakeup
    // (an earlier run of it follows a tick preemption, read in full).
    const auto waker_runs = d.of("waker");
    ASSERT_GE(waker_runs.size(), 2U) << preset;
    const auto& victim = waker_runs.back();
    ASSERT_GE(victim.true_wait, 0) << preset << ": the wakeup did not preempt the waker";
    EXPECT_GE(victim.queued, victim.true_wait + kKernelTailNs * 98 / 100) << preset;
  }
}

namespace {
// The instants of tick preemptions (involuntary switches) on each CPU of a
// 2-CPU box with two hogs per CPU, as phases within the tick period, less
// the tick handler's work, which runs before the switch (the handler, then
// the return path's schedule()): each phase is then in [0, the handler's
// jitter].
std::vector<std::set<int64_t>> tick_preemption_phases(const char* preset) {
  TinySim s("1s2c1t", preset);
  const auto& costs = s.machine.costs();
  const int64_t least_handler = costs.tick_handler * (1000 - costs.cost_jitter_permille) / 1000;
  struct Preemptions final : obs::Observer {
    std::vector<std::set<int64_t>> at{2};
    void on_switch(int64_t t, int cpu, const kernel::Task*, obs::PrevState st, const kernel::Task*) override {
      if (st == obs::PrevState::Preempted) at[static_cast<size_t>(cpu)].insert(t);
    }
  } seen;
  s.k.add_observer(&seen);
  for (int i = 0; i < 4; ++i)
    s.k.spawn("hog" + std::to_string(i), [](Proc& p) { return hog(p, 200000000, 1000000); }, i % 2);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  std::vector<std::set<int64_t>> phases(2);
  for (size_t c = 0; c < 2; ++c)
    for (int64_t t : seen.at[c]) phases[c].insert(t % s.k.config().tick_ns() - least_handler);
  return phases;
}
}  // namespace

// 3.x/4.x tick on the jiffy grid on every CPU (tick_setup_sched_timer(),
// skew_tick off); 2.4 staggers CPU i's APIC timer by (i + 1)/(CPUs + 1) of
// the period.
TEST(Tick, CpusTickTogetherFrom3xAndStaggeredOn24) {
  const hw::Machine machine(hw::load_machine("1s2c1t"));
  const int64_t handler_jitter = machine.costs().tick_handler * machine.costs().cost_jitter_permille * 2 / 1000;
  ASSERT_GT(handler_jitter, 0);
  const auto within = [&](const std::set<int64_t>& phases, int64_t tick_at) {
    return !phases.empty() && *phases.begin() >= tick_at && *phases.rbegin() <= tick_at + handler_jitter;
  };
  const auto cfs = tick_preemption_phases("linux-4.0");
  EXPECT_TRUE(within(cfs[0], 0)) << ::testing::PrintToString(cfs[0]);
  EXPECT_TRUE(within(cfs[1], 0)) << ::testing::PrintToString(cfs[1]);
  const auto o24 = tick_preemption_phases("linux-2.4.19");
  const int64_t period = kernel::KernelConfig(kernel::load_preset("linux-2.4.19")).tick_ns();
  EXPECT_TRUE(within(o24[0], period / 3)) << ::testing::PrintToString(o24[0]);
  EXPECT_TRUE(within(o24[1], period / 3 * 2)) << ::testing::PrintToString(o24[1]);
}

// The two versions' skips differ while the preempted waker stays in the
// kernel: 4.0 only requests the skip (RQCF_REQ_SKIP), so the ticks in
// between still move the clock and the wakee reads the time up to the last
// one; 3.10's skip_clock_update stops every update until schedule(), so the
// wakee reads none and the waker's whole tail lands on its own wait.
TEST(Schedstat, ThreeTenSkipsTheTicksBeforeTheSwitchAndFourZeroDoesNot) {
  constexpr int64_t kLongTailNs = 3000000;  // three ticks at HZ=1000
  const auto v40 = observe_wakeup("1s1c1t", "linux-4.0", "", 0, kLongTailNs);
  const auto v310 = observe_wakeup("1s1c1t", "linux-3.10", "", 0, kLongTailNs);
  const auto s40 = v40.of("sleeper"), s310 = v310.of("sleeper");
  ASSERT_EQ(s40.size(), 2U);
  ASSERT_EQ(s310.size(), 2U);
  EXPECT_GT(s40[1].queued, 1000000);
  EXPECT_LT(s40[1].queued, s40[1].since_wakeup);
  EXPECT_EQ(s310[1].queued, 0);
  EXPECT_GE(v310.of("waker").back().queued, kLongTailNs * 97 / 100);  // cost jitter is +-2%
}

namespace {
int64_t sleeper_charged(const char* preset, const char* features, int64_t tail_ns) {
  return observe_wakeup("1s1c1t", preset, features, 0, tail_ns).sleeper_runtime;
}
}  // namespace

namespace {
// With `rerun_us` >= 0 the sleeper is woken twice: after the first wakeup it
// runs that long and sleeps again, and the waker wakes it 1 ms later.
Co<void> sleeper_woken_in_rounds(Proc& p, kernel::WaitQueue* wq, const int* round, int64_t rerun_us) {
  co_await p.wait_event(*wq, [round] { return *round >= 1; }, "test_wait");
  if (rerun_us >= 0) {
    co_await p.user(rerun_us * 1000);
    co_await p.wait_event(*wq, [round] { return *round >= 2; }, "test_wait");
  }
  co_await p.user(1000);
}
Co<void> waker_in_rounds(Proc& p, kernel::WaitQueue* wq, int* round, int waker_ms, bool twice) {
  for (int i = 0; i < waker_ms; ++i) co_await p.user(1000000);
  *round = 1;
  co_await p.wake_up(*wq, 1, 0);
  if (twice) {
    co_await p.user(1000000);
    *round = 2;
    co_await p.wake_up(*wq, 1, 0);
  }
  co_await p.user(2000000);
}

// A sleeper on one CPU, woken by a waker that ran `waker_ms` first (>= 2:
// the sleeper must get to sleep first), and once more if `rerun_us` >= 0;
// the CFS counters at the end.
std::map<std::string, int64_t> credit_and_lead_after(int waker_ms, int64_t rerun_us = -1) {
  TinySim s("1s1c1t", "linux-4.0");
  kernel::WaitQueue wq;
  int round = 0;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper_woken_in_rounds(p, &wq, &round, rerun_us); }, 0);
  s.k.spawn("waker", [&](Proc& p) { return waker_in_rounds(p, &wq, &round, waker_ms, rerun_us >= 0); }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return s.policy_counters();
}

// Each named counter has exactly its value; a miss names the counter, and a
// counter the policy does not report fails rather than reading as 0.
void expect_counters(const std::map<std::string, int64_t>& st,
                     std::initializer_list<std::pair<const char*, int64_t>> want) {
  for (const auto& [name, value] : want) {
    const auto it = st.find(name);
    if (it == st.end()) {
      ADD_FAILURE() << "no counter " << name;
      continue;
    }
    EXPECT_EQ(it->second, value) << name;
  }
}
}  // namespace

// place_entity() (fair.c 4.0) credits a wakee that slept while its CPU ran
// on with at most sched_latency/2 of vruntime (GENTLE_FAIR_SLEEPERS; 3 ms on
// one CPU, where the latency is not scaled up), and check_preempt_wakeup()
// compares it with the running task: on one CPU with only the waker running,
// min_vruntime is the waker's vruntime, so the lead equals the credit. Past
// the 1 ms wakeup granularity the wakee preempts. The statistics sum the
// credit and the lead (signed), so that a run's means can be read off them.
TEST(Cfs, TheStatisticsSumTheSleeperCreditAndTheRunningTasksLead) {
  auto st = credit_and_lead_after(10);  // long enough to reach the cap
  expect_counters(st, {{"wakeups_placed", 1}, {"wakeups_lag_capped", 1}, {"wakeup_credit_us", 3000}});
  expect_counters(st, {{"wakeup_preempt_checks", 1}, {"wakeup_preemptions", 1}});
  EXPECT_EQ(st.at("wakeup_preempt_lead_us"), st.at("wakeup_credit_us"));  // one CPU: the lead is the credit
  // A shorter sleep earns less than the cap, still equal to the lead.
  st = credit_and_lead_after(5);
  expect_counters(st, {{"wakeups_placed", 1}, {"wakeups_lag_capped", 0}});
  EXPECT_GT(st["wakeup_credit_us"], 0);
  EXPECT_LT(st["wakeup_credit_us"], 3000);
  EXPECT_NEAR(st["wakeup_preempt_lead_us"], st["wakeup_credit_us"], 1);
  EXPECT_EQ(st["wakeup_preemptions"], 1);  // ~2 ms, past the 1 ms granularity
}

namespace {
// `body` on CPU 0 alone (sched_setaffinity() first).
Co<void> on_cpu0(Proc& p, kernel::Program body) {
  hw::CpuMask cpu0;
  cpu0.set(0);
  co_await p.sched_setaffinity(cpu0);
  co_await body(p);
}

// credit_and_lead_after(10) with `hogs` more tasks on the CPU: every task
// kept on CPU 0 of `machine`.
// `woken`, when given, gets the checks of the sleeper's own wakeup.
std::map<std::string, int64_t> buddies_with(int hogs, const std::string& features = "",
                                            const std::string& machine = "1s1c1t",
                                            const std::vector<std::string>& sysctls = {},
                                            kernel::WakeupCheckTally* woken = nullptr) {
  TinySim s(machine, "linux-4.0", 1, features, sysctls);
  kernel::WaitQueue wq;
  int round = 0;
  s.k.spawn("sleeper", [&](Proc& p) {
    return on_cpu0(p, [&](Proc& q) { return sleeper_woken_in_rounds(q, &wq, &round, -1); });
  }, 0);
  s.k.spawn("waker", [&](Proc& p) {
    return on_cpu0(p, [&](Proc& q) { return waker_in_rounds(q, &wq, &round, 10, false); });
  }, 0);
  for (int i = 0; i < hogs; ++i)
    s.k.spawn("hog" + std::to_string(i), [](Proc& p) {
      return on_cpu0(p, [](Proc& q) { return hog(q, 40000000, 100000); });
    }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  if (woken)
    for (const auto& [pair, tally] : s.k.policy().wakeup_checks_by_wchan())
      if (pair.first == "test_wait") *woken += tally;
  return s.policy_counters();
}
}  // namespace

// check_preempt_wakeup() (4.0 fair.c) makes the preempted task the last
// buddy only on a queue of sched_nr_latency tasks or more (`scale`; 8 on one
// CPU: 6 ms over 0.75 ms). The sleeper's one wakeup preempts its waker with
// five hogs beside them, seven tasks queued with the wakee: no last buddy;
// with six hogs, eight: the waker becomes it. The wakee runs 1 us and exits,
// and pick_next_entity() gives the CPU back to the waker rather than the
// leftmost hog: the waker is not a wakeup granularity ahead of it.
TEST(Cfs, APreemptedTaskBecomesTheLastBuddyOnlyOnAQueueOfSchedNrLatency) {
  // The one check sees the queue's depth, the wakee counted.
  expect_counters(buddies_with(5), {{"wakeup_preempt_checks", 1}, {"wakeup_preempt_checks_queued", 7},
                                    {"wakeup_preempt_checks_scaled", 0}, {"wakeup_preemptions", 1},
                                    {"last_buddies_set", 0}, {"last_buddy_picks", 0}});
  expect_counters(buddies_with(6), {{"wakeup_preempt_checks", 1}, {"wakeup_preempt_checks_queued", 8},
                                    {"wakeup_preempt_checks_scaled", 1}, {"wakeup_preemptions", 1},
                                    {"last_buddies_set", 1}, {"last_buddy_picks", 1}});
}

// WAKEUP_GRAN_BY_NR_RUNNING (Mel Gorman's v1, 2021, not merged) multiplies
// check_preempt_wakeup()'s granularity by min(nr_running / 2,
// sched_nr_latency) of the running task's queue. Each case is the
// sleeper's one wakeup on CPU 0, beside its waker and `hogs` hogs, so the
// queue holds hogs + 2 tasks; the lead is the sleeper's credit plus the
// waker's vruntime above min_vruntime, and the patch leaves it as it is.
namespace {
kernel::WakeupCheckTally sleepers_check(int hogs, const std::string& features, const std::string& machine,
                                        const std::vector<std::string>& sysctls = {}) {
  kernel::WakeupCheckTally woken;
  buddies_with(hogs, features, machine, sysctls, &woken);
  EXPECT_EQ(woken.checks, 1) << hogs << " hogs, " << machine << " " << features;
  return woken;
}
constexpr const char* kScaled = "WAKEUP_GRAN_BY_NR_RUNNING";
}  // namespace

// One CPU: a 1 ms granularity, a 3 ms credit. Beside one hog the factor
// is 1 and the sleeper's 5.0 ms lead preempts as without the patch; beside
// three the factor is 2 and its 4.8 ms lead still preempts; beside six the
// factor is 4 and its 3.91 ms lead no longer does.
// rq->avg_idle's update_avg() shifts the difference right by 3: a sample
// 9 ns below the average lowers it by 2 (-9 >> 3), where division by 8
// (the model before stop 99) lowered it by 1; above the average both give
// the eighth rounded down.
TEST(Cfs, AvgIdleUpdateRoundsTheEighthDown) {
  EXPECT_EQ(kernel::update_avg(100, 91), 98);
  EXPECT_EQ(kernel::update_avg(100, 99), 99);
  EXPECT_EQ(kernel::update_avg(100, 109), 101);
  EXPECT_EQ(kernel::update_avg(100, 107), 100);
  EXPECT_EQ(kernel::update_avg(1000000, 0), 875000);
}

TEST(Cfs, WakeupGranByNrRunningScalesTheGranularityWithTheQueue) {
  for (const auto& [hogs, lead_us, preempts] :
       std::vector<std::tuple<int, int64_t, int64_t>>{{1, 4995, 1}, {3, 4787, 1}, {6, 3910, 0}}) {
    const auto stock = sleepers_check(hogs, "", "1s1c1t");
    const auto scaled = sleepers_check(hogs, kScaled, "1s1c1t");
    EXPECT_NEAR(stock.lead_ns / 1000, lead_us, 1) << hogs;
    EXPECT_EQ(scaled.lead_ns, stock.lead_ns) << hogs;
    EXPECT_EQ(stock.preemptions, 1) << hogs;
    EXPECT_EQ(scaled.preemptions, preempts) << hogs;
  }
}

// The factor multiplies the granularity as boot scaling left it: on 8 CPUs
// 4 ms (and a 12 ms credit, the sleeper's lead about 10 ms). Beside one hog
// the factor is 1, so 4 ms, and it preempts; beside four it is 3, so 12 ms,
// and it does not, where the unscaled 1 ms sysctl times 3 would have let it.
TEST(Cfs, WakeupGranByNrRunningMultipliesTheBootScaledGranularity) {
  for (const auto& [hogs, preempts] : std::vector<std::pair<int, int64_t>>{{1, 1}, {4, 0}}) {
    const auto stock = sleepers_check(hogs, "", "1s4c2t");
    const auto scaled = sleepers_check(hogs, kScaled, "1s4c2t");
    EXPECT_GT(stock.lead_ns, 9'900'000) << hogs;
    EXPECT_LT(stock.lead_ns, 12'000'000) << hogs;
    EXPECT_EQ(stock.preemptions, 1) << hogs;
    EXPECT_EQ(scaled.preemptions, preempts) << hogs;
  }
}

// The factor stops at sched_nr_latency (8 on one CPU at the default
// latencies; writing the wakeup granularity does not change it). Twenty
// tasks queued, a lead of 3.09 ms: with 0.35 ms written the scaled
// granularity is 8 x 0.35 = 2.8 ms and the sleeper preempts (uncapped, 10 x
// 0.35 = 3.5 ms, it would not); with 0.4 ms it is 3.2 ms and it does not.
TEST(Cfs, WakeupGranByNrRunningCapsTheFactorAtSchedNrLatency) {
  for (const auto& [gran, preempts] : std::vector<std::pair<std::string, int64_t>>{
           {"sched_wakeup_granularity_ns=350000", 1}, {"sched_wakeup_granularity_ns=400000", 0}}) {
    const auto stock = sleepers_check(18, "", "1s1c1t", {gran});
    const auto scaled = sleepers_check(18, kScaled, "1s1c1t", {gran});
    EXPECT_NEAR(stock.lead_ns / 1000, 3094, 1) << gran;
    EXPECT_EQ(stock.preemptions, 1) << gran;
    EXPECT_EQ(scaled.preemptions, preempts) << gran;
  }
}

// The sleeper credit's two parts. The first wakeup's credit is what the
// queue's min_vruntime moved on during the sleep, the waker's 7 ms (the
// sleeper first sleeps when the waker's slice ends, 3 ms in: two tasks share
// the 6 ms latency of one CPU), capped at 3 ms. The wakee, placed 3 ms behind
// min_vruntime, runs `rerun_us` and sleeps again still behind it (min_vruntime
// never moves back): that is its lag at sleep, and the waker's next 1 ms is
// the advance. 4.0's place_entity() only raises a vruntime, so a wakee that
// runs less than its credit carries the rest to its next wakeup: after a
// 100 us run the second credit is capped again, after 1.5 ms it is the
// 1.5 ms carried plus the 1 ms advance.
TEST(Cfs, TheSleeperCreditSplitsIntoTheLagAtSleepAndTheQueuesAdvance) {
  auto st = credit_and_lead_after(10, 100);
  expect_counters(st, {{"wakeups_placed", 2}, {"wakeups_lag_capped", 2}, {"wakeup_credit_us", 6000}});
  // Both capped: no uncapped wakeup's credit to split.
  for (const char* part : {"uncapped_lag_at_sleep_us", "uncapped_queue_advance_us", "uncapped_sleep_us"})
    EXPECT_EQ(st.at(part), 0) << part;

  st = credit_and_lead_after(10, 1500);
  expect_counters(st, {{"wakeups_placed", 2}, {"wakeups_lag_capped", 1}});
  EXPECT_NEAR(st["uncapped_lag_at_sleep_us"], 3000 - 1500, 50);
  EXPECT_NEAR(st["uncapped_sleep_us"], 1000, 50);
  // min_vruntime follows the waker alone meanwhile, at the same rate.
  EXPECT_NEAR(st["uncapped_queue_advance_us"], st["uncapped_sleep_us"], 2);
  EXPECT_NEAR(st["wakeup_credit_us"],
              3000 + st["uncapped_lag_at_sleep_us"] + st["uncapped_queue_advance_us"], 2);
}

namespace {
// A hog that naps 100 us after each 5 ms of work, so that it is picked
// afresh (set_next_entity() restarts its slice) every 5.1 ms.
Co<void> napping_hog(Proc& p, int chunks) {
  for (int i = 0; i < chunks; ++i) {
    co_await p.user(5000000);
    co_await p.nanosleep(100000);
  }
}
Co<void> late_riser(Proc& p, int64_t sleep_ns, int64_t run_ns) {
  co_await p.nanosleep(sleep_ns);
  co_await p.user(run_ns);
}
struct TickPreemptions {
  int64_t checks = 0, slice_spent = 0, lead = 0, involuntary = 0;
};
// The tick counters, and the involuntary switches the run had, on one CPU
// (latency 6 ms, minimum granularity 0.75 ms, HZ=1000).
TickPreemptions tick_preemptions(TinySim& s) {
  struct Involuntary final : obs::Observer {
    int64_t n = 0;
    void on_switch(int64_t, int, const kernel::Task*, obs::PrevState st, const kernel::Task*) override {
      if (st == obs::PrevState::Preempted) ++n;
    }
  } seen;
  s.k.add_observer(&seen);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto st = s.policy_counters();
  return {st.at("tick_preempt_checks"), st.at("tick_preemptions_slice_spent"), st.at("tick_preemptions_lead"),
          seen.n};
}
}  // namespace

// check_preempt_tick() (4.0 fair.c) preempts for one of two reasons, and the
// statistics count each. Two hogs share one CPU's 6 ms period, 3 ms a slice:
// each tick past a slice spent preempts, and every involuntary switch is one
// of those. A napping hog is picked afresh every 5.1 ms, so it never spends
// a 3 ms slice at a tick while the late riser (woken by its timer 12 ms in,
// 1.8 ms into the hog's third chunk) waits; with no wakeup preemption and
// no gentle sleepers the riser is placed a whole latency, 6 ms, behind the
// hog. At the next tick past the 0.75 ms granularity the hog leads it by
// more than a slice: that preempts.
TEST(Cfs, TheTickPreemptsForASliceSpentOrForALeadPastASlice) {
  TinySim hogs("1s1c1t", "linux-4.0");
  for (int i = 0; i < 2; ++i)
    hogs.k.spawn("hog" + std::to_string(i), [](Proc& p) { return hog(p, 30000000, 100000); }, 0);
  const TickPreemptions even = tick_preemptions(hogs);
  EXPECT_EQ(even.lead, 0);
  EXPECT_EQ(even.involuntary, even.slice_spent);
  EXPECT_GE(even.checks, 50);  // a tick a ms while both run

  // The what-if tick_slice_latency_ns gives the tick alone a 12 ms period:
  // 6 ms slices. A turn ends at the first tick past the slice, so the two
  // hogs' 60 ms make 15-20 turns of 3-4 ms at the stock slice and 8-10 of
  // 6-7 ms at the longer one.
  TinySim longer("1s1c1t", "linux-4.0", 1, "", {"tick_slice_latency_ns=12000000"});
  for (int i = 0; i < 2; ++i)
    longer.k.spawn("hog" + std::to_string(i), [](Proc& p) { return hog(p, 30000000, 100000); }, 0);
  const TickPreemptions halved = tick_preemptions(longer);
  EXPECT_GE(even.slice_spent, 14);
  EXPECT_LE(even.slice_spent, 20);
  EXPECT_GE(halved.slice_spent, 7);
  EXPECT_LE(halved.slice_spent, 10);
  EXPECT_EQ(halved.involuntary, halved.slice_spent);

  TinySim riser("1s1c1t", "linux-4.0", 1, "NO_WAKEUP_PREEMPTION,NO_GENTLE_FAIR_SLEEPERS");
  riser.k.spawn("hog", [](Proc& p) { return napping_hog(p, 6); }, 0);
  riser.k.spawn("riser", [](Proc& p) { return late_riser(p, 12000000, 1000000); }, 0);
  const TickPreemptions led = tick_preemptions(riser);
  EXPECT_EQ(led.lead, 1);
  EXPECT_EQ(led.slice_spent, 0);
  EXPECT_EQ(led.involuntary, 1);
}

// update_curr() charges on rq_clock_task(), which the skip holds at the
// wakee's enqueue: the waker's kernel time between a preempting wakeup and
// the switch is charged to the wakee (set_next_entity() starts it on that
// clock). Without wakeup preemption nothing requests the skip, and the
// waker pays for its own tail. On 4.0 the ticks in a long tail still move
// the clock, so only the time since the last one moves over; 3.10's skip
// moves the whole tail (the difference commit 9edfbfed3f54 made).
TEST(Cfs, AWakeeThatPreemptsItsWakerIsChargedTheWakersTail) {
  constexpr int64_t kTailNs = 200000;
  EXPECT_GE(sleeper_charged("linux-4.0", "", kTailNs), kTailNs * 97 / 100);  // cost jitter is +-2%
  EXPECT_LT(sleeper_charged("linux-4.0", "NO_WAKEUP_PREEMPTION", kTailNs), kTailNs / 4);
  constexpr int64_t kLongTailNs = 3000000;  // three ticks at HZ=1000
  EXPECT_LT(sleeper_charged("linux-4.0", "", kLongTailNs), 1000000 + kTailNs);
  EXPECT_GE(sleeper_charged("linux-3.10", "", kLongTailNs), kLongTailNs * 97 / 100);
}

namespace {
struct StopperRuntimes {
  int64_t mover, sleeper;
};
// The mover wakes the sleeper on CPU 0, which preempts it; it spends
// `kMoverTailNs` more in the kernel and goes on into execve(), whose
// sched_exec() sends it to the idle CPU 1 by the stopper, with no
// rescheduling point in between.
constexpr int64_t kMoverTailNs = 500000;
hw::CpuMask only(int cpu) {
  hw::CpuMask m;
  m.set(cpu);
  return m;
}
// sleeper(), pinned to `cpu` first.
Co<void> pinned_sleeper(Proc& p, int cpu, kernel::WaitQueue* wq, bool* flag) {
  const hw::CpuMask mask = only(cpu);
  co_await p.sched_setaffinity(mask);
  co_await sleeper(p, wq, flag);
}
// The plainest wakeup: a sleeper pinned to `sleeper_cpu`, woken once by
// waker() on CPU 0; runs `s` to the end and checks its invariants.
void run_wakeup_of_pinned_sleeper(TinySim& s, int sleeper_cpu) {
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return pinned_sleeper(p, sleeper_cpu, &wq, &flag); }, sleeper_cpu);
  s.k.spawn("waker", [&](Proc& p) { return waker(p, &wq, &flag); }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
}
StopperRuntimes stopper_runtimes(const char* preset) {
  TinySim s("1s2c1t", preset);
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return pinned_sleeper(p, 0, &wq, &flag); }, 0);
  s.k.spawn("mover", [&](Proc& p) -> Co<void> {
    co_await waker(p, &wq, &flag);
    co_await p.sys(kMoverTailNs);
    co_await p.exec();
  }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_EQ(s.task("mover")->cpu, 1);
  return {s.task("mover")->se.sum_exec_runtime, s.task("sleeper")->se.sum_exec_runtime};
}
}  // namespace

// The stopper's wakeup enqueues it, which moves rq->clock on 4.0 (only a
// skip request is pending), so put_prev_task() charges the mover its own
// kernel tail; the stopper's pick clears the skip before move_queued_task()
// dequeues, and the sleeper switched in after it starts on a current clock.
// On 3.10 the wakeup's skip_clock_update stops the stopper's update too: the
// tail goes to the stopper (put_prev_task_stop() counts its runtime; the
// model has no stopper task), not to the mover or the sleeper.
TEST(Cfs, ATaskTheStopperMovesIsChargedItsOwnTailOnFourZero) {
  constexpr int64_t kMoverUserNs = 10000000;  // waker()'s user work
  const auto moved40 = stopper_runtimes("linux-4.0");
  EXPECT_LT(moved40.sleeper, kMoverTailNs / 4);
  EXPECT_GE(moved40.mover, kMoverUserNs + kMoverTailNs * 3 / 4);
  const auto moved310 = stopper_runtimes("linux-3.10");
  EXPECT_LT(moved310.sleeper, kMoverTailNs / 4);
  EXPECT_LT(moved310.mover, moved40.mover - kMoverTailNs * 3 / 4);
}

// A wakeup onto another CPU of the same LLC enqueues under that CPU's
// rq->lock (4.0 core.c ttwu_queue()); one onto another LLC is queued on the
// target's wake list, and the target's IPI handler takes its own lock
// (sched_ttwu_pending()). While a third CPU holds the lock, the one that
// enqueues spins: the waker, or the target.
struct LockSpins {
  int64_t woken_at = -1, waker_spin = 0, target_spin = 0;
};
constexpr int64_t kHeldFromNs = 5000000, kHeldForNs = 8000000;
LockSpins spins_behind_a_held_lock(const char* machine, int target) {
  TinySim s(machine, "linux-4.0");
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return pinned_sleeper(p, target, &wq, &flag); }, target);
  s.k.spawn("holder", [](Proc& p) { return hog(p, 20000000, 1000000); }, 1);
  LockSpins out;
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    for (int i = 0; i < 10; ++i) co_await p.user(1000000);
    out.woken_at = s.k.now_ns();
    flag = true;
    co_await p.wake_up(wq, 1, 0);
  }, 0);
  s.k.events().schedule(sim::Time(kHeldFromNs), sim::Phase::Control, [&] { s.k.lock_rq(target, 1, kHeldForNs, kernel::CostPath::RqLock); });
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  out.waker_spin = s.k.accounting(0).spin_ns;
  out.target_spin = s.k.accounting(target).spin_ns;
  return out;
}

TEST(Cfs, WhoeverEnqueuesAWakeeSpinsOnTheTargetsRunqueueLock) {
  // Same LLC: the waker spins from its wakeup (after the wake_up() system
  // call's entry) until the holder lets go.
  const auto same_llc = spins_behind_a_held_lock("1s4c1t", 2);
  ASSERT_GT(same_llc.woken_at, kHeldFromNs);
  ASSERT_LT(same_llc.woken_at, kHeldFromNs + kHeldForNs);
  const int64_t left_held = kHeldFromNs + kHeldForNs - same_llc.woken_at;
  EXPECT_GE(same_llc.waker_spin, left_held - 10000);
  EXPECT_LE(same_llc.waker_spin, left_held);
  // Another socket: the waker only queues the wakee and sends the IPI; the
  // target spins (in its handler, or in the schedule() after it, which
  // would spin anyway: the two are not told apart here). On 4.0 the idle
  // target in MWAIT is woken by the flag store (set_nr_if_polling()), not an
  // IPI, and spins once out of its idle state: up to C6's 133 us exit on this
  // profile, or less when a tick's exit is already under way.
  const auto other_llc = spins_behind_a_held_lock("2s2c1t", 2);
  EXPECT_EQ(other_llc.waker_spin, 0);
  EXPECT_GE(other_llc.target_spin, kHeldFromNs + kHeldForNs - other_llc.woken_at - 140000);
}

// An IPI costs the CPU it lands on the interrupt's entry and return
// (`ipi_handler`), whatever runs there: the task it interrupts finishes that
// much later. An idle CPU in MWAIT gets no IPI for a queued wakeup on 4.0,
// only the flag store (set_nr_if_polling()), and so pays nothing.
struct IpisOnto {
  int ipis = 0, ipis_anywhere = 0;
  int64_t ipi_work_ns = 0;    // everything charged to IPIs, on either side
  int64_t hog_exit_ns = -1;   // the task on the target CPU
  int64_t sleeper_woken_at = -1, hog_in_at = -1;
  int64_t hog_preempted_at = -1, hog_run_ns = -1;  // when the woken sleeper took CPU 2, and the hog's run as CFS counted it
};
// `cost` is the handler cost set to `handler_ns`: the IPI's own entry and
// return (`ipi_handler`), or the wake list's activation inside
// irq_enter()/irq_exit() (`ttwu_activate`). `waker_ms`: how long the waker
// runs before its wakeup; the sleeper must have gone to sleep by then, which
// takes it a slice of the hog's CPU.
IpisOnto wake_list_ipis_onto_cpu2(int64_t handler_ns, bool busy, bool irq_time_accounting = false,
                                  int waker_ms = 10, const std::string& cost = "ipi_handler") {
  const auto profile = std::filesystem::path(::testing::TempDir()) /
                       ("schedlab_" + cost + "_" + std::to_string(handler_ns) + ".toml");
  std::ofstream(profile) << "[machine]\nextends = \"haswell-2s8c2t\"\nname = \"ipi\"\ntopology = \"2s2c1t\"\n"
                         << "[costs]\n" << cost << " = { value = " << handler_ns << ", unit = \"ns\", source = \"test\" }\n"
                         << "cost_jitter_permille = { value = 0, unit = \"permille\", source = \"test\" }\n";
  TinySim s(profile.string(), "linux-4.0", 1, "",
            {std::string("irq_time_accounting=") + (irq_time_accounting ? "1" : "0")});
  struct Seen final : obs::Observer {
    IpisOnto out;
    void on_ipi(int64_t, int, int target, bool sent) override {
      out.ipis += sent && target == 2;
      out.ipis_anywhere += sent;
    }
    void on_exit(int64_t t, int, const kernel::Task* p) override {
      if (p->comm == "hog") out.hog_exit_ns = t;
    }
    void on_wakeup(int64_t t, int, const kernel::Task* p, int target, bool is_new) override {
      if (!is_new && p->comm == "sleeper" && target == 2 && out.sleeper_woken_at < 0) out.sleeper_woken_at = t;
    }
    void on_switch(int64_t t, int c, const kernel::Task* prev, obs::PrevState st, const kernel::Task* next) override {
      if (c != 2 || !next) return;
      if (next->comm == "hog" && out.hog_preempted_at < 0) out.hog_in_at = t;  // its last switch-in before
      if (prev && prev->comm == "hog" && next->comm == "sleeper" && st == obs::PrevState::Preempted &&
          out.sleeper_woken_at >= 0 && out.hog_preempted_at < 0) {
        out.hog_preempted_at = t;
        out.hog_run_ns = prev->se.sum_exec_runtime - prev->se.prev_sum_exec_runtime;
      }
    }
  } seen;
  s.k.add_observer(&seen);
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return pinned_sleeper(p, 2, &wq, &flag); }, 2);
  if (busy) spawn_hogs(s, {"hog"}, 20000000, 1000000, 2, true);
  s.k.spawn("waker", [&](Proc& p) { return waker(p, &wq, &flag, waker_ms); }, 0);  // the other socket: a wake-list IPI
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  seen.out.ipi_work_ns = s.k.work_by_path()[static_cast<size_t>(kernel::CostPath::Ipi)];
  return seen.out;
}

TEST(Kernel, AnIpiCostsTheCpuItLandsOnTheHandlersTime) {
  // A handler of 1 ms makes its cost stand out from the microseconds that
  // the moved timing changes elsewhere.
  constexpr int64_t kHandlerNs = 1000000;
  const auto busy_free = wake_list_ipis_onto_cpu2(0, true);
  const auto busy = wake_list_ipis_onto_cpu2(kHandlerNs, true);
  ASSERT_GE(busy.ipis, 1);
  EXPECT_EQ(busy.ipis_anywhere, busy_free.ipis_anywhere);
  // One handler a sent IPI; a flag store's line may cost a transfer more or
  // less once the timing has moved.
  EXPECT_NEAR(busy.ipi_work_ns - busy_free.ipi_work_ns, kHandlerNs * busy.ipis_anywhere, 200);
  // Paid on the target: the hog there finishes a handler later per IPI.
  EXPECT_NEAR(busy.hog_exit_ns - busy_free.hog_exit_ns, kHandlerNs * busy.ipis, 10000);
  const auto idle_free = wake_list_ipis_onto_cpu2(0, false);
  const auto idle = wake_list_ipis_onto_cpu2(kHandlerNs, false);
  EXPECT_EQ(idle.ipis, 0);
  EXPECT_EQ(idle.ipi_work_ns, idle_free.ipi_work_ns);
  EXPECT_GT(idle.ipi_work_ns, 0);  // the store
}

// The sleeper woken through the wake list preempts the hog on CPU 2, but
// only once the IPI's handler, which activated it, has run: the switch is
// on the interrupt's return path, and the handler's time is the hog's
// (without CONFIG_IRQ_TIME_ACCOUNTING). Before stop 79 the switch came at
// the wakeup and the handler ran on the sleeper's time.
TEST(Kernel, AWakeeThatPreemptsRunsAfterTheHandlerThatWokeIt) {
  constexpr int64_t kHandlerNs = 1000000;
  const auto busy = wake_list_ipis_onto_cpu2(kHandlerNs, true);
  ASSERT_GE(busy.sleeper_woken_at, 0);
  ASSERT_GE(busy.hog_preempted_at, 0) << "the sleeper did not preempt the hog";
  EXPECT_GE(busy.hog_preempted_at - busy.sleeper_woken_at, kHandlerNs);
  EXPECT_LT(busy.hog_preempted_at - busy.sleeper_woken_at, kHandlerNs + 10000);
  // The hog ran alone on CPU 2 from its last switch-in: its run as CFS
  // counts it reaches the switch, the handler's millisecond included (to
  // within the microseconds of the switch-in's own work).
  ASSERT_GE(busy.hog_in_at, 0);
  EXPECT_NEAR(busy.hog_run_ns, busy.hog_preempted_at - busy.hog_in_at, kHandlerNs / 20);
}

// With CONFIG_IRQ_TIME_ACCOUNTING (the irq_time_accounting build option)
// the handler's work inside scheduler_ipi()'s irq_enter()/irq_exit(), here a
// wake-list activation of 1 ms, is nobody's: update_rq_clock_task() takes it
// out of the clock CFS charges on, so the hog's run as CFS counts it falls
// short of its time on the CPU by that millisecond (and the few
// microseconds of the ticks' handlers in between), while the switch still
// waits for it. Without the option the hog pays it. The vector's own entry
// and return (`ipi_handler`) lie outside irq_enter()/irq_exit(): the hog
// pays those either way. (The hog's ticks cost it nothing with the option,
// so it keeps the CPU a tick longer before the sleeper first runs: the
// waker waits 15 ms, not 10.)
TEST(Kernel, WithIrqTimeAccountingTheInterruptedTaskDoesNotPayForTheHandler) {
  constexpr int64_t kHandlerNs = 1000000;
  for (const bool accounting : {false, true}) {
    SCOPED_TRACE(accounting ? "irq_time_accounting=1" : "irq_time_accounting=0");
    const auto busy = wake_list_ipis_onto_cpu2(kHandlerNs, true, accounting, 15, "ttwu_activate");
    ASSERT_GE(busy.sleeper_woken_at, 0);
    ASSERT_GE(busy.hog_preempted_at, 0) << "the sleeper did not preempt the hog";
    EXPECT_GE(busy.hog_preempted_at - busy.sleeper_woken_at, kHandlerNs);
    EXPECT_LT(busy.hog_preempted_at - busy.sleeper_woken_at, kHandlerNs + 10000);
    ASSERT_GE(busy.hog_in_at, 0);
    const int64_t on_cpu = busy.hog_preempted_at - busy.hog_in_at;
    EXPECT_NEAR(busy.hog_run_ns, accounting ? on_cpu - kHandlerNs : on_cpu, kHandlerNs / 20);
  }
  const auto entry = wake_list_ipis_onto_cpu2(kHandlerNs, true, true, 15, "ipi_handler");
  ASSERT_GE(entry.hog_preempted_at, 0) << "the sleeper did not preempt the hog";
  ASSERT_GE(entry.hog_in_at, 0);
  EXPECT_NEAR(entry.hog_run_ns, entry.hog_preempted_at - entry.hog_in_at, kHandlerNs / 20);
}

// A what-if machine for a test: `base` on `topology` with one cost set to
// `value` and no cost jitter, written to the test's temporary directory.
std::string machine_with_cost(const char* base, const char* topology, const std::string& cost, int64_t value) {
  const auto profile = std::filesystem::path(::testing::TempDir()) /
                       ("schedlab_" + cost + "_" + std::to_string(value) + ".toml");
  std::ofstream(profile) << "[machine]\nextends = \"" << base << "\"\nname = \"" << cost << "\"\ntopology = \""
                         << topology << "\"\n[costs]\n"
                         << cost << " = { value = " << value << ", unit = \"ns\", source = \"test\" }\n"
                         << "cost_jitter_permille = { value = 0, unit = \"permille\", source = \"test\" }\n";
  return profile.string();
}
// The idle loop's way out (`idle_exit_path`, tick_nohz_idle_exit()) runs
// before its schedule(), on a CPU whose tick it stopped: a sleeper woken on
// an idle CPU finishes that much later. 2.4 has no NO_HZ idle and pays
// nothing.
struct IdleLoopExits {
  int64_t sleeper_exit_ns = -1;
  int64_t idle_loop_ns = 0;  // everything charged to the idle loop's exit
  int64_t wakeup_to_switch_ns = -1;  // the sleeper's wakeup to its sched_switch
};
IdleLoopExits sleeper_woken_on_idle_cpu2(int64_t exit_path_ns, const char* preset) {
  TinySim s(machine_with_cost("haswell-2s8c2t", "2s2c1t", "idle_exit_path", exit_path_ns), preset);
  IdleLoopExits out;
  struct Seen final : obs::Observer {
    IdleLoopExits* out = nullptr;
    int64_t woken_at = -1;
    void on_exit(int64_t t, int, const kernel::Task* p) override {
      if (p->comm == "sleeper") out->sleeper_exit_ns = t;
    }
    void on_waking(int64_t t, int, const kernel::Task* p, int) override {
      if (p->comm == "sleeper") woken_at = t;
    }
    void on_switch(int64_t t, int, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (woken_at >= 0 && next && next->comm == "sleeper" && out->wakeup_to_switch_ns < 0)
        out->wakeup_to_switch_ns = t - woken_at;
    }
  } seen;
  seen.out = &out;
  s.k.add_observer(&seen);
  run_wakeup_of_pinned_sleeper(s, 2);
  out.idle_loop_ns = s.k.work_by_path()[static_cast<size_t>(kernel::CostPath::IdleLoop)];
  return out;
}

namespace {
// When the sleeper pinned to `sleeper_cpu` (1: the waker's LLC, 2: the
// other socket) starts running, and when the waker exits, on
// haswell-2s8c2t's costs with ttwu_tail at `tail_ns` and no jitter.
struct RestTimes {
  int64_t sleeper_runs = -1, waker_exits = -1;
};
RestTimes wakeup_with_rest(int64_t tail_ns, int sleeper_cpu) {
  TinySim s(machine_with_cost("haswell-2s8c2t", "2s2c1t", "ttwu_tail", tail_ns), "linux-4.0");
  RestTimes out;
  struct Seen final : obs::Observer {
    RestTimes* out = nullptr;
    bool woken = false;
    void on_waking(int64_t, int, const kernel::Task* p, int) override {
      if (p->comm == "sleeper") woken = true;
    }
    void on_switch(int64_t t, int, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (woken && next && next->comm == "sleeper" && out->sleeper_runs < 0) out->sleeper_runs = t;
    }
    void on_exit(int64_t t, int, const kernel::Task* p) override {
      if (p->comm == "waker") out->waker_exits = t;
    }
  } seen;
  seen.out = &out;
  s.k.add_observer(&seen);
  run_wakeup_of_pinned_sleeper(s, sleeper_cpu);
  return out;
}
}  // namespace

// ttwu_tail is what try_to_wake_up() runs after the enqueue or the IPI
// (Kernel::ttwu_finish()): it delays the waker by its length and a wakee
// elsewhere not at all, whether the waker enqueues it (its LLC) or queues it
// on the target's wake list (the other socket). (A wakee on the waker's own
// CPU that preempts runs only after it, as the rest runs with interrupts
// off: UnixSocket.AWakeeThatPreemptsItsWriterWaitsForTheWritesTail times it
// on a pipe.)
TEST(Wakeup, TheWakeupsRestDelaysTheWakerNotAWakeeElsewhere) {
  constexpr int64_t kTailNs = 1000000;  // 1 ms stands out from the timing it moves
  for (int cpu : {1, 2}) {
    const auto none = wakeup_with_rest(0, cpu), rest = wakeup_with_rest(kTailNs, cpu);
    ASSERT_GE(none.sleeper_runs, 0) << cpu;
    EXPECT_EQ(rest.sleeper_runs, none.sleeper_runs) << cpu;
    // and a tick that now lands in the waker's longer run
    EXPECT_GE(rest.waker_exits - none.waker_exits, kTailNs) << cpu;
    EXPECT_LE(rest.waker_exits - none.waker_exits, kTailNs + hw::load_machine("haswell-2s8c2t").costs.tick_handler)
        << cpu;
  }
}

namespace {
// A napper pinned to CPU 1 sleeps 5 ms, alone there or beside a hog pinned
// there too, so its hrtimer wakes it from interrupt context on CPU 1
// (Kernel::run_hrtimers() -> try_to_wake_up()); ttwu_tail at `tail_ns`.
struct TimerWakeupTimes {
  int64_t napper_woken = -1, napper_runs = -1, hog_exits = -1;
};
TimerWakeupTimes timer_wakeup_with_rest(int64_t tail_ns, bool with_hog) {
  TinySim s(machine_with_cost("haswell-2s8c2t", "2s2c1t", "ttwu_tail", tail_ns), "linux-4.0");
  TimerWakeupTimes out;
  struct Seen final : obs::Observer {
    TimerWakeupTimes* out = nullptr;
    void on_waking(int64_t t, int, const kernel::Task* p, int) override {
      if (p->comm == "napper" && out->napper_woken < 0) out->napper_woken = t;
    }
    void on_switch(int64_t t, int, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (out->napper_woken >= 0 && out->napper_runs < 0 && next && next->comm == "napper") out->napper_runs = t;
    }
    void on_exit(int64_t t, int, const kernel::Task* p) override {
      if (p->comm == "hog") out->hog_exits = t;
    }
  } seen;
  seen.out = &out;
  s.k.add_observer(&seen);
  s.k.spawn("napper", [](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only(1));
    co_await p.nanosleep(5000000);
  }, 1);
  if (with_hog) s.k.spawn("hog", [](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only(1));
    co_await hog(p, 20000000, 1000000);
  }, 1);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return out;
}
}  // namespace

// A wakeup from interrupt context (an hrtimer's, Kernel::try_to_wake_up())
// runs its rest after the enqueue too, on the CPU the timer interrupted,
// before the interrupt returns: the wakee on that CPU is switched in that
// much later, whether the CPU was idle (the idle loop's schedule() follows
// the interrupt, Kernel::irq_exit()) or running a hog it preempts, and the
// hog's CPU pays it.
TEST(Wakeup, ATimersWakeupRunsItsRestOnTheInterruptedCpuBeforeTheWakee) {
  constexpr int64_t kTailNs = 1000000;  // 1 ms stands out from the timing it moves
  // What lands in the hog's longer run: a tick's handler and the nohz
  // balance kick it sends to the idle CPU (an IPI's send).
  constexpr int64_t kSlackNs = 10000;
  for (bool with_hog : {false, true}) {
    const auto none = timer_wakeup_with_rest(0, with_hog), rest = timer_wakeup_with_rest(kTailNs, with_hog);
    ASSERT_GE(none.napper_woken, 0) << with_hog;
    ASSERT_GE(none.napper_runs, 0) << with_hog;
    ASSERT_GE(rest.napper_runs, 0) << with_hog;
    EXPECT_EQ(rest.napper_woken, none.napper_woken) << with_hog;  // the timer fires when it did
    EXPECT_GE(rest.napper_runs - none.napper_runs, kTailNs) << with_hog;
    EXPECT_LE(rest.napper_runs - none.napper_runs, kTailNs + kSlackNs) << with_hog;
    if (!with_hog) continue;
    // The hog's CPU ran the rest (the napper's own run is the same).
    ASSERT_GE(none.hog_exits, 0);
    EXPECT_GE(rest.hog_exits - none.hog_exits, kTailNs);
    EXPECT_LE(rest.hog_exits - none.hog_exits, kTailNs + kSlackNs);
  }
}

TEST(Idle, LeavingTheIdleLoopWithItsTickStoppedDelaysTheWakee) {
  constexpr int64_t kExitPathNs = 1000000;  // 1 ms stands out from the timing it moves
  const auto free40 = sleeper_woken_on_idle_cpu2(0, "linux-4.0");
  const auto paid40 = sleeper_woken_on_idle_cpu2(kExitPathNs, "linux-4.0");
  EXPECT_EQ(free40.idle_loop_ns, 0);
  // Once for the sleeper's wakeup; CPUs that start their first task leave
  // the loop too, so whole multiples only.
  ASSERT_GE(paid40.idle_loop_ns, kExitPathNs);
  EXPECT_EQ(paid40.idle_loop_ns % kExitPathNs, 0);
  // The sleeper meets it twice: CPU 2 leaves the loop for the sleeper's
  // first run (every CPU boots idle) and again for its wakeup.
  EXPECT_NEAR(paid40.sleeper_exit_ns - free40.sleeper_exit_ns, 2 * kExitPathNs, 1000);
  // It runs before the idle loop's schedule(), on the idle task, and
  // restarts the tick at its start: at HZ=1000 the 1 ms path holds one
  // tick, whose handler runs before the switch too. So the sleeper's
  // sched_switch, and its wakeup-to-running delay, come after both (before
  // stop 87, at the path's start).
  ASSERT_GE(free40.wakeup_to_switch_ns, 0);
  EXPECT_EQ(paid40.wakeup_to_switch_ns - free40.wakeup_to_switch_ns,
            kExitPathNs + hw::load_machine("haswell-2s8c2t").costs.tick_handler);
  const auto free24 = sleeper_woken_on_idle_cpu2(0, "linux-2.4.19");
  const auto paid24 = sleeper_woken_on_idle_cpu2(kExitPathNs, "linux-2.4.19");
  EXPECT_EQ(paid24.idle_loop_ns, 0);
  EXPECT_EQ(paid24.sleeper_exit_ns, free24.sleeper_exit_ns);
  EXPECT_EQ(paid24.wakeup_to_switch_ns, free24.wakeup_to_switch_ns);
}

// A kicked idle CPU balances in the IPI's softirq, still on the idle task
// (rq->curr == rq->idle): while that pass runs, and it pulls nothing here
// (one hog on one CPU), other CPUs' placements must see the CPU idle (4.0
// core.c idle_cpu()). Its NOHZ_BALANCE_KICK bit stays set until the pass
// ends, so no second kick reaches it meanwhile (nohz_balancer_kick()'s
// test_and_set_bit()); a later kick does. Meanwhile idle_get_state() still
// reads the idle state the CPU entered, and its tick stays stopped.
TEST(Idle, ACpuInANohzBalancePassCountsAsIdleInItsStateWithItsTickStoppedAndTakesNoSecondKick) {
  TinySim s("1s2c1t", "linux-4.0");
  struct ProbeAfterTheBalance final : obs::Observer {
    kernel::Kernel* k = nullptr;
    int balances = 0;
    int64_t balance_cost = 0;
    int probes = 0, probes_idle = 0, probes_on_idle_task = 0, second_kicks = 0, probes_ticking = 0;
    int entered_state = -1;
    int64_t exit_latency_in_pass = -2;
    void on_idle(int64_t, int cpu, int state) override {
      if (cpu == 1 && state >= 0 && balances == 0) entered_state = state;
    }
    void on_balance(int64_t t, int cpu, int, int, bool, int moved, int64_t cost_ns) override {
      if (cpu != 1 || moved != 0 || balances++ > 0) return;
      balance_cost = cost_ns;
      k->events().schedule(sim::Time(t + 1), sim::Phase::Control, [this] {
        ++probes;
        probes_idle += k->idle_cpu(1) ? 1 : 0;
        probes_on_idle_task += k->running_idle_task(1) ? 1 : 0;
        probes_ticking += k->tick_running(1) ? 1 : 0;
        exit_latency_in_pass = k->idle_exit_latency(1);
        second_kicks += k->kick_idle_balance(1) ? 1 : 0;
      });
    }
  } probe;
  probe.k = &s.k;
  s.k.add_observer(&probe);
  s.k.spawn("hog", [](Proc& p) { return hog(p, 20000000, 1000000); }, 0);
  bool first_kick = false, later_kick = false;
  s.k.events().schedule(sim::Time(5000000), sim::Phase::Control, [&] { first_kick = s.k.kick_idle_balance(1); });
  s.k.events().schedule(sim::Time(9000000), sim::Phase::Control, [&] { later_kick = s.k.kick_idle_balance(1); });
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  ASSERT_GE(probe.balances, 1);
  ASSERT_GT(probe.balance_cost, 1);
  EXPECT_EQ(probe.probes, 1);
  EXPECT_EQ(probe.probes_on_idle_task, 1);  // out of its C-state, in the handler, still on the idle task
  EXPECT_EQ(probe.probes_idle, 1);
  // idle_get_state() still reads the state entered (cleared only after
  // cpuidle_enter() returns), and the interrupt leaves the tick stopped
  // (tick_nohz_irq_exit(); only leaving the idle loop restarts it).
  ASSERT_GE(probe.entered_state, 0);
  EXPECT_EQ(probe.exit_latency_in_pass,
            s.machine.profile().idle_states[static_cast<size_t>(probe.entered_state)].exit_latency_ns);
  EXPECT_EQ(probe.probes_ticking, 0);
  EXPECT_TRUE(first_kick);
  EXPECT_EQ(probe.second_kicks, 0);
  EXPECT_TRUE(later_kick);
}

// A CPU whose schedule() ends while a wakee waits on its wake list for the
// IPI sees nothing of it: ttwu_queue_remote() sent the IPI to a busy CPU and
// set no flag, so cpu_idle_loop() (4.0 idle.c) stops the tick, joins
// nohz.idle_cpus_mask and enters the state the governor picks. The IPI
// wakes it from that state, exit latency included. The waker's timing is
// swept across the leaver's switch-out so that some runs catch the IPI in
// flight.
TEST(Idle, AnIpiSentToABusyCpuThatHasSinceIdledWakesItFromItsIdleState) {
  constexpr int64_t kLeave = 2000000;
  int caught = 0;
  for (int64_t wake_at = kLeave - 2000; wake_at < kLeave + 10000; wake_at += 100) {
    TinySim s("2s1c1t", "linux-4.0");
    struct Probe final : obs::Observer {
      kernel::Kernel* k = nullptr;
      int64_t ipi_sent_at = -1, went_idle_at = -1, runs_at = -1;
      int state = -1;
      bool tick_stopped = false, nohz_idle = false;
      void on_ipi(int64_t t, int from, int target, bool sent) override {
        if (from == 0 && target == 1 && sent && ipi_sent_at < 0) ipi_sent_at = t;
      }
      void on_switch(int64_t t, int cpu, const kernel::Task* prev, obs::PrevState,
                     const kernel::Task* next) override {
        if (cpu != 1) return;
        if (prev && prev->comm == "leaver" && !next && k->wake_list_pending(1)) went_idle_at = t;
        if (next && next->comm == "wakee" && went_idle_at >= 0 && runs_at < 0) {
          runs_at = t;
          nohz_idle = k->policy().nohz_idle(1);  // left only at its next busy tick
        }
      }
      void on_idle(int64_t, int cpu, int st) override {
        if (cpu != 1 || went_idle_at < 0 || runs_at >= 0 || st < 0) return;
        state = st;
        tick_stopped = !k->tick_running(1);
      }
    } probe;
    probe.k = &s.k;
    s.k.add_observer(&probe);
    kernel::WaitQueue wq;
    bool flag = false;
    s.k.spawn("leaver", [](Proc& p) -> Co<void> {
      co_await p.spin_until(kLeave);
      co_await p.nanosleep(1000000);
    }, 1);
    s.k.spawn("wakee", [&](Proc& p) { return pinned_sleeper(p, 1, &wq, &flag); }, 1);
    s.k.spawn("waker", [&wq, &flag, wake_at](Proc& p) -> Co<void> {
      co_await p.spin_until(wake_at);
      flag = true;
      co_await p.wake_up(wq, 1, 0);
    }, 0);
    ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
    EXPECT_EQ(s.k.check_invariants(), "");
    if (probe.went_idle_at < 0) continue;
    const int64_t arrives = probe.ipi_sent_at + s.machine.line_transfer(0, 1) + s.machine.costs().ipi_latency_remote;
    if (arrives <= probe.went_idle_at) continue;
    ++caught;
    ASSERT_GE(probe.state, 1) << wake_at << ": the governor's state, not a skipped idle (POLL)";
    EXPECT_TRUE(probe.tick_stopped) << wake_at;
    EXPECT_TRUE(probe.nohz_idle) << wake_at;
    const int64_t exit_latency = s.machine.profile().idle_states[static_cast<size_t>(probe.state)].exit_latency_ns;
    EXPECT_GE(probe.runs_at, arrives + exit_latency) << wake_at;
  }
  EXPECT_GT(caught, 0) << "no waker timing caught the IPI in flight";
}

// A wakeup that reaches a CPU already leaving its C-state for a timer is
// handled once the CPU runs: the C-state is left once, not once per
// interrupt. (The wakee is queued on the target's wake list, so it runs
// only once the kick is handled.)
TEST(Timer, AWakeupReachingACpuLeavingItsStateForATimerWaitsForOneExit) {
  constexpr int64_t kTimer = 30000000, kLate = 10000;
  TinySim s("haswell-2s8c2t", "linux-4.0");
  struct Probe final : obs::Observer {
    int state = -1, exits_after_timer = 0;
    int64_t wakee_runs_at = -1;
    void on_idle(int64_t t, int cpu, int st) override {
      if (cpu != 2) return;
      if (st >= 0 && t < kTimer) state = st;
      if (st < 0 && t >= kTimer) ++exits_after_timer;
    }
    void on_switch(int64_t t, int cpu, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (cpu == 2 && next && next->comm == "wakee" && wakee_runs_at < 0 && t >= kTimer) wakee_runs_at = t;
    }
  } probe;
  s.k.add_observer(&probe);
  kernel::WaitQueue napper_wq, wakee_wq;
  bool napper_flag = false, wakee_flag = false;
  kernel::Task* napper = s.k.spawn("napper", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only(2));
    // Regular 2 ms idles teach the menu governor to go deep (C6).
    for (int i = 0; i < 8; ++i) co_await p.nanosleep(2000000);
    co_await sleeper(p, &napper_wq, &napper_flag);
  }, 2);
  s.k.spawn("wakee", [&](Proc& p) { return pinned_sleeper(p, 2, &wakee_wq, &wakee_flag); }, 2);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    co_await p.spin_until(kTimer + kLate);
    wakee_flag = true;
    co_await p.wake_up(wakee_wq, 1, 0);
  }, 8);  // another socket: the wakee waits on CPU 2's wake list for the kick
  // The napper's timer, armed on its idle CPU 2 (hrtimer_wakeup()).
  s.k.events().schedule(sim::Time(25000000), sim::Phase::Control, [&] {
    napper_flag = true;
    s.k.start_hrtimer(2, kTimer, kTimer, napper);
  });
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  ASSERT_GE(probe.state, 0);
  const int64_t exit_latency = s.machine.profile().idle_states[static_cast<size_t>(probe.state)].exit_latency_ns;
  ASSERT_GT(exit_latency, 2 * kLate) << "CPU 2 must sit in a deep state when its timer fires";
  EXPECT_EQ(probe.exits_after_timer, 1);
  // Out of the state at kTimer + exit_latency; a second exit would start
  // only after the waker's IPI, at kTimer + kLate or later.
  ASSERT_GE(probe.wakee_runs_at, kTimer + exit_latency);
  EXPECT_LT(probe.wakee_runs_at, kTimer + kLate + exit_latency);
}

// Two wakees queued on one CPU's wake list before it handles the IPI are
// activated newest first: llist_add() pushes at the head and 4.0's
// sched_ttwu_pending() walks what llist_del_all() returns.
TEST(Wakeup, TheWakeListIsActivatedNewestFirst) {
  TinySim s("2s2c1t", "linux-4.0");
  struct Activations final : obs::Observer {
    std::vector<std::string> order;
    void on_wakeup(int64_t, int, const kernel::Task* p, int target, bool is_new) override {
      if (!is_new && target == 2) order.push_back(p->comm);
    }
  } activations;
  s.k.add_observer(&activations);
  kernel::WaitQueue wq_first, wq_second;
  bool first_flag = false, second_flag = false;
  for (auto [name, wq, flag] : {std::tuple{"first", &wq_first, &first_flag}, std::tuple{"second", &wq_second, &second_flag}}) {
    s.k.spawn(name, [wq, flag](Proc& p) -> Co<void> {
      co_await p.sched_setaffinity(only(2));
      co_await sleeper(p, wq, flag);
    }, 2);
  }
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    for (int i = 0; i < 10; ++i) co_await p.user(1000000);
    first_flag = second_flag = true;
    co_await p.wake_up(wq_first, 1, 0);
    co_await p.wake_up(wq_second, 1, 0);
  }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_EQ(activations.order, (std::vector<std::string>{"second", "first"}));
}

// On another LLC the wakee is queued on the target's wake list (TTWU_QUEUE)
// and its CPU kicked, also only after the waker's placement work.
TEST(Wakeup, AWakeeOnAnotherLlcIsKickedOnlyAfterThePlacementWork) {
  TinySim s("2s2c1t", "linux-4.0");
  struct Kicks final : obs::Observer {
    int64_t waking_at = -1, kicked_at = -1;
    void on_waking(int64_t t, int, const kernel::Task*, int) override { waking_at = t; }
    void on_ipi(int64_t t, int, int target, bool) override {
      if (target == 2 && waking_at >= 0 && kicked_at < 0) kicked_at = t;
    }
  } kicks;
  s.k.add_observer(&kicks);
  run_wakeup_of_pinned_sleeper(s, 2);
  ASSERT_GE(kicks.kicked_at, 0);
  EXPECT_GE(kicks.kicked_at - kicks.waking_at, s.machine.costs().ttwu_base * 97 / 100);
  EXPECT_EQ(s.task("sleeper")->cpu, 2);
}

// Within the LLC the waker enqueues the wakee itself (ttwu_queue(): the
// target's rq->lock, then ttwu_do_activate()), and the enqueue and the
// resched that wakes the idle target come only after that work as well as
// the placement's. Before stop 76 the model enqueued at the lock, so the
// target left idle while the waker still paid the activation.
TEST(Wakeup, AWakeeInTheLlcIsEnqueuedOnlyAfterTheWakersLockAndActivation) {
  TinySim s("2s2c1t", "linux-4.0");
  struct Enqueues final : obs::Observer {
    int64_t waking_at = -1, enqueued_at = -1;
    void on_waking(int64_t t, int, const kernel::Task* p, int) override {
      if (p->comm == "sleeper") waking_at = t;
    }
    void on_wakeup(int64_t t, int, const kernel::Task* p, int target, bool is_new) override {
      if (!is_new && p->comm == "sleeper" && target == 1 && enqueued_at < 0) enqueued_at = t;
    }
  } enqueues;
  s.k.add_observer(&enqueues);
  run_wakeup_of_pinned_sleeper(s, 1);
  ASSERT_GE(enqueues.enqueued_at, 0);
  const auto& c = s.machine.costs();
  ASSERT_GT(c.ttwu_activate, 0);
  EXPECT_GE(enqueues.enqueued_at - enqueues.waking_at, (c.ttwu_base + c.rq_lock_hold + c.ttwu_activate) * 97 / 100);
  EXPECT_EQ(s.task("sleeper")->cpu, 1);
}

namespace {
// CPU 1 runs `blocker`, which spins until `block_at` and then sleeps, and
// `sleeper`, both pinned there; `waker`, pinned to CPU 0, wakes the sleeper
// at about 10 ms and the blocker 2 ms later. `others` spawns the rest of the
// scene between them. The queues and flags live as long as the scene.
struct BlockerScene {
  kernel::WaitQueue wq, blocker_wq;
  bool flag = false, blocker_flag = false;
  void spawn(TinySim& s, int64_t block_at, const std::function<void()>& others) {
    s.k.spawn("sleeper", [this](Proc& p) { return sleeper(p, &wq, &flag); }, 1)->cpus_allowed = only(1);
    s.k.spawn("blocker", [this, block_at](Proc& p) -> Co<void> {
      co_await p.spin_until(block_at);
      co_await p.wait_event(blocker_wq, [this] { return blocker_flag; }, "test_wait");
    }, 1)->cpus_allowed = only(1);
    others();
    s.k.spawn("waker", [this](Proc& p) -> Co<void> {
      co_await waker(p, &wq, &flag);
      co_await p.user(2000000);
      blocker_flag = true;
      co_await p.wake_up(blocker_wq, 1, 0);
    }, 0)->cpus_allowed = only(0);
  }
};

// CPU 1 runs `blocker`, which spins until `block_at` and then sleeps, while
// its sleeper (pinned there) is woken from CPU 0 at about 10 ms, and two
// hogs that may run on CPUs 1 and 3 share CPU 3. Returns when the sleeper
// was enqueued, what CPU 1 switched to when the blocker slept, and how many
// times it balanced as newly idle in between.
struct BlockDuringWakeup {
  int64_t enqueued_at = -1;
  std::string after_blocker;
  int newidle_balances = 0;  // CPU 1's, from block_at until it switched from the blocker
  int picks_after_lock = 0;  // CPU 1's schedule() calls that waited for a waker's lock, from block_at
  int64_t stats_picks_after_lock = 0;  // the run's StatsCollector's count, all CPUs
};
BlockDuringWakeup block_during_wakeup(int64_t block_at) {
  TinySim s("2s2c1t", "linux-4.0");
  struct Watch final : obs::Observer {
    int64_t block_at = 0;
    BlockDuringWakeup seen;
    void on_balance(int64_t t, int c, int, int idle_type, bool, int, int64_t) override {
      if (c == 1 && t >= block_at && seen.after_blocker.empty() &&
          idle_type == static_cast<int>(kernel::CpuIdleType::NewlyIdle))
        ++seen.newidle_balances;
    }
    void on_wakeup(int64_t t, int, const kernel::Task* p, int target, bool is_new) override {
      if (!is_new && p->comm == "sleeper" && target == 1 && seen.enqueued_at < 0) seen.enqueued_at = t;
    }
    void on_switch(int64_t, int c, const kernel::Task* prev, obs::PrevState st, const kernel::Task* next) override {
      if (c == 1 && prev && prev->comm == "blocker" && st == obs::PrevState::Sleeping && seen.after_blocker.empty())
        seen.after_blocker = next ? next->comm : "idle";
    }
    void on_pick_after_lock(int64_t t, int c, int64_t spun_ns) override {
      EXPECT_GT(spun_ns, 0);
      if (c == 1 && t >= block_at) ++seen.picks_after_lock;
    }
  } watch;
  watch.block_at = block_at;
  s.k.add_observer(&watch);
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  hw::CpuMask cpus_1_and_3 = only(1);
  cpus_1_and_3.set(3);
  BlockerScene scene;
  scene.spawn(s, block_at, [&] {
    for (const char* name : {"hog1", "hog2"})
      s.k.spawn(name, [](Proc& p) { return hog(p, 30000000, 100000); }, 3)->cpus_allowed = cpus_1_and_3;
  });
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  watch.seen.stats_picks_after_lock = stats.summarize(s.k).picks_after_waker_lock;
  return watch.seen;
}
}  // namespace

// 4.0 __schedule() takes rq->lock before pick_next_task(). A CPU that
// schedules while a waker holds its lock for ttwu_do_activate() gets it once
// the wakee is queued, and picks the wakee without going newly idle first
// (the hogs sharing CPU 3 overload the root domain, so a newly idle CPU 1
// would balance). Before stop 77 the model picked at once, found nothing and
// balanced, and picked the wakee once the balance was done.
TEST(Wakeup, ACpuThatSchedulesWhileTheWakerHoldsItsLockPicksTheWakee) {
  const int64_t enqueued_at = block_during_wakeup(30000000).enqueued_at;  // blocks long after
  ASSERT_GT(enqueued_at, 0);
  const TinySim costs_of("2s2c1t", "linux-4.0");
  const auto& c = costs_of.machine.costs();
  ASSERT_GT(c.ttwu_activate, 0);
  // Inside the waker's hold: it took the lock before its activation.
  const auto during = block_during_wakeup(enqueued_at - c.ttwu_activate / 2);
  EXPECT_EQ(during.enqueued_at, enqueued_at);
  EXPECT_EQ(during.after_blocker, "sleeper");
  EXPECT_EQ(during.newidle_balances, 0);
  EXPECT_EQ(during.picks_after_lock, 1);
  EXPECT_GE(during.stats_picks_after_lock, 1);
  // Blocking before the waker takes the lock, it does balance (and, finding
  // the wakee queued by the time it is done, picks it).
  const auto before = block_during_wakeup(enqueued_at - c.ttwu_activate - c.rq_lock_hold - 300);
  EXPECT_GE(before.newidle_balances, 1);
  EXPECT_EQ(before.picks_after_lock, 0);
}

namespace {
// CPU 1 runs `blocker`, which spins until `block_at` and then sleeps, while
// its sleeper (pinned there) is woken from CPU 0, whose SMT sibling CPU 2
// runs a hog, so the waker's kernel work runs at the shared core's rate.
// Returns when the waker checked preemption (the sleeper's wakeup), when
// CPU 1 switched from the blocker and to what, and its waits for the lock.
struct SlowWakerHold {
  int64_t woken_at = -1, switched_at = -1;
  std::string after_blocker;
  std::vector<int64_t> spins;  // CPU 1's picks after a waker's lock, from block_at
};
SlowWakerHold block_during_slow_wakers_hold(int64_t block_at) {
  TinySim s("1s2c2t", "linux-4.0");
  struct Watch final : obs::Observer {
    int64_t block_at = 0;
    SlowWakerHold seen;
    void on_wakeup(int64_t t, int, const kernel::Task* p, int target, bool is_new) override {
      if (!is_new && p->comm == "sleeper" && target == 1 && seen.woken_at < 0) seen.woken_at = t;
    }
    void on_switch(int64_t t, int c, const kernel::Task* prev, obs::PrevState st, const kernel::Task* next) override {
      if (c == 1 && prev && prev->comm == "blocker" && st == obs::PrevState::Sleeping && seen.after_blocker.empty()) {
        seen.after_blocker = next ? next->comm : "idle";
        seen.switched_at = t;
      }
    }
    void on_pick_after_lock(int64_t t, int c, int64_t spun_ns) override {
      if (c == 1 && t >= block_at) seen.spins.push_back(spun_ns);
    }
  } watch;
  watch.block_at = block_at;
  s.k.add_observer(&watch);
  BlockerScene scene;
  scene.spawn(s, block_at, [&] {
    s.k.spawn("sibling", [](Proc& p) { return hog(p, 40000000, 100000); }, 2)->cpus_allowed = only(2);
  });
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return watch.seen;
}
}  // namespace

// The lock's hold and the activation are costed in work, and a waker whose
// core is shared runs them slower than that: its hold outlasts the lock's
// modelled end. A CPU that schedules in between finds the lock free by that
// end but the wakee queued at the lock still unchecked, and spins on
// (rq_lock_hold at a time) until the waker's check is done, then picks it.
// Without the spin it would pick the wakee before its waker's
// ttwu_do_wakeup() (stop 78: messaging crashed so).
TEST(Wakeup, ACpuThatSchedulesDuringASlowWakersHoldPicksOnlyAfterItsCheck) {
  const TinySim costs_of("1s2c2t", "linux-4.0");
  const auto& c = costs_of.machine.costs();
  ASSERT_LT(c.smt_throughput_permille, 1000);
  ASSERT_GT(c.ttwu_activate, 0);
  const int64_t woken_at = block_during_slow_wakers_hold(30000000).woken_at;  // blocks long after
  ASSERT_GT(woken_at, 0);
  // Inside the hold's slowed part: the activation's last quarter at full
  // speed would have ended the hold before this.
  const int64_t block_at = woken_at - c.ttwu_activate / 4;
  const auto during = block_during_slow_wakers_hold(block_at);
  EXPECT_EQ(during.woken_at, woken_at);
  EXPECT_EQ(during.after_blocker, "sleeper");
  EXPECT_GE(during.switched_at, woken_at);
  // The lock was free by its modelled end, so each wait is the spin on.
  ASSERT_FALSE(during.spins.empty());
  for (int64_t spun : during.spins) EXPECT_EQ(spun, c.rq_lock_hold);
}

// While a wakee is being placed it is TASK_WAKING: a second waker finds it
// awake, and a sched_setaffinity() that comes then (the kernel's waits for
// the wakee's pi_lock) moves it once it is queued.
TEST(Wakeup, AWakeeBeingPlacedIsNotWokenTwiceAndMovesIfItsMaskChanged) {
  TinySim s("1s4c1t", "linux-4.0");
  struct ActInTheWindow final : obs::Observer {
    kernel::Kernel* k = nullptr;
    int second_wakeup = -1;
    void on_waking(int64_t, int, const kernel::Task* p, int target) override {
      if (p->comm != "sleeper" || second_wakeup >= 0) return;
      auto* t = const_cast<kernel::Task*>(p);
      second_wakeup = k->try_to_wake_up(t, 0);
      hw::CpuMask elsewhere;
      elsewhere.set(target == 3 ? 2 : 3);
      k->set_cpus_allowed_ptr(t, elsewhere);
    }
  } act;
  act.k = &s.k;
  s.k.add_observer(&act);
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper(p, &wq, &flag); }, 1);
  s.k.spawn("waker", [&](Proc& p) { return waker(p, &wq, &flag); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  EXPECT_EQ(act.second_wakeup, 0);
  EXPECT_TRUE(s.task("sleeper")->cpus_allowed.test(s.task("sleeper")->cpu));
  EXPECT_GE(s.task("sleeper")->nr_migrations, 1);
}

namespace {
Co<void> frame_probe(void** frame_at) {
  // The frame's address: a local of the coroutine lives in it.
  int local = 0;
  *frame_at = &local;
  co_return;
}
}  // namespace

// Coroutine frames are recycled by size: a frame freed and then one of the
// same coroutine allocated again land at the same address, on this thread.
TEST(Coroutines, FramesOfOneSizeAreRecycled) {
  void* first = nullptr;
  void* second = nullptr;
  {
    auto co = frame_probe(&first);
    co.handle().resume();
  }
  {
    auto co = frame_probe(&second);
    co.handle().resume();
  }
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first, second);
}

namespace {
Co<void> reap_after_all_exited(Proc& p, std::vector<int>* reaped) {
  // The children take 3, 2 and 1 ms: they exit in reverse pid order, all
  // before the parent asks.
  for (int64_t ms : {3, 2, 1}) {
    kernel::Program child = [ms](Proc& c) { return hog(c, ms * 1000000, 100000); };
    co_await p.fork("child", child, false);
  }
  co_await p.nanosleep(10000000);
  for (int i = 0; i < 3; ++i) reaped->push_back((co_await p.wait_child())->pid);
}
}  // namespace

// do_wait() without a pid reaps the zombies lowest pid first, as a walk of
// the task list in pid order finds them (the model keeps them in a set).
namespace {
// The sleeper, pinned to CPU 0, is woken from CPU 1 5 ms in. The other task
// on CPU 0 wakes from a nap at 1 ms and spends 8 ms in the kernel, reaches
// a might_sleep() with no work after it (or not), then spends 8 ms more.
// Returns when the sleeper next runs, from that task's switch-in.
int64_t sleeper_runs_after_kernel_work_and(bool might_sleep_point) {
  TinySim s("1s2c1t", "linux-4.0");
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return pinned_sleeper(p, 0, &wq, &flag); }, 0);
  const hw::CpuMask on0 = only(0);
  s.k.spawn("kernel", [on0, might_sleep_point](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(on0);
    co_await p.nanosleep(1000000);
    co_await p.sys(8000000);
    if (might_sleep_point) co_await p.sys_after_might_sleep(0);
    co_await p.sys(8000000);
  }, 0);
  s.k.spawn("waker", [&](Proc& p) { return waker(p, &wq, &flag, 5); }, 1);
  struct Seen final : obs::Observer {
    int64_t kernel_in = -1, sleeper_in = -1;
    bool sleeper_woken = false;
    void on_wakeup(int64_t, int, const kernel::Task* p, int, bool is_new) override {
      sleeper_woken |= !is_new && p->comm == "sleeper";
    }
    void on_switch(int64_t t, int c, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
      if (c != 0 || !next || sleeper_in >= 0) return;
      if (next->comm == "kernel") kernel_in = t;
      if (next->comm == "sleeper" && sleeper_woken) sleeper_in = t;
    }
  } seen;
  s.k.add_observer(&seen);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return seen.sleeper_in - seen.kernel_in;
}
}  // namespace

// A might_sleep() with no work after it (4.0's mutex_lock_interruptible()
// of the readlock, once a woken receiver is back in unix_stream_recvmsg())
// is a preemption point by itself: the sleeper's wakeup asked for CPU 0
// while the other task was in the kernel, and gets it at that point, not
// at the system call's end.
TEST(Kernel, AMightSleepWithNoWorkAfterItIsAPreemptionPoint) {
  const int64_t at_point = sleeper_runs_after_kernel_work_and(true);
  const int64_t without = sleeper_runs_after_kernel_work_and(false);
  // Each 8 ms piece of kernel work varies by the profile's cost jitter.
  EXPECT_NEAR(at_point, 8000000, 500000);
  EXPECT_NEAR(without, 16000000, 1000000);
}

TEST(Kernel, WaitChildReapsZombiesLowestPidFirst) {
  TinySim s("1s4c1t", "linux-4.0");
  std::vector<int> reaped;
  s.k.spawn("parent", [&reaped](Proc& p) { return reap_after_all_exited(p, &reaped); }, 0);
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  std::vector<int> children;
  for (auto* t : s.k.all_tasks())
    if (t->comm == "child") children.push_back(t->pid);
  EXPECT_EQ(reaped, children);
  for (auto* t : s.k.all_tasks()) {
    if (t->comm == "child") {
      EXPECT_TRUE(t->reaped);
    }
  }
}

namespace {
// Sleeps on `wq` after `delay_ns` of work; records its name once woken.
Co<void> queue_sleeper(Proc& p, kernel::WaitQueue* wq, const bool* go, int64_t delay_ns, bool exclusive,
                       std::vector<std::string>* woken) {
  co_await p.user(delay_ns);
  co_await p.wait_event(*wq, [go] { return *go; }, "test_wait", exclusive);
  woken->push_back(p.task()->comm);
}
Co<void> queue_waker(Proc& p, kernel::WaitQueue* wq, bool* go) {
  co_await p.user(1000000);
  *go = true;
  co_await p.wake_up(*wq, 1, 0);
}
}  // namespace

// __add_wait_queue() links a sleeper at the head and __wake_up_common()
// walks from the head: the newest non-exclusive sleeper is woken first.
// Exclusive sleepers are linked at the tail in arrival order, and
// nr_exclusive = 1 wakes only the first of them.
TEST(Kernel, WaitQueueWakesTheNewestSleeperFirstAndOneExclusive) {
  TinySim s("1s8c1t", "linux-4.0");
  kernel::WaitQueue wq;
  bool go = false;
  std::vector<std::string> woken;
  std::vector<std::string> queued;
  const std::vector<std::tuple<const char*, int64_t, bool>> sleepers = {
      {"old", 10000, false}, {"x1", 20000, true}, {"mid", 30000, false}, {"x2", 40000, true}, {"new", 50000, false}};
  int cpu = 1;
  for (const auto& [name, delay, exclusive] : sleepers) {
    const int64_t d = delay;
    const bool x = exclusive;
    s.k.spawn(name, [&wq, &go, &woken, d, x](Proc& p) { return queue_sleeper(p, &wq, &go, d, x, &woken); }, cpu++);
  }
  s.k.events().schedule(sim::Time(500000), sim::Phase::Control, [&] {
    for (const auto& w : wq.waiters) queued.push_back(w.task->comm);
  });
  s.k.spawn("waker", [&wq, &go](Proc& p) { return queue_waker(p, &wq, &go); }, 0);
  auto r = s.run();
  EXPECT_EQ(queued, (std::vector<std::string>{"new", "mid", "old", "x1", "x2"}));
  // x2 is never woken: the run ends with it asleep.
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  ASSERT_EQ(woken.size(), 4u);
  EXPECT_EQ(std::count(woken.begin(), woken.end(), "x2"), 0);
}

namespace {
// A hog and a task that sleeps 2 ms, 20 times, on one CPU; the features
// written `at_ns` into the run (-1: none). Returns the policy's counters.
std::map<std::string, int64_t> napper_beside_a_hog(const std::string& features, int64_t at_ns,
                                                   const std::string& written) {
  TinySim s("1s1c1t", "linux-4.0", 1, features);
  s.k.spawn("hog", [](Proc& p) { return hog(p, 100000000, 1000000); }, 0);
  s.k.spawn("napper", [](Proc& p) -> Co<void> {
    for (int i = 0; i < 20; ++i) {
      co_await p.user(20000);
      co_await p.nanosleep(2000000);
    }
  }, 0);
  if (at_ns >= 0) s.k.set_features_at(at_ns, written);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return s.policy_counters();
}
}  // namespace

// A write to the features mid-run (an echo to
// /sys/kernel/debug/sched_features) holds from its instant. The napper's
// wakeups preempt the hog while wakeup preemption is on: 20 checks with it
// on throughout, none with it off; written off after its 10th wakeup (about
// 20 ms in: each round is its 2 ms sleep and 20 us run), the checks stop
// there, and written back on they resume. A bad list, a time already past,
// a write out of time order or one that clashes with an earlier write is
// refused when the write is asked for, not when it falls due.
TEST(Kernel, FeaturesWrittenMidRunHoldFromThatInstant) {
  const auto on = napper_beside_a_hog("", -1, "");
  const auto off = napper_beside_a_hog("NO_WAKEUP_PREEMPTION", -1, "");
  EXPECT_EQ(on.at("wakeup_preempt_checks"), 20);
  EXPECT_EQ(on.at("wakeup_preemptions"), 20);
  EXPECT_EQ(off.at("wakeup_preempt_checks"), 0);
  const auto written_off = napper_beside_a_hog("", 21000000, "NO_WAKEUP_PREEMPTION");
  EXPECT_GE(written_off.at("wakeup_preempt_checks"), 9);
  EXPECT_LE(written_off.at("wakeup_preempt_checks"), 11);
  const auto written_on = napper_beside_a_hog("NO_WAKEUP_PREEMPTION", 21000000, "WAKEUP_PREEMPTION");
  // Without preemption a wakeup waits for the hog's tick, so fewer rounds
  // fit before the write (7 against 10); every wakeup after it preempts.
  EXPECT_GE(written_on.at("wakeup_preempt_checks"), 11);
  EXPECT_LT(written_on.at("wakeup_preempt_checks"), 20);
  EXPECT_EQ(written_on.at("wakeup_preemptions"), written_on.at("wakeup_preempt_checks"));

  TinySim s("1s1c1t", "linux-4.0");
  EXPECT_THROW(s.k.set_features_at(1000, "NO_SUCH_FEATURE"), std::invalid_argument);
  EXPECT_THROW(s.k.set_features_at(1000, "WAKE_IDLE_CPU,SD_WAKE_IDLE"), std::invalid_argument);
  EXPECT_THROW(s.k.set_features_at(1000, "WAKE_RENORM_V47"), std::invalid_argument);
  EXPECT_THROW(s.k.set_features_at(1000, ", "), std::invalid_argument);
  EXPECT_NO_THROW(s.k.set_features_at(1000, "NO_WAKEUP_PREEMPTION"));
  // Each write is checked against the config the earlier ones will have
  // made, and they are asked for in time order.
  EXPECT_NO_THROW(s.k.set_features_at(2000, "WAKE_IDLE_CPU"));
  EXPECT_THROW(s.k.set_features_at(3000, "SD_WAKE_IDLE"), std::invalid_argument);
  EXPECT_NO_THROW(s.k.set_features_at(3000, "NO_WAKE_IDLE_CPU,SD_WAKE_IDLE"));
  EXPECT_THROW(s.k.set_features_at(2500, "NO_LAST_BUDDY"), std::invalid_argument);
}

// The lead's bins: a quarter millisecond wide from -12 to +24 ms, one bin
// each side beyond. Quantiles interpolate within the bin where the count
// crosses the share, and leads beyond the range read as its ends. The mean
// stays exact. Pooling and differences (repeats, a mid-run reset) act bin
// by bin.
TEST(WakeupCheckTally, LeadQuantilesComeFromQuarterMillisecondBins) {
  kernel::WakeupCheckTally t;
  EXPECT_EQ(t.lead_quantile_ms(0.5), 0.0);
  for (int64_t lead_us : {-500, 1000, 1100, 2000, 6000}) {
    ++t.checks;
    t.add_lead(lead_us * 1000);
  }
  EXPECT_EQ(t.lead_ns, 9600000);
  // p10: half of the one check at -0.5 ms, in [-0.5, -0.25).
  EXPECT_DOUBLE_EQ(t.lead_quantile_ms(0.10), -0.375);
  // p50: 2.5 checks; the second bin from the bottom, [1, 1.25), holds two
  // and the crossing is at 1.5 of them.
  EXPECT_DOUBLE_EQ(t.lead_quantile_ms(0.50), 1.0 + 0.25 * 0.75);
  EXPECT_DOUBLE_EQ(t.lead_quantile_ms(1.0), 6.25);
  EXPECT_DOUBLE_EQ(t.lead_quantile_ms(0.0), -0.5);  // the lowest filled bin's low edge

  kernel::WakeupCheckTally edge;
  edge.add_lead(-12000000);  // exactly the low end: the first bin inside
  edge.add_lead(-12000001);  // below it
  EXPECT_EQ(edge.lead_bins[0], 1);
  EXPECT_EQ(edge.lead_bins[1], 1);

  kernel::WakeupCheckTally far;
  far.checks = 2;
  far.add_lead(-30000000);
  far.add_lead(50000000);
  EXPECT_DOUBLE_EQ(far.lead_quantile_ms(0.25), -12.0);
  EXPECT_DOUBLE_EQ(far.lead_quantile_ms(0.75), 24.0);
  far.add_lead(24000000 - 1);  // the last bin inside the range
  EXPECT_EQ(far.lead_bins[kernel::WakeupCheckTally::kLeadBins - 2], 1);

  kernel::WakeupCheckTally both = t;
  both += far;
  EXPECT_EQ(both.checks, 7);
  EXPECT_EQ(both.lead_bins[0], 1);
  both -= far;
  EXPECT_EQ(both, t);
}

namespace {
// One pair's tally in `by`, its count of checks and of preemptions checked
// (a pair that is absent fails, rather than reading as none).
kernel::WakeupCheckTally expect_checks(const kernel::WakeupChecksByWchan& by, const std::string& queued,
                                       const std::string& running, int64_t checks, int64_t preemptions) {
  const auto it = by.find({queued, running});
  if (it == by.end()) {
    ADD_FAILURE() << "no checks of " << queued << " <- " << running;
    return {};
  }
  EXPECT_EQ(it->second.checks, checks) << queued << " <- " << running;
  EXPECT_EQ(it->second.preemptions, preemptions) << queued << " <- " << running;
  return it->second;
}

kernel::WakeupChecksByWchan checks_after_one_wakeup() {
  TinySim s("1s1c1t", "linux-4.0");
  kernel::WaitQueue wq;
  int round = 0;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper_woken_in_rounds(p, &wq, &round, -1); }, 0);
  s.k.spawn("waker", [&](Proc& p) { return waker_in_rounds(p, &wq, &round, 10, false); }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return s.k.policy().wakeup_checks_by_wchan();
}
}  // namespace

// The wakeup checks by who met whom. The sleeper, woken from "test_wait" by
// a waker that never slept ("-"), preempts it with the capped credit (3 ms
// on one CPU, as TheStatisticsSumTheSleeperCreditAndTheRunningTasksLead
// finds). A forked child is checked against its parent as "(fork)": the
// fork-time debit (a 3 ms slice) puts it 3 ms behind, so it waits; the
// parent, woken from do_wait by the child's exit, preempts the child that
// has run 1 ms of the 3 ms it was placed ahead.
TEST(Cfs, WakeupChecksAreSplitByTheQueuedAndTheRunningTasksWchans) {
  const auto by = checks_after_one_wakeup();
  ASSERT_EQ(by.size(), 1u);
  const auto woken = expect_checks(by, "test_wait", "-", 1, 1);
  EXPECT_EQ(woken.lead_ns, 3000000);
  // The one lead, 3 ms, is binned in [3, 3.25) ms.
  EXPECT_GE(woken.lead_quantile_ms(0.5), 3.0);
  EXPECT_LT(woken.lead_quantile_ms(0.5), 3.25);

  TinySim s("1s1c1t", "linux-4.0");
  s.k.spawn("parent", [](Proc& p) -> Co<void> {
    kernel::Program child = [](Proc& c) { return hog(c, 1000000, 100000); };
    co_await p.fork("child", child, false);
    co_await p.wait_child();
  }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto forked = s.k.policy().wakeup_checks_by_wchan();
  ASSERT_EQ(forked.size(), 2u);
  EXPECT_NEAR(static_cast<double>(expect_checks(forked, "(fork)", "-", 1, 0).lead_ns), -3e6, 1e3);
  EXPECT_EQ(expect_checks(forked, "do_wait", "-", 1, 1).lead_ns, 3000000);
  const auto st = s.policy_counters();
  EXPECT_EQ(st.at("wakeup_preempt_checks"), 2);
  EXPECT_EQ(st.at("wakeup_preemptions"), 1);
}

// The summary counts only the checks after the counters' reset (the
// benchmark's timed window), bins and all: a sleeper woken twice, at about
// 10 and 11 ms, with the reset between the two wakeups, leaves one check,
// binned once.
TEST(Cfs, WakeupChecksAfterTheResetKeepTheirOwnBins) {
  TinySim s("1s1c1t", "linux-4.0");
  kernel::WaitQueue wq;
  int round = 0;
  s.k.spawn("sleeper", [&](Proc& p) { return sleeper_woken_in_rounds(p, &wq, &round, 100); }, 0);
  s.k.spawn("waker", [&](Proc& p) { return waker_in_rounds(p, &wq, &round, 10, true); }, 0);
  obs::StatsCollector stats({});
  s.run(10500000);
  ASSERT_EQ(round, 1);
  const auto before = s.k.policy().wakeup_checks_by_wchan();
  ASSERT_EQ(before.size(), 1u);
  ASSERT_EQ(before.begin()->second.checks, 1);
  stats.reset(s.k);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const obs::Summary sum = stats.summarize(s.k);
  ASSERT_EQ(sum.wakeup_checks.size(), 1u);
  const kernel::WakeupCheckTally& after = sum.wakeup_checks.begin()->second;
  EXPECT_EQ(after.checks, 1);
  int64_t binned = 0;
  for (int64_t n : after.lead_bins) binned += n;
  EXPECT_EQ(binned, 1);
  EXPECT_EQ(s.k.policy().wakeup_checks_by_wchan().begin()->second.checks, 2);
}

namespace {
// A sleeper on CPU 0, moved to CPU `wake_cpu` while it sleeps and woken
// there by a waker on CPU 0 4.3 ms in, while a hog runs on CPU 1 and holds
// its min_vruntime (1s2c1t). A waker that sleeps the 4.3 ms (its nanosleep,
// plus the timer's slack and the idle exit) leaves the sleeper no lag
// without the fork-time debit; one that runs them leaves it 4.3 ms behind
// CPU 0's min_vruntime. Returns the one check of the sleeper: beside the
// hog when it moves, beside its waker when it stays.
kernel::WakeupCheckTally check_of_a_wakee(const std::string& features, int wake_cpu, bool waker_sleeps) {
  TinySim s("1s2c1t", "linux-4.0", 1, features);
  kernel::WaitQueue wq;
  bool woken = false;
  kernel::Task* sleeper = s.k.spawn("sleeper", [&](Proc& p) -> Co<void> {
    co_await p.wait_event(wq, [&] { return woken; }, "test_wait");
    co_await p.user(1000);
  }, 0);
  s.k.spawn("hog", [](Proc& p) { return hog(p, 20000000, 1000000); }, 1);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    if (waker_sleeps)
      co_await p.nanosleep(4300000);
    else
      co_await p.user(4300000);
    hw::CpuMask one;
    one.set(wake_cpu);
    p.kernel().set_cpus_allowed_ptr(sleeper, one);
    woken = true;
    co_await p.wake_up(wq, 1, 0);
  }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto checks = s.k.policy().wakeup_checks_by_wchan();
  EXPECT_EQ(checks.size(), 1u) << features << " on CPU " << wake_cpu;
  const std::string running = wake_cpu == 0 && waker_sleeps ? "hrtimer_nanosleep" : "-";
  const auto it = checks.find({"test_wait", running});
  if (it == checks.end()) {
    ADD_FAILURE() << "no check of the sleeper, " << features << " on CPU " << wake_cpu;
    return {};
  }
  EXPECT_EQ(it->second.checks, 1) << features << " on CPU " << wake_cpu;
  return it->second;
}
int64_t lead_over_a_migrated_wakee(const std::string& features) {
  const auto woken = check_of_a_wakee(features, 1, true);
  EXPECT_EQ(woken.preemptions, 0) << features;
  return woken.lead_ns / 1000;
}
}  // namespace

// 4.0 makes a migrating wakee's vruntime absolute against its new queue's
// min_vruntime before update_curr() charges the running hog what it ran
// since CPU 1's last tick (4 ms), so the wakee lands that far behind the
// hog: the ~360 us since the tick. From v4.7 (2f950354e6d5) it is made
// absolute after, "at the current moment": level with the hog.
TEST(Cfs, FromV47AMigratedWakeeIsNotCreditedItsNewQueuesPendingRuntime) {
  const int64_t v40 = lead_over_a_migrated_wakee("NO_START_DEBIT");
  const int64_t v47 = lead_over_a_migrated_wakee("NO_START_DEBIT,WAKE_RENORM_V47");
  EXPECT_GE(v40, 300);
  EXPECT_LE(v40, 450);
  EXPECT_GE(v47, 0);
  EXPECT_LE(v47, 5);
}

namespace {
constexpr const char* kFullCredit = "NO_START_DEBIT,MIGRATED_WAKEE_FULL_CREDIT";
}  // namespace

// MIGRATED_WAKEE_FULL_CREDIT (v6.3-rc1's 829c1651e9): migrate_task_rq()
// zeroes exec_start, and place_entity() reads that as a sleep of over 60 s,
// so a wakee that moves is placed at min_vruntime minus the sleeper
// threshold (latency 12 ms on 2 CPUs, halved: 6 ms), not at its own
// vruntime. The sleeper's own lag is the 4.3 ms its waker ran meanwhile, so
// moved onto the hog's CPU it trails the hog by about that in 4.0 and by
// exactly 6 ms with the bug. Woken where it slept it keeps its own
// vruntime, with the bug as without.
TEST(Cfs, MigratedWakeeFullCreditPlacesAMovedWakeeAtTheThreshold) {
  const auto moved40 = check_of_a_wakee("NO_START_DEBIT", 1, false);
  const auto moved_bug = check_of_a_wakee(kFullCredit, 1, false);
  EXPECT_GE(moved40.lead_ns, 4200000);
  EXPECT_LE(moved40.lead_ns, 4700000);
  EXPECT_EQ(moved_bug.lead_ns, 6000000);

  const auto stays40 = check_of_a_wakee("NO_START_DEBIT", 0, false);
  const auto stays_bug = check_of_a_wakee(kFullCredit, 0, false);
  EXPECT_GE(stays40.lead_ns, 4200000);
  EXPECT_LE(stays40.lead_ns, 4700000);
  EXPECT_EQ(stays40.lead_ns, stays_bug.lead_ns);
}

namespace {
// A sleeper that slept at once (so with no lag: it had run no more than
// its fellow task), pinned to CPU 0, woken 10 ms in by a waker on CPU 1
// while a hog has had CPU 0 to itself for 9 ms (1s2c1t). Returns the one
// check of the sleeper against the hog.
kernel::WakeupCheckTally check_of_a_long_sleeper(const std::string& features) {
  TinySim s("1s2c1t", "linux-4.0", 1, features);
  kernel::WaitQueue wq;
  bool woken = false;
  hw::CpuMask cpu0;
  cpu0.set(0);
  kernel::Task* sleeper = s.k.spawn("sleeper", [&](Proc& p) -> Co<void> {
    co_await p.wait_event(wq, [&] { return woken; }, "test_wait");
    co_await p.user(1000);
  }, 0);
  kernel::Task* hog_task = s.k.spawn("hog", [](Proc& p) -> Co<void> {
    co_await p.nanosleep(1000000);
    co_await hog(p, 20000000, 1000000);
  }, 0);
  s.k.set_cpus_allowed_ptr(sleeper, cpu0);
  s.k.set_cpus_allowed_ptr(hog_task, cpu0);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    co_await p.nanosleep(10000000);
    woken = true;
    co_await p.wake_up(wq, 1, 0);
  }, 1);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "") << features;
  const auto checks = s.k.policy().wakeup_checks_by_wchan();
  const auto it = checks.find({"test_wait", "hrtimer_nanosleep"});  // the hog's last wait
  if (it == checks.end()) {
    ADD_FAILURE() << "no check of the sleeper beside the hog, " << features;
    return {};
  }
  EXPECT_EQ(it->second.checks, 1) << features;
  return it->second;
}
}  // namespace

// EEVDF_V66 (v6.6 place_entity() with PLACE_LAG): a sleeper comes back
// with the lag it left with, not 4.0's sleeper credit. After 9 ms asleep
// beside a hog, 4.0 places it the threshold behind (latency 12 ms on 2
// CPUs, halved: 6 ms) and it preempts (the lead beats the 2 ms wakeup
// granularity). 6.6 places it at the queue's average, the hog's vruntime,
// less the few microseconds of lag it slept with, and it does not preempt
// the hog, whose deadline is no later than a whole slice from there.
TEST(Cfs, EevdfPlacesALongSleeperByItsLagNotTheSleeperCredit) {
  const auto v40 = check_of_a_long_sleeper("NO_START_DEBIT");
  EXPECT_EQ(v40.lead_ns, 6000000);
  EXPECT_EQ(v40.preemptions, 1);
  const auto v66 = check_of_a_long_sleeper("EEVDF_V66");
  EXPECT_GE(v66.lead_ns, -10000);
  EXPECT_LE(v66.lead_ns, 10000);
  EXPECT_EQ(v66.preemptions, 0);
  // Without PLACE_LAG it lands exactly on the average.
  EXPECT_EQ(check_of_a_long_sleeper("EEVDF_V66,EEVDF_NO_PLACE_LAG").lead_ns, 0);
}

// The launcher_wakee_flips environment: the process a run starts carries the
// flips, and its children inherit them at fork (dup_task_struct() copies
// task_struct.wakee_flips and __sched_fork() does not reset it).
Co<void> fork_one_and_read_its_flips(Proc& p, unsigned* child_flips) {
  kernel::Program child = [child_flips](Proc& c) -> Co<void> {
    *child_flips = c.task()->wakee_flips;
    co_await c.user(1000);
  };
  co_await p.fork("child", child, false);
  co_await p.wait_child();
}
unsigned flips_a_child_inherits(const std::vector<std::string>& sysctls) {
  TinySim s("kvm-epyc-1s2c", "linux-4.0", 1, "", sysctls);
  unsigned child_flips = 99;
  s.k.spawn("parent", [&](Proc& p) { return fork_one_and_read_its_flips(p, &child_flips); }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return child_flips;
}
TEST(Kernel, ALaunchersWakeWideFlipsAreInheritedByItsChildren) {
  EXPECT_EQ(flips_a_child_inherits({}), 0u);
  EXPECT_EQ(flips_a_child_inherits({"launcher_wakee_flips=3"}), 3u);
}

// record_wakee() charges the task an interrupt interrupts with the kernel
// thread the interrupt wakes. 4.0 records it in task_waking_fair(), for
// every wakee; from v4.7 (c58d25f371f5, with WAKE_RENORM_V47) it is in
// select_task_rq_fair(), which a wakee bound to one CPU skips, so only an
// unbound thread (kworker_noise_unbound) still counts. A flip is a change
// of wakee, so each hog, interrupted by its own CPU's kworker, gains one.
unsigned flips_of_a_hog_among_kworkers(const std::string& features, bool unbound) {
  std::vector<std::string> sysctls = {"kworker_noise_period_us=1000", "kworker_noise_run_us=5"};
  if (unbound) sysctls.emplace_back("kworker_noise_unbound=1");
  TinySim s("kvm-epyc-1s2c", "linux-4.0", 1, features, sysctls);
  s.k.spawn("a", [](Proc& p) { return hog(p, 20000000, 100000); }, 0);
  s.k.spawn("b", [](Proc& p) { return hog(p, 20000000, 100000); }, 1);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return s.task("a")->wakee_flips + s.task("b")->wakee_flips;
}
TEST(Cfs, FromV47ABoundKthreadWokenByAnInterruptIsNoFlipOfTheTaskItInterrupts) {
  EXPECT_EQ(flips_of_a_hog_among_kworkers("", false), 2u);
  EXPECT_EQ(flips_of_a_hog_among_kworkers("WAKE_RENORM_V47", false), 0u);
  EXPECT_GE(flips_of_a_hog_among_kworkers("WAKE_RENORM_V47", true), 2u);
}

// ---- switch_mm: an address space is loaded only when it changes ----
namespace {
hw::CpuMask only_cpu(int cpu) {
  hw::CpuMask m;
  m.set(cpu);
  return m;
}
// A parent and the child it forks (a process, or a thread with CLONE_VM)
// pass a token over two pipes `rounds` times, each pinned to its CPU.
void run_forked_pingpong(TinySim& s, bool thread, int parent_cpu, int child_cpu, int rounds) {
  workload::Fd there[2], back[2];
  workload::make_pipe(s.k.config(), there);
  workload::make_pipe(s.k.config(), back);
  kernel::Program child = [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only_cpu(child_cpu));
    co_await testsupport::pinger(p, &there[0], &back[1], rounds, false);
  };
  s.k.spawn("parent", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only_cpu(parent_cpu));
    co_await p.fork("child", child, thread);
    co_await testsupport::pinger(p, &back[0], &there[1], rounds, true);
  }, parent_cpu);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
}
// The forked ping-pong on a machine that charges `switch_mm_ns` for each
// change of address space: the work charged to context switches.
int64_t switch_work_of_a_forked_pingpong(int64_t switch_mm_ns, bool thread, int parent_cpu, int child_cpu,
                                         int rounds) {
  TinySim s(machine_with_cost("generic", "1s2c1t", "switch_mm", switch_mm_ns), "linux-4.0");
  run_forked_pingpong(s, thread, parent_cpu, child_cpu, rounds);
  return s.k.work_by_path()[static_cast<size_t>(kernel::CostPath::ContextSwitch)];
}
// How many times the ping-pong loaded an address space: the switch work it
// adds at a switch_mm of 1 ms, in whole milliseconds.
int64_t address_space_loads(bool thread, int parent_cpu, int child_cpu, int rounds) {
  constexpr int64_t kSwitchMmNs = 1000000;
  const int64_t added = switch_work_of_a_forked_pingpong(kSwitchMmNs, thread, parent_cpu, child_cpu, rounds) -
                        switch_work_of_a_forked_pingpong(0, thread, parent_cpu, child_cpu, rounds);
  EXPECT_EQ(added % kSwitchMmNs, 0);
  return added / kSwitchMmNs;
}
}  // namespace

// 4.0 context_switch()/switch_mm(): two processes on one CPU change the
// address space at every switch between them, two loads a round trip more
// for every round trip more; two threads of one process never do; and
// across two CPUs each task switches only with the idle task, which keeps
// the mm it found (enter_lazy_tlb()), so the loads are the start's (the
// parent, the child where fork placed it, each on its own CPU) however many
// round trips follow.
TEST(Switch, AnAddressSpaceIsLoadedOnlyWhenItChanges) {
  EXPECT_EQ(address_space_loads(false, 0, 0, 100) - address_space_loads(false, 0, 0, 50), 100);
  EXPECT_LE(address_space_loads(true, 0, 0, 100), 1);
  EXPECT_EQ(address_space_loads(true, 0, 0, 100), address_space_loads(true, 0, 0, 50));
  EXPECT_LE(address_space_loads(false, 0, 1, 100), 4);
  EXPECT_EQ(address_space_loads(false, 0, 1, 100), address_space_loads(false, 0, 1, 50));
  EXPECT_LE(address_space_loads(true, 0, 1, 100), 2);
  EXPECT_EQ(address_space_loads(true, 0, 1, 100), address_space_loads(true, 0, 1, 50));
}

// ---- ttwu_activate and dequeue_sleep: the wakeup's enqueue, the sleep's dequeue ----
namespace {
struct PingpongCharges {
  int64_t activations, dequeues, wakeups;
};
// The work a ping-pong of two processes pinned to `parent_cpu` and
// `child_cpu` charges to the wakeup and schedule paths, with both new costs
// at `ns`, and the wakeups CFS placed (place_entity() for a wakeup).
PingpongCharges pingpong(int64_t ns, int parent_cpu, int child_cpu, int rounds) {
  const auto profile = std::filesystem::path(::testing::TempDir()) /
                       ("schedlab_activate_dequeue_" + std::to_string(ns) + ".toml");
  std::ofstream(profile) << "[machine]\nextends = \"generic\"\nname = \"activate_dequeue\"\n"
                         << "topology = \"1s2c1t\"\nprivate_llc = true\n[costs]\n"
                         << "ttwu_activate = { value = " << ns << ", unit = \"ns\", source = \"test\" }\n"
                         << "dequeue_sleep = { value = " << 1000 * ns << ", unit = \"ns\", source = \"test\" }\n"
                         << "cost_jitter_permille = { value = 0, unit = \"permille\", source = \"test\" }\n";
  TinySim s(profile.string(), "linux-4.0");
  run_forked_pingpong(s, false, parent_cpu, child_cpu, rounds);
  const auto& work = s.k.work_by_path();
  return {work[static_cast<size_t>(kernel::CostPath::Wakeup)], work[static_cast<size_t>(kernel::CostPath::Schedule)],
          s.policy_counters().at("wakeups_placed")};
}
// Over 50 more round trips: the activations and dequeues charged, at 1 ns
// and 1 us a charge (too little to change the run's course; a charge's work
// is then its count), and the wakeups placed.
PingpongCharges charges_per_50_round_trips(int parent_cpu, int child_cpu) {
  auto added = [&](int rounds) {
    const auto with = pingpong(1, parent_cpu, child_cpu, rounds), without = pingpong(0, parent_cpu, child_cpu, rounds);
    return PingpongCharges{with.activations - without.activations, (with.dequeues - without.dequeues) / 1000,
                           without.wakeups};
  };
  const auto more = added(100), fewer = added(50);
  return {more.activations - fewer.activations, more.dequeues - fewer.dequeues, more.wakeups - fewer.wakeups};
}
}  // namespace

// Every wakeup's activation is charged once, whether the waker enqueues the
// wakee itself (one CPU) or the wakee's CPU does from its wake list (two
// CPUs with private LLCs: 4.0's ttwu_queue_remote()); and in a ping-pong
// every wakeup follows a sleep, whose dequeue is charged once, to the
// switch away from the sleeper. On one CPU the woken parent preempts its
// child, which then finds its token without sleeping: one wakeup a round
// trip; across two CPUs both sides sleep: two.
TEST(Switch, AWakeupActivatesOnceAndASleepDequeuesOnce) {
  const auto one_cpu = charges_per_50_round_trips(0, 0), two_cpus = charges_per_50_round_trips(0, 1);
  EXPECT_EQ(one_cpu.activations, one_cpu.wakeups);
  EXPECT_EQ(one_cpu.dequeues, one_cpu.wakeups);
  EXPECT_EQ(one_cpu.wakeups, 50);
  EXPECT_EQ(two_cpus.activations, two_cpus.wakeups);
  EXPECT_EQ(two_cpus.dequeues, two_cpus.wakeups);
  EXPECT_EQ(two_cpus.wakeups, 100);
}

// A child's exit wakes its parent from the child's own context
// (do_exit() -> exit_notify() -> do_notify_parent(), 4.0), and that
// try_to_wake_up() waits for a parent still switching out, as every one
// does ("while (p->on_cpu) cpu_relax();", 4.0 core.c): here the parent
// blocks in wait4() just as the child exits. The child's exit is swept
// across the parent's switch-out; no wakeup may place the parent while its
// old CPU still has it on_cpu, some must land in that window with the child
// spinning for it, and every wakeup runs with the exiting child current on
// the waking CPU (its wakee history, a sync wakeup's view of the waker's
// CPU). Before stop 80 such a wakeup placed and could move the parent at
// once, which the group pick (autogroup) crashed on; in stop 80 it ran
// from the child's CPU after the child had gone.
TEST(Wakeup, AChildsExitWaitsForItsParentsSwitchOut) {
  int on_cpu_wakeups = 0, spins = 0, woken_by_other = 0;
  // The parent blocks about 6 us after the child's exit at d = 0 reaches its
  // wakeup (the fork's cost, the child's start on the other CPU and
  // exit_base before do_notify_parent()); the sweep spans that and the
  // window stop 80's timing had, 25 us later.
  for (int64_t d = 0; d <= 40000; d += 50) {
    TinySim s("1s2c1t", "linux-4.0", 1, "", {"sched_autogroup_enabled=1"});
    struct Seen final : obs::Observer {
      const kernel::Kernel* k = nullptr;
      int* on_cpu_wakeups = nullptr;
      int* spins = nullptr;
      int* woken_by_other = nullptr;
      bool is_child(int cpu) const { return k->curr(cpu) && k->curr(cpu)->comm == "child"; }
      void on_wait_for_switch(int64_t, int cpu, int64_t spun) override { *spins += spun > 0 && is_child(cpu); }
      void on_waking(int64_t, int waker, const kernel::Task* p, int) override {
        if (p->comm != "parent") return;
        *on_cpu_wakeups += p->on_cpu;
        *woken_by_other += !is_child(waker);
      }
    } seen;
    seen.k = &s.k;
    seen.on_cpu_wakeups = &on_cpu_wakeups;
    seen.spins = &spins;
    seen.woken_by_other = &woken_by_other;
    s.k.add_observer(&seen);
    static int64_t child_ns;
    child_ns = 2000000 + d;
    static kernel::Program child = [](Proc& p) -> Co<void> { co_await p.user(child_ns); };
    s.k.spawn("parent", [](Proc& p) -> Co<void> {
      co_await p.fork("child", child, false);
      co_await p.user(2000000);
      co_await p.wait_child();
    }, 0);
    ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed) << d;
    EXPECT_EQ(s.k.check_invariants(), "") << d;
  }
  EXPECT_EQ(on_cpu_wakeups, 0);
  EXPECT_EQ(woken_by_other, 0);
  EXPECT_GT(spins, 0) << "no exit landed in the parent's switch-out: the sweep misses the window";
}

// An hrtimer's wakeup comes from interrupt context, with no task to spin
// in: when it finds its wakee still switching out (the newidle path of the
// schedule() the sleep began), it runs once that switch is done
// (Kernel::try_to_wake_up(), switched_away()). The kernel keeps that CPU's
// interrupts off from the switch's lock to finish_lock_switch(), so the
// wakeup cannot come earlier there either. A zero-length nanosleep() is
// due at once but may wait for its slack (50 us) unless an interrupt comes
// first: here the tick at 1 ms, which a sweep of the work before the sleep
// moves across the switch-out. No wakeup may place the sleeper while it is
// on_cpu, and some must land in the window, deferred to the switch's end
// (the rest fire at the slack's end, on the idle CPU).
TEST(Wakeup, AnHrtimersWakeupWaitsForItsWakeesSwitchOut) {
  int on_cpu_wakeups = 0, deferred = 0;
  for (int64_t ns = 1010000; ns <= 1020000; ns += 25) {
    TinySim s("1s2c1t", "linux-4.0");
    struct Seen final : obs::Observer {
      int* on_cpu_wakeups = nullptr;
      int* deferred = nullptr;
      int64_t switched_out_at = -1;
      void on_switch(int64_t t, int, const kernel::Task* prev, obs::PrevState st, const kernel::Task*) override {
        if (prev && prev->comm == "sleeper" && st == obs::PrevState::Sleeping) switched_out_at = t;
      }
      void on_waking(int64_t t, int, const kernel::Task* p, int) override {
        if (p->comm != "sleeper") return;
        *on_cpu_wakeups += p->on_cpu;
        *deferred += t == switched_out_at;
      }
    } seen;
    seen.on_cpu_wakeups = &on_cpu_wakeups;
    seen.deferred = &deferred;
    s.k.add_observer(&seen);
    static int64_t work_ns;
    work_ns = ns;
    s.k.spawn("sleeper", [](Proc& p) -> Co<void> {
      co_await p.user(work_ns);
      co_await p.nanosleep(0);
      co_await p.user(100000);
    }, 0);
    ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed) << ns;
    EXPECT_EQ(s.k.check_invariants(), "") << ns;
  }
  EXPECT_EQ(on_cpu_wakeups, 0);
  EXPECT_GT(deferred, 0) << "no timer fired in the sleeper's switch-out: the sweep misses the window";
}
