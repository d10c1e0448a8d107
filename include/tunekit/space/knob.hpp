// Knob kinds of a configuration space and the entity lists AutoTVM's define_* policies produce.
// Split / reorder / annotate / other ("sp", "re", "an", "ot"), enumerated as upstream does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/space/expression.hpp"

namespace tunekit {

/// The four knob kinds of an AutoTVM config space; the tag is the log's JSON tag.
enum class KnobKind : std::uint8_t { kSplit, kReorder, kAnnotate, kOther };

/// "sp", "re", "an" or "ot".
std::string_view knob_tag(KnobKind kind) noexcept;
/// Inverse of knob_tag; nullopt for an unknown tag.
std::optional<KnobKind> knob_kind_from_tag(std::string_view tag) noexcept;

/// One named knob: its kind, the ordered list of entities (JSON payloads, as written in logs),
/// and the definition (policy and arguments) that produced it, for the space hash.
/// Payloads: split -> array of ints (`[-1, 8, 4]`), reorder -> array of axis indices,
/// annotate -> array of strings (ints for locate_cache), other -> a JSON scalar.
struct Knob {
  std::string name;
  KnobKind kind = KnobKind::kOther;
  std::vector<nlohmann::json> entities;
  nlohmann::json definition;
  /// Value of each entity inside restriction expressions: numbers and booleans as numbers,
  /// strings as strings; for split/reorder/annotate knobs, the entity's position.
  std::vector<ExprValue> values;
  /// Strings viewed by `values`; shared so that copies of the knob keep the views valid.
  std::shared_ptr<const std::vector<std::string>> value_strings;

  std::size_t size() const noexcept { return entities.size(); }
};

/// Options of define_split (AutoTVM `define_split(name, axis, policy, **kwargs)`).
struct SplitOptions {
  /// "factors" (divisors of the length), "power2" (1, 2, 4, ... <= length), "verbose"
  /// (divisors and powers of two) or "candidate" (the `candidates` list as given).
  std::string policy = "factors";
  /// Number of output axes, >= 1 (upstream requires it).
  int num_outputs = 2;
  /// Factors larger than this are dropped (upstream default 2^31).
  std::int64_t max_factor = std::int64_t{1} << 31;
  /// Keep only tuples whose product divides the length. Default: true for "factors" only.
  std::optional<bool> no_tail;
  /// Predicate on the split sizes (`[-1, f1, ..., fn-1]`), applied after enumeration; it
  /// removes entities and so renumbers the knob (upstream's per-knob `filter`).
  std::function<bool(std::span<const std::int64_t>)> filter;
  /// Name of `filter` for the space hash (a lambda cannot be hashed); set it when using one.
  std::string filter_name;
  /// Policy "candidate": size lists of length num_outputs, stored as given.
  std::vector<std::vector<std::int64_t>> candidates;
  /// "verbose" order: false = ascending (tunekit), true = CPython 3.11 set-iteration order, for
  /// reading upstream log indices (see autotvm.md §2.2).
  bool cpython_set_order = false;
};

/// Options of define_reorder.
struct ReorderOptions {
  /// "identity", "all" (every permutation, lexicographic), "interval_all" (permute positions
  /// interval.first .. interval.second-1 only) or "candidate" (the `candidates` permutations).
  std::string policy = "all";
  std::pair<int, int> interval{0, 0};
  std::vector<std::vector<int>> candidates;
};

/// Options of define_annotate.
struct AnnotateOptions {
  /// "try_unroll", "try_vec", "try_unroll_vec", "unroll", "vec", "unroll_vec", or any
  /// '_'-separated list of annotation words with "try" meaning "none"; or "locate_cache".
  std::string policy = "try_unroll_vec";
  /// locate_cache: the number of anchors (itertools.combinations(range(n_axes), num_anchor)).
  int num_anchor = 1;
};

/// Factor list of a split policy for an axis of `length`.
/// factors: ascending divisors (i runs to sqrt(L), odd i only when L is odd, adding i and L/i).
/// power2:  1, 2, 4, ... <= L.  verbose: union of both, ascending or in CPython set order.
/// Errors:  kInvalidArgument for length < 1 or an unknown policy.
/// Source:  autotvm.md §2.2.
Expected<std::vector<std::int64_t>> split_factor_list(std::int64_t length, std::string_view policy,
                                                      bool cpython_set_order = false);

/// Entities of define_split: DFS over num_outputs-1 slots (slot 0 outermost), tuples with product
/// P <= L kept if L % P == 0 or (!no_tail and P < L), emitted as [-1] + reversed(slots).
/// Errors: kInvalidArgument (num_outputs < 1, length < 1, empty result).
/// Source: autotvm.md §2.2; test vectors there (L=256/224, 2^25, 128).
Expected<std::vector<std::vector<std::int64_t>>> enumerate_split(std::int64_t length,
                                                                 const SplitOptions& options);

/// AutoTVM fallback_split: split sizes for an axis of `length` under per-output limits
/// (`max_sizes[0]` is ignored; -1 = no limit). Works from the last output to the first, taking
/// the largest divisor of the remaining length that is <= the limit; the first output takes
/// what remains. Example: 128 with [-1, 8, 4] -> [4, 8, 4]; 49 -> [7, 7, 1].
/// Errors: kInvalidArgument when no divisor fits a limit (e.g. a limit < 1) or max_sizes is empty.
/// Source: autotvm.md §2.7.
Expected<std::vector<std::int64_t>> fallback_split(std::int64_t length,
                                                   std::span<const std::int64_t> max_sizes);

/// Permutations of define_reorder over `num_axes` axes (axis indices 0..n-1).
/// Errors: kInvalidArgument for an unknown policy, a bad interval, or a bad candidate.
Expected<std::vector<std::vector<int>>> enumerate_reorder(int num_axes,
                                                          const ReorderOptions& options);

/// Entities of define_annotate over `num_axes` axes: per-axis annotation tuples, DFS with axis 0
/// the slowest digit, keeping tuples with at most one "vec" (JSON arrays of strings); or, for
/// locate_cache, combinations of axis indices (JSON arrays of ints).
/// Errors: kInvalidArgument for num_axes < 1 or an unsupported policy (bind_gpu needs IR axes).
Expected<std::vector<nlohmann::json>> enumerate_annotate(int num_axes,
                                                         const AnnotateOptions& options);

}  // namespace tunekit
