#include <gtest/gtest.h>

#include <algorithm>

#include "../support/sim_fixture.hpp"
#include "workload/ipc/ipc.hpp"

using kernel::Co;
using kernel::Proc;
using testsupport::TinySim;
using workload::Fd;

namespace {
// Writes 100-byte messages with nobody reading; counts completed writes.
Co<void> writer(Proc& p, Fd* fd, int* written) {
  for (;;) {
    co_await workload::sys_write(p, *fd, 100);
    ++*written;
  }
}

int capacity(const std::string& preset, bool pipe) {
  TinySim s("1s2c1t", preset);
  Fd fds[2];
  if (pipe)
    workload::make_pipe(s.k.config(), fds);
  else
    workload::make_socketpair(s.k.config(), fds);
  int written = 0;
  s.k.spawn("writer", [&](Proc& p) { return writer(p, &fds[1], &written); }, 0);
  auto r = s.run();
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  return written;
}

Co<void> pingpong(Proc& p, Fd* in, Fd* out, int loops, bool first) {
  for (int i = 0; i < loops; ++i) {
    if (first) co_await workload::sys_write(p, *out, 4);
    int64_t got = co_await workload::sys_read(p, *in, 4);
    EXPECT_EQ(got, 4);
    if (!first) co_await workload::sys_write(p, *out, 4);
  }
}
}  // namespace

// fs/pipe.c: 16 pages, 40 merged 100-byte writes per page.
TEST(Pipe, Linux40HoldsSixHundredFortyMessages) { EXPECT_EQ(capacity("linux-4.0", true), 640); }
// 2.4: one 4 KiB page, a write <= PIPE_BUF needs room for all of it.
TEST(Pipe, Linux24HoldsFortyMessages) { EXPECT_EQ(capacity("linux-2.4.19", true), 40); }
// af_unix: 768-byte truesize against a 212992-byte sk_sndbuf -> 278 in flight.
TEST(UnixSocket, Linux40SendBufferLimitsInFlightMessages) { EXPECT_EQ(capacity("linux-4.0", false), 278); }
// 2.4: 288-byte truesize against 65535 -> 228 in flight.
TEST(UnixSocket, Linux24SendBufferLimitsInFlightMessages) { EXPECT_EQ(capacity("linux-2.4.19", false), 228); }

TEST(Pipe, PingPongDeliversEveryTokenWithSyncWakeups) {
  for (const char* preset : {"linux-4.0", "linux-2.4.19"}) {
    TinySim s("1s2c1t", preset);
    Fd a[2], b[2];
    workload::make_pipe(s.k.config(), a);
    workload::make_pipe(s.k.config(), b);
    s.k.spawn("ping", [&](Proc& p) { return pingpong(p, &b[0], &a[1], 200, true); }, 0);
    s.k.spawn("pong", [&](Proc& p) { return pingpong(p, &a[0], &b[1], 200, false); }, 1);
    auto r = s.run();
    EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Completed) << preset;
    EXPECT_EQ(s.k.check_invariants(), "") << preset;
  }
}

