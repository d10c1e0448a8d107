// AutoStrategy ("auto"), tunekit's default: model-guided local search. A posterior draw of a
// Bayesian model of knob values and knob-value pairs ranks the neighbourhoods and
// recombinations of the best configurations plus a random pool (Thompson sampling).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tunekit/search/cost_model.hpp"
#include "tunekit/search/forest_model.hpp"
#include "tunekit/search/pairwise_model.hpp"
#include "tunekit/search/strategy.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

/// Settings of AutoStrategy. Defaults were chosen on the replay data (docs/search.md).
struct AutoSettings {
  /// Configurations measured before the first model fit.
  std::size_t initial = 8;
  /// How the `initial` configurations are chosen: "maximin" (one at a time, the one of
  /// `design_pool` random unvisited valid configurations whose smallest Hamming distance, the
  /// number of knobs that differ, to the configurations measured or chosen so far is largest;
  /// ties at random: a greedy maximin design, Johnson, Moore and Ylvisaker, J. Statist. Plann.
  /// Inference 26, 1990, drawn from random candidates so constrained spaces need no table) or
  /// "random" (uniform random valid configurations, the default before; docs/search.md).
  std::string design = "maximin";
  std::size_t design_pool = 16;
  /// "pairwise" (PairwiseBayesModel: Bayesian linear regression on one-hot knob values and
  /// their pairwise products, one posterior draw per fit), "gbt" (BoostedTreesModel: depth-3
  /// boosted trees, fitted on a bootstrap resample of the trials), "xgb" (the same boosted trees
  /// trained by XGBoost, XGBoostCostModel: about 4x the run time of gbt) or "forest" (ForestModel,
  /// a random forest).
  std::string model = "pairwise";
  /// How candidates are ranked: "ts" (Thompson-style: for pairwise, a posterior draw; for gbt and
  /// xgb, the prediction of the model fitted on a bootstrap resample; for forest, the mean of a
  /// random subset of `ts_trees` trees), "ei" (expected improvement from the forest's mean and
  /// spread), "mean" (forest) or "none" (random ranking, for ablations).
  std::string acquisition = "ts";
  std::size_t ts_trees = 8;
  /// Regression target: "log" (log(score / best)), "inverse" (score / best, AutoTVM's) or
  /// "rank" (quantile among the successes); empty: the model's own, "rank" for pairwise (a
  /// linear model is dragged by the heavy tail of slow configurations otherwise) and "log" for
  /// the trees. Failures get the worst value minus failure_penalty ("log") or 0.
  std::string target;
  double failure_penalty = 1.0;
  /// Add the products of every pair of non-constant knob values to the model's features
  /// (tile and block sizes interact through their products: threads, tile footprints).
  bool interactions = false;
  /// Random valid configurations added to the candidates at every step.
  std::size_t pool_random = 32;
  /// Recombinations added to the candidates at every step: each knob takes the value of one of
  /// the `recombine_parents` best configurations, chosen at random (invalid results are dropped).
  std::size_t pool_recombine = 256;
  std::size_t recombine_parents = 4;
  /// Configurations drawn from the per-knob value frequencies of the best `good_fraction` of
  /// the trials (at least 3), smoothed by one pseudo-count spread over each knob's values: an
  /// estimation-of-distribution (TPE-like) generator that exploits knobs whose good values do
  /// not depend much on the others. Added at every step; invalid draws are dropped.
  std::size_t pool_density = 0;
  double good_fraction = 0.2;
  /// Random "adjacent" neighbours of the best configuration added at every step: every knob
  /// moves one position down, stays or moves one up (Kernel Tuner's adjacent neighbourhood, which
  /// keeps divisibility constraints satisfiable by coordinated moves); invalid ones are repaired
  /// when `repair` is set, else dropped. 2048 was chosen on 2000-run replays (docs/search.md,
  /// "The adjacent pool").
  std::size_t pool_adjacent = 2048;
  /// gbt and xgb models: fit on a bootstrap resample of the trials (Thompson-style ranking); false
  /// fits every trial once (greedy on the model's prediction).
  bool bootstrap = true;
  /// gbt and xgb models with bootstrap: the best this-many trials are always in the resample.
  std::size_t keep_best = 0;
  /// Candidate generator: "pool" (neighbourhood, adjacent moves, recombinations and random
  /// configurations, below) or "pack" (a surrogate-assisted grey-wolf pack: see pack_pick()).
  std::string generator = "pool";
  std::size_t pack_size = 8;
  std::size_t pack_children = 16;
  double shake_rate = 0.2;
  double jump_rate = 0.15;
  /// An invalid recombination or adjacent move is repaired into a random valid configuration at
  /// Hamming distance 1 instead of being dropped (as Kernel Tuner's adaptive tabu grey wolf does).
  bool repair = false;
  /// The Hamming neighbourhoods of this many best configurations join the candidates.
  std::size_t top_k = 1;
  /// Two-knob moves of the best configuration added at every step: all of them when there are
  /// at most this many, else this many random ones (a uniform pair of knobs with more than one
  /// value, then another value of each, uniformly); invalid ones are dropped. The pairwise
  /// model predicts exactly such moves.
  std::size_t pool_pairs = 64;
  /// After this many trials without a new best, the neighbourhood leaves the candidates until
  /// the next improvement, so the model's picks come from the random pool only and a local
  /// optimum cannot hold the search (0 = never).
  std::size_t stagnation = 0;
  /// Stall handling: after this many trials without a new best (0 = never), while unvisited
  /// configurations remain, `stall_pool` random unvisited valid configurations join the
  /// candidates ranked by the posterior draw until a trial improves on the best. Mode "widen"
  /// adds them to the moves around the best at every pick, "replace" ranks them alone, and
  /// "alternate" ranks them alone at every other pick (the picks between keep the moves around
  /// the best; the random pool is ranked at the even counts of trials without a new best, so
  /// with 75 the first such pick is the 77th trial since the best). 75, "alternate" and 1024
  /// were chosen by leave-one-space-out on the replay data among the settings that lose
  /// nothing beyond one standard error on the files of the result tables (docs/search.md,
  /// "Held-out evaluation"); 0 is auto as it was before.
  std::size_t stall = 75;
  std::size_t stall_pool = 1024;
  std::string stall_mode = "alternate";
  /// Bounds each stall step to this many trials (0 = until the next improvement): after them
  /// the candidates of no stall come back for another `stall` trials, then another step. Not 1
  /// with stall_mode "alternate" (such a step could hold no pick of the random pool).
  std::size_t stall_burst = 0;
  /// Probability of measuring a random unvisited configuration instead of the model's pick
  /// (epsilon-greedy). 0 by default: the posterior draw and the random candidates already
  /// explore, and 0.05 was behind on every replay file at 50, 100 and 200 evaluations
  /// (docs/search.md).
  double epsilon = 0.0;
  /// Refit after every trial until this many trials, then every n / refit_divisor trials, so
  /// long runs stay cheap (between fits, each pick is the next unvisited candidate the same
  /// model draw ranks first: batch Thompson sampling).
  std::size_t refit_every_until = 128;
  std::size_t refit_divisor = 64;
  ForestSettings forest{};
  /// Trees rebuilt per refit after the first full fit (0 = all); the others keep their fit
  /// from earlier trials, which makes a refit trees/refresh_trees times cheaper.
  std::size_t refresh_trees = 0;
  /// Settings of the pairwise model ("pair_first_variance", "pair_variance", "pair_noise",
  /// "pair_noise_grid", "pair_max_rows" in JSON).
  PairwiseBayesSettings pairwise{};
  /// Settings of the boosted trees ("gbt": max_depth, eta, gamma, min_child_weight, lambda and
  /// max_rounds as rounds; "xgb": all of them).
  XGBoostSettings xgb{"reg", 3, 0.3, 1e-4, 1.0, 1.0, 1.0, 0.0, 1, 60, 1000000, 64, 0, "hist"};

