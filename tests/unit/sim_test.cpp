#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "sim/event_queue.hpp"
#include "sim/rng.hpp"

using sim::EventQueue;
using sim::Phase;
using sim::Time;

TEST(Time, StrongTypeArithmetic) {
  EXPECT_EQ((sim::usec(3) + sim::nsec(5)).ns(), 3005);
  EXPECT_EQ((sim::msec(2) - sim::usec(1)).ns(), 1999000);
  EXPECT_LT(sim::nsec(1), sim::nsec(2));
  EXPECT_EQ(sim::sec(1).ns(), 1000000000);
}

TEST(EventQueue, OrdersByTimeThenPhaseThenSequence) {
  EventQueue q;
  std::vector<std::string> log;
  q.schedule(Time(10), Phase::Timer, [&] { log.push_back("t10-timer"); });
  q.schedule(Time(10), Phase::Hardware, [&] { log.push_back("t10-hw-a"); });
  q.schedule(Time(5), Phase::Control, [&] { log.push_back("t5"); });
  q.schedule(Time(10), Phase::Hardware, [&] { log.push_back("t10-hw-b"); });
  q.schedule(Time(10), Phase::Interrupt, [&] { log.push_back("t10-irq"); });
  EXPECT_EQ(q.run(), 5u);
  EXPECT_EQ(log, (std::vector<std::string>{"t5", "t10-hw-a", "t10-hw-b", "t10-irq", "t10-timer"}));
  EXPECT_EQ(q.now().ns(), 10);
}

TEST(EventQueue, RejectsThePastAndHonoursLimits) {
  EventQueue q;
  int n = 0;
  q.schedule(Time(100), Phase::Control, [&] { ++n; });
  q.schedule(Time(200), Phase::Control, [&] { ++n; });
  q.run(Time(150));
  EXPECT_EQ(n, 1);
  EXPECT_THROW(q.schedule(Time(50), Phase::Control, [] {}), std::logic_error);
  q.run(Time::max(), 1);
  EXPECT_EQ(n, 2);
}

TEST(EventQueue, EventsScheduledDuringRunExecuteInOrder) {
  EventQueue q;
  std::vector<int> seen;
  q.schedule(Time(1), Phase::Control, [&] {
    seen.push_back(1);
    q.schedule(Time(1), Phase::Control, [&] { seen.push_back(2); });
    q.schedule(Time(3), Phase::Control, [&] { seen.push_back(3); });
  });
  q.run();
  EXPECT_EQ(seen, (std::vector<int>{1, 2, 3}));
}

TEST(Rng, SameSeedAndNameGiveTheSameStream) {
  sim::Rng a(42, "cost-jitter"), b(42, "cost-jitter");
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u64(), b.next_u64());
}

TEST(Rng, StreamsAreIndependentByName) {
  sim::Rng a(42, "a"), b(42, "b"), c(43, "a");
  EXPECT_NE(a.next_u64(), b.next_u64());
  sim::Rng a2(42, "a");
  a2.next_u64();
  EXPECT_NE(a2.next_u64(), c.next_u64());
}

TEST(Rng, BoundedDrawsStayInRangeAndCoverIt) {
  sim::Rng r(7, "x");
  std::set<int64_t> seen;
  for (int i = 0; i < 2000; ++i) {
    const int64_t v = r.between(-3, 3);
    ASSERT_GE(v, -3);
    ASSERT_LE(v, 3);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 7u);
  int hits = 0;
  for (int i = 0; i < 10000; ++i) hits += r.chance(1, 4);
  EXPECT_NEAR(hits, 2500, 250);
  EXPECT_EQ(r.below(0), 0u);
}

// The advance listener hears each new time once, before the events at that
// time run, and never for events at the time it already reported.
TEST(EventQueue, TheAdvanceListenerHearsEachNewTimeBeforeItsEvents) {
  sim::EventQueue q;
  std::vector<std::string> log;
  q.set_advance_listener([&](sim::Time t) { log.push_back("advance " + std::to_string(t.ns())); });
  q.schedule(sim::Time(5), sim::Phase::Control, [&] { log.push_back("event 5a"); });
  q.schedule(sim::Time(5), sim::Phase::Hardware, [&] { log.push_back("event 5b"); });
  q.schedule(sim::Time(9), sim::Phase::Timer, [&] {
    log.push_back("event 9");
    q.schedule(sim::Time(9), sim::Phase::Control, [&] { log.push_back("event 9 again"); });
  });
  q.run();
  EXPECT_EQ(log, (std::vector<std::string>{"advance 5", "event 5b", "event 5a", "advance 9", "event 9",
                                           "event 9 again"}));
}

