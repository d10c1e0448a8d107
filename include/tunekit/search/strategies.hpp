// The built-in search strategies: grid, random, genetic algorithm, simulated annealing,
// model-based (XGBoost + annealing over predictions) and tunekit's default ("auto").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/search/strategy.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Number of valid points in [begin, end], when it can be counted cheaply (<= 2^24 indices);
/// nullopt for larger ranges, which strategies treat as never exhausted.
std::optional<std::uint64_t> countable_valid(const ConfigSpace& space, std::uint64_t begin,
                                             std::uint64_t end);

/// AutoTVM GridSearchTuner: the valid indices of [begin, end] (end inclusive) in ascending order.
class GridSearchStrategy : public SearchStrategy {
 public:
  /// Walks [begin, end] (end inclusive; nullopt = the last index). SearchStrategy documents
  /// the overrides.
  explicit GridSearchStrategy(std::uint64_t begin = 0,
                              std::optional<std::uint64_t> end = std::nullopt)
      : begin_(begin), end_(end) {}
  std::string name() const override { return "grid"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial>) override {}
  bool has_next() const override { return next_.has_value(); }

 private:
  const ConfigSpace* space_ = nullptr;
  std::uint64_t begin_;
  std::optional<std::uint64_t> end_;
  std::uint64_t stop_ = 0;
  std::optional<std::uint64_t> next_;
};

/// AutoTVM RandomTuner (final): uniform valid indices of [begin, end] without repeats
/// (rejection sampling, get_rand_index).
class RandomSearchStrategy : public SearchStrategy {
 public:
  /// Draws from [begin, end] (end inclusive; nullopt = the last index). SearchStrategy
  /// documents the overrides.
  explicit RandomSearchStrategy(std::uint64_t begin = 0,
                                std::optional<std::uint64_t> end = std::nullopt)
      : begin_(begin), end_(end) {}
  std::string name() const override { return "random"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;
  /// Marks earlier trials visited (a resumed run does not draw them again).
  void load_history(std::span<const Trial> trials) override { update(trials); }

 private:
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::uint64_t begin_;
  std::optional<std::uint64_t> end_;
  std::uint64_t stop_ = 0;
  std::optional<std::uint64_t> valid_;
  std::unordered_set<std::uint64_t> visited_;
  bool exhausted_ = false;
};

/// Settings of GeneticStrategy (AutoTVM GATuner defaults).
struct GeneticSettings {
  std::size_t pop_size = 100;
  std::size_t elite_num = 3;
  double mutation_prob = 0.1;
};

/// AutoTVM GATuner (final): roulette selection on scores + 1e-8 normalised by the max,
/// one-point crossover on knob vectors, per-knob uniform mutation, elitism; visited children
/// are accepted (repeats are served by the measurement cache). Source: autotvm.md §8.3.
class GeneticStrategy : public SearchStrategy {
 public:
  /// A GA with `settings`; SearchStrategy documents the overrides.
  explicit GeneticStrategy(GeneticSettings settings = {}) : settings_(settings) {}
  std::string name() const override { return "ga"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;

 private:
  void next_generation();
  GeneticSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::vector<KnobVector> genes_;
  std::vector<double> scores_;
  std::vector<KnobVector> elites_;
  std::vector<double> elite_scores_;
  std::size_t trial_pt_ = 0;
  std::unordered_set<std::uint64_t> visited_;
};

/// Settings of SimulatedAnnealingStrategy (Kernel Tuner's simulated_annealing defaults).
struct AnnealingSettings {
  double t_start = 1.0;
  double t_min = 0.001;
  double alpha = 0.995;
  /// Proposals per temperature step.
  int iterations_per_step = 1;
  /// "hamming" (any other value of one knob) or "adjacent" (the next value up or down).
  std::string neighbour = "hamming";
};

/// Simulated annealing on measurements: from the current point, measure a random neighbour;
/// accept an improvement always, a worse point with probability exp(-(new/old - 1) / T)
/// (relative costs, as Kernel Tuner); T *= alpha per step; restart from a random point when
/// T < t_min or when every neighbour of the current point was measured.
class SimulatedAnnealingStrategy : public SearchStrategy {
 public:
  /// Annealing with `settings`; SearchStrategy documents the overrides.
  explicit SimulatedAnnealingStrategy(AnnealingSettings settings = {})
      : settings_(std::move(settings)) {}
  std::string name() const override { return "sa"; }
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;

