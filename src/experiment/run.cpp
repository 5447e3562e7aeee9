#include "experiment/run.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "obs/interval.hpp"
#include "obs/trace.hpp"

namespace experiment {

void parse_command(const std::string& command, std::string& bench, std::vector<std::string>& args) {
  std::istringstream in(command);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  if (!w.empty() && (w[0] == "hackbench" || w[0] == "schbench" || w[0] == "unix_lat" || w[0] == "pipe_lat")) {
    bench = w[0];
    args.assign(w.begin() + 1, w.end());
    return;
  }
  if (w.size() < 4 || w[0] != "perf" || w[1] != "bench" || w[2] != "sched")
    throw std::invalid_argument("workload command must look like 'perf bench sched <messaging|pipe> ...', 'hackbench ...', 'schbench ...', 'unix_lat ...' or 'pipe_lat ...': '" +
                                command + "'");
  bench = w[3];
  args.assign(w.begin() + 4, w.end());
}

FeatureWrite parse_features_at(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string ms = spec.substr(0, colon);
  const bool digits = !ms.empty() && ms.size() <= 7 && ms.find_first_not_of("0123456789") == std::string::npos;
  if (colon == std::string::npos || !digits || colon + 1 == spec.size())
    throw std::invalid_argument("--features-at wants MS:FEATURES (0 <= MS <= 9999999), e.g. 300:NO_WAKEUP_PREEMPTION: '" +
                                spec + "'");
  return {std::stoll(ms) * 1000000, spec.substr(colon + 1)};
}

RunOutcome run_once(const RunSpec& spec) {
  hw::Machine machine(hw::load_machine(spec.machine));
  const std::string kname = spec.kernel.empty() ? machine.profile().default_kernel : spec.kernel;
  kernel::KernelConfig cfg(kernel::load_preset(kname));
  cfg.apply_features(spec.features);
  for (const auto& s : spec.sysctls) cfg.apply_sysctl(s);
  // The writes in time order (equal times in the order given), each checked
  // against the config the earlier ones make, before anything runs.
  std::vector<FeatureWrite> writes;
  for (const auto& w : spec.features_at) writes.push_back(parse_features_at(w));
  std::stable_sort(writes.begin(), writes.end(),
                   [](const FeatureWrite& a, const FeatureWrite& b) { return a.after_start_ns < b.after_start_ns; });
  kernel::KernelConfig after = cfg;
  for (const auto& w : writes) after = after.after_write(w.features);
  workload::Instances bench(spec.bench, spec.bench_args, spec.instances,
                            workload::StartLayout::parse(spec.start_layout, spec.unpin_after_ms));

  kernel::Kernel k(machine, cfg, spec.seed);
  obs::StatsCollector stats(k.domains().level_names());
  k.add_observer(&stats);
  std::unique_ptr<obs::FtraceWriter> trace;
  if (!spec.trace_path.empty()) {
    trace = std::make_unique<obs::FtraceWriter>(machine.nr_cpus(), spec.trace_stat_runtime);
    k.add_observer(trace.get());
  }
  std::unique_ptr<obs::IntervalStats> interval;
  if (spec.interval_ns > 0 && spec.interval_out) {
    interval = std::make_unique<obs::IntervalStats>(k, spec.interval_ns, *spec.interval_out);
    k.add_observer(interval.get());
    k.set_time_listener([&interval](int64_t t) { interval->advance_to(t); });
  }
  int64_t start_ns = -1;
  bench.start(k, [&] {
    stats.reset(k);
    if (interval) interval->start();
    start_ns = k.now_ns();
    for (const auto& w : writes) k.set_features_at(start_ns + w.after_start_ns, w.features);
  });

  RunOutcome out;
  out.run = k.run(spec.time_limit_ns, spec.event_limit);
  out.output = bench.finish();
  out.stats = stats.summarize(k);
  if (interval) interval->finish(k.now_ns());
  out.machine_name = machine.profile().name;
  out.kernel_name = kname;
  out.command = bench.command();
  out.config = cfg.describe();
  for (const auto& w : writes) {
    const bool made = start_ns >= 0 && start_ns + w.after_start_ns < out.run.end_ns;
    out.config += "features at +" + std::to_string(w.after_start_ns / 1000000) + " ms from the start: " + w.features +
                  (made ? "" : " (not made: the run ended first)") + "\n";
  }
  if (spec.check_invariants) out.invariant_errors = k.check_invariants();
  if (trace) trace->write(spec.trace_path);
  return out;
}

}  // namespace experiment
