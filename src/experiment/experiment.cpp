#include "experiment/experiment.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <toml++/toml.h>

#include "hw/machine.hpp"
#include "kernel/features.hpp"
#include "sim/rng.hpp"

namespace experiment {

namespace {
struct StatMetric {
  const char* name;
  const char* unit;
  double (*value)(const obs::Summary&);
};
// All but the last are costs, so lower counts as better: less waiting for a
// CPU, fewer idle CPUs passed over, less switching and migrating work.
const StatMetric STAT_METRICS[] = {
    {"run_delay_avg", "us", [](const obs::Summary& s) { return s.run_delay_avg_us; }},
    {"run_delay_p50", "us", [](const obs::Summary& s) { return s.run_delay_p50_us; }},
    {"run_delay_p99", "us", [](const obs::Summary& s) { return s.run_delay_p99_us; }},
    {"run_delay_max", "us", [](const obs::Summary& s) { return s.run_delay_max_us; }},
    // All the waiting the run's wakeups did: a change that removes wakeups
    // that ran at once (a receiver preempting its sender) raises the average
    // per wakeup while the waiting per unit of work falls.
    {"run_delay_total", "ms", [](const obs::Summary& s) { return s.run_delay_total_ms; }},
    // taskstats cpu_delay_total / cpu_count, the statistic seed 000 was judged by.
    {"sched_delay_avg", "us", [](const obs::Summary& s) { return s.sched_delay_avg_us; }},
    // taskstats cpu_delay_total, summed over the tasks.
    {"sched_delay_total", "ms", [](const obs::Summary& s) { return s.sched_delay_total_ms; }},
    // Wakeups placed on a busy CPU while another CPU was idle.
    {"busy_wakeups", "wakeups", [](const obs::Summary& s) { return static_cast<double>(s.busy_placements); }},
    // CPU time idle while a task waited on a runqueue.
    {"wasted_cpu", "ms", [](const obs::Summary& s) { return static_cast<double>(s.wasted_ns) / 1e6; }},
    {"context_switches", "switches", [](const obs::Summary& s) { return static_cast<double>(s.context_switches); }},
    // schedule() calls that found their rq->lock held by a waker in
    // ttwu_do_activate() and picked after it (4.0 __schedule()).
    {"picks_after_waker_lock", "picks",
     [](const obs::Summary& s) { return static_cast<double>(s.picks_after_waker_lock); }},
    // CFS: the % of wakeups place_entity() raised to min_vruntime less the
    // sleeper threshold. Where it is high the wakees carry the whole credit
    // and preempt whatever runs (stop 78: the one-LLC threads' second
    // equilibrium). 0 under EEVDF_V66 and on the 2.4 and O(1) policies.
    {"sleeper_capped_share", "%", [](const obs::Summary& s) {
       int64_t placed = 0, capped = 0;
       for (const auto& [name, v] : s.policy) {
         if (name == "wakeups_placed") placed = v;
         if (name == "wakeups_lag_capped") capped = v;
       }
       return placed > 0 ? 100.0 * static_cast<double>(capped) / static_cast<double>(placed) : 0.0;
     }},
    // CPU time not idle, summed over the CPUs: user, kernel and lock spin
    // (mpstat's 100% - idle%, times the CPUs and the window).
    {"busy_cpu", "ms", [](const obs::Summary& s) { return static_cast<double>(s.busy_ns_total) / 1e6; }},
    {"migrations", "migrations", [](const obs::Summary& s) { return static_cast<double>(s.migrations); }},
    // Tasks running or queued for a CPU, time-averaged: vmstat's "r"
    // (LKP's vmstat.procs.r), over the window.
    {"runnable_avg", "tasks", [](const obs::Summary& s) { return s.runnable_avg; }},
    // The share of the busy CPU time executed beside a busy SMT sibling, at
    // the shared rate: where a change moves tasks onto or off shared cores.
    {"smt_shared_share", "%", [](const obs::Summary& s) {
       return s.busy_ns_total > 0 ? 100.0 * static_cast<double>(s.smt_shared_ns) / static_cast<double>(s.busy_ns_total)
                                  : 0.0;
     }},
    // Working-set lines switched-in tasks refilled from beyond their CPU's
    // last-level cache: the model's share of perf's cache-misses. Fitted on
    // migrations with `slopes`, the lines one more move brings.
    {"refill_lines_beyond_llc", "lines",
     [](const obs::Summary& s) { return static_cast<double>(s.refill_lines_beyond_llc); }},
    // The same over the migrations: what perf's cache-misses per
    // cpu-migrations would read if refills were the only misses.
    {"refill_lines_beyond_llc_per_migration", "lines", [](const obs::Summary& s) {
       if (s.migrations == 0) return 0.0;
       return static_cast<double>(s.refill_lines_beyond_llc) / static_cast<double>(s.migrations);
     }},
    // Every line fetched from beyond a CPU's last-level cache: refills,
    // kernel objects, messages. The model's perf cache-misses, all causes.
    {"llc_miss_lines", "lines",
     [](const obs::Summary& s) { return static_cast<double>(s.refill_lines_beyond_llc + s.moved_lines_beyond_llc); }},
    {"llc_miss_lines_per_migration", "lines", [](const obs::Summary& s) {
       if (s.migrations == 0) return 0.0;
       return static_cast<double>(s.refill_lines_beyond_llc + s.moved_lines_beyond_llc) /
              static_cast<double>(s.migrations);
     }},
    // Not a cost: where the wakees went. The share of all wakeups (local
    // ones included) whose waker and wakee were on the two threads of one
    // core, by the topology's SMT level (on 2.4 too, which has no domains).
    // For pipe instances it tells how many pairs sit on one core's threads
    // (a pair stacked on one CPU counts as neither), which decides a run's
    // rate (stop 40: a pair on one core's threads runs ~14% faster than on
    // two). 0 on a machine without SMT.
    {"smt_wakeup_share", "%", [](const obs::Summary& s) {
       const auto smt = s.wakeups_by_level.find("SMT");
       if (s.wakeups == 0 || smt == s.wakeups_by_level.end()) return 0.0;
       return 100.0 * static_cast<double>(smt->second) / static_cast<double>(s.wakeups);
     }},
};

// A repeat's value under `key`, or the value type's zero where that repeat
// has none (a level may see migrations in one repeat only).
template <class Map>
typename Map::mapped_type value_or_zero(const Map& m, const typename Map::key_type& key) {
  const auto it = m.find(key);
  return it == m.end() ? typename Map::mapped_type{} : it->second;
}

// Off-CPU times by where the tasks left the CPU (obs::OffCpuTimes), named
// "<metric>:<wchan>" (e.g. "off_cpu_delay_avg:unix_stream_recvmsg", or
// ":preempted"): LKP's perf-sched.sch_delay.avg.ms, wait_time.avg.ms and
// wait_and_delay.count for one call chain. 0 for a wchan no task left from.
struct OffCpuMetric {
  const char* prefix;
  const char* unit;
  double (*value)(const obs::OffCpuTimes&);
};
double per_episode_ms(int64_t ns, int64_t count) {
  return count > 0 ? static_cast<double>(ns) / static_cast<double>(count) / 1e6 : 0.0;
}
const OffCpuMetric OFF_CPU_METRICS[] = {
    {"off_cpu_count:", "episodes", [](const obs::OffCpuTimes& o) { return static_cast<double>(o.count); }},
    {"off_cpu_wait_avg:", "ms", [](const obs::OffCpuTimes& o) { return per_episode_ms(o.wait_ns, o.count); }},
    {"off_cpu_delay_avg:", "ms", [](const obs::OffCpuTimes& o) { return per_episode_ms(o.delay_ns, o.count); }},
};
// A role's share of the time on a CPU of all roles' tasks, in percent, by
// either ledger of obs::RoleTimes: "cpu_time_share:<role>" splits each
// switch at its sched_switch, as a profile's stacks do;
// "exec_runtime_share:<role>" is what the fair class charged (the growth of
// se.sum_exec_runtime, the split vruntime follows and /proc/PID/sched and
// tools/probes/messaging-roles.sh read). 0 for a role no task has.
struct RoleShareMetric {
  const char* prefix;
  int64_t obs::RoleTimes::*ledger;
};
constexpr RoleShareMetric ROLE_SHARE_METRICS[] = {
    {"cpu_time_share:", &obs::RoleTimes::run_ns},
    {"exec_runtime_share:", &obs::RoleTimes::exec_ns},
};
const RoleShareMetric* role_share_metric(const std::string& name) {
  for (const auto& m : ROLE_SHARE_METRICS) {
    const std::string prefix = m.prefix;
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) return &m;
  }
  return nullptr;
}
double role_share_percent(const obs::Summary& s, const RoleShareMetric& m, const std::string& role) {
  int64_t total = 0;
  for (const auto& [r, t] : s.cpu_time_by_role) total += t.*m.ledger;
  const auto it = s.cpu_time_by_role.find(role);
  return total > 0 && it != s.cpu_time_by_role.end()
             ? 100.0 * static_cast<double>(it->second.*m.ledger) / static_cast<double>(total)
             : 0.0;
}
const OffCpuMetric* off_cpu_metric(const std::string& name) {
  for (const auto& m : OFF_CPU_METRICS) {
    const std::string prefix = m.prefix;
    if (name.size() > prefix.size() && name.compare(0, prefix.size(), prefix) == 0) return &m;
  }
  return nullptr;
}
}  // namespace

