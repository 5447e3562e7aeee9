// schedlab: parse -> build -> run -> report. No logic beyond wiring.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>
#include <thread>
#include <unistd.h>

#include "experiment/experiment.hpp"
#include "experiment/run.hpp"
#include "hw/machine.hpp"
#include "kernel/features.hpp"
#include "kernel/sched_domain.hpp"

namespace experiment {
std::string summary_to_json(const obs::Summary& s);
}

namespace {

int fail(const std::string& msg) {
  std::cerr << "schedlab: error: " << msg << "\n";
  return 2;
}

// Parses argv[first..] with CLI11; returns an exit code when the command
// should stop here (--help, or one error line).
std::optional<int> parse(CLI::App& app, int argc, char** argv, int first) {
  try {
    std::vector<std::string> args;
    for (int i = argc - 1; i >= first; --i) args.emplace_back(argv[i]);
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {
      app.exit(e);
      return 0;
    }
    return fail(e.what());
  }
  return std::nullopt;
}

int cmd_machines() {
  const auto names = hw::list_machines();
  int width = 20;
  for (const auto& n : names) width = std::max(width, static_cast<int>(n.size()));
  for (const auto& n : names) {
    auto m = hw::load_machine(n);
    std::printf("%-*s %3d CPUs  %-8s %s\n", width, n.c_str(), m.topology.nr_cpus(), m.topology.spec().c_str(),
                m.description.c_str());
  }
  return 0;
}

int cmd_costs(const std::string& name) {
  auto prof = hw::load_machine(name);
  const auto& params = hw::cost_params();
  std::printf("| parameter | value | unit | source |\n|---|---|---|---|\n");
  hw::Costs c = prof.costs;
  const int64_t values[] = {
#define COST(n, unit, help) c.n,
#include "hw/costs.def"
#undef COST
  };
  for (size_t i = 0; i < params.size(); ++i)
    std::printf("| %s | %lld | %s | %s |\n", params[i].name, static_cast<long long>(values[i]), params[i].unit,
                prof.cost_sources[i].c_str());
  std::printf("\n| idle state | exit latency (ns) | target residency (ns) | polling | mwait | source |\n"
              "|---|---|---|---|---|---|\n");
  for (const auto& st : prof.idle_states)
    std::printf("| %s | %lld | %lld | %s | %s | %s |\n", st.name.c_str(), static_cast<long long>(st.exit_latency_ns),
                static_cast<long long>(st.target_residency_ns), st.polling ? "yes" : "no", st.mwait ? "yes" : "no",
                st.source.c_str());
  return 0;
}

int cmd_topology(const std::string& name, const std::string& kernel_name) {
  auto prof = hw::load_machine(name);
  const std::string kname = kernel_name.empty() ? prof.default_kernel : kernel_name;
  const auto preset = kernel::load_preset(kname);
  kernel::SchedDomains sd(prof.topology, preset.version);
  std::printf("machine %s: %s\n", prof.name.c_str(), prof.description.c_str());
  std::printf("topology %s, %d CPUs\n", prof.topology.spec().c_str(), prof.topology.nr_cpus());
  for (int c = 0; c < prof.topology.nr_cpus(); ++c) {
    const auto& ci = prof.topology.cpu(c);
    std::printf("  cpu%-3d socket %d  core %-3d thread %d  llc %d\n", c, ci.socket, ci.core, ci.thread, ci.llc);
  }
  std::printf("sched domains (%s) of cpu0:\n", kname.c_str());
  for (const auto& d : sd.of(0)) {
    std::string groups;
    for (const auto& g : d.groups) {
      std::string cpus;
      g.cpus.for_each([&](int c) { cpus += (cpus.empty() ? "" : ",") + std::to_string(c); });
      groups += " {" + cpus + "}";
    }
    std::printf("  level %d %-5s span %3d  imbalance_pct %d  cache_nice_tries %d  busy_factor %d  interval %lld-%lld ms\n"
                "        flags %s\n        groups%s\n",
                d.level, d.name.c_str(), d.span_weight, d.imbalance_pct, d.cache_nice_tries, d.busy_factor,
                static_cast<long long>(d.min_interval_ms), static_cast<long long>(d.max_interval_ms),
                kernel::sd_flags_string(d.flags).c_str(), groups.c_str());
  }
  return 0;
}

int cmd_features(const std::string& kname) {
  std::printf("kernel presets:\n");
  for (const auto& n : kernel::preset_names()) {
    auto p = kernel::load_preset(n);
    std::printf("  %-14s HZ=%-5d %s\n", n.c_str(), p.hz, p.description.c_str());
  }
  std::printf("\nfeatures (--features A,NO_B):\n");
  for (const auto& f : kernel::feature_catalog()) {
    std::string defaults;
    for (const auto& n : kernel::preset_names()) {
      auto p = kernel::load_preset(n);
      if (!kname.empty() && n != kname) continue;
      defaults += " " + n + "=" + (p.features.at(f.name) ? "on" : "off");
    }
    std::printf("  %-22s [%s]%s\n      %s\n", f.name.c_str(), f.policy.c_str(), defaults.c_str(), f.help.c_str());
  }
  std::printf("\nsysctls (--sysctl name=value):\n");
  for (const auto& s : kernel::sysctl_catalog()) {
    std::string defaults;
    for (const auto& n : kernel::preset_names()) {
      auto p = kernel::load_preset(n);
      if (!kname.empty() && n != kname) continue;
      defaults += " " + n + "=" + std::to_string(s.name == "CONFIG_HZ" ? p.hz : p.sysctls.at(s.name));
    }
    std::printf("  %-28s [%s]%s\n      %s\n", s.name.c_str(), s.unit.c_str(), defaults.c_str(), s.help.c_str());
  }
  return 0;
}

int cmd_bench(int argc, char** argv) {
  // schedlab perf bench sched <name> [schedlab options] [benchmark options]
  // schedlab hackbench|schbench|unix_lat|pipe_lat [schedlab options] [benchmark options]
  const std::string first = argv[1];
  const bool direct = first == "hackbench" || first == "schbench" || first == "unix_lat" || first == "pipe_lat";
  if (!direct && (argc < 5 || std::string(argv[2]) != "bench" || std::string(argv[3]) != "sched"))
    return fail("usage: schedlab perf bench sched <messaging|pipe> [options]");
  const std::string bench = direct ? first : argv[4];
  const int first_option = direct ? 2 : 5;
  CLI::App app{direct ? "schedlab " + bench : "schedlab perf bench sched " + bench};
  app.allow_extras();
  app.footer(
      "Benchmark options are the real tool's:\n"
      "  messaging: -g/--group N (10)  -l/--nr_loops N (100)  -p/--pipe  -t/--thread\n"
      "  pipe:      -l/--loop N (1000000)  -T/--threaded\n"
      "  hackbench (rt-tests): -g/--groups N (10)  -f/--fds N (20)  -l/--loops N (100)  -s/--datasize B (100)\n"
      "             -p/--pipe  -T/--threads  -P/--process\n"
      "  schbench:  -m/--message-threads N (2)  -t/--threads N (16)  -r/--runtime S (30)\n"
      "             -s/--sleeptime US (30000)  -c/--cputime US (30000)\n"
      "  unix_lat, pipe_lat (ipc-bench): -s SIZE (1024)  -c COUNT (100)  -a CPU (0)  -b CPU (0)  -t (time each round trip)");
  experiment::RunSpec spec;
  spec.bench = bench;
  bool json = false, quiet = false, no_check = false;
  app.add_option("--machine", spec.machine, "machine profile or topology spec (e.g. 2s8c2t)");
  app.add_option("--kernel", spec.kernel, "kernel preset (default: the machine's)");
  app.add_option("--features", spec.features, "scheduler features, e.g. A,NO_B");
  app.add_option("--sysctl", spec.sysctls, "sysctl name=value (repeatable)");
  app.add_option("--features-at", spec.features_at,
                 "MS:A,NO_B: write features MS ms after the benchmark's start, as an echo to "
                 "/sys/kernel/debug/sched_features (repeatable)");
  app.add_option("--seed", spec.seed, "master seed");
  app.add_option("--trace", spec.trace_path, "write an ftrace-text trace to FILE");
  app.add_flag("--trace-stat-runtime", spec.trace_stat_runtime,
               "with --trace: also sched_stat_runtime at each update_curr() of the fair class (a line per "
               "scheduler event: large)");
  int64_t interval_ms = 0;
  app.add_option("-I,--interval-ms", interval_ms,
                 "print counters every MS of simulated time to stderr, as perf stat -I")
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}));
  app.add_option("--instances", spec.instances, "run N copies of the benchmark in parallel")
      ->check(CLI::Range(1, 4096));
  app.add_option("--start-layout", spec.start_layout,
                 "start the instances pinned per node, e.g. 10/6, and unpin them after --unpin-after-ms");
  app.add_option("--unpin-after-ms", spec.unpin_after_ms, "with --start-layout: ms after the last launch (10)")
      ->check(CLI::Range(0, 3600000));
  app.add_flag("--json", json, "machine-readable output (docs/json.md)");
  app.add_flag("--quiet", quiet, "no scheduler statistics");
  app.add_flag("--no-check", no_check, "skip the invariant checker");
  app.add_option("--max-events", spec.event_limit,
                 "stop after N simulated events (2000000000; a long -g 512 hackbench needs more)")
      ->check(CLI::Range(uint64_t{1}, UINT64_MAX));
  if (auto rc = parse(app, argc, argv, first_option)) return *rc;
  spec.bench_args = app.remaining();
  spec.check_invariants = !no_check;
  spec.interval_ns = interval_ms * 1000000;
  spec.interval_out = &std::cerr;
  experiment::RunOutcome out;
  try {
    out = experiment::run_once(spec);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  int rc = 0;
  if (out.run.outcome != kernel::RunResult::Outcome::Completed) {
    using Outcome = kernel::RunResult::Outcome;
    const std::string what = out.run.outcome == Outcome::Deadlock ? "deadlock"
                             : out.run.outcome == Outcome::EventLimit
                                 ? "event limit (" + std::to_string(spec.event_limit) + " events, --max-events) reached"
                                 : "time limit reached";
    std::cerr << "schedlab: " << what << " at simulated time " << out.run.end_ns / 1000 << " us"
              << (out.run.detail.empty() ? "" : ": " + out.run.detail) << "\n";
    rc = 3;
  }
  if (!out.invariant_errors.empty()) {
    std::cerr << "schedlab: invariant violated: " << out.invariant_errors << "\n";
    rc = 4;
  }
  if (json) {
    nlohmann::json j;
    j["benchmark"] = direct ? bench : "sched/" + bench;
    j["args"] = out.command;
    j["machine"] = out.machine_name;
    j["kernel"] = out.kernel_name;
    j["seed"] = spec.seed;
    j["metrics"] = nlohmann::json::object();
    for (const auto& m : out.output.metrics) j["metrics"][m.name] = m.value;
    j["stats"] = nlohmann::json::parse(experiment::summary_to_json(out.stats));
    j["outcome"] = out.run.outcome == kernel::RunResult::Outcome::Completed ? "completed" : "incomplete";
    std::cout << j.dump(2) << "\n";
    return rc;
  }
  std::cout << out.output.text;
  if (!quiet) {
    std::cout << "\n# schedlab: machine " << out.machine_name << ", " << out.config << "# seed " << spec.seed
              << ", " << out.run.events << " events\n";
    std::cout << obs::format_summary(out.stats);
  }
  return rc;
}

