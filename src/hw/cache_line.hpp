// A cache line of kernel data, for the switches that charge coherence
// traffic line by line (unix_sock_lines, pipe_lines, ttwu_lines): the CPU
// that wrote it last and the CPUs that have read it since (MESI's modified
// and shared copies). A load on a CPU without a copy costs a transfer from
// the nearest copy; a store or atomic costs the farthest other copy, which it
// fetches or invalidates, and leaves the writer the only holder. The costs
// are the profile's line_transfer_* figures (hw::Machine::line_transfer()).
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

#include "hw/cpumask.hpp"
#include "hw/machine.hpp"

namespace hw {

struct CacheLine {
  int writer = -1;  // -1: not written yet, costs nothing
  CpuMask sharers;
  // Each returns what the access costs and counts the line it fetches, if
  // any (Machine::count_lines_moved()).
  // The common case, a line already held by the accessing CPU, is inline:
  // the paths touch tens of lines per operation.
  int64_t read(const Machine& m, int cpu) {
    if (writer < 0 || writer == cpu || sharers.test(cpu)) return 0;
    return read_from_another_cpu(m, cpu);
  }
  int64_t write(const Machine& m, int cpu) {
    if (writer == cpu && sharers.empty()) return 0;
    return write_slow(m, cpu);
  }

 private:
  int64_t read_from_another_cpu(const Machine& m, int cpu);
  int64_t write_slow(const Machine& m, int cpu);
  [[nodiscard]] std::pair<int, int64_t> nearest_copy(const Machine& m, int cpu) const;
};

// The costing rule the three line switches share: the stall of one CPU's path
// through kernel code on x86-TSO, where v4.0 runs. A load the path depends
// on stalls for its transfer (independent loads issued together overlap:
// sched_lines' steps). A plain store retires into the store buffer: it takes
// the line at once, so later readers pay for it, and its transfer is waited
// for only by the next locked instruction (a lock, an atomic
// read-modify-write, xchg) or full barrier (smp_mb()), which drains the
// buffer, whose stores overlap: the dearest counts. A path that returns to
// user mode with stores still buffered does not wait for them. So a load and
// a later plain store to one line cost the load and, when a locked
// instruction follows, the store's invalidation of the copy the load left.
// Hardware that merges a load and a store to one line would pay less.
struct LineStalls {
  int64_t stall = 0;     // ns the path has waited so far
  int64_t buffered = 0;  // the dearest transfer of the stores not yet drained
  void load(int64_t transfer) { stall += transfer; }
  void store(int64_t transfer) { buffered = std::max(buffered, transfer); }
  // A locked instruction or a full barrier, `transfer` being its own line's.
  void locked(int64_t transfer) {
    stall += std::max(transfer, buffered);
    buffered = 0;
  }
  int64_t take_stall() { return std::exchange(stall, 0); }
};

}  // namespace hw
