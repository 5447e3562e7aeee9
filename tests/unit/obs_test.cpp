// Observers on their own: obs::IntervalStats (which interval an event lands
// in, quiet intervals, the last partial line) and StatsCollector's totals.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../support/sim_fixture.hpp"
#include "obs/interval.hpp"
#include "obs/stats.hpp"
#include "obs/trace.hpp"
#include "workload/ipc/ipc.hpp"

using testsupport::hog;
using testsupport::TinySim;

namespace {
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (!l.empty() && l[0] != '#') v.push_back(l);
  return v;
}
// 20 times: 100 us of work, then a 2 ms sleep.
kernel::Co<void> napper(kernel::Proc& p) {
  for (int i = 0; i < 20; ++i) {
    co_await p.user(100000);
    co_await p.nanosleep(2000000);
  }
}
// The napper alone on one CPU, counted from its start.
obs::Summary napper_alone() {
  TinySim s("1s1c1t", "linux-4.0");
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  s.k.spawn("napper", napper, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return stats.summarize(s.k);
}
// "time switches involuntary ..." -> the first two fields.
std::pair<std::string, long> time_and_switches(const std::string& line) {
  std::istringstream f(line);
  std::string t;
  long switches = -1;
  f >> t >> switches;
  return {t, switches};
}
}  // namespace

// Intervals are [start, end): a line is due when time reaches its end, before
// the events at that time, so an event at 2 ms counts in [2 ms, 3 ms). Quiet
// intervals print zeros; the run's end adds a last line for what is left.
TEST(IntervalStats, EventsLandInTheIntervalThatHoldsTheirTime) {
  TinySim s("1s1c1t", "linux-4.0");
  std::ostringstream out;
  obs::IntervalStats iv(s.k, 1000000, out);
  kernel::Task a, b;
  a.wchan = "pipe_read";
  iv.on_switch(0, 0, &a, obs::PrevState::Runnable, &b);  // before start(): ignored
  iv.start();
  iv.on_switch(500000, 0, &a, obs::PrevState::Preempted, &b);
  iv.on_switch(600000, 0, &a, obs::PrevState::Runnable, &a);  // picked itself again: no switch
  iv.advance_to(2000000);
  iv.on_switch(2000000, 0, &a, obs::PrevState::Sleeping, &b);
  iv.advance_to(4500000);
  iv.on_switch(4500000, 0, &b, obs::PrevState::Runnable, &a);
  iv.finish(4700000);
  const auto lines = lines_of(out.str());
  const std::vector<std::pair<std::string, long>> expected = {
      {"0.001000000", 1}, {"0.002000000", 0}, {"0.003000000", 1}, {"0.004000000", 0}, {"0.004700000", 1}};
  ASSERT_EQ(lines.size(), expected.size()) << out.str();
  for (size_t i = 0; i < lines.size(); ++i) EXPECT_EQ(time_and_switches(lines[i]), expected[i]) << lines[i];
  EXPECT_NE(lines[2].find(" pipe_read=1;"), std::string::npos) << lines[2];
  std::istringstream first(lines[0]);
  std::string t;
  long switches = 0, involuntary = 0;
  first >> t >> switches >> involuntary;
  EXPECT_EQ(involuntary, 1) << lines[0];
}

// A run that ends on a boundary still prints what happened at that instant,
// and one that ends in a quiet stretch prints no empty tail.
TEST(IntervalStats, TheLastLineKeepsTheEventsAtTheEnd) {
  TinySim s("1s1c1t", "linux-4.0");
  kernel::Task a, b;
  // Lines of a run that reaches `end_ns`, with one switch there if asked.
  auto run_to = [&](int64_t end_ns, bool switch_at_end) {
    std::ostringstream out;
    obs::IntervalStats iv(s.k, 1000000, out);
    iv.start();
    iv.advance_to(end_ns);
    if (switch_at_end) iv.on_switch(end_ns, 0, &a, obs::PrevState::Runnable, &b);
    iv.finish(end_ns);
    return lines_of(out.str());
  };
  const auto ends_on_a_boundary = run_to(1000000, true);
  ASSERT_EQ(ends_on_a_boundary.size(), 2u);
  EXPECT_EQ(time_and_switches(ends_on_a_boundary[1]), std::make_pair(std::string("0.001000000"), 1L));
  EXPECT_EQ(run_to(2000000, false).size(), 2u);
  std::ostringstream out;
  EXPECT_THROW(obs::IntervalStats(s.k, 0, out), std::invalid_argument);
}

namespace {
// Sums what the kernel reports, independently of StatsCollector.
struct DelaySums final : obs::Observer {
  long double wakeup_ns = 0, queued_ns = 0;
  void on_run_delay(int64_t, int, const kernel::Task*, int64_t queued, int64_t wakeup) override {
    queued_ns += queued;
    if (wakeup >= 0) wakeup_ns += wakeup;
  }
};
}  // namespace

