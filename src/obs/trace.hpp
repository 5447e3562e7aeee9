// ftrace text writer (the `cat trace` format), readable by Perfetto, LISA and
// trace-cmd users: sched_switch, sched_waking, sched_wakeup(_new),
// sched_migrate_task, sched_process_fork/exit, cpu_idle and
// sched_wake_idle_without_ipi, with
// nanosecond timestamps.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "obs/observer.hpp"

namespace obs {

class FtraceWriter final : public Observer {
 public:
  // stat_runtime: also write sched_stat_runtime (off by default: a line at
  // every update_curr(), which the golden logs leave out).
  explicit FtraceWriter(int nr_cpus, bool stat_runtime = false);
  void on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState st,
                 const kernel::Task* next) override;
  void on_waking(int64_t t, int cpu, const kernel::Task* p, int target_cpu) override;
  void on_wakeup(int64_t t, int cpu, const kernel::Task* p, int target_cpu, bool is_new) override;
  void on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int level,
                  const char* cause) override;
  void on_fork(int64_t t, int cpu, const kernel::Task* parent, const kernel::Task* child) override;
  void on_exit(int64_t t, int cpu, const kernel::Task* p) override;
  void on_idle(int64_t t, int cpu, int state) override;
  void on_ipi(int64_t t, int cpu, int target, bool sent) override;
  [[nodiscard]] bool wants_stat_runtime() const override { return stat_runtime_; }
  void on_stat_runtime(int64_t t, int cpu, const kernel::Task* p, int64_t runtime_ns, uint64_t vruntime) override;
  // The whole file: header plus every line so far.
  [[nodiscard]] std::string text() const;
  void write(const std::string& path) const;
  [[nodiscard]] size_t lines() const { return nlines_; }

 private:
  void line(int64_t t, int cpu, const std::string& event, const std::string& args);
  std::vector<std::string> current_;  // "comm-pid" running on each CPU
  std::vector<int> current_pid_;
  std::string body_;
  size_t nlines_ = 0;
  int nr_cpus_;
  bool stat_runtime_;
};

}  // namespace obs