std::vector<std::string> stat_metric_names() {
  std::vector<std::string> v;
  for (const auto& m : STAT_METRICS) v.emplace_back(m.name);
  for (const auto& m : OFF_CPU_METRICS) v.emplace_back(std::string(m.prefix) + "<wchan>");
  for (const auto& m : ROLE_SHARE_METRICS) v.emplace_back(std::string(m.prefix) + "<role>");
  return v;
}

bool is_stat_metric(const std::string& name) {
  for (const auto& m : STAT_METRICS)
    if (name == m.name) return true;
  return off_cpu_metric(name) != nullptr || role_share_metric(name) != nullptr;
}

std::vector<workload::Metric> stat_metrics_of(const obs::Summary& s, const std::vector<std::string>& names) {
  std::vector<workload::Metric> out;
  for (const auto& n : names) {
    for (const auto& m : STAT_METRICS)
      if (n == m.name) out.push_back({m.name, m.unit, false, m.value(s)});
    if (const auto* m = off_cpu_metric(n)) {
      const auto it = s.off_cpu.find(n.substr(std::string(m->prefix).size()));
      out.push_back({n, m->unit, false, m->value(it == s.off_cpu.end() ? obs::OffCpuTimes{} : it->second)});
    }
    if (const auto* m = role_share_metric(n))
      out.push_back({n, "%", false, role_share_percent(s, *m, n.substr(std::string(m->prefix).size()))});
  }
  return out;
}

Experiment load_experiment(const std::string& path) {
  toml::table t;
  try {
    t = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument("cannot read experiment '" + path + "': " + std::string(e.description()));
  }
  Experiment x;
  x.name = t["name"].value_or(std::string());
  x.description = t["description"].value_or(std::string());
  x.machine = t["machine"].value_or(std::string());
  x.kernel = t["kernel"].value_or(std::string());
  x.repeats = static_cast<int>(t["repeats"].value_or(int64_t{5}));
  x.seed = static_cast<uint64_t>(t["seed"].value_or(int64_t{1}));
  if (x.name.empty() || x.machine.empty())
    throw std::invalid_argument(path + ": 'name' and 'machine' are required");
  if (x.repeats < 1 || x.repeats > 1000) throw std::invalid_argument(path + ": repeats must be 1..1000");
  if (auto* vs = t["variants"].as_array()) {
    for (auto& v : *vs) {
      auto* vt = v.as_table();
      if (!vt) continue;
      Variant var;
      var.name = (*vt)["name"].value_or(std::string());
      var.kernel = (*vt)["kernel"].value_or(std::string());
      var.features = (*vt)["features"].value_or(std::string());
      if (auto* sa = (*vt)["sysctls"].as_array())
        for (auto& s : *sa) var.sysctls.push_back(s.value_or(std::string()));
      if (var.name.empty()) throw std::invalid_argument(path + ": every variant needs a name");
      x.variants.push_back(var);
    }
  }
  if (auto* ws = t["workloads"].as_array()) {
    for (auto& w : *ws) {
      auto* wt = w.as_table();
      if (!wt) continue;
      Workload wl;
      wl.command = (*wt)["command"].value_or(std::string());
      wl.name = (*wt)["name"].value_or(wl.command);
      wl.instances = static_cast<int>((*wt)["instances"].value_or(int64_t{1}));
      if (wl.instances < 1 || wl.instances > 4096)
        throw std::invalid_argument(path + ": instances must be 1..4096");
      wl.start_layout = (*wt)["start_layout"].value_or(std::string());
      wl.unpin_after_ms = (*wt)["unpin_after_ms"].value_or(int64_t{10});
      try {
        workload::StartLayout::parse(wl.start_layout, wl.unpin_after_ms);
      } catch (const std::invalid_argument& e) {
        throw std::invalid_argument(path + ": " + e.what());
      }
      x.workloads.push_back(wl);
    }
  }
  if (t.contains("stat_metrics")) {
    const auto* sm = t["stat_metrics"].as_array();
    if (!sm) throw std::invalid_argument(path + ": stat_metrics must be a list of names");
    for (auto& n : *sm) {
      const auto name = n.value<std::string>();
      if (!name || !is_stat_metric(*name)) {
        const auto known = stat_metric_names();
        std::string list;
        for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
        throw std::invalid_argument(path + ": unknown stat_metrics entry '" + name.value_or("") +
                                    "' (known: " + list + ")");
      }
      // A name listed twice would add two values per repeat to one cell.
      if (std::find(x.stat_metrics.begin(), x.stat_metrics.end(), *name) != x.stat_metrics.end())
        throw std::invalid_argument(path + ": stat_metrics lists '" + *name + "' twice");
      x.stat_metrics.push_back(*name);
    }
  }
  if (t.contains("slopes")) {
    const auto* sl = t["slopes"].as_array();
    if (!sl) throw std::invalid_argument(path + ": slopes must be a list of [y, x] pairs");
    for (auto& e : *sl) {
      const auto* pair = e.as_array();
      const auto y = pair && pair->size() == 2 ? (*pair)[0].value<std::string>() : std::nullopt;
      const auto xn = pair && pair->size() == 2 ? (*pair)[1].value<std::string>() : std::nullopt;
      if (!y || !xn) throw std::invalid_argument(path + ": every slopes entry is a pair of names, [y, x]");
      if (*y == *xn) throw std::invalid_argument(path + ": slopes fits '" + *y + "' on itself");
      if (std::find(x.slopes.begin(), x.slopes.end(), std::make_pair(*y, *xn)) != x.slopes.end())
        throw std::invalid_argument(path + ": slopes lists [" + *y + ", " + *xn + "] twice");
      for (const auto& n : {*y, *xn})
        if (std::find(x.stat_metrics.begin(), x.stat_metrics.end(), n) == x.stat_metrics.end())
          throw std::invalid_argument(path + ": slopes names '" + n + "', which stat_metrics does not list");
      x.slopes.emplace_back(*y, *xn);
    }
  }
  if (x.variants.empty()) x.variants.push_back({"baseline", "", "", {}});
  if (x.workloads.empty()) throw std::invalid_argument(path + ": no [[workloads]]");
  // Validate early: bad names fail before any simulation runs, not after
  // every other run of the experiment has finished.
  for (const auto& w : x.workloads) {
    std::string b;
    std::vector<std::string> a;
    parse_command(w.command, b, a);
    workload::make_bench(b, a);
  }
  check_variants(x, path);
  return x;
}

