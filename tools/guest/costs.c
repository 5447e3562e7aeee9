/*
 * The per-call costs of the emulated machine, measured inside the guest, so
 * that a machine profile of the model can carry them (machines/qemu-tcg-2s1c.toml).
 *
 *   gcc -O2 -static -o costs tools/guest/costs.c     (run.sh does this)
 *   costs [seconds per measurement, default 2] [ms per round, default 50]
 *         [us the waking writes' writer sleeps before each batch, default 5000]
 *
 * Each measurement repeats its loop in rounds of about 50 ms (at least 5
 * rounds) for the given time and prints the median round, one line each:
 *   COST <name> <ns per unit> <unit> rounds=<n> p10=<ns> p90=<ns>
 * What each loop is, in the terms of lmbench's lat_syscall, lat_unix, lat_pipe
 * and lat_ctx, and which profile cost it gives, is docs/real-kernels.md's
 * "The emulated machine's costs". Everything runs pinned (sched_setaffinity):
 * the one-CPU loops on CPU 0, the round trips on CPU 0 alone or on CPUs 0
 * and 1.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ROUNDS 4096
#define MESSAGE 100 /* hackbench's DATASIZE */
#define LARGE 1000  /* with MESSAGE, the copy's cost per byte */
#define PIPE_TOKEN 4 /* lat_pipe's and perf bench sched pipe's token */
#define BATCH 64    /* messages queued before they are read: at most 64 KB, under the socket buffer */

static double seconds_each = 2.0;
static int64_t round_ns = 50000000;
static int64_t batch_pause_ns = 5000000;

static int64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) {
    perror("sched_setaffinity");
    exit(1);
  }
}

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static void report(const char* name, const char* unit, double* per_unit, int n) {
  qsort(per_unit, n, sizeof *per_unit, cmp_double);
  printf("COST %s %.1f %s rounds=%d p10=%.1f p90=%.1f\n", name, per_unit[n / 2], unit, n,
         per_unit[n / 10], per_unit[n * 9 / 10]);
  fflush(stdout);
}

/* Runs body(iterations) in rounds; calibrates the iterations so a round
 * takes about round_ns. */
typedef int64_t (*round_fn)(int64_t iterations, void* ctx);
static void measure(const char* name, const char* unit, round_fn body, void* ctx) {
  static double per_unit[MAX_ROUNDS];
  int64_t iterations = 16;
  while (body(iterations, ctx) < round_ns && iterations < (1LL << 30)) iterations *= 2;
  int n = 0;
  int64_t end = now_ns() + (int64_t)(seconds_each * 1e9);
  while (n < MAX_ROUNDS && (n < 5 || now_ns() < end)) per_unit[n++] = (double)body(iterations, ctx) / iterations;
  report(name, unit, per_unit, n);
}

/* lat_syscall null: getppid(), which the C library does not cache. */
static int64_t null_syscall(int64_t iterations, void* ctx) {
  (void)ctx;
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < iterations; i++) syscall(SYS_getppid);
  return now_ns() - t0;
}

/* Calls on channels that nobody waits on: BATCH writes of `size` bytes to
 * the channels in turn, then BATCH reads from them in turn; only the writes
 * or only the reads are timed. Over one channel that is one hot socket or
 * pipe; over SOCKETS, a hackbench sender writing to each of its group's
 * receivers: the footprint of a group's sockets. */
#define SOCKETS 20
struct channels {
  int write_fd[SOCKETS], read_fd[SOCKETS];
  int count;
  size_t size;
  int time_reads;
};
static int64_t channel_calls(int64_t iterations, void* ctx) {
  struct channels* ch = ctx;
  char buf[LARGE];
  memset(buf, 1, sizeof buf);
  int64_t timed = 0;
  for (int64_t done = 0; done < iterations; done += BATCH) {
    int64_t t0 = now_ns();
    for (int i = 0; i < BATCH; i++)
      if (write(ch->write_fd[i % ch->count], buf, ch->size) != (ssize_t)ch->size) exit(2);
    int64_t t1 = now_ns();
    for (int i = 0; i < BATCH; i++)
      if (read(ch->read_fd[i % ch->count], buf, ch->size) != (ssize_t)ch->size) exit(3);
    int64_t t2 = now_ns();
    timed += ch->time_reads ? t2 - t1 : t1 - t0;
  }
  return timed;
}