// The totals are the delays summed: three hogs taking turns on one CPU wait
// on the runqueue between their slices (taskstats' cpu_delay_total), and a
// sleeper woken among them, which may not preempt, waits for the tick that
// ends the running hog's slice (the wakeup delay).
TEST(StatsCollector, DelayTotalsAreTheDelaysSummed) {
  TinySim s("1s1c1t", "linux-4.0", 1, "NO_WAKEUP_PREEMPTION");
  obs::StatsCollector stats(s.k.domains().level_names());
  DelaySums sums;
  s.k.add_observer(&stats);
  s.k.add_observer(&sums);
  for (int i = 0; i < 3; ++i) s.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 30000000, 1000000); }, 0);
  s.k.spawn("napper", napper, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto summary = stats.summarize(s.k);
  EXPECT_GT(sums.queued_ns, 1e7L);
  EXPECT_GT(sums.wakeup_ns, 0);
  EXPECT_DOUBLE_EQ(summary.sched_delay_total_ms, static_cast<double>(sums.queued_ns / 1e6L));
  EXPECT_DOUBLE_EQ(summary.run_delay_total_ms, static_cast<double>(sums.wakeup_ns / 1e6L));
}

namespace {
struct DelaySamples final : obs::Observer {
  std::vector<int64_t> delays;
  void on_run_delay(int64_t, int, const kernel::Task*, int64_t, int64_t wakeup) override {
    if (wakeup >= 0) delays.push_back(wakeup);
  }
};
}  // namespace

// summarize() sorts the run-delay samples in place, so a summary taken in
// the middle of a run must leave the later one exactly as a collector
// summarized only at the end gives it, and both the samples' own median
// and maximum.
TEST(StatsCollector, ASummaryInTheMiddleLeavesTheRunDelaysOfTheLastOneAlone) {
  TinySim s("1s1c1t", "linux-4.0", 1, "NO_WAKEUP_PREEMPTION");
  obs::StatsCollector early(s.k.domains().level_names()), late(s.k.domains().level_names());
  DelaySamples samples;
  s.k.add_observer(&early);
  s.k.add_observer(&late);
  s.k.add_observer(&samples);
  for (int i = 0; i < 3; ++i) s.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 30000000, 1000000); }, 0);
  // Sleeps of uneven length wake at every point of a hog's slice, so the
  // delays differ and their order matters to the percentiles.
  s.k.spawn("uneven napper", [](kernel::Proc& p) -> kernel::Co<void> {
    for (int i = 0; i < 40; ++i) {
      co_await p.user(50000);
      co_await p.nanosleep(300000 + 137000 * (i % 7));
    }
  }, 0);
  s.run(20000000);
  const auto middle = early.summarize(s.k);
  ASSERT_GT(middle.run_delay_count, 2);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto a = early.summarize(s.k), b = late.summarize(s.k);
  std::sort(samples.delays.begin(), samples.delays.end());
  ASSERT_EQ(static_cast<int64_t>(samples.delays.size()), b.run_delay_count);
  EXPECT_EQ(b.run_delay_p50_us, static_cast<double>(samples.delays[samples.delays.size() / 2]) / 1000.0);  // rank 0.5 (n - 1), rounded
  EXPECT_EQ(b.run_delay_max_us, static_cast<double>(samples.delays.back()) / 1000.0);
  EXPECT_GT(a.run_delay_count, middle.run_delay_count);
  EXPECT_EQ(a.run_delay_count, b.run_delay_count);
  EXPECT_EQ(a.run_delay_avg_us, b.run_delay_avg_us);
  EXPECT_EQ(a.run_delay_p50_us, b.run_delay_p50_us);
  EXPECT_EQ(a.run_delay_p99_us, b.run_delay_p99_us);
  EXPECT_EQ(a.run_delay_max_us, b.run_delay_max_us);
  EXPECT_EQ(a.run_delay_total_ms, b.run_delay_total_ms);
  const auto again = late.summarize(s.k);
  EXPECT_EQ(again.run_delay_p50_us, b.run_delay_p50_us);
  EXPECT_EQ(again.run_delay_total_ms, b.run_delay_total_ms);
}