void check_variants(const Experiment& x, const std::string& path) {
  std::string default_kernel;
  try {
    default_kernel = hw::load_machine(x.machine).default_kernel;
  } catch (const std::exception& e) {
    throw std::invalid_argument(path + ": " + e.what());
  }
  for (const auto& v : x.variants) {
    const std::string kname = !v.kernel.empty() ? v.kernel : !x.kernel.empty() ? x.kernel : default_kernel;
    try {
      kernel::KernelConfig cfg(kernel::load_preset(kname));
      cfg.apply_features(v.features);
      for (const auto& s : v.sysctls) cfg.apply_sysctl(s);
      cfg.check_consistent();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(path + ": variant '" + v.name + "': " + e.what());
    }
  }
}

double mean_of(const std::vector<double>& v) {
  if (v.empty()) return 0;
  long double s = 0;
  for (double x : v) s += x;
  return static_cast<double>(s / v.size());
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean_of(v);
  long double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(static_cast<double>(s / (v.size() - 1)));
}

namespace {
// Student's t, two-sided 95%, at df degrees of freedom (rounded down).
double t_crit95(double df) {
  static const double crit[] = {0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110,
                                2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
                                2.052, 2.048, 2.045, 2.042};
  const int d = std::max(1, static_cast<int>(std::floor(df)));
  // Past 30, the value at the largest tabulated df not above d (conservative).
  return d <= 30 ? crit[d] : d < 40 ? 2.042 : d < 60 ? 2.021 : d < 120 ? 2.000 : 1.980;
}
}  // namespace

double welch_halfwidth95(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() < 2 || b.size() < 2) return -1;
  const double va = std::pow(stddev_of(a), 2) / a.size();
  const double vb = std::pow(stddev_of(b), 2) / b.size();
  if (va + vb == 0) return 0;
  // Welch-Satterthwaite degrees of freedom.
  const double df = std::pow(va + vb, 2) /
                    (va * va / (a.size() - 1) + vb * vb / (b.size() - 1));
  return t_crit95(df) * std::sqrt(va + vb);
}

LineFit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  LineFit f;
  if (x.size() != y.size()) throw std::invalid_argument("fit_line: x and y differ in length");
  const size_t n = x.size();
  const double mx = mean_of(x), my = mean_of(y);
  long double sxx = 0, sxy = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (n < 2 || sxx == 0) {  // no line through one point, or above one x
    f.slope = std::nan("");
    return f;
  }
  f.slope = static_cast<double>(sxy / sxx);
  f.r = syy > 0 ? static_cast<double>(sxy / std::sqrt(sxx * syy)) : 0;
  if (n >= 3) {
    // The residuals summed directly: syy - sxy^2/sxx cancels badly near r = 1.
    const long double intercept = my - f.slope * mx;
    long double sse = 0;
    for (size_t i = 0; i < n; ++i) {
      const long double e = y[i] - (intercept + f.slope * x[i]);
      sse += e * e;
    }
    f.ci95 = t_crit95(static_cast<double>(n - 2)) * static_cast<double>(std::sqrt(sse / (n - 2) / sxx));
  }
  return f;
}

bool beyond_noise(const std::vector<double>& a, const std::vector<double>& b) {
  const double halfwidth = welch_halfwidth95(a, b);
  return halfwidth >= 0 && std::fabs(mean_of(b) - mean_of(a)) > halfwidth;
}

