// ConfigSpace (knobs, constraints, lazy validity, index <-> config mapping) and Config (one point).
// Follows AutoTVM's final ConfigSpace: mixed-radix indices, multi_filter without renumbering.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/space/expression.hpp"
#include "tunekit/space/knob.hpp"
#include "tunekit/space/random.hpp"

namespace tunekit {

class ConfigSpace;

/// Knob positions of one point: `knobs[k]` is the entity position in knob k (definition order).
using KnobVector = std::vector<std::uint32_t>;

/// One point of a ConfigSpace: its index and its knob vector. Cheap to copy (a small vector).
/// A Config does not own its space; `space()` must outlive every use of the accessors.
class Config {
 public:
  /// An empty config (no space).
  Config() = default;
  /// A point of `space` (not owned) at `index` with entity positions `knobs`.
  Config(const ConfigSpace* space, std::uint64_t index, KnobVector knobs)
      : space_(space), index_(index), knobs_(std::move(knobs)) {}

  /// Mixed-radix index in [0, space.range_length()).
  std::uint64_t index() const noexcept { return index_; }
  /// Entity positions, one per knob in definition order.
  const KnobVector& knobs() const noexcept { return knobs_; }
  /// The space this point belongs to (null for an empty config).
  const ConfigSpace* space() const noexcept { return space_; }

  /// Entity payload of knob `name` (JSON: split sizes, permutation, annotations or a scalar).
  /// Errors: throws Error(kNotFound) for an unknown knob (upstream: KeyError).
  const nlohmann::json& operator[](std::string_view name) const;
  /// Numeric value of knob `name` (other-knob number, bool as 0/1); NaN for non-numbers.
  double number(std::string_view name) const;
  /// Split sizes of split knob `name`. Errors: throws Error(kNotFound/kInvalidArgument).
  std::vector<std::int64_t> split(std::string_view name) const;

  /// AutoTVM JSON: {"index": i, "code_hash": null, "entity": [[name, tag, payload], ...]}.
  nlohmann::json to_json() const;
  /// Canonical text form `name=value,...` (tunekit's own, stable across Python versions),
  /// e.g. `tile_x=[-1,8],unroll=true`. Used for candidate names and log tokens.
  std::string to_string() const;

  friend bool operator==(const Config& a, const Config& b) noexcept {
    return a.index_ == b.index_ && a.knobs_ == b.knobs_;
  }

 private:
  const ConfigSpace* space_ = nullptr;
  std::uint64_t index_ = 0;
  KnobVector knobs_;
};

/// Read-only view of a (possibly partial) knob assignment, given to constraint predicates.
class ConfigView {
 public:
  /// A view of `knobs` (entity positions, definition order) in `space`; both must outlive it.
  ConfigView(const ConfigSpace& space, std::span<const std::uint32_t> knobs) noexcept
      : space_(space), knobs_(knobs) {}
  /// Entity payload of knob `name`. Errors: throws Error(kNotFound).
  const nlohmann::json& operator[](std::string_view name) const;
  /// Numeric value of knob `name` (see Config::number).
  double number(std::string_view name) const;
  /// Entity position of knob `k` (definition order).
  std::uint32_t position(std::size_t k) const noexcept { return knobs_[k]; }
  /// All entity positions (later knobs are stale while a point is being drawn knob by knob).
  std::span<const std::uint32_t> positions() const noexcept { return knobs_; }
  /// Expression value of knob `k` (Knob::values).
  const ExprValue& value(std::size_t k) const noexcept;
  /// The space of the view.
  const ConfigSpace& space() const noexcept { return space_; }

 private:
  const ConfigSpace& space_;
  std::span<const std::uint32_t> knobs_;
};

/// A predicate over several knobs (upstream multi_filter). It may read only the knobs it
/// declared (all knobs when the list is empty), which lets sampling reject early.
struct Constraint {
  std::string description;         ///< text for messages and the space hash
  std::vector<std::size_t> knobs;  ///< knob positions it reads; empty = all knobs
  std::function<bool(const ConfigView&)> predicate;
};

/// Which neighbours `ConfigSpace::neighbours` returns.
enum class NeighbourKind : std::uint8_t {
  kHamming,   ///< every other entity of each single knob (Hamming distance 1)
  kAdjacent,  ///< entity position +-1 in each single knob (ordered knobs)
};

/// A configuration space: named knobs in definition order and constraints over them.
///
/// Index <-> config is AutoTVM's mixed radix: dims = entity counts in definition order; the
/// first-defined knob is the least significant digit (autotvm.md §2.4). Constraints never
/// renumber: range_length() == prod(dims) stays fixed, `is_valid(i)` says whether index i passes
/// every constraint (multi_filter, final semantics, autotvm.md §2.5).
///
/// Validity is checked lazily per point; nothing of size range_length() is materialised, so a
/// space of 10^12 points is usable: `random_valid` draws by rejection with early exit (the
/// knobs of the constraints are drawn first and each constraint is checked as soon as its knobs
/// are drawn, which keeps the draw uniform over valid points), `neighbours` works per knob. Only
/// `valid_count()` and index walks over invalid runs cost time proportional to the space
/// (documented on each).
///
/// Thread safety: const member functions may be called concurrently once the space is defined,
/// except valid_count(), which fills a cache on first use (call it once before sharing).
class ConfigSpace {
 public:
  /// An empty space (one point, no knobs).
  ConfigSpace() = default;

