#include "hw/topology.hpp"

#include <cctype>
#include <stdexcept>

namespace hw {

Topology Topology::from_spec(const std::string& spec) {
  int s = 1, c = 0, t = 1;
  bool seen_c = false;
  size_t i = 0;
  auto fail = [&] {
    throw std::invalid_argument("malformed topology spec '" + spec +
                                "' (expected e.g. 2s8c2t, 4c, 8s10c2t)");
  };
  if (spec.empty()) fail();
  while (i < spec.size()) {
    if (!std::isdigit(static_cast<unsigned char>(spec[i]))) fail();
    long v = 0;
    while (i < spec.size() && std::isdigit(static_cast<unsigned char>(spec[i]))) {
      v = v * 10 + (spec[i] - '0');
      if (v > 4096) fail();
      ++i;
    }
    if (i >= spec.size() || v <= 0) fail();
    switch (spec[i]) {
      case 's': s = static_cast<int>(v); break;
      case 'c': c = static_cast<int>(v); seen_c = true; break;
      case 't': t = static_cast<int>(v); break;
      default: fail();
    }
    ++i;
  }
  if (!seen_c) fail();
  if (t > 8) fail();
  return Topology(s, c, t);
}

Topology::Topology(int sockets, int cores_per_socket, int threads_per_core, bool private_llc)
    : sockets_(sockets),
      cores_per_socket_(cores_per_socket),
      threads_per_core_(threads_per_core),
      private_llc_(private_llc) {
  const long n = static_cast<long>(sockets) * cores_per_socket * threads_per_core;
  if (sockets <= 0 || cores_per_socket <= 0 || threads_per_core <= 0 || n > CpuMask::kMaxCpus)
    throw std::invalid_argument("topology must have between 1 and " +
                                std::to_string(CpuMask::kMaxCpus) + " CPUs");
  for (int th = 0; th < threads_per_core; ++th)
    for (int so = 0; so < sockets; ++so)
      for (int co = 0; co < cores_per_socket; ++co) {
        CpuInfo ci;
        ci.id = static_cast<int>(cpus_.size());
        ci.socket = so;
        ci.core = so * cores_per_socket + co;
        ci.llc = private_llc ? ci.core : so;
        ci.thread = th;
        cpus_.push_back(ci);
      }
  for (const auto& x : cpus_)
    for (const auto& y : cpus_)
      distance_.push_back(x.id == y.id          ? Distance::SameCpu
                          : x.core == y.core     ? Distance::SmtSibling
                          : x.llc == y.llc       ? Distance::SameLlc
                          : x.socket == y.socket ? Distance::SameNode
                                                 : Distance::RemoteNode);
  slit_.assign(static_cast<size_t>(sockets), std::vector<int>(static_cast<size_t>(sockets), 21));
  for (int a = 0; a < sockets; ++a) slit_[static_cast<size_t>(a)][static_cast<size_t>(a)] = 10;
}

void Topology::set_node_distances(std::vector<std::vector<int>> slit) {
  if (slit.size() != static_cast<size_t>(sockets_))
    throw std::invalid_argument("NUMA distance table must have one row per socket");
  for (size_t a = 0; a < slit.size(); ++a) {
    if (slit[a].size() != slit.size())
      throw std::invalid_argument("NUMA distance table must be square");
    if (slit[a][a] != 10) throw std::invalid_argument("NUMA local distance must be 10");
    for (size_t b = 0; b < slit.size(); ++b)
      if (slit[a][b] != slit[b][a] || slit[a][b] < 10)
        throw std::invalid_argument("NUMA distance table must be symmetric and >= 10");
  }
  slit_ = std::move(slit);
}

int Topology::node_distance(int a, int b) const {
  return slit_.at(static_cast<size_t>(a)).at(static_cast<size_t>(b));
}

CpuMask Topology::smt_mask(int c) const {
  CpuMask m;
  for (const auto& ci : cpus_)
    if (ci.core == cpu(c).core) m.set(ci.id);
  return m;
}
CpuMask Topology::llc_mask(int c) const {
  CpuMask m;
  for (const auto& ci : cpus_)
    if (ci.llc == cpu(c).llc) m.set(ci.id);
  return m;
}
CpuMask Topology::node_mask(int node) const {
  CpuMask m;
  for (const auto& ci : cpus_)
    if (ci.socket == node) m.set(ci.id);
  return m;
}
CpuMask Topology::all() const {
  CpuMask m;
  for (const auto& ci : cpus_) m.set(ci.id);
  return m;
}

std::string Topology::spec() const {
  return std::to_string(sockets_) + "s" + std::to_string(cores_per_socket_) + "c" +
         std::to_string(threads_per_core_) + "t" + (private_llc_ ? " (private LLC per core)" : "");
}

}  // namespace hw
