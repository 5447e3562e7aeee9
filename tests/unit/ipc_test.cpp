#include <gtest/gtest.h>

#include <algorithm>

#include "../support/sim_fixture.hpp"
#include "obs/observer.hpp"
#include "workload/ipc/ipc.hpp"

using kernel::Co;
using kernel::Proc;
using testsupport::TinySim;
using workload::Fd;

namespace {
// Writes `size`-byte messages with nobody reading; counts completed writes.
Co<void> writer(Proc& p, Fd* fd, int* written, int64_t size) {
  for (;;) {
    co_await workload::sys_write(p, *fd, size);
    ++*written;
  }
}

int capacity(const std::string& preset, bool pipe, int64_t size = 100) {
  TinySim s("1s2c1t", preset);
  Fd fds[2];
  if (pipe)
    workload::make_pipe(s.k.config(), fds);
  else
    workload::make_socketpair(s.k.config(), fds);
  int written = 0;
  s.k.spawn("writer", [&](Proc& p) { return writer(p, &fds[1], &written, size); }, 0);
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

// The skb of a stream write and its truesize, by kmalloc's bucket for the
// head (SKB_DATA_ALIGN(head) + 320 B of shared info, plus a 256-byte
// sk_buff) and whole pages for 4.0's fragments.
TEST(UnixSocket, SkbTruesizeFollowsTheKmallocBucketAndThePages) {
  workload::UnixSock v40;  // 212992-byte sk_sndbuf, 768 at 100 B
  workload::UnixSock v310 = v40;
  v310.paged_skbs = false;
  using Shape = std::pair<int64_t, int64_t>;
  const auto shape = [](const workload::UnixSock& sk, int64_t left) {
    const auto skb = workload::unix_stream_skb(sk, left);
    return std::pair{skb.size, skb.truesize};
  };
  EXPECT_EQ(shape(v40, 100), Shape(100, 768));     // 128 + 320 -> kmalloc-512
  EXPECT_EQ(shape(v40, 192), Shape(192, 768));     // 192 + 320 = 512
  EXPECT_EQ(shape(v40, 200), Shape(200, 1280));    // 256 + 320 -> kmalloc-1024
  EXPECT_EQ(shape(v40, 1000), Shape(1000, 2304));  // 1024 + 320 -> kmalloc-2048
  EXPECT_EQ(shape(v40, 3776), Shape(3776, 4352));  // SKB_MAX_HEAD(0): a page exactly
  // Past a page's head 4.0 moves whole pages to fragments: 5000 B is a
  // 904-byte head (kmalloc-2048) and one page.
  EXPECT_EQ(shape(v40, 5000), Shape(5000, 2304 + 4096));
  EXPECT_EQ(shape(v40, 4000), Shape(4000, 768 - 256 + 256 + 4096));  // all in one page
  // The cap: SKB_MAX_HEAD(0) + 32 KiB of fragments on 4.0, SKB_MAX_ALLOC
  // (16 KiB less the shared info, one order-2 allocation) on 3.10.
  EXPECT_EQ(shape(v40, 100000), Shape(36544, 4352 + 32768));
  EXPECT_EQ(shape(v310, 100000), Shape(16064, 16384 + 256));
  EXPECT_EQ(shape(v310, 5000), Shape(5000, 8192 + 256));
  // Half the send buffer, less 64, caps a write first when it is small.
  workload::UnixSock small = v40;
  small.sndbuf = 8192;
  EXPECT_EQ(shape(small, 100000).first, 4032);
}

// 2.4.19's truesize is the data rounded up to the P4's 128-byte
// SMP_CACHE_BYTES plus a 160-byte sk_buff, with no kmalloc bucket; an skb
// carries at most SKB_MAX_ALLOC = (16384 - 60) & ~127 bytes, or half the
// send buffer less 64. Before stop 99 the model charged 288 plus the bytes
// over 100 and capped an skb only at half the send buffer.
TEST(UnixSocket, Linux24SkbTruesizeIsTheAlignedDataAndAnSkBuff) {
  workload::UnixSock v24;
  v24.linux24 = true;
  v24.sndbuf = 65535;
  v24.truesize_100 = 288;
  using Shape = std::pair<int64_t, int64_t>;
  const auto shape = [](const workload::UnixSock& sk, int64_t left) {
    const auto skb = workload::unix_stream_skb(sk, left);
    return std::pair{skb.size, skb.truesize};
  };
  EXPECT_EQ(shape(v24, 100), Shape(100, 288));
  EXPECT_EQ(shape(v24, 128), Shape(128, 288));
  EXPECT_EQ(shape(v24, 129), Shape(129, 416));
  EXPECT_EQ(shape(v24, 1000), Shape(1000, 1024 + 160));
  EXPECT_EQ(shape(v24, 100000), Shape(16256, 16256 + 160));
  workload::UnixSock small = v24;
  small.sndbuf = 8192;
  EXPECT_EQ(shape(small, 100000), Shape(4032, 4096 + 160));
}

// 1000-byte writes on 2.4: 1184 bytes each against 65535, so 56 in flight
// (the last admitted at 65120 charged); 288 + 900 = 1188 gave 56 too, but
// 129-byte writes show the rounding: 416 each, 158 in flight, not 207.
TEST(UnixSocket, Linux24SendBufferRoundsWritesToTheCacheLine) {
  EXPECT_EQ(capacity("linux-2.4.19", false, 1000), 56);
  EXPECT_EQ(capacity("linux-2.4.19", false, 129), 158);
}

// 200-byte writes fill 4.0's send buffer at 1280 B each (the head moves
// to kmalloc-1024): 167 in flight, the last admitted while 212480 B were
// charged. Before stop 98 the model charged 868 B (768 plus the 100 bytes
// over) and let 246 through.
TEST(UnixSocket, Linux40SendBufferHoldsFewerTwoHundredByteMessages) {
  EXPECT_EQ(capacity("linux-4.0", false, 200), 167);
}

namespace {
hw::CpuMask cpu_zero() {
  hw::CpuMask m;
  m.set(0);
  return m;
}
// Spins, sleeps, then writes 100-byte messages until it blocks for good.
Co<void> spinning_writer(Proc& p, Fd* fd, int* written) {
  co_await p.sched_setaffinity(cpu_zero());
  co_await p.user(20000000);
  co_await p.nanosleep(5000000);
  co_await writer(p, fd, written, 100);
}
// Sleeps, fills the write end to one skb short of sk_sndbuf, spins until
// just before a tick, then writes on.
Co<void> filling_writer(Proc& p, Fd* fd, int* written, int64_t write_at) {
  co_await p.sched_setaffinity(cpu_zero());
  co_await p.nanosleep(21000000);
  for (int i = 0; i < 277; ++i) {
    co_await workload::sys_write(p, *fd, 100);
    ++*written;
  }
  co_await p.spin_until(write_at);
  co_await writer(p, fd, written, 100);
}
}  // namespace

// 4.0's sock_alloc_send_pskb() checks sk_wmem_alloc against sk_sndbuf, then
// allocates the skb (a GFP_KERNEL allocation: might_sleep(), a voluntary
// preemption point) and only then charges it with skb_set_owner_w(). Two
// senders share a write end on CPU 0. The filler, running since 21 ms, leaves
// room for one more skb (277 of 278) and makes its next write as the 28 ms
// tick finds its slice used up with the other sender queued: it passes the
// check, is preempted at the allocation, and the other sender passes the
// same check and charges the 278th skb; the filler then charges a 279th
// without checking again. With the charge before the preemption point (the
// model before stop 99) the end never holds more than 278.
TEST(UnixSocket, Linux40SenderPreemptedAtTheAllocationOvershootsTheSendBuffer) {
  TinySim s("1s2c1t", "linux-4.0");
  Fd fds[2];
  workload::make_socketpair(s.k.config(), fds);
  int filled = 0, other = 0;
  s.k.spawn("other", [&](Proc& p) { return spinning_writer(p, &fds[1], &other); }, 0);
  s.k.spawn("filler", [&](Proc& p) { return filling_writer(p, &fds[1], &filled, 28000000 - 30); }, 0);
  auto r = s.run();
  EXPECT_EQ(r.outcome, kernel::RunResult::Outcome::Deadlock);
  EXPECT_EQ(filled, 278);
  EXPECT_EQ(other, 1);
  EXPECT_EQ(s.k.check_invariants(), "");
}

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
// Which lines a run charges: none, the channel's own (unix_sock_lines or
// pipe_lines) or the scheduler's (ttwu_lines).
enum class Lines { None, Channel, Scheduler };
struct PingPongRun {
  int64_t end_ns;
  int64_t syscall_work_ns;  // the tasks' own system calls, at a core's full rate
  int64_t sched_work_ns;    // wakeups, rq locks, schedule() and switches
};
Co<void> pinned_ends_pingpong(Proc& p, int cpu, Fd* in, Fd* out, int loops, bool first) {
  co_await p.sched_setaffinity(only(cpu));
  co_await pingpong(p, in, out, loops, first);
}
// A ping-pong of `loops` round trips, its ends pinned to the two CPUs: over
// one socketpair, or over two pipes as perf bench sched pipe.
PingPongRun pinned_pingpong_run(Channel ch, const std::string& machine, int cpu_a, int cpu_b, int loops,
                                Lines lines, const std::string& preset = "linux-4.0") {
  const std::string channel_lines = ch == Channel::Socketpair ? "unix_sock_lines=" : "pipe_lines=";
  TinySim s(machine, preset, 1, "",
            {channel_lines + (lines == Lines::Channel ? "1" : "0"),
             std::string("ttwu_lines=") + (lines == Lines::Scheduler ? "1" : "0")});
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
  const auto& work = s.k.work_by_path();
  auto path = [&](kernel::CostPath p) { return work[static_cast<size_t>(p)]; };
  return {r.end_ns, path(kernel::CostPath::Syscall),
          path(kernel::CostPath::Wakeup) + path(kernel::CostPath::RqLock) + path(kernel::CostPath::Schedule) +
              path(kernel::CostPath::ContextSwitch)};
}
// Lines one CPU wrote last cost nothing on that CPU: the run is the same.
void expect_same_run_on_one_cpu(Channel ch, Lines lines, const std::string& preset = "linux-4.0") {
  EXPECT_EQ(pinned_pingpong_run(ch, "1s1c1t", 0, 0, 200, lines, preset).end_ns,
            pinned_pingpong_run(ch, "1s1c1t", 0, 0, 200, Lines::None, preset).end_ns);
}
// The lines moved per message between CPUs on two sockets, from the work
// charged (the idle states the two runs pick differ, so not from the time).
double transfers_per_message_across_sockets(Channel ch, Lines lines, const std::string& preset = "linux-4.0") {
  const int loops = 1000;
  const PingPongRun with = pinned_pingpong_run(ch, "2s1c1t", 0, 1, loops, lines, preset);
  const PingPongRun without = pinned_pingpong_run(ch, "2s1c1t", 0, 1, loops, Lines::None, preset);
  const int64_t extra = lines == Lines::Scheduler ? with.sched_work_ns - without.sched_work_ns
                                                  : with.syscall_work_ns - without.syscall_work_ns;
  return static_cast<double>(extra) / (2.0 * loops) /
         static_cast<double>(hw::load_machine("2s1c1t").costs.line_transfer_remote);
}
}  // namespace

TEST(UnixSocket, MetadataLinesCostNothingWhenBothEndsShareACpu) {
  expect_same_run_on_one_cpu(Channel::Socketpair, Lines::Channel);
}
TEST(Pipe, MetadataLinesCostNothingWhenBothEndsShareACpu) { expect_same_run_on_one_cpu(Channel::Pipes, Lines::Channel); }

// Across sockets each message of this ping-pong stalls on 23 transfers
// (v4.0's net/unix/af_unix.c, net/core/sock.c, net/core/skbuff.c,
// kernel/sched/wait.c, mm/slub.c, costed by hw::LineStalls' rule). Say B
// has sent A a message; A runs and replies. B was woken by A's
// unix_write_space() and has not run yet (its CPU is leaving an idle
// state), so B's sock_def_readable() found no sleeper.
// - A waking in unix_stream_data_wait(), 5: unix_state_lock() (B's send
//   took it); clear_bit() on its socket flags (B's maybe_add_creds()
//   loaded them: an invalidation); prepare_to_wait() loads its entry (B's
//   wakeup unlinked it), and its lock of the queue, which B's wakeup took,
//   waits too for the store to the entry's flags; skb_peek_tail()'s
//   queue head (B's skb_queue_tail()).
// - A consuming it, 11: line 1 of the sk_buff (len, consumed) at
//   skb_peek(), its other three (one batch of refill_mlp); skb_unlink()'s
//   lock of the queue (the head's line, B's), which waits for the store
//   of UNIXCB(skb).consumed; sock_wfree() loads sk_flags on the line of
//   B's sk_wmem_alloc, and its atomic_sub() there invalidates B's copy;
//   unix_write_space() on B's socket: the queue head (smp_mb() has
//   nothing to wait for), its lock (shared now), and B's entry, B
//   sleeping there for its reply; sock_wfree()'s atomic_sub_and_test()
//   waits for the unlinking store to that entry; skb_release_data()'s
//   shared info; kfree()'s cmpxchg of the data's slab page, which B's
//   ksize() read, and which waits for the free pointer stored in the data
//   B wrote. consume_skb() finds skb->users at 1 and does no atomic.
// - A's send, 7: atomic_read() of its sk_wmem_alloc (B's sock_wfree());
//   one step of three loads: the free pointers of its new sk_buff and
//   data (B freed them), and ksize()'s load of the data's slab page (B's
//   kfree() wrote it); the memset() of the sk_buff and shared info, five
//   lines in two batches, the first stalling; skb_set_owner_w()'s
//   atomic_add() (an invalidation, and the memset's last batch);
//   unix_state_lock() of B's socket (the data copy's store waits in the
//   store buffer with it); B's socket flags; skb_queue_tail()'s lock of
//   B's queue (B's skb_unlink() took it). sock_def_readable() then finds
//   the queue's line, which A took in unix_write_space(), and no sleeper,
//   and vfs_write()'s smp_mb() nothing to wait for.
TEST(UnixSocket, MetadataLinesCostTwentyThreeTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Socketpair, Lines::Channel), 23.0, 0.1);
}

