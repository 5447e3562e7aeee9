#include "workload/bench/args.hpp"

namespace workload {

std::map<std::string, int64_t> parse_bench_args(const std::string& bench,
                                                const std::vector<OptSpec>& specs,
                                                const std::vector<std::string>& args) {
  std::map<std::string, int64_t> out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    std::string value;
    bool has_value = false;
    if (auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_value = true;
    }
    const OptSpec* spec = nullptr;
    for (const auto& s : specs)
      if (a == s.short_name || a == s.long_name) spec = &s;
    if (!spec) throw std::invalid_argument(bench + ": unknown option '" + args[i] + "'");
    if (!spec->takes_value) {
      out[spec->long_name] = 1;
      continue;
    }
    if (!has_value) {
      if (i + 1 >= args.size()) throw std::invalid_argument(bench + ": option " + a + " needs a value");
      value = args[++i];
    }
    int64_t v = 0;
    try {
      size_t used = 0;
      v = std::stoll(value, &used);
      if (used != value.size()) throw std::invalid_argument("junk");
    } catch (const std::exception&) {
      throw std::invalid_argument(bench + ": option " + a + ": '" + value + "' is not a number");
    }
    if (v < spec->min || v > spec->max)
      throw std::invalid_argument(bench + ": option " + a + "=" + value + " out of range [" +
                                  std::to_string(spec->min) + ", " + std::to_string(spec->max) + "]");
    out[spec->long_name] = v;
  }
  return out;
}

}  // namespace workload
