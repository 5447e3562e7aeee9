// Machine topology: NUMA node/socket -> LLC -> core -> hardware thread.
//
// CPU numbering follows what Linux shows on Intel servers: the first hardware
// thread of every core of every socket first (socket-major), then the second
// threads in the same order. On a 2s8c2t machine CPUs 0-7 are socket 0, 8-15
// socket 1, and CPU 16 is the SMT sibling of CPU 0.
#pragma once
#include <cassert>
#include <cstdint>
#include <string>
#include <vector>

#include "hw/cpumask.hpp"

namespace hw {

struct CpuInfo {
  int id = 0;
  int socket = 0;  // == NUMA node: one node per socket in every modelled machine
  int llc = 0;     // global LLC index
  int core = 0;    // global core index
  int thread = 0;  // thread index within the core
};

// How far apart two CPUs are, from the point of view of caches.
enum class Distance : uint8_t { SameCpu = 0, SmtSibling = 1, SameLlc = 2, SameNode = 3, RemoteNode = 4 };

class Topology {
 public:
  // Parses "2s8c2t", "4c", "8s10c2t", "1s4c" (s/t default to 1).
  static Topology from_spec(const std::string& spec);
  // private_llc: every core has its own last-level cache (2002-era SMP boxes
  // whose packages share only the front-side bus).
  Topology(int sockets, int cores_per_socket, int threads_per_core, bool private_llc = false);

  [[nodiscard]] int nr_cpus() const { return static_cast<int>(cpus_.size()); }
  [[nodiscard]] int sockets() const { return sockets_; }
  [[nodiscard]] int cores_per_socket() const { return cores_per_socket_; }
  [[nodiscard]] int threads_per_core() const { return threads_per_core_; }
  [[nodiscard]] bool private_llc() const { return private_llc_; }
  [[nodiscard]] const CpuInfo& cpu(int id) const { return cpus_.at(static_cast<size_t>(id)); }
  // Every cache-line transfer asks this: a table lookup, filled once.
  [[nodiscard]] Distance distance(int a, int b) const {
    assert(a >= 0 && b >= 0 && a < nr_cpus() && b < nr_cpus());
    return distance_[static_cast<size_t>(a) * cpus_.size() + static_cast<size_t>(b)];
  }
  // SLIT distance between the nodes of two CPUs (10 = local).
  [[nodiscard]] int node_distance(int node_a, int node_b) const;
  void set_node_distances(std::vector<std::vector<int>> slit);
  [[nodiscard]] const std::vector<std::vector<int>>& node_distances() const { return slit_; }

  [[nodiscard]] CpuMask smt_mask(int cpu) const;
  [[nodiscard]] CpuMask llc_mask(int cpu) const;
  [[nodiscard]] CpuMask node_mask(int node) const;
  [[nodiscard]] CpuMask all() const;
  [[nodiscard]] std::string spec() const;

 private:
  int sockets_, cores_per_socket_, threads_per_core_;
  bool private_llc_;
  std::vector<CpuInfo> cpus_;
  std::vector<Distance> distance_;  // nr_cpus x nr_cpus, row-major
  std::vector<std::vector<int>> slit_;
};

}  // namespace hw
