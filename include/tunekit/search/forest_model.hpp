// Tree models of tunekit's own for small training sets: ForestModel (a random forest with
// per-tree spread) and BoostedTreesModel (gradient-boosted regression trees), both over binned
// features.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of ForestModel. Defaults follow SMAC's random forest (Hutter et al., LION 2011):
/// bootstrap rows per tree, a random 5/6 of the features per split, min 3 rows to split.
/// fit() and refresh() refuse trees 0, min_samples_leaf 0 and feature_fraction outside (0, 1].
struct ForestSettings {
  std::size_t trees = 32;
  std::size_t max_depth = 20;
  std::size_t min_samples_split = 3;
  /// Rows each child of a split keeps at least (>= 1).
  std::size_t min_samples_leaf = 1;
  /// Fraction of the features tried at each split, in (0, 1] (at least one feature).
  double feature_fraction = 5.0 / 6.0;
  /// Features with more distinct training values are quantised to this many bins.
  std::size_t max_bins = 64;
  std::uint64_t seed = 0;
};

/// A node of a binary regression tree: rows with x[feature] <= threshold go left.
struct RegressionTreeNode {
  float threshold = 0.0f;
  std::int32_t feature = -1;  // -1: leaf
  std::int32_t left = -1, right = -1;
  double value = 0.0;
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

  /// Errors: kInvalidArgument (no rows, label, margin or weight counts that differ from the
  /// rows, settings out of range: see ForestSettings).
  Status fit(const FeatureMatrix& x, std::span<const double> y,
             std::span<const double> base_margin = {},
             std::span<const double> weights = {}) override;
  /// Rebuilds only the next `count` trees (round robin) on the new data and keeps the others:
  /// an incremental refit `trees / count` times cheaper. Fits all trees when none exist yet or
  /// the feature width changed. Same errors as fit().
  Status refresh(const FeatureMatrix& x, std::span<const double> y, std::size_t count);
  Expected<std::vector<double>> predict(const FeatureMatrix& x,
                                        std::span<const double> base_margin = {}) const override;
  bool fitted() const override { return !trees_.empty(); }

  /// Mean and standard deviation over the trees for each row (same errors as predict).
  Status predict_spread(const FeatureMatrix& x, std::vector<double>& mean,
                        std::vector<double>& stddev) const;
  /// The prediction of a random subset of `k` trees per call (a cheap posterior sample for
  /// Thompson sampling), drawn with `rng`.
  Status predict_sample(const FeatureMatrix& x, std::size_t k, Rng& rng,
                        std::vector<double>& out) const;

  /// The settings.
  const ForestSettings& settings() const noexcept { return settings_; }

 private:
  using Node = RegressionTreeNode;
  using Tree = std::vector<Node>;
  double predict_tree(const Tree& tree, const float* row) const noexcept;

  ForestSettings settings_;
  std::vector<Tree> trees_;
  std::size_t cols_ = 0;
  std::uint64_t fit_count_ = 0;
  std::size_t next_tree_ = 0;
  Status build(const FeatureMatrix& x, std::span<const double> y,
               std::span<const double> base_margin, std::span<const double> weights,
               std::size_t first, std::size_t count);
};

/// Settings of BoostedTreesModel; the names and meanings are XGBoost's (reg:squarederror).
struct BoostedTreesSettings {
  /// Boosting rounds (one tree each).
  std::size_t rounds = 60;
  std::size_t max_depth = 3;
  /// Shrinkage of every leaf value.
  double eta = 0.3;
  /// L2 regularisation of leaf values.
  double lambda = 1.0;
  /// Minimum loss reduction of a split.
  double gamma = 1e-4;
  /// Minimum sum of row weights (hessians) in each child.
  double min_child_weight = 1.0;
  std::size_t max_bins = 256;
};

/// Gradient-boosted regression trees for squared error (Friedman, Ann. Stat. 2001) with
/// XGBoost's regularised split gain and leaf values (Chen and Guestrin, KDD 2016, eqs. 5-7):
/// a split of a node with gradient sum G and hessian sum H into (GL, HL) and (GR, HR) gains
/// GL^2/(HL+lambda) + GR^2/(HR+lambda) - G^2/(H+lambda) and is made when that exceeds gamma and
/// both children have HL, HR >= min_child_weight; a leaf's value is -eta * G / (H + lambda).
/// Splits are exact over the distinct training values (quantised to max_bins bins beyond that),
/// depth-first; the initial prediction is the weighted mean of the targets. Row weights
/// multiply gradients and hessians: a row of weight 0 adds nothing to the loss (bootstrap counts
/// can be passed as weights), while the split points, midpoints between the distinct values of
/// all rows, do not depend on the weights.
///
/// The same model as XGBoost's "exact"/"hist" tree methods on a few hundred rows (apart from
/// the initial prediction: XGBoost starts from 0.5), without XGBoost's fixed cost of about
/// 40 us per boosting round: a 60-round fit on 100 rows plus the prediction of 550 candidates
/// is several times cheaper (bench/search_strategy_bench.cpp, BM_ModelFit), which lets the default
/// strategy refit after every trial. Trees are stored complete (depth max_depth, at most 12),
/// so a prediction takes max_depth branch-free steps per tree.
class BoostedTreesModel : public CostModel {
 public:
  /// A model with `settings`; nothing is trained until fit().
  explicit BoostedTreesModel(BoostedTreesSettings settings = {}) : settings_(settings) {}

  /// Errors: kInvalidArgument (shape mismatch, rounds 0, max_depth outside 1..12, eta <= 0,
  /// negative lambda, gamma or min_child_weight, no row with a positive weight).
  Status fit(const FeatureMatrix& x, std::span<const double> y,
             std::span<const double> base_margin = {},
             std::span<const double> weights = {}) override;
  Expected<std::vector<double>> predict(const FeatureMatrix& x,
                                        std::span<const double> base_margin = {}) const override;
  bool fitted() const override { return fitted_; }
  /// The settings.
  const BoostedTreesSettings& settings() const noexcept { return settings_; }

 private:
  BoostedTreesSettings settings_;
  /// Every tree as a complete binary tree of depth max_depth (a leaf above that depth sends all
  /// rows left, to copies of itself), so prediction takes max_depth branch-free steps: tree t's
  /// internal node i is feature_/threshold_[t * internal + i], its leaf j leaf_[t * leaves + j].
  std::vector<std::int32_t> feature_;
  std::vector<float> threshold_;
  std::vector<double> leaf_;
  double base_ = 0.0;
  std::size_t cols_ = 0;
  bool fitted_ = false;
};

}  // namespace tunekit
