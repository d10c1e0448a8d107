// CostModel: a regressor from configuration features to a predicted score, and its default
// implementation on XGBoost's C API (AutoTVM XGBoostCostModel settings).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// Row-major float32 feature rows of equal width (ConfigSpace::flatten_feature rows).
struct FeatureMatrix {
  std::vector<float> data;
  std::size_t rows = 0;
  std::size_t cols = 0;

  /// Appends one row. Precondition: row.size() == cols (cols is set by the first row).
  void add_row(std::span<const float> row);
  /// Feature rows of `configs` in `space` (knob features, fixed width per space).
  static FeatureMatrix of(const ConfigSpace& space, std::span<const KnobVector> configs);
};

/// A model of configuration quality: trained on (features, score) pairs, it predicts scores of
/// unseen configurations (higher is better). Implementations keep ML libraries behind this
/// narrow interface (autotvm.md §11, pitfall 5).
class CostModel {
 public:
  /// Destroys the model and its library state.
  virtual ~CostModel() = default;
  /// Trains from scratch on `x` (rows) and `y` (one score per row).
  /// `base_margin`, when not empty, is one prior prediction per row that the model adds to
  /// (transfer learning); `weights`, when not empty, one non-negative weight per row (e.g.
  /// bootstrap counts). Errors: kInvalidArgument (shape mismatch), kInternal (library error).
  virtual Status fit(const FeatureMatrix& x, std::span<const double> y,
                     std::span<const double> base_margin = {},
                     std::span<const double> weights = {}) = 0;
  /// Predicted scores of `x`, plus `base_margin` when given. Errors: kInvalidArgument before the
  /// first fit or for a width that differs from the training rows.
  virtual Expected<std::vector<double>> predict(const FeatureMatrix& x,
                                                std::span<const double> base_margin = {}) const = 0;
  /// True once fit() succeeded.
  virtual bool fitted() const = 0;
};

/// Settings of XGBoostCostModel. Defaults are AutoTVM's XGBoostCostModel (autotvm.md §8.4).
struct XGBoostSettings {
  /// "reg" (reg:squarederror, upstream's reg:linear), "rank" or "rank-binary" (rank:pairwise;
  /// rank-binary only binarises labels at 0.5 for evaluation upstream, which tunekit's own
  /// recall metric does not need, so both train the same).
  std::string loss = "reg";
  int max_depth = 3;
  double eta = 0.3;
  double gamma = 1e-4;
  double min_child_weight = 1.0;
  double subsample = 1.0;
  double lambda = 1.0;
  double alpha = 0.0;
  /// Threads XGBoost may use (upstream default: all cores; tunekit: 1, for reproducibility).
  int num_threads = 1;
  /// Boosting rounds at most (upstream 8000).
  int max_rounds = 8000;
  /// Early stopping: stop when the a-recall@`eval_top_n` on the training set has not improved
  /// for this many rounds (evaluated on even rounds only), keeping the best round.
  int early_stopping_rounds = 20;
  /// N of a-recall@N (upstream: plan_size).
  int eval_top_n = 64;
  /// Seed of the row permutation and of XGBoost.
  std::uint64_t seed = 0;
  /// XGBoost tree_method. "hist" (256 bins) is exact for knob features, which take few
  /// distinct values, and about twice as fast as "exact" on small training sets.
  std::string tree_method = "hist";
};

/// CostModel on XGBoost's C API (libxgboost 1.7). One booster per fit; not thread-safe.
/// Source: AutoTVM XGBoostCostModel (parameters, a-recall@N early stopping, row permutation).
class XGBoostCostModel : public CostModel {
 public:
  /// A model with `settings`; nothing is trained until fit().
  explicit XGBoostCostModel(XGBoostSettings settings = {});
  ~XGBoostCostModel() override;
  XGBoostCostModel(const XGBoostCostModel&) = delete;
  XGBoostCostModel& operator=(const XGBoostCostModel&) = delete;

  Status fit(const FeatureMatrix& x, std::span<const double> y,
             std::span<const double> base_margin = {},
             std::span<const double> weights = {}) override;
  Expected<std::vector<double>> predict(const FeatureMatrix& x,
                                        std::span<const double> base_margin = {}) const override;
  bool fitted() const override { return booster_ != nullptr; }
  /// Rounds kept after early stopping (0 before the first fit).
  int rounds() const noexcept { return best_rounds_; }
  /// The settings (mutable between fits).
  const XGBoostSettings& settings() const noexcept { return settings_; }
  XGBoostSettings& settings() noexcept { return settings_; }

 private:
  void release() noexcept;
  XGBoostSettings settings_;
  void* booster_ = nullptr;
  std::size_t cols_ = 0;
  int best_rounds_ = 0;
  std::uint64_t fit_count_ = 0;
};

/// AutoTVM a-recall@N: with `trial_order` the configurations sorted by predicted score
/// (best first) and `labels` their true scores, the mean over i < N of
/// |top-(i+1) predicted ∩ top-(i+1) true| / (i+1). In [0, 1]; 1 = perfect ranking of the top N.
double average_recall_at(std::span<const double> predictions, std::span<const double> labels,
                         std::size_t n);

}  // namespace tunekit
