// AutoStrategy: model-guided local search (tunekit's default strategy).
// See include/tunekit/search/auto_strategy.hpp for the algorithm.
#include "tunekit/search/auto_strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string_view>
#include <utility>
#include <vector>

#include "search/setting_readers.hpp"
#include "tunekit/search/strategies.hpp"

namespace tunekit {

namespace {

using setting::integer_in;
using setting::kNoLimit;
using setting::number_in;
using setting::Open;
using Setter = void (*)(AutoSettings&, const nlohmann::json&);

// Limits of the settings (documented in AutoSettings::from_json and docs/search.md).
constexpr std::uint64_t kMaxPool = 1000000;      // candidates of one kind per step, top_k, pack
constexpr std::uint64_t kMaxDesignPool = 10000;  // per maximin pick (each vs every trial)
constexpr std::uint64_t kMaxTrees = 10000;       // forest trees (each is refitted)
constexpr std::uint64_t kMaxDepth = 64;          // tree depth (forest and boosted trees)
constexpr std::uint64_t kMaxGbtDepth = 12;       // BoostedTreesModel stores complete trees
constexpr std::uint64_t kMaxRounds = 1000000;    // boosting rounds
constexpr std::size_t kMaxNoiseGrid = 100;       // pair_noise_grid values (one factor each)
constexpr double kMaxVariance = 1e6;
constexpr double kMinNoise = 1e-6;  // a noise variance that keeps the Cholesky factor positive

// Readers of the auto settings, each with the range of its field.
std::size_t pool_of(const nlohmann::json& v) { return integer_in(v, 0, kMaxPool); }
double fraction_of(const nlohmann::json& v) { return number_in(v, 0.0, 1.0, Open::kLow); }
double probability_of(const nlohmann::json& v) { return number_in(v, 0.0, 1.0); }
double variance_of(const nlohmann::json& v) { return number_in(v, 0.0, kMaxVariance); }
double noise_of(const nlohmann::json& v) { return number_in(v, kMinNoise, kMaxVariance); }

/// Every key AutoSettings::from_json accepts, with how it reads and checks the value.
const std::vector<std::pair<std::string_view, Setter>>& auto_setters() {
  using J = nlohmann::json;
  static const std::vector<std::pair<std::string_view, Setter>> setters = {
      {"initial", [](AutoSettings& a, const J& v) { a.initial = integer_in(v, 1); }},
      {"model",
       [](AutoSettings& a, const J& v) {
         a.model = setting::one_of(v, {"pairwise", "gbt", "xgb", "forest"});
       }},
      {"acquisition",
       [](AutoSettings& a, const J& v) {
         a.acquisition = setting::one_of(v, {"ts", "ei", "mean", "none"});
       }},
      {"ts_trees", [](AutoSettings& a, const J& v) { a.ts_trees = integer_in(v, 1, kMaxTrees); }},
      {"target",
       [](AutoSettings& a, const J& v) {
         // An empty string is the default: the model's own target.
         a.target = v == "" ? std::string() : setting::one_of(v, {"log", "inverse", "rank"});
       }},
      {"failure_penalty",
       [](AutoSettings& a, const J& v) { a.failure_penalty = number_in(v, 0.0, kMaxVariance); }},
      {"pool_random", [](AutoSettings& a, const J& v) { a.pool_random = pool_of(v); }},
      {"pool_pairs", [](AutoSettings& a, const J& v) { a.pool_pairs = pool_of(v); }},
      {"top_k", [](AutoSettings& a, const J& v) { a.top_k = pool_of(v); }},
      {"epsilon", [](AutoSettings& a, const J& v) { a.epsilon = probability_of(v); }},
      {"refit_every_until",
       [](AutoSettings& a, const J& v) { a.refit_every_until = integer_in(v, 0); }},
      {"refit_divisor", [](AutoSettings& a, const J& v) { a.refit_divisor = integer_in(v, 1); }},
      {"trees", [](AutoSettings& a, const J& v) { a.forest.trees = integer_in(v, 1, kMaxTrees); }},
      {"max_depth",
       [](AutoSettings& a, const J& v) {
         const auto depth = integer_in(v, 1, kMaxDepth);
         a.forest.max_depth = depth;
         a.xgb.max_depth = static_cast<int>(depth);
       }},
      {"feature_fraction",
       [](AutoSettings& a, const J& v) { a.forest.feature_fraction = fraction_of(v); }},
      {"min_samples_leaf",
       [](AutoSettings& a, const J& v) { a.forest.min_samples_leaf = integer_in(v, 1, kMaxPool); }},
      {"refresh_trees",
       [](AutoSettings& a, const J& v) { a.refresh_trees = integer_in(v, 0, kMaxTrees); }},
      {"min_samples_split",
       [](AutoSettings& a, const J& v) {
         a.forest.min_samples_split = integer_in(v, 2, kMaxPool);
       }},
      {"interactions", [](AutoSettings& a, const J& v) { a.interactions = setting::boolean(v); }},
      {"pool_recombine", [](AutoSettings& a, const J& v) { a.pool_recombine = pool_of(v); }},
      {"pool_adjacent", [](AutoSettings& a, const J& v) { a.pool_adjacent = pool_of(v); }},
      {"design",
       [](AutoSettings& a, const J& v) {
         a.design = setting::one_of(v, {"maximin", "random"});
       }},
      {"design_pool",
       [](AutoSettings& a, const J& v) { a.design_pool = integer_in(v, 1, kMaxDesignPool); }},
      {"pool_density", [](AutoSettings& a, const J& v) { a.pool_density = pool_of(v); }},
      {"good_fraction", [](AutoSettings& a, const J& v) { a.good_fraction = fraction_of(v); }},
      {"recombine_parents", [](AutoSettings& a, const J& v) { a.recombine_parents = pool_of(v); }},
      {"stagnation", [](AutoSettings& a, const J& v) { a.stagnation = integer_in(v, 0); }},
      {"stall", [](AutoSettings& a, const J& v) { a.stall = integer_in(v, 0); }},
      {"stall_pool",
       [](AutoSettings& a, const J& v) { a.stall_pool = integer_in(v, 1, kMaxPool); }},
      {"stall_burst", [](AutoSettings& a, const J& v) { a.stall_burst = integer_in(v, 0); }},
      {"stall_mode",
       [](AutoSettings& a, const J& v) {
         a.stall_mode = setting::one_of(v, {"replace", "widen", "alternate"});
       }},
      {"repair", [](AutoSettings& a, const J& v) { a.repair = setting::boolean(v); }},
      {"bootstrap", [](AutoSettings& a, const J& v) { a.bootstrap = setting::boolean(v); }},
      {"generator",
       [](AutoSettings& a, const J& v) {
         a.generator = setting::one_of(v, {"pool", "pack"});
       }},
      {"pack_size", [](AutoSettings& a, const J& v) { a.pack_size = pool_of(v); }},
      {"pack_children", [](AutoSettings& a, const J& v) { a.pack_children = pool_of(v); }},
      {"shake_rate", [](AutoSettings& a, const J& v) { a.shake_rate = probability_of(v); }},
      {"jump_rate", [](AutoSettings& a, const J& v) { a.jump_rate = probability_of(v); }},
      {"rounds",
       [](AutoSettings& a, const J& v) {
         a.xgb.max_rounds = static_cast<int>(integer_in(v, 1, kMaxRounds));
       }},
      // XGBoost documents eta's range as [0, 1]; 0 would train nothing.
      {"eta", [](AutoSettings& a, const J& v) { a.xgb.eta = fraction_of(v); }},
      {"min_child_weight",
       [](AutoSettings& a, const J& v) { a.xgb.min_child_weight = variance_of(v); }},
      {"pair_first_variance",
       [](AutoSettings& a, const J& v) { a.pairwise.first_order_variance = variance_of(v); }},
      {"pair_variance",
       [](AutoSettings& a, const J& v) { a.pairwise.pairwise_variance = variance_of(v); }},
      {"pair_max_rows",
       [](AutoSettings& a, const J& v) { a.pairwise.max_rows = integer_in(v, 2); }},
      {"pair_noise_grid",
       [](AutoSettings& a, const J& v) {
         if (!v.is_array()) throw setting::BadSetting("must be a list of numbers");
         if (v.empty()) throw setting::BadSetting("must hold at least one value");
         if (v.size() > kMaxNoiseGrid)
           throw setting::BadSetting(fmt::format("must hold at most {} values", kMaxNoiseGrid));
         a.pairwise.noise_grid.clear();
         try {
           for (const auto& e : v) a.pairwise.noise_grid.push_back(noise_of(e));
         } catch (const setting::BadSetting& e) {
           throw setting::BadSetting(std::string("values ") + e.what());
         }
       }},
      {"pair_noise", [](AutoSettings& a, const J& v) { a.pairwise.noise_variance = noise_of(v); }},
      {"keep_best", [](AutoSettings& a, const J& v) { a.keep_best = integer_in(v, 0); }},
  };
  return setters;
}

}  // namespace

Expected<AutoSettings> AutoSettings::from_json(const nlohmann::json& s) {
  AutoSettings a;
  if (!s.is_object())
    return Status(StatusCode::kInvalidArgument, "auto: settings must be a JSON object");
  const auto& setters = auto_setters();
  for (const auto& [k, v] : s.items()) {
    auto it = std::find_if(setters.begin(), setters.end(),
                           [&k = k](const auto& e) { return e.first == k; });
    if (it == setters.end()) {
      std::string accepted;
      for (const auto& e : setters)
        accepted += (accepted.empty() ? "" : ", ") + std::string(e.first);
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("auto: unknown setting '{}' (accepted: {})",
                                setting::printable_key(k), accepted));
    }
    // Every value is checked whichever model uses it, so a wrong value never waits silently.
    try {
      it->second(a, v);
    } catch (const setting::BadSetting& e) {
      return setting::error("auto", k, e.what());
    }
  }
  // Settings whose range depends on another one.
  if (a.generator == "pack" && a.pack_size < 4)
    return setting::error("auto", "pack_size", "must be at least 4 with generator pack");
  // An alternate step ranks the random pool only at even counts of trials without a new best,
  // so a one-trial step after an odd `stall` would never do so.
  if (a.stall_mode == "alternate" && a.stall_burst == 1)
    return setting::error("auto", "stall_burst",
                          "must be 0 or at least 2 with stall_mode alternate");
  if (a.model == "gbt" && static_cast<std::uint64_t>(a.xgb.max_depth) > kMaxGbtDepth) {
    return setting::error("auto", "max_depth",
                          fmt::format("must be at most {} with model gbt", kMaxGbtDepth));
  }
  if ((a.acquisition == "ei" || a.acquisition == "mean") && a.model != "forest") {
    return Status(StatusCode::kInvalidArgument,
                  "auto: acquisition ei and mean need model forest (the others rank by a "
                  "Thompson-style draw: ts, or none)");
  }
  return a;
}

