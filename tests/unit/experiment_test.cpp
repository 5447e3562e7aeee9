#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <unistd.h>
#include <filesystem>
#include <fstream>

#include "experiment/experiment.hpp"
#include "experiment/run.hpp"

using experiment::beyond_noise;

TEST(Statistics, MeanAndSampleStddev) {
  EXPECT_DOUBLE_EQ(experiment::mean_of({1, 2, 3, 4}), 2.5);
  EXPECT_NEAR(experiment::stddev_of({2, 4, 4, 4, 5, 5, 7, 9}), 2.138, 1e-3);
  EXPECT_EQ(experiment::stddev_of({5}), 0);
}

TEST(Statistics, WelchTestSeparatesSignalFromNoise) {
  EXPECT_TRUE(beyond_noise({10, 10.1, 9.9, 10.05, 9.95}, {12, 12.1, 11.9, 12.05, 11.95}));
  EXPECT_FALSE(beyond_noise({10, 12, 8, 11, 9}, {10.5, 12.5, 8.5, 11.5, 9.5}));
  EXPECT_FALSE(beyond_noise({1}, {2}));
}

// Two samples of 5 with variance 0.00625 each: standard error 0.05 on 8
// degrees of freedom, t(0.975, 8) = 2.306. The interval and the test agree.
TEST(Statistics, WelchIntervalOfTheDifference) {
  const std::vector<double> a{10, 10.1, 9.9, 10.05, 9.95}, b{12, 12.1, 11.9, 12.05, 11.95};
  EXPECT_NEAR(experiment::welch_halfwidth95(a, b), 2.306 * 0.05, 1e-9);
  EXPECT_NEAR(experiment::welch_halfwidth95(b, a), 2.306 * 0.05, 1e-9);
  const std::vector<double> c{10.1, 10.2, 10.0, 10.15, 10.05};  // a shifted by 0.1 < 0.1153
  EXPECT_FALSE(beyond_noise(a, c));
  EXPECT_EQ(experiment::welch_halfwidth95({1}, {2, 3}), -1);
  EXPECT_EQ(experiment::welch_halfwidth95({1, 1}, {2, 2}), 0);
  EXPECT_TRUE(beyond_noise({1, 1}, {2, 2}));
}

TEST(Command, ParsesPerfBenchLines) {
  std::string b;
  std::vector<std::string> a;
  experiment::parse_command("perf bench sched messaging -g 4 -l 10 -p", b, a);
  EXPECT_EQ(b, "messaging");
  EXPECT_EQ(a, (std::vector<std::string>{"-g", "4", "-l", "10", "-p"}));
  experiment::parse_command("hackbench -g 1 -f 5", b, a);
  EXPECT_EQ(b, "hackbench");
  EXPECT_EQ(a, (std::vector<std::string>{"-g", "1", "-f", "5"}));
  EXPECT_THROW(experiment::parse_command("sysbench 10", b, a), std::invalid_argument);
  experiment::parse_command("schbench -m 2 -t 20", b, a);
  EXPECT_EQ(b, "schbench");
  EXPECT_EQ(a, (std::vector<std::string>{"-m", "2", "-t", "20"}));
}

TEST(Experiment, LoadsAndValidatesFiles) {
  const std::string path = "/tmp/schedlab_experiment_test.toml";
  {
    std::ofstream f(path);
    f << "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 2\n"
         "[[variants]]\nname = \"base\"\n[[variants]]\nname = \"noq\"\nfeatures = \"NO_TTWU_QUEUE\"\n"
         "[[workloads]]\nname = \"pipe\"\ncommand = \"perf bench sched pipe -l 200\"\n";
  }
  auto x = experiment::load_experiment(path);
  EXPECT_EQ(x.variants.size(), 2u);
  auto r = experiment::run_experiment(x, 2);
  EXPECT_TRUE(r.problems.empty());
  ASSERT_FALSE(r.cells.empty());
  EXPECT_EQ(r.cells[0].values.size(), 2u);
  auto json = experiment::format_json(r);
  EXPECT_NE(json.find("\"beyond_noise\""), std::string::npos);
  EXPECT_NE(json.find("\"change_ci95_pct\""), std::string::npos);
  // The second variant's change is printed with its interval.
  const auto& noq = r.cells[r.cells.size() / 2];
  ASSERT_FALSE(noq.is_baseline);
  char change[64];
  std::snprintf(change, sizeof change, "%+.1f%% +- %.1f", noq.change_pct, noq.change_ci95_pct);
  EXPECT_NE(experiment::format_table(r).find(change), std::string::npos);
  // Same experiment, different parallelism: identical numbers.
  auto r1 = experiment::run_experiment(x, 1);
  EXPECT_EQ(experiment::format_json(r1), json);
  {
    std::ofstream f(path);
    f << "name = \"t\"\nmachine = \"1s2c1t\"\n[[workloads]]\ncommand = \"perf bench sched nope\"\n";
  }
  EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument);
  EXPECT_THROW(experiment::load_experiment("/nonexistent.toml"), std::invalid_argument);
  std::remove(path.c_str());
}

namespace {
// An experiment from its TOML text, through a file as `schedlab run` reads it.
experiment::Experiment experiment_from(const std::string& toml) {
  const std::string path = "/tmp/schedlab_experiment_text_" + std::to_string(getpid()) + ".toml";
  std::ofstream(path) << toml;
  auto x = experiment::load_experiment(path);
  std::remove(path.c_str());
  return x;
}
}  // namespace

// The progress callback hears of every simulation once, numbered in the order
// they finish, and its presence changes no figure.
TEST(Experiment, EveryRunReportsItsProgressOnce) {
  const auto x = experiment_from(
      "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 3\n"
      "[[variants]]\nname = \"base\"\n[[variants]]\nname = \"noq\"\nfeatures = \"NO_TTWU_QUEUE\"\n"
      "[[workloads]]\nname = \"pipe\"\ncommand = \"perf bench sched pipe -l 100\"\n"
      "[[workloads]]\nname = \"pipe2\"\ncommand = \"perf bench sched pipe -l 150\"\n");
  std::vector<size_t> done;
  std::set<std::tuple<std::string, std::string, int>> seen;
  const auto r = experiment::run_experiment(x, 2, [&](const experiment::RunDone& d) {
    EXPECT_EQ(d.total, 12u);
    done.push_back(d.done);
    EXPECT_TRUE(seen.insert({d.workload, d.variant, d.repeat}).second) << d.workload << d.variant << d.repeat;
  });
  std::vector<size_t> in_order(12);
  std::iota(in_order.begin(), in_order.end(), size_t{1});
  EXPECT_EQ(done, in_order);
  ASSERT_EQ(seen.size(), 12u);
  for (const char* w : {"pipe", "pipe2"})
    for (const char* v : {"base", "noq"})
      for (int rep = 0; rep < 3; ++rep) EXPECT_TRUE(seen.count({w, v, rep})) << w << " " << v << " " << rep;
  EXPECT_EQ(experiment::format_json(r), experiment::format_json(experiment::run_experiment(x, 1)));
}

// A run that fails is reported as failed when it ends; the experiment's
// error comes after every run has finished.
TEST(Experiment, AFailedRunIsReportedAsFailed) {
  auto x = experiment_from(
      "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 2\n"
      "[[variants]]\nname = \"base\"\n"
      "[[workloads]]\nname = \"pipe\"\ncommand = \"perf bench sched pipe -l 100\"\n");
  x.workloads.push_back({"bad", "perf bench sched pipe -l 0"});  // past load's checks: -l must be >= 1
  std::map<std::string, std::vector<bool>> failed;
  EXPECT_THROW(experiment::run_experiment(x, 2, [&](const experiment::RunDone& d) {
                 failed[d.workload].push_back(d.failed);
               }),
               std::invalid_argument);
  EXPECT_EQ(failed["pipe"], (std::vector<bool>{false, false}));
  EXPECT_EQ(failed["bad"], (std::vector<bool>{true, true}));
}