// vmstat's "r": every task is on a runqueue from its start to its exit,
// wherever it runs or waits, so the time average of the tasks running or
// queued is the tasks' finish times summed over the run's length. Three
// hogs on one CPU keep it busy, so one runs and the rest wait; six started
// on one of two CPUs are spread by the balancer, which moves queued tasks;
// a task that mostly sleeps is rarely there.
TEST(StatsCollector, RunnableTasksAreTheHogsFinishTimesSummedOverTheRun) {
  struct Case {
    const char* machine;
    int hogs;
    double running;
  };
  for (const Case c : {Case{"1s1c1t", 3, 1.0}, Case{"1s2c1t", 6, 2.0}}) {
    TinySim s(c.machine, "linux-4.0");
    obs::StatsCollector stats(s.k.domains().level_names());
    s.k.add_observer(&stats);
    std::vector<int64_t> finished(static_cast<size_t>(c.hogs), -1);
    for (int i = 0; i < c.hogs; ++i)
      s.k.spawn("hog", [&finished, i](kernel::Proc& p) -> kernel::Co<void> {
        co_await hog(p, 30000000, 1000000);
        finished[static_cast<size_t>(i)] = p.now();
      }, 0);
    ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
    const auto summary = stats.summarize(s.k);
    double task_ns = 0;
    for (auto t : finished) {
      ASSERT_GT(t, 0);
      task_ns += static_cast<double>(t);
    }
    // The exits' own paths, after the finish times, are a few tens of us.
    EXPECT_NEAR(summary.runnable_avg, task_ns / static_cast<double>(summary.elapsed_ns),
                1e-3 * summary.runnable_avg)
        << c.machine;
    EXPECT_GT(summary.runnable_avg, 0.8 * c.hogs) << c.machine;
    EXPECT_NEAR(summary.runnable_avg - summary.waiting_avg, c.running, 0.02 * c.running) << c.machine;
  }

  const auto alone = napper_alone();
  EXPECT_LT(alone.runnable_avg, 0.06);
  EXPECT_GT(alone.runnable_avg, 0.04);
  // Alone, it waits only for its idle CPU to wake: a few us a wakeup.
  EXPECT_LT(alone.waiting_avg, 0.01);
}

// perf sched timehist's view of the napper alone on its CPU: each of its
// 20 sleeps is one episode, asleep from its switch-out until its hrtimer's
// interrupt wakes it (2 ms less the schedule() before the switch-out, plus
// the timer's slack and the idle state's exit), then run at once. Its CPU
// runs nothing else, so the run is its time on the CPU and its episodes
// off it (it runs at once when spawned). Two hogs beside it and no wakeup
// preemption: its wakeups now wait for a hog's slice to end, and the hogs'
// own turns off the CPU are "preempted" episodes with no sleep in them.
// Every woken run's delay is in the run-delay total too, so the sleeping
// wchans' delays add up to it.
TEST(StatsCollector, OffCpuEpisodesAreTheSleepsAndThePreemptions) {
  const auto quiet = napper_alone();
  ASSERT_EQ(quiet.off_cpu.size(), 1u);
  const auto& nap = quiet.off_cpu.at("hrtimer_nanosleep");
  EXPECT_EQ(nap.count, 20);
  EXPECT_EQ(quiet.sleeps.at("hrtimer_nanosleep"), 20);
  EXPECT_GT(nap.wait_ns, 20 * 1990000);
  EXPECT_LT(nap.wait_max_ns, 2500000);
  EXPECT_LT(nap.delay_max_ns, 20000);
  EXPECT_NEAR(static_cast<double>(quiet.busy_ns_total + nap.wait_ns + nap.delay_ns),
              static_cast<double>(quiet.elapsed_ns), 1e-3 * static_cast<double>(quiet.elapsed_ns));

  TinySim shared("1s1c1t", "linux-4.0", 1, "NO_WAKEUP_PREEMPTION");
  obs::StatsCollector shared_stats(shared.k.domains().level_names());
  shared.k.add_observer(&shared_stats);
  for (int i = 0; i < 2; ++i)
    shared.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 30000000, 1000000); }, 0);
  shared.k.spawn("napper", napper, 0);
  ASSERT_EQ(shared.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto busy = shared_stats.summarize(shared.k);
  const auto& crowded = busy.off_cpu.at("hrtimer_nanosleep");
  EXPECT_EQ(crowded.count, 20);
  // Woken while a hog runs, it waits for the tick that ends the hog's slice.
  EXPECT_GT(crowded.delay_ns, 20 * 100000);
  const auto& preempted = busy.off_cpu.at(obs::kPreemptedKey);
  EXPECT_EQ(preempted.count, busy.involuntary_switches);
  EXPECT_EQ(preempted.wait_ns, 0);
  EXPECT_GT(preempted.delay_ns, 0);
  int64_t woken_delays = 0;
  for (const auto& [where, o] : busy.off_cpu)
    if (where != obs::kPreemptedKey) woken_delays += o.delay_ns;
  EXPECT_NEAR(static_cast<double>(woken_delays) / 1e6, busy.run_delay_total_ms, 1e-6);
}