/* Times channel_calls' writes, then its reads, on `ch`. */
static void measure_writes_and_reads(const char* write_name, const char* read_name, struct channels* ch) {
  ch->time_reads = 0;
  measure(write_name, "ns/call", channel_calls, ch);
  if (!read_name) return;
  ch->time_reads = 1;
  measure(read_name, "ns/call", channel_calls, ch);
}

/* Reads of messages another CPU wrote, as a hackbench receiver's are when
 * its senders run elsewhere: a child pinned to CPU 1 writes BATCH messages
 * over the channels, then hands over through shared_word; only the reads,
 * on CPU 0, are timed. Set beside the reads of messages written on the
 * reading CPU (unix_stream_read_100_over_20), the difference is what taking
 * another CPU's sk_buffs costs: their lines, and freeing memory another
 * CPU allocated. Nobody sleeps: both sides spin between batches. */
static volatile int64_t* shared_word;
static int64_t reads_written_on_cpu1(int64_t iterations, void* ctx) {
  struct channels* ch = ctx;
  char buf[MESSAGE];
  memset(buf, 1, sizeof buf);
  int64_t batches = (iterations + BATCH - 1) / BATCH;
  *shared_word = 0;  /* 2b: the child writes batch b; 2b + 1: the parent reads it */
  pid_t child = fork();
  if (child == 0) {
    pin(1);
    for (int64_t b = 0; b < batches; b++) {
      while (__atomic_load_n(shared_word, __ATOMIC_ACQUIRE) != 2 * b) {}
      for (int i = 0; i < BATCH; i++)
        if (write(ch->write_fd[i % ch->count], buf, ch->size) != (ssize_t)ch->size) _exit(10);
      __atomic_store_n(shared_word, 2 * b + 1, __ATOMIC_RELEASE);
    }
    _exit(0);
  }
  int64_t timed = 0;
  for (int64_t b = 0; b < batches; b++) {
    while (__atomic_load_n(shared_word, __ATOMIC_ACQUIRE) != 2 * b + 1) {}
    int64_t t0 = now_ns();
    for (int i = 0; i < BATCH; i++)
      if (read(ch->read_fd[i % ch->count], buf, ch->size) != (ssize_t)ch->size) exit(11);
    timed += now_ns() - t0;
    __atomic_store_n(shared_word, 2 * b + 2, __ATOMIC_RELEASE);
  }
  waitpid(child, NULL, 0);
  return timed * iterations / (batches * BATCH);
}

/* Calls while the other end streams at the same time on the other CPU, as
 * a hackbench sender's and receiver's are when the two roles hold a CPU
 * each (seed 000's patch on two CPUs): a child pinned to CPU 1 writes
 * messages to one socket as fast as it can while the parent on CPU 0 reads
 * them. Neither sleeps: a call that finds the socket full or empty
 * (MSG_DONTWAIT) is retried. Only the calls that moved a message are timed,
 * each on its own, less the clock's own cost (clock_pair_ns); set beside
 * unix_stream_write_100 and unix_stream_read_100, the difference is what
 * the other end's concurrent work on the socket's lines costs. */
static double clock_pair_ns;
static void measure_clock_pair(void) {
  enum { N = 1 << 14 };
  static double pair[N];
  for (int i = 0; i < N; i++) {
    int64_t t0 = now_ns();
    pair[i] = (double)(now_ns() - t0);
  }
  qsort(pair, N, sizeof *pair, cmp_double);
  clock_pair_ns = pair[N / 2];
}
struct streaming {
  int write_fd, read_fd;
  int time_reads;
};
static volatile int64_t* streamed_write_ns;
/* Moves `iterations` messages through fd, sending or receiving, retrying
 * a call that moved nothing; returns the time of the calls that moved
 * bytes, each less the clock's own cost. The parent, which reads, gives
 * the writer's pid: should the writer die, the socket would stay empty
 * (the parent holds its write end too), so a long empty spell checks it. */