Status AutoStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  space_ = &space;
  rng_.reseed(seed);
  valid_ = countable_valid(space, 0, space.range_length() - 1);
  ForestSettings fs = settings_.forest;
  fs.seed = seed;
  forest_ = std::make_unique<ForestModel>(fs);
  if (settings_.model == "gbt") {
    BoostedTreesSettings bs;
    bs.rounds = static_cast<std::size_t>(settings_.xgb.max_rounds);
    bs.max_depth = static_cast<std::size_t>(settings_.xgb.max_depth);
    bs.eta = settings_.xgb.eta;
    bs.lambda = settings_.xgb.lambda;
    bs.gamma = settings_.xgb.gamma;
    bs.min_child_weight = settings_.xgb.min_child_weight;
    boosted_ = std::make_unique<BoostedTreesModel>(bs);
  } else if (settings_.model == "xgb") {
    XGBoostSettings xs = settings_.xgb;
    xs.seed = seed;
    boosted_ = std::make_unique<XGBoostCostModel>(xs);
  } else {
    boosted_.reset();
  }
  pairwise_.reset();
  if (settings_.model == "pairwise")
    pairwise_ = std::make_unique<PairwiseBayesModel>(space.dims(), settings_.pairwise);
  xs_.clear();
  scores_.clear();
  visited_.clear();
  feature_cache_.clear();
  fitted_at_ = 0;
  fitted_ = false;
  best_y_ = 0.0;
  best_score_ = 0.0;
  since_best_ = 0;
  pack_.clear();
  pack_cursor_ = 0;
  pending_.reset();
  design_.clear();
  multi_valued_.clear();
  two_knob_moves_ = 0;
  for (std::size_t k = 0; k < space.knob_count(); ++k) {
    if (space.knob(k).size() < 2) continue;
    for (auto j : multi_valued_)
      two_knob_moves_ += (space.knob(j).size() - 1) * (space.knob(k).size() - 1);
    multi_valued_.push_back(k);
  }
  varying_.clear();
  for (std::size_t k = 0; k < space.knob_count(); ++k) {
    const Knob& knob = space.knob(k);
    const bool numeric = std::all_of(knob.values.begin(), knob.values.end(),
                                     [](const ExprValue& v) { return v.is_number(); });
    if (knob.kind == KnobKind::kOther && knob.size() > 1 && numeric) varying_.push_back(k);
  }
  return Status::ok();
}

