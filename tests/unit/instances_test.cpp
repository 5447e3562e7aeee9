#include <gtest/gtest.h>

#include <map>

#include "workload/bench/bench.hpp"
#include "../support/sim_fixture.hpp"

using testsupport::TinySim;
using workload::StartLayout;

TEST(StartLayout, ParsesCountsPerNode) {
  const auto l = StartLayout::parse("10/6", 25);
  EXPECT_EQ(l.per_node, (std::vector<int>{10, 6}));
  EXPECT_EQ(l.unpin_after_ns, 25000000);
  EXPECT_TRUE(StartLayout::parse("").per_node.empty());
  for (const char* bad : {"10x6", "10/", "/6", "-1/3", "1//2", "12345/1"})
    EXPECT_THROW(StartLayout::parse(bad), std::invalid_argument) << bad;
  EXPECT_THROW(StartLayout::parse("1/1", -1), std::invalid_argument);
  EXPECT_THROW(workload::Instances("pipe", {"-l", "10"}, 4, StartLayout::parse("2/1")), std::invalid_argument);
}

// sched_setaffinity() came with 2.5.8: the 2.4 presets cannot pin a launch.
TEST(Instances, AStartLayoutNeedsAKernelWithSchedSetaffinity) {
  TinySim s("2s2c1t", "linux-2.4.19");
  workload::Instances bench("pipe", {"-l", "10"}, 2, StartLayout::parse("1/1"));
  EXPECT_THROW(bench.start(s.k, [] {}), std::invalid_argument);
}

namespace {
// Which instance each benchmark task belongs to: the launcher's children in
// fork order, and their descendants.
std::map<const kernel::Task*, int> instance_of_tasks(TinySim& s) {
  std::map<const kernel::Task*, int> inst;
  int next = 0;
  for (const kernel::Task* t : s.k.all_tasks()) {
    if (!t->parent) continue;
    if (t->parent->comm == "sh") inst[t] = next++;
    else if (inst.count(t->parent)) inst[t] = inst[t->parent];
  }
  return inst;
}

// Four pipe instances on 2 sockets of 2 CPUs, launched with `layout`, run
// to the end: each benchmark task with the instance it belongs to.
std::map<const kernel::Task*, int> run_launch(TinySim& s, const char* loops, const StartLayout& layout) {
  workload::Instances bench("pipe", {"-l", loops}, 4, layout);
  bench.start(s.k, [] {});
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return instance_of_tasks(s);
}
}  // namespace

// `numactl --cpunodebind=K perf bench ... &`: with the unpinning later than
// the run, every task of instance i stays on its node for the whole run.
TEST(Instances, AStartLayoutKeepsEachInstanceOnItsNodeUntilUnpinned) {
  TinySim s("2s2c1t", "linux-4.0");
  const auto inst = run_launch(s, "200", StartLayout::parse("3/1", 1000));
  ASSERT_EQ(inst.size(), 8u);  // perf and its sched-pipe child, 4 times
  const auto& topo = s.machine.topo();
  for (const auto& [t, i] : inst) {
    const hw::CpuMask node = topo.node_mask(i < 3 ? 0 : 1);
    EXPECT_EQ(t->cpus_allowed, node) << t->comm << " of instance " << i;
    EXPECT_TRUE(node.test(t->cpu)) << t->comm << " of instance " << i;
  }
}

// `taskset -p`: once unpinned, every task of the benchmark may use any CPU.
TEST(Instances, EveryTaskOfTheBenchmarkIsUnpinnedAfterTheDelay) {
  TinySim s("2s2c1t", "linux-4.0");
  const auto inst = run_launch(s, "2000", StartLayout::parse("4/0", 1));
  ASSERT_EQ(inst.size(), 8u);
  bool some_ran_on_node1 = false;
  for (const auto& [t, i] : inst) {
    EXPECT_EQ(t->cpus_allowed, s.machine.topo().all()) << t->comm << " of instance " << i;
    some_ran_on_node1 |= s.machine.topo().cpu(t->cpu).socket == 1;
  }
  EXPECT_TRUE(some_ran_on_node1);  // 8 tasks on node 0's 2 CPUs: the balancer spreads them once free
}

// perf is a large dynamically linked binary: after its execve() the
// launcher's perf processes run perf_startup of user work (the dynamic
// loader and perf's own start-up) before the benchmark's first act, so the
// first timed window opens that much after the launch; other benchmarks'
// binaries are small, and exec_base covers them.
TEST(Instances, PerfStartsUpAfterItsExecBeforeTheBenchmark) {
  const auto first_window_ns = [](const char* name, std::vector<std::string> args) {
    TinySim s("2s2c1t", "linux-4.0");
    workload::Instances bench(name, std::move(args), 2, StartLayout{});
    int64_t opened = -1;
    bench.start(s.k, [&] { opened = s.k.now_ns(); });
    s.run();
    return opened;
  };
  const int64_t startup = hw::load_machine("2s2c1t").costs.perf_startup;
  ASSERT_GT(startup, 1000000);
  const int64_t pipe = first_window_ns("pipe", {"-l", "10"});
  EXPECT_GE(pipe, startup * 98 / 100);  // the cost's jitter is 2%
  EXPECT_LT(pipe, startup + 2000000);   // the shell's fork and perf's exec
  const int64_t schbench = first_window_ns("schbench", {"-m", "1", "-t", "1", "-r", "1"});
  EXPECT_GE(schbench, 0);
  EXPECT_LT(schbench, 2000000);
}