// With pipe_lines, each message of this ping-pong stalls on 11 transfers
// across the sockets (v4.0's fs/pipe.c, hw::LineStalls' rule). The writer
// W, 5: __pipe_lock()'s locked decrement (the reader R held the mutex
// last); pipe->readers, nrbufs and curbuf loaded; __pipe_unlock()'s
// locked increment, which waits for the stores left in the store buffer
// (the recycled page R read, one line for 4 bytes; the new slot R emptied;
// nrbufs and tmp_page, a line W shares with R after its load); the wakeup
// loads R's entry (the queue's lock is on the mutex's line, which W
// holds); sb_start_write_trylock()'s smp_mb() waits for the store
// unlinking it. R, 5: finish_wait() loads its entry, pipe_lock() the
// mutex, then nrbufs and curbuf, the slot at curbuf, and __pipe_unlock()
// waits for the stores to the slot and to nrbufs/curbuf/tmp_page. And R,
// going to sleep again on its next read, 1: DEFINE_WAIT()'s store to its
// entry (W unlinked it), waited for by prepare_to_wait()'s lock; charged
// before the sleep, on R's time, not the round trip's.
TEST(Pipe, MetadataLinesCostElevenTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Pipes, Lines::Channel), 11.0, 0.1);
}

// anon_pipe_buf_release() keeps one released page as pipe->tmp_page, and
// pipe_write() takes it for the first new buffer only; the others come
// from alloc_page(), whose pages hold no other CPU's lines. So a write that
// fills four buffers right after the reader released one pays for the
// reader's lines of one page, as a one-page write does. No cost jitter
// here, so the two runs' line charges compare exactly.
namespace {
Co<void> write_then_write_again(Proc& p, Fd* data, Fd* ack, int64_t second) {
  co_await p.sched_setaffinity(only(0));
  co_await workload::sys_write(p, *data, 4096);
  co_await workload::sys_read(p, *ack, 1);  // the reader has released the page
  co_await workload::sys_write(p, *data, second);
}
Co<void> read_page_and_ack(Proc& p, Fd* data, Fd* ack) {
  co_await p.sched_setaffinity(only(1));
  co_await workload::sys_read(p, *data, 4096);
  co_await workload::sys_write(p, *ack, 1);
}
// The syscall work the pipe's lines add to that scenario.
int64_t pipe_line_work(int64_t second_write) {
  int64_t work[2] = {0, 0};
  for (int lines = 0; lines < 2; ++lines) {
    hw::MachineProfile profile = hw::load_machine("2s1c1t");
    profile.costs.cost_jitter_permille = 0;
    hw::Machine machine(profile);
    kernel::Kernel k(machine, TinySim::make_config("linux-4.0", "", {lines ? "pipe_lines=1" : "pipe_lines=0"}), 1);
    Fd data[2], ack[2];
    workload::make_pipe(k.config(), data);
    workload::make_pipe(k.config(), ack);
    k.spawn("writer", [&](Proc& p) { return write_then_write_again(p, &data[1], &ack[0], second_write); }, 0);
    k.spawn("reader", [&](Proc& p) { return read_page_and_ack(p, &data[0], &ack[1]); }, 1);
    EXPECT_EQ(k.run(10LL * 1000 * 1000 * 1000, 50000000).outcome, kernel::RunResult::Outcome::Completed);
    work[lines] = k.work_by_path()[static_cast<size_t>(kernel::CostPath::Syscall)];
  }
  return work[1] - work[0];
}
}  // namespace

