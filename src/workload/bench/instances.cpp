// The benchmark registry, and the launcher of parallel instances: the shell
// loop `for i in 1..N: perf bench ... &; wait` that seed 000 used to run
// NR_CPUS/2 pipe instances at once. A StartLayout makes the launch a chosen
// one: `numactl --cpunodebind=K perf bench ... &` per instance, then, once
// every instance has started, `taskset -p <all CPUs>` on each of the
// benchmark's tasks, so the run goes on from a known socket layout with the
// scheduler free again. That is a counterfactual for a study, not what any
// seed ran: it answers "what does this variant do if the launch leaves this
// layout?".
#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>

#include "workload/bench/bench.hpp"

namespace workload {

using kernel::Proc;

std::unique_ptr<BenchRun> make_messaging(const std::vector<std::string>& args);
std::unique_ptr<BenchRun> make_hackbench(const std::vector<std::string>& args);
std::unique_ptr<BenchRun> make_sched_pipe(const std::vector<std::string>& args);
std::unique_ptr<BenchRun> make_schbench(const std::vector<std::string>& args);
std::unique_ptr<BenchRun> make_ipc_bench_latency(const std::string& name, const std::vector<std::string>& args);

std::unique_ptr<BenchRun> make_bench(const std::string& name, const std::vector<std::string>& args) {
  if (name == "messaging") return make_messaging(args);
  if (name == "hackbench") return make_hackbench(args);
  if (name == "pipe") return make_sched_pipe(args);
  if (name == "schbench") return make_schbench(args);
  if (name == "unix_lat" || name == "pipe_lat") return make_ipc_bench_latency(name, args);
  throw std::invalid_argument("unknown benchmark '" + name +
                              "' (known: sched messaging, sched pipe, hackbench, schbench, unix_lat, pipe_lat)");
}

std::vector<std::string> bench_names() { return {"messaging", "pipe", "hackbench", "schbench", "unix_lat", "pipe_lat"}; }

StartLayout StartLayout::parse(const std::string& spec, int64_t unpin_after_ms) {
  if (unpin_after_ms < 0 || unpin_after_ms > 3600000)
    throw std::invalid_argument("unpin-after must be 0..3600000 ms");
  StartLayout layout;
  layout.unpin_after_ns = unpin_after_ms * 1000000;
  if (spec.empty()) return layout;
  size_t at = 0;
  while (at <= spec.size()) {
    const size_t slash = std::min(spec.find('/', at), spec.size());
    const std::string part = spec.substr(at, slash - at);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 4)
      throw std::invalid_argument("start layout must look like 10/6 (instances started per node), got '" + spec + "'");
    layout.per_node.push_back(std::stoi(part));
    at = slash + 1;
  }
  return layout;
}

std::string StartLayout::describe() const {
  std::string s;
  for (size_t i = 0; i < per_node.size(); ++i) s += (i ? "/" : "") + std::to_string(per_node[i]);
  return s + " by node, unpinned " + std::to_string(unpin_after_ns / 1000000) + " ms after the last launch";
}

Instances::Instances(const std::string& name, const std::vector<std::string>& args, int count, StartLayout layout)
    : layout_(std::move(layout)) {
  if (count < 1 || count > 4096) throw std::invalid_argument("--instances must be 1..4096");
  if (!layout_.per_node.empty()) {
    int sum = 0;
    for (int n : layout_.per_node) sum += n;
    if (sum != count)
      throw std::invalid_argument("start layout " + layout_.describe() + " starts " + std::to_string(sum) +
                                  " instances, not --instances " + std::to_string(count));
  }
  for (int i = 0; i < count; ++i) runs_.push_back(make_bench(name, args));
}

