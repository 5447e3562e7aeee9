// Golden scenarios: 2-4 tasks on 1-2 CPUs per policy, and the exact event
// log (ftrace text) each must produce. Regenerate deliberately with
// SCHEDLAB_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <fstream>
#include <sstream>
#include <string>

#include "../support/sim_fixture.hpp"
#include "obs/stats.hpp"
#include "obs/trace.hpp"
#include "workload/ipc/ipc.hpp"

using kernel::Co;
using kernel::Proc;
using testsupport::hog;
using testsupport::pinger;
using testsupport::TinySim;

namespace {

std::string golden_path(const std::string& name) {
  return std::string(SCHEDLAB_SOURCE_DIR) + "/tests/golden/" + name + ".log";
}

void check_golden(const std::string& name, TinySim& s, obs::FtraceWriter& trace) {
  auto r = s.run();
  ASSERT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  ASSERT_EQ(s.k.check_invariants(), "");
  std::string text = trace.text();
  text = text.substr(text.find("\n#              | |") + 1);
  text = text.substr(text.find('\n') + 1);  // drop the header
  const std::string path = golden_path(name);
  if (std::getenv("SCHEDLAB_UPDATE_GOLDEN")) {
    std::ofstream(path) << text;
    GTEST_SKIP() << "updated " << path;
  }
  std::ifstream f(path);
  ASSERT_TRUE(f.good()) << "missing " << path << " (run with SCHEDLAB_UPDATE_GOLDEN=1)";
  std::stringstream want;
  want << f.rdbuf();
  EXPECT_EQ(text, want.str()) << "event log of scenario " << name << " changed";
}

// The target_cpu of the first trace line containing `event`, or -1.
int target_cpu_of(const obs::FtraceWriter& trace, const std::string& event) {
  const std::string t = trace.text();
  const auto at = t.find(event);
  if (at == std::string::npos) return -1;
  return std::stoi(t.substr(t.find("target_cpu=", at) + 11, 3));
}

void pipe_scenario(const char* preset, const char* name) {
  TinySim s("1s2c1t", preset);
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  workload::Fd a[2], b[2];
  workload::make_pipe(s.k.config(), a);
  workload::make_pipe(s.k.config(), b);
  s.k.spawn("ping", [&](Proc& p) { return pinger(p, &b[0], &a[1], 3, true); }, 0);
  s.k.spawn("pong", [&](Proc& p) { return pinger(p, &a[0], &b[1], 3, false); }, 1);
  check_golden(name, s, trace);
}

void hogs_scenario(const char* preset, const char* name, int64_t work) {
  TinySim s("1s1c1t", preset);
  obs::FtraceWriter trace(1);
  s.k.add_observer(&trace);
  s.k.spawn("hogA", [work](Proc& p) { return hog(p, work, work / 4); }, 0);
  s.k.spawn("hogB", [work](Proc& p) { return hog(p, work, work / 4); }, 0);
  check_golden(name, s, trace);
}

}  // namespace

// CFS: two CPU hogs time-share one CPU by vruntime (4 ms slices at latency 6 ms).
TEST(Golden, CfsTwoHogsOneCpu) { hogs_scenario("linux-4.0", "cfs_two_hogs_one_cpu", 12000000); }
// 2.4: two hogs alternate in 60 ms slices (counter 6 at HZ=100), then an epoch.
TEST(Golden, Linux24TwoHogsOneCpu) { hogs_scenario("linux-2.4.19", "linux24_two_hogs_one_cpu", 80000000); }
// CFS: a pipe ping-pong across two CPUs; sync wakeups, select_idle_sibling keeps prev.
TEST(Golden, CfsPipePingPongTwoCpus) { pipe_scenario("linux-4.0", "cfs_pipe_pingpong_two_cpus"); }
// 2.4: the same ping-pong; async end-of-write wakeups go through reschedule_idle().
TEST(Golden, Linux24PipePingPongTwoCpus) { pipe_scenario("linux-2.4.19", "linux24_pipe_pingpong_two_cpus"); }

// CFS with autogroup: on one CPU a session of two hogs and a session of one.
// The root queue holds two group entities of equal weight, so the lone hog
// runs as long as the pair together; inside the pair's group the two
// alternate.
TEST(Golden, CfsAutogroupTwoSessionsOneCpu) {
  TinySim s("1s1c1t", "linux-4.0", 1, "", {"sched_autogroup_enabled=1"});
  obs::FtraceWriter trace(1);
  s.k.add_observer(&trace);
  s.k.spawn("pair", [](Proc& p) -> Co<void> {
    kernel::Program second = [](Proc& c) { return hog(c, 6000000, 1500000); };
    co_await p.fork("pair2", second, false);
    co_await hog(p, 6000000, 1500000);
    co_await p.wait_child();
  }, 0);
  s.k.spawn("lone", [](Proc& p) { return hog(p, 6000000, 1500000); }, 0);
  check_golden("cfs_autogroup_two_sessions_one_cpu", s, trace);
}

// CFS fork: a parent forks two children onto a 2-CPU machine and reaps them.
TEST(Golden, CfsForkAndReap) {
  TinySim s("1s2c1t", "linux-4.0");
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  s.k.spawn("parent", [](Proc& p) -> Co<void> {
    kernel::Program kid = [](Proc& c) { return hog(c, 2000000, 1000000); };
    co_await p.fork("kid", kid, false);
    co_await p.fork("kid", kid, false);
    co_await p.wait_child();
    co_await p.wait_child();
  }, 0);
  check_golden("cfs_fork_and_reap", s, trace);
}

// CFS exec: a task execs on a CPU that a pinned hog keeps busy; sched_exec()
// picks the idle CPU, the stopper preempts the task (prev_state=R+) and
// moves it, and the exec's work and the new program run there.
TEST(Golden, CfsExecMovesOffTheBusyCpu) {
  TinySim s("1s2c1t", "linux-4.0");
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  kernel::Task* h = s.k.spawn("hog", [](Proc& p) { return hog(p, 3000000, 1000000); }, 0);
  hw::CpuMask only_cpu0;
  only_cpu0.set(0);
  h->cpus_allowed = only_cpu0;
  s.k.spawn("sh", [](Proc& p) -> Co<void> {
    co_await p.exec();
    co_await p.user(500000);
  }, 0);
  check_golden("cfs_exec_moves_off_the_busy_cpu", s, trace);
}

namespace {
Co<void> blocker(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.wait_event(*wq, [flag] { return *flag; }, "test_wait");
  co_await p.user(50000);
}
Co<void> waking_hog(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.user(100000);
  *flag = true;
  co_await p.wake_up(*wq, 1, kernel::WF_SYNC);
  co_await p.user(400000);
}

// The seed-000 scenarios' machine: 2s2c1t (CPUs 0-1 on socket 0, 2-3 on
// socket 1), Linux 4.0 with `features`, traced; sleepers share one queue.
struct TwoSocketScenario {
  TinySim s;
  obs::FtraceWriter trace{4};
  kernel::WaitQueue wq;
  bool flag = false;
  explicit TwoSocketScenario(const char* features) : s("2s2c1t", "linux-4.0", 1, features) {
    s.k.add_observer(&trace);
  }
  // Runs `program` as a new task on `cpu` once `at_ns` of simulated time has passed.
  void spawn_at(int64_t at_ns, const char* comm, kernel::Program program, int cpu) {
    s.k.events().schedule(sim::Time(at_ns), sim::Phase::Control,
                          [this, comm, program, cpu] { s.k.spawn(comm, program, cpu); });
  }
};

// Seed 000's mechanism on a 2-socket machine (CPUs 0-1 on socket 0, 2-3 on
// socket 1): socket 0 is fully busy, socket 1 idle. A task that last ran on
// CPU 1 is woken by the hog on CPU 0. Returns the CPU it is woken onto;
// `causes` gets the run's migrations by cause.
int seed000_wakeup(const char* features, const char* golden, std::map<std::string, int64_t>* causes) {
  TwoSocketScenario x(features);
  obs::StatsCollector stats{x.s.k.domains().level_names()};
  x.s.k.add_observer(&stats);
  stats.reset(x.s.k);
  x.s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &x.wq, &x.flag); }, 1);
  x.s.k.spawn("hog0", [&](Proc& p) { return waking_hog(p, &x.wq, &x.flag); }, 0);
  // Once the sleeper has slept on CPU 1, a hog takes CPU 1 over.
  x.spawn_at(50000, "hog1", [](Proc& p) { return hog(p, 500000, 100000); }, 1);
  check_golden(golden, x.s, x.trace);
  *causes = stats.summarize(x.s.k).migrations_by_cause;
  return target_cpu_of(x.trace, "sched_wakeup: comm=sleeper");
}
}  // namespace

