// Performance goals, measured (docs/performance.md):
//  - engine events per second;
//  - wall time of default perf bench sched messaging on haswell-2s8c2t (<= 1 s);
//  - wall time of perf bench sched pipe -l 1000000 on one CPU (<= 2 s).
#include <benchmark/benchmark.h>

#include "experiment/run.hpp"
#include "sim/event_queue.hpp"

static void BM_EventQueue(benchmark::State& state) {
  const int64_t n = state.range(0);
  for (auto _ : state) {
    sim::EventQueue q;
    int64_t fired = 0;
    // A self-rescheduling chain per "CPU", like segment completions.
    for (int c = 0; c < 32; ++c) {
      struct Chain {
        sim::EventQueue* q;
        int64_t* fired;
        int64_t left;
        int64_t step;
        void operator()() {
          ++*fired;
          if (--left > 0) q->schedule(sim::Time(q->now().ns() + step), sim::Phase::Hardware, *this);
        }
      };
      q.schedule(sim::Time(c), sim::Phase::Hardware, Chain{&q, &fired, n / 32, 1000 + c});
    }
    q.run();
    benchmark::DoNotOptimize(fired);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.counters["events/s"] = benchmark::Counter(static_cast<double>(state.iterations() * n),
                                                  benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EventQueue)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

static void run_bench(benchmark::State& state, const std::string& machine, const std::string& bench,
                      std::vector<std::string> args) {
  uint64_t events = 0;
  for (auto _ : state) {
    experiment::RunSpec s;
    s.machine = machine;
    s.bench = bench;
    s.bench_args = args;
    s.check_invariants = false;
    auto o = experiment::run_once(s);
    events += o.run.events;
    benchmark::DoNotOptimize(o.output.metrics);
  }
  state.counters["sim_events/s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}

static void BM_MessagingDefaultHaswell(benchmark::State& state) {
  run_bench(state, "haswell-2s8c2t", "messaging", {"-g", "10", "-l", "100"});
}
BENCHMARK(BM_MessagingDefaultHaswell)->Unit(benchmark::kMillisecond)->Iterations(5);

static void BM_Pipe1MOneCpu(benchmark::State& state) {
  run_bench(state, "1s1c1t", "pipe", {"-l", "1000000"});
}
BENCHMARK(BM_Pipe1MOneCpu)->Unit(benchmark::kMillisecond)->Iterations(3);

BENCHMARK_MAIN();
