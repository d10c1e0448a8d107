// Welford accumulator and order statistics.
// See include/tunekit/core/stats.hpp.
#include "tunekit/core/stats.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit {

void Welford::add(double x) noexcept {
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
  min_ = std::min(min_, x);
  max_ = std::max(max_, x);
}

double Welford::stddev() const noexcept { return std::sqrt(variance()); }

double percentile(std::span<const double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  q = std::clamp(q, 0.0, 1.0);
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = static_cast<std::size_t>(std::ceil(pos));
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

double median(std::span<const double> values) { return percentile(values, 0.5); }

double geometric_mean(std::span<const double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  double log_sum = 0.0;
  for (double x : values) {
    if (!(x > 0.0)) return std::numeric_limits<double>::quiet_NaN();
    log_sum += std::log(x);
  }
  return std::exp(log_sum / static_cast<double>(values.size()));
}

}  // namespace tunekit
