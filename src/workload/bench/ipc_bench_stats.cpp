// A line-for-line port of ipc-bench's stats.c (calc_summary_stats(),
// point_to_percentile(), print_summary_stats(), linear_regression(),
// summarise_samples()); the formats are stats.c's fprintf() formats.
#include "workload/bench/ipc_bench_stats.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>

namespace workload {
namespace {

struct SummaryStats {
  const double* data = nullptr;
  int nr_items = 0;
  double mean = 0, sample_sd = 0, sample_skew = 0, sample_kurtosis = 0;
};

void appendf(std::string& out, const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  out += buf;
}

// "On-line calculation of mean, variance, skew and kurtosis lifted straight
// from wikipedia" (stats.c); the sd divides by n, as there.
SummaryStats calc_summary_stats(const double* data, int nr_items) {
  double mean = 0, m2 = 0, m3 = 0, m4 = 0;
  for (int i = 0; i < nr_items; i++) {
    const double n = i + 1;
    const double delta = data[i] - mean;
    const double delta_n = delta / n;
    mean = (mean * i) / n + data[i] / n;
    m4 = m4 + delta_n * delta_n * delta_n * delta * (n - 1) * (n * n - 3 * n + 3) + 6 * delta_n * delta_n * m2 -
         4 * delta_n * m3;
    m3 = m3 + delta_n * delta_n * delta * (n - 1) * (n - 2) - 3 * delta_n * m2;
    m2 = m2 + delta_n * delta * (n - 1);
  }
  const double variance = m2 / nr_items;
  const double sd = std::sqrt(variance);
  SummaryStats s;
  s.mean = mean;
  s.sample_sd = sd;
  s.sample_skew = m3 / (nr_items * sd * sd * sd);
  s.sample_kurtosis = nr_items * m4 / (m2 * m2) - 3;
  s.data = data;
  s.nr_items = nr_items;
  return s;
}

// Where `point` falls in the sorted data, in percent: ties take the middle
// of their run, other points interpolate between their neighbours.
double point_to_percentile(const SummaryStats& ss, double point) {
  const double* d = ss.data;
  const int n = ss.nr_items;
  if (point < d[0]) return 0;
  if (point > d[n - 1]) return 100;
  int low = 0, high = n, probe = 0;
  auto at_point = [&](int p) {
    int lo = p, hi = p;
    while (lo >= 0 && d[lo] == point) lo--;
    while (hi < n && d[hi] == point) hi++;
    return (hi + lo) * 50.0 / n;
  };
  auto interpolate = [&](int lo, int hi) {
    const double y1 = d[lo], y2 = d[hi];
    const double num = (point + y2 * lo - hi * y1) * 100.0 / n;
    const double denum = y2 - y1;
    // "so close together that we risk numerical error": a plain average.
    if (std::fabs(denum / num) < 0.01) return (lo + hi) * 50.0 / n;
    return num / denum;
  };
  while (low + 1 < high) {
    probe = (high + low) / 2;
    if (point > d[probe]) {
      low = probe + 1;
    } else if (point < d[probe]) {
      high = probe;
    } else {
      return at_point(probe);
    }
  }
  if (high == low + 1) {
    if (point < d[low]) {
      low--;
      high--;
    }
    if (d[low] == point) return at_point(low);
    if (d[high] == point) return at_point(high);
    return interpolate(low, high);
  }
  if (low == 0) return 0;
  return interpolate(high - 1, high);
}

void print_summary_stats(std::string& out, const SummaryStats& ss) {
  const double* d = ss.data;
  const int n = ss.nr_items;
  appendf(out, "\tMean %e, sample sd %e, sample skew %e, sample kurtosis %e\n", ss.mean, ss.sample_sd, ss.sample_skew,
          ss.sample_kurtosis);
  // stats.c multiplies in int; 64 bits here keep a long run's indices in range.
  auto at = [d, n](int64_t num, int64_t den) { return d[static_cast<int64_t>(n) * num / den]; };
  appendf(out, "\tQuintiles: %e, %e, %e, %e, %e, %e\n", d[0], at(1, 5), at(2, 5), at(3, 5), at(4, 5), d[n - 1]);
  appendf(out, "\t5%% %e, median %e, 95%% %e\n", at(1, 20), at(1, 2), at(19, 20));
  double sd_percentiles[7];
  for (int i = 0; i < 7; i++) sd_percentiles[i] = point_to_percentile(ss, ss.mean + ss.sample_sd * (i - 3));
  appendf(out,
          "\tSD percentiles: -3 -> %f%%, -2 -> %f%%, -1 -> %f%%, 0 -> %f%%, 1 -> %f%%, 2 -> %f%%, 3 -> %f%%\n",
          sd_percentiles[0], sd_percentiles[1], sd_percentiles[2], sd_percentiles[3], sd_percentiles[4],
          sd_percentiles[5], sd_percentiles[6]);
}

// Least squares of the samples on their index (1-based), the slope scaled
// so that x runs over the whole run from 0 to 1.
void linear_regression(const double* data, int nr_samples, double* alpha, double* beta) {
  double x_y_bar = 0, y_bar = 0;
  for (int i = 0; i < nr_samples; i++) {
    x_y_bar += data[i] * (i + 1);
    y_bar += data[i];
  }
  x_y_bar /= nr_samples;
  y_bar /= nr_samples;
  const double x_bar = nr_samples / 2.0 + 1;
  const double x_bar2 = (nr_samples + 2.0) * (2.0 * nr_samples + 1) / 6.0;
  *beta = (x_y_bar - x_bar * y_bar) / (x_bar2 - x_bar * x_bar);
  *alpha = y_bar - *beta * x_bar;
  *beta *= nr_samples;
}

}  // namespace

std::string summarise_samples(std::vector<double> seconds) {
  std::string out;
  // "Discard the first few samples, so as to avoid startup transients."
  const int discard = static_cast<int>(seconds.size()) / 20;
  double* data = seconds.data() + discard;
  const int nr_samples = static_cast<int>(seconds.size()) - discard;
  if (nr_samples <= 0) return out;
  double alpha = 0, beta = 0;
  linear_regression(data, nr_samples, &alpha, &beta);
  appendf(out, "Linear regression: y = %e*x + %e\n", beta, alpha);
  if (nr_samples >= 30) {
    out += "By tenths of total run:\n";
    for (int i = 0; i < 10; i++) {
      const int start = (nr_samples * i) / 10;
      const int end = (nr_samples * (i + 1)) / 10;
      std::sort(data + start, data + end);
      appendf(out, "Slice %d/10:\n", i);
      print_summary_stats(out, calc_summary_stats(data + start, end - start));
    }
  }
  std::sort(data, data + nr_samples);
  out += "Distribution of all values:\n";
  print_summary_stats(out, calc_summary_stats(data, nr_samples));
  const int low_thresh = nr_samples / 10;
  const int high_thresh = nr_samples - nr_samples / 10;
  if (low_thresh >= high_thresh || low_thresh == 0 || high_thresh == nr_samples) return out;
  out += "Low outliers:\n";
  print_summary_stats(out, calc_summary_stats(data, low_thresh));
  out += "Bulk distribution:\n";
  print_summary_stats(out, calc_summary_stats(data + low_thresh, high_thresh - low_thresh));
  out += "High outliers:\n";
  print_summary_stats(out, calc_summary_stats(data + high_thresh, nr_samples - high_thresh));
  return out;
}

}  // namespace workload