ExperimentResult run_experiment(const Experiment& exp, int jobs,
                                const std::function<void(const RunDone&)>& on_run_done) {
  struct Job {
    size_t w, v;
    int r;
  };
  std::vector<Job> todo;
  for (size_t w = 0; w < exp.workloads.size(); ++w)
    for (size_t v = 0; v < exp.variants.size(); ++v)
      for (int r = 0; r < exp.repeats; ++r) todo.push_back({w, v, r});
  std::vector<RunOutcome> results(todo.size());
  std::vector<std::string> errors(todo.size());
  std::atomic<size_t> next{0};
  std::mutex progress_lock;
  size_t finished = 0;
  auto worker = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      const Job& j = todo[i];
      RunSpec spec;
      spec.machine = exp.machine;
      spec.kernel = exp.variants[j.v].kernel.empty() ? exp.kernel : exp.variants[j.v].kernel;
      spec.features = exp.variants[j.v].features;
      spec.sysctls = exp.variants[j.v].sysctls;
      // Repeat r of every variant uses the same seed: paired comparisons.
      spec.seed = exp.seed + static_cast<uint64_t>(j.r) * 7919;
      parse_command(exp.workloads[j.w].command, spec.bench, spec.bench_args);
      spec.instances = exp.workloads[j.w].instances;
      spec.start_layout = exp.workloads[j.w].start_layout;
      spec.unpin_after_ms = exp.workloads[j.w].unpin_after_ms;
      try {
        results[i] = run_once(spec);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
      if (on_run_done) {
        const std::lock_guard<std::mutex> hold(progress_lock);
        on_run_done(RunDone{++finished, todo.size(), exp.workloads[j.w].name, exp.variants[j.v].name, j.r,
                            !errors[i].empty()});
      }
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, jobs); ++t) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  for (const auto& e : errors)
    if (!e.empty()) throw std::invalid_argument(e);

  ExperimentResult res;
  res.exp = exp;
  for (size_t w = 0; w < exp.workloads.size(); ++w) {
    std::vector<std::vector<workload::Metric>> per_variant_first;
    std::map<std::string, std::vector<double>> baseline;
    for (size_t v = 0; v < exp.variants.size(); ++v) {
      std::map<std::string, CellResult> cells;
      std::vector<std::string> order;
      std::vector<obs::Summary> sums;
      for (size_t i = 0; i < todo.size(); ++i) {
        if (todo[i].w != w || todo[i].v != v) continue;
        const RunOutcome& o = results[i];
        if (o.run.outcome != kernel::RunResult::Outcome::Completed)
          res.problems.push_back(exp.workloads[w].name + " / " + exp.variants[v].name +
                                 ": simulation did not complete (" + o.run.detail + ")");
        if (!o.invariant_errors.empty())
          res.problems.push_back(exp.workloads[w].name + " / " + exp.variants[v].name +
                                 ": invariant violated: " + o.invariant_errors);
        std::vector<workload::Metric> metrics = o.output.metrics;
        for (auto& m : stat_metrics_of(o.stats, exp.stat_metrics)) metrics.push_back(std::move(m));
        for (const auto& m : metrics) {
          auto& c = cells[m.name];
          if (c.values.empty()) order.push_back(m.name);
          c.workload = exp.workloads[w].name;
          c.variant = exp.variants[v].name;
          c.metric = m.name;
          c.unit = m.unit;
          c.higher_is_better = m.higher_is_better;
          c.values.push_back(m.value);
        }
        sums.push_back(o.stats);
      }
      for (const auto& name : order) {
        CellResult c = cells[name];
        c.mean = mean_of(c.values);
        c.stddev = stddev_of(c.values);
        c.is_baseline = v == 0;
        if (v == 0) {
          baseline[name] = c.values;
        } else if (baseline.count(name)) {
          const double b = mean_of(baseline[name]);
          c.change_pct = b != 0 ? 100.0 * (c.mean - b) / b : 0;
          c.beyond_noise = beyond_noise(baseline[name], c.values);
          const double halfwidth = welch_halfwidth95(baseline[name], c.values);
          c.change_ci95_pct = halfwidth >= 0 && b != 0 ? 100.0 * halfwidth / std::fabs(b) : -1;
        }
        res.cells.push_back(c);
      }
      for (const auto& [yn, xn] : exp.slopes) {
        if (!cells.count(yn) || !cells.count(xn)) continue;
        if (cells[yn].values.size() != cells[xn].values.size()) {
          res.problems.push_back(exp.workloads[w].name + " / " + exp.variants[v].name + ": slope of " + yn + " on " +
                                 xn + " not fitted (the runs gave them unequal counts)");
          continue;
        }
        SlopeResult sr;
        sr.workload = exp.workloads[w].name;
        sr.variant = exp.variants[v].name;
        sr.y = yn;
        sr.x = xn;
        sr.unit = cells[yn].unit;
        sr.fit = fit_line(cells[xn].values, cells[yn].values);
        sr.n = static_cast<int>(cells[xn].values.size());
        res.slopes.push_back(sr);
      }
      // Average the explanatory statistics over the repeats.
      obs::Summary avg;
      if (!sums.empty()) {
        avg = sums.front();
        // Keys present in any repeat (a level may see migrations in one only).
        for (const auto& x : sums) {
          for (const auto& [lvl, cnt] : x.migrations_by_level) avg.migrations_by_level.emplace(lvl, 0);
          for (const auto& [cause, cnt] : x.migrations_by_cause) {
            avg.migrations_by_cause.emplace(cause, 0);
            avg.migrations_joining_wakee.emplace(cause, 0);
            avg.migrations_leaving_wakee.emplace(cause, 0);
            avg.migrations_across_llc.emplace(cause, 0);
          }
          for (const auto& [lvl, cnt] : x.wakeups_by_level) avg.wakeups_by_level.emplace(lvl, 0);
          for (const auto& [kind, b] : x.balance) avg.balance.emplace(kind, obs::BalanceCounters{});
          for (const auto& [where, cnt] : x.sleeps) avg.sleeps.emplace(where, 0);
          for (const auto& [where, o] : x.off_cpu) avg.off_cpu.emplace(where, obs::OffCpuTimes{});
          for (const auto& [role, r] : x.cpu_time_by_role) avg.cpu_time_by_role.emplace(role, obs::RoleTimes{});
          for (const auto& [pair, t] : x.wakeup_checks) avg.wakeup_checks.emplace(pair, kernel::WakeupCheckTally{});
        }
        const double n = static_cast<double>(sums.size());
        auto avg_i = [&](auto getter) {
          long double s = 0;
          for (const auto& x : sums) s += getter(x);
          return static_cast<int64_t>(std::llround(static_cast<double>(s / n)));
        };
        auto avg_d = [&](auto getter) {
          long double s = 0;
          for (const auto& x : sums) s += getter(x);
          return static_cast<double>(s / n);
        };
        avg.elapsed_ns = avg_i([](const obs::Summary& x) { return x.elapsed_ns; });
        avg.context_switches = avg_i([](const obs::Summary& x) { return x.context_switches; });
        avg.involuntary_switches = avg_i([](const obs::Summary& x) { return x.involuntary_switches; });
        avg.idle_state_entries = sums.front().idle_state_entries;
        for (size_t i = 0; i < avg.idle_state_entries.size(); ++i)
          avg.idle_state_entries[i].second = avg_i([&](const obs::Summary& x) {
            return i < x.idle_state_entries.size() ? x.idle_state_entries[i].second : int64_t{0};
          });
        for (auto& [where, cnt] : avg.sleeps)
          cnt = avg_i([&](const obs::Summary& x) { return value_or_zero(x.sleeps, where); });
        // Counts and sums averaged, so that sum / count stays the episodes'
        // pooled mean; the maxima are the repeats' largest.
        for (auto& [where, o] : avg.off_cpu) {
          auto get = [&](const obs::Summary& x) { return value_or_zero(x.off_cpu, where); };
          o.count = avg_i([&](const obs::Summary& x) { return get(x).count; });
          o.wait_ns = avg_i([&](const obs::Summary& x) { return get(x).wait_ns; });
          o.delay_ns = avg_i([&](const obs::Summary& x) { return get(x).delay_ns; });
          for (const auto& x : sums) {
            o.wait_max_ns = std::max(o.wait_max_ns, get(x).wait_max_ns);
            o.delay_max_ns = std::max(o.delay_max_ns, get(x).delay_max_ns);
          }
        }
        for (auto& [role, r] : avg.cpu_time_by_role) {
          auto get = [&](const obs::Summary& x) { return value_or_zero(x.cpu_time_by_role, role); };
          r.run_ns = avg_i([&](const obs::Summary& x) { return get(x).run_ns; });
          r.sleeps = avg_i([&](const obs::Summary& x) { return get(x).sleeps; });
          r.preempted = avg_i([&](const obs::Summary& x) { return get(x).preempted; });
          r.arrivals = avg_i([&](const obs::Summary& x) { return get(x).arrivals; });
          r.wait_ns = avg_i([&](const obs::Summary& x) { return get(x).wait_ns; });
          r.exec_ns = avg_i([&](const obs::Summary& x) { return get(x).exec_ns; });
        }
        // The same for the wakeup checks: lead_ns / checks stays the pooled
        // mean, and the lead's quantiles come from the pooled bins. A pair
        // whose mean count rounds to nothing is left out.
        for (auto it = avg.wakeup_checks.begin(); it != avg.wakeup_checks.end();) {
          auto get = [&](const obs::Summary& x) { return value_or_zero(x.wakeup_checks, it->first); };
          it->second.checks = avg_i([&](const obs::Summary& x) { return get(x).checks; });
          it->second.preemptions = avg_i([&](const obs::Summary& x) { return get(x).preemptions; });
          it->second.lead_ns = avg_i([&](const obs::Summary& x) { return get(x).lead_ns; });
          // The bins are summed, not averaged: a sparse tail bin would
          // round away, and the quantiles do not depend on the scale.
          for (size_t bin = 0; bin < kernel::WakeupCheckTally::kLeadBins; ++bin) {
            int64_t pooled = 0;
            for (const auto& x : sums) pooled += get(x).lead_bins[bin];
            it->second.lead_bins[bin] = pooled;
          }
          it = it->second.checks > 0 ? std::next(it) : avg.wakeup_checks.erase(it);
        }
        avg.migrations = avg_i([](const obs::Summary& x) { return x.migrations; });
        for (auto by_level : {&obs::Summary::migrations_by_level, &obs::Summary::wakeups_by_level,
                              &obs::Summary::migrations_by_cause, &obs::Summary::migrations_joining_wakee,
                              &obs::Summary::migrations_leaving_wakee, &obs::Summary::migrations_across_llc})
          for (auto& [lvl, cnt] : avg.*by_level)
            cnt = avg_i([&](const obs::Summary& x) { return value_or_zero(x.*by_level, lvl); });
        avg.wakeups = avg_i([](const obs::Summary& x) { return x.wakeups; });
        avg.wakeups_local = avg_i([](const obs::Summary& x) { return x.wakeups_local; });
        avg.wakeups_remote = avg_i([](const obs::Summary& x) { return x.wakeups_remote; });
        avg.wake_affine_attempts = avg_i([](const obs::Summary& x) { return x.wake_affine_attempts; });
        avg.wake_affine_pulls = avg_i([](const obs::Summary& x) { return x.wake_affine_pulls; });
        avg.run_delay_count = avg_i([](const obs::Summary& x) { return x.run_delay_count; });
        avg.run_delay_avg_us = avg_d([](const obs::Summary& x) { return x.run_delay_avg_us; });
        avg.run_delay_p50_us = avg_d([](const obs::Summary& x) { return x.run_delay_p50_us; });
        avg.run_delay_p99_us = avg_d([](const obs::Summary& x) { return x.run_delay_p99_us; });
        avg.run_delay_max_us = avg_d([](const obs::Summary& x) { return x.run_delay_max_us; });
        avg.sched_runs = avg_i([](const obs::Summary& x) { return x.sched_runs; });
        avg.sched_delay_avg_us = avg_d([](const obs::Summary& x) { return x.sched_delay_avg_us; });
        avg.busy_placements = avg_i([](const obs::Summary& x) { return x.busy_placements; });
        avg.busy_placement_idle_cpus_avg = avg_d([](const obs::Summary& x) { return x.busy_placement_idle_cpus_avg; });
        avg.busy_placement_idle_after_us_avg =
            avg_d([](const obs::Summary& x) { return x.busy_placement_idle_after_us_avg; });
        for (auto& [kind, b] : avg.balance) {
          auto get = [&](const obs::Summary& x) { return value_or_zero(x.balance, kind); };
          b.attempts = avg_i([&](const obs::Summary& x) { return get(x).attempts; });
          b.successes = avg_i([&](const obs::Summary& x) { return get(x).successes; });
          b.tasks_moved = avg_i([&](const obs::Summary& x) { return get(x).tasks_moved; });
          b.cost_ns = avg_i([&](const obs::Summary& x) { return get(x).cost_ns; });
        }
        for (size_t c = 0; c < avg.idle_ns_per_cpu.size(); ++c)
          avg.idle_ns_per_cpu[c] = avg_i([&](const obs::Summary& x) { return x.idle_ns_per_cpu[c]; });
        avg.idle_ns_total = avg_i([](const obs::Summary& x) { return x.idle_ns_total; });
        avg.busy_ns_total = avg_i([](const obs::Summary& x) { return x.busy_ns_total; });
        avg.spin_ns_total = avg_i([](const obs::Summary& x) { return x.spin_ns_total; });
        avg.wasted_ns = avg_i([](const obs::Summary& x) { return x.wasted_ns; });
        avg.smt_shared_ns = avg_i([](const obs::Summary& x) { return x.smt_shared_ns; });
        avg.irq_time_ns = avg_i([](const obs::Summary& x) { return x.irq_time_ns; });
        avg.ipis_sent = avg_i([](const obs::Summary& x) { return x.ipis_sent; });
        avg.idle_wakes_without_ipi = avg_i([](const obs::Summary& x) { return x.idle_wakes_without_ipi; });
        avg.wakeups_waited_for_switch = avg_i([](const obs::Summary& x) { return x.wakeups_waited_for_switch; });
        avg.switch_wait_ns = avg_i([](const obs::Summary& x) { return x.switch_wait_ns; });
        avg.picks_after_waker_lock = avg_i([](const obs::Summary& x) { return x.picks_after_waker_lock; });
        avg.pick_lock_wait_ns = avg_i([](const obs::Summary& x) { return x.pick_lock_wait_ns; });
        avg.refill_lines_within_llc = avg_i([](const obs::Summary& x) { return x.refill_lines_within_llc; });
        avg.refill_lines_beyond_llc = avg_i([](const obs::Summary& x) { return x.refill_lines_beyond_llc; });
        avg.moved_lines_within_llc = avg_i([](const obs::Summary& x) { return x.moved_lines_within_llc; });
        avg.moved_lines_beyond_llc = avg_i([](const obs::Summary& x) { return x.moved_lines_beyond_llc; });
        for (size_t p = 0; p < avg.work_by_path.size(); ++p)
          avg.work_by_path[p].second = avg_i([&](const obs::Summary& x) { return x.work_by_path[p].second; });
        for (auto& [k, v2] : avg.policy)
          v2 = avg_i([&, key = k](const obs::Summary& x) {
            for (const auto& [kk, vv] : x.policy)
              if (kk == key) return vv;
            return int64_t{0};
          });
      }
      res.stats.emplace_back(exp.workloads[w].name, exp.variants[v].name, avg);
    }
  }
  return res;
}