// The ledger by role (Task::role) is each role's runs on the CPU, from
// switch-in to switch-out, and how they ended. Two hogs and the napper on
// one CPU without wakeup preemption: the hogs outlast the napper, so the
// CPU never idles and the roles' runs fill the run, up to the last exit; the napper's runs end in its 20
// sleeps (its exit is neither), the hogs' only in preemptions, and the two
// roles' preemptions are the run's involuntary switches. A role is named
// from the task's own code, so its first run counts too.
TEST(StatsCollector, TimeOnACpuByRoleIsEachRolesRunsBetweenItsSwitches) {
  TinySim s("1s1c1t", "linux-4.0", 1, "NO_WAKEUP_PREEMPTION");
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  for (int i = 0; i < 2; ++i)
    s.k.spawn("hog", [](kernel::Proc& p) -> kernel::Co<void> {
      p.task()->role = "hog";
      co_await hog(p, 60000000, 1000000);
    }, 0);
  s.k.spawn("napper", [](kernel::Proc& p) -> kernel::Co<void> {
    p.task()->role = "napper";
    co_await napper(p);
  }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto summary = stats.summarize(s.k);
  ASSERT_EQ(summary.cpu_time_by_role.size(), 2u);
  const auto& hogs = summary.cpu_time_by_role.at("hog");
  const auto& nap = summary.cpu_time_by_role.at("napper");
  EXPECT_EQ(nap.sleeps, 20);
  EXPECT_EQ(hogs.sleeps, 0);
  EXPECT_GT(hogs.preempted, 0);
  EXPECT_EQ(hogs.preempted + nap.preempted, summary.involuntary_switches);
  EXPECT_GT(hogs.run_ns, 100000000);
  // 100 us of work a wakeup, plus the switch and the sleep's own calls.
  EXPECT_GT(nap.run_ns, 20 * 100000);
  EXPECT_LT(nap.run_ns, 20 * 150000);
  EXPECT_NEAR(static_cast<double>(hogs.run_ns + nap.run_ns), static_cast<double>(summary.elapsed_ns - summary.idle_ns_total),
              1e-3 * static_cast<double>(summary.elapsed_ns));
  // Each run began with an arrival: the napper's first and its 20 wakeups,
  // the hogs' first runs and their returns after each preemption (the
  // last one's ends in its exit). Without wakeup preemption the woken
  // napper queues behind a hog's slice, so it waits; a hog waits too.
  EXPECT_EQ(nap.arrivals, 21);
  EXPECT_EQ(hogs.arrivals, 2 + hogs.preempted);
  EXPECT_GT(nap.wait_ns, 20 * 100000);
  EXPECT_GT(hogs.wait_ns, 0);
  // Tasks without a role are not in the ledger.
  EXPECT_TRUE(napper_alone().cpu_time_by_role.empty());
}

// The two ledgers of obs::RoleTimes. `run_ns` splits a switch at its
// sched_switch; `exec_ns` is what update_curr() charged (se.sum_exec_runtime),
// on rq->clock. They part where 4.0 skips a clock update: a wakeup that
// preempts sets rq->skip_clock_update (check_preempt_curr()), so the
// preempted task's tail up to the switch (the rest of the interrupt that
// woke the wakee, its return, schedule()) is charged to the wakee. Two hogs
// and the napper pinned to one CPU of the emulated machine's profile, whose
// switch is dear: without wakeup preemption the napper waits for a hog's
// slice and both ledgers give it the same time; with it each of its 20
// wakeups preempts a hog, and the fair class moves that tail, at least the
// switch's schedule_base, from the hog to the napper. Either way the two
// ledgers share out the same busy time (up to the last exit's schedule(),
// which the fair class charges to no task).
namespace {
struct TwoLedgers {
  obs::RoleTimes hogs, nap;
};
TwoLedgers hogs_and_napper_on_cpu0(const std::string& features) {
  TinySim s("qemu-tcg-2s1c", "linux-4.0", 1, features);
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  hw::CpuMask cpu0;
  cpu0.set(0);
  for (int i = 0; i < 2; ++i)
    s.k.spawn("hog", [cpu0](kernel::Proc& p) -> kernel::Co<void> {
      p.task()->role = "hog";
      co_await p.sched_setaffinity(cpu0);
      co_await hog(p, 60000000, 1000000);
    }, 0);
  s.k.spawn("napper", [cpu0](kernel::Proc& p) -> kernel::Co<void> {
    p.task()->role = "napper";
    co_await p.sched_setaffinity(cpu0);
    co_await napper(p);
  }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto summary = stats.summarize(s.k);
  return {summary.cpu_time_by_role.at("hog"), summary.cpu_time_by_role.at("napper")};
}
}  // namespace

TEST(StatsCollector, TheFairClassGivesAPreemptedTasksTailToItsWakee) {
  const auto queued = hogs_and_napper_on_cpu0("NO_WAKEUP_PREEMPTION");
  EXPECT_EQ(queued.nap.exec_ns, queued.nap.run_ns);
  EXPECT_NEAR(static_cast<double>(queued.hogs.exec_ns), static_cast<double>(queued.hogs.run_ns), 50000);

  const auto preempting = hogs_and_napper_on_cpu0("");
  EXPECT_EQ(preempting.nap.preempted, 0);
  const int64_t moved = preempting.nap.exec_ns - preempting.nap.run_ns;
  EXPECT_GT(moved, 20 * hw::load_machine("qemu-tcg-2s1c").costs.schedule_base);
  EXPECT_NEAR(static_cast<double>(preempting.hogs.run_ns - preempting.hogs.exec_ns), static_cast<double>(moved),
              50000);
  EXPECT_NEAR(static_cast<double>(preempting.hogs.exec_ns + preempting.nap.exec_ns),
              static_cast<double>(preempting.hogs.run_ns + preempting.nap.run_ns), 50000);
}

// The trace's sched_stat_runtime (FtraceWriter with stat_runtime) is the fair
// class's update_curr(): each line's runtime is what that call charged, so a
// task's lines add up to its se.sum_exec_runtime, and its last line's
// vruntime is the task's. Off by default, and observing it changes nothing.
TEST(FtraceWriter, SchedStatRuntimeAddsUpToEachTasksSumExecRuntime) {
  auto run_with = [](bool stat_runtime, std::map<int, std::pair<int64_t, uint64_t>>* by_pid,
                     std::map<int, std::pair<int64_t, uint64_t>>* truth) {
    TinySim s("1s1c1t", "linux-4.0");
    obs::FtraceWriter trace(1, stat_runtime);
    s.k.add_observer(&trace);
    for (int i = 0; i < 2; ++i) s.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 30000000, 1000000); }, 0);
    s.k.spawn("napper", napper, 0);
    EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
    const std::regex stat(R"(sched_stat_runtime: comm=\S+ pid=(\d+) runtime=(\d+) \[ns\] vruntime=(\d+) \[ns\])");
    for (const auto& l : lines_of(trace.text())) {
      std::smatch m;
      if (!std::regex_search(l, m, stat)) continue;
      auto& [sum, last] = (*by_pid)[std::stoi(m[1])];
      sum += std::stoll(m[2]);
      last = std::stoull(m[3]);
    }
    for (const auto* t : s.k.all_tasks())
      if (t && t->pid > 0) (*truth)[t->pid] = {t->se.sum_exec_runtime, t->se.vruntime};
    return trace.text();
  };
  std::map<int, std::pair<int64_t, uint64_t>> traced, truth, none, truth_again;
  const std::string with = run_with(true, &traced, &truth);
  const std::string without = run_with(false, &none, &truth_again);
  EXPECT_TRUE(none.empty());
  ASSERT_EQ(truth.size(), 3u);
  EXPECT_EQ(traced, truth);
  EXPECT_EQ(truth_again, truth);
  // Apart from the new lines (and the header's count), the same trace.
  std::string filtered;
  for (const auto& l : lines_of(with))
    if (l.find("sched_stat_runtime") == std::string::npos) filtered += l + "\n";
  std::string plain;
  for (const auto& l : lines_of(without)) plain += l + "\n";
  EXPECT_EQ(filtered, plain);
}

