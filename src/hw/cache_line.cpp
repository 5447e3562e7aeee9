#include "hw/cache_line.hpp"

#include <algorithm>

namespace hw {

// The nearest copy, which a fetch takes its data from.
std::pair<int, int64_t> CacheLine::nearest_copy(const Machine& m, int cpu) const {
  int source = writer;
  int64_t nearest = m.line_transfer(writer, cpu);
  sharers.for_each([&](int s) {
    if (m.line_transfer(s, cpu) < nearest) {
      source = s;
      nearest = m.line_transfer(s, cpu);
    }
  });
  return {source, nearest};
}

int64_t CacheLine::read_from_another_cpu(const Machine& m, int cpu) {
  const auto [source, nearest] = nearest_copy(m, cpu);
  m.count_lines_moved(source, cpu, 1);
  sharers.set(cpu);
  return nearest;
}

int64_t CacheLine::write_slow(const Machine& m, int cpu) {
  if (writer >= 0 && writer != cpu && !sharers.test(cpu)) m.count_lines_moved(nearest_copy(m, cpu).first, cpu, 1);
  int64_t farthest = 0;
  if (writer >= 0 && writer != cpu) farthest = m.line_transfer(writer, cpu);
  if (!sharers.empty()) {
    sharers.for_each([&](int s) {
      if (s != cpu) farthest = std::max(farthest, m.line_transfer(s, cpu));
    });
    sharers = CpuMask{};
  }
  writer = cpu;
  return farthest;
}

}  // namespace hw