bool AutoStrategy::has_next() const { return !valid_ || visited_.size() < *valid_; }

const std::vector<float>& AutoStrategy::features(std::uint64_t index,
                                                 std::span<const std::uint32_t> knobs) {
  auto it = feature_cache_.find(index);
  if (it != feature_cache_.end()) return it->second;
  if (feature_cache_.size() > 200000) feature_cache_.clear();
  std::vector<float> f = space_->flatten_feature(knobs);
  if (settings_.interactions) {
    for (std::size_t a = 0; a < varying_.size(); ++a) {
      const double va = space_->knob(varying_[a]).values[knobs[varying_[a]]].number;
      for (std::size_t b = a + 1; b < varying_.size(); ++b) {
        f.push_back(
            static_cast<float>(va * space_->knob(varying_[b]).values[knobs[varying_[b]]].number));
      }
    }
  }
  return feature_cache_.emplace(index, std::move(f)).first->second;
}

std::optional<Config> AutoStrategy::random_unvisited(std::size_t attempts, bool enumerate) {
  auto idx = space_->random_valid_index(
      rng_, 0, space_->range_length(), [this](std::uint64_t i) { return visited_.count(i) > 0; },
      attempts);
  if (idx) return space_->config_at(*idx);
  if (!enumerate || space_->range_length() > (std::uint64_t{1} << 24)) return std::nullopt;
  std::vector<std::uint64_t> rest;
  for (std::uint64_t i = 0; i < space_->range_length(); ++i) {
    if (!visited_.count(i) && space_->is_valid(i)) rest.push_back(i);
  }
  if (rest.empty()) return std::nullopt;
  return space_->config_at(rest[rng_.uniform(rest.size())]);
}

