// Scheduling domains, derived from the topology as kernel/sched/core.c of
// Linux 4.0 derives them (sd_init(), default_topology[], sched_init_numa(),
// build_sched_groups(), sd_degenerate()/sd_parent_degenerate(),
// update_top_cache_domain()). 3.10 and 4.0 build the same domains.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "hw/topology.hpp"

namespace kernel {

// include/linux/sched.h (v4.0) SD_* flags.
enum SdFlag : uint32_t {
  SD_LOAD_BALANCE = 0x0001,
  SD_BALANCE_NEWIDLE = 0x0002,
  SD_BALANCE_EXEC = 0x0004,
  SD_BALANCE_FORK = 0x0008,
  SD_BALANCE_WAKE = 0x0010,
  SD_WAKE_AFFINE = 0x0020,
  SD_SHARE_CPUCAPACITY = 0x0080,
  SD_SHARE_POWERDOMAIN = 0x0100,
  SD_SHARE_PKG_RESOURCES = 0x0200,
  SD_SERIALIZE = 0x0400,
  SD_ASYM_PACKING = 0x0800,
  SD_PREFER_SIBLING = 0x1000,
  SD_OVERLAP = 0x2000,
  SD_NUMA = 0x4000,
};
std::string sd_flags_string(uint32_t flags);

struct SchedGroup {
  hw::CpuMask cpus;
  int64_t capacity = 1024;  // sgc->capacity (SCHED_CAPACITY_SCALE per CPU, SMT-scaled)
  // The struct sched_group_capacity this group shares with every other CPU's
  // copy of it: __sdt_alloc() gives each topology level one per CPU, and
  // get_group()/build_overlap_sched_groups() hand a group the one of the CPU
  // it was built from. Indexes shared state such as sgc->imbalance
  // (SchedDomains::nr_sgc() of them).
  int sgc = -1;
};

struct SchedDomain {
  std::string name;  // SMT, MC, DIE, NUMA
  int level = 0;     // index in this CPU's chain after degeneration (0 = lowest)
  hw::CpuMask span;
  int span_weight = 0;
  std::vector<SchedGroup> groups;  // groups[0] is the local group (sd->groups)
  uint32_t flags = 0;
  int imbalance_pct = 125;
  int cache_nice_tries = 0;
  int busy_factor = 32;
  int busy_idx = 0, idle_idx = 0, newidle_idx = 0, wake_idx = 0, forkexec_idx = 0;
  int64_t min_interval_ms = 1, max_interval_ms = 2;
  int numa_distance = 10;
  // Mutable balancing state (per CPU per level, as in the kernel).
  int64_t balance_interval_ms = 1;
  int64_t last_balance = 0;  // jiffies
  unsigned nr_balance_failed = 0;
  int64_t max_newidle_lb_cost = 0;     // ns
  int64_t next_decay_max_lb_cost = 0;  // jiffies
  // 6.1's NI_RANDOM (NEWIDLE_V61): newidle passes tried and those that
  // pulled, halved at 1024 tries, and the success rate in 1/1024 they give.
  unsigned newidle_call = 512, newidle_success = 256, newidle_ratio = 512;
};

// Per-CPU domain hierarchy plus the shortcuts update_top_cache_domain() sets.
class SchedDomains {
 public:
  // version: kernel version (major*100+minor); before 3.16 the per-level
  // defaults come from include/linux/topology.h's SD_*_INIT macros.
  SchedDomains(const hw::Topology& topo, int version);
  [[nodiscard]] std::vector<SchedDomain>& of(int cpu) { return per_cpu_[static_cast<size_t>(cpu)]; }
  [[nodiscard]] const std::vector<SchedDomain>& of(int cpu) const {
    return per_cpu_[static_cast<size_t>(cpu)];
  }
  // Index of the highest domain with SD_SHARE_PKG_RESOURCES (sd_llc), or -1.
  [[nodiscard]] int llc_level(int cpu) const { return llc_level_[static_cast<size_t>(cpu)]; }
  [[nodiscard]] int llc_size(int cpu) const { return llc_size_[static_cast<size_t>(cpu)]; }
  [[nodiscard]] int llc_id(int cpu) const { return llc_id_[static_cast<size_t>(cpu)]; }
  [[nodiscard]] bool cpus_share_cache(int a, int b) const { return llc_id(a) == llc_id(b); }
  // Lowest level of `cpu` whose span contains `other` (-1 if none).
  [[nodiscard]] int level_spanning(int cpu, int other) const;
  [[nodiscard]] std::vector<std::string> level_names() const;
  // How many distinct sched_group_capacity structs the groups share.
  [[nodiscard]] int nr_sgc() const { return nr_sgc_; }

 private:
  std::vector<std::vector<SchedDomain>> per_cpu_;
  int nr_sgc_ = 0;
  std::vector<int> llc_level_, llc_size_, llc_id_;
};

}  // namespace kernel
