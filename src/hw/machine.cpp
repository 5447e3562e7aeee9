#include "hw/machine.hpp"

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <toml++/toml.h>

namespace hw {

const std::vector<CostParamInfo>& cost_params() {
  static const std::vector<CostParamInfo> params = {
#define COST(name, unit, help) {#name, unit, help},
#include "hw/costs.def"
#undef COST
  };
  return params;
}

namespace {

int64_t* cost_slot(Costs& c, size_t index) {
  size_t i = 0;
#define COST(name, unit, help) \
  if (i++ == index) return &c.name;
#include "hw/costs.def"
#undef COST
  return nullptr;
}

namespace fs = std::filesystem;

std::vector<fs::path> search_dirs() {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("SCHEDLAB_MACHINES")) dirs.emplace_back(env);
  dirs.emplace_back("machines");
#ifdef SCHEDLAB_SOURCE_DIR
  dirs.emplace_back(fs::path(SCHEDLAB_SOURCE_DIR) / "machines");
#endif
  return dirs;
}

std::optional<fs::path> find_profile(const std::string& name);

// A profile may name a base (`[machine] extends = "haswell-2s8c2t"`): it
// starts from the base's tables and replaces only what it gives itself, key
// by key in [machine] and [costs], the whole list of [[idle_states]]. A
// second reading of one box (another topology, the same measured costs)
// then states each cost and its source once.
toml::table load_profile_table(const fs::path& file, int depth) {
  toml::table tbl;
  try {
    tbl = toml::parse_file(file.string());
  } catch (const toml::parse_error& e) {
    throw std::invalid_argument("cannot parse machine profile " + file.string() + ": " +
                                std::string(e.description()));
  }
  const auto base_name = tbl["machine"]["extends"].value<std::string>();
  if (!base_name) return tbl;
  if (depth >= 8) throw std::invalid_argument(file.string() + ": profiles extend each other too deeply");
  const auto base_file = find_profile(*base_name);
  if (!base_file)
    throw std::invalid_argument(file.string() + ": extends unknown machine profile '" + *base_name + "'");
  toml::table merged = load_profile_table(*base_file, depth + 1);
  for (const char* section : {"machine", "costs"}) {
    if (!merged[section].as_table()) merged.insert_or_assign(section, toml::table{});
    if (const auto* own = tbl[section].as_table())
      for (const auto& [key, value] : *own)
        if (key.str() != "extends") merged[section].as_table()->insert_or_assign(key.str(), value);
  }
  if (const auto* states = tbl["idle_states"].as_array()) merged.insert_or_assign("idle_states", *states);
  return merged;
}

MachineProfile parse_profile(const fs::path& file) {
  const toml::table tbl = load_profile_table(file, 0);
  MachineProfile m;
  m.file = file.string();
  m.name = tbl["machine"]["name"].value_or(file.stem().string());
  m.description = tbl["machine"]["description"].value_or(std::string());
  m.default_kernel = tbl["machine"]["default_kernel"].value_or(std::string("linux-4.0"));
  const std::string spec = tbl["machine"]["topology"].value_or(std::string());
  if (spec.empty()) throw std::invalid_argument(file.string() + ": machine.topology missing");
  const Topology parsed = Topology::from_spec(spec);
  const bool private_llc = tbl["machine"]["private_llc"].value_or(false);
  m.topology = Topology(parsed.sockets(), parsed.cores_per_socket(), parsed.threads_per_core(),
                        private_llc);
  if (auto* slit = tbl["machine"]["numa_distance"].as_array()) {
    std::vector<std::vector<int>> rows;
    for (auto& row : *slit) {
      std::vector<int> r;
      if (auto* a = row.as_array())
        for (auto& v : *a) r.push_back(static_cast<int>(v.value_or(int64_t{0})));
      rows.push_back(r);
    }
    m.topology.set_node_distances(rows);
  }
  const auto& params = cost_params();
  m.cost_sources.assign(params.size(), "");
  auto* costs = tbl["costs"].as_table();
  if (!costs) throw std::invalid_argument(file.string() + ": [costs] table missing");
  for (size_t i = 0; i < params.size(); ++i) {
    auto* entry = (*costs)[params[i].name].as_table();
    if (!entry)
      throw std::invalid_argument(file.string() + ": cost '" + params[i].name + "' missing");
    auto v = (*entry)["value"].value<int64_t>();
    auto src = (*entry)["source"].value<std::string>();
    auto unit = (*entry)["unit"].value<std::string>();
    if (!v || *v < 0)
      throw std::invalid_argument(file.string() + ": cost '" + params[i].name +
                                  "' needs a non-negative integer value");
    if (!src || src->empty())
      throw std::invalid_argument(file.string() + ": cost '" + params[i].name + "' needs a source");
    if (!unit || *unit != params[i].unit)
      throw std::invalid_argument(file.string() + ": cost '" + params[i].name + "' must have unit '" +
                                  params[i].unit + "'");
    *cost_slot(m.costs, i) = *v;
    m.cost_sources[i] = *src;
  }
  for (auto& [key, _] : *costs) {
    bool known = std::any_of(params.begin(), params.end(),
                             [&](const CostParamInfo& p) { return key.str() == p.name; });
    if (!known)
      throw std::invalid_argument(file.string() + ": unknown cost '" + std::string(key.str()) + "'");
  }
  if (m.costs.cache_line_bytes <= 0 || m.costs.refill_mlp <= 0 ||
      m.costs.smt_throughput_permille <= 0 || m.costs.smt_throughput_permille > 1000)
    throw std::invalid_argument(file.string() + ": cache_line_bytes, refill_mlp must be > 0 and "
                                "smt_throughput_permille in 1..1000");
  if (auto* states = tbl["idle_states"].as_array()) {
    for (auto& s : *states) {
      auto* t = s.as_table();
      if (!t) continue;
      IdleState st;
      st.name = (*t)["name"].value_or(std::string("?"));
      st.exit_latency_ns = (*t)["exit_latency_ns"].value_or(int64_t{0});
      st.target_residency_ns = (*t)["target_residency_ns"].value_or(int64_t{0});
      st.polling = (*t)["polling"].value_or(false);
      st.mwait = (*t)["mwait"].value_or(false);
      st.source = (*t)["source"].value_or(std::string());
      m.idle_states.push_back(st);
    }
  }
  if (m.idle_states.empty())
    throw std::invalid_argument(file.string() + ": at least one [[idle_states]] entry needed");
  return m;
}

std::optional<fs::path> find_profile(const std::string& name) {
  fs::path direct(name);
  if (direct.extension() == ".toml") {
    if (fs::exists(direct)) return direct;
    return std::nullopt;
  }
  for (const auto& d : search_dirs()) {
    auto p = d / (name + ".toml");
    if (fs::exists(p)) return p;
  }
  return std::nullopt;
}

}  // namespace