  // ---- definition (AutoTVM define_* calls) ----

  /// define_split: a split knob for an axis of `length`. Errors: kInvalidArgument (duplicate
  /// name, empty knob, bad options); the space is unchanged on error.
  Status define_split(const std::string& name, std::int64_t length,
                      const SplitOptions& options = {});
  /// define_reorder over `num_axes` axes.
  Status define_reorder(const std::string& name, int num_axes, const ReorderOptions& options = {});
  /// define_annotate over `num_axes` axes.
  Status define_annotate(const std::string& name, int num_axes,
                         const AnnotateOptions& options = {});
  /// define_knob: an "ot" knob over the given JSON scalars (numbers, booleans, strings), in order.
  Status define_knob(const std::string& name, std::vector<nlohmann::json> values);
  /// Integer range knob: begin, begin+step, ... < end (Python range semantics, step != 0).
  Status define_range(const std::string& name, std::int64_t begin, std::int64_t end,
                      std::int64_t step = 1);
  /// Power-of-two knob: every 2^k with min_value <= 2^k <= max_value (min_value >= 1).
  Status define_power2(const std::string& name, std::int64_t min_value, std::int64_t max_value);

  /// multi_filter: adds a constraint over the knobs named in `knob_names` (empty = all knobs).
  /// Indices are not renumbered. Errors: kNotFound for an unknown knob name.
  Status add_constraint(std::string description, const std::vector<std::string>& knob_names,
                        std::function<bool(const ConfigView&)> predicate);
  /// Adds a restriction expression over knob names (Kernel Tuner syntax, see Expression).
  /// Errors: kParseError; kNotFound naming an unknown variable.
  Status add_restriction(std::string_view expression);

  // ---- shape ----

  /// Number of knobs.
  std::size_t knob_count() const noexcept { return knobs_.size(); }
  /// Knob `k` (definition order). Precondition: k < knob_count().
  const Knob& knob(std::size_t k) const noexcept { return knobs_[k]; }
  /// All knobs in definition order.
  const std::vector<Knob>& knobs() const noexcept { return knobs_; }
  /// Position of knob `name`, or nullopt.
  std::optional<std::size_t> find_knob(std::string_view name) const noexcept;
  /// Entity counts in definition order.
  std::vector<std::uint64_t> dims() const;
  /// prod(dims): the index range, valid or not (upstream range_length). 1 for no knobs.
  std::uint64_t range_length() const noexcept { return range_length_; }
  /// Constraints in the order they were added.
  const std::vector<Constraint>& constraints() const noexcept { return constraints_; }

  // ---- index <-> config ----

  /// Knob vector of `index` (point2knob). Precondition: index < range_length().
  KnobVector index_to_knobs(std::uint64_t index) const;
  /// Index of a knob vector (knob2point).
  std::uint64_t knobs_to_index(std::span<const std::uint32_t> knobs) const noexcept;
  /// The config at `index` without checking constraints.
  Config config_at(std::uint64_t index) const { return Config(this, index, index_to_knobs(index)); }
  /// The config from a knob vector without checking constraints.
  Config config_of(KnobVector knobs) const {
    const auto index = knobs_to_index(knobs);
    return Config(this, index, std::move(knobs));
  }
  /// get(i): the valid config at index i. Errors: kNotFound when out of range or invalid
  /// (upstream IndexError).
  Expected<Config> get(std::uint64_t index) const;

  // ---- validity (lazy) ----

  /// True when index < range_length() and every constraint holds.
  bool is_valid(std::uint64_t index) const;
  /// True when every constraint holds for this knob vector (of full length).
  bool is_valid(std::span<const std::uint32_t> knobs) const;
  /// True when `knobs` has one position per knob, each within its knob (constraints unchecked).
  bool contains(std::span<const std::uint32_t> knobs) const noexcept;
  /// Number of valid indices (upstream len(space)). Enumerates the space with constraint pruning
  /// on first call and caches the count: cost O(range_length) in the worst case.
  std::uint64_t valid_count() const;
  /// Number of valid indices in [begin, end). Cost O(end - begin).
  std::uint64_t subrange_length(std::uint64_t begin, std::uint64_t end) const;
  /// The n-th valid index after `index` (n < 0: before), within [begin, end); nullopt if none.
  /// Cost: proportional to the indices skipped.
  std::optional<std::uint64_t> get_next_index(
      std::uint64_t index, std::int64_t n = 1, std::uint64_t begin = 0,
      std::optional<std::uint64_t> end = std::nullopt) const;

