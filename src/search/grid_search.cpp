// GridSearchStrategy: valid indices in ascending order (AutoTVM GridSearchTuner), plus
// countable_valid, shared by the strategies that know when a space is exhausted.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "tunekit/search/strategies.hpp"

namespace tunekit {

std::optional<std::uint64_t> countable_valid(const ConfigSpace& space, std::uint64_t begin,
                                             std::uint64_t end) {
  if (space.range_length() == 0) return 0;
  end = std::min(end, space.range_length() - 1);
  if (begin > end) return 0;
  if (begin == 0 && end + 1 == space.range_length() &&
      space.range_length() <= (std::uint64_t{1} << 24)) {
    return space.valid_count();
  }
  if (end - begin < (std::uint64_t{1} << 24)) return space.subrange_length(begin, end + 1);
  return std::nullopt;
}

Status GridSearchStrategy::initialize(const ConfigSpace& space, std::uint64_t /*seed*/) {
  space_ = &space;
  stop_ = std::min(end_.value_or(space.range_length() - 1), space.range_length() - 1) + 1;
  if (begin_ >= stop_) {
    return Status(
        StatusCode::kInvalidArgument,
        fmt::format("grid: empty index range: begin {}, end {}, the space's indices are 0 to {}",
                    begin_, end_ ? std::to_string(*end_) : "last", space.range_length() - 1));
  }
  next_ = space.is_valid(begin_) ? std::optional<std::uint64_t>(begin_)
                                 : space.get_next_index(begin_, 1, begin_, stop_);
  return Status::ok();
}

std::vector<Config> GridSearchStrategy::next_batch(std::size_t n) {
  std::vector<Config> out;
  while (out.size() < n && next_) {
    out.push_back(space_->config_at(*next_));
    next_ = space_->get_next_index(*next_, 1, begin_, stop_);
  }
  return out;
}

}  // namespace tunekit