// 'a', 'b', 'c': the names an option could have matched, for its error.
template <typename Named>
std::string quoted_names(const std::vector<Named>& items) {
  std::string names;
  for (const auto& item : items) names += (names.empty() ? "'" : ", '") + item.name + "'";
  return names;
}

// Keeps the experiment's workloads whose name starts with one of `prefixes`,
// in the file's order; a prefix that matches none is a typo, reported with
// the names there are.
void keep_workloads(experiment::Experiment& exp, const std::vector<std::string>& prefixes) {
  auto matches = [](const experiment::Workload& w, const std::string& prefix) { return w.name.starts_with(prefix); };
  for (const auto& prefix : prefixes) {
    if (std::any_of(exp.workloads.begin(), exp.workloads.end(), [&](const auto& w) { return matches(w, prefix); }))
      continue;
    throw std::runtime_error("--workload '" + prefix + "' matches no workload of " + exp.name + " (" +
                             quoted_names(exp.workloads) + ")");
  }
  std::erase_if(exp.workloads, [&](const auto& w) {
    return std::none_of(prefixes.begin(), prefixes.end(), [&](const auto& p) { return matches(w, p); });
  });
}

// Keeps the experiment's first variant, the reference every change is
// measured against, and the variants named in `names` (exact names, in the
// file's order); a name that matches none is a typo, reported with the
// names there are.
void keep_variants(experiment::Experiment& exp, const std::vector<std::string>& names) {
  auto named = [&](const experiment::Variant& v) { return std::find(names.begin(), names.end(), v.name) != names.end(); };
  for (const auto& name : names) {
    if (std::any_of(exp.variants.begin(), exp.variants.end(), [&](const auto& v) { return v.name == name; }))
      continue;
    throw std::runtime_error("--variant '" + name + "' names no variant of " + exp.name + " (" +
                             quoted_names(exp.variants) + ")");
  }
  const std::string reference = exp.variants.front().name;
  std::erase_if(exp.variants, [&](const auto& v) { return v.name != reference && !named(v); });
}