namespace {

// One column per sched-domain level, lowest first, of a per-level counter
// (`by_level`), for each workload and variant; nothing if no run counted any.
void print_by_level(std::ostream& o, const ExperimentResult& r,
                    std::map<std::string, int64_t> obs::Summary::*by_level, const char* title) {
  char buf[512];
  std::vector<std::string> levels;
  for (const char* known : {"SMT", "MC", "DIE", "NUMA"})
    for (const auto& st : r.stats)
      if ((std::get<2>(st).*by_level).count(known)) {
        levels.emplace_back(known);
        break;
      }
  for (const auto& st : r.stats)
    for (const auto& [lvl, n] : std::get<2>(st).*by_level)
      if (std::find(levels.begin(), levels.end(), lvl) == levels.end()) levels.push_back(lvl);
  if (levels.empty()) return;
  o << "\n" << title << ":\n";
  std::snprintf(buf, sizeof buf, "%-34s %-18s", "workload", "variant");
  o << buf;
  for (const auto& l : levels) {
    std::snprintf(buf, sizeof buf, " %9s", l.c_str());
    o << buf;
  }
  o << "\n";
  for (const auto& [wl, var, s] : r.stats) {
    std::snprintf(buf, sizeof buf, "%-34s %-18s", wl.c_str(), var.c_str());
    o << buf;
    for (const auto& l : levels) {
      const auto it = (s.*by_level).find(l);
      std::snprintf(buf, sizeof buf, " %9lld", static_cast<long long>(it == (s.*by_level).end() ? 0 : it->second));
      o << buf;
    }
    o << "\n";
  }
}

}  // namespace