TEST(Pipe, MetadataLinesChargeTheRecycledPageOncePerRelease) {
  const int64_t remote = hw::load_machine("2s1c1t").costs.line_transfer_remote;
  const int64_t one_page = pipe_line_work(4096), four_pages = pipe_line_work(4 * 4096);
  // The tmp_page copy: 64 lines in 16 batches, 15 of them stalling.
  EXPECT_GE(one_page, 15 * remote);
  EXPECT_EQ(four_pages, one_page);
}

// ttwu_lines (kernel/sched_lines.hpp): the scheduler's own lines.
TEST(TtwuLines, CostNothingWhenBothEndsShareACpu) { expect_same_run_on_one_cpu(Channel::Pipes, Lines::Scheduler); }

// Across sockets v4.0 queues the wakeup (TTWU_QUEUE): each message of this
// ping-pong stalls on 11 transfers, one per step of the dependency chains
// (kernel/sched_lines.hpp). Say A on CPU 0 wakes B, which went to sleep on
// CPU 1, idle since:
// - A's try_to_wake_up(), 6: B's pi_lock (B's sched_submit_work() read
//   its line); B's state and on_rq lines with CPU 1's min_vruntime,
//   loaded together; B's thread_info (task_cpu()); llist_add()'s cmpxchg
//   on CPU 1's wake list, which waits for the stores of TASK_WAKING and
//   se->vruntime; rq->idle; the idle task's stack pointer;
// - CPU 1's sched_ttwu_pending(), 3: the wake list taken back; B's wake
//   entry with the enqueue's lines A wrote (the entity, ttwu_stat()'s
//   line) and the cfs_rq line A read; B's on_rq and state stores, drained
//   by the next rq->lock;
// - B going to sleep again on CPU 1, 2: sched_submit_work() reads the
//   line of B's pi_lock, which A took; clear_tsk_need_resched()'s locked
//   store to B's thread_info, which A read.
TEST(TtwuLines, QueuedWakeupAcrossSocketsStallsOnElevenTransfersAMessage) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Pipes, Lines::Scheduler), 11.0, 0.1);
}