 private:
  std::optional<Config> propose();
  AnnealingSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::optional<Config> current_;
  double current_cost_ = 0.0;  // seconds; +inf for a failure
  double temperature_ = 1.0;
  int step_iter_ = 0;
  std::unordered_set<std::uint64_t> visited_;
};

/// Settings of the annealing optimiser over model predictions (AutoTVM
/// SimulatedAnnealingOptimizer).
struct PredictionAnnealingSettings {
  int n_iter = 500;
  double temp_start = 1.0;
  double temp_end = 0.0;
  bool persistent = true;
  std::size_t parallel_size = 128;
  int early_stop = 50;
};

/// Finds up to `num` configurations with the highest predicted scores by simulated annealing
/// over `predict` (upstream find_maximums). `points` holds the walkers (persistent between calls
/// when the caller keeps it); configurations in `exclude` are never returned; results with a
/// negative score are dropped, as upstream. Source: autotvm.md §8.5.
std::vector<std::pair<double, std::uint64_t>> anneal_predictions(
    const ConfigSpace& space,
    const std::function<std::vector<double>(std::span<const KnobVector>)>& predict, std::size_t num,
    const std::unordered_set<std::uint64_t>& exclude, const PredictionAnnealingSettings& settings,
    std::vector<KnobVector>& points, Rng& rng);

/// Settings of ModelBasedStrategy (AutoTVM XGBTuner defaults, feature_type "knob").
struct ModelBasedSettings {
  std::size_t plan_size = 64;
  /// Diversity filter: SA returns plan_size * ratio candidates and a greedy submodular pick
  /// keeps plan_size (ratio >= 1; nullopt = off).
  std::optional<double> diversity_filter_ratio;
  /// Transfer learning: earlier records of the task train a base model when at least this many.
  std::size_t min_seed_records = 500;
  XGBoostSettings model;
  PredictionAnnealingSettings annealing;
};

/// AutoTVM XGBTuner / ModelBasedTuner: random trials until plan_size measurements, then plans
/// of plan_size configurations from annealing over an XGBoost model of y = score / max score
/// (failures 0), refitted every plan_size trials; the last 5% of each plan are random
/// (epsilon-greedy). load_history() resumes from trials of this space and trains a transfer
/// base model from trials of other spaces of the task (same feature width), whose margins decay
/// by 2^(-n/64) and are dropped below 0.05. Source: autotvm.md §8.4-8.6.
class ModelBasedStrategy : public SearchStrategy {
 public:
  /// An XGBTuner with `settings`; SearchStrategy documents the overrides.
  explicit ModelBasedStrategy(ModelBasedSettings settings = {});
  std::string name() const override;
  Status initialize(const ConfigSpace& space, std::uint64_t seed) override;
  std::vector<Config> next_batch(std::size_t n) override;
  void update(std::span<const Trial> trials) override;
  bool has_next() const override;
  void load_history(std::span<const Trial> trials) override;
  /// Number of refits so far (upstream train_ct).
  std::size_t train_count() const noexcept { return train_ct_; }

 private:
  std::vector<double> base_margins(const FeatureMatrix& x) const;
  void refit();
  std::optional<std::uint64_t> random_unvisited();
  ModelBasedSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::unique_ptr<XGBoostCostModel> model_;
  std::unique_ptr<XGBoostCostModel> base_model_;
  std::vector<KnobVector> xs_;
  std::vector<double> ys_;
  std::unordered_set<std::uint64_t> visited_;
  std::vector<std::uint64_t> plan_;
  std::size_t trial_pt_ = 0;
  std::size_t train_ct_ = 0;
  std::vector<KnobVector> sa_points_;
};

}  // namespace tunekit
