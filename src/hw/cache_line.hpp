// A cache line of kernel data, for the what-ifs that charge coherence
// traffic line by line (unix_sock_lines, pipe_lines, ttwu_lines): the CPU
// that wrote it last and the CPUs that have read it since (MESI's modified
// and shared copies). A load on a CPU without a copy costs a transfer from
// the nearest copy; a store or atomic costs the farthest other copy, which it
// fetches or invalidates, and leaves the writer the only holder. The costs
// are the profile's line_transfer_* figures (hw::Machine::line_transfer()).
#pragma once
#include <cstdint>

#include "hw/cpumask.hpp"
#include "hw/machine.hpp"

namespace hw {

struct CacheLine {
  int writer = -1;  // -1: not written yet, costs nothing
  CpuMask sharers;
  int64_t read(const Machine& m, int cpu);
  int64_t write(const Machine& m, int cpu);
};

}  // namespace hw
