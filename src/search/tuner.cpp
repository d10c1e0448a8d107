// The tuning loop (AutoTVM Tuner.tune semantics with a measurement cache) and the progress bar.
// See include/tunekit/search/tuner.hpp.
#include "tunekit/search/tuner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {

std::string_view to_string(StopReason reason) noexcept {
  switch (reason) {
    case StopReason::kTrialCount:
      return "trial count";
    case StopReason::kEarlyStopping:
      return "early stopping";
    case StopReason::kTimeBudget:
      return "time budget";
    case StopReason::kExhausted:
      return "search space exhausted";
    case StopReason::kRequested:
      return "stop requested";
  }
  return "unknown";
}

Tuner::Tuner(std::shared_ptr<const Task> task, std::unique_ptr<SearchStrategy> strategy,
             std::uint64_t seed)
    : task_(std::move(task)), strategy_(std::move(strategy)) {
  if (!task_ || !task_->space)
    throw Error(StatusCode::kInvalidArgument, "Tuner: the task has no config space");
  if (!strategy_) throw Error(StatusCode::kInvalidArgument, "Tuner: no search strategy");
  Status st = strategy_->initialize(*task_->space, seed);
  if (!st) throw Error(st);
}

double Tuner::score_of(const MeasureResult& result) const noexcept {
  if (!result.ok()) return 0.0;
  const double mean = result.mean_cost_s();
  if (!(mean > 0.0) || !std::isfinite(mean)) return 0.0;
  return task_->flop > 0.0 ? task_->flop / mean : 1.0 / mean;
}

void Tuner::load_history(std::span<const Trial> trials) {
  std::vector<Trial> fresh;
  for (const auto& t : trials) {
    Trial copy = t;
    copy.score = score_of(t.result);
    const bool same_space =
        copy.config.space() == nullptr || copy.config.space() == task_->space.get();
    if (same_space && measured_.emplace(copy.config.index(), trials_.size()).second) {
      if (copy.score > best_score_) {
        best_score_ = copy.score;
        best_index_ = trials_.size();
        best_iter_ = trials_.size();
      }
      trials_.push_back(copy);
    }
    fresh.push_back(std::move(copy));
  }
  strategy_->load_history(fresh);
}

StopReason Tuner::tune(const TuneOptions& options) {
  const std::size_t batch = std::max<std::size_t>(
      1, options.batch_size.value_or(static_cast<std::size_t>(options.measure.batch_size())));
  const std::size_t early = options.early_stopping.value_or(static_cast<std::size_t>(1e9));
  const double start_clock = options.measure.runner ? options.measure.runner->clock_s() : 0.0;
  std::size_t i = 0;       // trials measured in this call
  std::size_t stalls = 0;  // consecutive batches served entirely from the cache
  stop_requested_ = false;
  const std::size_t first = trials_.size();
  StopReason reason = StopReason::kTrialCount;

  while (i < options.n_trial) {
    if (!strategy_->has_next()) {
      reason = StopReason::kExhausted;
      break;
    }
    if (options.time_budget_s && options.measure.runner &&
        options.measure.runner->clock_s() - start_clock >= *options.time_budget_s) {
      reason = StopReason::kTimeBudget;
      break;
    }
    std::vector<Config> configs = strategy_->next_batch(std::min(batch, options.n_trial - i));
    if (configs.empty()) {
      reason = StopReason::kExhausted;
      break;
    }

    // Measure the configurations not measured before (each once, even if repeated in the batch).
    std::vector<MeasureInput> inputs;
    std::vector<std::size_t> slot(configs.size());
    std::unordered_map<std::uint64_t, std::size_t> in_batch;
    for (std::size_t k = 0; k < configs.size(); ++k) {
      const auto idx = configs[k].index();
      if (auto it = measured_.find(idx); it != measured_.end()) {
        slot[k] = it->second;
        continue;
      }
      auto [it, fresh] = in_batch.emplace(idx, trials_.size() + inputs.size());
      slot[k] = it->second;
      if (fresh) inputs.push_back(MeasureInput{task_, configs[k]});
    }
    std::vector<MeasureResult> results;
    if (!inputs.empty()) results = measure_batch(options.measure, inputs);

    for (std::size_t k = 0; k < inputs.size(); ++k) {
      Trial t{inputs[k].config, results[k], score_of(results[k])};
      if (t.score > 0.0) {
        error_ct_ = 0;
      } else {
        ++error_ct_;
      }
      if (t.score > best_score_) {
        best_score_ = t.score;
        best_index_ = trials_.size();
        best_iter_ = trials_.size();
      }
      if (log::level() >= 3) {
        log::write(3, fmt::format("No: {}\t{}: {:.2f}/{:.2f}\tresult: {}", trials_.size() + 1,
                                  task_->flop > 0 ? "GFLOPS" : "1/s",
                                  t.score * (task_->flop > 0 ? 1e-9 : 1.0),
                                  best_score_ * (task_->flop > 0 ? 1e-9 : 1.0),
                                  to_string(t.result.error_no)));
      }
      measured_.emplace(t.config.index(), trials_.size());
      trials_.push_back(std::move(t));
    }
    i += inputs.size();

    std::vector<Trial> batch_trials;
    batch_trials.reserve(configs.size());
    for (std::size_t k = 0; k < configs.size(); ++k) batch_trials.push_back(trials_[slot[k]]);
    strategy_->update(batch_trials);
    for (const auto& cb : options.callbacks) cb(*this, inputs, results);

    if (error_ct_ > options.error_threshold && !warned_errors_) {
      warned_errors_ = true;
      log::warn("Too many errors happen in the tuning. Switching to debug mode.");
    }
    if (stop_requested_) {
      reason = StopReason::kRequested;
      break;
    }
    if (inputs.empty()) {
      if (++stalls >= 1000) {
        reason = StopReason::kExhausted;
        break;
      }
    } else {
      stalls = 0;
    }
    if (trials_.size() >= std::max(best_iter_, first) + early) {
      reason = StopReason::kEarlyStopping;
      break;
    }
  }

  warn_if_all_failed(first, i);
  return reason;
}