// 42s, 3m05s, 1h02m: wall time for a progress line.
std::string wall_time(double seconds) {
  const auto s = static_cast<long long>(seconds + 0.5);
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%llds", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, s % 3600 / 60);
  return buf;
}

// A line on stderr per finished simulation, with a guess at the time left
// (the mean wall time a run so far, times the runs left: runs differ in
// length, so it is only a guess).
std::function<void(const experiment::RunDone&)> progress_printer(int repeats) {
  const auto start = std::chrono::steady_clock::now();
  return [start, repeats](const experiment::RunDone& d) {
    const double so_far = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::string line = "schedlab: run " + std::to_string(d.done) + " of " + std::to_string(d.total) +
                       (d.failed ? " failed (" : " done (") +
                       d.workload + " / " + d.variant + ", repeat " + std::to_string(d.repeat + 1) + " of " +
                       std::to_string(repeats) + "); " + wall_time(so_far) + " so far";
    if (d.done < d.total)
      line += ", about " + wall_time(so_far / static_cast<double>(d.done) * static_cast<double>(d.total - d.done)) +
              " left";
    std::cerr << line + "\n";  // one write per line: stderr is unbuffered
  };
}

int cmd_run(int argc, char** argv) {
  CLI::App app{"schedlab run"};
  std::string file;
  bool json = false;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int repeats = 0;
  std::vector<std::string> sysctls;
  std::string features;
  std::string machine;
  std::vector<std::string> workloads;
  std::vector<std::string> variants;
  app.add_option("file", file, "experiment file (TOML)")->required();
  app.add_option("--machine", machine,
                 "machine profile, profile file or topology for every cell instead of the file's: a what-if "
                 "machine (e.g. a file that `extends` the file's machine with one cost changed) against the "
                 "same variants, workloads and seeds");
  app.add_option("--sysctl", sysctls,
                 "sysctl name=value for every variant, before the variant's own (repeatable): e.g. the line "
                 "switches at 0 for the cost model before stop 34");
  app.add_option("--features", features,
                 "features A,NO_B for every variant, before the variant's own: e.g. NO_WAKE_WIDE to ask what "
                 "each variant does without 4.0's wake_wide()");
  app.add_option("--repeats", repeats, "repeats per cell instead of the file's (narrows the CI)")
      ->check(CLI::Range(1, 1000));
  app.add_option("--workload", workloads,
                 "run only the workloads whose name starts with this text (repeatable); a repeat's seed "
                 "does not depend on which workloads run, so its figures are the full run's");
  app.add_option("--variant", variants,
                 "run only the file's first variant (the reference the changes are against) and the variant "
                 "with this name (repeatable); a repeat's seed does not depend on which variants run, so their "
                 "figures are the full run's");
  app.add_flag("--json", json, "machine-readable output (docs/json.md)");
  app.add_option("--jobs", jobs, "simulations in parallel")->check(CLI::Range(1, 256));
  bool progress = isatty(STDERR_FILENO) != 0;
  app.add_flag("--progress,!--no-progress", progress,
               "a line on stderr as each simulation finishes, with a guess at the time left (the default "
               "when stderr is a terminal)");
  if (auto rc = parse(app, argc, argv, 2)) return *rc;
  try {
    auto exp = experiment::load_experiment(file);
    if (repeats > 0) exp.repeats = repeats;
    if (!machine.empty()) {
      (void)hw::load_machine(machine);  // an unknown machine fails here, not in every cell
      exp.machine = machine;
    }
    if (!workloads.empty()) keep_workloads(exp, workloads);
    if (!variants.empty()) keep_variants(exp, variants);
    const auto name_of = [](const std::string& setting) { return setting.substr(0, setting.find('=')); };
    for (auto& v : exp.variants) {
      // The variant's own setting is applied last and wins; say so, since a
      // what-if that silently does not apply reads as a null result.
      for (const auto& given : sysctls)
        for (const auto& own : v.sysctls)
          if (name_of(own) == name_of(given) && own != given)
            std::cerr << "schedlab: variant '" << v.name << "' sets " << own << " itself; --sysctl " << given
                      << " does not apply to it\n";
      v.sysctls.insert(v.sysctls.begin(), sysctls.begin(), sysctls.end());
      if (!features.empty()) v.features = v.features.empty() ? features : features + "," + v.features;
    }
    // A bad name or a clash with a variant's own fails here, not in every cell.
    experiment::check_variants(exp, file);
    auto res = experiment::run_experiment(exp, jobs, progress ? progress_printer(exp.repeats) : nullptr);
    std::cout << (json ? experiment::format_json(res) + "\n" : experiment::format_table(res));
    return res.problems.empty() ? 0 : 3;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

void usage() {
  std::cout << "schedlab: a deterministic simulator of Linux SMP CPU scheduling\n\n"
               "  schedlab perf bench sched messaging [-g N] [-l N] [-p] [-t] [options]\n"
               "  schedlab perf bench sched pipe [-l N] [-T] [options]\n"
               "  schedlab hackbench [-g N] [-f N] [-l N] [-s B] [-p] [-T] [options]   (rt-tests)\n"
               "  schedlab schbench [-m N] [-t N] [-r S] [-s US] [-c US] [options]\n"
               "  schedlab unix_lat|pipe_lat [-s SIZE] [-c COUNT] [-a CPU] [-b CPU] [-t] [options]   (ipc-bench)\n"
               "      options: --machine M --kernel K --features A,NO_B --sysctl k=v --seed N\n"
               "               --json --quiet --trace FILE [--trace-stat-runtime] --interval-ms MS --instances N\n"
               "               --start-layout A/B --unpin-after-ms MS --features-at MS:A,NO_B\n"
               "  schedlab run experiments/<name>.toml [--json] [--jobs N] [--repeats N] [--sysctl NAME=VALUE]\n"
               "                                      [--features A,NO_B] [--machine M] [--workload NAME]\n"
               "                                      [--variant NAME] [--progress|--no-progress]\n"
               "  schedlab machines\n"
               "  schedlab topology <machine> [--kernel K]\n"
               "  schedlab costs <machine>       (every cost parameter, value, unit and source)\n"
               "  schedlab features [--kernel K]\n";
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc < 2) {
      usage();
      return 2;
    }
    const std::string cmd = argv[1];
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      usage();
      return 0;
    }
    if (cmd == "perf" || cmd == "hackbench" || cmd == "schbench" || cmd == "unix_lat" || cmd == "pipe_lat")
      return cmd_bench(argc, argv);
    if (cmd == "run") return cmd_run(argc, argv);
    if (cmd == "machines") return cmd_machines();
    if (cmd == "topology" || cmd == "features" || cmd == "costs") {
      CLI::App app{"schedlab " + cmd};
      std::string machine, kname;
      if (cmd != "features") app.add_option("machine", machine, "machine profile or spec")->required();
      app.add_option("--kernel", kname, "kernel preset");
      if (auto rc = parse(app, argc, argv, 2)) return *rc;
      if (cmd == "costs") return cmd_costs(machine);
      return cmd == "topology" ? cmd_topology(machine, kname) : cmd_features(kname);
    }
    usage();
    return fail("unknown command '" + cmd + "'");
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}
