// ipc-bench's summary of per-iteration timings (stats.c summarise_samples(),
// github.com/ms705/ipc-bench): what its -t option writes to <name>-tsc.log.
// The first 5% of the samples are dropped as start-up, a linear regression
// over the rest shows drift, each tenth of the run and the whole run get a
// mean, sd, skew, kurtosis, quintiles, 5%/median/95% and the percentiles at
// mean +- k sd, and the outer tenths either side are summarised apart from
// the bulk. The published archives keep these logs, so a model's round
// trips can be compared with a box's spread, not only with its mean.
#pragma once
#include <string>
#include <vector>

namespace workload {

// `seconds`: one sample per iteration, in run order. Returns the log's text.
std::string summarise_samples(std::vector<double> seconds);

}  // namespace workload
