#include "stats.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace spool::bench {

Summary Summarize(std::vector<double> samples) {
  assert(!samples.empty());
  std::sort(samples.begin(), samples.end());
  const size_t n = samples.size();
  const double median = n % 2 == 1 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  return Summary{median, samples.front(), samples.back()};
}

double Percentile(std::vector<double> samples, double q) {
  assert(!samples.empty() && q >= 0 && q <= 1);
  const double rank = std::ceil(q * static_cast<double>(samples.size()));
  const size_t index = std::min(samples.size() - 1, static_cast<size_t>(std::max(rank, 1.0)) - 1);
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(index), samples.end());
  return samples[index];
}

}  // namespace spool::bench