// Every experiment shipped in experiments/ loads, and loading checks its
// machine, kernels, features and sysctls, so none fails minutes into a run.
// start_layout and unpin_after_ms reach the run: its args say how it started.
TEST(Experiment, AWorkloadCanStartFromALayout) {
  const std::string path = "/tmp/schedlab_experiment_layout_test.toml";
  {
    std::ofstream f(path);
    f << "name = \"t\"\nmachine = \"2s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 1\n"
         "[[variants]]\nname = \"base\"\n"
         "[[workloads]]\nname = \"pipe\"\ncommand = \"perf bench sched pipe -l 100\"\ninstances = 3\n"
         "start_layout = \"2/1\"\nunpin_after_ms = 4\n";
  }
  auto x = experiment::load_experiment(path);
  ASSERT_EQ(x.workloads.size(), 1u);
  EXPECT_EQ(x.workloads[0].start_layout, "2/1");
  EXPECT_EQ(x.workloads[0].unpin_after_ms, 4);
  experiment::RunSpec spec;
  spec.machine = "2s2c1t";
  spec.bench = "pipe";
  spec.bench_args = {"-l", "100"};
  spec.instances = 3;
  spec.start_layout = "2/1";
  spec.unpin_after_ms = 4;
  const auto pinned = experiment::run_once(spec);
  EXPECT_NE(pinned.command.find("(started 2/1 by node, unpinned 4 ms after the last launch)"), std::string::npos);
  // The experiment's run is that run (same seed), and not the ordinary launch.
  const auto r = experiment::run_experiment(x, 1);
  ASSERT_TRUE(r.problems.empty());
  ASSERT_FALSE(r.cells.empty());
  EXPECT_EQ(r.cells[0].values.at(0), pinned.output.metrics.at(0).value);
  spec.start_layout.clear();
  EXPECT_NE(r.cells[0].values.at(0), experiment::run_once(spec).output.metrics.at(0).value);
  {
    std::ofstream f(path);
    f << "name = \"t\"\nmachine = \"2s2c1t\"\n[[workloads]]\ncommand = \"perf bench sched pipe\"\n"
         "instances = 3\nstart_layout = \"2-1\"\n";
  }
  EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument);
  std::remove(path.c_str());
}

TEST(Experiment, EveryShippedExperimentIsValid) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/experiments")) {
    if (e.path().extension() != ".toml") continue;
    ++files;
    EXPECT_NO_THROW(experiment::load_experiment(e.path().string())) << e.path();
  }
  EXPECT_GE(files, 5);
}

// smt_wakeup_share is where the wakees went: ipc-bench's ping-pong pinned
// to one core's two threads wakes across the SMT domain every time, pinned
// to two cores never (but for the start), so the share is ~100% and ~0%.
TEST(Experiment, SmtWakeupShareIsTheWakeupsBetweenOneCoresThreads) {
  auto share_of = [](const std::string& b) {
    experiment::RunSpec spec;
    spec.machine = "1s2c2t";  // cpu0 and cpu2 are core 0's threads, cpu1 is core 1
    spec.kernel = "linux-4.0";
    spec.bench = "pipe_lat";
    spec.bench_args = {"-s", "128", "-c", "200", "-a", "0", "-b", b};
    spec.seed = 1;
    const auto one = experiment::run_once(spec);
    const auto m = experiment::stat_metrics_of(one.stats, {"smt_wakeup_share"});
    EXPECT_EQ(m.size(), 1u);
    EXPECT_EQ(m.at(0).unit, "%");
    EXPECT_GE(one.stats.wakeups, 400);  // 200 round trips
    return m.at(0).value;
  };
  EXPECT_GT(share_of("2"), 95.0);
  EXPECT_LE(share_of("2"), 100.0);
  EXPECT_LT(share_of("1"), 1.0);  // only the start-up wakeups
}

// A move across sockets refills the whole working set from the other
// socket; nothing else comes from beyond a shared LLC. So the lines from
// beyond it are the working set's times the switch-ins after a move
// between the sockets: about the cross-socket migrations (a task moved
// twice before it ran refills once).
TEST(Experiment, RefillLinesFromBeyondTheLlcAreTheCrossSocketMovesWorkingSets) {
  experiment::RunSpec spec;
  spec.machine = "2s2c1t";
  spec.kernel = "linux-4.0";
  spec.bench = "messaging";
  spec.bench_args = {"-g", "1", "-l", "100"};
  spec.seed = 1;
  spec.sysctls = {"task_working_set_bytes=8192"};
  const auto one = experiment::run_once(spec);
  const auto& s = one.stats;
  const auto numa = s.migrations_by_level.find("NUMA");
  ASSERT_NE(numa, s.migrations_by_level.end());
  ASSERT_GT(numa->second, 10);
  const int64_t lines_per_move = 8192 / 64;
  // Whole working sets only, at most one per cross-socket migration, and
  // most migrated tasks run before they move again.
  EXPECT_EQ(s.refill_lines_beyond_llc % lines_per_move, 0);
  const int64_t refilled_moves = s.refill_lines_beyond_llc / lines_per_move;
  EXPECT_LE(refilled_moves, numa->second);
  EXPECT_GT(2 * refilled_moves, numa->second);
  EXPECT_GT(s.refill_lines_within_llc, 0);
  const auto m = experiment::stat_metrics_of(s, {"refill_lines_beyond_llc", "refill_lines_beyond_llc_per_migration"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].value, static_cast<double>(s.refill_lines_beyond_llc));
  EXPECT_DOUBLE_EQ(m[1].value, m[0].value / static_cast<double>(s.migrations));
}

// Every other line the model moves: on one socket none comes from beyond
// its LLC; on two, some do. With the kernel objects' lines off only the
// messages' data moves (two 64-byte lines for a 100-byte message, when its
// reader runs elsewhere) and the wakeups' stores to their target CPU.
TEST(Experiment, MovedLinesComeFromBeyondTheLlcOnlyAcrossSockets) {
  const auto run = [](const char* machine, const char* kernel, bool pipes, std::vector<std::string> sysctls) {
    experiment::RunSpec spec;
    spec.machine = machine;
    spec.kernel = kernel;
    spec.bench = "messaging";
    spec.bench_args = {"-g", "1", "-l", "100"};
    if (pipes) spec.bench_args.push_back("-p");
    spec.seed = 1;
    spec.sysctls = std::move(sysctls);
    return experiment::run_once(spec).stats;
  };
  const int64_t messages = 20 * 20 * 100;
  for (const char* kernel : {"linux-4.0", "linux-2.4.19"})
    for (bool pipes : {false, true}) {
      SCOPED_TRACE(std::string(kernel) + (pipes ? " pipes" : " sockets"));
      const auto one_socket = run("1s4c1t", kernel, pipes, {});
      EXPECT_GT(one_socket.moved_lines_within_llc, 0);
      EXPECT_EQ(one_socket.moved_lines_beyond_llc, 0);
      const auto two_sockets = run("2s2c1t", kernel, pipes, {});
      EXPECT_GT(two_sockets.moved_lines_beyond_llc, 0);
      // Without the objects' lines: on 4.0 each message's two data lines at
      // most, and one line per wakeup's store to its target CPU. (2.4's
      // goodness() also reads the line of every task on its one runqueue.)
      const auto data_only = run("2s2c1t", kernel, pipes, {"unix_sock_lines=0", "pipe_lines=0", "ttwu_lines=0"});
      const int64_t data_moved = data_only.moved_lines_within_llc + data_only.moved_lines_beyond_llc;
      EXPECT_GT(data_moved, 0);
      if (std::string(kernel) == "linux-4.0") {
        EXPECT_LE(data_moved, 2 * messages + data_only.wakeups);
      }
      EXPECT_LT(data_moved, two_sockets.moved_lines_within_llc + two_sockets.moved_lines_beyond_llc);
    }
  const auto two_sockets = run("2s2c1t", "linux-4.0", false, {});
  const auto m = experiment::stat_metrics_of(two_sockets, {"llc_miss_lines", "llc_miss_lines_per_migration"});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].value, static_cast<double>(two_sockets.refill_lines_beyond_llc + two_sockets.moved_lines_beyond_llc));
  EXPECT_DOUBLE_EQ(m[1].value, m[0].value / static_cast<double>(two_sockets.migrations));
}

