// SimulatedAnnealingStrategy: annealing on measured costs with relative acceptance
// (after Kernel Tuner's simulated_annealing), restarting when cold or stuck.
#include <cmath>
#include <limits>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

Status SimulatedAnnealingStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  if (settings_.neighbour != "hamming" && settings_.neighbour != "adjacent") {
    return Status(StatusCode::kInvalidArgument, "sa: neighbour must be hamming or adjacent");
  }
  if (!(settings_.alpha > 0.0 && settings_.alpha < 1.0)) {
    return Status(StatusCode::kInvalidArgument, "sa: alpha must be in (0, 1)");
  }
  if (!(settings_.t_min > 0.0))
    return Status(StatusCode::kInvalidArgument, "sa: t_min must be > 0");
  if (!(settings_.t_start > settings_.t_min)) {
    return Status(StatusCode::kInvalidArgument, "sa: t_start must be greater than t_min");
  }
  space_ = &space;
  rng_.reseed(seed);
  valid_ = countable_valid(space, 0, space.range_length() - 1);
  current_.reset();
  temperature_ = settings_.t_start;
  step_iter_ = 0;
  visited_.clear();
  return Status::ok();
}

bool SimulatedAnnealingStrategy::has_next() const { return !valid_ || visited_.size() < *valid_; }

std::optional<Config> SimulatedAnnealingStrategy::propose() {
  if (current_) {
    std::vector<Config> cands;
    if (settings_.neighbour == "adjacent") {
      cands = space_->neighbours(*current_, NeighbourKind::kAdjacent);
    }
    for (int attempt = 0; attempt < 64; ++attempt) {
      Config c =
          cands.empty() ? space_->random_walk(*current_, rng_) : cands[rng_.uniform(cands.size())];
      if (!visited_.count(c.index())) return c;
    }
    // Every tried neighbour was measured: restart from a fresh random point.
    current_.reset();
    temperature_ = settings_.t_start;
  }
  for (int attempt = 0; attempt < 1000; ++attempt) {
    auto c = space_->random_valid(rng_);
    if (!c) return std::nullopt;
    if (!visited_.count(c->index())) return *c;
  }
  return std::nullopt;
}

std::vector<Config> SimulatedAnnealingStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  while (out.size() < n && has_next()) {
    auto c = propose();
    if (!c) break;
    visited_.insert(c->index());
    out.push_back(std::move(*c));
    if (!current_) break;  // the first point of a (re)start is measured alone
  }
  return out;
}

void SimulatedAnnealingStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) {
    visited_.insert(t.config.index());
    const double cost = t.score > 0.0 ? 1.0 / t.score : std::numeric_limits<double>::infinity();
    if (!current_) {
      current_ = t.config;
      current_cost_ = cost;
      continue;
    }
    double accept = 0.0;
    if (cost < current_cost_ || std::isinf(current_cost_)) {
      accept = 1.0;
    } else if (std::isfinite(cost)) {
      accept = std::exp(-((cost - current_cost_) / current_cost_) / temperature_);
    }
    if (accept > rng_.uniform01()) {
      current_ = t.config;
      current_cost_ = cost;
    }
    if (++step_iter_ >= settings_.iterations_per_step) {
      step_iter_ = 0;
      temperature_ *= settings_.alpha;
      if (temperature_ < settings_.t_min) {
        current_.reset();
        temperature_ = settings_.t_start;
      }
    }
  }
}

}  // namespace tunekit
