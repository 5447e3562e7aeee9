#include "hw/cache_line.hpp"

#include <algorithm>

namespace hw {

int64_t CacheLine::read(const Machine& m, int cpu) {
  if (writer < 0 || writer == cpu || sharers.test(cpu)) return 0;
  int64_t nearest = m.line_transfer(writer, cpu);
  if (!sharers.empty()) sharers.for_each([&](int s) { nearest = std::min(nearest, m.line_transfer(s, cpu)); });
  sharers.set(cpu);
  return nearest;
}

int64_t CacheLine::write(const Machine& m, int cpu) {
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
