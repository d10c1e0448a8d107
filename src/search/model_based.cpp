// ModelBasedStrategy (AutoTVM XGBTuner): XGBoost cost model on knob features, simulated
// annealing over predictions (anneal_predictions), plans, epsilon-greedy, diversity filter,
// transfer learning. See include/tunekit/search/strategies.hpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

std::vector<std::pair<double, std::uint64_t>> anneal_predictions(
    const ConfigSpace& space,
    const std::function<std::vector<double>(std::span<const KnobVector>)>& predict, std::size_t num,
    const std::unordered_set<std::uint64_t>& exclude, const PredictionAnnealingSettings& settings,
    std::vector<KnobVector>& points, Rng& rng) {
  std::size_t parallel = settings.parallel_size;
  if (auto valid = countable_valid(space, 0, space.range_length() - 1)) {
    parallel = static_cast<std::size_t>(std::min<std::uint64_t>(parallel, *valid));
  }
  if (!settings.persistent || points.size() != parallel) {
    points.clear();
    for (auto& c : space.sample_valid(parallel, rng)) points.push_back(c.knobs());
  }
  if (points.empty() || num == 0) return {};
  std::vector<double> scores = predict(points);

  // Top-`num` min-heap seeded with -inf sentinels (indices above the range never collide).
  using Item = std::pair<double, std::uint64_t>;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
  std::unordered_set<std::uint64_t> in_heap;
  for (std::size_t i = 0; i < num; ++i) {
    heap.emplace(-std::numeric_limits<double>::infinity(), space.range_length() + i);
  }
  auto offer = [&](double score, std::uint64_t index) {
    if (score > heap.top().first && !exclude.count(index) && !in_heap.count(index)) {
      in_heap.erase(heap.top().second);
      heap.pop();
      heap.emplace(score, index);
      in_heap.insert(index);
      return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < points.size(); ++i) offer(scores[i], space.knobs_to_index(points[i]));

  double t = settings.temp_start;
  const double cool = (settings.temp_start - settings.temp_end) / (settings.n_iter + 1);
  int k = 0, last_modify = 0;
  std::vector<KnobVector> fresh(points.size());
  while (k < settings.n_iter && k < last_modify + settings.early_stop) {
    for (std::size_t i = 0; i < points.size(); ++i) {
      fresh[i] = space.random_walk(space.config_of(points[i]), rng).knobs();
    }
    const std::vector<double> fresh_scores = predict(fresh);
    for (std::size_t i = 0; i < points.size(); ++i) {
      const double ac = std::exp(std::min((fresh_scores[i] - scores[i]) / (t + 1e-5), 1.0));
      if (rng.uniform01() < ac) {
        points[i] = fresh[i];
        scores[i] = fresh_scores[i];
      }
    }
    for (std::size_t i = 0; i < fresh.size(); ++i) {
      if (offer(fresh_scores[i], space.knobs_to_index(fresh[i]))) last_modify = k;
    }
    ++k;
    t -= cool;
  }
  std::vector<Item> out;
  while (!heap.empty()) {
    if (heap.top().first >= 0.0) out.push_back(heap.top());
    heap.pop();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

ModelBasedStrategy::ModelBasedStrategy(ModelBasedSettings settings)
    : settings_(std::move(settings)) {}

std::string ModelBasedStrategy::name() const {
  return settings_.model.loss == "reg" ? "xgb" : "xgb-" + settings_.model.loss;
}

Status ModelBasedStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  if (settings_.plan_size == 0)
    return Status(StatusCode::kInvalidArgument, "xgb: plan_size must be >= 1");
  if (settings_.diversity_filter_ratio && *settings_.diversity_filter_ratio < 1.0) {
    return Status(StatusCode::kInvalidArgument, "xgb: diversity_filter_ratio must be >= 1");
  }
  space_ = &space;
  rng_.reseed(seed);
  valid_ = countable_valid(space, 0, space.range_length() - 1);
  XGBoostSettings ms = settings_.model;
  ms.eval_top_n = static_cast<int>(settings_.plan_size);
  ms.seed = seed;
  model_ = std::make_unique<XGBoostCostModel>(ms);
  base_model_.reset();
  xs_.clear();
  ys_.clear();
  visited_.clear();
  plan_.clear();
  trial_pt_ = 0;
  train_ct_ = 0;
  sa_points_.clear();
  return Status::ok();
}

bool ModelBasedStrategy::has_next() const { return !valid_ || visited_.size() < *valid_; }

std::optional<std::uint64_t> ModelBasedStrategy::random_unvisited() {
  auto idx = space_->random_valid_index(
      rng_, 0, space_->range_length(), [this](std::uint64_t i) { return visited_.count(i) > 0; },
      100000);
  if (idx) return *idx;
  if (space_->range_length() > (std::uint64_t{1} << 24)) return std::nullopt;
  std::vector<std::uint64_t> rest;
  for (std::uint64_t i = 0; i < space_->range_length(); ++i) {
    if (!visited_.count(i) && space_->is_valid(i)) rest.push_back(i);
  }
  if (rest.empty()) return std::nullopt;
  return rest[rng_.uniform(rest.size())];
}

std::vector<Config> ModelBasedStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  const std::size_t eps_tail =
      static_cast<std::size_t>(0.05 * static_cast<double>(settings_.plan_size));
  while (out.size() < n && has_next()) {
    while (trial_pt_ < plan_.size()) {
      const auto idx = plan_[trial_pt_];
      if (!visited_.count(idx) && space_->is_valid(idx)) break;
      ++trial_pt_;
    }
    std::uint64_t index = 0;
    if (plan_.empty() || trial_pt_ + eps_tail >= plan_.size()) {
      auto r = random_unvisited();
      if (!r) break;
      index = *r;
    } else {
      index = plan_[trial_pt_];
    }
    visited_.insert(index);
    out.push_back(space_->config_at(index));
  }
  return out;
}

std::vector<double> ModelBasedStrategy::base_margins(const FeatureMatrix& x) const {
  if (!base_model_) return {};
  const double factor = std::pow(2.0, -static_cast<double>(xs_.size()) / 64.0);
  if (factor < 0.05) return {};
  auto p = base_model_->predict(x);
  if (!p) return {};
  for (auto& v : *p) v *= factor;
  return std::move(*p);
}

void ModelBasedStrategy::refit() {
  const double max_y = std::max(*std::max_element(ys_.begin(), ys_.end()), 1e-8);
  std::vector<double> y(ys_.size());
  for (std::size_t i = 0; i < ys_.size(); ++i) y[i] = ys_[i] / max_y;
  const FeatureMatrix x = FeatureMatrix::of(*space_, xs_);
  const auto margins = base_margins(x);
  if (!model_->fit(x, y, margins)) return;
  if (base_model_ && margins.empty()) base_model_.reset();  // decayed below 0.05: dropped
  auto predict = [this](std::span<const KnobVector> pts) {
    const FeatureMatrix m = FeatureMatrix::of(*space_, pts);
    auto p = model_->predict(m, base_margins(m));
    return p ? std::move(*p) : std::vector<double>(pts.size(), 0.0);
  };
  const double ratio = settings_.diversity_filter_ratio.value_or(1.0);
  const auto want =
      static_cast<std::size_t>(std::ceil(static_cast<double>(settings_.plan_size) * ratio));
  auto maxes =
      anneal_predictions(*space_, predict, want, visited_, settings_.annealing, sa_points_, rng_);
  plan_.clear();
  if (settings_.diversity_filter_ratio && maxes.size() > settings_.plan_size) {
    // Greedy submodular pick on zeroed scores: maximise the count of new distinct knob values.
    std::vector<std::unordered_set<std::uint32_t>> seen(space_->knob_count());
    std::vector<bool> taken(maxes.size(), false);
    for (std::size_t step = 0; step < settings_.plan_size; ++step) {
      std::size_t best = maxes.size();
      int best_gain = -1;
      for (std::size_t j = 0; j < maxes.size(); ++j) {
        if (taken[j]) continue;
        const auto knobs = space_->index_to_knobs(maxes[j].second);
        int gain = 0;
        for (std::size_t k = 0; k < knobs.size(); ++k) gain += seen[k].count(knobs[k]) ? 0 : 1;
        if (gain > best_gain) {
          best_gain = gain;
          best = j;
        }
      }
      if (best == maxes.size()) break;
      taken[best] = true;
      const auto knobs = space_->index_to_knobs(maxes[best].second);
      for (std::size_t k = 0; k < knobs.size(); ++k) seen[k].insert(knobs[k]);
      plan_.push_back(maxes[best].second);
    }
  } else {
    for (const auto& m : maxes) plan_.push_back(m.second);
  }
  trial_pt_ = 0;
  ++train_ct_;
}

void ModelBasedStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) {
    if (t.config.space() != nullptr && t.config.space() != space_) continue;
    xs_.push_back(t.config.knobs());
    ys_.push_back(t.score);
    visited_.insert(t.config.index());
  }
  if (!ys_.empty() && xs_.size() >= settings_.plan_size * (train_ct_ + 1) &&
      *std::max_element(ys_.begin(), ys_.end()) > 1e-6) {
    refit();
  }
}

