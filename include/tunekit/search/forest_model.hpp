// ForestModel: a small, fast random-forest regressor over binned features, with per-tree
// spread for uncertainty. The cost model of tunekit's default strategy.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of ForestModel. Defaults follow SMAC's random forest (Hutter et al., LION 2011):
/// bootstrap rows per tree, a random 5/6 of the features per split, min 3 rows to split.
struct ForestSettings {
  std::size_t trees = 32;
  std::size_t max_depth = 20;
  std::size_t min_samples_split = 3;
  std::size_t min_samples_leaf = 1;
  /// Fraction of the features tried at each split (at least one).
  double feature_fraction = 5.0 / 6.0;
  /// Features with more distinct training values are quantised to this many bins.
  std::size_t max_bins = 64;
  std::uint64_t seed = 0;
};

/// Random-forest regression on knob features (CostModel). Training and prediction cost
/// O(trees * depth * rows * features) with small constants: about a millisecond for a few
/// hundred rows of a dozen knobs, which lets the default strategy refit after every trial.
/// Split points are midpoints between distinct training values, so unseen values fall on the
/// side of their nearest neighbours.
class ForestModel : public CostModel {
 public:
  /// A forest with `settings`; nothing is trained until fit().
  explicit ForestModel(ForestSettings settings = {}) : settings_(settings) {}

  Status fit(const FeatureMatrix& x, std::span<const double> y, std::span<const double> base_margin = {},
             std::span<const double> weights = {}) override;
  /// Rebuilds only the next `count` trees (round robin) on the new data and keeps the others:
  /// an incremental refit `trees / count` times cheaper. Fits all trees when none exist yet or
  /// the feature width changed. Same errors as fit().
  Status refresh(const FeatureMatrix& x, std::span<const double> y, std::size_t count);
  Expected<std::vector<double>> predict(const FeatureMatrix& x, std::span<const double> base_margin = {}) const override;
  bool fitted() const override { return !trees_.empty(); }

  /// Mean and standard deviation over the trees for each row (same errors as predict).
  Status predict_spread(const FeatureMatrix& x, std::vector<double>& mean, std::vector<double>& stddev) const;
  /// The prediction of a random subset of `k` trees per call (a cheap posterior sample for
  /// Thompson sampling), drawn with `rng`.
  Status predict_sample(const FeatureMatrix& x, std::size_t k, Rng& rng, std::vector<double>& out) const;

  /// The settings.
  const ForestSettings& settings() const noexcept { return settings_; }

 private:
  struct Node {
    float threshold = 0.0f;  // go left when x[feature] <= threshold
    std::int32_t feature = -1;  // -1: leaf
    std::int32_t left = -1, right = -1;
    double value = 0.0;
  };
  using Tree = std::vector<Node>;
  double predict_tree(const Tree& tree, const float* row) const noexcept;

  ForestSettings settings_;
  std::vector<Tree> trees_;
  std::size_t cols_ = 0;
  std::uint64_t fit_count_ = 0;
  std::size_t next_tree_ = 0;
  Status build(const FeatureMatrix& x, std::span<const double> y, std::span<const double> base_margin,
               std::span<const double> weights, std::size_t first, std::size_t count);
};

}  // namespace tunekit