// Within an LLC the waker enqueues B itself on CPU 1's runqueue: 12 a
// message.
// - A's try_to_wake_up(), 6: the same first three steps; CPU 1's
//   rq->lock, which waits for the two stores; the enqueue (clock, load
//   sums, cfs_rq, B's on_rq line and statistics, rq->curr, together); the
//   idle task's stack pointer (resched_curr());
// - CPU 1 picking B, 3: the lock; the clock, cfs_rq and load sums; B's
//   lines A wrote (run_node, entity, statistics);
// - B going to sleep again, 3: its pi_lock line; cfs_rq_of(se), on the
//   line A's ttwu_stat() wrote; the locked clear of need_resched, with
//   the store to B's on_rq line, which A shares.
TEST(TtwuLines, WakeupWithinAnLlcStallsOnTwelveTransfersAMessage) {
  const int loops = 1000;
  const int64_t extra = pinned_pingpong_run(Channel::Pipes, "1s2c1t", 0, 1, loops, Lines::Scheduler).sched_work_ns -
                        pinned_pingpong_run(Channel::Pipes, "1s2c1t", 0, 1, loops, Lines::None).sched_work_ns;
  const double per_message = static_cast<double>(extra) / (2.0 * loops) /
                             static_cast<double>(hw::load_machine("1s2c1t").costs.line_transfer_llc);
  EXPECT_NEAR(per_message, 12.0, 0.1);
}