TEST(Golden, Seed000BaselineWakesOntoTheBusySocket) {
  std::map<std::string, int64_t> causes;
  const int cpu = seed000_wakeup("", "seed000_baseline", &causes);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 0 || cpu == 1) << "woken onto cpu " << cpu;
  // Pulled onto the waker's busy CPU: select_idle_sibling() found no idle
  // CPU in socket 0 and kept its target.
  if (cpu == 0) {
    EXPECT_EQ(causes, (std::map<std::string, int64_t>{{"wake_busy_target", 1}}));
  }
}

// The statistics name the fall-through as the wakeup's cause of moving.
TEST(Golden, Seed000WakeIdleCpuFindsTheIdleSocket) {
  std::map<std::string, int64_t> causes;
  const int cpu = seed000_wakeup("WAKE_IDLE_CPU", "seed000_wake_idle_cpu", &causes);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 2 || cpu == 3) << "woken onto cpu " << cpu;
  EXPECT_EQ(causes["wake_slow_path"], 1);
}

namespace {
// Where WAKE_IDLE_CPU's fall-through puts a wakee when no CPU is idle: it
// searches from the waker's CPU, and find_idlest_group() keeps the waker's
// socket unless the other is imbalance_pct/2 (12%) lighter. Every CPU of
// 2s2c1t is busy and both sockets carry five hogs (CPU 0: the waker and
// three more, CPU 1: one; CPU 2: two, CPU 3: three). The sleeper last ran
// on CPU 2. wake_affine() refuses the sync wakeup (CPU 0 is far heavier
// than CPU 2), so the baseline leaves it on CPU 2; the patch moves it to the
// waker's socket, onto CPU 1, the least loaded there, though it is busy.
// Returns the CPU it is woken onto; `counters` gets the fall-through's
// counts (slow paths, waker on another socket, moved socket, on the
// waker's socket; -1 where the policy has none).
int balanced_sockets_wakeup(const char* features, const char* golden, std::array<int64_t, 4>* counters) {
  TwoSocketScenario x(features);
  x.s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &x.wq, &x.flag); }, 2);
  x.s.k.spawn("hog0", [&](Proc& p) { return waking_hog(p, &x.wq, &x.flag); }, 0);
  static const char* const kNames[] = {"hog0a", "hog0b", "hog0c", "hog1", "hog2a", "hog2b", "hog3a", "hog3b", "hog3c"};
  static const int kCpus[] = {0, 0, 0, 1, 2, 2, 3, 3, 3};
  for (size_t i = 0; i < std::size(kCpus); ++i)
    x.spawn_at(50000, kNames[i], [](Proc& p) { return hog(p, 500000, 100000); }, kCpus[i]);
  check_golden(golden, x.s, x.trace);
  static const char* const kCounters[] = {"wake_idle_cpu_slow_paths", "wake_idle_cpu_slow_path_waker_remote",
                                          "wake_idle_cpu_slow_path_moved_socket",
                                          "wake_idle_cpu_slow_path_on_waker_socket"};
  counters->fill(-1);
  for (const auto& [name, value] : x.s.k.policy().stats())
    for (size_t i = 0; i < counters->size(); ++i)
      if (name == kCounters[i]) (*counters)[i] = value;
  return target_cpu_of(x.trace, "sched_wakeup: comm=sleeper");
}
}  // namespace

TEST(Golden, Seed000BaselineLeavesTheWakeeOnItsBusySocket) {
  std::array<int64_t, 4> counters{};
  const int cpu = balanced_sockets_wakeup("", "seed000_balanced_baseline", &counters);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 2);
  EXPECT_EQ(counters, (std::array<int64_t, 4>{-1, -1, -1, -1}));
}

TEST(Golden, Seed000WakeIdleCpuPullsTheWakeeToTheWakersSocket) {
  std::array<int64_t, 4> counters{};
  const int cpu = balanced_sockets_wakeup("WAKE_IDLE_CPU", "seed000_balanced_wake_idle_cpu", &counters);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 1);
  EXPECT_EQ(counters, (std::array<int64_t, 4>{1, 1, 1, 1}));
}

namespace {
Co<void> napper(Proc& p) {
  co_await p.user(40000);
  co_await p.nanosleep(50000000);
}
Co<void> late_waker(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.user(3000000);
  *flag = true;
  co_await p.wake_up(*wq, 1, kernel::WF_SYNC);
  co_await p.user(1000000);
}

// What 6.1's slow path (the what-if FIND_IDLEST_V61) weighs that 4.0's does
// not: a CPU's sleepers. On 2s1c1t the sleeper last ran on CPU 0, where its
// waker and two hogs run; CPU 1 runs two hogs, and two nappers that ran
// there are asleep. Everything but the sleeper is pinned, so no balancing
// moves it. With WAKE_IDLE_CPU the busy CPU 0 falls through to the slow
// path. 4.0 sees three runnable tasks against two and moves the wakee to
// CPU 1; 6.1's load keeps the nappers' decaying share, so CPU 1 is no
// lighter and the wakee stays on CPU 0.
int sleepers_weigh_wakeup(const char* features, const char* golden) {
  TinySim s("2s1c1t", "linux-4.0", 1, features);
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  kernel::WaitQueue wq;
  bool flag = false;
  auto pin = [](kernel::Task* t, int cpu) {
    t->cpus_allowed = hw::CpuMask{};
    t->cpus_allowed.set(cpu);
  };
  s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &wq, &flag); }, 0);
  // Then the waker and the nappers, once the sleeper has gone to sleep, and
  // the hogs once the nappers have.
  s.k.events().schedule(sim::Time(10000), sim::Phase::Control, [&] {
    pin(s.k.spawn("waker", [&](Proc& p) { return late_waker(p, &wq, &flag); }, 0), 0);
    pin(s.k.spawn("napper1", [](Proc& p) { return napper(p); }, 1), 1);
    pin(s.k.spawn("napper2", [](Proc& p) { return napper(p); }, 1), 1);
  });
  s.k.events().schedule(sim::Time(200000), sim::Phase::Control, [&] {
    static const char* const kNames[] = {"hog0b", "hog0c", "hog1a", "hog1b"};
    static const int kCpus[] = {0, 0, 1, 1};
    for (size_t i = 0; i < std::size(kCpus); ++i)
      pin(s.k.spawn(kNames[i], [](Proc& p) { return hog(p, 20000000, 1000000); }, kCpus[i]), kCpus[i]);
  });
  check_golden(golden, s, trace);
  return target_cpu_of(trace, "sched_wakeup: comm=sleeper");
}
}  // namespace

TEST(Golden, Seed000WakeIdleCpuOn40sRunnableLoadMovesTheWakee) {
  const int cpu = sleepers_weigh_wakeup("WAKE_IDLE_CPU", "seed000_sleepers_wake_idle_cpu");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 1);
}

TEST(Golden, Seed000WakeIdleCpuOn61sLoadKeepsTheWakee) {
  const int cpu = sleepers_weigh_wakeup("WAKE_IDLE_CPU,FIND_IDLEST_V61", "seed000_sleepers_find_idlest_v61");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 0);
}

