// PairwiseBayesModel: Bayesian linear regression on one-hot knob values and their pairwise
// products, with Thompson sampling of the weights (the model of BOCS, Baptista & Poloczek,
// ICML 2018, with a Gaussian instead of a horseshoe prior).
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of PairwiseBayesModel. Variances are relative to the variance of the centred
/// target (the target is standardised before fitting).
struct PairwiseBayesSettings {
  /// Prior variance of the sum of all first-order (one knob value) terms of one configuration.
  double first_order_variance = 1.0;
  /// Prior variance of the sum of all pairwise (two knob values) terms of one configuration.
  double pairwise_variance = 0.5;
  /// Observation noise variance.
  double noise_variance = 0.03;
  /// When not empty, each fit takes the noise variance of this list with the largest marginal
  /// likelihood of the standardised target (type-II maximum likelihood) instead.
  std::vector<double> noise_grid;
  /// Beyond this many rows, a fit conditions on the best max_rows / 2 and a random max_rows / 2
  /// of the others (the posterior of all rows costs O(n^2) memory).
  std::size_t max_rows = 256;
};

/// y(c) = b + sum_k w1[k, c_k] + sum_{k<l} w2[k, l, c_k, c_l] over the knobs with more than
/// one value, all weights Gaussian a priori (variances from PairwiseBayesSettings divided by the
/// number of terms). fit() draws one weight vector from the posterior (Matheron's rule in the
/// dual: w = w0 + S X^T (K)^-1 (y - X w0 - e), K = X S X^T + noise I, an n x n system whose
/// entries only depend on how many knobs two configurations share), so predictions of one fit
/// are a joint posterior sample: ranking candidates by them is Thompson sampling. Matheron's
/// rule for posterior draws: Wilson et al., "Efficiently sampling functions from Gaussian process
/// posteriors", ICML 2020. The growing factor is the row-by-row Cholesky update of the kernel
/// matrix when rows are only appended (a fit on other rows refactors from scratch).
/// Cost: a fit adds O(i^2 + i k) per new row i to the factor (O(n^3) in all when the rows are
/// only appended; beyond max_rows the factor of the subset is rebuilt at every fit), plus
/// O(n^2 + n t) per draw and O(T) for the prior weights, for n rows, k knobs of more than one
/// value, t = k + k(k-1)/2 terms per row and T terms in all (sum of the knob sizes plus the
/// products of the sizes of each pair); predict O(t). Beyond 2^20 terms (knobs of hundreds of
/// values) the prior weights are drawn lazily per term and the posterior part is kept sparse,
/// so a fit no longer costs O(T).
class PairwiseBayesModel {
 public:
  /// `sizes`: the number of values of each knob, as ConfigSpace::dims() (knobs of size 1 are
  /// ignored).
  PairwiseBayesModel(std::span<const std::uint64_t> sizes, PairwiseBayesSettings settings = {});

  /// Fits `rows` (one knob-position vector per row, all of `sizes`' length) to `y` and draws a
  /// posterior sample with `rng`. Errors: kInvalidArgument (size mismatch, no rows, a position
  /// out of range).
  Status fit(std::span<const std::vector<std::uint32_t>> rows, std::span<const double> y, Rng& rng);
  /// The sampled function at `knobs` (in the units of the fitted y). Requires a successful fit
  /// (checked) and knob positions in range (unchecked).
  double predict(std::span<const std::uint32_t> knobs) const;
  /// True after a successful fit(); a failed fit keeps the previous draw.
  bool fitted() const noexcept { return fitted_; }
  /// The noise variance of the last fit (noise_variance, or the one chosen from noise_grid).
  double noise() const noexcept { return noise_; }

 private:
  /// Terms up to which the weights are stored densely (8 MiB of doubles).
  static constexpr std::size_t kDenseTerms = std::size_t{1} << 20;
  bool dense() const noexcept { return terms_ <= kDenseTerms; }
  /// Dense: the drawn weight of term t. Sparse: its prior draw (the data part is in sparse_).
  double prior_or_weight(std::size_t t) const;
  double normal(Rng& rng) const;
  template <class F>
  void for_each_term(std::span<const std::uint32_t> knobs, F&& f) const;

  PairwiseBayesSettings settings_;
  std::vector<std::size_t> knobs_;         // knobs with more than one value
  std::vector<std::uint64_t> sizes_;       // all knobs
  std::vector<std::size_t> first_offset_;  // per entry of knobs_
  std::vector<std::size_t> pair_offset_;   // per pair (a < b) of knobs_, row-major upper triangle
  std::size_t first_terms_ = 0;
  std::size_t terms_ = 0;
  double s1_ = 0.0, s2_ = 0.0;                             // per-term prior variances
  std::vector<std::vector<std::uint32_t>> factor_rows_;    // the rows factors_ factor, in order
  std::vector<double> noises_;                             // candidate noise variances
  std::vector<std::vector<std::vector<double>>> factors_;  // per noise: row i of L, i + 1 entries
  double noise_ = 0.0;                                     // the one the last fit chose
  std::vector<double> w_;
  std::unordered_map<std::size_t, double> sparse_;
  std::uint64_t draw_seed_ = 0;
  double bias_ = 0.0;
  double mean_ = 0.0, scale_ = 1.0;
  bool fitted_ = false;
};

}  // namespace tunekit
