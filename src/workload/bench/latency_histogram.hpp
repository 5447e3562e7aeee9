// schbench's latency histogram, "mr axboe's magic latency histogram" from
// fio (schbench.c, 2016-2019): values below 512 are exact, larger ones fall
// into log-linear buckets of 256 per power of two and read back as the
// bucket's mean; percentiles are the first bucket whose running count
// reaches p% of the samples.
#pragma once
#include <algorithm>
#include <vector>

namespace workload::schbench {

constexpr unsigned PLAT_BITS = 8;
constexpr unsigned PLAT_VAL = 1U << PLAT_BITS;
constexpr unsigned PLAT_GROUP_NR = 19;
constexpr unsigned PLAT_NR = PLAT_GROUP_NR * PLAT_VAL;
constexpr int PLIST_P99 = 4;
constexpr int PLIST_P95 = 3;
inline const std::vector<double> plist = {50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9};

inline unsigned plat_val_to_idx(unsigned val) {
  // Find MSB starting from bit 0
  const unsigned msb = val == 0 ? 0 : 31 - static_cast<unsigned>(__builtin_clz(val));
  // MSB <= (PLAT_BITS-1), cannot be rounded off. Use all bits of the sample as index
  if (msb <= PLAT_BITS) return val;
  const unsigned error_bits = msb - PLAT_BITS;
  const unsigned base = (error_bits + 1) << PLAT_BITS;
  const unsigned offset = (PLAT_VAL - 1) & (val >> error_bits);
  return std::min(base + offset, PLAT_NR - 1);
}

// The mean of the range of values the bucket represents.
inline unsigned plat_idx_to_val(unsigned idx) {
  if (idx < (PLAT_VAL << 1)) return idx;
  const unsigned error_bits = (idx >> PLAT_BITS) - 1;
  const unsigned base = 1U << (error_bits + PLAT_BITS);
  const unsigned k = idx % PLAT_VAL;
  return base + static_cast<unsigned>((k + 0.5) * (1U << error_bits));
}

struct Stats {
  std::vector<unsigned> plat = std::vector<unsigned>(PLAT_NR, 0);
  unsigned nr_samples = 0;
  unsigned max = 0;
  unsigned min = 0;  // calloc()ed and only ever lowered: schbench always prints min=0
};

inline std::vector<unsigned> calc_percentiles(const Stats& s) {
  std::vector<unsigned> ovals;
  unsigned long sum = 0;
  size_t j = 0;
  bool is_last = false;
  for (unsigned i = 0; i < PLAT_NR && !is_last; i++) {
    sum += s.plat[i];
    while (static_cast<double>(sum) >= plist[j] / 100.0 * s.nr_samples) {
      ovals.push_back(plat_idx_to_val(i));
      is_last = j == plist.size() - 1;
      if (is_last) break;
      j++;
    }
  }
  return ovals;
}

inline void add_lat(Stats& s, unsigned us) {
  s.max = std::max(s.max, us);
  s.min = std::min(s.min, us);
  s.plat[plat_val_to_idx(us)]++;
  s.nr_samples++;
}

inline void combine_stats(Stats& d, const Stats& s) {
  for (unsigned i = 0; i < PLAT_NR; i++) d.plat[i] += s.plat[i];
  d.nr_samples += s.nr_samples;
  d.max = std::max(d.max, s.max);
  d.min = std::min(d.min, s.min);
}

}  // namespace workload::schbench