namespace {
// How much one newidle pass moves, 4.0's against 6.1's (the what-if
// LOAD_BALANCE_V61). Six hogs start on CPU 1 of 2s1c1t while CPU 0 idles;
// the first tick on CPU 1 kicks CPU 0, which goes newly idle and pulls.
// 4.0 detaches load until the two CPUs' loads are even: three hogs. 6.1
// finds the idle CPU's spare capacity against an overloaded CPU and
// counts the imbalance in utilisation (a fork starts at half the capacity
// its queue has left, post_init_entity_util_avg()), but Debian's 6.1 is
// CONFIG_PREEMPTION, so a newidle pass stops at one task ("NEWIDLE
// balancing is a source of latency"); CPU 0 then takes one more each time
// it goes newly idle. Both kernels' detach_tasks() list_add() each task to
// the head of env->tasks and attach_tasks() takes them from there, so the
// last one detached is enqueued first: where two pulled hogs tie on
// vruntime, that one runs first. Returns how many hogs the first pass moved
// to CPU 0, and the first hog CPU 0 ran.
struct FirstPull {
  int moved = 0;
  std::string first_run;
};
FirstPull first_pull_of_forks(const char* features, const char* golden) {
  TinySim s("2s1c1t", "linux-4.0", 1, features);
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  static const char* const kNames[] = {"hog1", "hog2", "hog3", "hog4", "hog5", "hog6"};
  for (const char* name : kNames) s.k.spawn(name, [](Proc& p) { return hog(p, 3000000, 1000000); }, 1);
  check_golden(golden, s, trace);
  // The pass's migrations share one timestamp, the first migration's.
  std::istringstream lines(trace.text());
  std::string line, pass_stamp;
  FirstPull pull;
  while (std::getline(lines, line)) {
    const auto switch_from_idle = line.find("[000] d..2");
    if (pull.first_run.empty() && switch_from_idle != std::string::npos &&
        line.find("prev_comm=swapper/0") != std::string::npos) {
      const auto next = line.find("next_comm=") + std::strlen("next_comm=");
      pull.first_run = line.substr(next, line.find(' ', next) - next);
    }
    const auto event = line.find(": sched_migrate_task:");
    if (event == std::string::npos) continue;
    const std::string stamp = line.substr(line.rfind(' ', event) + 1, event - line.rfind(' ', event) - 1);
    if (pass_stamp.empty()) pass_stamp = stamp;
    if (stamp == pass_stamp && line.find("dest_cpu=0") != std::string::npos) ++pull.moved;
  }
  return pull;
}
}  // namespace

TEST(Golden, FirstNewidlePullOn40EvensTheLoad) {
  const FirstPull pull = first_pull_of_forks("", "first_pull_of_forks_40");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(pull.moved, 3);
  // Detached hog5, hog4, hog3 (the trace's order: set_task_cpu() runs in
  // detach_task()); enqueued hog3, hog4, hog5. hog4 and hog5 carry the same
  // vruntime, hog3 a slice more, so the tie goes to hog4, enqueued first.
  EXPECT_EQ(pull.first_run, "hog4");
}

TEST(Golden, FirstNewidlePullOn61MovesOneTask) {
  const FirstPull pull = first_pull_of_forks("LOAD_BALANCE_V61", "first_pull_of_forks_load_balance_v61");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(pull.moved, 1);
}

namespace {
Co<void> waking_exiter(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.user(100000);
  *flag = true;
  co_await p.wake_up(*wq, 1, 0);  // every (non-exclusive) sleeper
}
// Sleeps after the others. A wait queue wakes its newest sleeper first
// (__add_wait_queue() links at the head), so the early blocker wakes last.
Co<void> late_blocker(Proc& p, kernel::WaitQueue* wq, bool* flag) {
  co_await p.user(20000);
  co_await blocker(p, wq, flag);
}

// Where WAKE_IDLE_CPU's fall-through goes wrong (2s2c1t: CPUs 0-1 socket 0,
// 2-3 socket 1). The waker on CPU 0 wakes three sleepers at once and exits;
// a hog keeps CPU 1 busy. s1 and s2 go back to their idle CPUs 2 and 3,
// queued there (TTWU_QUEUE) until those leave their C-state. s3 last ran on
// CPU 0: select_idle_sibling() leaves it on the waker's CPU, which frees
// within microseconds. With WAKE_IDLE_CPU the slow path ranks socket 1
// idlest by weighted_cpuload() (its queued wakeups carry no load yet) and
// queues s3 on the same CPU as one of them, while CPU 0 goes idle; the wake
// list is activated newest first, so s3 runs and s2 waits behind it.
// Returns s3's CPU;
// `inflight` gets the policy's count of fall-throughs onto a wakeup in flight.
int batch_wakeup(const char* features, const char* golden, int64_t* inflight) {
  TwoSocketScenario x(features);
  x.s.k.spawn("s1", [&](Proc& p) { return late_blocker(p, &x.wq, &x.flag); }, 2);
  x.s.k.spawn("s2", [&](Proc& p) { return late_blocker(p, &x.wq, &x.flag); }, 3);
  x.s.k.spawn("s3", [&](Proc& p) { return blocker(p, &x.wq, &x.flag); }, 0);  // woken last
  x.s.k.spawn("hog1", [](Proc& p) { return hog(p, 500000, 100000); }, 1);
  // Once every sleeper sleeps, the waker starts on CPU 0.
  x.spawn_at(50000, "waker", [&](Proc& p) { return waking_exiter(p, &x.wq, &x.flag); }, 0);
  check_golden(golden, x.s, x.trace);
  *inflight = -1;
  for (const auto& [name, value] : x.s.k.policy().stats())
    if (name == "wake_idle_cpu_slow_path_inflight") *inflight = value;
  return target_cpu_of(x.trace, "sched_waking: comm=s3");
}
}  // namespace

TEST(Golden, Seed000BatchBaselineLeavesTheWakeeOnTheWakersCpu) {
  int64_t inflight = 0;
  const int cpu = batch_wakeup("", "seed000_batch_baseline", &inflight);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 0);
}

TEST(Golden, Seed000BatchWakeIdleCpuStacksOnAQueuedWakeup) {
  int64_t inflight = 0;
  const int cpu = batch_wakeup("WAKE_IDLE_CPU", "seed000_batch_wake_idle_cpu", &inflight);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 2 || cpu == 3) << "woken onto cpu " << cpu;
  EXPECT_EQ(inflight, 1);  // s3's fall-through chose a CPU with only s1's or s2's wakeup on it
}

// Facebook's earlier SD_WAKE_IDLE port looks for an idle CPU by occupancy:
// in the first scenario it finds socket 1 too, and in the batch it leaves s3
// on the waker's CPU, since socket 1's CPUs are not idle but hold wakeups.
TEST(Golden, Seed000SdWakeIdleFindsTheIdleSocket) {
  std::map<std::string, int64_t> causes;
  const int cpu = seed000_wakeup("SD_WAKE_IDLE", "seed000_sd_wake_idle", &causes);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 2 || cpu == 3) << "woken onto cpu " << cpu;
  EXPECT_EQ(causes["wake_sd_wake_idle"], 1);
}

TEST(Golden, Seed000BatchSdWakeIdleDoesNotStack) {
  int64_t inflight = 0;
  const int cpu = batch_wakeup("SD_WAKE_IDLE", "seed000_batch_sd_wake_idle", &inflight);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 0);
}

