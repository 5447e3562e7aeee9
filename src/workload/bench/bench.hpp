// Benchmark models, by their real command lines. A BenchRun sets up the
// benchmark's task graph on a kernel, and afterwards prints what the real
// tool prints and reports its metrics.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernel/kernel.hpp"

namespace workload {

struct Metric {
  std::string name;
  std::string unit;
  bool higher_is_better = false;
  double value = 0;
};

struct BenchOutput {
  std::string text;             // exactly what the tool prints
  std::vector<Metric> metrics;  // the first one is the headline
};

class BenchRun {
 public:
  virtual ~BenchRun() = default;
  // Spawn the benchmark's main task. on_start runs when the timed window
  // opens (the stats collector resets there).
  virtual void start(kernel::Kernel& k, std::function<void()> on_start) = 0;
  [[nodiscard]] virtual BenchOutput finish() const = 0;
  [[nodiscard]] virtual std::string name() const = 0;     // "sched/messaging"
  [[nodiscard]] virtual std::string command() const = 0;  // normalized args
};

// name: "messaging" or "pipe" (perf bench sched ...). args: the tool's own
// options, e.g. {"-g", "10", "-l", "100"}. Throws std::invalid_argument on
// unknown options or absurd values.
std::unique_ptr<BenchRun> make_bench(const std::string& name, const std::vector<std::string>& args);
std::vector<std::string> bench_names();

}  // namespace workload