// ---- the unix_sock_lines and pipe_lines what-ifs ----
namespace {
hw::CpuMask only(int cpu) {
  hw::CpuMask m;
  m.set(cpu);
  return m;
}
enum class Channel { Socketpair, Pipes };
struct PingPongRun {
  int64_t end_ns;
  int64_t syscall_work_ns;  // the tasks' own system calls, at a core's full rate
};
Co<void> pinned_ends_pingpong(Proc& p, int cpu, Fd* in, Fd* out, int loops, bool first) {
  co_await p.sched_setaffinity(only(cpu));
  co_await pingpong(p, in, out, loops, first);
}
// A ping-pong of `loops` round trips, its ends pinned to the two CPUs: over
// one socketpair, or over two pipes as perf bench sched pipe; `lines` turns
// on the channel's what-if (unix_sock_lines or pipe_lines).
PingPongRun pinned_pingpong_run(Channel ch, const std::string& machine, int cpu_a, int cpu_b, int loops,
                                bool lines) {
  const std::string sysctl = ch == Channel::Socketpair ? "unix_sock_lines=" : "pipe_lines=";
  TinySim s(machine, "linux-4.0", 1, "", {sysctl + (lines ? "1" : "0")});
  Fd a[2], b[2];
  Fd *a_in = &a[0], *a_out = &a[0], *b_in = &a[1], *b_out = &a[1];
  if (ch == Channel::Socketpair) {
    workload::make_socketpair(s.k.config(), a);
  } else {
    workload::make_pipe(s.k.config(), a);
    workload::make_pipe(s.k.config(), b);
    a_in = &b[0], a_out = &a[1], b_in = &a[0], b_out = &b[1];
  }
  s.k.spawn("ping", [&](Proc& p) { return pinned_ends_pingpong(p, cpu_a, a_in, a_out, loops, true); }, cpu_a);
  s.k.spawn("pong", [&](Proc& p) { return pinned_ends_pingpong(p, cpu_b, b_in, b_out, loops, false); }, cpu_b);
  auto r = s.run();
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(s.k.check_invariants(), "");
  return {r.end_ns, s.k.work_by_path()[static_cast<size_t>(kernel::CostPath::Syscall)]};
}
// Lines one CPU wrote last cost nothing on that CPU: the run is the same.
void expect_same_run_on_one_cpu(Channel ch) {
  EXPECT_EQ(pinned_pingpong_run(ch, "1s1c1t", 0, 0, 200, true).end_ns,
            pinned_pingpong_run(ch, "1s1c1t", 0, 0, 200, false).end_ns);
}
// The lines moved per message between CPUs on two sockets, from the work
// charged (the idle states the two runs pick differ, so not from the time).
double transfers_per_message_across_sockets(Channel ch) {
  const int loops = 1000;
  const int64_t extra = pinned_pingpong_run(ch, "2s1c1t", 0, 1, loops, true).syscall_work_ns -
                        pinned_pingpong_run(ch, "2s1c1t", 0, 1, loops, false).syscall_work_ns;
  return static_cast<double>(extra) / (2.0 * loops) /
         static_cast<double>(hw::load_machine("2s1c1t").costs.line_transfer_remote);
}
}  // namespace

TEST(UnixSocket, MetadataLinesCostNothingWhenBothEndsShareACpu) { expect_same_run_on_one_cpu(Channel::Socketpair); }
TEST(Pipe, MetadataLinesCostNothingWhenBothEndsShareACpu) { expect_same_run_on_one_cpu(Channel::Pipes); }

// Across sockets each message of this ping-pong moves 20 lines (v4.0's
// net/unix/af_unix.c, net/core/sock.c, net/core/skbuff.c). Say A has just
// received B's message and replies:
// - A's consume of B's message, 8: the sk_buff's first line at the peek and
//   its other three (one batch of refill_mlp), the queue head
//   (skb_unlink()), B's sk_wmem_alloc (sock_wfree()), unix_write_space() on
//   B's socket, where B sleeps for its reply: the wait queue loaded, then
//   stored (__wake_up_common()), and B's wait entry unlinked; then the
//   shared info (skb_release_data());
// - A's send, 7: its sk_wmem_alloc loaded and added to, the memory of its
//   new sk_buff, shared info and data, which B read or wrote last (six
//   lines for these 4-byte messages, two batches), and under B's state
//   lock the lock, B's socket flags (maybe_add_creds()) and B's queue
//   head. B was woken by A's
//   unix_write_space() and has not run yet (its CPU is leaving an idle
//   state), so sock_def_readable() finds no sleeper, and A still holds
//   the queue line;
// - B waking in unix_stream_data_wait(), 5: the lock again, clear_bit() on
//   its socket flags, prepare_to_wait() on its entry and its queue, and the
//   queue head (skb_peek_tail()).
TEST(UnixSocket, MetadataLinesCostTwentyTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Socketpair), 20.0, 0.1);
}

// With pipe_lines, each message of this ping-pong moves 12 lines across
// the sockets (v4.0's fs/pipe.c), 6 on each side. The writer W: the mutex
// (__pipe_lock(); the reader R held it last), nrbufs and curbuf loaded and
// then stored (nrbufs++, tmp_page), the new buffer slot, the recycled page
// R read last (one line for 4 bytes), and R's wait entry, unlinked by the
// wakeup (the queue's lock shares the mutex's line, which W holds). R:
// prepare_to_wait() stores its entry before it sleeps (the previous
// waker's copy invalidated), finish_wait() loads it after the wakeup, then
// __pipe_lock() again, nrbufs loaded, the slot read and updated, and
// nrbufs/curbuf/tmp_page stored when the buffer is released.
TEST(Pipe, MetadataLinesCostTwelveTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Pipes), 12.0, 0.1);
}

