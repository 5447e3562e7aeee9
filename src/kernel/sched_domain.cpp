#include "kernel/sched_domain.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace kernel {

std::string sd_flags_string(uint32_t f) {
  static const std::pair<uint32_t, const char*> names[] = {
      {SD_LOAD_BALANCE, "LOAD_BALANCE"},   {SD_BALANCE_NEWIDLE, "BALANCE_NEWIDLE"},
      {SD_BALANCE_EXEC, "BALANCE_EXEC"},   {SD_BALANCE_FORK, "BALANCE_FORK"},
      {SD_BALANCE_WAKE, "BALANCE_WAKE"},   {SD_WAKE_AFFINE, "WAKE_AFFINE"},
      {SD_SHARE_CPUCAPACITY, "SHARE_CPUCAPACITY"},
      {SD_SHARE_PKG_RESOURCES, "SHARE_PKG_RESOURCES"},
      {SD_SERIALIZE, "SERIALIZE"},         {SD_PREFER_SIBLING, "PREFER_SIBLING"},
      {SD_OVERLAP, "OVERLAP"},             {SD_NUMA, "NUMA"},
  };
  std::string s;
  for (auto [bit, name] : names)
    if (f & bit) s += (s.empty() ? "" : " ") + std::string(name);
  return s;
}

