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

}  // namespace workload