namespace {
// A sleeper that last ran on `sleeper_cpu` is woken by a hog on CPU 0 (a
// sync wakeup) once hogs hold `hog_cpus`; traced. Returns the sleeper's CPU
// and sets `counter` to the policy statistic of that name (-1 if absent).
int socket_wakeup(const char* machine, const char* features, const char* golden, int sleeper_cpu,
                  std::vector<int> hog_cpus, const char* counter_name, int64_t* counter,
                  const std::vector<std::string>& sysctls = {}) {
  TinySim s(machine, "linux-4.0", 1, features, sysctls);
  obs::FtraceWriter trace(s.k.nr_cpus());
  s.k.add_observer(&trace);
  kernel::WaitQueue wq;
  bool flag = false;
  s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &wq, &flag); }, sleeper_cpu);
  s.k.spawn("hog0", [&](Proc& p) { return waking_hog(p, &wq, &flag); }, 0);
  for (int cpu : hog_cpus)
    s.k.events().schedule(sim::Time(50000), sim::Phase::Control, [&s, cpu] {
      // The waker is hog0; a hog beside it on CPU 0 is hog0b.
      static const char* const kNames[] = {"hog0b", "hog1", "hog2", "hog3", "hog4", "hog5", "hog6", "hog7"};
      s.k.spawn(kNames[cpu], [](Proc& p) { return hog(p, 500000, 100000); }, cpu);
    });
  check_golden(golden, s, trace);
  *counter = -1;
  for (const auto& [name, value] : s.k.policy().stats())
    if (name == counter_name) *counter = value;
  return target_cpu_of(trace, "sched_wakeup: comm=sleeper");
}

// socket_wakeup(), expecting the sleeper on `want_cpu` and the policy
// counter at `want_count` (-1: a policy without that counter).
void expect_socket_wakeup(const char* machine, const char* features, const char* golden, int sleeper_cpu,
                          std::vector<int> hog_cpus, const char* counter_name, int want_cpu, int64_t want_count) {
  int64_t count = 0;
  const int cpu = socket_wakeup(machine, features, golden, sleeper_cpu, std::move(hog_cpus), counter_name, &count);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, want_cpu) << golden;
  EXPECT_EQ(count, want_count) << golden << ": " << counter_name;
}
}  // namespace

// v5.4's select_idle_sibling() (the what-if SELECT_IDLE_V54) against 4.0's,
// on one socket of two cores with two threads (cores {0,2} and {1,3}). The
// sleeper last ran on CPU 1; when the hog on CPU 0 wakes it, hogs hold CPUs
// 1 and 2: only CPU 3 is idle, and no core is. 4.0 looks, from the LLC down
// to the target's SMT level, for a group whose CPUs are all idle: no core
// is, and the target's sibling (CPU 2) is busy, so it keeps the busy
// target. 5.4's select_idle_core() finds no idle core either (and clears
// has_idle_cores), then select_idle_cpu() finds CPU 3.
TEST(Golden, CfsSelectIdleSiblingKeepsTheBusyTargetWithoutAnIdleCore) {
  int64_t hits = 0;
  const int cpu = socket_wakeup("1s2c2t", "", "cfs_sis_no_idle_core", 1, {1, 2}, "sis_busy_target", &hits);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 0 || cpu == 1) << "woken onto cpu " << cpu;
  EXPECT_EQ(hits, 1);  // the sleeper's wakeup is the run's only one
}

TEST(Golden, CfsSelectIdleV54FindsTheIdleThreadOfABusyCore) {
  expect_socket_wakeup("1s2c2t", "SELECT_IDLE_V54", "cfs_sis_v54_idle_thread", 1, {1, 2}, "sis_idle_cpu", 3, 1);
}

// An idle core comes before an idle thread: three cores of two threads
// ({0,3}, {1,4}, {2,5}); the sleeper last ran on CPU 3, and hogs hold CPUs
// 3 and 4 when the hog on CPU 0 wakes it. CPU 1 is idle but its core is
// not; core {2,5} is. select_idle_core() scans from the target (CPU 0,
// after the affine wakeup) and takes CPU 2, where select_idle_cpu() alone
// would have taken CPU 1.
TEST(Golden, CfsSelectIdleV54PrefersAnIdleCore) {
  expect_socket_wakeup("1s3c2t", "SELECT_IDLE_V54", "cfs_sis_v54_idle_core", 3, {3, 4}, "sis_idle_core", 2, 1);
}

// Where a pipe pair lands when no core is idle (stop 36's trace of 5.4's
// pipe slowdown): three cores of two threads ({0,3}, {1,4}, {2,5}); hogs
// hold CPUs 0 (the waker), 1 (the sleeper's last CPU) and 5, so every core
// has one idle thread. The affine wakeup makes the waker's CPU 0 the
// target; its sibling is CPU 3. 4.0's select_idle_sibling() finds no
// all-idle group at the LLC level and walks down to the target's SMT
// domain: CPU 3. 5.4 runs select_idle_cpu() before select_idle_smt(): its
// scan from the target (0 busy, 1 busy, 2 idle) takes CPU 2, another core,
// before it would reach the sibling. (On a box numbered thread-first, or
// when SIS_PROP's budget runs out first, 5.4 takes the sibling too.)
TEST(Golden, CfsSelectIdleSiblingTakesTheTargetsIdleSibling) {
  expect_socket_wakeup("1s3c2t", "", "cfs_sis_idle_sibling", 1, {1, 5}, "sis_idle_smt", 3, 1);
}

TEST(Golden, CfsSelectIdleV54TakesAnotherCoreBeforeTheTargetsSibling) {
  expect_socket_wakeup("1s3c2t", "SELECT_IDLE_V54", "cfs_sis_v54_other_core", 1, {1, 5}, "sis_idle_cpu", 2, 1);
}

// SIS_PROP's budget: eight single-thread CPUs with sched_migration_cost_ns
// at 200 ns, so the waking CPU's avg_idle is at most 400 ns, avg_idle / 512
// is 0 and the budget is the minimum, 4 (avg_scan_cost starts at 0, so
// anything larger would allow the first scan 8 x avg_idle / 512). Hogs hold every CPU but CPU 3 when the hog on CPU 0 wakes
// the sleeper (last on CPU 1). select_idle_cpu() looks at CPUs 0, 1 and 2
// from the target and gives up at the fourth, CPU 3, the idle one: the
// wakee stays on the busy target. At the default cost it finds CPU 3.
TEST(Golden, CfsSelectIdleV54ScanStopsAtItsBudget) {
  int64_t cut = 0;
  const int cpu = socket_wakeup("1s8c1t", "SELECT_IDLE_V54", "cfs_sis_v54_scan_budget", 1, {1, 2, 4, 5, 6, 7},
                                "sis_scans_cut", &cut, {"sched_migration_cost_ns=200"});
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 0 || cpu == 1) << "woken onto cpu " << cpu;
  EXPECT_EQ(cut, 1);
}

TEST(Golden, CfsSelectIdleV54ScanFindsTheIdleCpuWithinAWideBudget) {
  int64_t cut = 0;
  const int cpu = socket_wakeup("1s8c1t", "SELECT_IDLE_V54", "cfs_sis_v54_scan_wide", 1, {1, 2, 4, 5, 6, 7},
                                "sis_scans_cut", &cut);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(cpu, 3);
  EXPECT_EQ(cut, 0);
}