// The event queue's action type: small captures stay inline, large ones go to
// the heap, and either way a move carries the callable and its destructor
// runs exactly once.
TEST(InlineAction, RunsInlineAndHeapCallablesAndDestroysEachOnce) {
  struct Counted {
    int* runs;
    std::shared_ptr<int> alive;  // use_count() tells how many copies live
    void operator()() const { ++*runs; }
  };
  struct Big {
    int* runs;
    std::shared_ptr<int> alive;
    char pad[64] = {};
    void operator()() const { ++*runs; }
  };
  static_assert(sizeof(Counted) <= sim::InlineAction::kInlineBytes);
  static_assert(sizeof(Big) > sim::InlineAction::kInlineBytes);
  int runs = 0;
  auto token = std::make_shared<int>(0);
  {
    sim::InlineAction small(Counted{&runs, token});
    sim::InlineAction big(Big{&runs, token});
    EXPECT_EQ(token.use_count(), 3);
    sim::InlineAction moved_small(std::move(small));
    sim::InlineAction moved_big;
    moved_big = std::move(big);
    EXPECT_FALSE(small);
    EXPECT_FALSE(big);
    EXPECT_EQ(token.use_count(), 3);  // moved, not copied
    moved_small();
    moved_big();
    EXPECT_EQ(runs, 2);
    moved_small = std::move(moved_big);  // destroys the small one, takes the big one
    EXPECT_EQ(token.use_count(), 2);
    moved_small();
    EXPECT_EQ(runs, 3);
  }
  EXPECT_EQ(token.use_count(), 1);
}

// Slots are reused: an action that schedules from inside its own run (the
// slot it came from is free again by then) still runs in time order.
TEST(EventQueue, ActionsReuseSlotsWithoutDisturbingTheOrder) {
  sim::EventQueue q;
  std::vector<int64_t> seen;
  int links = 0;
  std::function<void()> chain = [&] {
    seen.push_back(q.now().ns());
    if (++links < 5) q.schedule(sim::Time(q.now().ns() + 10), sim::Phase::Hardware, [&] { chain(); });
  };
  q.schedule(sim::Time(0), sim::Phase::Hardware, [&] { chain(); });
  q.schedule(sim::Time(25), sim::Phase::Timer, [&] { seen.push_back(-25); });
  q.run();
  EXPECT_EQ(seen, (std::vector<int64_t>{0, 10, 20, -25, 30, 40}));
}

// The heap is 4-ary and hand-written: over many events, each scheduling
// more at random times, ties included, the order must be exactly the
// (time, phase, sequence) order a sorted reference gives.
TEST(EventQueue, ManyEventsRunInTheTotalOrderOfTimePhaseAndSequence) {
  struct Ref {
    int64_t at;
    int phase;
    uint64_t seq;
    bool operator<(const Ref& o) const {
      if (at != o.at) return at < o.at;
      if (phase != o.phase) return phase < o.phase;
      return seq < o.seq;
    }
  };
  EventQueue q;
  sim::Rng rng(7, "event-queue-order");
  std::set<Ref> pending;
  std::vector<uint64_t> ran, expected;
  uint64_t next_seq = 0;
  int budget = 20000;
  std::function<void(int)> add = [&](int fanout) {
    for (int i = 0; i < fanout && budget > 0; ++i, --budget) {
      const int64_t at = q.now().ns() + rng.between(0, 40);  // narrow: many ties
      const int phase = static_cast<int>(rng.between(0, 3));
      const uint64_t seq = next_seq++;
      pending.insert(Ref{at, phase, seq});
      q.schedule(Time(at), static_cast<Phase>(phase), [&, seq] {
        expected.push_back(pending.begin()->seq);
        pending.erase(pending.begin());
        ran.push_back(seq);
        add(static_cast<int>(rng.between(0, 3)));
      });
    }
  };
  add(64);
  q.run();
  EXPECT_EQ(ran.size(), 20000u);
  EXPECT_EQ(ran, expected);
}
