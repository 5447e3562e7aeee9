// A modelled machine: topology, cost parameters and idle states (all data,
// loaded from a profile under machines/), plus the hardware-side execution
// interface: how fast each CPU executes right now.
//
// A physical CPU always executes, at full speed or at the SMT-shared rate
// when its sibling is busy. The ExecutionBacking hook lets a later layer
// (virt/) make a CPU's progress depend on something else, e.g. a host task
// that backs a vCPU; hw/ only defines the interface.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hw/topology.hpp"

namespace hw {

struct Costs {
#define COST(name, unit, help) int64_t name = -1;
#include "hw/costs.def"
#undef COST
};

struct CostParamInfo {
  const char* name;
  const char* unit;
  const char* help;
};
const std::vector<CostParamInfo>& cost_params();

struct IdleState {
  std::string name;
  int64_t exit_latency_ns = 0;
  int64_t target_residency_ns = 0;
  bool polling = false;  // the CPU polls need_resched: no IPI needed, no exit latency
  // Entered with MONITOR/MWAIT on the idle task's thread flags: a store to
  // them wakes the CPU (after the exit latency). Whether the kernel lets a
  // waker rely on that instead of an IPI depends on its version (kernel.cpp).
  bool mwait = false;
  std::string source;
};

struct MachineProfile {
  std::string name;
  std::string description;
  Topology topology{1, 1, 1};
  Costs costs;
  std::vector<std::string> cost_sources;  // indexed like cost_params()
  std::vector<IdleState> idle_states;     // shallowest first
  std::string default_kernel;
  std::string file;  // where it was loaded from ("" for built-in spec machines)
};

// Loads machines/<name>.toml, or a path to a .toml file, or builds a machine
// from a topology spec ("2s8c2t") with the costs of machines/generic.toml.
MachineProfile load_machine(const std::string& name_or_spec);
std::vector<std::string> list_machines();
std::string machines_dir();

// Execution rates. Rates are in permille of solo throughput.
class Machine {
 public:
  explicit Machine(MachineProfile profile);
  [[nodiscard]] const MachineProfile& profile() const { return profile_; }
  [[nodiscard]] const Topology& topo() const { return profile_.topology; }
  [[nodiscard]] const Costs& costs() const { return profile_.costs; }
  [[nodiscard]] int nr_cpus() const { return topo().nr_cpus(); }

  // The kernel tells the hardware whether a CPU is executing (anything but
  // idle), and when. Siblings whose rate changes are reported to the rate
  // listener.
  void set_executing(int cpu, bool executing, int64_t now_ns);
  [[nodiscard]] bool executing(int cpu) const { return executing_[static_cast<size_t>(cpu)]; }
  [[nodiscard]] int rate_permille(int cpu) const;
  // CPU time executed beside an executing SMT sibling, at the shared rate
  // (smt_throughput_permille), up to now_ns: summed over the CPUs, so a
  // core whose two threads both execute for 1 ms adds 2 ms. 0 without SMT.
  [[nodiscard]] int64_t smt_shared_ns(int64_t now_ns) const;
  // CPU time executed, summed over the CPUs, up to now_ns: the busy time
  // smt_shared_ns() is a part of, counted from the same spans.
  [[nodiscard]] int64_t executing_ns(int64_t now_ns) const;
  void set_rate_listener(std::function<void(int cpu)> f) { on_rate_change_ = std::move(f); }

  // Cost of moving `bytes` of data last touched on `from` to `to`.
  [[nodiscard]] int64_t line_transfer(int from, int to) const {
    return line_transfer_by_distance_[static_cast<size_t>(topo().distance(from, to))];
  }
  [[nodiscard]] int64_t transfer_cost(int from, int to, int64_t bytes) const;
  // Cost for `to` of running a task whose working set of `bytes` was last
  // used on `from`, of which `warm_permille` is still in from's private cache.
  [[nodiscard]] int64_t refill_cost(int from, int to, int64_t bytes, int64_t warm_permille) const;
  // The lines refill_cost() charges for that miss the new CPU's private
  // cache, by where they come from: inside its last-level cache (from the
  // LLC, or from another core's private cache under it: what perf counts as
  // cache-references that hit) or beyond it (another socket's caches, or
  // memory, or, where the LLC is per core, another core's: cache-misses).
  // Lines an SMT sibling finds in the private cache it shares are neither.
  struct RefillLines {
    int64_t within_llc = 0, beyond_llc = 0;
  };
  [[nodiscard]] RefillLines refill_lines(int from, int to, int64_t bytes, int64_t warm_permille) const;

  // Every other line the model moves between CPUs: the kernel objects'
  // lines of the line switches (hw::CacheLine), the messages' data and the
  // lines a path reaches through a CPU (workload/ipc.cpp), the wakeup's
  // store to the target CPU, 2.4's task lines. Each fetch is counted by
  // where its data comes from, as refill_lines() splits a refill: from
  // inside the fetching CPU's last-level cache (perf's cache-references
  // that hit) or from beyond it (cache-misses); a line the CPU's own core
  // holds (its SMT sibling's) is neither, and so is a store to a line the
  // CPU holds already, whose invalidations fetch no data. Not counted: the
  // runqueue statistics placement and balancing read, which are charged
  // per CPU read (lb_per_cpu_*), not as lines. The costs never read this
  // tally, so it is kept on a const Machine.
  struct LineMoves {
    int64_t within_llc = 0, beyond_llc = 0;
  };
  void count_lines_moved(int from, int to, int64_t lines) const {
    if (from < 0 || from == to || lines <= 0) return;
    const auto f = static_cast<size_t>(from), t = static_cast<size_t>(to);
    if (core_of_[f] == core_of_[t]) return;
    (llc_of_[f] == llc_of_[t] ? lines_moved_.within_llc : lines_moved_.beyond_llc) += lines;
  }
  [[nodiscard]] const LineMoves& lines_moved() const { return lines_moved_; }

 private:
  MachineProfile profile_;
  // Where a refill's evicted and still-warm parts come from: one reading
  // shared by refill_cost() and refill_lines().
  struct RefillPlan {
    int from = 0;  // the old CPU (the new one if the task never ran)
    int64_t lines = 0;
    bool same_llc = false, llc_shared_beyond_core = false, same_core = false;
  };
  [[nodiscard]] RefillPlan plan_refill(int from, int to, int64_t bytes) const;
  std::array<int64_t, 5> line_transfer_by_distance_{};  // indexed by hw::Distance
  mutable LineMoves lines_moved_;
  std::vector<uint8_t> executing_;     // per CPU; bytes, as it is read at every segment
  std::vector<int> core_of_, llc_of_;  // per CPU: topo().cpu(c).core and .llc, read without a bounds check
  // Per core: its executing threads and since when that count holds.
  struct CoreExecuting {
    int threads = 0;
    int64_t since_ns = 0;
  };
  std::vector<CoreExecuting> core_executing_;
  int64_t smt_shared_ns_ = 0;  // closed spans only; smt_shared_ns() adds the open ones
  int64_t executing_ns_ = 0;   // closed spans only; executing_ns() adds the open ones
  std::vector<bool> llc_shared_beyond_core_;  // per CPU: its last-level cache spans other cores
  std::vector<std::vector<int>> siblings_;
  std::function<void(int)> on_rate_change_;
};

}  // namespace hw