namespace {
// The CPU that logs the first trace line containing `event` (its "[NNN]"
// column), or -1.
int logging_cpu_of(const obs::FtraceWriter& trace, const std::string& event) {
  const std::string t = trace.text();
  const auto at = t.find(event);
  if (at == std::string::npos) return -1;
  return std::stoi(t.substr(t.rfind('[', at) + 1, 3));
}

// On one socket of two cores (one LLC), the hog on CPU 0 wakes the sleeper
// that last ran on CPU 1, idle by then or, with `cpu1_busy`, running a hog
// (both pinned there, so the wakee goes back to CPU 1); traced. Returns the
// CPU that logged the sleeper's sched_wakeup (the one that enqueued it)
// and sets `target` to the CPU it was woken onto.
int llc_wakeup_enqueuer(const char* features, const char* golden, int* target, bool cpu1_busy = false) {
  TinySim s("1s2c1t", "linux-4.0", 1, features);
  obs::FtraceWriter trace(2);
  s.k.add_observer(&trace);
  kernel::WaitQueue wq;
  bool flag = false;
  auto pin_to_cpu1 = [](kernel::Task* t) {
    t->cpus_allowed = hw::CpuMask{};
    t->cpus_allowed.set(1);
  };
  kernel::Task* sleeper = s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &wq, &flag); }, 1);
  s.k.spawn("hog0", [&](Proc& p) { return waking_hog(p, &wq, &flag); }, 0);
  if (cpu1_busy) {
    pin_to_cpu1(sleeper);
    s.k.events().schedule(sim::Time(50000), sim::Phase::Control, [&] {
      pin_to_cpu1(s.k.spawn("hog1", [](Proc& p) { return hog(p, 500000, 100000); }, 1));
    });
  }
  check_golden(golden, s, trace);
  *target = target_cpu_of(trace, "sched_wakeup: comm=sleeper");
  return logging_cpu_of(trace, "sched_wakeup: comm=sleeper");
}

// llc_wakeup_enqueuer(), expecting the wakee back on CPU 1, enqueued by
// `want_enqueuer`.
void expect_llc_wakeup(const char* features, const char* golden, bool cpu1_busy, int want_enqueuer) {
  int target = -1;
  const int enqueuer = llc_wakeup_enqueuer(features, golden, &target, cpu1_busy);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(target, 1) << golden;
  EXPECT_EQ(enqueuer, want_enqueuer) << golden;
}
}  // namespace

// 6.0's ttwu_queue_cond() (the what-if TTWU_QUEUE_IDLE_V60) against 4.0's
// ttwu_queue(). The wakee goes back to its idle CPU 1 either way. 4.0
// queues only across LLCs: the waker enqueues the wakee on CPU 1's
// runqueue itself, under that CPU's lock, and logs its sched_wakeup. 6.0
// hands it to CPU 1's wake list (`!cpu_rq(cpu)->nr_running`), and CPU 1
// activates it, logging the sched_wakeup, once it sees the flag its
// polling idle loop watches (or takes the IPI).
TEST(Golden, CfsWakeupWithinTheLlcIsEnqueuedByTheWaker) {
  expect_llc_wakeup("", "cfs_ttwu_within_llc_by_waker", false, 0);
}

TEST(Golden, CfsTtwuQueueIdleV60HandsTheWakeeToItsIdleCpusWakeList) {
  expect_llc_wakeup("TTWU_QUEUE_IDLE_V60", "cfs_ttwu_queue_idle_v60", false, 1);
}

// With TTWU_QUEUE_IDLE_V60, a wakeup onto a CPU of the LLC that has a task
// on its runqueue is still the waker's to enqueue (`!cpu_rq(cpu)->nr_running`
// fails), with check_preempt_curr() against that CPU's hog.
TEST(Golden, CfsTtwuQueueIdleV60LeavesAWakeupOntoABusyCpuToTheWaker) {
  expect_llc_wakeup("TTWU_QUEUE_IDLE_V60", "cfs_ttwu_queue_idle_v60_busy_target", true, 0);
}

// 4.0's wake_affine() when the sync subtraction empties the waker's CPU
// (kernel/sched/fair.c: "this_cpu is idle due to the sync cause above having
// dropped this_load to 0, we'll always have an imbalance"): on 2s2c1t the
// sleeper last ran on CPU 2, where a hog runs when the hog0 on CPU 0 wakes
// it. Alone on CPU 0, the waker's load minus its own weight is 0, so the
// load comparison is skipped and the wakee is pulled to socket 0, across
// the LLC, though CPU 3 beside its old CPU is idle. With a second hog on
// CPU 0 the comparison runs (one hog plus the wakee against one hog, beyond
// the 12% margin) and the wakee stays on socket 1, on the idle CPU 3.
TEST(Golden, CfsWakeAffineAloneWakerPullsTheWakeeAcrossSockets) {
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied", 2, {2}, "wake_affine_emptied", 1, 1);
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied", 2, {2}, "wake_affine_pulls_across_llc", 1, 1);
}

TEST(Golden, CfsWakeAffineLoadedWakerLeavesTheWakeeOnItsSocket) {
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_loaded_waker", 2, {0, 2}, "wake_affine_emptied", 3, 0);
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_loaded_waker", 2, {0, 2}, "wake_affine_pulls_across_llc",
                       3, 0);
}

// The emptied pull when the waker's socket has no idle CPU: hog1 holds CPU
// 1, so select_idle_sibling() keeps the waker's own CPU and the sleeper
// lands beside hog0. It preempts hog0 at once: the sleeper's vruntime is
// below hog0's by more than the wakeup granularity. That is the ping-pong
// step of messaging (a receiver pulled onto its sender's CPU runs first),
// which the two counters tie to the pull.
TEST(Golden, CfsWakeAffineEmptiedPullOntoTheWakersCpuPreemptsIt) {
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied_onto_waker", 2, {1, 2},
                       "emptied_pulls_onto_waker_cpu", 0, 1);
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied_onto_waker", 2, {1, 2},
                       "wakeup_preemptions_after_emptied_pull", 0, 1);
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied_onto_waker", 2, {1, 2},
                       "wakeup_preemptions_after_compared_pull", 0, 0);
}

// The same pull when the wakee's previous CPU is idle: no hogs at all. 4.0
// pulls the wakee from idle CPU 2 to socket 0 (onto idle CPU 1, beside the
// waker); the what-if WAKE_AFFINE_ALWAYS_COMPARE compares the wakee's
// weight against CPU 2's zero load and leaves it on CPU 2.
TEST(Golden, CfsWakeAffineAloneWakerPullsTheWakeeOffItsIdleCpu) {
  expect_socket_wakeup("2s2c1t", "", "cfs_wake_affine_emptied_idle_prev", 2, {}, "wake_affine_pulls_across_llc", 1,
                       1);
}

TEST(Golden, CfsWakeAffineAlwaysCompareLeavesTheWakeeOnItsIdleCpu) {
  expect_socket_wakeup("2s2c1t", "WAKE_AFFINE_ALWAYS_COMPARE", "cfs_wake_affine_always_compare_idle_prev", 2, {},
                       "wake_affine_pulls_across_llc", 2, 0);
  // A busy previous CPU still loses its wakee: one hog's load is within the
  // 12% margin of the wakee's weight.
  expect_socket_wakeup("2s2c1t", "WAKE_AFFINE_ALWAYS_COMPARE", "cfs_wake_affine_always_compare", 2, {2},
                       "wake_affine_pulls_across_llc", 1, 1);
}

namespace {
// recent_used_cpu (SELECT_IDLE_V54) on four single-thread CPUs of one LLC.
// W, on CPU 1, wakes T (an affine wakeup: W records CPU 1 as its
// recent_used_cpu) and sleeps. While a hog holds CPU 1, the waker on CPU 2
// wakes W: target 2 and prev 1 are busy, recent_used_cpu is prev, and
// select_idle_cpu() finds CPU 3. W sleeps there, a hog takes CPU 3, the
// hog on CPU 1 ends, and the waker wakes W again: target 2 and prev 3 are
// busy and W's recent_used_cpu, CPU 1, is idle, so W goes back to CPU 1
// (and records prev, CPU 3, as its next candidate). Without the check,
// select_idle_cpu() would scan from CPU 2 and take CPU 0.
struct RecentUsedCpuScenario {
  TinySim s;
  obs::FtraceWriter trace{4};
  kernel::WaitQueue t_wq, w_wq;
  bool t_flag = false;
  int w_wakeups = 0;
  RecentUsedCpuScenario() : s("1s4c1t", "linux-4.0", 1, "SELECT_IDLE_V54") { s.k.add_observer(&trace); }
  void spawn_at(int64_t at_ns, const char* comm, kernel::Program program, int cpu) {
    s.k.events().schedule(sim::Time(at_ns), sim::Phase::Control,
                          [this, comm, program, cpu] { s.k.spawn(comm, program, cpu); });
  }
};
Co<void> recent_w(Proc& p, RecentUsedCpuScenario* x) {
  co_await p.user(20000);
  x->t_flag = true;
  co_await p.wake_up(x->t_wq, 1, kernel::WF_SYNC);
  for (int round = 1; round <= 2; ++round) {
    co_await p.wait_event(x->w_wq, [x, round] { return x->w_wakeups >= round; }, "test_wait");
    co_await p.user(20000);
  }
}
Co<void> recent_waker(Proc& p, RecentUsedCpuScenario* x) {
  for (int64_t at : {100000, 200000}) {
    co_await p.user(at - (at == 100000 ? 0 : 100000));
    ++x->w_wakeups;
    co_await p.wake_up(x->w_wq, 1, kernel::WF_SYNC);
  }
  co_await p.user(50000);
}
}  // namespace