// Kernel statistics listed in stat_metrics are tabulated like the
// benchmark's metrics: one value per repeat, taken from that run's summary,
// and tested against noise. A bad list fails at load.
TEST(Experiment, StatMetricsComeFromEachRunsSummary) {
  const std::string path = "/tmp/schedlab_experiment_stat_test.toml";
  const std::string head = "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 2\n";
  const std::string pipe = "[[workloads]]\ncommand = \"perf bench sched pipe -l 200\"\n";
  {
    std::ofstream f(path);
    f << head << "stat_metrics = [\"run_delay_avg\", \"context_switches\", \"run_delay_total\", \"sched_delay_total\"]\n" << pipe;
  }
  auto x = experiment::load_experiment(path);
  ASSERT_EQ(x.stat_metrics,
            (std::vector<std::string>{"run_delay_avg", "context_switches", "run_delay_total", "sched_delay_total"}));
  auto r = experiment::run_experiment(x, 1);
  const experiment::CellResult* delay = nullptr;
  const experiment::CellResult* switches = nullptr;
  const experiment::CellResult* delay_total = nullptr;
  const experiment::CellResult* sched_total = nullptr;
  for (const auto& c : r.cells) {
    if (c.metric == "run_delay_avg") delay = &c;
    if (c.metric == "context_switches") switches = &c;
    if (c.metric == "run_delay_total") delay_total = &c;
    if (c.metric == "sched_delay_total") sched_total = &c;
  }
  ASSERT_NE(delay_total, nullptr);
  ASSERT_NE(sched_total, nullptr);
  EXPECT_EQ(delay_total->unit, "ms");
  ASSERT_NE(delay, nullptr);
  ASSERT_NE(switches, nullptr);
  ASSERT_EQ(switches->values.size(), 2u);
  EXPECT_FALSE(delay->higher_is_better);
  EXPECT_EQ(delay->unit, "us");
  // Repeat r is the run with seed + 7919 r, and its value is that run's own.
  for (int rep = 0; rep < 2; ++rep) {
    experiment::RunSpec spec;
    spec.machine = "1s2c1t";
    spec.kernel = "linux-4.0";
    spec.bench = "pipe";
    spec.bench_args = {"-l", "200"};
    spec.seed = x.seed + static_cast<uint64_t>(rep) * 7919;
    const auto one = experiment::run_once(spec);
    EXPECT_EQ(switches->values[static_cast<size_t>(rep)], static_cast<double>(one.stats.context_switches)) << rep;
    EXPECT_EQ(delay->values[static_cast<size_t>(rep)], one.stats.run_delay_avg_us) << rep;
    EXPECT_EQ(delay_total->values[static_cast<size_t>(rep)], one.stats.run_delay_total_ms) << rep;
    EXPECT_EQ(sched_total->values[static_cast<size_t>(rep)], one.stats.sched_delay_total_ms) << rep;
    // A total and its average agree (they are summed separately).
    EXPECT_NEAR(one.stats.run_delay_total_ms,
                one.stats.run_delay_avg_us * static_cast<double>(one.stats.run_delay_count) / 1e3,
                1e-9 * one.stats.run_delay_total_ms);
    EXPECT_GT(one.stats.run_delay_total_ms, 0);
  }
  EXPECT_GT(switches->mean, 400);  // 200 round trips, two wakeups each, a switch to each wakee
  EXPECT_GT(delay->mean, 0);
  EXPECT_NE(experiment::format_table(r).find("run_delay_avg"), std::string::npos);
  for (const std::string bad : {"stat_metrics = [\"no_such_statistic\"]\n", "stat_metrics = \"run_delay_avg\"\n",
                                "stat_metrics = [1]\n", "stat_metrics = [\"migrations\", \"migrations\"]\n"}) {
    {
      std::ofstream f(path);
      f << head << bad << pipe;
    }
    EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument) << bad;
  }
  std::remove(path.c_str());
}

// Least squares by hand: x 1..4, y 2 4 5 8 gives slope 9.5/5 = 1.9, residuals
// 0.1 0.2 -0.7 0.4 (SSE 0.70), s.e. sqrt(0.35 / 5), t(2) = 4.303, and
// r = 9.5 / sqrt(5 * 18.75).
TEST(Experiment, FitLineIsLeastSquaresWithTheSlopesConfidenceInterval) {
  const auto f = experiment::fit_line({1, 2, 3, 4}, {2, 4, 5, 8});
  EXPECT_NEAR(f.slope, 1.9, 1e-12);
  EXPECT_NEAR(f.ci95, 4.303 * std::sqrt(0.35 / 5), 1e-9);
  EXPECT_NEAR(f.r, 9.5 / std::sqrt(5 * 18.75), 1e-12);
  const auto exact = experiment::fit_line({1, 2, 3}, {5, 8, 11});
  EXPECT_NEAR(exact.slope, 3, 1e-12);
  EXPECT_NEAR(exact.ci95, 0, 1e-12);
  EXPECT_NEAR(exact.r, 1, 1e-12);
  EXPECT_LT(experiment::fit_line({1, 2}, {1, 3}).ci95, 0);     // two points: no interval
  EXPECT_LT(experiment::fit_line({2, 2, 2}, {1, 2, 3}).ci95, 0);  // x constant: no slope
  EXPECT_TRUE(std::isnan(experiment::fit_line({2, 2, 2}, {1, 2, 3}).slope));
  EXPECT_TRUE(std::isnan(experiment::fit_line({1}, {1}).slope));
  EXPECT_THROW(experiment::fit_line({1, 2, 3}, {1, 2}), std::invalid_argument);  // not the same runs
  // Near r = 1 the residuals still give a small, non-negative interval.
  const auto tight = experiment::fit_line({1e6, 2e6, 3e6, 4e6}, {1e6 + 0.5, 2e6, 3e6 - 0.5, 4e6});
  EXPECT_NEAR(tight.slope, 1.0 - 1e6 / 5e12, 1e-12);  // sxy = sxx - 1.5e6 * 0.5 - 0.5e6 * 0.5
  EXPECT_GT(tight.ci95, 0);
  EXPECT_LT(tight.ci95, 1e-5);
}

// The off-CPU families name a wchan after the colon: each repeat's value is
// that run's episodes there (count, mean wait, mean delay in ms), 0 where no
// task left the CPU; a family without a wchan fails at load.
TEST(Experiment, OffCpuStatMetricsNameAWchan) {
  const std::string path = "/tmp/schedlab_experiment_off_cpu_test.toml";
  const std::string head = "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 2\n";
  const std::string pipe = "[[workloads]]\ncommand = \"perf bench sched pipe -l 200\"\n";
  {
    std::ofstream f(path);
    f << head
      << "stat_metrics = [\"off_cpu_count:pipe_read\", \"off_cpu_wait_avg:pipe_read\", "
         "\"off_cpu_delay_avg:pipe_read\", \"off_cpu_count:no_such_wchan\"]\n"
      << pipe;
  }
  const auto x = experiment::load_experiment(path);
  const auto r = experiment::run_experiment(x, 1);
  experiment::RunSpec spec;
  spec.machine = "1s2c1t";
  spec.kernel = "linux-4.0";
  spec.bench = "pipe";
  spec.bench_args = {"-l", "200"};
  spec.seed = x.seed;
  const auto one = experiment::run_once(spec);
  const auto& reads = one.stats.off_cpu.at("pipe_read");
  EXPECT_EQ(reads.count, one.stats.sleeps.at("pipe_read"));
  ASSERT_GT(reads.count, 0);
  const std::map<std::string, double> want = {
      {"off_cpu_count:pipe_read", static_cast<double>(reads.count)},
      {"off_cpu_wait_avg:pipe_read", static_cast<double>(reads.wait_ns) / static_cast<double>(reads.count) / 1e6},
      {"off_cpu_delay_avg:pipe_read", static_cast<double>(reads.delay_ns) / static_cast<double>(reads.count) / 1e6},
      {"off_cpu_count:no_such_wchan", 0.0}};
  int found = 0;
  for (const auto& c : r.cells) {
    const auto it = want.find(c.metric);
    if (it == want.end()) continue;
    ++found;
    ASSERT_EQ(c.values.size(), 2u);
    EXPECT_DOUBLE_EQ(c.values[0], it->second) << c.metric;
  }
  EXPECT_EQ(found, 4);
  EXPECT_NE(experiment::format_table(r).find("Off CPU by where tasks left it"), std::string::npos);
  {
    std::ofstream f(path);
    f << head << "stat_metrics = [\"off_cpu_wait_avg:\"]\n" << pipe;
  }
  EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument);
}