// The costing by dependency chain, on lines CPU 1 wrote last: the waker
// stalls once per step, however many lines a step loads.
TEST(TtwuLines, AQueuedWakeupStallsOncePerStepNotPerLine) {
  const hw::Machine m(hw::load_machine("2s1c1t"));
  const int64_t remote = m.costs().line_transfer_remote;
  auto written_by_cpu1 = [&](kernel::TaskLines& p, kernel::RqLines& rq) {
    for (hw::CacheLine* l : {&p.state, &p.thread_info, &p.on_rq, &p.se, &p.links, &p.stats, &p.pi_lock, &rq.lock,
                             &rq.load, &rq.cfs, &rq.curr, &rq.clock, &rq.wake_list, &rq.idle_task})
      l->write(m, 1);
  };
  kernel::TaskLines p;
  kernel::RqLines rq;
  written_by_cpu1(p, rq);
  // pi_lock; state, on_rq and min_vruntime together; thread_info; the wake
  // list with the buffered stores; rq->idle; the idle task's stack.
  EXPECT_EQ(kernel::sched_lines::wake_by_queue(m, {0, p, rq, rq, false}, true, true), 6 * remote);
  written_by_cpu1(p, rq);
  // 3.10 has no set_nr_if_polling(): no rq->idle, no idle task.
  EXPECT_EQ(kernel::sched_lines::wake_by_queue(m, {0, p, rq, rq, false}, true, false), 4 * remote);
  written_by_cpu1(p, rq);
  // A migrating wakeup adds the locked add to the old queue's removed_load.
  EXPECT_EQ(kernel::sched_lines::wake_by_queue(m, {0, p, rq, rq, true}, false, true), 5 * remote);
}

