// GeneticStrategy: AutoTVM GATuner (final) — roulette selection, one-point crossover,
// per-knob mutation, elitism, over knob vectors of valid configurations.
#include <algorithm>
#include <numeric>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

Status GeneticStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  space_ = &space;
  rng_.reseed(seed);
  valid_ = countable_valid(space, 0, space.range_length() - 1);
  std::size_t pop = settings_.pop_size;
  if (valid_) pop = static_cast<std::size_t>(std::min<std::uint64_t>(pop, *valid_));
  if (pop == 0)
    return Status(StatusCode::kInvalidArgument, "ga: the space has no valid configuration");
  settings_.elite_num = std::min(settings_.elite_num, pop);
  genes_.clear();
  scores_.clear();
  elites_.clear();
  elite_scores_.clear();
  visited_.clear();
  trial_pt_ = 0;
  for (auto& c : space.sample_valid(pop, rng_)) {
    visited_.insert(c.index());
    genes_.push_back(c.knobs());
  }
  if (genes_.empty())
    return Status(StatusCode::kInvalidArgument, "ga: could not sample a valid configuration");
  return Status::ok();
}

bool GeneticStrategy::has_next() const {
  const std::size_t pending = genes_.size() - std::min(genes_.size(), trial_pt_);
  return !valid_ || visited_.size() - std::min(visited_.size(), pending) < *valid_;
}

std::vector<Config> GeneticStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  for (std::size_t i = 0; i < n && !genes_.empty(); ++i) {
    out.push_back(space_->config_of(genes_[(trial_pt_ + i) % genes_.size()]));
  }
  return out;
}

void GeneticStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) {
    ++trial_pt_;
    scores_.push_back(t.score);
    if (trial_pt_ >= genes_.size()) {
      if (!valid_ || visited_.size() < *valid_) next_generation();
      trial_pt_ = 0;
      scores_.clear();
    }
  }
}

void GeneticStrategy::next_generation() {
  const std::size_t pop = genes_.size();
  scores_.resize(pop, 0.0);
  if (valid_ && *valid_ - visited_.size() <= pop) {
    // Few points left: the next generation is every remaining valid index, ascending.
    std::vector<KnobVector> previous = std::move(genes_);
    genes_.clear();
    for (std::uint64_t i = 0; i < space_->range_length() && genes_.size() < pop; ++i) {
      if (!visited_.count(i) && space_->is_valid(i)) {
        genes_.push_back(space_->index_to_knobs(i));
        visited_.insert(i);
      }
    }
    if (genes_.empty()) genes_ = std::move(previous);  // nothing left; has_next() is false
    return;
  }
  // Elites: the top elite_num of genes + previous elites.
  std::vector<KnobVector> pool = genes_;
  std::vector<double> pool_scores = scores_;
  pool.insert(pool.end(), elites_.begin(), elites_.end());
  pool_scores.insert(pool_scores.end(), elite_scores_.begin(), elite_scores_.end());
  std::vector<std::size_t> order(pool.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return pool_scores[a] > pool_scores[b]; });
  elites_.clear();
  elite_scores_.clear();
  for (std::size_t i = 0; i < settings_.elite_num && i < order.size(); ++i) {
    elites_.push_back(pool[order[i]]);
    elite_scores_.push_back(pool_scores[order[i]]);
  }
  // Roulette probabilities: (scores + 1e-8) / max, normalised.
  std::vector<double> probs(pop);
  double max_score = 0.0;
  for (std::size_t i = 0; i < pop; ++i) max_score = std::max(max_score, scores_[i] + 1e-8);
  double sum = 0.0;
  for (std::size_t i = 0; i < pop; ++i) sum += probs[i] = (scores_[i] + 1e-8) / max_score;
  auto roulette = [&]() {
    double r = rng_.uniform01() * sum;
    for (std::size_t i = 0; i < pop; ++i) {
      r -= probs[i];
      if (r < 0) return i;
    }
    return pop - 1;
  };
  const std::size_t n_knobs = space_->knob_count();
  std::vector<KnobVector> children;
  std::size_t attempts = 0;
  while (children.size() < pop && attempts < 1000 * pop) {
    ++attempts;
    const std::size_t p1 = roulette();
    std::size_t p2 = roulette();
    for (int t = 0; t < 100 && p2 == p1 && pop > 1; ++t) p2 = roulette();
    const std::size_t pt = static_cast<std::size_t>(rng_.uniform(n_knobs));
    KnobVector child(genes_[p1].begin(), genes_[p1].begin() + static_cast<std::ptrdiff_t>(pt));
    child.insert(child.end(), genes_[p2].begin() + static_cast<std::ptrdiff_t>(pt),
                 genes_[p2].end());
    for (std::size_t k = 0; k < n_knobs; ++k) {
      if (rng_.uniform01() < settings_.mutation_prob) {
        child[k] = static_cast<std::uint32_t>(rng_.uniform(space_->knob(k).size()));
      }
    }
    if (space_->is_valid(child)) {
      visited_.insert(space_->knobs_to_index(child));
      children.push_back(std::move(child));
    }
  }
  if (children.empty()) children = genes_;
  genes_ = std::move(children);
}

}  // namespace tunekit
