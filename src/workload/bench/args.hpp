// A small option parser for benchmark command lines (perf's parse-options
// subset: -x N, --long N, --long=N, boolean flags).
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace workload {

struct OptSpec {
  std::string short_name;  // "-g"
  std::string long_name;   // "--group"
  bool takes_value = true;
  int64_t min = 1, max = 1000000000;
};

// Returns values keyed by long name; flags map to 1.
std::map<std::string, int64_t> parse_bench_args(const std::string& bench,
                                                const std::vector<OptSpec>& specs,
                                                const std::vector<std::string>& args);

}  // namespace workload
