// RandomSearchStrategy: uniform valid indices without repeats (AutoTVM RandomTuner, final:
// rejection sampling), enumerating the remainder once rejection stops finding new points.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

Status RandomSearchStrategy::initialize(const ConfigSpace& space, std::uint64_t seed) {
  space_ = &space;
  rng_.reseed(seed);
  stop_ = std::min(end_.value_or(space.range_length() - 1), space.range_length() - 1) + 1;
  if (begin_ >= stop_) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("random: empty index range: begin {}, end {}, the space's indices are 0 to {}",
                    begin_, end_ ? std::to_string(*end_) : "last", space.range_length() - 1));
  }
  valid_ = countable_valid(space, begin_, stop_ - 1);
  visited_.clear();
  exhausted_ = valid_ && *valid_ == 0;
  return Status::ok();
}

bool RandomSearchStrategy::has_next() const {
  if (exhausted_) return false;
  return !valid_ || visited_.size() < *valid_;
}

std::vector<Config> RandomSearchStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  while (out.size() < n && has_next()) {
    auto idx = space_->random_valid_index(
        rng_, begin_, stop_, [this](std::uint64_t i) { return visited_.count(i) > 0; }, 100000);
    if (!idx) {
      // Rejection stalls near the end of a small space: pick among the remaining points.
      std::vector<std::uint64_t> rest;
      if (stop_ - begin_ <= (std::uint64_t{1} << 24)) {
        for (std::uint64_t i = begin_; i < stop_; ++i) {
          if (!visited_.count(i) && space_->is_valid(i)) rest.push_back(i);
        }
      }
      if (rest.empty()) {
        exhausted_ = true;
        break;
      }
      idx = rest[rng_.uniform(rest.size())];
    }
    visited_.insert(*idx);
    out.push_back(space_->config_at(*idx));
  }
  return out;
}

void RandomSearchStrategy::update(std::span<const Trial> trials) {
  for (const auto& t : trials) visited_.insert(t.config.index());
}

}  // namespace tunekit
