// AutoStrategy ("auto"), tunekit's default: model-guided local search — an XGBoost model of
// log-relative performance ranks the neighbourhoods of the best points plus a random pool.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/search/strategy.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of AutoStrategy. Defaults were chosen on the replay data in docs/search.md.
struct AutoSettings {
  /// Random configurations measured before the first model fit.
  std::size_t initial = 10;
  /// Random valid configurations added to the candidate pool at every step.
  std::size_t pool_random = 256;
  /// When the space has at most this many valid configurations, the pool is all of them
  /// (enumerated once; predictions recomputed only after a refit).
  std::size_t pool_all = 0;
  /// The Hamming neighbourhoods of this many best configurations join the pool.
  std::size_t top_k = 4;
  /// Probability of measuring a random unvisited configuration instead of the model's pick.
  double epsilon = 0.05;
  /// Refit after every measurement until this many trials, then every n/refit_divisor trials.
  std::size_t refit_every_until = 64;
  std::size_t refit_divisor = 32;
  /// Score given to a failed configuration: the worst observed log-performance minus this.
  double failure_penalty = 1.0;
  /// Regression target: "log" (log(score / best)), "inverse" (score / best, AutoTVM's) or
  /// "rank" (quantile rank among the successes).
  std::string target = "log";
  /// Fit each model on a bootstrap resample of the trials (Thompson-style exploration).
  bool bootstrap = true;
  /// The cost model (reg loss, deeper trees, fewer rounds than AutoTVM's defaults).
  XGBoostSettings model{"reg", 6, 0.3, 1e-4, 1.0, 1.0, 1.0, 0.0, 1, 60, 1000000, 64, 0};

  /// Parses {"initial", "pool_random", "top_k", "epsilon", "refit_every_until", "refit_divisor",
  /// "failure_penalty", "max_depth", "rounds", "eta"}. Errors: kInvalidArgument (unknown key,
  /// bad value).
  static Expected<AutoSettings> from_json(const nlohmann::json& settings);
};

/// tunekit's default strategy: model-guided local search (a strategy none of the peers ships).
///
/// 1. Measure `initial` random valid configurations.
/// 2. Fit an XGBoost regression of y = log(score / best score) on knob features (failures:
///    worst y - failure_penalty), refitting on a schedule that thins out as trials accumulate.
/// 3. Candidates: the Hamming neighbourhoods (one knob changed) of the top_k best measured
///    configurations, plus pool_random fresh random valid configurations.
/// 4. Measure the unvisited candidate with the highest prediction (with probability epsilon, a
///    random unvisited configuration instead).
/// The neighbourhoods make it a local search that the model orders; the random pool lets the
/// model jump to distant regions it predicts to be better. Every choice is seeded.
class AutoStrategy : public SearchStrategy {
 public:
  explicit AutoStrategy(AutoSettings settings = {}) : settings_(std::move(settings)) {}
  std::string name() const override { return "auto"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;
  void load_history(std::span<const Trial> trials) override;

 private:
  void refit();
  std::optional<Config> random_unvisited();
  const std::vector<float>& features(std::uint64_t index, const KnobVector& knobs);

  AutoSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::unique_ptr<XGBoostCostModel> model_;
  std::vector<KnobVector> xs_;
  std::vector<double> scores_;
  std::unordered_set<std::uint64_t> visited_;
  std::unordered_map<std::uint64_t, std::vector<float>> feature_cache_;
  std::size_t fitted_at_ = 0;
  std::size_t fit_count_ = 0;
  std::vector<KnobVector> all_valid_;
  std::vector<double> all_pred_;
  std::size_t all_pred_fit_ = 0;
};

}  // namespace tunekit