namespace {
int64_t work_of(const obs::Summary& s, const std::string& path) {
  for (const auto& [p, ns] : s.work_by_path)
    if (p == path) return ns;
  ADD_FAILURE() << "no path " << path;
  return -1;
}
// Switches onto a task (from another task or from idle): each pays
// context_switch; a switch to idle pays none.
struct SwitchesOntoATask final : obs::Observer {
  int64_t n = 0;
  void on_switch(int64_t, int, const kernel::Task* prev, obs::PrevState, const kernel::Task* next) override {
    if (next && next != prev) ++n;
  }
};
}  // namespace

// On one CPU without SMT every charged nanosecond runs at the core's full
// rate, so for tasks that only make system calls and sleep the busy time is
// the kernel work summed over its paths, less the schedule() after the last
// task's exit (charged as it exits; the run ends there). Each path is its count times its cost,
// within the profile's +-2% jitter. One CPU places nothing and sends no IPI.
TEST(StatsCollector, KernelWorkByPathAddsUpToTheBusyTimeOnOneCpu) {
  TinySim s("1s1c1t", "linux-4.0");
  obs::StatsCollector stats(s.k.domains().level_names());
  SwitchesOntoATask switches;
  s.k.add_observer(&stats);
  s.k.add_observer(&switches);
  constexpr int kCalls = 50;
  constexpr int64_t kCallNs = 200000;
  for (int t = 0; t < 2; ++t)
    s.k.spawn("caller", [](kernel::Proc& p) -> kernel::Co<void> {
      for (int i = 0; i < kCalls; ++i) {
        co_await p.sys(kCallNs);
        co_await p.nanosleep(1000000);
      }
    }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  const auto summary = stats.summarize(s.k);
  const auto& costs = s.k.machine().costs();
  auto near = [](int64_t got, double want) {
    EXPECT_NEAR(static_cast<double>(got), want, 0.02 * want) << want;
  };
  int64_t sum = 0;
  for (const auto& [p, ns] : summary.work_by_path) sum += ns;
  near(sum - summary.busy_ns_total, static_cast<double>(costs.schedule_base + costs.rq_lock_hold));
  near(work_of(summary, "syscalls"), 2.0 * kCalls * static_cast<double>(kCallNs + costs.syscall_entry));
  near(work_of(summary, "process"), 2.0 * static_cast<double>(costs.exit_base));
  ASSERT_GT(switches.n, 0);
  near(work_of(summary, "context_switch"), static_cast<double>(switches.n * costs.context_switch));
  ASSERT_GT(summary.wakeups, 0);
  near(work_of(summary, "wakeup"), static_cast<double>(summary.wakeups * (costs.ttwu_base + costs.ttwu_activate)));
  EXPECT_EQ(work_of(summary, "placement"), 0);
  EXPECT_EQ(work_of(summary, "ipi"), 0);
}

namespace {
// A pipe ping-pong of 200 round trips started on `ping_cpu` and `pong_cpu`
// of two cores with two threads (cores {0,2} and {1,3}); each wakee is woken
// on its previous, idle CPU.
obs::Summary pipe_pair(int ping_cpu, int pong_cpu) {
  TinySim s("1s2c2t", "linux-4.0");
  obs::StatsCollector stats(s.k.domains().level_names());
  s.k.add_observer(&stats);
  workload::Fd a[2], b[2];
  workload::make_pipe(s.k.config(), a);
  workload::make_pipe(s.k.config(), b);
  s.k.spawn("ping", [&](kernel::Proc& p) { return testsupport::pinger(p, &b[0], &a[1], 200, true); }, ping_cpu);
  s.k.spawn("pong", [&](kernel::Proc& p) { return testsupport::pinger(p, &a[0], &b[1], 200, false); }, pong_cpu);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return stats.summarize(s.k);
}
int64_t at_level(const obs::Summary& s, const std::string& level) {
  const auto it = s.wakeups_by_level.find(level);
  return it == s.wakeups_by_level.end() ? 0 : it->second;
}
}  // namespace

// Remote wakeups count at the lowest domain spanning the waker's CPU and the
// wakee's: a pair on one core's two threads wakes at SMT, on two cores at MC.
TEST(StatsCollector, RemoteWakeupsCountAtTheDomainSpanningWakerAndWakee) {
  const obs::Summary siblings = pipe_pair(0, 2);
  const obs::Summary cores = pipe_pair(0, 1);
  ASSERT_GT(siblings.wakeups_remote, 300);
  ASSERT_GT(cores.wakeups_remote, 300);
  EXPECT_EQ(at_level(siblings, "SMT"), siblings.wakeups_remote);
  EXPECT_EQ(at_level(cores, "MC"), cores.wakeups_remote);
  EXPECT_EQ(at_level(siblings, "MC") + at_level(cores, "SMT"), 0);
}

namespace {
// 1s2c2t (cores {0,2} and {1,3}) on 4.0, with the summary's collector and
// 1 ms interval lines, counting from the start.
struct SmtSimObserved {
  TinySim s{"1s2c2t", "linux-4.0"};
  obs::StatsCollector stats{s.k.domains().level_names()};
  std::ostringstream out;
  obs::IntervalStats iv{s.k, 1000000, out};
  SmtSimObserved() {
    s.k.add_observer(&stats);
    s.k.add_observer(&iv);
    s.k.set_time_listener([this](int64_t t) { iv.advance_to(t); });
    iv.start();
  }
};
// "name=value" in an interval line, or -1.
int64_t field(const std::string& line, const std::string& name) {
  const auto at = line.find(" " + name + "=");
  return at == std::string::npos ? -1 : std::stoll(line.substr(at + name.size() + 2));
}
}  // namespace

// On an SMT machine each interval line ends with the layout: its wakeups
// between one core's threads, its busy time and the part of it beside a
// busy sibling. Summed over the lines they give the run's totals (the pair
// wakeups the SMT level counts, hw::Machine's busy and shared time), so a
// layout that settles part-way shows when it did. Without SMT: no layout.
TEST(IntervalStats, OnSmtLinesEndWithThePairsLayout) {
  SmtSimObserved x;
  auto& [s, stats, out, iv] = x;
  workload::Fd a[2], b[2];
  workload::make_pipe(s.k.config(), a);
  workload::make_pipe(s.k.config(), b);
  s.k.spawn("ping", [&](kernel::Proc& p) { return testsupport::pinger(p, &b[0], &a[1], 300, true); }, 0);
  s.k.spawn("pong", [&](kernel::Proc& p) { return testsupport::pinger(p, &a[0], &b[1], 300, false); }, 2);
  s.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 2500000, 100000); }, 1);
  s.k.spawn("hog2", [](kernel::Proc& p) { return hog(p, 1500000, 100000); }, 3);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  iv.finish(s.k.now_ns());
  const obs::Summary sum = stats.summarize(s.k);
  const auto lines = lines_of(out.str());
  ASSERT_GE(lines.size(), 3u) << out.str();
  int64_t pairs = 0, busy_us = 0, shared_us = 0;
  for (const auto& l : lines) {
    ASSERT_NE(l.find(" | smt_pair_wakeups="), std::string::npos) << l;
    pairs += field(l, "smt_pair_wakeups");
    busy_us += field(l, "busy_us");
    shared_us += field(l, "smt_shared_us");
    // Each is its running total's whole microseconds less the last line's,
    // so one may round up where the other rounds down.
    EXPECT_LE(field(l, "smt_shared_us"), field(l, "busy_us") + 1) << l;
  }
  EXPECT_EQ(pairs, at_level(sum, "SMT"));
  EXPECT_GT(pairs, 500);
  EXPECT_EQ(busy_us, s.machine.executing_ns(s.k.now_ns()) / 1000);
  EXPECT_NEAR(static_cast<double>(busy_us), static_cast<double>(sum.busy_ns_total) / 1000, 1.0);
  EXPECT_EQ(shared_us, s.machine.smt_shared_ns(s.k.now_ns()) / 1000);
  EXPECT_GT(shared_us, 2000);  // the hogs beside the pair, and beside each other
  // The first line has the two hogs beside each other on core {1,3}; the
  // last, after both ended, has the pair alone, whose threads take turns.
  EXPECT_GE(field(lines.front(), "smt_shared_us"), 2000) << lines.front();
  EXPECT_LT(field(lines.back(), "smt_shared_us") * 10, field(lines.back(), "busy_us")) << lines.back();

  TinySim plain("1s2c1t", "linux-4.0");
  std::ostringstream plain_out;
  obs::IntervalStats plain_iv(plain.k, 1000000, plain_out);
  plain_iv.start();
  plain_iv.finish(2500000);
  EXPECT_EQ(plain_out.str().find(" | "), std::string::npos) << plain_out.str();
  EXPECT_EQ(plain_out.str().find("on SMT"), std::string::npos) << plain_out.str();
}