std::string format_table(const ExperimentResult& r) {
  std::ostringstream o;
  char buf[512];
  o << "experiment " << r.exp.name << "  machine " << r.exp.machine;
  if (!r.exp.kernel.empty()) o << "  kernel " << r.exp.kernel;
  o << "  repeats " << r.exp.repeats << "  seed " << r.exp.seed << "\n\n";
  // The metric column fits the longest name ("off_cpu_delay_avg:<wchan>").
  int metric_width = 13;
  for (const auto& c : r.cells) metric_width = std::max(metric_width, static_cast<int>(c.metric.size()));
  std::snprintf(buf, sizeof buf, "%-34s %-18s %-*s %24s %17s  %s\n", "workload", "variant", metric_width, "metric",
                "mean +- stddev", "change (95% CI)", "beyond noise");
  o << buf;
  std::string last_workload;
  for (const auto& c : r.cells) {
    char val[64];
    std::snprintf(val, sizeof val, "%.4g +- %.2g %s", c.mean, c.stddev, c.unit.c_str());
    char chg[48];
    if (c.is_baseline)
      std::snprintf(chg, sizeof chg, "%s", "-");
    else if (c.change_ci95_pct < 0)
      std::snprintf(chg, sizeof chg, "%+.1f%%", c.change_pct);
    else
      std::snprintf(chg, sizeof chg, "%+.1f%% +- %.1f", c.change_pct, c.change_ci95_pct);
    const std::string wl = c.workload == last_workload ? "" : c.workload;
    last_workload = c.workload;
    std::snprintf(buf, sizeof buf, "%-34s %-18s %-*s %24s %17s  %s\n", wl.c_str(), c.variant.c_str(), metric_width,
                  c.metric.c_str(), val, chg, c.is_baseline ? "" : (c.beyond_noise ? "yes" : "no"));
    o << buf;
  }
  if (!r.slopes.empty()) {
    o << "\nSlopes across the repeats (least squares; 95% CI of the slope):\n";
    for (const auto& sl : r.slopes) {
      // A time per count reads best in the unit that keeps it above 1.
      static const std::pair<const char*, double> time_units[] = {{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}};
      double scale = 1;
      std::string unit = sl.unit;
      for (const auto& [u, ns] : time_units)
        if (sl.unit == u && std::isfinite(sl.fit.slope) && sl.fit.slope != 0) {
          for (const auto& [to, to_ns] : time_units) {
            scale = ns / to_ns;
            unit = to;
            if (std::fabs(sl.fit.slope * scale) >= 1) break;
          }
        }
      char ci[48];
      if (sl.fit.ci95 < 0)
        std::snprintf(ci, sizeof ci, "%s", "");
      else
        std::snprintf(ci, sizeof ci, " +- %.3g", sl.fit.ci95 * scale);
      if (!std::isfinite(sl.fit.slope))
        std::snprintf(buf, sizeof buf, "%-34s %-18s %s per one of %s: n/a (%s did not vary over %d runs)\n",
                      sl.workload.c_str(), sl.variant.c_str(), sl.y.c_str(), sl.x.c_str(), sl.x.c_str(), sl.n);
      else
        std::snprintf(buf, sizeof buf, "%-34s %-18s %s per one of %s: %.3g%s %s (r %.2f, %d runs)\n",
                      sl.workload.c_str(), sl.variant.c_str(), sl.y.c_str(), sl.x.c_str(), sl.fit.slope * scale, ci,
                      unit.c_str(), sl.fit.r, sl.n);
      o << buf;
    }
  }
  o << "\nWhy (mean over repeats, timed window only):\n";
  std::snprintf(buf, sizeof buf, "%-34s %-18s %9s %8s %8s %9s %7s %7s %9s %8s %7s %9s %8s %8s\n", "workload",
                "variant", "ctxsw", "invol", "migr", "wakeups", "remote", "affine", "rundelay", "p99", "idle%", "balances", "wasted",
                "lockspin");
  o << buf;
  for (const auto& [wl, var, s] : r.stats) {
    int64_t bal = 0, bal_ok = 0;
    for (const auto& [k, b] : s.balance) {
      bal += b.attempts;
      bal_ok += b.successes;
    }
    const double ncpu = static_cast<double>(s.idle_ns_per_cpu.size());
    const double idle_pct = s.elapsed_ns > 0 ? 100.0 * static_cast<double>(s.idle_ns_total) /
                                                   (static_cast<double>(s.elapsed_ns) * ncpu)
                                             : 0;
    char balbuf[32], wasted[32], rd[32], p99[32], spin[32];
    std::snprintf(spin, sizeof spin, "%.1fms", static_cast<double>(s.spin_ns_total) / 1e6);
    std::snprintf(balbuf, sizeof balbuf, "%lld/%lld", static_cast<long long>(bal_ok), static_cast<long long>(bal));
    std::snprintf(wasted, sizeof wasted, "%.1fms", static_cast<double>(s.wasted_ns) / 1e6);
    std::snprintf(rd, sizeof rd, "%.1fus", s.run_delay_avg_us);
    std::snprintf(p99, sizeof p99, "%.0fus", s.run_delay_p99_us);
    std::snprintf(buf, sizeof buf, "%-34s %-18s %9lld %8lld %8lld %9lld %7lld %7lld %9s %8s %6.1f%% %9s %8s %8s\n",
                  wl.c_str(), var.c_str(), static_cast<long long>(s.context_switches),
                  static_cast<long long>(s.involuntary_switches), static_cast<long long>(s.migrations), static_cast<long long>(s.wakeups),
                  static_cast<long long>(s.wakeups_remote), static_cast<long long>(s.wake_affine_pulls), rd, p99,
                  idle_pct, balbuf, wasted, spin);
    o << buf;
  }
  // Where the migrations happened: a cross-socket move costs a remote
  // refill, a sibling move almost nothing, so the total alone can mislead.
  print_by_level(o, r, &obs::Summary::migrations_by_level,
                 "Migrations by level (the lowest sched domain spanning both CPUs; mean over repeats)");
  // What moved the tasks, and whether each move gathered a waker-wakee pair
  // onto one core or split it.
  if (std::any_of(r.stats.begin(), r.stats.end(),
                  [](const auto& st) { return !std::get<2>(st).migrations_by_cause.empty(); })) {
    o << "\nMigrations by cause (+ onto, - off the core of the task it last woke; and those between LLCs; mean over "
         "repeats):\n";
    for (const auto& [wl, var, s] : r.stats) {
      std::snprintf(buf, sizeof buf, "%-34s %-18s ", wl.c_str(), var.c_str());
      o << buf << obs::migration_causes_text(s) << "\n";
    }
  }
  // Where the wakees went from their wakers: which cache the partners of a
  // channel share (a pipe pair on one core's threads wakes at SMT).
  print_by_level(o, r, &obs::Summary::wakeups_by_level,
                 "Remote wakeups by level (the lowest sched domain spanning the waker's CPU and the wakee's; mean over "
                 "repeats)");
  // Where the CPU time went: a change in placement shows up as more or less
  // switching, refilling, scanning and IPIs, against the benchmark's own calls.
  std::vector<size_t> paths;
  if (!r.stats.empty())
    for (size_t i = 0; i < std::get<2>(r.stats.front()).work_by_path.size(); ++i)
      for (const auto& st : r.stats)
        if (i < std::get<2>(st).work_by_path.size() && std::get<2>(st).work_by_path[i].second != 0) {
          paths.push_back(i);
          break;
        }
  if (!paths.empty()) {
    o << "\nKernel work by path (ms charged at a core's full rate, summed over CPUs; mean over repeats):\n";
    std::snprintf(buf, sizeof buf, "%-34s %-18s", "workload", "variant");
    o << buf;
    const auto& names = std::get<2>(r.stats.front()).work_by_path;
    for (size_t i : paths) {
      std::snprintf(buf, sizeof buf, " %*s", static_cast<int>(std::max<size_t>(9, names[i].first.size())),
                    names[i].first.c_str());
      o << buf;
    }
    o << "\n";
    for (const auto& [wl, var, s] : r.stats) {
      std::snprintf(buf, sizeof buf, "%-34s %-18s", wl.c_str(), var.c_str());
      o << buf;
      for (size_t i : paths) {
        std::snprintf(buf, sizeof buf, " %*.1f", static_cast<int>(std::max<size_t>(9, names[i].first.size())),
                      i < s.work_by_path.size() ? static_cast<double>(s.work_by_path[i].second) / 1e6 : 0.0);
        o << buf;
      }
      o << "\n";
    }
  }
  // Where the tasks waited off a CPU, as LKP's perf-sched lines give it for
  // a real box: which side of a channel sleeps, for how long, and how long
  // a woken or preempted task then waits for a CPU.
  bool any_off_cpu = false;
  for (const auto& st : r.stats) any_off_cpu |= !std::get<2>(st).off_cpu.empty();
  if (any_off_cpu) {
    o << "\nOff CPU by where tasks left it (episodes; wait = asleep until woken, delay = woken or preempted\n"
         "until run, ms per episode, as perf sched timehist; mean over repeats):\n";
    std::snprintf(buf, sizeof buf, "%-34s %-18s %-24s %10s %10s %10s\n", "workload", "variant", "where", "episodes",
                  "wait", "delay");
    o << buf;
    for (const auto& [wl, var, s] : r.stats)
      for (const auto& [where, w] : s.off_cpu) {
        const double n = static_cast<double>(std::max<int64_t>(w.count, 1));
        std::snprintf(buf, sizeof buf, "%-34s %-18s %-24s %10lld %10.3f %10.3f\n", wl.c_str(), var.c_str(),
                      where.c_str(), static_cast<long long>(w.count), static_cast<double>(w.wait_ns) / n / 1e6,
                      static_cast<double>(w.delay_ns) / n / 1e6);
        o << buf;
      }
  }
  // Batching or ping-pong: how much sleeper credit wakees were placed with,
  // and how far the running task was ahead of them when compared; a lead
  // above the wakeup granularity preempts (CFS counters, whole run).
  auto policy_value = [](const obs::Summary& s, const char* key) -> double {
    for (const auto& [k, v] : s.policy)
      if (k == key) return static_cast<double>(v);
    return -1;
  };
  bool any_checks = false;
  for (const auto& st : r.stats) any_checks |= policy_value(std::get<2>(st), "wakeup_preempt_checks") > 0;
  if (any_checks) {
    // And the preemptions by how the wakee was placed (4.0's wake_affine()
    // paths; "-" where the policy has no such counters), as shares of all.
    static const char* const kPaths[][2] = {{"local", "wakeup_preemptions_after_local_wakeup"},
                                            {"wide", "wakeup_preemptions_after_wide_refusal"},
                                            {"refused", "wakeup_preemptions_after_refused_pull"},
                                            {"compared", "wakeup_preemptions_after_compared_pull"},
                                            {"emptied", "wakeup_preemptions_after_emptied_pull"}};
    o << "\nWakeup preemption (CFS, whole run; ratios of the sums averaged over repeats; the last five columns:\n"
         "the preemptions' shares by the wakee's placement, see docs/json.md wakeup_preemptions_after_*):\n";
    std::snprintf(buf, sizeof buf, "%-34s %-18s %11s %8s %13s %13s", "workload", "variant", "checks", "preempt",
                  "credit/wakeup", "lead/check");
    o << buf;
    for (const auto& path : kPaths) {
      std::snprintf(buf, sizeof buf, " %8s", path[0]);
      o << buf;
    }
    o << "\n";
    for (const auto& [wl, var, s] : r.stats) {
      const double checks = policy_value(s, "wakeup_preempt_checks");
      const double placed = policy_value(s, "wakeups_placed");
      if (checks < 0 || placed < 0) continue;  // not CFS
      if (checks == 0 || placed == 0) {
        std::snprintf(buf, sizeof buf, "%-34s %-18s %11.0f %8s %13s %13s", wl.c_str(), var.c_str(), checks, "-", "-",
                      "-");
        o << buf;
        for (size_t i = 0; i < std::size(kPaths); ++i) o << "        -";
        o << "\n";
        continue;
      }
      const double preemptions = policy_value(s, "wakeup_preemptions");
      std::snprintf(buf, sizeof buf, "%-34s %-18s %11.0f %7.1f%% %11.2fms %11.2fms", wl.c_str(), var.c_str(), checks,
                    100.0 * preemptions / checks, policy_value(s, "wakeup_credit_us") / placed / 1000.0,
                    policy_value(s, "wakeup_preempt_lead_us") / checks / 1000.0);
      o << buf;
      for (const auto& path : kPaths) {
        const double n = policy_value(s, path[1]);
        if (n < 0 || preemptions <= 0)
          std::snprintf(buf, sizeof buf, " %8s", "-");
        else
          std::snprintf(buf, sizeof buf, " %7.1f%%", 100.0 * n / preemptions);
        o << buf;
      }
      o << "\n";
    }
  }
  for (const auto& p : r.problems) o << "PROBLEM: " << p << "\n";
  return o.str();
}