static int64_t stream_messages(int fd, int64_t iterations, int sending, pid_t writer) {
  char buf[MESSAGE];
  memset(buf, 1, sizeof buf);
  int64_t timed = 0;
  for (int64_t i = 0; i < iterations; i++) {
    for (size_t moved = 0, misses = 0; moved < MESSAGE;) {
      int64_t t0 = now_ns();
      ssize_t n = sending ? send(fd, buf + moved, MESSAGE - moved, MSG_DONTWAIT)
                          : recv(fd, buf + moved, MESSAGE - moved, MSG_DONTWAIT);
      int64_t t1 = now_ns();
      if (n > 0) moved += (size_t)n, timed += t1 - t0 - (int64_t)clock_pair_ns, misses = 0;
      else if (writer > 0 && ++misses % 100000 == 0 && waitpid(writer, NULL, WNOHANG) == writer) exit(12);
    }
  }
  return timed;
}
static int64_t streaming_calls(int64_t iterations, void* ctx) {
  struct streaming* st = ctx;
  *streamed_write_ns = -1;
  pid_t child = fork();
  if (child == 0) {
    pin(1);
    *streamed_write_ns = stream_messages(st->write_fd, iterations, 1, 0);
    _exit(0);
  }
  int64_t timed = stream_messages(st->read_fd, iterations, 0, child);
  waitpid(child, NULL, 0);
  return st->time_reads ? timed : *streamed_write_ns;
}

/* lat_pipe / lat_ctx: two processes pass a token over two pipes, pinned to
 * the given CPUs; the time is per round trip (two wakeups, two switches or
 * two idle exits). With `threads` the partner is a thread of the same
 * process (pthread_create(), CLONE_VM), so a switch between the two does not
 * change the address space: context_switch() skips switch_mm()'s CR3 load
 * (arch/x86/mm/tlb.c switch_mm_irqs_off(): "if (prev == next)"), and the
 * difference from the processes' round trip on one CPU is what the model's
 * switch_mm cost is. With `unix_socket` the token is hackbench's message (100
 * bytes) over two AF_UNIX stream socketpairs instead of pipes: the same
 * difference in the calls hackbench makes, which touch more kernel memory
 * after each switch than a pipe's. */
struct round_trip {
  int cpu_a, cpu_b;
  size_t size;
  int threads;
  int unix_socket;
  int there[2], back[2];
  int64_t iterations;
};
static void* partner(void* ctx) {
  struct round_trip* rt = ctx;
  char token[MESSAGE] = {0};
  pin(rt->cpu_b);
  for (int64_t i = 0; i < rt->iterations + 1; i++) {
    if (read(rt->there[0], token, rt->size) != (ssize_t)rt->size) _exit(5);
    if (write(rt->back[1], token, rt->size) != (ssize_t)rt->size) _exit(6);
  }
  return NULL;
}
static int64_t round_trips(int64_t iterations, void* ctx) {
  struct round_trip* rt = ctx;
  if (rt->unix_socket ? socketpair(AF_UNIX, SOCK_STREAM, 0, rt->there) || socketpair(AF_UNIX, SOCK_STREAM, 0, rt->back)
                     : pipe(rt->there) || pipe(rt->back))
    exit(4);
  rt->iterations = iterations;
  char token[MESSAGE] = {0};
  pthread_t thread;
  pid_t child = 0;
  if (rt->threads) {
    if (pthread_create(&thread, NULL, partner, rt)) exit(4);
  } else if ((child = fork()) == 0) {
    close(rt->there[1]), close(rt->back[0]);  /* so each side sees the other's exit */
    partner(rt);
    _exit(0);
  }
  pin(rt->cpu_a);
  /* one round trip first, so the partner is pinned and asleep in read() */
  if (write(rt->there[1], token, rt->size) != (ssize_t)rt->size || read(rt->back[0], token, rt->size) != (ssize_t)rt->size)
    exit(7);
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < iterations; i++) {
    if (write(rt->there[1], token, rt->size) != (ssize_t)rt->size) exit(8);
    if (read(rt->back[0], token, rt->size) != (ssize_t)rt->size) exit(9);
  }
  int64_t elapsed = now_ns() - t0;
  if (rt->threads) {
    pthread_join(thread, NULL);
    close(rt->there[0]), close(rt->back[1]);
  } else {
    close(rt->there[0]), close(rt->back[1]);
    waitpid(child, NULL, 0);
  }
  close(rt->there[1]), close(rt->back[0]);
  return elapsed;
}

