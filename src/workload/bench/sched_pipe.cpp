// perf bench sched pipe (tools/perf/bench/sched-pipe.c, the 2015 version):
// two tasks ping-pong a 4-byte token through two pipes; one op is a full
// round trip. The clock starts before the fork and stops after waitpid().
#include <cstdio>
#include <map>
#include <stdexcept>

#include "workload/bench/args.hpp"
#include "workload/bench/bench.hpp"
#include "workload/ipc/ipc.hpp"

namespace workload {
namespace {

constexpr int64_t LOOPS_DEFAULT = 1000000;

struct ThreadData {
  int nr;
  Fd pipe_read;
  Fd pipe_write;
  int64_t loops;
};

Co<void> worker_thread(Proc& p, ThreadData* td) {
  for (int64_t i = 0; i < td->loops; i++) {
    if (!td->nr) {
      co_await sys_read(p, td->pipe_read, 4);
      co_await sys_write(p, td->pipe_write, 4);
    } else {
      co_await sys_write(p, td->pipe_write, 4);
      co_await sys_read(p, td->pipe_read, 4);
    }
  }
}

struct Shared {
  int64_t loops = LOOPS_DEFAULT;
  bool threaded = false;
  ThreadData threads[2];
  std::function<void()> on_start;
  int64_t start_ns = -1, stop_ns = -1;
};

Co<void> bench_sched_pipe(Proc& p, std::shared_ptr<Shared> sh) {
  Fd pipe_1[2], pipe_2[2];
  make_pipe(p.config(), pipe_1);
  make_pipe(p.config(), pipe_2);
  sh->start_ns = p.now();
  if (sh->on_start) sh->on_start();
  for (int t = 0; t < 2; t++) {
    ThreadData& td = sh->threads[t];
    td.nr = t;
    td.loops = sh->loops;
    if (t == 0) {
      td.pipe_read = pipe_1[0];
      td.pipe_write = pipe_2[1];
    } else {
      td.pipe_write = pipe_1[1];
      td.pipe_read = pipe_2[0];
    }
  }
  ThreadData* t0 = &sh->threads[0];
  ThreadData* t1 = &sh->threads[1];
  if (sh->threaded) {
    kernel::Program w0 = [t0](Proc& c) { return worker_thread(c, t0); };
    kernel::Program w1 = [t1](Proc& c) { return worker_thread(c, t1); };
    co_await p.fork("sched-pipe", w0, true);
    co_await p.fork("sched-pipe", w1, true);
    co_await p.wait_child();
    co_await p.wait_child();
  } else {
    kernel::Program w0 = [t0](Proc& c) { return worker_thread(c, t0); };
    co_await p.fork("sched-pipe", w0, false);
    co_await worker_thread(p, t1);
    co_await p.wait_child();
  }
  sh->stop_ns = p.now();
}

class PipeRun final : public BenchRun {
 public:
  PipeRun(int64_t loops, bool threaded) {
    sh_->loops = loops;
    sh_->threaded = threaded;
  }
  kernel::Program program(std::function<void()> on_start) override {
    sh_->on_start = std::move(on_start);
    auto sh = sh_;
    return [sh](Proc& p) { return bench_sched_pipe(p, sh); };
  }
  BenchOutput finish() const override {
    BenchOutput out;
    char buf[256];
    out.text += "# Running 'sched/pipe' benchmark:\n";
    std::snprintf(buf, sizeof buf, "# Executed %lld pipe operations between two %s\n\n",
                  static_cast<long long>(sh_->loops), sh_->threaded ? "threads" : "processes");
    out.text += buf;
    if (sh_->stop_ns < 0) return out;
    const int64_t result_usec = (sh_->stop_ns - sh_->start_ns) / 1000;
    std::snprintf(buf, sizeof buf, " %14s: %lld.%03lld [sec]\n\n", "Total time",
                  static_cast<long long>(result_usec / 1000000),
                  static_cast<long long>(result_usec % 1000000 / 1000));
    out.text += buf;
    const double usecs_per_op = static_cast<double>(result_usec) / static_cast<double>(sh_->loops);
    const int ops_per_sec = result_usec > 0
                                ? static_cast<int>(static_cast<double>(sh_->loops) /
                                                   (static_cast<double>(result_usec) / 1000000.0))
                                : 0;
    std::snprintf(buf, sizeof buf, " %14lf usecs/op\n", usecs_per_op);
    out.text += buf;
    std::snprintf(buf, sizeof buf, " %14d ops/sec\n", ops_per_sec);
    out.text += buf;
    out.metrics.push_back({"ops_per_sec", "ops/s", true, static_cast<double>(ops_per_sec)});
    out.metrics.push_back({"usecs_per_op", "us", false, usecs_per_op});
    out.metrics.push_back({"total_time", "s", false, static_cast<double>(result_usec) / 1e6});
    return out;
  }
  std::string name() const override { return "sched/pipe"; }
  std::string command() const override {
    return "perf bench sched pipe -l " + std::to_string(sh_->loops) + (sh_->threaded ? " -T" : "");
  }

 private:
  std::shared_ptr<Shared> sh_ = std::make_shared<Shared>();
};

}  // namespace

std::unique_ptr<BenchRun> make_sched_pipe(const std::vector<std::string>& args) {
  const auto v = parse_bench_args("sched pipe",
                                  {{"-l", "--loop", true, 1, 1000000000}, {"-T", "--threaded", false}},
                                  args);
  return std::make_unique<PipeRun>(v.count("--loop") ? v.at("--loop") : LOOPS_DEFAULT,
                                   v.count("--threaded") != 0);
}

std::unique_ptr<BenchRun> make_messaging(const std::vector<std::string>& args);
std::unique_ptr<BenchRun> make_schbench(const std::vector<std::string>& args);

std::unique_ptr<BenchRun> make_bench(const std::string& name, const std::vector<std::string>& args) {
  if (name == "messaging") return make_messaging(args);
  if (name == "pipe") return make_sched_pipe(args);
  if (name == "schbench") return make_schbench(args);
  throw std::invalid_argument("unknown benchmark '" + name + "' (known: sched messaging, sched pipe, schbench)");
}

std::vector<std::string> bench_names() { return {"messaging", "pipe", "schbench"}; }

}  // namespace workload

namespace workload {

Instances::Instances(const std::string& name, const std::vector<std::string>& args, int count) {
  if (count < 1 || count > 4096) throw std::invalid_argument("--instances must be 1..4096");
  for (int i = 0; i < count; ++i) runs_.push_back(make_bench(name, args));
}

namespace {
// What the shell's child does for `perf bench ... &`: execve() perf (where
// sched_exec() may move it), then run the benchmark.
kernel::Co<void> exec_perf(Proc& p, kernel::Program bench) {
  co_await p.exec();
  co_await bench(p);
}

// The launcher: `for i in 1..N: perf bench ... &` then `wait`.
kernel::Co<void> launcher(Proc& p, std::vector<kernel::Program> programs, std::string comm) {
  for (auto& bench : programs) {
    kernel::Program child = [bench](Proc& c) { return exec_perf(c, bench); };
    co_await p.fork(comm.c_str(), child, false);
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
  if (runs_.size() == 1) {
    k.spawn(runs_[0]->comm(), runs_[0]->program(first), 0);
    return;
  }
  std::vector<kernel::Program> programs;
  for (auto& r : runs_) programs.push_back(r->program(first));
  const std::string comm = runs_.front()->comm();
  k.spawn("sh", [programs, comm](Proc& p) { return launcher(p, programs, comm); }, 0);
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
  return c;
}

}  // namespace workload
