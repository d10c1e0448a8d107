// Running and batch statistics used by every timing loop: Welford mean/variance, median,
// percentiles. All functions are unit-agnostic; callers state units (tunekit times are
// milliseconds).
#pragma once

#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace tunekit {

/// Online mean / variance / min / max.
/// Source: B. P. Welford, "Note on a method for calculating corrected sums of squares and
/// products", Technometrics 4(3), 1962.
class Welford {
 public:
  void add(double x) noexcept;
  std::size_t count() const noexcept { return n_; }
  double mean() const noexcept { return n_ ? mean_ : 0.0; }
  /// Sample variance (n - 1 denominator); 0 for fewer than two samples.
  double variance() const noexcept { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }
  double stddev() const noexcept;
  double min() const noexcept { return min_; }
  double max() const noexcept { return max_; }

 private:
  std::size_t n_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
  double min_ = std::numeric_limits<double>::infinity();
  double max_ = -std::numeric_limits<double>::infinity();
};

/// Median of `values` (average of the two middle values for even sizes). Errors: NaN when empty.
double median(std::span<const double> values);

/// Linear-interpolated percentile, `q` in [0, 1] (q = 0.5 is the median). NaN when empty.
double percentile(std::span<const double> values, double q);

/// Geometric mean of positive values; NaN when empty or any value <= 0.
double geometric_mean(std::span<const double> values);

}  // namespace tunekit