/* A switch without a wakeup: two threads of this process pinned to CPU 0
 * take turns through a shared word, each calling sched_yield() until the
 * word says it is its turn; per round trip, so two switches. With two tasks
 * on the runqueue, yield_task_fair() marks the yielder the skip buddy and
 * pick_next_entity() takes the other (6.1 kernel/sched/fair.c), so every
 * yield switches; yields a round trip is printed as a check (2 when every
 * yield switched). Set beside pipe_round_trip_same_cpu_threads, the same
 * two switches with a write, a read and a wakeup each instead of a yield,
 * it splits the round trip between the switch and the wakeup on the
 * waker's side, with both paths hot. */
static int64_t yield_word, *yield_turn = &yield_word;
static int64_t yields_counted, yield_trips_counted;
struct yielding {
  int64_t iterations;
  int64_t yields;
};
static void* yielding_partner(void* ctx) {
  struct yielding* y = ctx;
  pin(0);
  for (int64_t i = 0; i < y->iterations + 1; i++) {
    while (__atomic_load_n(yield_turn, __ATOMIC_ACQUIRE) != 2 * i + 1) sched_yield(), y->yields++;
    __atomic_store_n(yield_turn, 2 * i + 2, __ATOMIC_RELEASE);
  }
  return NULL;
}
static int64_t yield_round_trips(int64_t iterations, void* ctx) {
  (void)ctx;
  struct yielding y = {.iterations = iterations};
  *yield_turn = 0;
  pin(0);
  pthread_t partner_thread;
  if (pthread_create(&partner_thread, NULL, yielding_partner, &y)) exit(12);
  int64_t mine = 0, t0 = 0;
  for (int64_t i = 0; i < iterations + 1; i++) {
    if (i == 1) t0 = now_ns(), mine = 0, y.yields = 0;  /* the first round trip starts the partner */
    __atomic_store_n(yield_turn, 2 * i + 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(yield_turn, __ATOMIC_ACQUIRE) != 2 * i + 2) sched_yield(), mine++;
  }
  int64_t elapsed = now_ns() - t0;
  pthread_join(partner_thread, NULL);
  yields_counted += mine + y.yields;
  yield_trips_counted += iterations;
  return elapsed;
}
static void measure_yield_round_trips(void) {
  yields_counted = yield_trips_counted = 0;
  measure("yield_round_trip_same_cpu_threads", "ns/round_trip", yield_round_trips, NULL);
  printf("COST yields_per_round_trip %.3f yields/round_trip\n", (double)yields_counted / (double)yield_trips_counted);
  fflush(stdout);
}