// slopes = [[y, x]] fits one stat_metrics column on another over the
// repeats of each variant: busy_cpu on context_switches is the CPU an extra
// switch brings with it. Both names must be listed in stat_metrics.
TEST(Experiment, SlopesFitOneStatisticOnAnotherAcrossTheRepeats) {
  const std::string path = "/tmp/schedlab_experiment_slopes_test.toml";
  const std::string head = "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 3\n";
  const std::string msg = "[[workloads]]\ncommand = \"perf bench sched messaging -g 1 -l 20\"\n";
  {
    std::ofstream f(path);
    f << head << "stat_metrics = [\"context_switches\", \"busy_cpu\"]\n"
      << "slopes = [[\"busy_cpu\", \"context_switches\"]]\n" << msg;
  }
  const auto x = experiment::load_experiment(path);
  ASSERT_EQ(x.slopes.size(), 1u);
  const auto r = experiment::run_experiment(x, 1);
  ASSERT_EQ(r.slopes.size(), 1u);
  const experiment::CellResult* busy = nullptr;
  const experiment::CellResult* switches = nullptr;
  for (const auto& c : r.cells) {
    if (c.metric == "busy_cpu") busy = &c;
    if (c.metric == "context_switches") switches = &c;
  }
  ASSERT_NE(busy, nullptr);
  ASSERT_NE(switches, nullptr);
  EXPECT_EQ(busy->unit, "ms");
  const auto& sl = r.slopes.front();
  EXPECT_EQ(sl.n, 3);
  EXPECT_EQ(sl.unit, "ms");
  const auto f = experiment::fit_line(switches->values, busy->values);
  EXPECT_EQ(sl.fit.slope, f.slope);
  EXPECT_EQ(sl.fit.ci95, f.ci95);
  // busy_cpu is the run's busy time: user, kernel and lock spin, all CPUs.
  experiment::RunSpec spec;
  spec.machine = "1s2c1t";
  spec.kernel = "linux-4.0";
  spec.bench = "messaging";
  spec.bench_args = {"-g", "1", "-l", "20"};
  spec.seed = x.seed;
  const auto one = experiment::run_once(spec);
  EXPECT_EQ(busy->values.front(), static_cast<double>(one.stats.busy_ns_total) / 1e6);
  EXPECT_GT(busy->values.front(), 0);
  EXPECT_NE(experiment::format_table(r).find("busy_cpu per one of context_switches"), std::string::npos);
  EXPECT_NE(experiment::format_json(r).find("\"slopes\""), std::string::npos);
  for (const std::string bad :
       {"slopes = [[\"busy_cpu\", \"migrations\"]]\n", "slopes = [[\"busy_cpu\"]]\n", "slopes = \"busy_cpu\"\n",
        "slopes = [[1, 2]]\n", "slopes = [[\"busy_cpu\", 3]]\n", "slopes = [[]]\n",
        "slopes = [[\"busy_cpu\", \"busy_cpu\"]]\n",
        "slopes = [[\"busy_cpu\", \"context_switches\"], [\"busy_cpu\", \"context_switches\"]]\n"}) {
    {
      std::ofstream f(path);
      f << head << "stat_metrics = [\"context_switches\", \"busy_cpu\"]\n" << bad << msg;
    }
    EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument) << bad;
  }
  std::remove(path.c_str());
}

TEST(Experiment, LoadingRejectsABadVariant) {
  const std::string path = "/tmp/schedlab_experiment_variant_test.toml";
  const std::string head = "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\n";
  const std::string pipe = "[[workloads]]\ncommand = \"perf bench sched pipe -l 10\"\n";
  for (const std::string variant :
       {"features = \"NO_SUCH_FEATURE\"\n", "sysctls = [\"no_such_sysctl=1\"]\n", "kernel = \"linux-9.9\"\n",
        "features = \"WAKE_IDLE_CPU,WAKE_IDLE_CPU_LITERAL\"\n"}) {
    {
      std::ofstream f(path);
      f << head << "[[variants]]\nname = \"v\"\n" << variant << pipe;
    }
    EXPECT_THROW(experiment::load_experiment(path), std::invalid_argument) << variant;
  }
  {
    std::ofstream f(path);
    f << head << "[[variants]]\nname = \"v\"\nfeatures = \"NO_TTWU_QUEUE\"\n" << pipe;
  }
  EXPECT_NO_THROW(experiment::load_experiment(path));
  std::remove(path.c_str());
}

// One run of a benchmark on a machine, with the machine's default kernel
// unless one is named.
static experiment::RunOutcome run_bench(const std::string& machine, const std::string& bench,
                                        std::vector<std::string> args, const std::string& kernel = "") {
  experiment::RunSpec s;
  s.machine = machine;
  s.kernel = kernel;
  s.bench = bench;
  s.bench_args = std::move(args);
  return experiment::run_once(s);
}

static std::vector<std::string> args_for(const std::string& bench, std::vector<std::string> messaging,
                                         std::vector<std::string> pipe) {
  return bench == "messaging" ? messaging : pipe;
}

TEST(RunOnce, InvariantsHoldForBothPoliciesAndBothBenchmarks) {
  for (const char* k : {"linux-4.0", "linux-3.10", "linux-2.4.19"}) {
    for (const char* b : {"messaging", "pipe"}) {
      auto o = run_bench("2s2c2t", b, args_for(b, {"-g", "2", "-l", "5"}, {"-l", "300"}), k);
      EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed) << k << " " << b;
      EXPECT_EQ(o.invariant_errors, "") << k << " " << b;
      ASSERT_FALSE(o.output.metrics.empty());
      EXPECT_GT(o.output.metrics[0].value, 0);
    }
  }
}

// The idle loop's way out costed (a what-if: `idle_exit_path` 1 us, no
// jitter) on messaging and pipe, whose CPUs leave the loop by every path
// Kernel::irq_exit() and segment_done() take (queued tasks, wake lists,
// picks that balance and find nothing): each leaving pays it once, so the
// `idle_loop` work is a whole number of paths, and the runs end clean.
TEST(RunOnce, TheIdleLoopsWayOutIsPaidOncePerLeaving) {
  const auto profile = std::filesystem::path(::testing::TempDir()) / "schedlab_idle_exit_1us.toml";
  std::ofstream(profile) << "[machine]\nextends = \"haswell-2s8c2t\"\nname = \"idle-exit-1us\"\n"
                         << "topology = \"2s2c2t\"\n[costs]\n"
                         << "idle_exit_path = { value = 1000, unit = \"ns\", source = \"test\" }\n"
                         << "cost_jitter_permille = { value = 0, unit = \"permille\", source = \"test\" }\n";
  for (const char* b : {"messaging", "pipe"}) {
    auto o = run_bench(profile.string(), b, args_for(b, {"-g", "2", "-l", "50"}, {"-l", "2000"}), "linux-4.0");
    EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed) << b;
    EXPECT_EQ(o.invariant_errors, "") << b;
    int64_t idle_loop_ns = -1;
    for (const auto& [path, ns] : o.stats.work_by_path)
      if (path == "idle_loop") idle_loop_ns = ns;
    EXPECT_GT(idle_loop_ns, 0) << b;
    EXPECT_EQ(idle_loop_ns % 1000, 0) << b;
  }
}

// Messaging keeps both threads of a lone core busy most of the time, so
// most of its busy time runs at the shared rate; two cores share nothing.
TEST(RunOnce, SmtSharedTimeIsBusyTimeBesideABusySibling) {
  const auto smt = run_bench("1s1c2t", "messaging", {"-g", "1", "-l", "20"});
  EXPECT_EQ(smt.invariant_errors, "");
  EXPECT_TRUE(smt.stats.smt);
  EXPECT_GT(smt.stats.smt_shared_ns, smt.stats.busy_ns_total / 2);
  EXPECT_LE(smt.stats.smt_shared_ns, smt.stats.busy_ns_total);
  // On one core the unshared busy time is at most the time idle, and
  // exactly that when the two threads never idle together.
  EXPECT_GE(smt.stats.smt_shared_ns, smt.stats.busy_ns_total - smt.stats.idle_ns_total);
  EXPECT_NE(obs::format_summary(smt.stats).find("beside a busy sibling"), std::string::npos);
  const auto cores = run_bench("1s2c1t", "messaging", {"-g", "1", "-l", "20"});
  EXPECT_FALSE(cores.stats.smt);
  EXPECT_EQ(cores.stats.smt_shared_ns, 0);
  EXPECT_EQ(obs::format_summary(cores.stats).find("beside a busy sibling"), std::string::npos);
}