void AutoStrategy::refit() {
  double best = 0.0;
  for (double s : scores_) best = std::max(best, s);
  if (best <= 0.0) return;
  std::vector<std::size_t> ok;
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    if (scores_[i] > 0.0) ok.push_back(i);
  }
  std::stable_sort(ok.begin(), ok.end(), [&](auto a, auto b) { return scores_[a] < scores_[b]; });
  // An empty target setting means the model's own: rank for pairwise, log for the trees.
  const std::string target = !settings_.target.empty()       ? settings_.target
                             : settings_.model == "pairwise" ? "rank"
                                                             : "log";
  std::vector<double> y(scores_.size(), 0.0);
  double worst = 0.0;
  for (std::size_t r = 0; r < ok.size(); ++r) {
    const std::size_t i = ok[r];
    if (target == "log")
      y[i] = std::log(scores_[i] / best);
    else if (target == "inverse")
      y[i] = scores_[i] / best;
    else
      y[i] = static_cast<double>(r + 1) / static_cast<double>(ok.size());
    worst = std::min(worst, y[i]);
  }
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    if (!(scores_[i] > 0.0)) y[i] = target == "log" ? worst - settings_.failure_penalty : 0.0;
  }
  best_y_ = *std::max_element(y.begin(), y.end());
  Status st;
  if (settings_.model == "pairwise") {
    st = pairwise_->fit(xs_, y, rng_);
  } else {
    FeatureMatrix x;
    for (std::size_t i = 0; i < xs_.size(); ++i)
      x.add_row(features(space_->knobs_to_index(xs_[i]), xs_[i]));
    if (settings_.model == "forest") {
      st = settings_.refresh_trees ? forest_->refresh(x, y, settings_.refresh_trees)
                                   : forest_->fit(x, y);
    } else {
      // Bootstrap resample as weights: each fit is a plausible model (Thompson-style).
      std::vector<double> w(xs_.size(), settings_.bootstrap ? 0.0 : 1.0);
      if (settings_.bootstrap) {
        for (std::size_t i = 0; i < xs_.size(); ++i) w[rng_.uniform(xs_.size())] += 1.0;
        // The best trials are always in the resample, so every plausible model knows where the
        // best region is.
        std::vector<std::size_t> order(xs_.size());
        std::iota(order.begin(), order.end(), 0);
        const std::size_t keep = std::min(settings_.keep_best, order.size());
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(keep),
                          order.end(), [&](auto a, auto b) { return scores_[a] > scores_[b]; });
        for (std::size_t i = 0; i < keep; ++i) w[order[i]] = std::max(w[order[i]], 1.0);
      }
      st = boosted_->fit(x, y, {}, w);
    }
  }
  if (st) {
    fitted_ = true;
    fitted_at_ = xs_.size();
  }
}