namespace {
nlohmann::json summary_json(const obs::Summary& s) {
  nlohmann::json j;
  j["window_start_ns"] = s.window_start_ns;
  j["elapsed_ns"] = s.elapsed_ns;
  j["context_switches"] = s.context_switches;
  j["involuntary_switches"] = s.involuntary_switches;
  j["sleeps"] = s.sleeps;
  nlohmann::json off = nlohmann::json::object();
  for (const auto& [where, o] : s.off_cpu) {
    const double n = static_cast<double>(std::max<int64_t>(o.count, 1));
    off[where] = {{"count", o.count},
                  {"wait_avg_ms", static_cast<double>(o.wait_ns) / n / 1e6},
                  {"wait_max_ms", static_cast<double>(o.wait_max_ns) / 1e6},
                  {"delay_avg_ms", static_cast<double>(o.delay_ns) / n / 1e6},
                  {"delay_max_ms", static_cast<double>(o.delay_max_ns) / 1e6}};
  }
  j["off_cpu"] = off;
  nlohmann::json roles = nlohmann::json::object();
  for (const auto& [role, r] : s.cpu_time_by_role)
    roles[role] = {{"run_ms", static_cast<double>(r.run_ns) / 1e6},
                   {"sleeps", r.sleeps},
                   {"preempted", r.preempted},
                   {"arrivals", r.arrivals},
                   {"wait_ms", static_cast<double>(r.wait_ns) / 1e6},
                   {"exec_runtime_ms", static_cast<double>(r.exec_ns) / 1e6}};
  j["cpu_time_by_role"] = roles;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& [pair, t] : s.wakeup_checks)
    checks.push_back({{"queued", pair.first},
                      {"running", pair.second},
                      {"checks", t.checks},
                      {"preemptions", t.preemptions},
                      {"lead_avg_ms", static_cast<double>(t.lead_ns) / static_cast<double>(t.checks) / 1e6},
                      {"lead_p10_ms", t.lead_quantile_ms(0.10)},
                      {"lead_p50_ms", t.lead_quantile_ms(0.50)},
                      {"lead_p90_ms", t.lead_quantile_ms(0.90)}});
  j["wakeup_checks"] = checks;
  nlohmann::json idle_states = nlohmann::json::object();
  for (const auto& [name, n] : s.idle_state_entries) idle_states[name] = n;
  j["idle_state_entries"] = idle_states;
  j["migrations"] = s.migrations;
  j["migrations_by_level"] = s.migrations_by_level;
  j["migrations_by_cause"] = s.migrations_by_cause;
  j["migrations_joining_wakee"] = s.migrations_joining_wakee;
  j["migrations_leaving_wakee"] = s.migrations_leaving_wakee;
  j["migrations_across_llc"] = s.migrations_across_llc;
  j["wakeups"] = s.wakeups;
  j["wakeups_local"] = s.wakeups_local;
  j["wakeups_remote"] = s.wakeups_remote;
  j["wakeups_by_level"] = s.wakeups_by_level;
  j["wake_affine_attempts"] = s.wake_affine_attempts;
  j["wake_affine_pulls"] = s.wake_affine_pulls;
  j["run_delay_us"] = {{"avg", s.run_delay_avg_us},
                       {"p50", s.run_delay_p50_us},
                       {"p99", s.run_delay_p99_us},
                       {"max", s.run_delay_max_us},
                       {"samples", s.run_delay_count}};
  nlohmann::json bal = nlohmann::json::object();
  for (const auto& [k, b] : s.balance)
    bal[k] = {{"attempts", b.attempts}, {"successes", b.successes}, {"tasks_moved", b.tasks_moved},
              {"cost_ns", b.cost_ns}};
  j["balance"] = bal;
  j["sched_delay_us"] = {{"avg", s.sched_delay_avg_us}, {"runs", s.sched_runs}};
  j["busy_placements"] = {{"wakeups", s.busy_placements},
                          {"idle_cpus_avg", s.busy_placement_idle_cpus_avg},
                          {"idle_after_us_avg", s.busy_placement_idle_after_us_avg}};
  j["idle_ns_per_cpu"] = s.idle_ns_per_cpu;
  j["idle_ns_total"] = s.idle_ns_total;
  j["busy_ns_total"] = s.busy_ns_total;
  j["spin_ns_total"] = s.spin_ns_total;
  j["wasted_ns"] = s.wasted_ns;
  if (s.smt) j["smt_shared_ns"] = s.smt_shared_ns;
  if (s.irq_time_ns >= 0) j["irq_time_ns"] = s.irq_time_ns;
  j["runnable"] = {{"avg", s.runnable_avg}, {"queued_avg", s.waiting_avg}, {"waiting_task_ns", s.waiting_task_ns}};
  j["ipis_sent"] = s.ipis_sent;
  j["idle_wakes_without_ipi"] = s.idle_wakes_without_ipi;
  j["wakeups_waited_for_switch"] = s.wakeups_waited_for_switch;
  j["switch_wait_ns"] = s.switch_wait_ns;
  j["picks_after_waker_lock"] = s.picks_after_waker_lock;
  j["pick_lock_wait_ns"] = s.pick_lock_wait_ns;
  nlohmann::json work = nlohmann::json::object();
  for (const auto& [path, ns] : s.work_by_path) work[path] = ns;
  j["work_ns_by_path"] = work;
  j["refill_lines"] = {{"within_llc", s.refill_lines_within_llc}, {"beyond_llc", s.refill_lines_beyond_llc}};
  j["moved_lines"] = {{"within_llc", s.moved_lines_within_llc}, {"beyond_llc", s.moved_lines_beyond_llc}};
  nlohmann::json pol = nlohmann::json::object();
  for (const auto& [k, v] : s.policy) pol[k] = v;
  j["policy"] = pol;
  return j;
}
}  // namespace