TEST(Golden, CfsSelectIdleV54ReturnsToTheRecentlyUsedCpu) {
  RecentUsedCpuScenario x;
  x.s.k.spawn("W", [&](Proc& p) { return recent_w(p, &x); }, 1);
  x.s.k.spawn("T", [&](Proc& p) { return blocker(p, &x.t_wq, &x.t_flag); }, 3);
  x.s.k.spawn("waker", [&](Proc& p) { return recent_waker(p, &x); }, 2);
  x.spawn_at(50000, "hog1", [](Proc& p) { return hog(p, 100000, 50000); }, 1);
  x.spawn_at(160000, "hog3", [](Proc& p) { return hog(p, 300000, 100000); }, 3);
  check_golden("cfs_sis_v54_recent_used_cpu", x.s, x.trace);
  if (::testing::Test::IsSkipped()) return;
  const std::string t = x.trace.text();
  std::vector<int> cpus;
  for (auto at = t.find("sched_wakeup: comm=W "); at != std::string::npos; at = t.find("sched_wakeup: comm=W ", at + 1))
    cpus.push_back(std::stoi(t.substr(t.find("target_cpu=", at) + 11, 3)));
  EXPECT_EQ(cpus, (std::vector<int>{3, 1}));
  int64_t recent = -1;
  for (const auto& [name, value] : x.s.k.policy().stats())
    if (name == "sis_recent_used_cpu") recent = value;
  EXPECT_EQ(recent, 1);
}

namespace {
// has_idle_cores (SELECT_IDLE_V54) on three cores of two threads ({0,3},
// {1,4}, {2,5}). Sleepers A and B last ran on CPU 3; hogs hold CPUs 2, 3
// and 4. The waker on CPU 0 wakes A while no core is idle:
// select_idle_core() scans, finds none and clears the flag, and
// select_idle_cpu() takes CPU 1. Then the hog on CPU 2 ends; CPU 2 goes
// idle beside an idle CPU 5 and sets the flag again (__update_idle_core()).
// When the waker wakes B, select_idle_core() runs and takes core {2,5}
// (CPU 2), where select_idle_cpu() alone would take the idle thread CPU 1
// again (A has gone).
Co<void> two_wakeups(Proc& p, kernel::WaitQueue* a, bool* a_flag, kernel::WaitQueue* b, bool* b_flag) {
  co_await p.user(100000);
  *a_flag = true;
  co_await p.wake_up(*a, 1, kernel::WF_SYNC);
  co_await p.user(200000);
  *b_flag = true;
  co_await p.wake_up(*b, 1, kernel::WF_SYNC);
  co_await p.user(50000);
}
}  // namespace

TEST(Golden, CfsSelectIdleV54RecordsAnIdleCoreWhenACpuGoesIdle) {
  TinySim s("1s3c2t", "linux-4.0", 1, "SELECT_IDLE_V54");
  obs::FtraceWriter trace(6);
  s.k.add_observer(&trace);
  kernel::WaitQueue a_wq, b_wq;
  bool a_flag = false, b_flag = false;
  s.k.spawn("A", [&](Proc& p) { return blocker(p, &a_wq, &a_flag); }, 3);
  s.k.spawn("B", [&](Proc& p) { return blocker(p, &b_wq, &b_flag); }, 3);
  s.k.spawn("waker", [&](Proc& p) { return two_wakeups(p, &a_wq, &a_flag, &b_wq, &b_flag); }, 0);
  for (int cpu : {2, 3, 4})
    s.k.events().schedule(sim::Time(50000), sim::Phase::Control, [&s, cpu] {
      static const char* const kNames[] = {"", "", "hog2", "hog3", "hog4"};
      s.k.spawn(kNames[cpu], [cpu](Proc& p) { return hog(p, cpu == 2 ? 100000 : 400000, 50000); }, cpu);
    });
  check_golden("cfs_sis_v54_idle_core_flag", s, trace);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(target_cpu_of(trace, "sched_wakeup: comm=A "), 1);
  EXPECT_EQ(target_cpu_of(trace, "sched_wakeup: comm=B "), 2);
  std::map<std::string, int64_t> stats;
  for (const auto& [name, value] : s.k.policy().stats()) stats[name] = value;
  EXPECT_EQ(stats["sis_idle_cpu"], 1);
  EXPECT_EQ(stats["sis_idle_core"], 1);
}

namespace {
// 5.4's wake_affine() (the what-if WAKE_AFFINE_V54) against 4.0's, on two
// sockets of two single-thread cores (CPUs 0-1 and 2-3). A sleeper that last
// ran on CPU 2 is woken (WF_SYNC) by a task on CPU 0 that a hog shares,
// while two hogs share CPU 2. 4.0 takes the waker's weight off its CPU and
// compares one hog plus the wakee's weight against two hogs: within the
// imbalance margin, so it pulls the wakee to socket 0. 5.4's
// wake_affine_idle() returns no decision (two tasks on the waking CPU), and
// wake_affine_weight() also takes the wakee's own load off its previous CPU,
// which then reads lighter: the wakee stays on socket 1.
int sync_wakeup_between_busy_sockets(const char* features, const char* golden) {
  TwoSocketScenario x(features);
  x.s.k.spawn("sleeper", [&](Proc& p) { return blocker(p, &x.wq, &x.flag); }, 2);
  x.s.k.spawn("waker", [&](Proc& p) { return waking_hog(p, &x.wq, &x.flag); }, 0);
  x.spawn_at(50000, "hog0", [](Proc& p) { return hog(p, 500000, 100000); }, 0);
  x.spawn_at(50000, "hog2a", [](Proc& p) { return hog(p, 500000, 100000); }, 2);
  x.spawn_at(50000, "hog2b", [](Proc& p) { return hog(p, 500000, 100000); }, 2);
  check_golden(golden, x.s, x.trace);
  return target_cpu_of(x.trace, "sched_wakeup: comm=sleeper");
}
}  // namespace

TEST(Golden, CfsWakeAffinePullsASyncWakeeTowardsTheLighterSocket) {
  const int cpu = sync_wakeup_between_busy_sockets("", "cfs_wake_affine_sync");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 0 || cpu == 1) << "woken onto cpu " << cpu;
}

TEST(Golden, CfsWakeAffineV54LeavesTheWakeeOnItsSocket) {
  const int cpu = sync_wakeup_between_busy_sockets("WAKE_AFFINE_V54", "cfs_wake_affine_v54_sync");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_TRUE(cpu == 2 || cpu == 3) << "woken onto cpu " << cpu;
}