std::string machines_dir() {
  for (const auto& d : search_dirs())
    if (fs::exists(d / "generic.toml")) return d.string();
  return "machines";
}

MachineProfile load_machine(const std::string& name) {
  if (auto p = find_profile(name)) return parse_profile(*p);
  if (fs::path(name).extension() == ".toml")
    throw std::invalid_argument("cannot read machine profile '" + name + "'");
  if (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0]))) {
    Topology topo = Topology::from_spec(name);
    auto generic = find_profile("generic");
    if (!generic) throw std::invalid_argument("machines/generic.toml not found");
    MachineProfile m = parse_profile(*generic);
    m.name = name;
    m.description = "topology " + name + " with the costs of " + m.file;
    m.topology = topo;
    return m;
  }
  throw std::invalid_argument("unknown machine '" + name +
                              "' (see 'schedlab machines', or give a spec like 2s8c2t)");
}

std::vector<std::string> list_machines() {
  std::vector<std::string> names;
  for (const auto& d : search_dirs()) {
    if (!fs::is_directory(d)) continue;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
    if (!names.empty()) break;
  }
  std::sort(names.begin(), names.end());
  return names;
}

Machine::Machine(MachineProfile profile) : profile_(std::move(profile)) {
  const int n = nr_cpus();
  executing_.assign(static_cast<size_t>(n), 0);
  int cores = 0;
  for (int c = 0; c < n; ++c) {
    core_of_.push_back(topo().cpu(c).core);
    llc_of_.push_back(topo().cpu(c).llc);
    cores = std::max(cores, core_of_.back() + 1);
  }
  core_executing_.resize(static_cast<size_t>(cores));
  siblings_.resize(static_cast<size_t>(n));
  for (int c = 0; c < n; ++c)
    llc_shared_beyond_core_.push_back(topo().llc_mask(c).weight() > topo().smt_mask(c).weight());
  const auto by = [this](Distance d) -> int64_t& { return line_transfer_by_distance_[static_cast<size_t>(d)]; };
  by(Distance::SameCpu) = 0;
  by(Distance::SmtSibling) = costs().line_transfer_smt;
  by(Distance::SameLlc) = costs().line_transfer_llc;
  by(Distance::SameNode) = costs().line_transfer_node;
  by(Distance::RemoteNode) = costs().line_transfer_remote;
  for (int c = 0; c < n; ++c)
    topo().smt_mask(c).for_each([&](int s) {
      if (s != c) siblings_[static_cast<size_t>(c)].push_back(s);
    });
}

