// AutoStrategy: model-guided local search (tunekit's default strategy).
// See include/tunekit/search/auto_strategy.hpp for the algorithm.
#include "tunekit/search/auto_strategy.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

Expected<AutoSettings> AutoSettings::from_json(const nlohmann::json& s) {
  AutoSettings a;
  if (!s.is_object()) return Status(StatusCode::kInvalidArgument, "auto: settings must be a JSON object");
  try {
    for (const auto& [k, v] : s.items()) {
      if (k == "initial") a.initial = v.get<std::size_t>();
      else if (k == "pool_random") a.pool_random = v.get<std::size_t>();
      else if (k == "top_k") a.top_k = v.get<std::size_t>();
      else if (k == "epsilon") a.epsilon = v.get<double>();
      else if (k == "refit_every_until") a.refit_every_until = v.get<std::size_t>();
      else if (k == "refit_divisor") a.refit_divisor = v.get<std::size_t>();
      else if (k == "failure_penalty") a.failure_penalty = v.get<double>();
      else if (k == "max_depth") a.model.max_depth = v.get<int>();
      else if (k == "rounds") a.model.max_rounds = v.get<int>();
      else if (k == "eta") a.model.eta = v.get<double>();
      else if (k == "bootstrap") a.bootstrap = v.get<bool>();
      else if (k == "target") a.target = v.get<std::string>();
      else if (k == "pool_all") a.pool_all = v.get<std::size_t>();
      else {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("auto: unknown setting '{}' (accepted: initial, pool_random, top_k, epsilon, "
                                  "refit_every_until, refit_divisor, failure_penalty, max_depth, rounds, eta)", k));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("auto: bad setting: ") + e.what());
  }
  if (a.target != "log" && a.target != "inverse" && a.target != "rank") {
    return Status(StatusCode::kInvalidArgument, "auto: target must be log, inverse or rank");
  }
  if (a.initial < 1 || a.refit_divisor < 1 || a.model.max_rounds < 1 || a.epsilon < 0 || a.epsilon > 1) {
    return Status(StatusCode::kInvalidArgument, "auto: need initial >= 1, refit_divisor >= 1, rounds >= 1, 0 <= epsilon <= 1");
  }
  return a;
}

Status AutoStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  space_ = &space;
  rng_.reseed(seed);
  valid_ = countable_valid(space, 0, space.range_length() - 1);
  XGBoostSettings ms = settings_.model;
  ms.seed = seed;
  model_ = std::make_unique<XGBoostCostModel>(ms);
  xs_.clear();
  scores_.clear();
  visited_.clear();
  feature_cache_.clear();
  fitted_at_ = 0;
  fit_count_ = 0;
  all_valid_.clear();
  all_pred_.clear();
  all_pred_fit_ = 0;
  if (settings_.pool_all > 0 && valid_ && *valid_ <= settings_.pool_all) {
    for (std::uint64_t i = 0; i < space.range_length(); ++i) {
      if (space.is_valid(i)) all_valid_.push_back(space.index_to_knobs(i));
    }
  }
  return Status::ok();
}

bool AutoStrategy::has_next() const { return !valid_ || visited_.size() < *valid_; }

const std::vector<float>& AutoStrategy::features(std::uint64_t index, const KnobVector& knobs) {
  auto it = feature_cache_.find(index);
  if (it != feature_cache_.end()) return it->second;
  if (feature_cache_.size() > 200000) feature_cache_.clear();
  return feature_cache_.emplace(index, space_->flatten_feature(knobs)).first->second;
}

std::optional<Config> AutoStrategy::random_unvisited() {
  auto idx = space_->random_valid_index(
      rng_, 0, space_->range_length(), [this](std::uint64_t i) { return visited_.count(i) > 0; }, 100000);
  if (idx) return space_->config_at(*idx);
  if (space_->range_length() > (std::uint64_t{1} << 24)) return std::nullopt;
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
  std::vector<double> y(scores_.size());
  double worst = 0.0;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    if (scores_[i] > 0.0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return scores_[a] < scores_[b]; });
  for (std::size_t r = 0; r < order.size(); ++r) {
    const std::size_t i = order[r];
    if (settings_.target == "log") {
      y[i] = std::log(scores_[i] / best);
    } else if (settings_.target == "inverse") {
      y[i] = scores_[i] / best;
    } else {  // "rank": quantile of the observation among the successes, in (0, 1]
      y[i] = static_cast<double>(r + 1) / static_cast<double>(order.size());
    }
    worst = std::min(worst, y[i]);
  }
  if (settings_.target != "log") worst = 0.0;
  for (std::size_t i = 0; i < scores_.size(); ++i) {
    if (!(scores_[i] > 0.0)) y[i] = settings_.target == "log" ? worst - settings_.failure_penalty : 0.0;
  }
  FeatureMatrix x;
  for (std::size_t i = 0; i < xs_.size(); ++i) x.add_row(features(space_->knobs_to_index(xs_[i]), xs_[i]));
  std::vector<double> weights;
  if (settings_.bootstrap) {
    // Bootstrap resample (as weights): each fit sees a different plausible data set, so the
    // argmax of its predictions is a Thompson-style draw that keeps exploring.
    weights.assign(xs_.size(), 0.0);
    for (std::size_t i = 0; i < xs_.size(); ++i) weights[rng_.uniform(xs_.size())] += 1.0;
  }
  if (model_->fit(x, y, {}, weights)) {
    fitted_at_ = xs_.size();
    ++fit_count_;
  }
}

