// A tiny simulated system for tests: a machine, a kernel and helpers to
// write task programs inline.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hw/machine.hpp"
#include "kernel/kernel.hpp"
#include "workload/ipc/ipc.hpp"

namespace testsupport {

struct TinySim {
  hw::Machine machine;
  kernel::Kernel k;
  TinySim(const std::string& machine_name, const std::string& preset, uint64_t seed = 1,
          const std::string& features = "", const std::vector<std::string>& sysctls = {})
      : machine(hw::load_machine(machine_name)), k(machine, make_config(preset, features, sysctls), seed) {}
  // A machine built or altered by the test (a NUMA distance table, say).
  TinySim(hw::MachineProfile profile, const std::string& preset, uint64_t seed = 1,
          const std::string& features = "")
      : machine(std::move(profile)), k(machine, make_config(preset, features), seed) {}
  static kernel::KernelConfig make_config(const std::string& preset, const std::string& features,
                                          const std::vector<std::string>& sysctls = {}) {
    kernel::KernelConfig c(kernel::load_preset(preset));
    c.apply_features(features);
    for (const auto& s : sysctls) c.apply_sysctl(s);
    return c;
  }
  kernel::RunResult run(int64_t limit_ns = 10LL * 1000 * 1000 * 1000) { return k.run(limit_ns, 50000000); }
  // The policy's counters by name (a counter it does not report is absent,
  // so .at() fails rather than reading 0).
  [[nodiscard]] std::map<std::string, int64_t> policy_counters() const {
    std::map<std::string, int64_t> st;
    for (const auto& [name, value] : k.policy().stats()) st[name] = value;
    return st;
  }
  kernel::Task* task(const std::string& comm) {
    for (auto* t : k.all_tasks())
      if (t->comm == comm) return t;
    return nullptr;
  }
};

// A CPU hog: `total` ns of user work in `chunk` pieces.
inline kernel::Co<void> hog(kernel::Proc& p, int64_t total, int64_t chunk) {
  for (int64_t done = 0; done < total; done += chunk) co_await p.user(chunk);
}

// One side of a pipe ping-pong: `rounds` times, the first side writes 4
// bytes to `out` and reads the reply from `in`; the other reads, then writes.
inline kernel::Co<void> pinger(kernel::Proc& p, workload::Fd* in, workload::Fd* out, int rounds, bool first) {
  for (int i = 0; i < rounds; ++i) {
    if (first) co_await workload::sys_write(p, *out, 4);
    co_await workload::sys_read(p, *in, 4);
    if (!first) co_await workload::sys_write(p, *out, 4);
  }
}

}  // namespace testsupport
