// One simulation: a machine, a kernel configuration, a benchmark command
// line and a seed in; the benchmark's output, its metrics and the scheduler
// statistics out.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "hw/machine.hpp"
#include "kernel/kernel.hpp"
#include "obs/stats.hpp"
#include "workload/bench/bench.hpp"

namespace experiment {

struct RunSpec {
  std::string machine = "haswell-2s8c2t";
  std::string kernel;  // "" = the machine's default
  std::string features;
  std::vector<std::string> sysctls;
  // "MS:A,NO_B": write these features MS milliseconds after the benchmark's
  // start barrier (Kernel::set_features_at()), in the order given.
  std::vector<std::string> features_at;
  uint64_t seed = 1;
  std::string bench = "messaging";
  std::vector<std::string> bench_args;
  int instances = 1;
  std::string start_layout;  // workload::StartLayout::parse()
  int64_t unpin_after_ms = 10;
  std::string trace_path;
  bool trace_stat_runtime = false;  // the trace also gets sched_stat_runtime
  // Counters per interval (`perf stat -I`), written to interval_out.
  int64_t interval_ns = 0;
  std::ostream* interval_out = nullptr;
  bool check_invariants = true;
  int64_t time_limit_ns = 3600LL * 1000 * 1000 * 1000;  // one simulated hour
  uint64_t event_limit = 2000000000ULL;
};

struct RunOutcome {
  workload::BenchOutput output;
  obs::Summary stats;
  kernel::RunResult run;
  std::string machine_name;
  std::string kernel_name;
  std::string command;
  std::string config;            // effective features and sysctls
  std::string invariant_errors;  // "" when all invariants hold
};

struct FeatureWrite {
  int64_t after_start_ns = 0;
  std::string features;
};
// "MS:A,NO_B" (RunSpec::features_at). Throws std::invalid_argument.
FeatureWrite parse_features_at(const std::string& spec);

// Builds everything, runs, and checks invariants. Throws std::invalid_argument
// for bad input (machine, kernel, feature, sysctl, benchmark arguments).
RunOutcome run_once(const RunSpec& spec);

// Splits "perf bench sched messaging -g 10" into bench name and args.
void parse_command(const std::string& command, std::string& bench, std::vector<std::string>& args);

}  // namespace experiment