std::string summary_to_json(const obs::Summary& s) { return summary_json(s).dump(); }

std::string format_json(const ExperimentResult& r) {
  nlohmann::json j;
  j["experiment"] = r.exp.name;
  j["machine"] = r.exp.machine;
  j["kernel"] = r.exp.kernel;
  j["repeats"] = r.exp.repeats;
  j["seed"] = r.exp.seed;
  j["results"] = nlohmann::json::array();
  for (const auto& c : r.cells) {
    nlohmann::json cj = {{"workload", c.workload},
                         {"variant", c.variant},
                         {"metric", c.metric},
                         {"unit", c.unit},
                         {"higher_is_better", c.higher_is_better},
                         {"values", c.values},
                         {"mean", c.mean},
                         {"stddev", c.stddev},
                         {"change_pct", c.is_baseline ? nlohmann::json(nullptr) : nlohmann::json(c.change_pct)},
                         {"change_ci95_pct", c.is_baseline || c.change_ci95_pct < 0 ? nlohmann::json(nullptr)
                                                                                  : nlohmann::json(c.change_ci95_pct)},
                         {"beyond_noise", c.is_baseline ? nlohmann::json(nullptr) : nlohmann::json(c.beyond_noise)}};
    j["results"].push_back(cj);
  }
  j["slopes"] = nlohmann::json::array();
  for (const auto& sl : r.slopes)
    j["slopes"].push_back({{"workload", sl.workload},
                           {"variant", sl.variant},
                           {"y", sl.y},
                           {"x", sl.x},
                           {"unit", sl.unit},
                           {"slope", std::isfinite(sl.fit.slope) ? nlohmann::json(sl.fit.slope) : nlohmann::json(nullptr)},
                           {"slope_ci95", sl.fit.ci95 < 0 ? nlohmann::json(nullptr) : nlohmann::json(sl.fit.ci95)},
                           {"r", sl.fit.r},
                           {"runs", sl.n}});
  nlohmann::json stats = nlohmann::json::object();
  for (const auto& [wl, var, s] : r.stats) stats[var][wl] = summary_json(s);
  j["stats"] = stats;
  j["problems"] = r.problems;
  return j.dump(2);
}

}  // namespace experiment