/* The waker's side of a wakeup, hot: SLEEPERS threads of this process, each
 * asleep in read() on a pipe of its own, and on CPU 0 one write of 4 B to
 * each pipe in turn, timed together; per write. Before each batch the writer
 * sleeps (nanosleep) long enough for every reader to have read its token and
 * gone back to sleep. The readers are pinned, so try_to_wake_up() skips the
 * fair class's placement (select_task_rq(): one allowed CPU). On CPU 0 they
 * run at nice 19 so that none preempts the writer (wakeup_gran() scales the
 * 2 ms granularity by the wakee's weight, 1024/15): each write pays the
 * wake-up's enqueue on its own runqueue (ttwu_do_activate()) and the
 * preemption check. On CPU 1 each write queues its reader on CPU 1's wake
 * list (6.1 ttwu_queue_cond(): the two CPUs share no cache), with one IPI
 * for as many wakeups as find the list empty; CPU 1's function-call
 * interrupts (/proc/interrupts, CAL) over the run are printed per write
 * (<name>_ipis). Without readers the same
 * writes wake nobody (the wait queues are empty): the difference is what a
 * wakeup costs its waker, apart from the placement. */
#define SLEEPERS 32
struct sleepers {
  int cpu;  /* -1: no readers */
  int fds[SLEEPERS][2];
  int index[SLEEPERS];
};
static struct sleepers sleepers;
static void* sleeping_reader(void* ctx) {
  int i = *(int*)ctx;
  pin(sleepers.cpu);
  if (sleepers.cpu == 0 && setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) != 0) exit(10);
  char token[PIPE_TOKEN];
  while (read(sleepers.fds[i][0], token, sizeof token) == (ssize_t)sizeof token) {}
  return NULL;
}
/* CPU 1's count of function-call interrupts (/proc/interrupts "CAL:"), which
 * the wake list's IPIs are (send_call_function_single_ipi()); -1 if unread. */
static long long call_interrupts_cpu1(void) {
  FILE* f = fopen("/proc/interrupts", "r");
  if (!f) return -1;
  char line[4096];
  long long count = -1;
  while (fgets(line, sizeof line, f)) {
    long long cpu0, cpu1;
    if (sscanf(line, " CAL: %lld %lld", &cpu0, &cpu1) == 2) count = cpu1;
  }
  fclose(f);
  return count;
}
static void measure_waking_writes(const char* name, int cpu) {
  enum { MAX_BATCHES = 1 << 12 };
  static double per_write[MAX_BATCHES];
  pthread_t reader[SLEEPERS];
  sleepers.cpu = cpu;
  for (int i = 0; i < SLEEPERS; i++) {
    sleepers.index[i] = i;
    if (pipe(sleepers.fds[i])) exit(11);
    if (cpu >= 0 && pthread_create(&reader[i], NULL, sleeping_reader, &sleepers.index[i])) exit(12);
  }
  pin(0);
  /* 5 ms by default: under TCG every reader is back asleep long before. On
   * a native machine the sleepers' data goes cold in its caches over 5 ms
   * and the wakeups pay for that; 200 us (the third argument) keeps it warm. */
  const struct timespec pause = {batch_pause_ns / 1000000000, batch_pause_ns % 1000000000};
  char token[PIPE_TOKEN] = {0};
  int n = 0;
  const long long calls_before = call_interrupts_cpu1();
  int64_t end = now_ns() + (int64_t)(seconds_each * 1e9);
  while (n < MAX_BATCHES && (n < 50 || now_ns() < end)) {
    nanosleep(&pause, NULL);
    int64_t t0 = now_ns();
    for (int i = 0; i < SLEEPERS; i++)
      if (write(sleepers.fds[i][1], token, sizeof token) != (ssize_t)sizeof token) exit(13);
    per_write[n++] = (double)(now_ns() - t0) / SLEEPERS;
    if (cpu < 0)
      for (int i = 0; i < SLEEPERS; i++)
        if (read(sleepers.fds[i][0], token, sizeof token) != (ssize_t)sizeof token) exit(14);
  }
  const long long calls = call_interrupts_cpu1() - calls_before;
  for (int i = 0; i < SLEEPERS; i++) close(sleepers.fds[i][1]);
  for (int i = 0; i < SLEEPERS; i++) {
    if (cpu >= 0) pthread_join(reader[i], NULL);
    close(sleepers.fds[i][0]);
  }
  report(name, "ns/call", per_write, n);
  if (cpu == 1 && calls_before >= 0)
    printf("COST %s_ipis %.3f ipis/call\n", name, (double)calls / ((double)n * SLEEPERS)), fflush(stdout);
}