void Machine::set_executing(int cpu, bool on, int64_t now_ns) {
  if (executing_[static_cast<size_t>(cpu)] == on) return;
  executing_[static_cast<size_t>(cpu)] = on;
  CoreExecuting& core = core_executing_[static_cast<size_t>(core_of_[static_cast<size_t>(cpu)])];
  executing_ns_ += core.threads * (now_ns - core.since_ns);
  if (core.threads > 1) smt_shared_ns_ += core.threads * (now_ns - core.since_ns);
  core.threads += on ? 1 : -1;
  core.since_ns = now_ns;
  if (on_rate_change_)
    for (int s : siblings_[static_cast<size_t>(cpu)]) on_rate_change_(s);
}

int64_t Machine::smt_shared_ns(int64_t now_ns) const {
  int64_t ns = smt_shared_ns_;
  for (const CoreExecuting& core : core_executing_)
    if (core.threads > 1) ns += core.threads * (now_ns - core.since_ns);
  return ns;
}

int64_t Machine::executing_ns(int64_t now_ns) const {
  int64_t ns = executing_ns_;
  for (const CoreExecuting& core : core_executing_) ns += core.threads * (now_ns - core.since_ns);
  return ns;
}

int Machine::rate_permille(int cpu) const {
  // The core's executing threads other than this one: its siblings at work.
  const auto c = static_cast<size_t>(cpu);
  const int others = core_executing_[static_cast<size_t>(core_of_[c])].threads - executing_[c];
  return others > 0 ? static_cast<int>(costs().smt_throughput_permille) : 1000;
}

int64_t Machine::transfer_cost(int from, int to, int64_t bytes) const {
  if (from < 0 || from == to || bytes <= 0) return 0;
  const int64_t lines = (bytes + costs().cache_line_bytes - 1) / costs().cache_line_bytes;
  // Lines are fetched refill_mlp at a time; at least one full transfer.
  return std::max<int64_t>(1, (lines + costs().refill_mlp - 1) / costs().refill_mlp) *
         line_transfer(from, to);
}

// The warm part moves from the old CPU's private cache at the line cost of
// the distance. The evicted part was pushed out to the old CPU's last-level
// cache (or, without a shared one, to memory behind its bus), so it is
// refilled from there: at LLC cost if `to` shares that cache, otherwise from
// the old CPU's side at no less than the distance's line cost. The new
// socket's LLC never held those lines.
Machine::RefillPlan Machine::plan_refill(int from, int to, int64_t bytes) const {
  RefillPlan p;
  p.from = from < 0 ? to : from;  // never ran: nothing to bring over, a local fill
  p.lines = (bytes + costs().cache_line_bytes - 1) / costs().cache_line_bytes;
  p.same_llc = topo().cpu(p.from).llc == topo().cpu(to).llc;
  p.llc_shared_beyond_core = llc_shared_beyond_core_[static_cast<size_t>(to)];
  p.same_core = topo().cpu(p.from).core == topo().cpu(to).core;
  return p;
}

int64_t Machine::refill_cost(int from, int to, int64_t bytes, int64_t warm_permille) const {
  if (bytes <= 0) return 0;
  const RefillPlan p = plan_refill(from, to, bytes);
  const int64_t batches = std::max<int64_t>(1, (p.lines + costs().refill_mlp - 1) / costs().refill_mlp);
  int64_t cold_line = p.llc_shared_beyond_core ? costs().line_transfer_llc : costs().line_transfer_node;
  if (!p.same_llc) cold_line = std::max(cold_line, line_transfer(p.from, to));
  int64_t cost = (1000 - warm_permille) * batches * cold_line / 1000;
  if (p.from != to) cost += warm_permille * transfer_cost(p.from, to, bytes) / 1000;
  return cost;
}

// Counted by line, where refill_cost() charges the evicted part by batch of
// refill_mlp lines: the split is the same, the rounding is not.
Machine::RefillLines Machine::refill_lines(int from, int to, int64_t bytes, int64_t warm_permille) const {
  if (bytes <= 0) return {};
  const RefillPlan p = plan_refill(from, to, bytes);
  const int64_t evicted = (1000 - warm_permille) * p.lines / 1000;
  // What is still warm in the old CPU's private cache moves only if that
  // cache is not the new CPU's own (an SMT sibling shares it).
  const int64_t moved = p.same_core ? 0 : p.lines - evicted;
  RefillLines r;
  // Without an LLC shared beyond the core the evicted lines come from memory.
  (p.same_llc && p.llc_shared_beyond_core ? r.within_llc : r.beyond_llc) += evicted;
  (p.same_llc ? r.within_llc : r.beyond_llc) += moved;
  return r;
}

}  // namespace hw
