// Counters per interval of simulated time, as `perf stat -I <ms>` prints
// them: a benchmark that changes regime part-way (a messaging run that stops
// batching, a pipe pair that starts bouncing between sockets) shows where it
// happened, which a whole-run summary averages away. Lines are written when
// an event crosses an interval boundary; quiet intervals print zeros. Times
// are since the start barrier.
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
  IntervalStats(const kernel::Kernel& k, int64_t interval_ns, std::ostream& out);
  // Counting starts here (a benchmark's start barrier); events before it are ignored.
  void start();
  void on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState st,
                 const kernel::Task* next) override;
  void on_wakeup_placement(int64_t t, int waker_cpu, int target_cpu, bool local) override;
  void on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int level) override;
  void on_idle(int64_t t, int cpu, int state) override;
  // Prints the last, partial interval.
  void finish(int64_t t);

 private:
  struct Counts {
    int64_t switches = 0, involuntary = 0, wakeups = 0, remote_wakeups = 0, migrations = 0, idle_entries = 0;
    std::map<std::string, int64_t> sleeps;
  };
  void advance(int64_t t);
  void print(int64_t end_ns);
  const kernel::Kernel& k_;
  int64_t interval_ns_;
  std::ostream& out_;
  int64_t next_ns_ = -1;  // -1 until start()
  Counts c_;
  // The policy's own counters (placements, balancing failures...) at the
  // last boundary, so each line shows what changed within its interval.
  std::vector<std::pair<std::string, int64_t>> policy_at_start_;
  int64_t start_ns_ = 0;
  bool header_printed_ = false;
};

}  // namespace obs