std::vector<double> AutoStrategy::scores_of(const FeatureMatrix& x) {
  std::vector<double> out;
  if (settings_.acquisition == "none") {
    for (std::size_t i = 0; i < x.rows; ++i) out.push_back(rng_.uniform01());
  } else if (settings_.model != "forest") {
    auto p = boosted_->predict(x);
    if (p) out = std::move(*p);
  } else if (settings_.acquisition == "ts") {
    if (!forest_->predict_sample(x, settings_.ts_trees, rng_, out)) out.clear();
  } else {
    std::vector<double> mean, sd;
    if (forest_->predict_spread(x, mean, sd)) {
      if (settings_.acquisition == "mean") {
        out = std::move(mean);
      } else {
        out.resize(mean.size());
        for (std::size_t i = 0; i < mean.size(); ++i) {
          const double d = mean[i] - best_y_;
          if (sd[i] <= 1e-12) {
            out[i] = std::max(d, 0.0);
          } else {
            const double z = d / sd[i];
            const double pdf = std::exp(-0.5 * z * z) / std::sqrt(2.0 * M_PI);
            const double cdf = 0.5 * std::erfc(-z / std::sqrt(2.0));
            out[i] = d * cdf + sd[i] * pdf;
          }
        }
      }
    }
  }
  if (out.size() != x.rows) out.assign(x.rows, 0.0);
  return out;
}

void AutoStrategy::CandidatePool::clear(std::size_t knob_count) {
  width = knob_count;
  index.clear();
  knobs.clear();
  if (slots.empty())
    slots.assign(std::size_t{1} << slot_bits, kEmpty);
  else
    std::fill(slots.begin(), slots.end(), kEmpty);
}

std::size_t AutoStrategy::CandidatePool::slot_of(std::uint64_t i) const {
  // Fibonacci hashing: the top bits of the product, which depend on every bit of the index
  // (mixed-radix indices of neighbours differ in a few low or middle bits only).
  return static_cast<std::size_t>((i * 0x9E3779B97F4A7C15ULL) >> (64 - slot_bits));
}

bool AutoStrategy::CandidatePool::add(std::uint64_t i, std::span<const std::uint32_t> k) {
  TUNEKIT_CHECK(k.size() == width);
  if (2 * (index.size() + 1) > slots.size()) {
    // Grow the open-addressing table (linear probing) and re-insert.
    ++slot_bits;
    slots.assign(std::size_t{1} << slot_bits, kEmpty);
    for (auto j : index) {
      std::size_t s = slot_of(j);
      while (slots[s] != kEmpty) s = (s + 1) & (slots.size() - 1);
      slots[s] = j;
    }
  }
  std::size_t s = slot_of(i);
  while (slots[s] != kEmpty) {
    if (slots[s] == i) return false;
    s = (s + 1) & (slots.size() - 1);
  }
  slots[s] = i;
  index.push_back(i);
  knobs.insert(knobs.end(), k.begin(), k.end());
  return true;
}

void AutoStrategy::offer(std::uint64_t index, std::span<const std::uint32_t> knobs) {
  if (!visited_.count(index)) pool_.add(index, knobs);
}

bool AutoStrategy::CandidatePool::contains(std::uint64_t i) const {
  if (slots.empty()) return false;
  for (std::size_t s = slot_of(i); slots[s] != kEmpty; s = (s + 1) & (slots.size() - 1)) {
    if (slots[s] == i) return true;
  }
  return false;
}

void AutoStrategy::offer_if_valid(KnobVector& knobs, bool repairable) {
  // The pool and the visited set hold valid configurations only, so a position found in either
  // needs no validity check (generated moves repeat often in small neighbourhoods).
  const auto index = space_->knobs_to_index(knobs);
  if (pool_.contains(index) || visited_.count(index)) return;
  if (space_->is_valid(knobs)) {
    pool_.add(index, knobs);
  } else if (repairable && settings_.repair && repair(knobs, false)) {
    offer(space_->knobs_to_index(knobs), knobs);
  }
}

std::optional<Config> AutoStrategy::pick() {
  if (pool_.size() == 0) return std::nullopt;
  std::vector<double> score;
  if (settings_.model == "pairwise" && settings_.acquisition != "none") {
    // One posterior draw ranks every candidate (Thompson sampling).
    score.resize(pool_.size());
    for (std::size_t i = 0; i < pool_.size(); ++i) score[i] = pairwise_->predict(pool_.at(i));
  } else {
    FeatureMatrix x;
    x.cols = features(pool_.index[0], pool_.at(0)).size();
    x.data.reserve(pool_.size() * x.cols);
    for (std::size_t i = 0; i < pool_.size(); ++i) {
      const auto& f = features(pool_.index[i], pool_.at(i));
      x.data.insert(x.data.end(), f.begin(), f.end());
      ++x.rows;
    }
    score = scores_of(x);
  }
  // Ties (trees predict piecewise constants, so many candidates share the top value) are broken
  // uniformly at random (reservoir sampling), not by the order in which the pool was built.
  std::size_t best = 0;
  std::size_t ties = 1;
  for (std::size_t i = 1; i < pool_.size(); ++i) {
    if (score[i] > score[best]) {
      best = i;
      ties = 1;
    } else if (score[i] == score[best] && rng_.uniform(++ties) == 0) {
      best = i;
    }
  }
  return space_->config_at(pool_.index[best]);
}