TEST(TtwuLines, On24CostNothingWhenBothEndsShareACpu) {
  expect_same_run_on_one_cpu(Channel::Pipes, Lines::Scheduler, "linux-2.4.19");
}
// 2.4's own scheduler lines (the ttwu_lines switch on linux24: 2.4.19's
// kernel/sched.c). A ping-pong without pauses changes its course with
// them (a wakee still in schedule() is picked again, never having left its
// CPU), so each side here thinks 50 us before it replies: the reader has
// always gone idle when the writer's asynchronous wakeup comes. Per
// message, 11 transfers. The waker, 5: the wakee's goodness line, loaded
// before the lock (state; the wakee's CPU wrote it when it slept);
// nr_running (its dequeue there); reschedule_idle()'s cpu_curr() of the
// wakee's CPU and that CPU's idle task's need_resched; and the unlock,
// which waits for the stores (the wakee's state and run_list.prev, the old
// first task's run_list.prev). The waker's own sleep then finds every line
// at home. The wakee's CPU, leaving idle, 6: runqueue_lock and
// runqueue_head, the waker's; at the unlock, the stores of its
// aligned_data (the waker read it) and of task_set_cpu() (the waker wrote
// the goodness line); after it, kstat.context_swtch, loaded and stored (the
// waker's CPU switched last), the store drained by switch_mm()'s locked
// operation; and the wakee's active_mm line, which add_to_runqueue() wrote.
// Since stop 75's split of generic's wakeup and switch (a dearer wakeup)
// the waker reaches its own sleep about as the wakee's CPU, leaving idle,
// reaches schedule(); where the wakee's CPU took runqueue_lock first, the
// waker's sleep paid for the lines again (11.12 transfers a message).
// Since stop 86 the idle loop's schedule() follows the reschedule IPI's
// handler, as it does in the kernel (Kernel::irq_exit()), and the waker's
// sleep comes first: 11.00, the count above.
namespace {
Co<void> thinking_pingpong(Proc& p, int cpu, Fd* in, Fd* out, int loops, bool first) {
  co_await p.sched_setaffinity(only(cpu));
  for (int i = 0; i < loops; ++i) {
    if (first) co_await workload::sys_write(p, *out, 4);
    co_await workload::sys_read(p, *in, 4);
    co_await p.user(50000);
    if (!first) co_await workload::sys_write(p, *out, 4);
  }
}
// The scheduler's work with ttwu_lines minus without, per message, in
// transfers across the sockets.
double sched_transfers_per_thinking_message_24() {
  const int loops = 1000;
  int64_t work[2] = {0, 0};
  for (int lines = 0; lines < 2; ++lines) {
    TinySim s("2s1c1t", "linux-2.4.19", 1, "", {"pipe_lines=1", std::string("ttwu_lines=") + (lines ? "1" : "0")});
    Fd a[2], b[2];
    workload::make_pipe(s.k.config(), a);
    workload::make_pipe(s.k.config(), b);
    s.k.spawn("ping", [&](Proc& p) { return thinking_pingpong(p, 0, &b[0], &a[1], loops, true); }, 0);
    s.k.spawn("pong", [&](Proc& p) { return thinking_pingpong(p, 1, &a[0], &b[1], loops, false); }, 1);
    EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
    EXPECT_EQ(s.k.check_invariants(), "");
    const auto& w = s.k.work_by_path();
    for (auto path : {kernel::CostPath::Wakeup, kernel::CostPath::RqLock, kernel::CostPath::Schedule,
                      kernel::CostPath::ContextSwitch})
      work[lines] += w[static_cast<size_t>(path)];
  }
  return static_cast<double>(work[1] - work[0]) / (2.0 * loops) /
         static_cast<double>(hw::load_machine("2s1c1t").costs.line_transfer_remote);
}
}  // namespace
TEST(TtwuLines, On24CostElevenTransfersPerPipeMessageAcrossSockets) {
  EXPECT_NEAR(sched_transfers_per_thinking_message_24(), 11.0, 0.05);
}

TEST(UnixSocket, MetadataLinesOn24CostNothingWhenBothEndsShareACpu) {
  expect_same_run_on_one_cpu(Channel::Socketpair, Lines::Channel, "linux-2.4.19");
}
// On 2.4 (2.4.19's net/unix/af_unix.c, net/core/sock.c, net/core/skbuff.c,
// kernel/fork.c, fs/read_write.c) each message of this ping-pong stalls on
// 18 transfers across the sockets. Say A has sent B a message; B, asleep
// in unix_stream_data_wait(), runs and replies.
// - B waking, 5: read_lock() of its state lock (A's send read-locked it);
//   clear_bit() on its socket's flags (A's wakeup took the wait queue's
//   lock on that line); skb_queue_len() on its queue head's line (A's
//   skb_queue_tail()); shutdown, on its refcount's line (A's sock_hold()
//   and sock_put()); remove_wait_queue()'s store to the queue's list head
//   (A's waitqueue_active() loaded it), waited for by read_unlock().
// - B consuming it, 10: skb_dequeue()'s lock of its queue, on the head's
//   line (A's); the sk_buff's first line; its other two, one batch;
//   sock_wfree()'s atomic_sub() on A's wmem_alloc (A's queue head line),
//   which waits for the stores unlinking the skb and of skb_pull();
//   unix_write_space() on A's socket: the queue's list head, its lock (on
//   A's socket flags line) and A's entry, A sleeping there for the reply;
//   sock_put() of A's socket; skb_release_data()'s shared info;
//   dcache_lock after the read.
// - B's reply, 2: skb_set_owner_w()'s sock_hold() of its own socket (A's
//   send held and put it), which waits for the store to the shared info of
//   the data object A wrote last; unix_state_rlock() of A's socket (A's
//   read side took it), which waits for the data copy's stores. The rest
//   finds A's lines at home since B's receive, and A woken already.
// - B going to sleep again, 1: DECLARE_WAITQUEUE()'s store to its entry
//   (A loaded it), waited for by add_wait_queue()'s lock.
TEST(UnixSocket, MetadataLinesOn24CostEighteenTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Socketpair, Lines::Channel, "linux-2.4.19"), 18.0, 0.1);
}

