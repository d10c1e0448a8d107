// AutoStrategy ("auto"), tunekit's default: model-guided local search. A random-forest model of
// log performance scores the neighbourhoods of the best configurations plus a random pool.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/search/forest_model.hpp"
#include "tunekit/search/strategy.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of AutoStrategy. Defaults were chosen on the replay data (docs/search.md).
struct AutoSettings {
  /// Random configurations measured before the first model fit.
  std::size_t initial = 10;
  /// "forest" (ForestModel, refitted after every trial) or "xgb" (XGBoostCostModel on a
  /// bootstrap resample, refitted on a schedule).
  std::string model = "forest";
  /// How candidates are ranked: "ts" (Thompson-style: the mean of a random subset of
  /// `ts_trees` trees; for xgb, the bootstrap model), "ei" (expected improvement from the
  /// forest's mean and spread) or "mean".
  std::string acquisition = "ts";
  std::size_t ts_trees = 8;
  /// Regression target: "log" (log(score / best)), "inverse" (score / best, AutoTVM's) or
  /// "rank" (quantile among the successes). Failures get the worst value minus failure_penalty
  /// ("log") or 0.
  std::string target = "log";
  double failure_penalty = 1.0;
  /// Add the products of every pair of non-constant knob values to the model's features
  /// (tile and block sizes interact through their products: threads, tile footprints).
  bool interactions = false;
  /// Random valid configurations added to the candidates at every step.
  std::size_t pool_random = 256;
  /// The Hamming neighbourhoods of this many best configurations join the candidates.
  std::size_t top_k = 1;
  /// After this many trials without a new best, the neighbourhood leaves the candidates until
  /// the next improvement, so the model's picks come from the random pool only and a local
  /// optimum cannot hold the search (0 = never).
  std::size_t stagnation = 0;
  /// Probability of measuring a random unvisited configuration instead of the model's pick.
  double epsilon = 0.05;
  /// Refit after every trial until this many trials, then every n / refit_divisor trials, so
  /// long runs stay cheap.
  std::size_t refit_every_until = 128;
  std::size_t refit_divisor = 64;
  ForestSettings forest{};
  /// Trees rebuilt per refit after the first full fit (0 = all); the others keep their fit
  /// from earlier trials, which makes a refit trees/refresh_trees times cheaper.
  std::size_t refresh_trees = 0;
  XGBoostSettings xgb{"reg", 6, 0.3, 1e-4, 1.0, 1.0, 1.0, 0.0, 1, 60, 1000000, 64, 0, "hist"};

  /// Parses {"initial", "model", "acquisition", "ts_trees", "target", "failure_penalty",
  /// "pool_random", "top_k", "epsilon", "refit_every_until", "refit_divisor", "trees",
  /// "max_depth", "feature_fraction"}. Errors: kInvalidArgument (unknown key, bad value).
  static Expected<AutoSettings> from_json(const nlohmann::json& settings);
};

/// tunekit's default strategy: model-guided local search (a strategy none of the peers ships).
///
/// 1. Measure `initial` random valid configurations.
/// 2. After every trial (every n/64 trials beyond 128), refit a random forest (SMAC-style,
///    ForestModel) of y = log(score / best score) on knob features; failures score one unit
///    below the worst success.
/// 3. Candidates: the Hamming neighbourhood (one knob changed) of the best measured
///    configuration (top_k = 1), plus pool_random fresh random valid configurations.
/// 4. Measure the unvisited candidate ranked first by the acquisition: by default a Thompson
///    draw, the mean prediction of a random subset of trees, so that uncertain regions keep
///    being tried; with probability epsilon a random unvisited configuration instead.
/// The neighbourhoods make it a local search ordered by the model; the random pool lets it jump
/// to distant regions the model ranks higher. Every choice is seeded.
class AutoStrategy : public SearchStrategy {
 public:
  /// A strategy with `settings` (see AutoSettings); SearchStrategy documents the overrides.
  explicit AutoStrategy(AutoSettings settings = {}) : settings_(std::move(settings)) {}
  std::string name() const override { return "auto"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;
  /// Resumes from earlier trials of this space (they train the model and are not proposed again).
  void load_history(std::span<const Trial> trials) override;

 private:
  void refit();
  std::vector<double> scores_of(const FeatureMatrix& x);
  std::optional<Config> random_unvisited();
  const std::vector<float>& features(std::uint64_t index, const KnobVector& knobs);

  AutoSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::unique_ptr<ForestModel> forest_;
  std::unique_ptr<XGBoostCostModel> xgb_;
  std::vector<KnobVector> xs_;
  std::vector<double> scores_;
  double best_y_ = 0.0;
  std::unordered_set<std::uint64_t> visited_;
  std::unordered_map<std::uint64_t, std::vector<float>> feature_cache_;
  std::size_t fitted_at_ = 0;
  bool fitted_ = false;
  std::vector<std::size_t> varying_;
  double best_score_ = 0.0;
  std::size_t since_best_ = 0;  // non-constant numeric "ot" knobs (for interactions)
  std::optional<Config> pick(const std::vector<Config>& pool);
  std::optional<Config> global_pick();
};

}  // namespace tunekit