/* How long a wakeup takes to get its wakee running on CPU 1 while CPU 1 is
 * busy: the writer on CPU 0 stamps the time and writes 8 B to a pipe; the
 * reader, pinned to CPU 1 and asleep in read(), stamps the time it returns
 * (the clock is one across CPUs). CPU 1 runs a spinner at nice 19 in user
 * mode, so the reader (nice 0) preempts it at once: check_preempt_wakeup()
 * compares the spinner's vruntime lead with the wakee's wakeup_gran(), and
 * at nice 19 the spinner's vruntime runs 68 times as fast. Without the
 * spinner CPU 1 is halted and the wakeup pays its exit (idle). The gap is
 * the write up to its wakeup, try_to_wake_up() and the wake list's IPI,
 * its delivery to a running virtual CPU, the handler's activation and
 * preemption check, the switch, and the rest of the read: each sample is
 * one wakeup, the writer pausing 200 us between them so the reader is
 * back asleep. Reader and spinner are threads of one process, so the
 * switch loads no other address space (no switch_mm). */
static volatile int64_t *woken_at, *woken_seq;
static volatile int stop_spinning;
static int threads_ready;  /* pinned (and the spinner at nice 19): the samples may start */
static int wake_fds[2];
static void* spinner(void* ctx) {
  (void)ctx;
  pin(1);
  if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) != 0) exit(15);
  __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
  while (!stop_spinning) {}
  return NULL;
}
static void* woken_reader(void* ctx) {
  (void)ctx;
  pin(1);
  __atomic_add_fetch(&threads_ready, 1, __ATOMIC_RELEASE);
  int64_t seq;
  while (read(wake_fds[0], &seq, sizeof seq) == (ssize_t)sizeof seq) {
    *woken_at = now_ns();
    __atomic_store_n(woken_seq, seq, __ATOMIC_RELEASE);
  }
  return NULL;
}
static void measure_wakeup_to_run(const char* name, int busy) {
  enum { MAX_WAKEUPS = 1 << 14 };
  static double latency[MAX_WAKEUPS];
  pthread_t reader, spin;
  stop_spinning = 0;
  threads_ready = 0;
  *woken_seq = -1;
  if (pipe(wake_fds)) exit(16);
  if (pthread_create(&reader, NULL, woken_reader, NULL)) exit(17);
  if (busy && pthread_create(&spin, NULL, spinner, NULL)) exit(18);
  pin(0);
  /* The threads start on this CPU: until each has moved itself to CPU 1
   * a sample could find CPU 1 idle or this writer preempted. Sleeping
   * lets them run. */
  const struct timespec ms = {0, 1000000};
  while (__atomic_load_n(&threads_ready, __ATOMIC_ACQUIRE) < 1 + busy) nanosleep(&ms, NULL);
  int n = 0;
  int64_t end = now_ns() + (int64_t)(seconds_each * 1e9);
  for (int64_t seq = 0; n < MAX_WAKEUPS && (n < 50 || now_ns() < end); seq++) {
    for (int64_t until = now_ns() + 200000; now_ns() < until;) {}
    int64_t t0 = now_ns();
    if (write(wake_fds[1], &seq, sizeof seq) != (ssize_t)sizeof seq) exit(19);
    while (__atomic_load_n(woken_seq, __ATOMIC_ACQUIRE) != seq) {}
    if (seq > 0) latency[n++] = (double)(*woken_at - t0);  /* the first wakes a reader not yet asleep */
  }
  close(wake_fds[1]);
  pthread_join(reader, NULL);
  close(wake_fds[0]);
  stop_spinning = 1;
  if (busy) pthread_join(spin, NULL);
  report(name, "ns/wakeup", latency, n);
}

