// schbench (Chris Mason, Facebook, April 2016): scheduler wakeup latency of
// a 1:N dispatcher/worker load, the shape of the Facebook services behind
// seed 000. Transcribed from schbench.c of github.com/masoncl/schbench at
// 8d075b3 (Aug 2019; the algorithm of the May 2016 original, 3d16b23).
//
// m message threads each start t workers (all pthreads of one process).
// A worker spins for cputime (a wall-clock gettimeofday() loop), puts itself
// on its message thread's list, posts the message thread's futex and sleeps
// on its own. A posted message thread sleeps sleeptime + up to 25% jitter
// (usleep), then wakes every worker queued on its list in one batch,
// stamping them all with one timestamp taken before the batch. The latency
// of a worker is its own gettimeofday() after the futex wait returns minus
// that stamp: the waker's walk down the list plus the worker's wait for a
// CPU. main() sleeps for the runtime, sets `stopping` and joins everyone.
//
// Not modelled: -p (pipe mode), -R (requests per second) and -a (auto);
// the cache footprint of the spin (a pure register loop) is nil.
// pthread_join() is wait4() on the thread here (glibc waits on the
// CLEARTID futex), which only changes the shutdown. schbench prints its
// percentiles to stderr; schedlab prints the tool's output on stdout.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <vector>

#include "sim/rng.hpp"
#include "workload/bench/latency_histogram.hpp"
#include "workload/bench/args.hpp"
#include "workload/bench/bench.hpp"
#include "workload/ipc/ipc.hpp"

