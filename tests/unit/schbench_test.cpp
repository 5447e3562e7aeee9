#include <gtest/gtest.h>

#include "experiment/run.hpp"
#include "workload/bench/latency_histogram.hpp"

namespace sb = workload::schbench;

TEST(SchbenchHistogram, SmallValuesAreExactLargeOnesReadAsTheirBucketMean) {
  for (unsigned v : {0U, 1U, 137U, 511U}) EXPECT_EQ(sb::plat_idx_to_val(sb::plat_val_to_idx(v)), v);
  // 1000 = 0b1111101000: one error bit, bucket [1000, 1001], mean 1001.
  EXPECT_EQ(sb::plat_val_to_idx(1000), 756U);
  EXPECT_EQ(sb::plat_idx_to_val(756), 1001U);
  EXPECT_EQ(sb::plat_val_to_idx(0xffffffffU), sb::PLAT_NR - 1);
}

TEST(SchbenchHistogram, PercentilesAreTheFirstBucketReachingTheirShare) {
  sb::Stats s;
  for (unsigned v = 1; v <= 100; ++v) sb::add_lat(s, v);
  const auto p = sb::calc_percentiles(s);
  ASSERT_EQ(p.size(), sb::plist.size());
  EXPECT_EQ(p[0], 50U);
  EXPECT_EQ(p[sb::PLIST_P99], 99U);
  EXPECT_EQ(p[6], 100U);
  EXPECT_EQ(s.min, 0U);  // schbench's calloc()ed min is never raised
}

namespace {
experiment::RunOutcome run_schbench(const std::string& features, std::vector<std::string> args) {
  experiment::RunSpec spec;
  spec.machine = "haswell-2s8c2t";
  spec.kernel = "linux-4.0";
  spec.features = features;
  spec.bench = "schbench";
  spec.bench_args = std::move(args);
  spec.check_invariants = true;
  return experiment::run_once(spec);
}
double metric(const experiment::RunOutcome& o, const std::string& name) {
  for (const auto& m : o.output.metrics)
    if (m.name == name) return m.value;
  ADD_FAILURE() << "no metric " << name;
  return 0;
}
}  // namespace

TEST(Schbench, WorkersCycleThroughSpinAndBatchedWakeups) {
  auto o = run_schbench("", {"-m", "2", "-t", "4", "-r", "2"});
  ASSERT_EQ(o.run.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(o.invariant_errors, "");
  EXPECT_EQ(o.output.text.rfind("Latency percentiles (usec)\n\t50.0th: ", 0), 0u);
  // A worker loop is a 30 ms spin plus a 30-37.5 ms wait for its batch:
  // about 15 loops per second.
  EXPECT_GT(metric(o, "worker_loops_per_sec"), 13.0);
  EXPECT_LT(metric(o, "worker_loops_per_sec"), 16.5);
  // Eight workers on 32 CPUs: every wakeup finds an idle CPU, so the
  // latency is the IPI and idle-exit path, well under a millisecond.
  EXPECT_GT(metric(o, "p50_wakeup_latency"), 0);
  EXPECT_LT(metric(o, "p99_wakeup_latency"), 1000);
  // The run lasts the runtime, plus the last batch.
  EXPECT_GE(o.run.end_ns, 2000000000);
  EXPECT_LT(o.run.end_ns, 2100000000);
}

TEST(Schbench, SameSeedSameOutput) {
  auto a = run_schbench("WAKE_IDLE_CPU", {"-t", "20", "-r", "1"});
  auto b = run_schbench("WAKE_IDLE_CPU", {"-t", "20", "-r", "1"});
  EXPECT_EQ(a.output.text, b.output.text);
  EXPECT_EQ(a.run.events, b.run.events);
}

TEST(Schbench, RejectsOptionsItDoesNotModel) {
  EXPECT_THROW(run_schbench("", {"-p", "4096"}), std::invalid_argument);
  EXPECT_THROW(run_schbench("", {"-t", "0"}), std::invalid_argument);
}