TEST(Pipe, MetadataLinesOn24CostNothingWhenBothEndsShareACpu) {
  expect_same_run_on_one_cpu(Channel::Pipes, Lines::Channel, "linux-2.4.19");
}
// 2.4.19's pipe (fs/pipe.c, with kernel/sched.c's __wake_up(), kernel/fork.c's
// wait-queue calls and fs/read_write.c's dnotify_parent()) moves 8 lines per
// message of this ping-pong across the sockets. The writer W, 4: down()
// on i_sem's line, which the reader R took last; the pipe_inode_info line
// R wrote (readers, len); the wakeup's lock of the queue, on that line,
// which waits for the stores of len and of the page line R read (one
// line for 4 bytes, at the page's start again); R's wait entry. The
// reader, 4: remove_wait_queue()'s lock of the pipe_inode_info line, and
// down(), both W's now; dcache_lock after the transfer (W took it after
// its own read, on the other pipe, and R's write on the other pipe finds
// it at home); and going to sleep again on its next read, DECLARE_WAITQUEUE()'s
// store to its entry (W loaded it), waited for by add_wait_queue()'s lock.
TEST(Pipe, MetadataLinesOn24CostEightTransfersPerPingPongMessageAcrossSockets) {
  EXPECT_NEAR(transfers_per_message_across_sockets(Channel::Pipes, Lines::Channel, "linux-2.4.19"), 8.0, 0.1);
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


namespace {
// 200 pipe round trips started on `ping_cpu` and `pong_cpu` of two cores
// with two threads (cores {0,2} and {1,3}); the simulated time they took.
int64_t pipe_pair_ns(int ping_cpu, int pong_cpu) {
  TinySim s("1s2c2t", "linux-4.0");
  Fd a[2], b[2];
  workload::make_pipe(s.k.config(), a);
  workload::make_pipe(s.k.config(), b);
  s.k.spawn("ping", [&](Proc& p) { return testsupport::pinger(p, &b[0], &a[1], 200, true); }, ping_cpu);
  s.k.spawn("pong", [&](Proc& p) { return testsupport::pinger(p, &a[0], &b[1], 200, false); }, pong_cpu);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  return s.k.now_ns();
}
}  // namespace

// A pipe pair on one core's two threads finishes before a pair on two cores
// of the socket: the pipe's lines move between the threads through the
// core's own L1 and L2 (the profile's line_transfer_smt against
// line_transfer_llc). Stop 36 traced 5.4's pipe slowdown to this.
TEST(Pipe, PairOnOneCoresThreadsFinishesBeforeAPairOnTwoCores) {
  EXPECT_LT(pipe_pair_ns(0, 2), pipe_pair_ns(0, 1));
}

namespace {
// A writer on CPU 0 fills a pipe and blocks on message 641; 1 ms in, a
// reader on CPU 1 reads every message. Returns how often the writer went to
// sleep in pipe_write().
int writer_sleeps_on_a_full_pipe(const std::string& features) {
  TinySim s("1s2c1t", "linux-4.0", 1, features);
  Fd fds[2];
  workload::make_pipe(s.k.config(), fds);
  constexpr int kMessages = 660;
  kernel::Task* writer_task = s.k.spawn("writer", [&](Proc& p) -> Co<void> {
    for (int i = 0; i < kMessages; ++i) co_await workload::sys_write(p, fds[1], 100);
  }, 0);
  s.k.spawn("reader", [&](Proc& p) -> Co<void> {
    co_await p.nanosleep(1000000);
    for (int i = 0; i < kMessages; ++i) EXPECT_EQ(co_await workload::sys_read(p, fds[0], 100), 100);
  }, 1);
  struct WriterSleeps final : obs::Observer {
    const kernel::Task* writer = nullptr;
    int n = 0;
    void on_switch(int64_t, int, const kernel::Task* prev, obs::PrevState st, const kernel::Task*) override {
      if (prev == writer && st == obs::PrevState::Sleeping) ++n;
    }
  } sleeps;
  sleeps.writer = writer_task;
  s.k.add_observer(&sleeps);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed) << features;
  return sleeps.n;
}
}  // namespace