namespace {
Co<void> announced_blocker(Proc& p, kernel::WaitQueue* wq, bool* flag, bool* sleeping) {
  co_await p.user(20000);
  *sleeping = true;
  co_await p.wait_event(*wq, [flag] { return *flag; }, "test_wait");
  co_await p.user(20000);
}
// Polls until the sleeper has blocked, then wakes `first` (if given) and it.
Co<void> eager_waker(Proc& p, kernel::WaitQueue* first, kernel::WaitQueue* wq, bool* flag,
                     const bool* sleeping) {
  while (!*sleeping) co_await p.user(100);  // a user-mode poll: wakes within ~0.1 us
  *flag = true;
  if (first) co_await p.wake_up(*first, 1, 0);
  co_await p.wake_up(*wq, 1, kernel::WF_SYNC);
  co_await p.user(100000);
}

// 1s2c1t, 4.0: a sleeper on CPU 1, traced and counted; the waker goes on CPU 0.
struct SwitchOutScenario {
  TinySim s{"1s2c1t", "linux-4.0"};
  obs::FtraceWriter trace{2};
  obs::StatsCollector stats{s.k.domains().level_names()};
  kernel::WaitQueue wq, first_wq;
  bool flag = false, sleeping = false;
  SwitchOutScenario() {
    s.k.add_observer(&trace);
    s.k.add_observer(&stats);
    s.k.spawn("sleeper", [this](Proc& p) { return announced_blocker(p, &wq, &flag, &sleeping); }, 1);
  }
  void spawn_waker(bool wake_first) {
    kernel::WaitQueue* first = wake_first ? &first_wq : nullptr;
    s.k.spawn("waker", [this, first](Proc& p) { return eager_waker(p, first, &wq, &flag, &sleeping); }, 0);
  }
};
}  // namespace

// try_to_wake_up() waits while the wakee's old CPU is still in schedule()
// with it as prev (`while (p->on_cpu) cpu_relax();`, 3.1+). The sleeper on
// CPU 1 blocks and its CPU starts switching away (schedule(), newidle
// balance); the waker on CPU 0 wakes it a fraction of a microsecond later,
// spins until CPU 1 has switched to idle, and then finds CPU 1 idle: the
// sleeper goes back to CPU 1. Without the wait it would see CPU 1 busy and
// queue the sleeper behind itself on CPU 0.
TEST(Golden, CfsWakerWaitsForTheWakeesSwitchOut) {
  SwitchOutScenario x;
  x.spawn_waker(false);
  check_golden("cfs_waker_waits_for_switch_out", x.s, x.trace);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(target_cpu_of(x.trace, "sched_wakeup: comm=sleeper"), 1);
  const obs::Summary sum = x.stats.summarize(x.s.k);
  EXPECT_EQ(sum.wakeups_waited_for_switch, 1);
  EXPECT_GT(sum.switch_wait_ns, 0);
}

// The wait also ends when the switch goes to another task: here CPU 1 has
// found nothing to run and is on its newidle path when the waker on CPU 0
// first wakes a task pinned to CPU 1, then the sleeper. The waker spins
// until CPU 1 picks the pinned task and switches to it (the deferred pick
// in segment_done()), then places the sleeper: CPU 1 is busy, so it goes to
// the waker's CPU.
TEST(Golden, CfsWakerWaitsUntilTheSwitchToTheNextTask) {
  SwitchOutScenario x;
  // Woken first, queued on CPU 1 during its newidle path.
  kernel::Task* pinned =
      x.s.k.spawn("pinned", [&](Proc& p) { return blocker(p, &x.first_wq, &x.flag); }, 1);
  pinned->cpus_allowed = hw::CpuMask{};
  pinned->cpus_allowed.set(1);
  x.spawn_waker(true);
  check_golden("cfs_waker_waits_until_switch_to_next", x.s, x.trace);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(target_cpu_of(x.trace, "sched_wakeup: comm=pinned"), 1);
  EXPECT_EQ(target_cpu_of(x.trace, "sched_wakeup: comm=sleeper"), 0);
  EXPECT_EQ(x.stats.summarize(x.s.k).wakeups_waited_for_switch, 1);
}

// A waker's spin must not keep the event queue alive: once everything has
// blocked for good after one, the run ends as a deadlock.
TEST(Golden, ADeadlockAfterASwitchSpinIsReported) {
  TinySim s("1s2c1t", "linux-4.0");
  kernel::WaitQueue wq, never;
  bool flag = false, sleeping = false, forever = false;
  s.k.spawn("sleeper", [&](Proc& p) -> Co<void> {
    co_await announced_blocker(p, &wq, &flag, &sleeping);
    co_await p.wait_event(never, [&] { return forever; }, "never");
  }, 1);
  s.k.spawn("waker", [&](Proc& p) -> Co<void> {
    co_await eager_waker(p, nullptr, &wq, &flag, &sleeping);
    co_await p.wait_event(never, [&] { return forever; }, "never");
  }, 0);
  const auto r = s.k.run(10LL * 1000 * 1000 * 1000, 50000000);
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  EXPECT_LE(r.end_ns, 2000000);  // found once the last ticks have run, not hung
}

// Active balance (4.0 load_balance() -> active_load_balance_cpu_stop()): two
// hogs on the two threads of socket 0's core (CPUs 0 and 2 of 2s1c2t),
// socket 1 idle. Two busy CPUs in one LLC make the busy ones kick the nohz
// idle balancer (nohz_kick_needed(): sd_busy's nr_busy_cpus > 1). Each busy
// CPU runs a single task, so the idle socket's balance finds nothing queued
// to pull (can_migrate_task() refuses a running task); after
// cache_nice_tries + 3 failures it kicks the stopper on the busiest CPU,
// which preempts the hog and pushes it to the idle socket. (On one LLC, as
// 1s2c2t, 4.0 never kicks: sd_busy is the LLC's parent, and the hogs stay.)
TEST(Golden, CfsActiveBalancePushesTheRunningHogToTheIdleCore) {
  TinySim s("2s1c2t", "linux-4.0");
  obs::FtraceWriter trace(4);
  s.k.add_observer(&trace);
  s.k.spawn("hogA", [](Proc& p) { return hog(p, 60000000, 1000000); }, 0);
  s.k.spawn("hogB", [](Proc& p) { return hog(p, 60000000, 1000000); }, 2);
  check_golden("cfs_active_balance_pushes_running_hog", s, trace);
  if (::testing::Test::IsSkipped()) return;
  const std::string t = trace.text();
  const auto at = t.find("sched_migrate_task: comm=hog");
  ASSERT_NE(at, std::string::npos) << "no hog was moved";
  const int dest = std::stoi(t.substr(t.find("dest_cpu=", at) + 9, 3));
  EXPECT_TRUE(dest == 1 || dest == 3) << "moved to cpu " << dest;
}

// 4.0's group_imbalanced (sg_imbalanced(), sgc->imbalance): a balance pass
// that fails because of affinity ("We failed to reach balance because of
// affinity": LBF_SOME_PINNED, imbalance left) marks its domain's group at
// the level above imbalanced, the level above then pulls from it
// (force_balance), and any pass of the level below that ends at
// out_balanced clears the mark again ("A most subtle and fragile
// situation"). It matters where the level above has no SD_PREFER_SIBLING
// child to call the group overloaded anyway: between two NUMA levels. On
// 4s2c1t with node distances 20 within each half and 30 across, hogA
// (allowed on CPU 1 and on the far half, 4-7) and hogR share CPU 1, hogR
// running. CPU 2, which should_we_balance() picks to balance node 1 at the
// near NUMA level, fails on both. The far half's idle CPUs see the mark only
// if one of their passes comes before the next one that clears it: CPU 3's
// (should_we_balance() leaves the level to CPU 2) or CPU 0's (node 1 has
// nothing to pull). Unmarked, two tasks in a four-CPU half with idle CPUs
// count as balanced (find_busiest_group(): the local group's idle CPUs <=
// the busiest's + 1). Returns the destination of the first move (-1: none).
namespace {
using Distances = std::vector<std::vector<int>>;
const Distances two_halves = {{10, 20, 30, 30}, {20, 10, 30, 30}, {30, 30, 10, 20}, {30, 30, 20, 10}};
int first_move_of_two_hogs_on_cpu1(bool hogr_pinned_too, const char* features, const char* golden,
                                   const char* topology = "4s2c1t", std::vector<int> allowed = {1, 4, 5, 6, 7},
                                   const Distances& distances = two_halves) {
  hw::MachineProfile m = hw::load_machine(topology);
  m.topology.set_node_distances(distances);
  TinySim s(std::move(m), "linux-4.0", 1, features);
  obs::FtraceWriter trace(8);
  s.k.add_observer(&trace);
  // Spawned in this order hogR runs first and hogA waits on the queue.
  kernel::Task* a = s.k.spawn("hogA", [](Proc& p) { return hog(p, 40000000, 1000000); }, 1);
  kernel::Task* r = s.k.spawn("hogR", [](Proc& p) { return hog(p, 40000000, 1000000); }, 1);
  for (kernel::Task* t : {a, r}) {
    if (t == r && !hogr_pinned_too) continue;
    t->cpus_allowed = hw::CpuMask{};
    for (int c : allowed) t->cpus_allowed.set(c);
  }
  check_golden(golden, s, trace);
  const std::string t = trace.text();
  const auto at = t.find("sched_migrate_task: comm=hog");
  if (at == std::string::npos) return -1;
  return std::stoi(t.substr(t.find("dest_cpu=", at) + 9, 3));
}
}  // namespace