namespace {
// What the shell's child does for `[numactl --cpunodebind=K] perf bench ... &`:
// numactl sets the CPU mask (sched_setaffinity()) and execs; execve() perf
// (where sched_exec() may move it, inside the mask), then run the benchmark.
// numactl's own execve() is folded into perf's: one exec, not two. perf is a
// large dynamically linked binary: before main() gets to the benchmark
// (perf bench sched pipe's pipe() and fork()), the dynamic loader maps and
// relocates its libraries and perf sets itself up, all on the CPU
// sched_exec() chose (perf_startup, charged as user work). exec_base is a
// small binary's execve(); the other benchmarks' binaries are small.
kernel::Co<void> exec_perf(Proc& p, kernel::Program bench, int node, bool perf) {
  if (node >= 0) co_await p.sched_setaffinity(p.kernel().machine().topo().node_mask(node));
  co_await p.exec();
  if (perf) co_await p.user(p.costs().perf_startup);
  co_await bench(p);
}

// The launcher: `for i in 1..N: perf bench ... &` then `wait`; with a start
// layout, `sleep` and `taskset -p` every task of the benchmark before the wait.
kernel::Co<void> launcher(Proc& p, std::vector<kernel::Program> programs, std::string comm,
                          std::vector<int> node_of_instance, int64_t unpin_after_ns) {
  for (size_t i = 0; i < programs.size(); ++i) {
    const int node = node_of_instance.empty() ? -1 : node_of_instance[i];
    kernel::Program child = [bench = programs[i], node, perf = comm == "perf"](Proc& c) {
      return exec_perf(c, bench, node, perf);
    };
    co_await p.fork(comm.c_str(), child, false);
  }
  if (!node_of_instance.empty()) {
    co_await p.nanosleep(unpin_after_ns);
    const hw::CpuMask all = p.kernel().machine().topo().all();
    // By index: a task forked while the shell is in one of its system calls
    // (possibly from a parent not yet freed, so pinned) is appended to the
    // kernel's list, which may reallocate, and is freed in its turn.
    for (size_t i = 0; i < p.kernel().all_tasks().size(); ++i) {
      kernel::Task* t = p.kernel().all_tasks()[i];
      // The benchmark's tasks: a per-CPU kernel thread refuses a new mask
      // (PF_NO_SETAFFINITY), and the shell does not touch the others.
      if (t == p.task() || t->kthread) continue;
      co_await p.syscall(p.costs().syscall_entry);  // sched_setaffinity(pid, all)
      if (t->state != kernel::TaskState::Dead) p.kernel().set_cpus_allowed_ptr(t, all);
    }
  }
  for (size_t i = 0; i < programs.size(); ++i) co_await p.wait_child();
}
}  // namespace

void Instances::start(kernel::Kernel& k, std::function<void()> on_start) {
  auto once = std::make_shared<std::function<void()>>(std::move(on_start));
  auto first = [once] {
    if (*once) (*once)();
    *once = nullptr;
  };
  std::vector<int> node_of_instance;
  const int nodes = k.machine().topo().sockets();
  if (!layout_.per_node.empty() && k.config().preset().policy == kernel::PolicyKind::Linux24)
    throw std::invalid_argument("--start-layout needs sched_setaffinity(), which Linux gained in 2.5.8");
  for (size_t node = 0; node < layout_.per_node.size(); ++node) {
    if (static_cast<int>(node) >= nodes && layout_.per_node[node] > 0)
      throw std::invalid_argument("start layout " + layout_.describe() + " names node " + std::to_string(node) +
                                  ", but the machine has " + std::to_string(nodes));
    node_of_instance.insert(node_of_instance.end(), static_cast<size_t>(layout_.per_node[node]),
                            static_cast<int>(node));
  }
  if (runs_.size() == 1 && node_of_instance.empty()) {
    k.spawn(runs_[0]->comm(), runs_[0]->program(first), 0);
    return;
  }
  std::vector<kernel::Program> programs;
  for (auto& r : runs_) programs.push_back(r->program(first));
  const std::string comm = runs_.front()->comm();
  const int64_t unpin_after = layout_.unpin_after_ns;
  k.spawn("sh", [programs, comm, node_of_instance, unpin_after](Proc& p) {
    return launcher(p, programs, comm, node_of_instance, unpin_after);
  }, 0);
}

BenchOutput Instances::finish() const {
  if (runs_.size() == 1) return runs_[0]->finish();
  BenchOutput out;
  std::map<std::string, std::vector<double>> values;
  std::vector<Metric> order;
  for (size_t i = 0; i < runs_.size(); ++i) {
    BenchOutput o = runs_[i]->finish();
    out.text += "# instance " + std::to_string(i + 1) + "\n" + o.text;
    for (const auto& m : o.metrics) {
      if (!values.count(m.name)) order.push_back(m);
      values[m.name].push_back(m.value);
    }
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "\n# %zu instances in parallel\n", runs_.size());
  out.text += buf;
  for (const auto& m : order) {
    const auto& v = values[m.name];
    double sum = 0;
    for (double x : v) sum += x;
    Metric mean = m;
    mean.value = v.size() == runs_.size() ? sum / static_cast<double>(v.size()) : 0;
    out.metrics.push_back(mean);
    std::snprintf(buf, sizeof buf, "# mean %s: %.6g %s\n", m.name.c_str(), mean.value, m.unit.c_str());
    out.text += buf;
    if (m.name == "ops_per_sec") {
      out.metrics.push_back({"ops_per_sec_total", m.unit, true, sum});
      std::snprintf(buf, sizeof buf, "# total %s: %.6g %s\n", m.name.c_str(), sum, m.unit.c_str());
      out.text += buf;
    }
  }
  return out;
}

std::string Instances::command() const {
  std::string c = runs_.front()->command();
  if (runs_.size() > 1) c += " (x" + std::to_string(runs_.size()) + " instances)";
  if (!layout_.per_node.empty()) c += " (started " + layout_.describe() + ")";
  return c;
}

}  // namespace workload