namespace {

struct Level {
  std::string name;
  uint32_t topo_flags;
  int numa_distance;  // for NUMA levels
};

// sd_init() of Linux 4.0 (kernel/sched/core.c).
SchedDomain sd_init(const Level& tl, const hw::CpuMask& span, int version) {
  SchedDomain sd;
  sd.name = tl.name;
  sd.span = span;
  sd.span_weight = span.weight();
  sd.min_interval_ms = sd.span_weight;
  sd.max_interval_ms = 2 * sd.span_weight;
  sd.busy_factor = 32;
  sd.imbalance_pct = 125;
  sd.flags = SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK |
             SD_WAKE_AFFINE | tl.topo_flags;
  sd.balance_interval_ms = sd.span_weight;
  sd.numa_distance = tl.numa_distance;
  if (sd.flags & SD_SHARE_CPUCAPACITY) {
    sd.imbalance_pct = 110;
  } else if (sd.flags & SD_SHARE_PKG_RESOURCES) {
    sd.imbalance_pct = 117;
    sd.cache_nice_tries = 1;
    sd.busy_idx = 2;
  } else if (sd.flags & SD_NUMA) {
    sd.cache_nice_tries = 2;
    sd.busy_idx = 3;
    sd.idle_idx = 2;
    sd.flags |= SD_SERIALIZE;
    constexpr int RECLAIM_DISTANCE = 30;  // include/linux/topology.h
    if (tl.numa_distance > RECLAIM_DISTANCE)
      sd.flags &= ~(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
  } else {
    sd.flags |= SD_PREFER_SIBLING;
    sd.cache_nice_tries = 1;
    sd.busy_idx = 2;
    sd.idle_idx = 1;
  }
  if (version < 316 && !(sd.flags & SD_NUMA)) {
    // 3.10: SD_SIBLING_INIT / SD_MC_INIT / SD_CPU_INIT (include/linux/topology.h).
    sd.busy_factor = 64;
    sd.balance_interval_ms = 1;
    sd.min_interval_ms = 1;
    sd.max_interval_ms = (sd.flags & SD_SHARE_CPUCAPACITY) ? 2 : 4;
    if (sd.flags & SD_SHARE_PKG_RESOURCES && !(sd.flags & SD_SHARE_CPUCAPACITY))
      sd.imbalance_pct = 125;
  }
  return sd;
}

hw::CpuMask numa_span(const hw::Topology& t, int cpu, int distance) {
  hw::CpuMask m;
  const int node = t.cpu(cpu).socket;
  for (int n = 0; n < t.sockets(); ++n)
    if (t.node_distance(node, n) <= distance) m = m | t.node_mask(n);
  return m;
}

}  // namespace

SchedDomains::SchedDomains(const hw::Topology& t, int version) {
  const int n = t.nr_cpus();
  // default_topology[] = { SMT, MC, DIE }, then one NUMA level per distinct
  // SLIT distance beyond the local one (sched_init_numa()).
  std::vector<Level> levels = {{"SMT", SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES, 10},
                               {"MC", SD_SHARE_PKG_RESOURCES, 10},
                               {"DIE", 0, 10}};
  // sched_init_numa() takes the distances from node 0's row alone unless
  // booted with sched_debug ("Node-0 not representative" is only a warning
  // there). 6.1 reads every row.
  std::set<int> distances;
  for (int b = 0; b < t.sockets(); ++b)
    if (t.node_distance(0, b) > 10) distances.insert(t.node_distance(0, b));
  for (int d : distances) levels.push_back({"NUMA", SD_NUMA, d});

  auto level_span = [&](const Level& l, int cpu) {
    if (l.name == "SMT") return t.smt_mask(cpu);
    if (l.name == "MC") return t.llc_mask(cpu);
    if (l.name == "DIE") return t.node_mask(t.cpu(cpu).socket);
    return numa_span(t, cpu, l.numa_distance);
  };
  // CPU i's domain span at levels[k] as build_sched_domain() makes it, kept
  // or not: the level's mask, widened by its child's where that sticks out.
  auto span_at = [&](size_t k, int i) {
    hw::CpuMask span;
    span.set(i);
    for (size_t j = 0; j <= k; ++j) span = span | level_span(levels[j], i);
    return span;
  };
  // build_sched_domains() stops a CPU's chain at the first level that spans
  // every CPU, so CPU i has no domain at levels[k] if a lower one did.
  auto has_level = [&](size_t k, int i) { return k == 0 || !(span_at(k - 1, i) == t.all()); };

  per_cpu_.resize(static_cast<size_t>(n));
  // sched_group_capacity by (topology level, the group's first CPU).
  std::map<std::tuple<std::string, int, int>, int> sgc_ids;
  llc_level_.assign(static_cast<size_t>(n), -1);
  llc_size_.assign(static_cast<size_t>(n), 1);
  llc_id_.assign(static_cast<size_t>(n), 0);
  for (int cpu = 0; cpu < n; ++cpu) {
    std::vector<SchedDomain> chain;
    std::vector<size_t> level_of;  // chain[li]'s index in levels
    hw::CpuMask child_span;
    child_span.set(cpu);
    for (size_t k = 0; k < levels.size(); ++k) {
      const Level& l = levels[k];
      hw::CpuMask span = level_span(l, cpu) | child_span;  // a level never shrinks
      SchedDomain sd = sd_init(l, span, version);
      // sd_degenerate(): a single-CPU domain. sd_parent_degenerate(): the
      // same span as its child, so one group, whose "flags needing groups
      // don't count"; it stays if it has SD_WAKE_AFFINE (sd_degenerate())
      // and a flag its child lacks, as a NUMA level has over an MC or DIE
      // child where a node's nearest distance holds no other node.
      bool degenerate = sd.span_weight == 1;
      if (!degenerate && !chain.empty() && chain.back().span == span) {
        uint32_t pflags = sd.flags & ~(SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_FORK | SD_BALANCE_EXEC |
                                       SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING |
                                       SD_SHARE_POWERDOMAIN);
        if (t.sockets() == 1) pflags &= ~SD_SERIALIZE;  // nr_node_ids == 1
        degenerate = !(sd.flags & SD_WAKE_AFFINE) || !(pflags & ~chain.back().flags);
      }
      if (!degenerate) {
        chain.push_back(std::move(sd));
        level_of.push_back(k);
      } else if (!chain.empty() && (sd.flags & SD_PREFER_SIBLING)) {
        // cpu_attach_domain(): a spliced-out parent hands SD_PREFER_SIBLING down.
        chain.back().flags |= SD_PREFER_SIBLING;
      }
      child_span = span;
      if (span == t.all()) break;
    }
    // Groups: the spans of the child domains of the CPUs in span
    // (build_sched_groups / build_overlap_sched_groups), the local group
    // first, then the others in ascending CPU order, as the kernel's circular
    // list starting at sd->groups. The lowest topology level has single-CPU
    // groups. The kernel builds the groups before cpu_attach_domain() drops
    // the degenerate domains, so a group is CPU i's span at the topology
    // level just below, kept or not: where that level is degenerate for
    // this CPU but not for CPU i (a NUMA distance table that is not the same
    // from every node), CPU i's group is its wider child span.
    for (size_t li = 0; li < chain.size(); ++li) {
      auto& sd = chain[li];
      sd.level = static_cast<int>(li);
      std::vector<SchedGroup> groups;
      hw::CpuMask covered;
      sd.span.for_each([&](int i) {
        if (covered.test(i)) return;
        // "if (!cpumask_test_cpu(i, sched_domain_span(sibling))) continue;"
        if (!has_level(level_of[li], i)) return;
        hw::CpuMask g;
        g.set(i);
        if (level_of[li] > 0) g = span_at(level_of[li] - 1, i) & sd.span;  // sibling->child's span
        covered = covered | g;
        SchedGroup sg;
        sg.cpus = g;
        int64_t cap = 0;
        g.for_each([&](int c) {
          const int sib = t.smt_mask(c).weight();
          cap += sib > 1 ? 1178 / sib : 1024;
        });
        sg.capacity = cap;
        // Keyed by the CPU the group was built from, the first one not yet
        // covered (build_overlap_sched_groups()'s per_cpu_ptr(sdd->sgc, i);
        // get_group()'s first CPU of the child span is the same CPU).
        const auto key = std::make_tuple(sd.name, sd.numa_distance, i);
        sg.sgc = sgc_ids.emplace(key, static_cast<int>(sgc_ids.size())).first->second;
        groups.push_back(sg);
      });
      auto local = std::find_if(groups.begin(), groups.end(),
                                [&](const SchedGroup& g) { return g.cpus.test(cpu); });
      std::rotate(groups.begin(), local, groups.end());
      sd.groups = std::move(groups);
      if (sd.flags & SD_SHARE_PKG_RESOURCES) {
        llc_level_[static_cast<size_t>(cpu)] = static_cast<int>(li);
        llc_size_[static_cast<size_t>(cpu)] = sd.span_weight;
      }
    }
    llc_id_[static_cast<size_t>(cpu)] =
        llc_level_[static_cast<size_t>(cpu)] >= 0
            ? chain[static_cast<size_t>(llc_level_[static_cast<size_t>(cpu)])].span.first()
            : cpu;
    per_cpu_[static_cast<size_t>(cpu)] = std::move(chain);
  }
  nr_sgc_ = static_cast<int>(sgc_ids.size());
}

int SchedDomains::level_spanning(int cpu, int other) const {
  const auto& chain = of(cpu);
  for (size_t i = 0; i < chain.size(); ++i)
    if (chain[i].span.test(other)) return static_cast<int>(i);
  return -1;
}

std::vector<std::string> SchedDomains::level_names() const {
  std::vector<std::string> names;
  if (per_cpu_.empty()) return names;
  for (const auto& sd : per_cpu_[0]) names.push_back(sd.name);
  return names;
}

}  // namespace kernel