TEST(RunOnce, PipeModeAndThreadModeMessagingRun) {
  auto o = run_bench("1s4c1t", "messaging", {"-g", "1", "-l", "20", "-p", "-t"});
  EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(o.invariant_errors, "");
  EXPECT_NE(o.output.text.find("# 20 sender and receiver threads per group"), std::string::npos);
}

TEST(RunOnce, BadInputIsAnError) {
  experiment::RunSpec s;
  s.machine = "nope";
  EXPECT_THROW(experiment::run_once(s), std::invalid_argument);
  s.machine = "1s2c1t";
  s.features = "BOGUS";
  EXPECT_THROW(experiment::run_once(s), std::invalid_argument);
  s.features = "";
  s.bench_args = {"-g", "0"};
  EXPECT_THROW(experiment::run_once(s), std::invalid_argument);
}

// On one CPU each pipe round trip is: A writes and wakes B, which preempts A
// (sync wakeup of a sleeper with vruntime credit); B reads, writes, wakes A
// and sleeps in pipe_read; A reads. So every round trip is one sleep in
// pipe_read plus one preemption. The last preemption comes as the last
// write returns, before B's exit; A then waits in do_wait() for B's exit
// and B's do_notify_parent() wakes it: two switches more.
TEST(RunOnce, PipeOnOneCpuSleepsInPipeReadOncePerRoundTrip) {
  auto o = run_bench("1s1c1t", "pipe", {"-l", "1000"});
  ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(o.stats.context_switches, 2002);
  EXPECT_EQ(o.stats.involuntary_switches, 1000);
  EXPECT_EQ(o.stats.sleeps, (std::map<std::string, int64_t>{{"do_wait", 1}, {"pipe_read", 1000}}));
}

// A runqueue lock is released before the same CPU takes it again (4.0
// ttwu_queue() and sched_ttwu_pending() unlock before the __schedule() that
// follows; 2.4's try_to_wake_up() before its schedule()), so with one CPU
// nobody ever spins: a CPU never waits behind its own earlier hold.
TEST(RunOnce, OneCpuNeverSpinsOnARunqueueLock) {
  for (const char* k : {"linux-4.0", "linux-3.10", "linux-2.4.19"}) {
    for (const char* b : {"messaging", "pipe"}) {
      auto o = run_bench("1s1c1t", b, args_for(b, {"-g", "1", "-l", "50"}, {"-l", "2000"}), k);
      ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed) << k << " " << b;
      EXPECT_GT(o.stats.context_switches, 100) << k << " " << b;
      EXPECT_EQ(o.stats.spin_ns_total, 0) << k << " " << b;
    }
  }
}

// Messaging over sockets: receivers sleep in unix_stream_recvmsg when their
// queue is empty, senders in sock_alloc_send_pskb when the send buffer is
// used up; on a single CPU with -l 400 both happen.
TEST(RunOnce, MessagingSleepsAreAttributedToBothSidesOfTheChannel) {
  auto o = run_bench("1s1c1t", "messaging", {"-g", "1", "-l", "400"});
  ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_GT(o.stats.sleeps["unix_stream_recvmsg"], 0);
  EXPECT_GT(o.stats.sleeps["sock_alloc_send_pskb"], 0);
  int64_t total = 0;
  for (const auto& [where, n] : o.stats.sleeps) total += n;
  EXPECT_LE(total + o.stats.involuntary_switches, o.stats.context_switches);
}

// Pipe ping-pong on two cores: each task's CPU idles while the other side
// works, for a few microseconds, so the menu governor picks C1: it polls only
// when a timer is under 5 us away, and nothing deeper fits. 1000 round trips
// idle the two CPUs about 2000 times in all (the first and last differ).
TEST(RunOnce, PipeOnTwoCoresNapsInC1) {
  auto o = run_bench("1s2c1t", "pipe", {"-l", "1000"});
  ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  std::map<std::string, int64_t> entries(o.stats.idle_state_entries.begin(), o.stats.idle_state_entries.end());
  ASSERT_EQ(entries.size(), 5u);
  EXPECT_NEAR(entries["POLL"] + entries["C1"], 2000, 2);
  EXPECT_LE(entries["POLL"], 2);
  EXPECT_EQ(entries["C1E"] + entries["C3"] + entries["C6"], 0);
}

