/*
 * One thread wakes its sleepers with one FUTEX_WAKE of all of them a round,
 * then waits until every one is back asleep: futex_wake() queues them and
 * wake_up_q() calls try_to_wake_up() for each in turn, so between one
 * wakee's sched_wakeup line and the next one's sched_waking line lies the
 * rest of the first try_to_wake_up() after its activation (the unlocks,
 * ttwu_stat()), wake_up_q()'s step and the second call's start up to its
 * tracepoint, with nothing of a system call's (tools/probes/
 * host-wakeup-remainder.sh).
 *
 * Under an emulator a first wakee tends to go to the idle CPU or to preempt
 * its waker, and the span is lost; run pinned to one CPU with the sleepers
 * at nice 19 (a wakee that light does not preempt: wakeup_gran() scales
 * by its weight) and the waker pausing until they are all in FUTEX_WAIT:
 * `taskset -c 1 futex-wake-all 2 10000 19 200`.
 *
 *   gcc -O2 -pthread -o futex-wake-all futex-wake-all.c
 *   futex-wake-all [sleepers, default 2] [rounds, default 100000]
 *                  [the sleepers' nice, default 0] [pause in us, default 0: a sched_yield()]
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static atomic_int generation, asleep;
static int sleepers, rounds, sleeper_nice, pause_us;

static long futex(atomic_int* word, int op, int value) {
  return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

static void* sleeper(void* unused) {
  (void)unused;
  if (sleeper_nice) setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), sleeper_nice);
  for (int r = 0; r < rounds; ++r) {
    const int g = atomic_load(&generation);
    if (atomic_fetch_add(&asleep, 1) + 1 == sleepers) futex(&asleep, FUTEX_WAKE_PRIVATE, 1);
    while (atomic_load(&generation) == g) futex(&generation, FUTEX_WAIT_PRIVATE, g);
  }
  return NULL;
}

int main(int argc, char** argv) {
  sleepers = argc > 1 ? atoi(argv[1]) : 2;
  rounds = argc > 2 ? atoi(argv[2]) : 100000;
  sleeper_nice = argc > 3 ? atoi(argv[3]) : 0;
  pause_us = argc > 4 ? atoi(argv[4]) : 0;
  if (sleepers < 1 || sleepers > 64) return 2;
  pthread_t threads[64];
  for (int i = 0; i < sleepers; ++i) pthread_create(&threads[i], NULL, sleeper, NULL);
  for (int r = 0; r < rounds; ++r) {
    int counted;
    while ((counted = atomic_load(&asleep)) < sleepers) futex(&asleep, FUTEX_WAIT_PRIVATE, counted);
    /* each has counted itself; let it reach FUTEX_WAIT */
    if (pause_us) {
      const struct timespec pause = {0, pause_us * 1000L};
      nanosleep(&pause, NULL);
    } else {
      sched_yield();
    }
    atomic_store(&asleep, 0);
    atomic_fetch_add(&generation, 1);
    futex(&generation, FUTEX_WAKE_PRIVATE, INT_MAX);
  }
  for (int i = 0; i < sleepers; ++i) pthread_join(threads[i], NULL);
  return 0;
}