void Tuner::warn_if_all_failed(std::size_t first, std::size_t measured) const {
  if (measured == 0 || trials_.size() <= first ||
      std::any_of(trials_.begin() + static_cast<std::ptrdiff_t>(first), trials_.end(),
                  [](const Trial& t) { return t.score > 0.0; })) {
    return;
  }
  if (has_best()) {
    log::warn(fmt::format(
        "all {} new trial(s) of task {} (target {}) failed; the best is still one measured "
        "before them",
        measured, task_->name, task_->target));
    return;
  }
  log::warn(fmt::format(
      "Could not find any valid schedule for task {} (target {}): all {} trials failed.",
      task_->name, task_->target, measured));
}

TuneCallback progress_bar(std::size_t total, std::string prefix, std::string si_prefix,
                          std::FILE* out) {
  struct State {
    std::size_t total;
    std::string prefix;
    double scale;
    std::FILE* out;
    std::int64_t start_ns;
    std::size_t count = 0;
    bool printed = false;
    ~State() {
      if (out != nullptr && printed && log::level() < 3) {
        std::fprintf(out, " Done.\n");
        std::fflush(out);
      }
    }
  };
  double scale = 1e9;
  if (si_prefix.empty())
    scale = 1.0;
  else if (si_prefix == "K")
    scale = 1e3;
  else if (si_prefix == "M")
    scale = 1e6;
  else if (si_prefix == "G")
    scale = 1e9;
  else if (si_prefix == "T")
    scale = 1e12;
  auto state = std::make_shared<State>(State{total, std::move(prefix), scale, out, now_ns()});
  const std::string unit = si_prefix + "FLOPS";
  return [state, unit](const Tuner& tuner, std::span<const MeasureInput>,
                       std::span<const MeasureResult> results) {
    state->count += results.size();
    if (state->out == nullptr || log::level() >= 3) return;
    const double elapsed = elapsed_ms(state->start_ns, now_ns()) * 1e-3;
    const bool flops = tuner.task().flop > 0.0;
    double current = 0.0;
    for (auto it = results.rbegin(); it != results.rend(); ++it) {
      if (it->ok()) {
        current = flops ? tuner.score_of(*it) / state->scale : it->mean_cost_s() * 1e3;
        break;
      }
    }
    double best = 0.0;
    if (tuner.has_best())
      best = flops ? tuner.best_score() / state->scale : tuner.best().result.mean_cost_s() * 1e3;
    if (flops) {
      std::fprintf(state->out, "\r%s Current/Best: %7.2f/%7.2f %s | Progress: (%zu/%zu) | %.2f s",
                   state->prefix.c_str(), current, best, unit.c_str(), state->count, state->total,
                   elapsed);
    } else {
      std::fprintf(state->out, "\r%s Current/Best: %7.4f/%7.4f ms | Progress: (%zu/%zu) | %.2f s",
                   state->prefix.c_str(), current, best, state->count, state->total, elapsed);
    }
    std::fflush(state->out);
    state->printed = true;
  };
}

}  // namespace tunekit