// The same ping-pong, by kernel: the partner's CPU waits in C1, an MWAIT
// state. 4.0 keeps TIF_POLLING_NRFLAG set there, so every wakeup is a store
// to the idle task's flags (sched_wake_idle_without_ipi); 3.10.0's
// intel_idle() did not set it, so each wakeup sends an IPI and waits for it.
TEST(RunOnce, MwaitIdleCpusAreWokenWithoutAnIpiFrom313) {
  auto with_kernel = [](const char* k) {
    experiment::RunSpec s;
    s.machine = "1s2c1t";
    s.kernel = k;
    s.bench = "pipe";
    s.bench_args = {"-l", "1000"};
    return experiment::run_once(s);
  };
  auto v40 = with_kernel("linux-4.0");
  auto v310 = with_kernel("linux-3.10");
  ASSERT_EQ(v40.run.outcome, kernel::RunResult::Outcome::Completed);
  ASSERT_EQ(v310.run.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_NEAR(v40.stats.idle_wakes_without_ipi, 2000, 10);
  EXPECT_LE(v40.stats.ipis_sent, 10);
  EXPECT_NEAR(v310.stats.ipis_sent, 2000, 10);
  EXPECT_EQ(v310.stats.idle_wakes_without_ipi, 0);
  // Each wakeup saves the IPI's delivery (1 us in the generic profile) less
  // the line transfer, and the waker its send cost.
  EXPECT_LT(v40.stats.run_delay_avg_us + 0.9, v310.stats.run_delay_avg_us);
}

// intel_idle.max_cstate=1 (a latency-tuned box) registers POLL and C1 only:
// schbench's workers sleep ~30 ms per batch, which on a stock profile sends
// their CPUs to C6; limited, every idle period is spent in C1 or POLL.
TEST(RunOnce, MaxCstateLimitsTheIdleStatesTheGovernorMayChoose) {
  auto with = [](std::vector<std::string> sysctls) {
    experiment::RunSpec s;
    s.machine = "1s4c1t";
    s.kernel = "linux-4.0";
    s.bench = "schbench";
    s.bench_args = {"-m", "1", "-t", "2", "-r", "1"};
    s.sysctls = std::move(sysctls);
    return experiment::run_once(s);
  };
  auto stock = with({});
  auto limited = with({"intel_idle.max_cstate=1"});
  ASSERT_EQ(stock.run.outcome, kernel::RunResult::Outcome::Completed);
  ASSERT_EQ(limited.run.outcome, kernel::RunResult::Outcome::Completed);
  std::map<std::string, int64_t> a(stock.stats.idle_state_entries.begin(), stock.stats.idle_state_entries.end());
  std::map<std::string, int64_t> b(limited.stats.idle_state_entries.begin(), limited.stats.idle_state_entries.end());
  EXPECT_GT(a["C6"], 0);
  EXPECT_EQ(b["C1E"] + b["C3"] + b["C6"], 0);
  EXPECT_GT(b["C1"], 0);
  EXPECT_THROW(kernel::KernelConfig(kernel::load_preset("linux-4.0")).apply_sysctl("intel_idle.max_cstate=0"),
               std::invalid_argument);
}

namespace {
// perf bench sched messaging `args` on `machine` (linux-4.0), with
// `features` and `sysctls`.
experiment::RunSpec messaging_spec(const std::string& machine, std::vector<std::string> args,
                                   const std::string& features = "", std::vector<std::string> sysctls = {}) {
  experiment::RunSpec s;
  s.machine = machine;
  s.bench = "messaging";
  s.bench_args = std::move(args);
  s.features = features;
  s.sysctls = std::move(sysctls);
  return s;
}
// A run's policy counters by name; the run must have completed.
std::map<std::string, int64_t> policy_counters(const experiment::RunOutcome& o) {
  EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  return {o.stats.policy.begin(), o.stats.policy.end()};
}
}  // namespace

// A placement pays for each other runqueue it reads, once: the slow path of
// WAKE_IDLE_CPU starts with find_idlest_group() over the whole machine, so
// it reads all 7 other CPUs of a 2s2c2t box, and no placement reads more.
TEST(RunOnce, PlacementsReadEachOtherRunqueueAtMostOnce) {
  auto policy = policy_counters(experiment::run_once(messaging_spec("2s2c2t", {"-g", "2", "-l", "50"}, "WAKE_IDLE_CPU")));
  const int64_t reads = policy["placement_rq_reads"], slow = policy["wake_idle_cpu_slow_paths"];
  const int64_t placements = policy["placements"];
  ASSERT_GT(slow, 0);
  EXPECT_GE(reads, 7 * slow);
  EXPECT_LE(reads, 7 * placements);
}

// v5.4's select_idle_sibling() (the what-if SELECT_IDLE_V54): every call
// ends in exactly one of its outcomes, wakeups only (fork placements take
// the slow path), and a select_idle_cpu() scan cut short by SIS_PROP's
// budget finds nothing, so it ends on the target's sibling or the busy
// target. The run is deterministic like any other.
TEST(RunOnce, SelectIdleV54AccountsForEveryFastPathWakeup) {
  auto s = messaging_spec("2s4c2t", {"-g", "4", "-l", "100"}, "SELECT_IDLE_V54");
  const auto o = experiment::run_once(s);
  auto policy = policy_counters(o);
  const int64_t outcomes = policy["sis_target_idle"] + policy["sis_prev_idle"] + policy["sis_recent_used_cpu"] +
                           policy["sis_idle_core"] + policy["sis_idle_cpu"] + policy["sis_idle_smt"] +
                           policy["sis_busy_target"];
  EXPECT_EQ(outcomes, policy["wakeups_placed"]);  // one placement per wakeup of a sleeping task
  // Each path is taken on this load: the wakee's recent_used_cpu, an idle
  // core, an idle CPU, a busy target, and scans SIS_PROP's budget cut.
  for (const char* path : {"sis_recent_used_cpu", "sis_idle_core", "sis_idle_cpu", "sis_busy_target", "sis_scans_cut"})
    EXPECT_GT(policy[path], 0) << path;
  EXPECT_LE(policy["sis_scans_cut"], policy["sis_idle_smt"] + policy["sis_busy_target"]);
  EXPECT_EQ(experiment::run_once(s).output.text, o.output.text);
  // 4.0's select_idle_sibling() takes a different course on the same load.
  s.features = "";
  const auto base = experiment::run_once(s);
  // 4.0's has no recent_used_cpu and no scan budget, and accounts for
  // every wakeup too.
  auto base_policy = policy_counters(base);
  EXPECT_EQ(base_policy.count("sis_recent_used_cpu"), 0u);
  EXPECT_EQ(base_policy.count("sis_scans_cut"), 0u);
  EXPECT_EQ(base_policy["sis_target_idle"] + base_policy["sis_prev_idle"] + base_policy["sis_idle_core"] +
                base_policy["sis_idle_cpu"] + base_policy["sis_idle_smt"] + base_policy["sis_busy_target"],
            base_policy["wakeups_placed"]);
  for (const char* path : {"sis_prev_idle", "sis_idle_core", "sis_busy_target"})
    EXPECT_GT(base_policy[path], 0) << path;
  EXPECT_NE(base.stats.context_switches, o.stats.context_switches);
}

// SIS_PROP's budget (SELECT_IDLE_V54) scales with the waking CPU's
// avg_idle. With sched_migration_cost_ns at 200 ns, avg_idle is capped at
// 2 * max_idle_balance_cost, which starts at 400 ns (ttwu_do_wakeup(),
// 3.13+) and rises only on a CPU whose newidle balancing has cost more, so
// avg_idle / 512 is nearly always 0 and the budget the minimum, 4:
// a scan looks at the target and two more CPUs, and nearly every scan that
// finds no idle CPU is cut. A wakeup then reads at most the target, prev, the
// recent_used_cpu and those two (no SMT here, so no core or sibling scan);
// a fork's find_idlest path reads the 7 others. At the default (500 us)
// the budget covers the 8-CPU LLC and few scans are cut: 1 in 6000 with
// the message's lines free, 1 in 30 since they are charged (stop 34), as
// CPUs busier with them idle for shorter spells and avg_idle falls.
TEST(RunOnce, SelectIdleV54ScanBudgetFollowsAvgIdle) {
  auto run = [](int64_t migration_cost_ns) {
    return policy_counters(experiment::run_once(messaging_spec(
        "1s8c1t", {"-g", "4", "-l", "100"}, "SELECT_IDLE_V54",
        {"sched_migration_cost_ns=" + std::to_string(migration_cost_ns)})));
  };
  auto tight = run(200);
  ASSERT_GT(tight["sis_busy_target"], 0);
  EXPECT_LE(tight["sis_scans_cut"], tight["sis_busy_target"]);
  EXPECT_GE(tight["sis_scans_cut"] * 100, tight["sis_busy_target"] * 99);
  const int64_t forks = tight["placements"] - tight["wakeups_placed"];
  EXPECT_LE(tight["placement_rq_reads"], 5 * tight["wakeups_placed"] + 7 * forks);
  auto roomy = run(500000);
  ASSERT_GT(roomy["sis_busy_target"], 0);
  EXPECT_LT(roomy["sis_scans_cut"] * 20, roomy["sis_busy_target"]);
  EXPECT_GT(tight["sis_scans_cut"], 10 * roomy["sis_scans_cut"]);
}

// Josef's patch read literally only reaches domains with SD_BALANCE_WAKE,
// and 4.0 sets it on none: on stock domains the run is the baseline's, event
// for event. With the flag set it takes slow paths.
TEST(RunOnce, LiteralWakeIdleCpuNeedsBalanceWakeDomains) {
  auto messaging = [](const std::string& features, std::vector<std::string> sysctls) {
    return experiment::run_once(messaging_spec("2s2c2t", {"-g", "2", "-l", "50"}, features, std::move(sysctls)));
  };
  auto slow_paths = [](const experiment::RunOutcome& o) {
    for (const auto& [k, v] : o.stats.policy)
      if (k == "wake_idle_cpu_slow_paths") return v;
    return int64_t{-1};
  };
  const auto base = messaging("", {});
  const auto literal = messaging("WAKE_IDLE_CPU_LITERAL", {});
  EXPECT_EQ(literal.output.text, base.output.text);
  EXPECT_EQ(literal.stats.context_switches, base.stats.context_switches);
  EXPECT_EQ(literal.stats.migrations, base.stats.migrations);
  EXPECT_EQ(literal.stats.run_delay_avg_us, base.stats.run_delay_avg_us);
  EXPECT_EQ(slow_paths(literal), 0);
  const auto flagged = messaging("WAKE_IDLE_CPU_LITERAL", {"sched_domain_balance_wake=1"});
  EXPECT_GT(slow_paths(flagged), 0);
}

// perf stat -I: the interval lines partition the timed window, so their
// counts add up to the run's summary, one line per interval begun.
TEST(RunOnce, IntervalLinesAddUpToTheSummary) {
  std::ostringstream lines;
  experiment::RunSpec s;
  s.machine = "1s2c1t";
  s.bench = "messaging";
  s.bench_args = {"-g", "1", "-l", "100"};
  s.interval_ns = 1000000;
  s.interval_out = &lines;
  auto o = experiment::run_once(s);
  ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  std::istringstream in(lines.str());
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line.rfind("#          time   switches involuntary", 0), 0u) << line;
  int64_t switches = 0, involuntary = 0, wakeups = 0, migrations = 0, recv_sleeps = 0, preemptions = 0;
  double last_t = 0;
  int n = 0;
  for (; std::getline(in, line); ++n) {
    std::istringstream f(line);
    double t;
    int64_t sw, inv, wk, remote, mig, idle;
    f >> t >> sw >> inv >> wk >> remote >> mig >> idle;
    ASSERT_FALSE(f.fail()) << line;
    EXPECT_GT(t, last_t);
    last_t = t;
    switches += sw;
    involuntary += inv;
    wakeups += wk;
    migrations += mig;
    auto field = [&](const std::string& key) -> int64_t {
      const auto at = line.find(" " + key + "=");
      return at == std::string::npos ? 0 : std::stoll(line.substr(at + key.size() + 2));
    };
    recv_sleeps += field("unix_stream_recvmsg");
    preemptions += field("wakeup_preemptions");
  }
  const double elapsed_s = static_cast<double>(o.stats.elapsed_ns) / 1e9;
  EXPECT_EQ(n, static_cast<int>(std::ceil(elapsed_s * 1000)));
  EXPECT_DOUBLE_EQ(last_t, std::round(elapsed_s * 1e9) / 1e9);
  EXPECT_EQ(switches, o.stats.context_switches);
  EXPECT_EQ(involuntary, o.stats.involuntary_switches);
  EXPECT_EQ(wakeups, o.stats.wakeups);
  EXPECT_EQ(migrations, o.stats.migrations);
  EXPECT_EQ(recv_sleeps, o.stats.sleeps["unix_stream_recvmsg"]);
  // Policy counters cover the whole run, the lines only the timed window.
  std::map<std::string, int64_t> policy(o.stats.policy.begin(), o.stats.policy.end());
  EXPECT_GT(preemptions, 0);
  EXPECT_LE(preemptions, policy["wakeup_preemptions"]);
  // Observing changes nothing: the same run without the lines.
  s.interval_ns = 0;
  auto unobserved = experiment::run_once(s);
  EXPECT_EQ(unobserved.output.text, o.output.text);
  EXPECT_EQ(obs::format_summary(unobserved.stats), obs::format_summary(o.stats));
}

