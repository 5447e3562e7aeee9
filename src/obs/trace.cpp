#include "obs/trace.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "kernel/task.hpp"

namespace obs {

namespace {
std::string swapper(int cpu) { return "swapper/" + std::to_string(cpu); }
const char* state_letter(PrevState st) {
  switch (st) {
    case PrevState::Runnable: return "R";
    case PrevState::Preempted: return "R+";
    case PrevState::Sleeping: return "S";
    case PrevState::Dead: return "Z";
  }
  return "R";
}
}  // namespace

FtraceWriter::FtraceWriter(int nr_cpus, bool stat_runtime)
    : current_(static_cast<size_t>(nr_cpus), "<idle>"),
      current_pid_(static_cast<size_t>(nr_cpus), 0),
      nr_cpus_(nr_cpus),
      stat_runtime_(stat_runtime) {}

void FtraceWriter::line(int64_t t, int cpu, const std::string& event, const std::string& args) {
  char head[96];
  const std::string& comm = current_[static_cast<size_t>(cpu)];
  // "%16s-%-7d [%03d] d..2 %5llu.%09llu: "
  std::snprintf(head, sizeof head, "%16s-%-7d [%03d] d..2 %5lld.%09lld: ", comm.c_str(),
                current_pid_[static_cast<size_t>(cpu)], cpu, static_cast<long long>(t / 1000000000),
                static_cast<long long>(t % 1000000000));
  body_ += head;
  body_ += event;
  body_ += ": ";
  body_ += args;
  body_ += '\n';
  ++nlines_;
}

void FtraceWriter::on_switch(int64_t t, int cpu, const kernel::Task* prev, PrevState st,
                             const kernel::Task* next) {
  const std::string pc = prev ? prev->comm : swapper(cpu);
  const int pp = prev ? prev->pid : 0;
  const std::string nc = next ? next->comm : swapper(cpu);
  const int np = next ? next->pid : 0;
  line(t, cpu, "sched_switch",
       "prev_comm=" + pc + " prev_pid=" + std::to_string(pp) + " prev_prio=120 prev_state=" +
           (prev ? state_letter(st) : "R") + " ==> next_comm=" + nc + " next_pid=" + std::to_string(np) +
           " next_prio=120");
  current_[static_cast<size_t>(cpu)] = next ? next->comm : "<idle>";
  current_pid_[static_cast<size_t>(cpu)] = np;
}

// include/trace/events/sched.h (4.0 and 6.1): "comm=%s pid=%d runtime=%Lu [ns]
// vruntime=%Lu [ns]". Written on the runqueue's CPU (the kernel's line is
// the CPU running update_curr(), which for a remote enqueue is the waker's).
void FtraceWriter::on_stat_runtime(int64_t t, int cpu, const kernel::Task* p, int64_t runtime_ns, uint64_t vruntime) {
  line(t, cpu, "sched_stat_runtime",
       "comm=" + p->comm + " pid=" + std::to_string(p->pid) + " runtime=" + std::to_string(runtime_ns) +
           " [ns] vruntime=" + std::to_string(vruntime) + " [ns]");
}

void FtraceWriter::on_waking(int64_t t, int cpu, const kernel::Task* p, int target_cpu) {
  char tc[16];
  std::snprintf(tc, sizeof tc, "%03d", target_cpu);
  line(t, cpu, "sched_waking",
       "comm=" + p->comm + " pid=" + std::to_string(p->pid) + " prio=120 target_cpu=" + tc);
}

void FtraceWriter::on_wakeup(int64_t t, int cpu, const kernel::Task* p, int target_cpu, bool is_new) {
  char tc[16];
  std::snprintf(tc, sizeof tc, "%03d", target_cpu);
  line(t, cpu, is_new ? "sched_wakeup_new" : "sched_wakeup",
       "comm=" + p->comm + " pid=" + std::to_string(p->pid) + " prio=120 target_cpu=" + tc);
}

void FtraceWriter::on_migrate(int64_t t, int cpu, const kernel::Task* p, int from, int to, int, const char*) {
  line(t, cpu, "sched_migrate_task",
       "comm=" + p->comm + " pid=" + std::to_string(p->pid) + " prio=120 orig_cpu=" + std::to_string(from) +
           " dest_cpu=" + std::to_string(to));
}

void FtraceWriter::on_fork(int64_t t, int cpu, const kernel::Task* parent, const kernel::Task* child) {
  line(t, cpu, "sched_process_fork",
       "comm=" + parent->comm + " pid=" + std::to_string(parent->pid) + " child_comm=" + child->comm +
           " child_pid=" + std::to_string(child->pid));
}

void FtraceWriter::on_exit(int64_t t, int cpu, const kernel::Task* p) {
  line(t, cpu, "sched_process_exit", "comm=" + p->comm + " pid=" + std::to_string(p->pid) + " prio=120");
}

void FtraceWriter::on_idle(int64_t t, int cpu, int state) {
  const std::string s = state < 0 ? "4294967295" : std::to_string(state);
  line(t, cpu, "cpu_idle", "state=" + s + " cpu_id=" + std::to_string(cpu));
}

// Only the IPI that was not sent has a tracepoint (resched_curr(),
// ttwu_queue_remote(), 3.16+).
void FtraceWriter::on_ipi(int64_t t, int cpu, int target, bool sent) {
  if (!sent) line(t, cpu, "sched_wake_idle_without_ipi", "cpu=" + std::to_string(target));
}

std::string FtraceWriter::text() const {
  std::string h;
  h += "# tracer: nop\n#\n";
  h += "# entries-in-buffer/entries-written: " + std::to_string(nlines_) + "/" + std::to_string(nlines_) +
       "   #P:" + std::to_string(nr_cpus_) + "\n#\n";
  h += "#                              _-----=> irqs-off\n";
  h += "#                             / _----=> need-resched\n";
  h += "#                            | / _---=> hardirq/softirq\n";
  h += "#                            || / _--=> preempt-depth\n";
  h += "#                            ||| /     delay\n";
  h += "#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n";
  h += "#              | |       |   ||||       |         |\n";
  return h + body_;
}

void FtraceWriter::write(const std::string& path) const {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write trace file '" + path + "'");
  f << text();
  if (!f) throw std::runtime_error("error writing trace file '" + path + "'");
}

}  // namespace obs