namespace workload {
namespace {

using namespace schbench;  // the histogram

// ---- threads ----
constexpr int FUTEX_BLOCKED = 0;
constexpr int FUTEX_RUNNING = 1;

struct Options {
  int64_t message_threads = 2, worker_threads = 16, runtime = 30;
  int64_t sleeptime = 30000, cputime = 30000;  // usec
};

struct ThreadData {
  ThreadData* next = nullptr;        // on the message thread's list for waking
  ThreadData* msg_thread = nullptr;  // our parent thread and messaging partner
  int64_t wake_time = 0;             // usec; the msg thread stuffs gtod in here before waking us
  Futex futex;
  Stats stats;
  double loops_per_sec = 0;
  std::vector<std::unique_ptr<ThreadData>> workers;  // a message thread's gaggle
};

struct Shared {
  Options o;
  bool stopping = false;
  std::vector<std::unique_ptr<ThreadData>> message_threads;
  Stats stats;
  double loops_per_sec = 0;
  bool done = false;
  std::function<void()> on_start;
};

int64_t gettimeofday_us(const Proc& p) { return p.now() / 1000; }

// returns the difference between start and stop in usecs
int64_t tvdelta(int64_t start_us, int64_t stop_us) { return std::max<int64_t>(0, stop_us - start_us); }

bool cmpxchg(int& word, int old, int val) {
  if (word != old) return false;
  word = val;
  return true;
}

// wakeup a process waiting on a futex, making sure they are really waiting first
Co<void> fpost(Proc& p, Futex& f) {
  if (cmpxchg(f.value, FUTEX_BLOCKED, FUTEX_RUNNING)) co_await futex_wake(p, f, 1);
}

// wait on a futex. Make sure to set the futex to FUTEX_BLOCKED beforehand.
Co<void> fwait(Proc& p, Futex& f) {
  while (true) {
    if (cmpxchg(f.value, FUTEX_RUNNING, FUTEX_BLOCKED)) break;  // the futex is available
    co_await futex_wait(p, f, FUTEX_BLOCKED);
  }
}

// cmpxchg based list prepend
void xlist_add(ThreadData* head, ThreadData* add) {
  add->next = head->next;
  head->next = add;
}

// xchg based list splicing: returns the entire list and empties head
ThreadData* xlist_splice(ThreadData* head) { return std::exchange(head->next, nullptr); }

// Wake everyone currently waiting on the message list, filling in their
// wake_time with the time at the start of the list run.
Co<void> xlist_wake_all(Proc& p, ThreadData* td) {
  ThreadData* list = xlist_splice(td);
  const int64_t now = gettimeofday_us(p);
  while (list) {
    ThreadData* next = list->next;
    list->next = nullptr;
    list->wake_time = now;
    co_await fpost(p, list->futex);
    list = next;
  }
}

// called by worker threads to send a message and wait for the answer
Co<void> msg_and_wait(Proc& p, Shared& sh, ThreadData* td) {
  td->futex.value = FUTEX_BLOCKED;  // set ourselves to blocked
  td->wake_time = gettimeofday_us(p);
  xlist_add(td->msg_thread, td);  // add us to the list
  co_await fpost(p, td->msg_thread->futex);
  // don't wait if the main threads are shutting down, they will never kick us
  if (!sh.stopping) co_await fwait(p, td->futex);  // if he hasn't already woken us up, wait
  const int64_t delta = tvdelta(td->wake_time, gettimeofday_us(p));
  if (delta > 0) add_lat(td->stats, static_cast<unsigned>(delta));
}

// Loops until the runtime is up: waits for posting by the workers, replying
// to their messages after a delay of sleeptime + some jitter.
Co<void> run_msg_thread(Proc& p, Shared& sh, ThreadData* td, sim::Rng& rand) {
  const int64_t max_jitter = sh.o.sleeptime / 4;
  while (true) {
    td->futex.value = FUTEX_BLOCKED;
    co_await xlist_wake_all(p, td);
    if (sh.stopping) {
      co_await xlist_wake_all(p, td);
      break;
    }
    co_await fwait(p, td->futex);
    // messages shouldn't be instant, sleep a little to make them wait
    if (sh.o.sleeptime) {
      // rand_r() % max_jitter; schbench divides by zero for -s < 4
      const int64_t jitter =
          max_jitter > 0 ? static_cast<int64_t>(rand.below(static_cast<uint64_t>(max_jitter))) : 0;
      co_await p.nanosleep((sh.o.sleeptime + jitter) * 1000);  // usleep()
    }
  }
}

// busy loop calling gettimeofday() until more than spin_time usec have passed
Co<void> usec_spin(Proc& p, int64_t spin_time) {
  if (spin_time == 0) co_return;
  const int64_t start = gettimeofday_us(p);
  co_await p.spin_until((start + spin_time + 1) * 1000);
}

// the worker thread just does a single spin and then waits on a message
Co<void> worker_thread(Proc& p, Shared& sh, ThreadData* td) {
  const int64_t start = gettimeofday_us(p);
  int64_t loop_count = 0;
  while (true) {
    if (sh.stopping) break;
    co_await usec_spin(p, sh.o.cputime);
    loop_count++;
    co_await msg_and_wait(p, sh, td);
  }
  const double seconds = static_cast<double>(tvdelta(start, gettimeofday_us(p))) / 1000000;
  td->loops_per_sec = seconds > 0 ? static_cast<double>(loop_count) / seconds : 0;
}

// The message thread starts its own gaggle of workers, replies when they
// post it, and collects their latency stats as they exit.
Co<void> message_thread(Proc& p, Shared& sh, ThreadData* td) {
  // rand_r() seeded with pthread_self(): a stream per thread (and instance).
  sim::Rng rand(p.kernel().seed(), "schbench-msg-" + std::to_string(p.task()->pid));
  for (int64_t i = 0; i < sh.o.worker_threads; i++) {
    td->workers.push_back(std::make_unique<ThreadData>());
    ThreadData* w = td->workers.back().get();
    w->msg_thread = td;
    Shared* shp = &sh;
    kernel::Program worker = [shp, w](Proc& c) { return worker_thread(c, *shp, w); };
    co_await p.fork("schbench", worker, true);  // pthread_create()
  }
  co_await run_msg_thread(p, sh, td, rand);
  for (auto& w : td->workers) co_await fpost(p, w->futex);
  for (size_t i = 0; i < td->workers.size(); i++) co_await p.wait_child();  // pthread_join()
  for (auto& w : td->workers) {
    combine_stats(td->stats, w->stats);
    td->loops_per_sec += w->loops_per_sec;
  }
  td->loops_per_sec /= static_cast<double>(sh.o.worker_threads);
}

// runtime from the command line is in seconds. Sleep until it's up.
Co<void> sleep_for_runtime(Proc& p, Shared& sh) {
  const int64_t start = gettimeofday_us(p);
  const int64_t runtime_usec = sh.o.runtime * 1000000;
  co_await p.nanosleep(sh.o.runtime * 1000000000);  // sleep(runtime)
  while (tvdelta(start, gettimeofday_us(p)) < runtime_usec) co_await p.nanosleep(1000000000);
  sh.stopping = true;
}

Co<void> schbench_main(Proc& p, std::shared_ptr<Shared> sh) {
  if (p.config().preset().version < 300)
    throw std::invalid_argument("schbench needs futexes and hrtimers, which the Linux 2.4 presets lack");
  if (sh->on_start) sh->on_start();
  // start our message threads, each one starts its own workers
  for (int64_t i = 0; i < sh->o.message_threads; i++) {
    sh->message_threads.push_back(std::make_unique<ThreadData>());
    ThreadData* td = sh->message_threads.back().get();
    Shared* shp = sh.get();
    kernel::Program msg = [shp, td](Proc& c) { return message_thread(c, *shp, td); };
    co_await p.fork("schbench", msg, true);
  }
  co_await sleep_for_runtime(p, *sh);
  for (auto& td : sh->message_threads) co_await fpost(p, td->futex);
  for (size_t i = 0; i < sh->message_threads.size(); i++) co_await p.wait_child();
  for (auto& td : sh->message_threads) {
    combine_stats(sh->stats, td->stats);
    sh->loops_per_sec += td->loops_per_sec;
  }
  sh->loops_per_sec /= static_cast<double>(sh->o.message_threads);
  sh->done = true;
}

class SchbenchRun final : public BenchRun {
 public:
  explicit SchbenchRun(const Options& o) { sh_->o = o; }
  kernel::Program program(std::function<void()> on_start) override {
    sh_->on_start = std::move(on_start);
    auto sh = sh_;
    return [sh](Proc& p) { return schbench_main(p, sh); };
  }
  BenchOutput finish() const override {
    BenchOutput out;
    if (!sh_->done) return out;
    const Stats& s = sh_->stats;
    const std::vector<unsigned> ovals = calc_percentiles(s);
    char buf[128];
    if (!ovals.empty()) {
      out.text += "Latency percentiles (usec)\n";
      for (size_t i = 0; i < ovals.size(); i++) {
        std::snprintf(buf, sizeof buf, "\t%s%2.1fth: %u\n", i == PLIST_P99 ? "*" : "", plist[i], ovals[i]);
        out.text += buf;
      }
    }
    std::snprintf(buf, sizeof buf, "\tmin=%u, max=%u\n", s.min, s.max);
    out.text += buf;
    auto pct = [&](size_t i) { return i < ovals.size() ? static_cast<double>(ovals[i]) : 0.0; };
    out.metrics.push_back({"p99_wakeup_latency", "us", false, pct(PLIST_P99)});
    out.metrics.push_back({"p50_wakeup_latency", "us", false, pct(0)});
    out.metrics.push_back({"p95_wakeup_latency", "us", false, pct(PLIST_P95)});
    out.metrics.push_back({"p999_wakeup_latency", "us", false, pct(6)});
    out.metrics.push_back({"max_wakeup_latency", "us", false, static_cast<double>(s.max)});
    // Computed by schbench but printed only in pipe mode: worker loops per
    // second, the work done, which falls when workers share CPUs.
    out.metrics.push_back({"worker_loops_per_sec", "loops/s", true, sh_->loops_per_sec});
    return out;
  }
  std::string name() const override { return "schbench"; }
  std::string comm() const override { return "schbench"; }
  std::string command() const override {
    const Options& o = sh_->o;
    return "schbench -m " + std::to_string(o.message_threads) + " -t " + std::to_string(o.worker_threads) +
           " -r " + std::to_string(o.runtime) + " -s " + std::to_string(o.sleeptime) + " -c " +
           std::to_string(o.cputime);
  }

 private:
  std::shared_ptr<Shared> sh_ = std::make_shared<Shared>();
};

}  // namespace

std::unique_ptr<BenchRun> make_schbench(const std::vector<std::string>& args) {
  const auto v = parse_bench_args("schbench",
                                  {{"-m", "--message-threads", true, 1, 1024},
                                   {"-t", "--threads", true, 1, 4096},
                                   {"-r", "--runtime", true, 1, 3600},
                                   {"-s", "--sleeptime", true, 0, 100000000},
                                   {"-c", "--cputime", true, 0, 100000000}},
                                  args);
  Options o;
  auto get = [&v](const char* k, int64_t& field) {
    if (v.count(k)) field = v.at(k);
  };
  get("--message-threads", o.message_threads);
  get("--threads", o.worker_threads);
  get("--runtime", o.runtime);
  get("--sleeptime", o.sleeptime);
  get("--cputime", o.cputime);
  return std::make_unique<SchbenchRun>(o);
}

}  // namespace workload
