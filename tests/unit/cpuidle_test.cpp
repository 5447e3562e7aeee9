// The menu governor (drivers/cpuidle/governors/menu.c, v4.0) on the Haswell
// state table: POLL, C1 2/2, C1E 10/20, C3 33/100, C6 133/400 (exit/target us).
#include <gtest/gtest.h>

#include "kernel/cpuidle_menu.hpp"

namespace {

using kernel::MenuGovernor;

enum { POLL, C1, C1E, C3, C6 };

MenuGovernor haswell() {
  return MenuGovernor({{0, 0, true}, {2, 2, false}, {10, 20, false}, {33, 100, false}, {133, 400, false}});
}

// Eight idle periods of `residency_us` each, entered with the tick
// `next_timer_us` away; returns the state chosen for the ninth.
int after_pattern(MenuGovernor& g, uint32_t residency_us, uint32_t next_timer_us, unsigned long load) {
  for (int i = 0; i < 8; ++i) {
    g.select(next_timer_us, 0, load);
    g.reflect(residency_us);
  }
  return g.select(next_timer_us, 0, load);
}

TEST(Menu, DefaultsToC1NotPolling) {
  // No history: the typical interval of eight zeros predicts 0 us, so no
  // state's target residency fits, and menu falls back to C1, not POLL.
  auto g = haswell();
  EXPECT_EQ(g.select(1000, 0, 0), C1);
}

TEST(Menu, PollsOnlyWhenTheTimerIsVerySoon) {
  auto g = haswell();
  EXPECT_EQ(g.select(5, 0, 0), POLL);
}

TEST(Menu, ARegularLongIdleGoesDeepOnAnUnloadedCpu) {
  auto g = haswell();
  EXPECT_EQ(after_pattern(g, 500, 1000, 0), C6);
  // The pattern was measured in C1: its 2 us exit latency is deducted.
  EXPECT_EQ(g.predicted_us(), 498u);
}

TEST(Menu, LoadRaisesTheBarForExitLatency) {
  // The same 500 us pattern: performance_multiplier = 1 + 2 * loadavg, with
  // cpu_load[0] read as a load average (FSHIFT 11). One nice-0 task (1024)
  // gives 11; twelve give 121, leaving only C1.
  auto one_task = haswell();
  EXPECT_EQ(after_pattern(one_task, 500, 1000, 1024), C3);
  auto twelve_tasks = haswell();
  EXPECT_EQ(after_pattern(twelve_tasks, 500, 1000, 12 * 1024), C1);
}

TEST(Menu, ShortIrregularIdlesStayShallow) {
  // Idle periods alternating 5 and 60 us are not "typical" (stddev too
  // large); the next-timer predictor learns their ratio to the tick distance.
  auto g = haswell();
  for (int i = 0; i < 64; ++i) {
    g.select(1000, 0, 0);
    g.reflect(i % 2 ? 60 : 5);
  }
  const int s = g.select(1000, 0, 0);
  EXPECT_LE(s, C1E);
  EXPECT_LT(g.predicted_us(), 100u);
}

TEST(Menu, AnExitLatencyTrapDoesNotSustainItself) {
  // A partner wakes this CPU 13 us after it goes idle; the residency the
  // driver measures includes the exit latency of the state it was in. Menu
  // deducts it, so a CPU that starts in C1E (10 us exit, 20 us target) does
  // not keep predicting 23 us: it settles in C1.
  auto g = haswell();
  const uint32_t exit_us[] = {0, 2, 10, 33, 133};
  for (int i = 0; i < 8; ++i) {
    g.select(1000, 0, 0);
    g.reflect(23);  // history from C1E
  }
  for (int i = 0; i < 16; ++i) g.reflect(13 + exit_us[g.select(1000, 0, 0)]);
  EXPECT_EQ(g.select(1000, 0, 0), C1);
  EXPECT_EQ(g.predicted_us(), 13u);
}

}  // namespace