void ModelBasedStrategy::load_history(std::span<const Trial> trials) {
  std::vector<Trial> same;
  FeatureMatrix other;
  std::vector<double> other_y;
  for (const auto& t : trials) {
    const ConfigSpace* s = t.config.space();
    if (s == nullptr || s == space_) {
      same.push_back(t);
    } else if (s->feature_length() == space_->feature_length()) {
      other.add_row(s->flatten_feature(t.config.knobs()));
      other_y.push_back(t.score);
    }
  }
  if (other.rows >= settings_.min_seed_records && !other_y.empty()) {
    const double max_y = std::max(*std::max_element(other_y.begin(), other_y.end()), 1e-8);
    for (auto& v : other_y) v /= max_y;
    XGBoostSettings bs = settings_.model;
    bs.eval_top_n = static_cast<int>(settings_.plan_size * 2);
    bs.max_rounds = 400;
    bs.early_stopping_rounds = 100;
    base_model_ = std::make_unique<XGBoostCostModel>(bs);
    if (!base_model_->fit(other, other_y)) {
      base_model_.reset();
    } else if (plan_.empty()) {
      auto predict = [this](std::span<const KnobVector> pts) {
        auto p = base_model_->predict(FeatureMatrix::of(*space_, pts));
        return p ? std::move(*p) : std::vector<double>(pts.size(), 0.0);
      };
      for (const auto& m : anneal_predictions(*space_, predict, settings_.plan_size, visited_,
                                              settings_.annealing, sa_points_, rng_)) {
        plan_.push_back(m.second);
      }
      trial_pt_ = 0;
    }
  }
  if (!same.empty()) update(same);
}

}  // namespace tunekit
