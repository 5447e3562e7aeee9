// ipc-bench's stats.c summary, ported (workload/bench/ipc_bench_stats.cpp):
// a run whose figures can be worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workload/bench/ipc_bench_stats.hpp"

namespace {

// 40 samples 1, 2, ..., 40 in run order: the first 5% (two) are dropped,
// leaving 3..40, a straight line of slope 1 per sample (38 over the run)
// through 2 at index 0.
std::string ramp_log() {
  std::vector<double> samples;
  for (int i = 1; i <= 40; i++) samples.push_back(i);
  return workload::summarise_samples(samples);
}

std::string section(const std::string& log, const std::string& title) {
  const auto b = log.find(title + "\n");
  EXPECT_NE(b, std::string::npos) << title;
  const auto from = b + title.size() + 1;
  // Each summary is four tab-indented lines.
  auto end = from;
  for (int i = 0; i < 4; i++) end = log.find('\n', end) + 1;
  return log.substr(from, end - from);
}

}  // namespace

// stats.c's linear_regression() takes the mean of x = 1..n as n/2 + 1 and
// the mean of x^2 as (n + 2)(2n + 1)/6, not (n + 1)/2 and (n + 1)(2n + 1)/6,
// so the ramp's slope of 38 over the run reads 36.71 (109.5 / 113.33 * 38)
// and its intercept 2.18; the port keeps the formula so that its logs read
// like the archives'.
TEST(IpcBenchStats, TheRegressionIsStatsCsOwnFormula) {
  const std::string log = ramp_log();
  EXPECT_EQ(log.substr(0, log.find('\n')), "Linear regression: y = 3.671471e+01*x + 2.176471e+00");
}

// Mean 21.5; the sd divides by n: sqrt((38^2 - 1) / 12) = 10.966; quintiles
// at indices 0, 7, 15, 22, 30, 37; 5% at 38/20 = 1, the median at 19, 95% at
// 36; the mean falls between 21 and 22, so its percentile interpolates
// to (21.5 + 22*18 - 19*21) * 100 / 38 = 48.68%, and mean -+ sd (10.53,
// 32.47) to 19.83% and 77.54% the same way. A discrete uniform's excess
// kurtosis is -6(n^2 + 1) / (5(n^2 - 1)) = -1.201663.
TEST(IpcBenchStats, TheWholeDistributionIsSummarisedAsStatsCDoes) {
  EXPECT_EQ(section(ramp_log(), "Distribution of all values:"),
            "\tMean 2.150000e+01, sample sd 1.096586e+01, sample skew 0.000000e+00, sample kurtosis -1.201663e+00\n"
            "\tQuintiles: 3.000000e+00, 1.000000e+01, 1.800000e+01, 2.500000e+01, 3.300000e+01, 4.000000e+01\n"
            "\t5% 4.000000e+00, median 2.200000e+01, 95% 3.900000e+01\n"
            "\tSD percentiles: -3 -> 0.000000%, -2 -> 0.000000%, -1 -> 19.826694%, 0 -> 48.684211%, "
            "1 -> 77.541727%, 2 -> 100.000000%, 3 -> 100.000000%\n");
}

// 38 / 10 = 3 samples either side are the outliers: 3..5 and 38..40.
TEST(IpcBenchStats, TheOuterTenthsAreSummarisedApartFromTheBulk) {
  const std::string log = ramp_log();
  EXPECT_NE(section(log, "Low outliers:").find("\tMean 4.000000e+00,"), std::string::npos);
  EXPECT_NE(section(log, "Bulk distribution:").find("\tMean 2.150000e+01,"), std::string::npos);
  EXPECT_NE(section(log, "High outliers:").find("\tMean 3.900000e+01,"), std::string::npos);
  EXPECT_NE(log.find("Slice 9/10:\n"), std::string::npos);
}

TEST(IpcBenchStats, FewSamplesGetNoSlices) {
  const std::string log = workload::summarise_samples({1, 2, 3, 4, 5});
  EXPECT_EQ(log.find("By tenths"), std::string::npos);
  EXPECT_NE(log.find("Distribution of all values:"), std::string::npos);
  EXPECT_EQ(log.find("Bulk distribution:"), std::string::npos);  // 5 / 10 = 0 outliers
}

// The ramp run backwards, 40 down to 1: the first two (40, 39) are dropped,
// and each tenth is sorted in place before it is summarised, so the first
// slice (the run's samples 38, 37, 36) reads 36, 36, 37 at indices 0, 3/5
// and 6/5 of its quintiles, where an unsorted slice would read 38, 38, 37.
TEST(IpcBenchStats, EachTenthIsSortedBeforeItIsSummarised) {
  std::vector<double> samples;
  for (int i = 40; i >= 1; i--) samples.push_back(i);
  const std::string log = workload::summarise_samples(samples);
  EXPECT_NE(section(log, "Slice 0/10:").find("\tQuintiles: 3.600000e+01, 3.600000e+01, 3.700000e+01,"), std::string::npos) << log;
  EXPECT_NE(section(log, "Distribution of all values:").find("\t5% 2.000000e+00, median 2.000000e+01, 95% 3.700000e+01"),
            std::string::npos)
      << log;
}

// 19 samples of 1 and 19 of 3: mean 2, sd 1, so mean + sd falls on the 3s.
// A point equal to a run of ties takes the middle of the run:
// (38 + 18) * 50 / 38 = 73.68%. The mean itself interpolates between 1 and
// 3: (2 + 3*18 - 19*1) * 100 / 38 / 2 = 48.68%. (mean - sd, computed on
// line, lands a hair below the 1s and reads 0%.)
TEST(IpcBenchStats, APointOnTiedSamplesTakesTheMiddleOfTheirRun) {
  std::vector<double> samples(2, 1.0);  // the dropped 5%
  for (int i = 0; i < 19; i++) samples.push_back(1.0);
  for (int i = 0; i < 19; i++) samples.push_back(3.0);
  const std::string whole = section(workload::summarise_samples(samples), "Distribution of all values:");
  EXPECT_NE(whole.find("\tMean 2.000000e+00, sample sd 1.000000e+00,"), std::string::npos) << whole;
  EXPECT_NE(whole.find("-1 -> 0.000000%, 0 -> 48.684211%, 1 -> 73.684211%"), std::string::npos) << whole;
}