// hogR may run on CPU 2, so CPU 2's pass ends with LBF_ALL_PINNED clear and
// keeps the mark (load_balance()'s plain exit); at 8.1 ms a far-half pass
// comes before any clearing one, and hogA crosses. Without the mark the
// first move is hogR's, within half 0.
TEST(Golden, CfsAffinityFailureBelowMakesTheGroupImbalancedAbove) {
  const int dest = first_move_of_two_hogs_on_cpu1(false, "", "cfs_affinity_failure_makes_group_imbalanced");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_GE(dest, 4);
}

// Both hogs pinned: CPU 2's pass ends LBF_ALL_PINNED, its redo without CPU 1
// finds the level balanced, and 4.0 clears the mark it has just set at
// out_balanced (f6cad8df6b30, 2019, keeps it there); CPU 3's next pass
// clears it too. The far half never pulls, and the two hogs share CPU 1
// while CPUs 4-7, where they may run, idle.
TEST(Golden, CfsAllPinnedPassesClearTheImbalanceFlagOn40) {
  const int dest = first_move_of_two_hogs_on_cpu1(true, "", "cfs_all_pinned_passes_clear_imbalance_flag");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(dest, -1);
}


// 6.1's load balancer (LOAD_BALANCE_V61) on the same scenario. Unmarked,
// 6.1 calls both halves of the far level groups with spare capacity, and
// its idle-CPU test finds them balanced (find_busiest_group(): the local
// group's idle CPUs <= the busiest's + 1), so only the mark moves hogA
// across: group_classify() ranks the marked group above the spare ones,
// find_busiest_group() forces the balance and calculate_imbalance() asks
// for one task.
TEST(Golden, CfsAffinityFailureBelowMakesTheGroupImbalancedAboveOn61) {
  const int dest =
      first_move_of_two_hogs_on_cpu1(false, "LOAD_BALANCE_V61", "cfs_affinity_failure_makes_group_imbalanced_v61");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_GE(dest, 4);
}

// Both hogs pinned under 6.1: CPU 2's all-pinned pass keeps the mark at
// out_balanced (f6cad8df6b30: "Clear the imbalance flag only if other tasks
// got a chance to move"), but CPU 3's next pass, which should_we_balance()
// leaves to CPU 2, ends at out_balanced with no pinned flag and clears it
// before a far-half pass looks, as on 4.0: the hogs still share CPU 1.
TEST(Golden, CfsAnotherCpusPassClearsTheKeptImbalanceFlagOn61) {
  const int dest =
      first_move_of_two_hogs_on_cpu1(true, "LOAD_BALANCE_V61", "cfs_another_cpus_pass_clears_kept_flag_v61");
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(dest, -1);
}

// One CPU a node (4s1c1t), nodes 0-2 near one another (20) and node 3 far
// (30); both hogs on CPU 1, allowed on CPUs 1 and 3. CPU 0's pass of the
// near level, {0,1,2}, finds every task pinned, marks the far level's group
// and redoes without CPU 1; CPU 2 is left, so the redo finds the level
// balanced and ends at out_balanced. 4.0 clears the mark there
// (afdeee0510db); 6.1 keeps it, since the pass that ends there is still
// LBF_ALL_PINNED (f6cad8df6b30: "Clear the imbalance flag only if other
// tasks got a chance to move"). CPU 2's passes do the same as CPU 0's, and
// only CPU 1's own, every busy interval, clear it for good. So on 6.1 CPU
// 3's idle balance sees the mark and pulls a hog; on 4.0 the hogs share CPU
// 1 while CPU 3 idles (unmarked, one idle CPU against two is balanced).
namespace {
const Distances three_near_one_far = {{10, 20, 20, 30}, {20, 10, 20, 30}, {20, 20, 10, 30}, {30, 30, 30, 10}};
}

TEST(Golden, CfsAllPinnedPassThatEndsBalancedClearsTheImbalanceFlagOn40) {
  const int dest = first_move_of_two_hogs_on_cpu1(true, "", "cfs_all_pinned_balanced_pass_clears_flag", "4s1c1t",
                                                  {1, 3}, three_near_one_far);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(dest, -1);
}

TEST(Golden, CfsAllPinnedPassThatEndsBalancedKeepsTheImbalanceFlagOn61) {
  const int dest = first_move_of_two_hogs_on_cpu1(true, "LOAD_BALANCE_V61", "cfs_all_pinned_balanced_pass_keeps_flag_v61",
                                                  "4s1c1t", {1, 3}, three_near_one_far);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(dest, 3);
}

// 6.1's slow path (FIND_IDLEST_V61) reads the same mark. The previous
// scenario with both hogs bound to CPU 1, and a parent on CPU 3 that runs
// 10 ms and forks a child. CPU 0's passes mark the far level's group
// {0,1,2} and, on 6.1, leave the mark set (CPU 3's forced pulls find the
// hogs all pinned and keep it too; only CPU 1's own busy passes clear it,
// until CPU 0's next). At the fork, find_idlest_group() sees the
// parent's own group {3} fully busy and {0,1,2}, with two idle CPUs,
// imbalanced: it ranks a marked group above a fully busy one and keeps the
// task at home, so the child starts on CPU 3. Unmarked, {0,1,2} has spare
// capacity and the child starts on CPU 0 or 2.
TEST(Golden, CfsForkKeepsAwayFromAnImbalancedGroupOn61) {
  hw::MachineProfile m = hw::load_machine("4s1c1t");
  m.topology.set_node_distances(three_near_one_far);
  TinySim s(std::move(m), "linux-4.0", 1, "LOAD_BALANCE_V61,FIND_IDLEST_V61");
  obs::FtraceWriter trace(4);
  s.k.add_observer(&trace);
  for (const char* name : {"hogA", "hogR"}) {
    kernel::Task* t = s.k.spawn(name, [](Proc& p) { return hog(p, 40000000, 1000000); }, 1);
    t->cpus_allowed = hw::CpuMask{};
    t->cpus_allowed.set(1);
  }
  s.k.spawn("parent", [](Proc& p) -> Co<void> {
    co_await hog(p, 10000000, 1000000);
    kernel::Program kid = [](Proc& c) { return hog(c, 2000000, 1000000); };
    co_await p.fork("kid", kid, false);
    co_await p.wait_child();
  }, 3);
  check_golden("cfs_fork_keeps_away_from_imbalanced_group_v61", s, trace);
  if (::testing::Test::IsSkipped()) return;
  EXPECT_EQ(target_cpu_of(trace, "sched_wakeup_new: comm=kid"), 3);
}