bool AutoStrategy::repair(KnobVector& knobs, bool adjacent_first) {
  // A random valid neighbour one knob away: first (when asked) among the adjacent ones (that
  // knob one position up or down), then among all Hamming neighbours; false when none is valid.
  for (int pass = adjacent_first ? 0 : 1; pass < 2; ++pass) {
    std::vector<std::pair<std::size_t, std::uint32_t>> fixes;
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      const auto old = knobs[k];
      const auto size = static_cast<std::uint32_t>(space_->knob(k).size());
      for (std::uint32_t v = 0; v < size; ++v) {
        if (v == old) continue;
        if (pass == 0 && v + 1 != old && v != old + 1) continue;
        knobs[k] = v;
        if (space_->is_valid(knobs)) fixes.emplace_back(k, v);
      }
      knobs[k] = old;
    }
    if (!fixes.empty()) {
      const auto& [k, v] = fixes[rng_.uniform(fixes.size())];
      knobs[k] = v;
      return true;
    }
  }
  return false;
}

std::optional<Config> AutoStrategy::pack_pick() {
  // Surrogate-assisted grey-wolf step: the leaders are the 3 best of the pack; a non-leader
  // member (in turn) breeds `pack_children` children (each knob from a leader or itself, a
  // shake with probability shake_rate: a random value of one knob with probability jump_rate,
  // else an adjacent move; invalid children repaired by adjacent/Hamming neighbours) and the
  // model picks the child to measure. The child replaces the member if it is better (update()).
  std::stable_sort(pack_.begin(), pack_.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  const std::size_t members = pack_.size() - 3;
  const std::size_t m = 3 + pack_cursor_++ % members;
  const KnobVector& self = pack_[m].first;
  pool_.clear(space_->knob_count());
  KnobVector child(self.size());
  for (std::size_t c = 0; c < settings_.pack_children * 4 && pool_.size() < settings_.pack_children;
       ++c) {
    for (std::size_t k = 0; k < child.size(); ++k) {
      const auto pick = rng_.uniform(4);
      child[k] = pick < 3 ? pack_[pick].first[k] : self[k];
    }
    if (rng_.bernoulli(settings_.shake_rate)) {
      const std::size_t k = rng_.uniform(child.size());
      const auto size = static_cast<std::uint32_t>(space_->knob(k).size());
      if (rng_.bernoulli(settings_.jump_rate)) {
        child[k] = static_cast<std::uint32_t>(rng_.uniform(size));
      } else if (size > 1) {
        child[k] = child[k] == 0 ? 1
                                 : (child[k] + 1 == size
                                        ? child[k] - 1
                                        : (rng_.bernoulli(0.5) ? child[k] - 1 : child[k] + 1));
      }
    }
    if (!space_->is_valid(child) && !repair(child, /*adjacent_first=*/true)) continue;
    auto index = space_->knobs_to_index(child);
    if (visited_.count(index) && repair(child, /*adjacent_first=*/true))
      index = space_->knobs_to_index(child);
    offer(index, child);
  }
  auto c = pick();
  if (c) pending_ = std::make_pair(c->index(), m);
  return c;
}

void AutoStrategy::offer_two_knob_moves(const KnobVector& best) {
  // All of them when there are at most pool_pairs, else pool_pairs random ones.
  KnobVector moved = best;
  if (two_knob_moves_ <= settings_.pool_pairs) {
    for (std::size_t ia = 0; ia < multi_valued_.size(); ++ia) {
      const std::size_t a = multi_valued_[ia];
      for (std::size_t ib = ia + 1; ib < multi_valued_.size(); ++ib) {
        const std::size_t b = multi_valued_[ib];
        for (std::uint32_t va = 0; va < space_->knob(a).size(); ++va) {
          if (va == best[a]) continue;
          for (std::uint32_t vb = 0; vb < space_->knob(b).size(); ++vb) {
            if (vb == best[b]) continue;
            moved[a] = va;
            moved[b] = vb;
            offer_if_valid(moved, /*repairable=*/false);
          }
        }
        moved[a] = best[a];
        moved[b] = best[b];
      }
    }
    return;
  }
  const auto& varying = multi_valued_;
  for (std::size_t i = 0; i < settings_.pool_pairs; ++i) {
    const std::size_t a = varying[rng_.uniform(varying.size())];
    std::size_t b = varying[rng_.uniform(varying.size() - 1)];
    if (b == a) b = varying.back();
    // Another value of each knob, uniformly.
    for (const std::size_t k : {a, b}) {
      const auto size = space_->knob(k).size();
      moved[k] = static_cast<std::uint32_t>((best[k] + 1 + rng_.uniform(size - 1)) % size);
    }
    offer_if_valid(moved, /*repairable=*/false);
    moved[a] = best[a];
    moved[b] = best[b];
  }
}

AutoStrategy::StallStep AutoStrategy::stall_step() const noexcept {
  if (settings_.stall == 0 || since_best_ < settings_.stall) return StallStep::kNone;
  if (settings_.stall_burst > 0) {
    const std::size_t period = settings_.stall + settings_.stall_burst;
    if ((since_best_ - settings_.stall) % period >= settings_.stall_burst) return StallStep::kNone;
  }
  if (settings_.stall_mode == "widen") return StallStep::kWiden;
  if (settings_.stall_mode == "alternate" && since_best_ % 2 == 1) return StallStep::kNone;
  return StallStep::kGlobal;
}

void AutoStrategy::offer_random(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    auto c = space_->random_valid(rng_, 10000);
    if (!c) break;
    offer(c->index(), c->knobs());
  }
}