// check_preempt_wakeup() compares a wakee with the running task only with
// WAKEUP_PREEMPTION; the counters say how often, and how often it won.
TEST(RunOnce, WakeupPreemptionsAreCountedAmongTheirChecks) {
  auto policy_counters = [](const std::string& features) {
    experiment::RunSpec s;
    s.machine = "1s1c1t";
    s.bench = "messaging";
    s.bench_args = {"-g", "1", "-l", "50"};
    s.features = features;
    auto o = experiment::run_once(s);
    EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
    std::map<std::string, int64_t> m(o.stats.policy.begin(), o.stats.policy.end());
    m["involuntary"] = o.stats.involuntary_switches;
    return m;
  };
  auto on = policy_counters("");
  EXPECT_GT(on["wakeup_preemptions"], 0);
  EXPECT_LT(on["wakeup_preemptions"], on["wakeup_preempt_checks"]);
  auto off = policy_counters("NO_WAKEUP_PREEMPTION");
  EXPECT_EQ(off["wakeup_preempt_checks"], 0);
  EXPECT_EQ(off["wakeup_preemptions"], 0);
  EXPECT_LT(off["involuntary"], on["involuntary"]);
}

// CFS charges each task its own CPU time, so when a sender's message costs
// more than its receiver's (unix_send_base 1300 against unix_recv_base 1000
// ns in the profiles), the receivers' vruntime falls behind the senders' as
// the run goes on, until a receiver woken beside its sender is more than the
// wakeup granularity behind it and preempts it: the run leaves batching for
// ping-pong. With the split even, or the other way round, it keeps batching.
// One group on one CPU (-g 1 -l 400, 160 k messages) shows it in 0.5 s. (The
// wakee also gains the min_vruntime its waker advances between
// task_waking_fair() and the enqueue, try_to_wake_up()'s own time, so on
// one CPU the stock split preempts within the first 50 ms.)
namespace {
// machines/generic.toml on one CPU with the given AF_UNIX costs, or "" if
// the file no longer has the lines this edits.
std::string one_cpu_machine_with_unix_costs(int send_ns, int recv_ns) {
  std::ifstream in(std::string(SCHEDLAB_SOURCE_DIR) + "/machines/generic.toml");
  std::stringstream text;
  text << in.rdbuf();
  std::string toml = text.str();
  const std::pair<std::string, std::string> edits[] = {
      {"name = \"generic\"", "name = \"split-" + std::to_string(send_ns) + "\""},
      {"topology = \"1s4c2t\"", "topology = \"1s1c1t\""},
      {"unix_send_base = { value = 1300", "unix_send_base = { value = " + std::to_string(send_ns)},
      {"unix_recv_base = { value = 1000", "unix_recv_base = { value = " + std::to_string(recv_ns)},
  };
  for (const auto& [from, to] : edits) {
    const auto at = toml.find(from);
    if (at == std::string::npos) return "";
    toml.replace(at, from.size(), to);
  }
  return toml;
}
}  // namespace

TEST(RunOnce, ReceiversCheaperThanTheirSendersPreemptThem) {
  auto run_with_split = [](int send_ns, int recv_ns) {
    const std::string toml = one_cpu_machine_with_unix_costs(send_ns, recv_ns);
    EXPECT_FALSE(toml.empty()) << "machines/generic.toml changed: update this test's edits";
    const auto path = std::filesystem::temp_directory_path() /
                      ("schedlab-split-" + std::to_string(getpid()) + "-" + std::to_string(send_ns) + ".toml");
    std::ofstream(path) << toml;
    std::ostringstream lines;
    experiment::RunSpec s;
    s.machine = path.string();
    s.bench = "messaging";
    s.bench_args = {"-g", "1", "-l", "400"};
    s.interval_ns = 50000000;
    s.interval_out = &lines;
    auto o = experiment::run_once(s);
    std::filesystem::remove(path);
    EXPECT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
    // Share of the wakeup checks that preempted, per 50 ms.
    std::vector<double> shares;
    std::istringstream in_lines(lines.str());
    for (std::string line; std::getline(in_lines, line);) {
      auto field = [&line](const std::string& key) -> double {
        const auto at = line.find(" " + key + "=");
        return at == std::string::npos ? 0 : std::stod(line.substr(at + key.size() + 2));
      };
      if (line[0] != '#' && field("wakeup_preempt_checks") > 0)
        shares.push_back(field("wakeup_preemptions") / field("wakeup_preempt_checks"));
    }
    std::map<std::string, int64_t> m(o.stats.policy.begin(), o.stats.policy.end());
    m["switches"] = o.stats.context_switches;
    return std::make_pair(m, shares);
  };
  auto [stock, stock_shares] = run_with_split(1300, 1000);
  auto [even, even_shares] = run_with_split(1150, 1150);
  auto [swapped, swapped_shares] = run_with_split(1000, 1300);
  ASSERT_GE(stock_shares.size(), 6u);
  EXPECT_GT(*std::max_element(stock_shares.begin() + 3, stock_shares.end()), 0.5);  // it ping-pongs
  EXPECT_GT(stock["wakeup_preemptions"], 4 * even["wakeup_preemptions"]);
  EXPECT_GT(stock["switches"], 3 * even["switches"]);
  EXPECT_LT(swapped["wakeup_preemptions"], even["wakeup_preemptions"]);
}

// Without SMT every charged nanosecond runs at a core's full rate, so over a
// benchmark's timed window the busy time is the kernel work by path plus
// lock spin and the wakers' waits for a switch-out (messaging and pipe do no
// user work). Only the window's edges differ: work charged before the start
// that runs after it (a fork or exec in flight), and work charged at the end
// that never runs (the schedule() after the last exit). With placements, IPIs and
// balancing on several CPUs, this covers paths the one-CPU test cannot;
// each of them outweighs the edges, so leaving one out fails here. (Messaging
// runs 30 loops: at 20, since exits run on the task's time (stop 81), the
// run's course put its placements at 91 us, under the bound.)
TEST(Experiment, KernelWorkByPathIsTheBusyTimeInTheWindowWithoutSmt) {
  constexpr int64_t kEdgesNs = 100000;
  for (const char* bench : {"messaging", "pipe"}) {
    experiment::RunSpec spec;
    spec.machine = "2s2c1t";
    spec.bench = bench;
    const bool pipe = std::string(bench) == "pipe";
    spec.bench_args = pipe ? std::vector<std::string>{"-l", "2000"} : std::vector<std::string>{"-g", "1", "-l", "30"};
    spec.instances = pipe ? 2 : 1;
    const auto r = experiment::run_once(spec);
    const auto& s = r.stats;
    int64_t work = 0;
    std::map<std::string, int64_t> by_path;
    for (const auto& [p, ns] : s.work_by_path) {
      work += ns;
      by_path[p] = ns;
    }
    EXPECT_GT(by_path["placement"], kEdgesNs) << bench;
    EXPECT_GT(by_path["ipi"], kEdgesNs) << bench;
    if (!pipe) {
      EXPECT_GT(by_path["balance"], kEdgesNs);
    }
    const int64_t unexplained = s.busy_ns_total - s.spin_ns_total - s.switch_wait_ns - work;
    EXPECT_LT(std::llabs(unexplained), kEdgesNs) << bench << ": busy " << s.busy_ns_total << ", work " << work;
  }
}