// 4.0's pipe_read() wakes writers only when it empties a page, so the
// writer sleeps once, until 40 reads have freed the first page. v5.5's
// (PIPE_V55) wakes one writer on every read that began with the pipe full,
// so the writer is woken while the first page still holds messages, finds
// the pipe full, and sleeps again: many times before the page frees.
TEST(Pipe, V55WakesAWriterOnEveryReadOfAFullPipe) {
  EXPECT_EQ(writer_sleeps_on_a_full_pipe(""), 1);
  EXPECT_GE(writer_sleeps_on_a_full_pipe("PIPE_V55"), 5);
}

// The capacity is the same: 16 pages of 40 merged 100-byte writes.
TEST(Pipe, V55HoldsSixHundredFortyMessages) {
  TinySim s("1s2c1t", "linux-4.0", 1, "PIPE_V55");
  Fd fds[2];
  workload::make_pipe(s.k.config(), fds);
  int written = 0;
  s.k.spawn("writer", [&](Proc& p) { return writer(p, &fds[1], &written, 100); }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Deadlock);
  EXPECT_EQ(written, 640);
}

// unix_send_tail: the part of a write after its last skb's sk_data_ready()
// (the rest of the wait queue's walk, sock_def_readable(),
// unix_stream_sendmsg() and vfs_write()), after the wakeup's own rest,
// ttwu_tail. A reader asleep on the socket, with a lead over the writer
// past the wakeup granularity, preempts it at the write's return: its
// sched_wakeup comes the two tails before the switch to it. A pipe's
// write has no tail of its own after its wakeup in the model, so there the
// reader waits for the wakeup's rest alone. On the emulated machine's
// profile both are measured; where a profile has neither the switch
// follows the wakeup at once.
namespace {
struct WakeupToSwitch final : obs::Observer {
  int reader_pid = -1;
  int64_t woken_at = -1, switched_at = -1;
  void on_wakeup(int64_t t, int, const kernel::Task* p, int, bool) override {
    if (p->pid == reader_pid && woken_at < 0) woken_at = t;
  }
  void on_switch(int64_t t, int, const kernel::Task*, obs::PrevState, const kernel::Task* next) override {
    if (next && next->pid == reader_pid && woken_at >= 0 && switched_at < 0) switched_at = t;
  }
};
int64_t wakeup_to_switch_ns(const std::string& machine, bool socket = true) {
  TinySim s(machine, "linux-4.0");
  Fd fds[2];
  if (socket)
    workload::make_socketpair(s.k.config(), fds);
  else
    workload::make_pipe(s.k.config(), fds);
  WakeupToSwitch seen;
  s.k.add_observer(&seen);
  kernel::Task* reader = s.k.spawn("reader", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only(0));
    co_await workload::sys_read(p, fds[0], 100);
  }, 0);
  seen.reader_pid = reader->pid;
  s.k.spawn("writer", [&](Proc& p) -> Co<void> {
    co_await p.sched_setaffinity(only(0));
    co_await p.user(20000000);  // 20 ms ahead of the reader in vruntime
    co_await workload::sys_write(p, fds[1], 100);
    co_await p.user(1000000);
  }, 0);
  EXPECT_EQ(s.run().outcome, kernel::RunResult::Outcome::Completed);
  EXPECT_GE(seen.switched_at, 0) << machine;
  return seen.switched_at - seen.woken_at;
}
}  // namespace

TEST(UnixSocket, AWakeeThatPreemptsItsWriterWaitsForTheWritesTail) {
  const auto& c = hw::load_machine("qemu-tcg-2s1c").costs;
  ASSERT_GT(c.unix_send_tail, 0);
  ASSERT_GT(c.ttwu_tail, 0);
  const int64_t tail = c.ttwu_tail + c.unix_send_tail;
  const int64_t waited = wakeup_to_switch_ns("qemu-tcg-2s1c");
  EXPECT_GE(waited, tail * 97 / 100);  // the cost jitter is +-2%
  EXPECT_LE(waited, tail * 103 / 100 + 500);
  const int64_t on_a_pipe = wakeup_to_switch_ns("qemu-tcg-2s1c", false);
  EXPECT_GE(on_a_pipe, c.ttwu_tail * 97 / 100);
  EXPECT_LE(on_a_pipe, c.ttwu_tail * 103 / 100 + 500);
  EXPECT_EQ(hw::load_machine("generic").costs.unix_send_tail, 0);
  EXPECT_EQ(hw::load_machine("generic").costs.ttwu_tail, 0);
  EXPECT_EQ(wakeup_to_switch_ns("generic"), 0);
  EXPECT_EQ(wakeup_to_switch_ns("generic", false), 0);
}
