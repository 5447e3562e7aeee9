// perf bench sched messaging (tools/perf/bench/sched-messaging.c), a port of
// hackbench: groups of 20 senders each writing 100-byte messages round-robin
// to the group's 20 receivers, over socketpairs (or pipes with -p), as
// processes (or threads with -t). Everyone waits at a ready/poll barrier;
// the clock runs from the GO byte until every worker has been reaped.
// rt-tests' hackbench (src/hackbench/hackbench.c) is the same program with
// the group's size (-f/--fds) and the message's (-s/--datasize) as options
// and its own output; `schedlab hackbench` runs it. Not modelled: its
// -F/--fifo (main as SCHED_FIFO), and the fds each process closes.
#include <cstdio>
#include <vector>

#include "workload/bench/args.hpp"
#include "workload/bench/bench.hpp"
#include "workload/ipc/ipc.hpp"

namespace workload {
namespace {

constexpr int DATASIZE = 100;
constexpr int NUM_FDS = 20;  // hard-coded num_fds

struct Params {
  int64_t num_groups = 10, loops = 100;
  bool use_pipes = false, thread_mode = false;
  unsigned num_fds = NUM_FDS;
  int64_t datasize = DATASIZE;
  bool hackbench = false;  // rt-tests' front end: its options and output
};

struct SenderContext {
  unsigned num_fds;
  Fd ready_out;
  Fd wakefd;
  std::vector<Fd> out_fds;
  int64_t loops;
  int64_t datasize;
};

struct ReceiverContext {
  unsigned long num_packets;
  Fd in_fds[2];
  Fd ready_out;
  Fd wakefd;
  int64_t datasize;
};

void fdpair(const kernel::KernelConfig& cfg, bool use_pipes, Fd fds[2]) {
  if (use_pipes)
    make_pipe(cfg, fds);
  else
    make_socketpair(cfg, fds);
}

// Block until we're ready to go.
Co<void> ready(Proc& p, Fd& ready_out, Fd& wakefd) {
  // Tell them we're ready.
  co_await sys_write(p, ready_out, 1);
  // Wait for "GO" signal.
  co_await sys_poll_in(p, wakefd);
}

// Sender sprays nr_loops messages down each file descriptor.
Co<void> sender(Proc& p, std::shared_ptr<SenderContext> ctx) {
  p.task()->role = "sender";  // the statistics' label, not perf's code
  co_await ready(p, ctx->ready_out, ctx->wakefd);
  // Now pump to every receiver.
  for (int64_t i = 0; i < ctx->loops; i++) {
    for (unsigned j = 0; j < ctx->num_fds; j++) {
      int64_t done = 0;
      while (done < ctx->datasize) done += co_await sys_write(p, ctx->out_fds[j], ctx->datasize - done);
    }
  }
}

// One receiver per fd.
Co<void> receiver(Proc& p, std::shared_ptr<ReceiverContext> ctx) {
  p.task()->role = "receiver";  // the statistics' label, not perf's code
  co_await ready(p, ctx->ready_out, ctx->wakefd);
  // Receive them all.
  for (unsigned long i = 0; i < ctx->num_packets; i++) {
    int64_t done = 0;
    while (done < ctx->datasize) done += co_await sys_read(p, ctx->in_fds[0], ctx->datasize - done);
  }
}

struct Shared {
  Params params;
  std::function<void()> on_start;
  int64_t start_ns = -1, stop_ns = -1;
};

// Create the group's receivers and senders.
Co<unsigned> group(Proc& p, Shared& sh, unsigned num_fds, Fd& ready_out, Fd& wakefd) {
  const auto& cfg = p.config();
  auto snd_ctx = std::make_shared<SenderContext>();
  snd_ctx->out_fds.resize(num_fds);
  for (unsigned i = 0; i < num_fds; i++) {
    Fd fds[2];
    auto ctx = std::make_shared<ReceiverContext>();
    fdpair(cfg, sh.params.use_pipes, fds);
    ctx->num_packets = static_cast<unsigned long>(num_fds * sh.params.loops);
    ctx->in_fds[0] = fds[0];
    ctx->in_fds[1] = fds[1];
    ctx->ready_out = ready_out;
    ctx->wakefd = wakefd;
    ctx->datasize = sh.params.datasize;
    kernel::Program recv = [ctx](Proc& c) { return receiver(c, ctx); };
    co_await p.fork("sched-messaging", recv, sh.params.thread_mode);
    snd_ctx->out_fds[i] = fds[1];
  }
  // Now we have all the fds, fork the senders.
  snd_ctx->num_fds = num_fds;
  snd_ctx->ready_out = ready_out;
  snd_ctx->wakefd = wakefd;
  snd_ctx->loops = sh.params.loops;
  snd_ctx->datasize = sh.params.datasize;
  kernel::Program send = [snd_ctx](Proc& c) { return sender(c, snd_ctx); };
  for (unsigned i = 0; i < num_fds; i++) co_await p.fork("sched-messaging", send, sh.params.thread_mode);
  co_return num_fds * 2;
}

Co<void> bench_sched_messaging(Proc& p, std::shared_ptr<Shared> sh) {
  Fd readyfds[2], wakefds[2];
  fdpair(p.config(), sh->params.use_pipes, readyfds);
  fdpair(p.config(), sh->params.use_pipes, wakefds);
  unsigned total_children = 0;
  for (int64_t i = 0; i < sh->params.num_groups; i++) {
    const unsigned children = co_await group(p, *sh, sh->params.num_fds, readyfds[1], wakefds[0]);
    total_children += children;
  }
  // Wait for everyone to be ready.
  for (unsigned i = 0; i < total_children; i++) {
    int64_t got = 0;
    while (got < 1) got += co_await sys_read(p, readyfds[0], 1);
  }
  sh->start_ns = p.now();
  if (sh->on_start) sh->on_start();
  // Kick them off.
  co_await sys_write(p, wakefds[1], 1);
  // Reap them all.
  for (unsigned i = 0; i < total_children; i++) co_await p.wait_child();
  sh->stop_ns = p.now();
}

class MessagingRun final : public BenchRun {
 public:
  explicit MessagingRun(Params params) { sh_->params = params; }
  kernel::Program program(std::function<void()> on_start) override {
    sh_->on_start = std::move(on_start);
    auto sh = sh_;
    return [sh](Proc& p) { return bench_sched_messaging(p, sh); };
  }
  BenchOutput finish() const override { return sh_->params.hackbench ? finish_hackbench() : finish_perf(); }
  BenchOutput finish_perf() const {
    BenchOutput out;
    const Params& pr = sh_->params;
    const char* kind = pr.thread_mode ? "threads" : "processes";
    char buf[256];
    out.text += "# Running 'sched/messaging' benchmark:\n";
    std::snprintf(buf, sizeof buf, "# %d sender and receiver %s per group\n", NUM_FDS, kind);
    out.text += buf;
    std::snprintf(buf, sizeof buf, "# %lld groups == %lld %s run\n\n", static_cast<long long>(pr.num_groups),
                  static_cast<long long>(pr.num_groups * 2 * NUM_FDS), kind);
    out.text += buf;
    if (sh_->stop_ns < 0) return out;
    // gettimeofday() resolution: microseconds; printed as sec.msec, truncated.
    const int64_t diff_us = (sh_->stop_ns - sh_->start_ns) / 1000;
    std::snprintf(buf, sizeof buf, " %14s: %lld.%03lld [sec]\n", "Total time",
                  static_cast<long long>(diff_us / 1000000), static_cast<long long>(diff_us % 1000000 / 1000));
    out.text += buf;
    out.metrics.push_back({"total_time", "s", false, static_cast<double>(diff_us) / 1e6});
    return out;
  }
  // rt-tests' hackbench main(): its two lines up front, "Time:" at the end.
  BenchOutput finish_hackbench() const {
    BenchOutput out;
    const Params& pr = sh_->params;
    char buf[256];
    std::snprintf(buf, sizeof buf, "Running in %s mode with %lld groups using %u file descriptors each (== %lld tasks)\n",
                  pr.thread_mode ? "threaded" : "process", static_cast<long long>(pr.num_groups), 2 * pr.num_fds,
                  static_cast<long long>(pr.num_groups * 2 * pr.num_fds));
    out.text += buf;
    std::snprintf(buf, sizeof buf, "Each sender will pass %lld messages of %lld bytes\n", static_cast<long long>(pr.loops),
                  static_cast<long long>(pr.datasize));
    out.text += buf;
    if (sh_->stop_ns < 0) return out;
    const int64_t diff_us = (sh_->stop_ns - sh_->start_ns) / 1000;
    std::snprintf(buf, sizeof buf, "Time: %lld.%03lld\n", static_cast<long long>(diff_us / 1000000),
                  static_cast<long long>(diff_us % 1000000 / 1000));
    out.text += buf;
    out.metrics.push_back({"total_time", "s", false, static_cast<double>(diff_us) / 1e6});
    return out;
  }
  std::string name() const override { return sh_->params.hackbench ? "hackbench" : "sched/messaging"; }
  std::string comm() const override { return sh_->params.hackbench ? "hackbench" : "perf"; }
  std::string command() const override {
    const Params& pr = sh_->params;
    if (pr.hackbench)
      return "hackbench -g " + std::to_string(pr.num_groups) + " -f " + std::to_string(pr.num_fds) + " -l " +
             std::to_string(pr.loops) + " -s " + std::to_string(pr.datasize) + (pr.use_pipes ? " -p" : "") +
             (pr.thread_mode ? " -T" : "");
    return "perf bench sched messaging -g " + std::to_string(pr.num_groups) + " -l " +
           std::to_string(pr.loops) + (pr.use_pipes ? " -p" : "") + (pr.thread_mode ? " -t" : "");
  }

