// Kernel presets, scheduler features (like /sys/kernel/debug/sched_features)
// and sysctls. Each is declared once with its default per preset, a unit and
// help text; `schedlab features` lists them and every run header echoes the
// effective values.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kernel {

enum class PolicyKind { Cfs, Linux24 };

struct FeatureInfo {
  std::string name;
  std::string policy;  // which policy reads it ("cfs", "linux24", "core")
  std::string help;
};
struct SysctlInfo {
  std::string name;
  std::string unit;
  std::string help;
};

struct Preset {
  std::string name;
  std::string description;
  PolicyKind policy = PolicyKind::Cfs;
  int hz = 1000;
  int version = 400;  // major*100+minor: 2.4 -> 204, 3.10 -> 310, 4.0 -> 400
  // std::less<> looks names up as string_views: the policies ask on every
  // wakeup, and a std::string per question was a heap allocation.
  std::map<std::string, bool, std::less<>> features;
  std::map<std::string, int64_t, std::less<>> sysctls;
};

const std::vector<FeatureInfo>& feature_catalog();
const std::vector<SysctlInfo>& sysctl_catalog();
const std::vector<std::string>& preset_names();
Preset load_preset(const std::string& name);

// The effective configuration of one simulated kernel.
class KernelConfig {
 public:
  explicit KernelConfig(Preset preset) : preset_(std::move(preset)) {}
  // "A,NO_B": set A, clear B. Throws on unknown names.
  void apply_features(const std::string& list);
  // "name=value". Throws on unknown names or absurd values.
  void apply_sysctl(const std::string& assignment);
  // Throws if features that exclude each other are both set (two readings
  // of one patch, or a patch and what it was compared with).
  void check_consistent() const;
  // This config after `list` is written during a run: checked as a whole,
  // and refusing the bits a task's state depends on between two events
  // (WAKE_RENORM_V47: whether a wakee in flight carries a relative
  // vruntime). Throws std::invalid_argument.
  [[nodiscard]] KernelConfig after_write(const std::string& list) const;
  [[nodiscard]] bool feat(std::string_view name) const;
  [[nodiscard]] int64_t sysctl(std::string_view name) const;
  [[nodiscard]] const Preset& preset() const { return preset_; }
  [[nodiscard]] int hz() const { return preset_.hz; }
  [[nodiscard]] int64_t tick_ns() const { return 1000000000LL / preset_.hz; }
  // One line per feature and sysctl, for run headers.
  [[nodiscard]] std::string describe() const;

 private:
  Preset preset_;
};

}  // namespace kernel