// Levels that share a name are summed under it (one "NUMA" level per SLIT
// distance on an 8-socket box), a level no domain spans counts as "other",
// local wakeups count nowhere, and reset() starts from zero.
TEST(StatsCollector, RemoteWakeupsByLevelSumLevelsOfOneName) {
  TinySim s("1s1c1t", "linux-4.0");
  obs::StatsCollector stats({"SMT", "MC", "NUMA", "NUMA", "NUMA"});
  stats.on_wakeup_placement(0, 0, 1, false, 0);
  for (int level : {2, 3, 3, 4}) stats.on_wakeup_placement(0, 0, 1, false, level);
  stats.on_wakeup_placement(0, 0, 1, false, -1);
  stats.on_wakeup_placement(0, 0, 0, true, -1);
  obs::Summary sum = stats.summarize(s.k);
  EXPECT_EQ(sum.wakeups_remote, 6);
  EXPECT_EQ(at_level(sum, "SMT"), 1);
  EXPECT_EQ(at_level(sum, "NUMA"), 4);
  EXPECT_EQ(at_level(sum, "other"), 1);
  EXPECT_EQ(sum.wakeups_by_level.size(), 3u);
  stats.reset(s.k);
  stats.on_wakeup_placement(0, 0, 1, false, 1);
  sum = stats.summarize(s.k);
  EXPECT_EQ(sum.wakeups_by_level.size(), 1u);
  EXPECT_EQ(at_level(sum, "MC"), 1);
}