  // ---- random access ----

  /// A uniformly random valid config. Rejection sampling with early exit, up to `max_attempts`
  /// draws; then a randomised depth-first search (valid, not uniform).
  /// Errors: kNotFound when the space has no valid point.
  Expected<Config> random_valid(Rng& rng, std::uint64_t max_attempts = 1'000'000) const;
  /// A uniformly random valid index in [begin, end) not in `exclude` (upstream get_rand_index,
  /// rejection sampling). Errors: kNotFound when none is found in `max_attempts` draws.
  Expected<std::uint64_t> random_valid_index(Rng& rng, std::uint64_t begin, std::uint64_t end,
                                             const std::function<bool(std::uint64_t)>& exclude = {},
                                             std::uint64_t max_attempts = 1'000'000) const;
  /// `m` distinct valid configs (upstream sample_ints); fewer if the space has fewer.
  std::vector<Config> sample_valid(std::size_t m, Rng& rng) const;
  /// upstream random_walk: redraws one random knob until the point differs and is valid.
  /// Returns `config` itself after `max_attempts` failed draws (an isolated point).
  Config random_walk(const Config& config, Rng& rng, int max_attempts = 1000) const;
  /// Valid neighbours of `config`, knob by knob, in definition order.
  std::vector<Config> neighbours(const Config& config,
                                 NeighbourKind kind = NeighbourKind::kHamming) const;

  /// AutoTVM FallbackConfigEntity.fallback_split: sets split knob `name` in `knobs` to the entity
  /// whose sizes (after the first) equal fallback_split(length, max_sizes).
  /// Errors: kNotFound (no such split knob, or the sizes are not an entity of it), and those of
  /// fallback_split.
  Status fallback_split(KnobVector& knobs, std::string_view name,
                        std::span<const std::int64_t> max_sizes) const;

  // ---- features, JSON, identity ----

  /// upstream get_flatten_feature: split sizes, reorder permutations, an 11-long one-hot per
  /// annotation (none, vec, unroll, blockIdx.x/y/z, threadIdx.x/y/z, vthread, fuse), knob values
  /// (non-numbers as their entity position). Length is fixed per space (feature_length()).
  std::vector<float> flatten_feature(std::span<const std::uint32_t> knobs) const;
  std::size_t feature_length() const noexcept { return feature_length_; }

  /// Rebuilds a config from an AutoTVM entity list (`config.entity` of a log record), by
  /// knob name and payload, not by index. A split's first size is ignored (-1 or an explicit
  /// outer extent, as in pre-2019 logs).
  /// Errors: kNotFound naming the first knob or payload that is not in this space (a log from
  /// another template version, autotvm.md §11 pitfall 3).
  Expected<Config> from_entity_json(const nlohmann::json& entity) const;

  /// Canonical JSON of the definition: knob names, kinds, definitions, entity lists and
  /// constraint descriptions.
  nlohmann::json definition_json() const;
  /// 16 hex digits: FNV-1a 64 of definition_json().dump(). Every record stores it; records
  /// with another hash come from another space definition.
  std::string hash() const;

 private:
  Status add_knob(Knob knob, std::string_view what);
  bool constraints_hold(std::span<const std::uint32_t> knobs, std::size_t upto) const;
  bool dfs_any(KnobVector& knobs, std::size_t depth, Rng* rng) const;
  std::uint64_t dfs_count(KnobVector& knobs, std::size_t depth) const;

  std::vector<Knob> knobs_;
  std::vector<std::uint64_t> strides_;
  std::uint64_t range_length_ = 1;
  std::vector<Constraint> constraints_;
  void rebuild_checks();
  /// checks_at_[k]: constraints whose last declared knob is k (checked once k is assigned).
  std::vector<std::vector<std::size_t>> checks_at_;
  /// Knob order of random draws: the knobs of each constraint first, so that a draw is rejected
  /// as early as possible; sample_checks_[i]: constraints complete once sample_order_[i] is drawn.
  std::vector<std::size_t> sample_order_;
  std::vector<std::vector<std::size_t>> sample_checks_;
  std::size_t feature_length_ = 0;
  mutable std::optional<std::uint64_t> valid_count_;
};

}  // namespace tunekit