// The kworker_noise what-if: a kernel thread bound to each CPU wakes every
// period and works for run_us. The run still ends with the benchmark's
// tasks, each CPU's thread wakes about elapsed/period times, it never
// leaves its CPU unless unbound, and the run is deterministic. Off (the
// default), none run.
TEST(Experiment, KworkerNoiseWakesEachCpuEveryPeriodAndEndsWithTheBenchmark) {
  experiment::RunSpec spec;
  spec.machine = "1s2c2t";
  spec.kernel = "linux-4.0";
  spec.bench = "pipe";
  spec.bench_args = {"-l", "20000"};
  spec.seed = 3;
  const auto quiet = experiment::run_once(spec);
  EXPECT_EQ(quiet.stats.sleeps.count("worker_thread"), 0u);
  spec.sysctls = {"kworker_noise_period_us=1000", "kworker_noise_run_us=5"};
  std::string trace = "/tmp/schedlab_kworker_noise_trace.txt";
  spec.trace_path = trace;
  const auto noisy = experiment::run_once(spec);
  EXPECT_EQ(noisy.run.outcome, kernel::RunResult::Outcome::Completed);
  ASSERT_EQ(noisy.stats.sleeps.count("worker_thread"), 1u);
  // Counted from the benchmark's start to its end, on 4 CPUs.
  const double expected = 4.0 * static_cast<double>(noisy.stats.elapsed_ns) / 1e6;
  EXPECT_GT(expected, 100);
  EXPECT_NEAR(static_cast<double>(noisy.stats.sleeps.at("worker_thread")), expected, 8.0);
  // Bound: no kworker is ever migrated.
  std::ifstream in(trace);
  int kworker_lines = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("comm=kworker/") == std::string::npos) continue;
    ++kworker_lines;
    EXPECT_EQ(line.find("sched_migrate_task"), std::string::npos) << line;
  }
  EXPECT_GT(kworker_lines, 100);
  const auto again = experiment::run_once(spec);
  EXPECT_EQ(again.run.events, noisy.run.events);
  EXPECT_EQ(again.output.text, noisy.output.text);
  EXPECT_NE(noisy.output.text, quiet.output.text);
  // Unbound (kworker_noise_unbound), the threads are placed at each wakeup
  // like any task, and some move.
  spec.sysctls = {"kworker_noise_period_us=1000", "kworker_noise_run_us=5", "kworker_noise_unbound=1"};
  const auto unbound = experiment::run_once(spec);
  EXPECT_EQ(unbound.run.outcome, kernel::RunResult::Outcome::Completed);
  std::ifstream in_unbound(trace);
  int moves = 0;
  for (std::string line; std::getline(in_unbound, line);)
    if (line.find("sched_migrate_task: comm=kworker/u") != std::string::npos) ++moves;
  EXPECT_GT(moves, 0);
  spec.sysctls = {"kworker_noise_period_us=50"};
  EXPECT_THROW(experiment::run_once(spec), std::invalid_argument);
  // The work must end before the next period; 2.4 has no hrtimers or kworkers.
  spec.sysctls = {"kworker_noise_period_us=1000", "kworker_noise_run_us=1000"};
  EXPECT_THROW(experiment::run_once(spec), std::invalid_argument);
  spec.sysctls = {"kworker_noise_period_us=1000", "kworker_noise_run_us=5"};
  spec.kernel = "linux-2.4.19";
  EXPECT_THROW(experiment::run_once(spec), std::invalid_argument);
}

// The wakeup checks by who met whom, averaged over the repeats as the other
// statistics are: each pair's count, preemptions and lead summed over the
// repeats and divided by their number, so lead / checks stays the pooled
// mean. The lead's bins are summed and not divided, so the quantiles are
// the pooled ones even where a tail bin holds less than a check a run.
TEST(Experiment, WakeupChecksAreAveragedOverTheRepeats) {
  const std::string path = "/tmp/schedlab_experiment_wakeup_checks_test.toml";
  {
    std::ofstream f(path);
    f << "name = \"t\"\nmachine = \"1s2c1t\"\nkernel = \"linux-4.0\"\nrepeats = 2\n"
      << "[[workloads]]\ncommand = \"perf bench sched messaging -g 1 -l 20\"\n";
  }
  const auto x = experiment::load_experiment(path);
  const auto r = experiment::run_experiment(x, 1);
  ASSERT_EQ(r.stats.size(), 1u);
  const auto& avg = std::get<2>(r.stats[0]).wakeup_checks;
  std::vector<kernel::WakeupChecksByWchan> runs;
  for (uint64_t seed : {x.seed, x.seed + 7919}) {
    experiment::RunSpec spec;
    spec.machine = "1s2c1t";
    spec.kernel = "linux-4.0";
    spec.bench = "messaging";
    spec.bench_args = {"-g", "1", "-l", "20"};
    spec.seed = seed;
    runs.push_back(experiment::run_once(spec).stats.wakeup_checks);
  }
  ASSERT_NE(runs[0], runs[1]);  // two seeds, two different runs
  ASSERT_FALSE(avg.empty());
  for (const auto& [pair, t] : avg) {
    const auto sum = [&](auto field) {
      int64_t s = 0;
      for (const auto& run : runs)
        if (const auto it = run.find(pair); it != run.end()) s += it->second.*field;
      return std::llround(static_cast<double>(s) / 2.0);
    };
    EXPECT_EQ(t.checks, sum(&kernel::WakeupCheckTally::checks)) << pair.first << " <- " << pair.second;
    EXPECT_EQ(t.preemptions, sum(&kernel::WakeupCheckTally::preemptions));
    EXPECT_EQ(t.lead_ns, sum(&kernel::WakeupCheckTally::lead_ns));
    for (size_t bin = 0; bin < kernel::WakeupCheckTally::kLeadBins; ++bin) {
      int64_t s = 0;
      for (const auto& run : runs)
        if (const auto it = run.find(pair); it != run.end()) s += it->second.lead_bins[bin];
      EXPECT_EQ(t.lead_bins[bin], s) << "bin " << bin;  // pooled, not rounded per bin
    }
  }
  // Within a run every check is binned once, after the counters' reset as
  // before it: the bins add up to the pair's count.
  for (const auto& run : runs)
    for (const auto& [pair, t] : run) {
      int64_t binned = 0;
      for (int64_t n : t.lead_bins) binned += n;
      EXPECT_EQ(binned, t.checks) << pair.first << " <- " << pair.second;
    }
}

// EEVDF_V66's RUN_TO_PARITY (v6.6 pick_eevdf()): a running task that has
// not had a new slice since it was picked keeps the CPU against an
// eligible wakee, so on a loaded socket messaging run some wakeup checks
// are held that way and fewer preempt than with the feature written off;
// avg_vruntime stays the sum over the tree either way (the invariants).
// Summed over six seeds: a run this short settles into one regime or
// another, and in one seed of three the one with the feature preempts
// as often or more.
TEST(RunOnce, EevdfRunToParityHoldsWakeupsUntilTheSliceIsUsed) {
  const auto counters = [](const std::string& features) {
    std::map<std::string, int64_t> m;
    for (uint64_t seed = 1; seed <= 6; ++seed) {
      experiment::RunSpec spec;
      spec.machine = "1s4c1t";
      spec.kernel = "linux-4.0";
      spec.features = features;
      spec.bench = "messaging";
      spec.bench_args = {"-g", "1", "-l", "100"};
      spec.seed = seed;
      const auto o = experiment::run_once(spec);
      EXPECT_EQ(o.invariant_errors, "") << features << " seed " << seed;
      for (const auto& [name, n] : o.stats.policy) m[name] += n;
    }
    return m;
  };
  auto parity = counters("EEVDF_V66");
  auto no_parity = counters("EEVDF_V66,EEVDF_NO_RUN_TO_PARITY");
  EXPECT_GT(parity.at("eevdf_parity_held"), parity.at("wakeup_preempt_checks") / 10);
  EXPECT_EQ(no_parity.at("eevdf_parity_held"), 0);
  EXPECT_LT(parity.at("wakeup_preemptions") * 10, no_parity.at("wakeup_preemptions") * 9);
  EXPECT_EQ(parity.count("tick_preemptions_lead"), 1u);
  EXPECT_EQ(parity.at("tick_preemptions_lead") + parity.at("tick_preemptions_slice_spent"), 0);
}