// Each migration counts under its cause, and as a move onto or off the core
// (the SMT siblings) of the task the mover last woke: 1s2c2t has cores
// {0,2} and {1,3}. A move within one core, or between two cores neither of
// which holds the wakee, is neither; a task that has woken no one, or whose
// last wakee has exited, counts only as a move; kernel threads not at all.
TEST(StatsCollector, MigrationsByCauseCountMovesOntoAndOffTheLastWakeesCore) {
  TinySim s("1s2c2t", "linux-4.0");
  obs::StatsCollector stats(s.k.domains().level_names());
  stats.reset(s.k);
  kernel::Task mover, wakee, loner, dead, kthread, nobody;
  // A cause is a string literal; the same name at another address (another
  // translation unit's literal) merges by name.
  static const char newidle_elsewhere[] = "balance_newidle";
  wakee.cpu = 0;
  mover.last_wakee = &wakee;
  dead.state = kernel::TaskState::Dead;
  dead.cpu = 1;
  loner.last_wakee = &dead;
  kthread.kthread = true;
  stats.on_migrate(0, 0, &mover, 1, 2, 1, "wake_idle_sibling");  // onto {0,2}
  stats.on_migrate(0, 0, &mover, 2, 0, 0, "balance_newidle");    // within {0,2}
  stats.on_migrate(0, 0, &mover, 0, 3, 1, "balance_active");     // off {0,2}
  stats.on_migrate(0, 0, &mover, 3, 1, 0, newidle_elsewhere);    // within {1,3}
  stats.on_migrate(0, 0, &loner, 1, 0, 1, "wake_idle_core");
  stats.on_migrate(0, 0, &nobody, 1, 2, 1, "wake_idle_core");
  stats.on_migrate(0, 0, &kthread, 0, 1, 1, "balance_idle");
  const obs::Summary sum = stats.summarize(s.k);
  EXPECT_EQ(sum.migrations, 6);
  const std::map<std::string, int64_t> moves{
      {"balance_active", 1}, {"balance_newidle", 2}, {"wake_idle_core", 2}, {"wake_idle_sibling", 1}};
  const std::map<std::string, int64_t> joined{
      {"balance_active", 0}, {"balance_newidle", 0}, {"wake_idle_core", 0}, {"wake_idle_sibling", 1}};
  const std::map<std::string, int64_t> left{
      {"balance_active", 1}, {"balance_newidle", 0}, {"wake_idle_core", 0}, {"wake_idle_sibling", 0}};
  EXPECT_EQ(sum.migrations_by_cause, moves);
  EXPECT_EQ(sum.migrations_joining_wakee, joined);
  EXPECT_EQ(sum.migrations_leaving_wakee, left);
  EXPECT_EQ(obs::migration_causes_text(sum),
            "balance_active 1 (+0 -1), balance_newidle 2 (+0 -0), wake_idle_core 2 (+0 -0), "
            "wake_idle_sibling 1 (+1 -0)");
  stats.reset(s.k);
  EXPECT_TRUE(stats.summarize(s.k).migrations_by_cause.empty());
}