std::vector<Config> AutoStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  // Start-up and epsilon-greedy picks: random unvisited configurations.
  const bool warm = model_->fitted() && xs_.size() >= settings_.initial;
  if (!warm) {
    while (out.size() < n && has_next()) {
      auto c = random_unvisited();
      if (!c) break;
      visited_.insert(c->index());
      out.push_back(std::move(*c));
    }
    return out;
  }
  if (!all_valid_.empty()) {
    // Whole-space pool: rank every unvisited valid configuration by the current model.
    if (all_pred_fit_ != fit_count_ || all_pred_.size() != all_valid_.size()) {
      FeatureMatrix x;
      x.cols = space_->feature_length();
      x.data.reserve(all_valid_.size() * x.cols);
      for (const auto& k : all_valid_) {
        const auto& f = features(space_->knobs_to_index(k), k);
        x.data.insert(x.data.end(), f.begin(), f.end());
        ++x.rows;
      }
      auto p = model_->predict(x);
      all_pred_ = p ? std::move(*p) : std::vector<double>(all_valid_.size(), 0.0);
      all_pred_fit_ = fit_count_;
    }
    while (out.size() < n && has_next()) {
      std::optional<Config> pick;
      if (rng_.bernoulli(settings_.epsilon)) {
        pick = random_unvisited();
      } else {
        std::size_t best = all_valid_.size();
        for (std::size_t i = 0; i < all_valid_.size(); ++i) {
          if ((best == all_valid_.size() || all_pred_[i] > all_pred_[best]) &&
              !visited_.count(space_->knobs_to_index(all_valid_[i]))) {
            best = i;
          }
        }
        if (best < all_valid_.size()) pick = space_->config_of(all_valid_[best]);
      }
      if (!pick) break;
      visited_.insert(pick->index());
      out.push_back(std::move(*pick));
    }
    return out;
  }
  // Candidate pool: neighbourhoods of the best configurations, plus random configurations.
  std::vector<std::size_t> order(xs_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](auto a, auto b) { return scores_[a] > scores_[b]; });
  std::vector<Config> pool;
  std::unordered_set<std::uint64_t> in_pool;
  for (std::size_t i = 0; i < std::min(settings_.top_k, order.size()); ++i) {
    if (!(scores_[order[i]] > 0.0)) break;
    for (auto& c : space_->neighbours(space_->config_of(xs_[order[i]]))) {
      if (!visited_.count(c.index()) && in_pool.insert(c.index()).second) pool.push_back(std::move(c));
    }
  }
  for (std::size_t i = 0; i < settings_.pool_random; ++i) {
    auto c = space_->random_valid(rng_, 10000);
    if (!c) break;
    if (!visited_.count(c->index()) && in_pool.insert(c->index()).second) pool.push_back(std::move(*c));
  }
  std::vector<double> pred;
  if (!pool.empty()) {
    FeatureMatrix x;
    for (const auto& c : pool) x.add_row(features(c.index(), c.knobs()));
    auto p = model_->predict(x);
    if (p) pred = std::move(*p);
  }
  std::vector<std::size_t> rank(pool.size());
  std::iota(rank.begin(), rank.end(), 0);
  if (pred.size() == pool.size()) {
    std::stable_sort(rank.begin(), rank.end(), [&](auto a, auto b) { return pred[a] > pred[b]; });
  }
  std::size_t next = 0;
  while (out.size() < n && has_next()) {
    std::optional<Config> pick;
    if (rng_.bernoulli(settings_.epsilon) || next >= rank.size()) {
      pick = random_unvisited();
    } else {
      while (next < rank.size() && visited_.count(pool[rank[next]].index())) ++next;
      if (next < rank.size()) pick = pool[rank[next++]];
      else pick = random_unvisited();
    }
    if (!pick) break;
    visited_.insert(pick->index());
    out.push_back(std::move(*pick));
  }
  return out;
}

void AutoStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) {
    if (t.config.space() != nullptr && t.config.space() != space_) continue;
    xs_.push_back(t.config.knobs());
    scores_.push_back(t.score);
    visited_.insert(t.config.index());
  }
  const std::size_t n = xs_.size();
  if (n < settings_.initial) return;
  const std::size_t interval = n <= settings_.refit_every_until ? 1 : std::max<std::size_t>(1, n / settings_.refit_divisor);
  if (!model_->fitted() || n >= fitted_at_ + interval) refit();
}

void AutoStrategy::load_history(std::span<const Trial> trials) { update(trials); }

}  // namespace tunekit
