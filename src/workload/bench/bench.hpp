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
  // The benchmark's main program (what `perf bench ...` runs). on_start runs
  // when its timed window opens.
  virtual kernel::Program program(std::function<void()> on_start) = 0;
  [[nodiscard]] virtual BenchOutput finish() const = 0;
  [[nodiscard]] virtual std::string name() const = 0;     // "sched/messaging"
  [[nodiscard]] virtual std::string comm() const { return "perf"; }  // the process name
  [[nodiscard]] virtual std::string command() const = 0;  // normalized args
};

// name: "messaging" or "pipe" (perf bench sched ...), or "schbench". args:
// the tool's own options, e.g. {"-g", "10", "-l", "100"}. Throws std::invalid_argument on
// unknown options or absurd values.
std::unique_ptr<BenchRun> make_bench(const std::string& name, const std::vector<std::string>& args);

// Where the instances of a launch start (instances.cpp): per_node[k]
// instances pinned to node k before their exec, in order, all unpinned
// unpin_after_ns after the last launch. Empty: an ordinary launch.
struct StartLayout {
  std::vector<int> per_node;
  int64_t unpin_after_ns = 10000000;
  // "10/6" (instances per node), as --start-layout takes it.
  static StartLayout parse(const std::string& spec, int64_t unpin_after_ms = 10);
  [[nodiscard]] std::string describe() const;
};

// N instances of a benchmark started together, as a script that launches N
// `perf bench` processes in parallel and waits for them (seed 000 ran
// NR_CPUS/2 pipe instances). With one instance the benchmark's main task is
// spawned directly, as `perf` started from a shell on CPU 0.
class Instances {
 public:
  Instances(const std::string& name, const std::vector<std::string>& args, int count, StartLayout layout = {});
  // on_start: called once, when the first instance opens its timed window.
  void start(kernel::Kernel& k, std::function<void()> on_start);
  // Each instance's output, then (for N > 1) an aggregate line; metrics are
  // the mean over instances (plus the total rate where one exists).
  [[nodiscard]] BenchOutput finish() const;
  [[nodiscard]] std::string command() const;

 private:
  std::vector<std::unique_ptr<BenchRun>> runs_;
  StartLayout layout_;
  bool started_ = false;
};
std::vector<std::string> bench_names();

}  // namespace workload