// A move between two LLCs is counted by its cause as well, and the text
// names it only where there is one.
TEST(StatsCollector, MigrationsByCauseCountMovesAcrossLlcs) {
  TinySim s("2s2c1t", "linux-4.0");  // LLCs {0,1} and {2,3}
  obs::StatsCollector stats(s.k.domains().level_names());
  stats.reset(s.k);
  kernel::Task a, b;
  stats.on_migrate(0, 0, &a, 0, 2, 1, "wake_slow_path");
  stats.on_migrate(0, 0, &a, 2, 3, 0, "wake_slow_path");
  stats.on_migrate(0, 0, &b, 0, 1, 0, "balance_newidle");
  const obs::Summary sum = stats.summarize(s.k);
  const std::map<std::string, int64_t> across{{"balance_newidle", 0}, {"wake_slow_path", 1}};
  EXPECT_EQ(sum.migrations_across_llc, across);
  EXPECT_EQ(obs::migration_causes_text(sum),
            "balance_newidle 1 (+0 -0), wake_slow_path 2 (+0 -0, 1 across LLCs)");
}

// The causes come from the code that moved the task. A pipe pair starts on
// two cores of 1s2c2t ({0,2}, {1,3}) with a hog pinned beside pong on CPU 1.
// When ping's write wakes pong, pong's CPU is busy and so is the waker's, no
// core is wholly idle, and 4.0's select_idle_sibling() takes the waker's
// idle sibling, CPU 2: pong joins ping's core, and the pair stays there.
// The interval lines count the same moves.
TEST(StatsCollector, AWakeeWhoseCpuIsTakenJoinsItsWakersCoreOnItsIdleSibling) {
  SmtSimObserved x;
  auto& [s, stats, out, iv] = x;
  stats.reset(s.k);
  workload::Fd a[2], b[2];
  workload::make_pipe(s.k.config(), a);
  workload::make_pipe(s.k.config(), b);
  kernel::Task* h = s.k.spawn("hog", [](kernel::Proc& p) { return hog(p, 2000000, 100000); }, 1);
  hw::CpuMask only_cpu1;
  only_cpu1.set(1);
  h->cpus_allowed = only_cpu1;
  kernel::Task* ping =
      s.k.spawn("ping", [&](kernel::Proc& p) { return testsupport::pinger(p, &b[0], &a[1], 200, true); }, 0);
  kernel::Task* pong =
      s.k.spawn("pong", [&](kernel::Proc& p) { return testsupport::pinger(p, &a[0], &b[1], 200, false); }, 1);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  iv.finish(s.k.now_ns());
  const obs::Summary sum = stats.summarize(s.k);
  const std::map<std::string, int64_t> moves{{"wake_idle_sibling", 1}};
  EXPECT_EQ(sum.migrations_by_cause, moves) << obs::migration_causes_text(sum);
  EXPECT_EQ(sum.migrations_joining_wakee, moves);
  EXPECT_EQ(sum.migrations_leaving_wakee.at("wake_idle_sibling"), 0);
  EXPECT_EQ(pong->cpu, 2);
  EXPECT_EQ(ping->cpu, 0);
  EXPECT_EQ(pong->last_wakee, ping);
  const auto lines = lines_of(out.str());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.front().find("; wake_idle_sibling=1/+1/-0;"), std::string::npos) << lines.front();
  // Summed over the lines, the causes are the summary's.
  std::map<std::string, int64_t> line_moves;
  const std::regex cause_field(R"((\w+)=(\d+)/\+(\d+)/-(\d+))");
  for (const auto& l : lines) {
    const std::string section = l.substr(l.find(';'), l.find(';', l.find(';') + 1) - l.find(';'));
    for (std::sregex_iterator it(section.begin(), section.end(), cause_field), end; it != end; ++it)
      line_moves[(*it)[1]] += std::stoll((*it)[2]);
  }
  EXPECT_EQ(line_moves, sum.migrations_by_cause);
}