void AutoStrategy::offer_recombinations(std::span<const std::size_t> order) {
  // Per knob, the value of a random parent among the best configurations.
  std::size_t parents = 0;
  while (parents < std::min(settings_.recombine_parents, order.size()) &&
         scores_[order[parents]] > 0.0)
    ++parents;
  if (parents < 2) return;
  KnobVector child(space_->knob_count());
  for (std::size_t i = 0; i < settings_.pool_recombine; ++i) {
    for (std::size_t k = 0; k < child.size(); ++k) child[k] = xs_[order[rng_.uniform(parents)]][k];
    offer_if_valid(child, /*repairable=*/true);
  }
}

void AutoStrategy::offer_density_draws(std::span<const std::size_t> order) {
  std::size_t good = 0;
  const auto want = std::max<std::size_t>(
      3, static_cast<std::size_t>(settings_.good_fraction * static_cast<double>(order.size())));
  while (good < std::min(want, order.size()) && scores_[order[good]] > 0.0) ++good;
  if (good == 0) return;
  std::vector<std::vector<double>> cumulative(space_->knob_count());
  for (std::size_t k = 0; k < space_->knob_count(); ++k) {
    const std::size_t size = space_->knob(k).size();
    std::vector<double> w(size, 1.0 / static_cast<double>(size));
    for (std::size_t g = 0; g < good; ++g) w[xs_[order[g]][k]] += 1.0;
    std::partial_sum(w.begin(), w.end(), w.begin());
    cumulative[k] = std::move(w);
  }
  KnobVector draw(space_->knob_count());
  for (std::size_t i = 0; i < settings_.pool_density; ++i) {
    for (std::size_t k = 0; k < draw.size(); ++k) {
      const double r = rng_.uniform01() * cumulative[k].back();
      draw[k] = static_cast<std::uint32_t>(
          std::upper_bound(cumulative[k].begin(), cumulative[k].end(), r) - cumulative[k].begin());
      if (draw[k] >= cumulative[k].size())
        draw[k] = static_cast<std::uint32_t>(cumulative[k].size() - 1);
    }
    offer_if_valid(draw, /*repairable=*/false);
  }
}

void AutoStrategy::offer_adjacent_moves(const KnobVector& best) {
  KnobVector moved(best.size());
  std::vector<std::uint32_t> sizes(best.size());
  for (std::size_t k = 0; k < best.size(); ++k)
    sizes[k] = static_cast<std::uint32_t>(space_->knob(k).size());
  for (std::size_t i = 0; i < settings_.pool_adjacent; ++i) {
    for (std::size_t k = 0; k < best.size(); ++k) {
      // Step 0, 1, 2: one position down, unchanged, up; clamped at the knob's ends (written
      // without branches: the step is unpredictable by design).
      const auto up =
          static_cast<std::int64_t>(best[k]) + static_cast<std::int64_t>(rng_.uniform(3)) - 1;
      moved[k] = static_cast<std::uint32_t>(
          std::clamp<std::int64_t>(up, 0, static_cast<std::int64_t>(sizes[k]) - 1));
    }
    offer_if_valid(moved, /*repairable=*/true);
  }
}

