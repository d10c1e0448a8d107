// SearchStrategy: the interface every search strategy implements (propose, then learn from
// measurements), the Trial it learns from, and the factory of the built-in strategies.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/space/config_space.hpp"

namespace tunekit {

/// One measured configuration as a strategy sees it.
struct Trial {
  Config config;
  MeasureResult result;
  /// Fitness, higher is better: task FLOPs / mean cost when the task has a FLOP count, else
  /// 1 / mean cost in seconds; exactly 0 for a failed measurement (AutoTVM's convention).
  double score = 0.0;
};

/// A search strategy proposes configurations and learns from their measurements.
/// Protocol: initialize() once, then alternate next_batch() and update() with the trials of
/// the configurations it proposed (in order, including ones the tuning loop served from its
/// measurement cache). An empty batch means the strategy is done.
/// Determinism: every random choice comes from the seed given to initialize().
class SearchStrategy {
 public:
  virtual ~SearchStrategy() = default;
  /// Registry name, e.g. "random", "ga", "xgb".
  virtual std::string name() const = 0;
  /// Binds the strategy to `space` (which must outlive it) and resets its state.
  /// Errors: kInvalidArgument when the space does not suit the strategy.
  virtual Status initialize(const ConfigSpace& space, std::uint64_t seed) = 0;
  /// Up to `n` configurations to measure next; empty when nothing is left to propose.
  virtual std::vector<Config> next_batch(std::size_t n) = 0;
  /// Learns from the trials of the last batch.
  virtual void update(std::span<const Trial> trials) = 0;
  /// False once the strategy has nothing left to propose (e.g. every valid point visited).
  virtual bool has_next() const { return true; }
  /// Earlier records of the same task (resume, transfer learning). Default: ignored, as
  /// upstream's index-based and genetic tuners do.
  virtual void load_history(std::span<const Trial> trials) { (void)trials; }
};

/// Names accepted by make_strategy, default first.
std::vector<std::string> strategy_names();

/// The strategy tunekit uses when none is named ("auto").
inline constexpr std::string_view kDefaultStrategy = "auto";

/// Creates a built-in strategy by name with optional settings (JSON object, keys per strategy;
/// unknown keys are an error). Every setting is read and range-checked here, before the strategy
/// sees a space:
///  * "grid"     — {"begin", "end"}: index range, integers >= 0, end inclusive (upstream
///                 range_idx) and >= begin
///  * "random"   — {"begin", "end"}, the same
///  * "ga"       — {"pop_size": 100 (2..10^6), "elite_num": 3 (<= pop_size),
///                 "mutation_prob": 0.1 ([0, 1])}
///  * "sa"       — {"t_start": 1.0, "t_min": 0.001 (0 < t_min < t_start), "alpha": 0.995
///                 ((0, 1)), "iterations_per_step": 1 (1..10^6), "neighbour": "hamming" or
///                 "adjacent"}
///  * "xgb", "xgb-rank", "xgb-rank-binary" — {"plan_size": 64 (1..10^5), "loss": "reg", "rank"
///                 or "rank-binary", "diversity_filter_ratio" (null or [1, 100]), "num_threads"
///                 (1..1024), "sa_iterations" (0..10^6), "min_seed_records" (>= 0),
///                 "max_rounds" (1..10^6)}
///  * "auto"     — tunekit's default: AutoSettings::from_json (see docs/search.md)
/// Errors: kNotFound for an unknown name (the message lists the names), kInvalidArgument for bad
/// settings, one message naming the strategy and the key ("grid: setting 'begin' must be a
/// non-negative integer").
Expected<std::unique_ptr<SearchStrategy>> make_strategy(
    std::string_view name, const nlohmann::json& settings = nlohmann::json::object());

}  // namespace tunekit