 private:
  std::shared_ptr<Shared> sh_ = std::make_shared<Shared>();
};

}  // namespace

std::unique_ptr<BenchRun> make_messaging(const std::vector<std::string>& args) {
  const auto v = parse_bench_args("sched messaging",
                                  {{"-g", "--group", true, 1, 10000},
                                   {"-l", "--nr_loops", true, 1, 100000000},
                                   {"-p", "--pipe", false},
                                   {"-t", "--thread", false}},
                                  args);
  Params p;
  if (v.count("--group")) p.num_groups = v.at("--group");
  if (v.count("--nr_loops")) p.loops = v.at("--nr_loops");
  p.use_pipes = v.count("--pipe") != 0;
  p.thread_mode = v.count("--thread") != 0;
  if (p.num_groups * 2 * NUM_FDS > 100000)
    throw std::invalid_argument("sched messaging: more than 100000 tasks is not supported");
  return std::make_unique<MessagingRun>(p);
}

// rt-tests' hackbench, process_options(): -p/--pipe, -s/--datasize,
// -l/--loops, -g/--groups, -f/--fds, -T/--threads, -P/--process.
std::unique_ptr<BenchRun> make_hackbench(const std::vector<std::string>& args) {
  const auto v = parse_bench_args("hackbench",
                                  {{"-p", "--pipe", false},
                                   {"-s", "--datasize", true, 1, 1 << 20},
                                   {"-l", "--loops", true, 1, 100000000},
                                   {"-g", "--groups", true, 1, 10000},
                                   {"-f", "--fds", true, 1, 1000},
                                   {"-T", "--threads", false},
                                   {"-P", "--process", false}},
                                  args);
  Params p;
  p.hackbench = true;
  if (v.count("--groups")) p.num_groups = v.at("--groups");
  if (v.count("--loops")) p.loops = v.at("--loops");
  if (v.count("--fds")) p.num_fds = static_cast<unsigned>(v.at("--fds"));
  if (v.count("--datasize")) p.datasize = v.at("--datasize");
  p.use_pipes = v.count("--pipe") != 0;
  // getopt lets the last of -T and -P win; the parser keeps no order.
  if (v.count("--threads") && v.count("--process"))
    throw std::invalid_argument("hackbench: -T and -P both given: pick one");
  p.thread_mode = v.count("--threads") != 0;
  if (p.num_groups * 2 * p.num_fds > 100000)
    throw std::invalid_argument("hackbench: more than 100000 tasks is not supported");
  return std::make_unique<MessagingRun>(p);
}

}  // namespace workload