  /// Parses a JSON object whose keys are the field names above ("trees", "max_depth",
  /// "feature_fraction", "min_samples_leaf", "min_samples_split" set the forest; "rounds",
  /// "eta", "min_child_weight" and "max_depth" the boosted trees; "pair_*" the pairwise
  /// model). Every value is checked, whichever model uses it.
  /// Ranges:  counts are integers >= 0; initial, refit_divisor >= 1; design_pool in [1, 10^4];
  ///          pools, pack_size, pack_children, recombine_parents and top_k at most 10^6, stall_pool
  ///          at least 1; stall >= 0; stall_mode replace, widen or alternate; stall_burst not 1
  ///          with alternate; trees and ts_trees in [1, 10^4], refresh_trees in [0, 10^4];
  ///          max_depth in [1, 64] (at most 12 with model gbt); min_samples_leaf in [1, 10^6],
  ///          min_samples_split in [2, 10^6]; rounds in [1, 10^6]; pair_max_rows >= 2;
  ///          feature_fraction, good_fraction and eta in (0, 1] (eta as XGBoost documents it);
  ///          epsilon, shake_rate and jump_rate in [0, 1]; variances, min_child_weight and
  ///          failure_penalty in [0, 10^6]; noise variances in [10^-6, 10^6], pair_noise_grid 1 to
  ///          100 of them; pack_size >= 4 with generator pack; names one of those listed above;
  ///          repair, bootstrap and interactions true or false.
  /// Errors:  kInvalidArgument, one message per error: an unknown key (listing the accepted
  ///          ones), a value of the wrong type or out of range ("auto: setting
  ///          'feature_fraction' must be a number in (0, 1]"), acquisition ei or mean without
  ///          model forest.
  static Expected<AutoSettings> from_json(const nlohmann::json& settings);
};

