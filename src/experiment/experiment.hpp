// Experiments: variants x workloads x repeats on one machine, answered with
// one table (mean +- stddev, change against the first variant with its 95%
// confidence interval, and whether the change is beyond run-to-run noise)
// and the statistics that explain it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "experiment/run.hpp"

namespace experiment {

struct Variant {
  std::string name;
  std::string kernel;  // "" = the experiment's kernel
  std::string features;
  std::vector<std::string> sysctls;
};

struct Workload {
  std::string name;
  std::string command;  // "perf bench sched messaging -g 10 -l 100"
  int instances = 1;    // copies run in parallel on the one machine
  std::string start_layout;  // "10/6": instances started per node (workload::StartLayout)
  int64_t unpin_after_ms = 10;
};

struct Experiment {
  std::string name;
  std::string description;
  std::string machine;
  std::string kernel;
  int repeats = 5;
  uint64_t seed = 1;
  std::vector<Variant> variants;
  std::vector<Workload> workloads;
  // Kernel statistics to tabulate like benchmark metrics, with a confidence
  // interval per variant (names from stat_metric_names()).
  std::vector<std::string> stat_metrics;
  // Least-squares slopes across the repeats, per workload and variant: {y, x}
  // pairs of stat_metrics names. {"busy_cpu", "context_switches"} is the CPU
  // time an extra switch brings with it where the regime varies from run to
  // run, the quantity LKP's kernel-to-kernel comparisons give for real boxes.
  std::vector<std::pair<std::string, std::string>> slopes;
};

Experiment load_experiment(const std::string& path);

// Every variant's kernel, features and sysctls make a consistent kernel on
// the experiment's machine; throws naming `path` and the variant otherwise.
// load_experiment() calls it; call it again after changing a variant.
void check_variants(const Experiment& x, const std::string& path);

// The kernel statistics an experiment may list in `stat_metrics`, and their
// values for one run: the counters that explain a result, so that a change
// in them can be tested against noise like the benchmark's own figure.
// The off-CPU ones are families: "off_cpu_delay_avg:<wchan>" names one.
std::vector<std::string> stat_metric_names();
bool is_stat_metric(const std::string& name);
std::vector<workload::Metric> stat_metrics_of(const obs::Summary& s, const std::vector<std::string>& names);

struct CellResult {  // one workload x variant x metric
  std::string workload, variant, metric, unit;
  bool higher_is_better = false;
  std::vector<double> values;
  double mean = 0, stddev = 0, change_pct = 0;
  // Half-width of the change's 95% confidence interval, in % of the
  // baseline mean (Welch); negative when either side has fewer than 2 runs.
  double change_ci95_pct = -1;
  bool beyond_noise = false;
  bool is_baseline = false;
};

// y = a + slope x by least squares over the repeats.
struct LineFit {
  double slope = 0;  // NaN with under 2 points or x constant
  double ci95 = -1;  // half-width of the slope's 95% CI (t, n - 2 df); -1 with under 3 points or x constant
  double r = 0;      // Pearson's correlation
};
// x and y must be of one length (the same runs); throws std::invalid_argument otherwise.
LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y);

struct SlopeResult {  // one workload x variant x (y, x) pair
  std::string workload, variant, y, x;
  std::string unit;  // y's unit, per one unit of x
  LineFit fit;
  int n = 0;
};

struct ExperimentResult {
  Experiment exp;
  std::vector<CellResult> cells;
  std::vector<SlopeResult> slopes;
  // Mean statistics per workload and variant.
  std::vector<std::tuple<std::string, std::string, obs::Summary>> stats;
  std::vector<std::string> problems;  // deadlocks, invariant failures
};

// One finished simulation of an experiment: the `done`-th of `total` to
// finish (so 1..total, in the order they finish, which depends on `jobs`),
// which cell and repeat it was, and whether it failed (run_experiment()
// throws its error once every run has finished).
struct RunDone {
  size_t done = 0, total = 0;
  std::string workload, variant;
  int repeat = 0;
  bool failed = false;
};

// Runs every simulation, `jobs` at a time (deterministic regardless of jobs).
// `on_run_done`, if set, is called once per simulation as it finishes, one
// call at a time: a long experiment can say how far it is (the CLI's
// --progress). It sees no results, so it cannot change them.
ExperimentResult run_experiment(const Experiment& exp, int jobs,
                                const std::function<void(const RunDone&)>& on_run_done = {});
std::string format_table(const ExperimentResult& r);
std::string format_json(const ExperimentResult& r);

// Welch's t-test at 95%: is the difference of the means beyond noise?
bool beyond_noise(const std::vector<double>& a, const std::vector<double>& b);
// The half-width of the 95% confidence interval of mean(b) - mean(a)
// (Welch-Satterthwaite); negative when either side has fewer than 2 values.
double welch_halfwidth95(const std::vector<double>& a, const std::vector<double>& b);
double mean_of(const std::vector<double>& v);
double stddev_of(const std::vector<double>& v);

}  // namespace experiment