TEST(UnixSocket, MetadataLinesAreNotForA24Preset) {
  EXPECT_THROW(TinySim("1s1c1t", "linux-2.4.19", 1, "", {"unix_sock_lines=1"}), std::invalid_argument);
  EXPECT_THROW(TinySim("1s1c1t", "linux-2.4.19", 1, "", {"pipe_lines=1"}), std::invalid_argument);
}

// MESI in brief: loads share a line, a store leaves one copy; a load pays
// the nearest copy, a store the farthest other one.
TEST(CacheLine, LoadsShareTheLineAndAStoreInvalidatesEveryOtherCopy) {
  const hw::Machine m(hw::load_machine("2s2c1t"));  // CPUs 0-1 on socket 0, 2-3 on socket 1
  const int64_t llc = m.costs().line_transfer_llc, remote = m.costs().line_transfer_remote;
  workload::CacheLine line;
  EXPECT_EQ(line.read(m, 0), 0);    // never written: nothing to fetch
  EXPECT_EQ(line.write(m, 0), 0);
  EXPECT_EQ(line.read(m, 0), 0);    // the writer's own copy
  EXPECT_EQ(line.read(m, 2), remote);
  EXPECT_EQ(line.read(m, 2), 0);    // now shared there
  EXPECT_EQ(line.read(m, 3), llc);  // from the nearer copy, on its socket
  EXPECT_EQ(line.write(m, 1), remote);  // invalidates 0 (llc) and 2, 3 (remote)
  EXPECT_EQ(line.write(m, 1), 0);       // the only copy
  EXPECT_EQ(line.read(m, 0), llc);
  EXPECT_EQ(line.write(m, 0), llc);     // an upgrade still invalidates 1
}

TEST(SpinResource, WaitersQueueBehindTheHolder) {
  workload::SpinResource m;
  EXPECT_EQ(m.acquire(100, 50), 0);
  EXPECT_EQ(m.acquire(120, 10), 30);
  EXPECT_EQ(m.acquire(500, 10), 0);
}

// ---- futexes ----
namespace {
Co<void> futex_waiter(Proc& p, workload::Futex* f, int* result, int* woken) {
  *result = co_await workload::futex_wait(p, *f, 0);
  ++*woken;
}
Co<void> futex_waker(Proc& p, workload::Futex* f, int nr) {
  co_await p.user(1000000);  // let every waiter queue first
  co_await workload::futex_wake(p, *f, nr);
}
}  // namespace

TEST(Futex, WaitReturnsEagainWhenTheWordNoLongerHoldsTheValue) {
  TinySim s("1s1c1t", "linux-4.0");
  workload::Futex f;
  f.value = 1;
  int result = 0, woken = 0;
  s.k.spawn("waiter", [&](Proc& p) { return futex_waiter(p, &f, &result, &woken); }, 0);
  ASSERT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_EQ(result, workload::FUTEX_EAGAIN);
}

TEST(Futex, WakeWakesAtMostNrWaiters) {
  TinySim s("1s2c1t", "linux-4.0");
  workload::Futex f;
  int results[3] = {7, 7, 7}, woken = 0;
  for (int i = 0; i < 3; ++i)
    s.k.spawn("waiter" + std::to_string(i), [&, i](Proc& p) { return futex_waiter(p, &f, &results[i], &woken); },
              i % 2);
  s.k.spawn("waker", [&](Proc& p) { return futex_waker(p, &f, 2); }, 1);
  auto r = s.run();
  // The third waiter is never woken.
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  EXPECT_EQ(woken, 2);
  EXPECT_EQ(f.waiters.waiters.size(), 1u);
  // Two returned 0 (woken); the third never returned.
  EXPECT_EQ(std::count(std::begin(results), std::end(results), 0), 2);
  EXPECT_EQ(std::count(std::begin(results), std::end(results), 7), 1);
}