/// tunekit's default strategy: model-guided local search (a strategy none of the peers ships).
///
/// 1. Measure `initial` (8) valid configurations, a greedy maximin design (AutoSettings::design).
/// 2. After every trial (every n/64 trials beyond 128), draw a function from the posterior of
///    PairwiseBayesModel (a Gaussian prior on one weight per knob value and per pair of values
///    of two knobs) given y = the rank quantile of each trial's score (failures 0).
/// 3. Candidates: the Hamming neighbourhood (one knob changed) of the best configuration,
///    64 random two-knob moves of it, 2048 "adjacent" moves of it (every knob one position
///    down, unchanged or up), 256 recombinations of the 4 best configurations (each knob from
///    one of them), and 32 fresh random valid configurations.
/// 4. Measure the unvisited candidate the draw ranks first, ties broken at random (with
///    probability epsilon, 0 by default, a random unvisited configuration instead). The draw
///    is Thompson sampling: knob values and pairs the trials do not pin down keep being tried.
/// 5. After `stall` (75) trials without a new best, every other pick ranks 1024 random unvisited
///    configurations instead of the candidates above, until a trial improves on the best
///    (AutoSettings::stall, stall_mode).
/// The neighbourhood makes it a local search ordered by the model, the recombinations exploit
/// knobs whose good values are shared by the best configurations, and the random pool lets the
/// model jump to distant regions it ranks higher. Every choice is seeded.
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
  /// A uniform random unvisited valid configuration, from `attempts` random indices; when they
  /// all miss and `enumerate` is set, from the list of every unvisited valid index (spaces of at
  /// most 2^24 points). nullopt when none was found.
  std::optional<Config> random_unvisited(std::size_t attempts = 100000, bool enumerate = true);
  /// The next configuration of the initial design (AutoSettings::design); nullopt when every
  /// valid configuration was visited.
  std::optional<Config> design_pick();
  const std::vector<float>& features(std::uint64_t index, std::span<const std::uint32_t> knobs);

  AutoSettings settings_;
  const ConfigSpace* space_ = nullptr;
  Rng rng_;
  std::optional<std::uint64_t> valid_;
  std::unique_ptr<ForestModel> forest_;
  std::unique_ptr<CostModel> boosted_;  // model "gbt" or "xgb"
  std::unique_ptr<PairwiseBayesModel> pairwise_;
  std::vector<KnobVector> design_;  // initial configurations chosen so far
  std::vector<KnobVector> xs_;
  std::vector<double> scores_;
  double best_y_ = 0.0;
  std::unordered_set<std::uint64_t> visited_;
  std::unordered_map<std::uint64_t, std::vector<float>> feature_cache_;
  std::size_t fitted_at_ = 0;
  bool fitted_ = false;
  std::vector<std::size_t> varying_;       // non-constant numeric "ot" knobs (for interactions)
  std::vector<std::size_t> multi_valued_;  // knobs with more than one value
  std::size_t two_knob_moves_ = 0;         // configurations two knobs away from any one
  double best_score_ = 0.0;
  std::size_t since_best_ = 0;  // trials since the best score last improved
  /// What the stall handling does at this pick (AutoSettings::stall, stall_burst, stall_mode).
  enum class StallStep { kNone, kWiden, kGlobal };
  StallStep stall_step() const noexcept;
  /// The candidates of one pick, each once, in the order offered (flat knob positions and an
  /// open-addressing index set, reused from pick to pick so building a pool allocates nothing).
  struct CandidatePool {
    static constexpr std::uint64_t kEmpty = ~std::uint64_t{0};
    std::size_t width = 0;
    std::vector<std::uint64_t> index;
    std::vector<std::uint32_t> knobs;
    std::vector<std::uint64_t> slots;
    unsigned slot_bits = 10;
    std::size_t slot_of(std::uint64_t i) const;
    void clear(std::size_t knob_count);
    /// Adds a candidate; false when `i` is already in the pool.
    bool add(std::uint64_t i, std::span<const std::uint32_t> k);
    /// True when `i` is in the pool.
    bool contains(std::uint64_t i) const;
    std::size_t size() const { return index.size(); }
    std::span<const std::uint32_t> at(std::size_t r) const {
      return {knobs.data() + r * width, width};
    }
  };
  /// Adds an unvisited configuration to pool_.
  void offer(std::uint64_t index, std::span<const std::uint32_t> knobs);
  /// offer() for generated knob positions when they are valid (or, with `repairable` and the
  /// repair setting, repaired to a valid neighbour).
  void offer_if_valid(KnobVector& knobs, bool repairable);
  /// The candidate of pool_ the model ranks first; nullopt when pool_ is empty.
  std::optional<Config> pick();
  CandidatePool pool_;
  std::optional<Config> global_pick();
  /// Offers the two-knob moves of `best` (AutoSettings::pool_pairs).
  void offer_two_knob_moves(const KnobVector& best);
  /// Up to `count` random valid configurations (fewer when draws fail).
  void offer_random(std::size_t count);
  /// pool_recombine children of the recombine_parents best (`order`: trials best first).
  void offer_recombinations(std::span<const std::size_t> order);
  /// pool_density draws from the per-knob value frequencies of the good trials.
  void offer_density_draws(std::span<const std::size_t> order);
  /// pool_adjacent moves of `best`: every knob one position down, unchanged or up.
  void offer_adjacent_moves(const KnobVector& best);
  bool repair(KnobVector& knobs, bool adjacent_first);
  std::optional<Config> pack_pick();
  std::vector<std::pair<KnobVector, double>> pack_;
  std::size_t pack_cursor_ = 0;
  std::optional<std::pair<std::uint64_t, std::size_t>> pending_;  // (index, pack member)
};

}  // namespace tunekit