/* A cache line passed between CPUs 0 and 1: two processes take turns
 * storing into one shared word, each spinning until the other's store
 * arrives (core-to-core-latency's ping-pong); per round trip, so two
 * transfers of the line. */
static int64_t line_round_trips(int64_t iterations, void* ctx) {
  (void)ctx;
  *shared_word = -1;
  pid_t child = fork();
  if (child == 0) {
    pin(1);
    __atomic_store_n(shared_word, 0, __ATOMIC_RELEASE);  /* pinned and ready */
    for (int64_t i = 0; i < iterations; i++) {
      while (__atomic_load_n(shared_word, __ATOMIC_ACQUIRE) != 2 * i + 1) {}
      __atomic_store_n(shared_word, 2 * i + 2, __ATOMIC_RELEASE);
    }
    _exit(0);
  }
  pin(0);
  while (__atomic_load_n(shared_word, __ATOMIC_ACQUIRE) != 0) {}
  int64_t t0 = now_ns();
  for (int64_t i = 0; i < iterations; i++) {
    __atomic_store_n(shared_word, 2 * i + 1, __ATOMIC_RELEASE);
    while (__atomic_load_n(shared_word, __ATOMIC_ACQUIRE) != 2 * i + 2) {}
  }
  int64_t elapsed = now_ns() - t0;
  waitpid(child, NULL, 0);
  return elapsed;
}

/* The tick: a loop that reads the clock on an otherwise idle CPU; each gap
 * well above the loop's own step is an interruption, whatever its cause
 * (the tick, or the host taking the virtual CPU's thread away): the loop
 * cannot tell them apart, so it prints the median excess over all of them
 * and how many a second there were. */
static void tick_gaps(void) {
  enum { MAX_GAPS = 100000 };
  static double gaps[MAX_GAPS];
  int64_t steps = 0, n = 0;
  int64_t start = now_ns(), prev = start, end = start + (int64_t)(seconds_each * 1e9);
  static double step_samples[1 << 16];
  int64_t s = 0;
  for (int64_t t = now_ns(); t < end; t = now_ns()) {
    int64_t gap = t - prev;
    if (s < (1 << 16)) step_samples[s++] = (double)gap;
    steps++;
    prev = t;
  }
  qsort(step_samples, s, sizeof *step_samples, cmp_double);
  double step = step_samples[s / 2];
  prev = now_ns();
  end = prev + (int64_t)(seconds_each * 1e9);
  for (int64_t t = now_ns(); t < end; t = now_ns()) {
    int64_t gap = t - prev;
    if (gap > 20 * step + 500 && n < MAX_GAPS) gaps[n++] = (double)gap - step;
    prev = t;
  }
  printf("COST loop_step %.1f ns/step steps=%lld\n", step, (long long)steps);
  if (n > 0) report("interruption", "ns/interruption", gaps, n);
  printf("COST interruptions_per_s %.1f /s\n", n / seconds_each);
  fflush(stdout);
}