std::optional<Config> AutoStrategy::global_pick() {
  if (rng_.bernoulli(settings_.epsilon)) return random_unvisited();
  pool_.clear(space_->knob_count());
  const StallStep step = stall_step();
  if (step == StallStep::kGlobal) {
    // The moves around the best have stopped paying: the model ranks a wide random sample of
    // the unvisited configurations only (a global Thompson-sampling step).
    offer_random(settings_.stall_pool);
    auto c = pick();
    return c ? c : random_unvisited();
  }
  // Candidates: neighbourhoods of the best configurations, plus random configurations (a wide
  // sample of them while stalled, with stall_mode "widen").
  if (step == StallStep::kWiden) offer_random(settings_.stall_pool);
  std::vector<std::size_t> order(xs_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return scores_[a] > scores_[b]; });
  const bool stagnating = settings_.stagnation > 0 && since_best_ >= settings_.stagnation;
  for (std::size_t i = 0; i < std::min(stagnating ? 0 : settings_.top_k, order.size()); ++i) {
    if (!(scores_[order[i]] > 0.0)) break;
    for (const auto& c : space_->neighbours(space_->config_of(xs_[order[i]])))
      offer(c.index(), c.knobs());
  }
  const bool has_best = !order.empty() && scores_[order[0]] > 0.0;
  if (settings_.pool_pairs > 0 && has_best) offer_two_knob_moves(xs_[order[0]]);
  offer_random(settings_.pool_random);
  offer_recombinations(order);
  if (settings_.pool_density > 0) offer_density_draws(order);
  if (has_best) offer_adjacent_moves(xs_[order[0]]);
  auto c = pick();
  return c ? c : random_unvisited();
}

std::optional<Config> AutoStrategy::design_pick() {
  if (settings_.design == "random") return random_unvisited();
  // Greedy maximin: of design_pool random unvisited candidates, the one farthest (smallest
  // Hamming distance) from every configuration measured or chosen so far.
  auto distance_to_set = [this](std::span<const std::uint32_t> c) {
    std::size_t nearest = c.size();
    for (const auto* set : {&xs_, &design_}) {
      for (const auto& x : *set) {
        std::size_t d = 0;
        for (std::size_t k = 0; k < c.size(); ++k) d += x[k] != c[k] ? 1 : 0;
        nearest = std::min(nearest, d);
      }
    }
    return nearest;
  };
  std::optional<Config> best;
  std::size_t best_distance = 0;
  std::size_t ties = 0;
  for (std::size_t i = 0; i < settings_.design_pool; ++i) {
    // Only the first candidate may come from enumerating a sparse space; the others are drawn
    // with a bounded number of attempts, so a design step costs at most one enumeration.
    auto c = i == 0 ? random_unvisited() : random_unvisited(1000, /*enumerate=*/false);
    if (!c) break;
    const std::size_t d = distance_to_set(c->knobs());
    if (!best || d > best_distance) {
      best = std::move(c);
      best_distance = d;
      ties = 1;
    } else if (d == best_distance && rng_.uniform(++ties) == 0) {
      best = std::move(c);
    }
  }
  if (best) design_.emplace_back(best->knobs().begin(), best->knobs().end());
  return best;
}

std::vector<Config> AutoStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  const bool warm = fitted_ && xs_.size() >= settings_.initial;
  while (out.size() < n && has_next()) {
    std::optional<Config> c;
    if (warm && settings_.generator == "pack" && pack_.size() >= 4 &&
        !rng_.bernoulli(settings_.epsilon)) {
      c = pack_pick();
      if (!c) c = global_pick();
    } else {
      c = warm ? global_pick() : design_pick();
    }
    if (!c) break;
    visited_.insert(c->index());
    out.push_back(std::move(*c));
  }
  return out;
}

void AutoStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) {
    if (t.config.space() != nullptr && t.config.space() != space_) continue;
    // A trial from elsewhere (a log, load_history) must fit this space's knobs.
    if (!space_->contains(t.config.knobs())) continue;
    xs_.push_back(t.config.knobs());
    scores_.push_back(t.score);
    visited_.insert(t.config.index());
    if (settings_.generator == "pack") {
      if (pending_ && pending_->first == t.config.index()) {
        auto& member = pack_[pending_->second];
        if (t.score > member.second) member = {t.config.knobs(), t.score};
        pending_.reset();
      } else if (pack_.size() < settings_.pack_size) {
        pack_.emplace_back(t.config.knobs(), t.score);
      }
    }
    if (t.score > best_score_) {
      best_score_ = t.score;
      since_best_ = 0;
    } else {
      ++since_best_;
    }
  }
  const std::size_t n = xs_.size();
  if (n < settings_.initial) return;
  const std::size_t interval =
      n <= settings_.refit_every_until ? 1 : std::max<std::size_t>(1, n / settings_.refit_divisor);
  if (!fitted_ || n >= fitted_at_ + interval) refit();
}

void AutoStrategy::load_history(std::span<const Trial> trials) { update(trials); }

}  // namespace tunekit
