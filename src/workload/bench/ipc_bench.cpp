// ipc-bench's latency tests, unix_lat and pipe_lat (github.com/ms705/ipc-bench,
// Cambridge 2011-2015; test.c run_test(), unix_lat.c, pipe_lat.c): two
// processes pinned to chosen CPUs ping-pong a message of -s bytes -c times,
// and the parent logs the mean round trip. Its published results give, per
// machine, the round trip for every pair of CPUs, which is what the
// model's cross-CPU costs (IPIs, idle exits, cache lines) can be checked
// against: the same CPU, SMT siblings, two cores of a socket, two sockets.
//
// run_test() with -p 1: the launcher forks child1, which creates the channel
// (init_test()) and forks child2; child2 pins itself to -a (setaffinity())
// and runs child_ping() count times; child1 pins itself to -b and runs
// parent_ping() count times between two gettimeofday() calls, logs
// "<name> <size> <count> <seconds per round trip>s" and waits for child2.
// With -t it also times each round trip (rdtsc() around parent_ping()) and
// writes their summary, the <name>-tsc.log its archives keep
// (ipc_bench_stats.cpp). The model's clock stands for the TSC: ipc-bench
// divides cycles by get_tsc_freq()'s estimate, which is not modelled.
// Not modelled: the throughput tests, -p > 1.
#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "workload/bench/args.hpp"
#include "workload/bench/bench.hpp"
#include "workload/bench/ipc_bench_stats.hpp"
#include "workload/ipc/ipc.hpp"