int main(int argc, char** argv) {
  if (argc > 1) seconds_each = atof(argv[1]);
  if (argc > 2) round_ns = (int64_t)(atof(argv[2]) * 1e6);
  if (argc > 3) batch_pause_ns = (int64_t)(atof(argv[3]) * 1e3);
  signal(SIGPIPE, SIG_IGN);
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || !CPU_ISSET(0, &allowed) || !CPU_ISSET(1, &allowed)) {
    fprintf(stderr, "costs: needs CPUs 0 and 1\n");
    return 77;
  }
  pin(0);
  shared_word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared_word == MAP_FAILED) return 1;
  streamed_write_ns = shared_word + 64;  /* a line of its own */
  measure("getppid", "ns/call", null_syscall, NULL);

  static struct channels unix_one = {.count = 1, .size = MESSAGE}, unix_large = {.count = 1, .size = LARGE},
                         unix_over = {.count = SOCKETS, .size = MESSAGE}, pipe_one = {.count = 1, .size = 4};
  for (int i = 0; i < SOCKETS; i++) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair)) return 1;
    unix_over.write_fd[i] = pair[0], unix_over.read_fd[i] = pair[1];
  }
  unix_one.write_fd[0] = unix_large.write_fd[0] = unix_over.write_fd[0];
  unix_one.read_fd[0] = unix_large.read_fd[0] = unix_over.read_fd[0];
  measure_writes_and_reads("unix_stream_write_100", "unix_stream_read_100", &unix_one);
  measure_writes_and_reads("unix_stream_write_1000", NULL, &unix_large);
  measure_writes_and_reads("unix_stream_write_100_over_20", "unix_stream_read_100_over_20", &unix_over);
  measure("unix_stream_read_100_over_20_written_on_cpu1", "ns/call", reads_written_on_cpu1, &unix_over);
  measure_clock_pair();
  printf("COST clock_pair %.1f ns/pair\n", clock_pair_ns);
  static struct streaming streaming_write = {.time_reads = 0}, streaming_read = {.time_reads = 1};
  streaming_write.write_fd = streaming_read.write_fd = unix_one.write_fd[0];
  streaming_write.read_fd = streaming_read.read_fd = unix_one.read_fd[0];
  measure("unix_stream_write_100_streaming_to_cpu0", "ns/call", streaming_calls, &streaming_write);
  measure("unix_stream_read_100_streaming_from_cpu1", "ns/call", streaming_calls, &streaming_read);
  int pfd[2];
  if (pipe(pfd)) return 1;
  pipe_one.write_fd[0] = pfd[1], pipe_one.read_fd[0] = pfd[0];
  measure_writes_and_reads("pipe_write_4", "pipe_read_4", &pipe_one);

  static struct round_trip same_cpu = {.cpu_a = 0, .cpu_b = 0, .size = 4},
                           cross_cpu = {.cpu_a = 0, .cpu_b = 1, .size = 4},
                           same_cpu_threads = {.cpu_a = 0, .cpu_b = 0, .size = 4, .threads = 1},
                           cross_cpu_threads = {.cpu_a = 0, .cpu_b = 1, .size = 4, .threads = 1};
  measure("pipe_round_trip_same_cpu", "ns/round_trip", round_trips, &same_cpu);
  measure("pipe_round_trip_cpu0_cpu1", "ns/round_trip", round_trips, &cross_cpu);
  measure("pipe_round_trip_same_cpu_threads", "ns/round_trip", round_trips, &same_cpu_threads);
  measure("pipe_round_trip_cpu0_cpu1_threads", "ns/round_trip", round_trips, &cross_cpu_threads);
  static struct round_trip unix_same_cpu = {.cpu_a = 0, .cpu_b = 0, .size = MESSAGE, .unix_socket = 1},
                           unix_same_cpu_threads = {.cpu_a = 0, .cpu_b = 0, .size = MESSAGE, .unix_socket = 1, .threads = 1};
  measure("unix_round_trip_same_cpu", "ns/round_trip", round_trips, &unix_same_cpu);
  measure("unix_round_trip_same_cpu_threads", "ns/round_trip", round_trips, &unix_same_cpu_threads);
  measure_yield_round_trips();
  measure_waking_writes("pipe_write_4_to_32", -1);
  measure_waking_writes("pipe_write_4_to_32_waking_same_cpu", 0);
  measure_waking_writes("pipe_write_4_to_32_waking_cpu1", 1);
  measure("line_round_trip_cpu0_cpu1", "ns/round_trip", line_round_trips, NULL);
  woken_at = shared_word + 128, woken_seq = shared_word + 192;  /* lines of their own */
  measure_wakeup_to_run("wakeup_to_run_cpu1_busy", 1);
  measure_wakeup_to_run("wakeup_to_run_cpu1_idle", 0);
  pin(1);
  tick_gaps();
  return 0;
}
