// Counters per interval of simulated time, as `perf stat -I <ms>` prints
// them: a benchmark that changes regime part-way (a messaging run that stops
// batching, a pipe pair that starts bouncing between sockets) shows where it
// happened, which a whole-run summary averages away. Intervals are [start,
// end) from the start barrier; a line is written when time first reaches an
// interval's end (Kernel::set_time_listener()), before the events at that
// time run, so observing adds no events. Quiet intervals print zeros.
// On an SMT machine each line ends with where the tasks ran in it: the
// wakeups between one core's two threads, the CPU time busy, and the part
// of it run beside a busy sibling (so at the shared rate) -- a pipe pair's
// layout, which can settle part-way through a run. Each line also gives the
// interval's migrations by cause, with the moves onto and off the core of
// the task each mover last woke: what gathered a pair or split it.
#pragma once
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "obs/observer.hpp"

namespace kernel {
class Kernel;
}

namespace obs {

class IntervalStats final : public Observer {
 public:
  // interval_ns must be positive.
  IntervalStats(const kernel::Kernel& k, int64_t interval_ns, std::ostream& out);
  // Counting starts here (a benchmark's start barrier); events before it are
  // ignored.
  void start();
  // Time has reached t: write the lines of the intervals that ended by t.
  void advance_to(int64_t t);
  void on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState st,
                 const kernel::Task* next) override;
  void on_wakeup_placement(int64_t t, int waker_cpu, int target_cpu, bool local, int level) override;
  void on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int level,
                  const char* cause) override;
  void on_idle(int64_t t, int cpu, int state) override;
  // The run ended at t: the lines still due, then the last, partial one
  // (which includes the events at t).
  void finish(int64_t t);

 private:
  struct Counts {
    int64_t switches = 0, involuntary = 0, wakeups = 0, remote_wakeups = 0, migrations = 0, idle_entries = 0;
    int64_t smt_pair_wakeups = 0;
    // The workload's migrations by cause: moves, and of them onto and off
    // the core of the task it last woke (StatsCollector's counts, per
    // interval; kernel threads are left out, as there).
    struct Moves {
      int64_t moves = 0, joined = 0, left = 0;
    };
    std::map<std::string, Moves> by_cause;
    std::map<std::string, int64_t> sleeps;
    bool empty() const {
      return switches + wakeups + migrations + idle_entries == 0 && sleeps.empty();
    }
  };
  [[nodiscard]] bool started() const { return next_end_ns_ >= 0; }
  void print(int64_t end_ns);
  const kernel::Kernel& k_;
  int64_t interval_ns_;
  std::ostream& out_;
  int64_t start_ns_ = 0;
  int64_t next_end_ns_ = -1;  // -1 until start()
  Counts counts_;
  // The policy's own counters (placements, balancing failures...) when the
  // last line was written, so each line shows what changed in its interval.
  std::map<std::string, int64_t> policy_at_last_line_;
  bool header_printed_ = false;
  bool smt_ = false;  // the machine has SMT siblings: lines end with the layout
  // hw::Machine's running totals when the last line was written.
  int64_t busy_at_last_line_ = 0, smt_shared_at_last_line_ = 0;
};

}  // namespace obs
