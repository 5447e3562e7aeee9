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
 *   gcc -O2 -pthread -o futex-wake-all futex-wake-all.c
 *   futex-wake-all [sleepers, default 2] [rounds, default 100000]
 */
#define _GNU_SOURCE
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int generation, asleep;
static int sleepers, rounds;

static long futex(atomic_int* word, int op, int value) {
  return syscall(SYS_futex, word, op, value, NULL, NULL, 0);
}

static void* sleeper(void* unused) {
  (void)unused;
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
  if (sleepers < 1 || sleepers > 64) return 2;
  pthread_t threads[64];
  for (int i = 0; i < sleepers; ++i) pthread_create(&threads[i], NULL, sleeper, NULL);
  for (int r = 0; r < rounds; ++r) {
    int counted;
    while ((counted = atomic_load(&asleep)) < sleepers) futex(&asleep, FUTEX_WAIT_PRIVATE, counted);
    sched_yield();  /* each has counted itself; let it reach FUTEX_WAIT */
    atomic_store(&asleep, 0);
    atomic_fetch_add(&generation, 1);
    futex(&generation, FUTEX_WAKE_PRIVATE, INT_MAX);
  }
  for (int i = 0; i < sleepers; ++i) pthread_join(threads[i], NULL);
  return 0;
}