namespace workload {
namespace {

constexpr int64_t kMaxTimedRoundTrips = 10000000;

struct TestData {
  bool unix_socket = true;  // unix_lat; else pipe_lat
  int64_t size = 1024, count = 100;
  int first_cpu = 0, second_cpu = 0;
  bool per_iter_timings = false;  // -t
  std::vector<int64_t> iter_ns;
  // unix_lat: socketpair sv[2]; pipe_lat: ifds (parent -> child), ofds.
  Fd sv[2], ifds[2], ofds[2];
  std::function<void()> on_start;
  int64_t start_ns = -1, stop_ns = -1;
};

// xread()/xwrite(): atomicio() loops until the whole message has moved; a
// call that moves nothing is an error.
Co<void> xread(Proc& p, Fd& fd, int64_t count) {
  for (int64_t done = 0; done < count;) {
    const int64_t r = co_await sys_read(p, fd, count - done);
    if (r <= 0) throw std::runtime_error("xread: end of file");
    done += r;
  }
}
Co<void> xwrite(Proc& p, Fd& fd, int64_t count) {
  for (int64_t done = 0; done < count;) done += co_await sys_write(p, fd, count - done);
}

Co<void> setaffinity(Proc& p, int cpunum) {
  if (cpunum >= p.kernel().machine().nr_cpus())
    throw std::invalid_argument("sched_setaffinity: no CPU " + std::to_string(cpunum) + " on this machine");
  hw::CpuMask mask;
  mask.set(cpunum);
  co_await p.sched_setaffinity(mask);
}

// The ends each side reads and writes: unix_lat's child and parent each
// use one end of the socketpair; pipe_lat's parent writes ifds and reads
// ofds, its child the other way round.
struct Ends {
  Fd* in;
  Fd* out;
};
Ends child_ends(TestData* td) { return td->unix_socket ? Ends{&td->sv[1], &td->sv[1]} : Ends{&td->ifds[0], &td->ofds[1]}; }
Ends parent_ends(TestData* td) { return td->unix_socket ? Ends{&td->sv[0], &td->sv[0]} : Ends{&td->ofds[0], &td->ifds[1]}; }

Co<void> child_ping(Proc& p, TestData* td) {
  const Ends e = child_ends(td);
  co_await xread(p, *e.in, td->size);
  co_await xwrite(p, *e.out, td->size);
}

Co<void> parent_ping(Proc& p, TestData* td) {
  const Ends e = parent_ends(td);
  co_await xwrite(p, *e.out, td->size);
  co_await xread(p, *e.in, td->size);
}

Co<void> child2(Proc& p, TestData* td) {
  co_await setaffinity(p, td->first_cpu);
  for (int64_t i = 0; i < td->count; i++) co_await child_ping(p, td);
}

Co<void> child1(Proc& p, TestData* td) {
  // init_test()
  if (td->unix_socket) {
    make_socketpair(p.config(), td->sv);
  } else {
    make_pipe(p.config(), td->ifds);
    make_pipe(p.config(), td->ofds);
  }
  kernel::Program second = [td](Proc& c) { return child2(c, td); };
  co_await p.fork(td->unix_socket ? "unix_lat" : "pipe_lat", second, false);
  co_await setaffinity(p, td->second_cpu);
  // parent_main()
  td->start_ns = p.now();
  if (td->on_start) td->on_start();
  for (int64_t i = 0; i < td->count; i++) {
    const int64_t t = p.now();
    co_await parent_ping(p, td);
    if (td->per_iter_timings) td->iter_ns.push_back(p.now() - t);
  }
  td->stop_ns = p.now();
  co_await p.wait_child();  // wait_for_children_to_finish()
}

Co<void> run_test(Proc& p, TestData* td) {
  kernel::Program first = [td](Proc& c) { return child1(c, td); };
  co_await p.fork(td->unix_socket ? "unix_lat" : "pipe_lat", first, false);
  co_await p.wait_child();
}

class LatencyRun final : public BenchRun {
 public:
  LatencyRun(bool unix_socket, int64_t size, int64_t count, int first_cpu, int second_cpu, bool per_iter_timings) {
    td_->unix_socket = unix_socket;
    td_->per_iter_timings = per_iter_timings;
    td_->size = size;
    td_->count = count;
    td_->first_cpu = first_cpu;
    td_->second_cpu = second_cpu;
  }
  kernel::Program program(std::function<void()> on_start) override {
    td_->on_start = std::move(on_start);
    auto td = td_;
    return [td](Proc& p) { return run_test(p, td.get()); };
  }
  BenchOutput finish() const override {
    BenchOutput out;
    char buf[256];
    // parse_args() reports its settings on stderr; the headline goes to the log.
    std::snprintf(buf, sizeof buf,
                  "size %lld count %lld first_cpu %d second_cpu %d parallel 1 tsc %d produce-method 0 copy-read "
                  "copy-write numa_node -1 output_dir results\n",
                  static_cast<long long>(td_->size), static_cast<long long>(td_->count), td_->first_cpu,
                  td_->second_cpu, td_->per_iter_timings ? 1 : 0);
    out.text += buf;
    if (td_->stop_ns < 0) return out;
    // gettimeofday(): whole microseconds.
    const int64_t delta_us = td_->stop_ns / 1000 - td_->start_ns / 1000;
    std::snprintf(buf, sizeof buf, "%s %lld %lld %fs\n", comm().c_str(), static_cast<long long>(td_->size),
                  static_cast<long long>(td_->count),
                  static_cast<double>(delta_us) / (static_cast<double>(td_->count) * 1e6));
    out.text += buf;
    const double round_trip_us =
        static_cast<double>(td_->stop_ns - td_->start_ns) / 1000.0 / static_cast<double>(td_->count);
    out.metrics.push_back({"round_trip", "us", false, round_trip_us});
    if (td_->per_iter_timings && !td_->iter_ns.empty()) {
      std::vector<double> seconds;
      seconds.reserve(td_->iter_ns.size());
      for (const int64_t ns : td_->iter_ns) seconds.push_back(static_cast<double>(ns) / 1e9);
      out.text += "--- " + comm() + "-tsc.log\n" + summarise_samples(seconds);
      // The log's "Distribution of all values" 5%, median and 95% (stats.c:
      // the first 5% dropped, then data[n/20], data[n/2], data[n*19/20]).
      std::vector<int64_t> kept(td_->iter_ns.begin() + static_cast<long>(td_->iter_ns.size() / 20), td_->iter_ns.end());
      std::sort(kept.begin(), kept.end());
      const size_t n = kept.size();
      for (const auto& [metric, at] : {std::pair{"round_trip_p5", n / 20}, {"round_trip_median", n / 2},
                                       {"round_trip_p95", n * 19 / 20}})
        out.metrics.push_back({metric, "us", false, static_cast<double>(kept[at]) / 1000.0});
    }
    return out;
  }
  std::string name() const override { return "ipc-bench/" + comm(); }
  std::string comm() const override { return td_->unix_socket ? "unix_lat" : "pipe_lat"; }
  std::string command() const override {
    return comm() + (td_->per_iter_timings ? " -t" : "") + " -s " + std::to_string(td_->size) + " -c " +
           std::to_string(td_->count) + " -a " + std::to_string(td_->first_cpu) + " -b " +
           std::to_string(td_->second_cpu);
  }

 private:
  std::shared_ptr<TestData> td_ = std::make_shared<TestData>();
};

}  // namespace

std::unique_ptr<BenchRun> make_ipc_bench_latency(const std::string& name, const std::vector<std::string>& args) {
  const auto v = parse_bench_args(name,
                                  {{"-s", "-s", true, 1, 1 << 20},
                                   {"-c", "-c", true, 1, 1000000000},
                                   {"-a", "-a", true, 0, hw::CpuMask::kMaxCpus - 1},
                                   {"-b", "-b", true, 0, hw::CpuMask::kMaxCpus - 1},
                                   {"-t", "-t", false}},
                                  args);
  auto get = [&v](const char* k, int64_t def) { return v.count(k) ? v.at(k) : def; };
  // -t keeps every round trip's time until the end, as test.c's iter_cycles[].
  if (v.count("-t") && get("-c", 100) > kMaxTimedRoundTrips)
    throw std::invalid_argument(name + ": -t keeps every round trip: -c at most " +
                                std::to_string(kMaxTimedRoundTrips));
  return std::make_unique<LatencyRun>(name == "unix_lat", get("-s", 1024), get("-c", 100),
                                      static_cast<int>(get("-a", 0)), static_cast<int>(get("-b", 0)),
                                      v.count("-t") != 0);
}

}  // namespace workload
