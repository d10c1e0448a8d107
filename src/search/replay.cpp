// Replayed strategy runs and their metrics: fraction of optimum and the methodology score.
// See include/tunekit/search/replay.hpp for the definitions.
#include "tunekit/search/replay.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

#include "tunekit/core/clock.hpp"
#include "tunekit/search/tuner.hpp"

namespace tunekit {

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::uint64_t cutoff_fevals(const std::vector<double>& ascending, double target) {
  // i = number of valid configurations worse than the target.
  const std::size_t n = ascending.size();
  const auto better_or_equal = static_cast<std::size_t>(
      std::upper_bound(ascending.begin(), ascending.end(), target) - ascending.begin());
  const std::size_t i = n - better_or_equal;
  const double f = static_cast<double>(i) / static_cast<double>(n + 1 - i);
  return static_cast<std::uint64_t>(std::ceil(f));
}

std::vector<double> valid_ascending(const ReplayData& data) {
  std::vector<double> v;
  for (const auto& e : data.entries()) {
    if (e.ok()) v.push_back(e.time_ms);
  }
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

double ReplayTrace::best_after(std::size_t n) const noexcept {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < std::min(n, time_ms.size()); ++i) {
    if (!std::isnan(time_ms[i]) && !(time_ms[i] >= best)) best = time_ms[i];
  }
  return best;
}

double ReplayTrace::best_at_clock(double t_s) const noexcept {
  double best = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < time_ms.size() && clock_s[i] <= t_s; ++i) {
    if (!std::isnan(time_ms[i]) && !(time_ms[i] >= best)) best = time_ms[i];
  }
  return best;
}

std::vector<double> fraction_of_optimum_per_run(const ReplayData& data,
                                                std::span<const ReplayTrace> runs,
                                                std::size_t evaluations) {
  std::vector<double> out;
  out.reserve(runs.size());
  for (const auto& r : runs) {
    const double best = r.best_after(evaluations);
    out.push_back(std::isnan(best) ? 0.0 : data.optimum_ms() / best);
  }
  return out;
}

double fraction_of_optimum(const ReplayData& data, std::span<const ReplayTrace> runs,
                           std::size_t evaluations) {
  if (runs.empty()) return 0.0;
  double sum = 0.0;
  for (double f : fraction_of_optimum_per_run(data, runs, evaluations)) sum += f;
  return sum / static_cast<double>(runs.size());
}

MethodologyBudget methodology_budget(const ReplayData& data, const MethodologySettings& settings) {
  MethodologyBudget b;
  const auto asc = valid_ascending(data);
  const double opt = data.optimum_ms();
  const double med = data.median_ms();
  b.target_ms = opt + (med - opt) * (1.0 - settings.cutoff_percentile);
  b.fevals = cutoff_fevals(asc, b.target_ms);
  const double start_target = opt + (med - opt) * (1.0 - settings.cutoff_percentile_start);
  const std::uint64_t start_fevals = cutoff_fevals(asc, start_target);
  std::vector<double> totals, valid_totals, failed_totals;
  for (const auto& e : data.entries()) {
    totals.push_back(e.total_ms() * 1e-3);
    (e.ok() ? valid_totals : failed_totals).push_back(e.total_ms() * 1e-3);
  }
  b.median_total_s = median_of(totals);
  b.start_fevals = start_fevals;
  b.start_s = static_cast<double>(start_fevals) * b.median_total_s;
  b.end_s = static_cast<double>(b.fevals) * b.median_total_s;
  b.time_per_feval_s = median_of(valid_totals);
  if (!failed_totals.empty()) {
    b.time_per_feval_s += static_cast<double>(failed_totals.size()) /
                          static_cast<double>(data.entries().size()) * median_of(failed_totals);
  }
  return b;
}

double random_search_expected_ms(const ReplayData& data, std::uint64_t draws) {
  const auto asc = valid_ascending(data);
  const std::size_t n_failed = data.entries().size() - asc.size();
  const std::size_t n = data.entries().size();
  const double m = static_cast<double>(std::max<std::uint64_t>(draws, 0));
  auto index = static_cast<std::size_t>(std::nearbyint(m * static_cast<double>(n + 1) / (m + 1.0)));
  index = std::min(index, n - 1);
  // Order: failed first, then valid worst to best.
  if (index < n_failed) return std::numeric_limits<double>::quiet_NaN();
  const std::size_t from_worst = index - n_failed;
  return asc[asc.size() - 1 - from_worst];
}

double methodology_score(const ReplayData& data, std::span<const ReplayTrace> runs,
                         const MethodologySettings& settings) {
  if (runs.empty()) return 0.0;
  const MethodologyBudget b = methodology_budget(data, settings);
  const std::size_t points = std::max<std::size_t>(2, settings.resolution);
  const double opt = data.optimum_ms();
  const auto asc = valid_ascending(data);
  const std::size_t n_failed = data.entries().size() - asc.size();
  const std::size_t n = data.entries().size();
  // Position in the order "failed first, then valid worst to best" (ties: lowest position).
  auto position = [&](double v) {
    const auto better =
        static_cast<std::size_t>(std::lower_bound(asc.begin(), asc.end(), v) - asc.begin());
    return static_cast<double>(n_failed + (asc.size() - 1 - better));
  };
  const double no_result =
      std::min(static_cast<double>(n - 1), std::nearbyint(static_cast<double>(n + 1) / 2.0));
  const bool by_evaluations = settings.axis == MethodologySettings::Axis::kEvaluations;
  const double from = by_evaluations ? static_cast<double>(b.start_fevals) : b.start_s;
  const double to = by_evaluations ? static_cast<double>(b.fevals) : b.end_s;
  double sum = 0.0;
  std::size_t used = 0;
  for (std::size_t p = 0; p < points; ++p) {
    const double x = from + (to - from) * static_cast<double>(p) / static_cast<double>(points - 1);
    const auto draws = static_cast<std::uint64_t>(
        std::max(1.0, std::nearbyint(by_evaluations ? x : x / b.time_per_feval_s)));
    const double fr = random_search_expected_ms(data, draws);
    if (std::isnan(fr) || std::abs(fr - opt) < 1e-12 * opt) continue;
    double mean_pos = 0.0;
    for (const auto& r : runs) {
      const double best = by_evaluations ? r.best_after(draws) : r.best_at_clock(x);
      mean_pos += std::isnan(best) ? no_result : position(best);
    }
    mean_pos /= static_cast<double>(runs.size());
    auto pos = static_cast<std::size_t>(std::nearbyint(mean_pos));
    pos = std::clamp(pos, n_failed, n - 1);
    const double fs = asc[asc.size() - 1 - (pos - n_failed)];
    sum += (fs - fr) / (opt - fr);
    ++used;
  }
  return used ? sum / static_cast<double>(used) : 0.0;
}

Expected<std::vector<ReplayTrace>> simulate_strategy(std::shared_ptr<const ReplayData> data,
                                                     const SimulationOptions& options) {
  {
    auto probe = make_strategy(options.strategy, options.settings);
    if (!probe) return probe.status();
  }
  std::vector<ReplayTrace> traces(options.runs);
  std::vector<Status> errors(options.runs);
  auto task = std::make_shared<Task>();
  task->name = data->kernel_name();
  task->target = data->device_name();
  task->space = data->space();
  std::atomic<std::size_t> next{0};
  auto worker = [&]() {
    for (;;) {
      const std::size_t r = next.fetch_add(1);
      if (r >= options.runs) return;
      const auto t0 = now_ns();
      auto strategy = make_strategy(options.strategy, options.settings);
      if (!strategy) {
        errors[r] = strategy.status();
        continue;
      }
      auto runner = std::make_shared<SimulatedRunner>(data);
      ReplayTrace& trace = traces[r];
      try {
        Tuner tuner(task, std::move(*strategy), options.seed + r);
        TuneOptions to;
        to.n_trial = std::numeric_limits<std::size_t>::max();
        to.measure.runner = runner;
        to.batch_size = options.batch_size;
        to.error_threshold = std::numeric_limits<std::size_t>::max();
        to.callbacks.push_back([&](const Tuner& t, std::span<const MeasureInput>,
                                   std::span<const MeasureResult> results) {
          for (const auto& res : results) {
            trace.clock_s.push_back(res.timestamp_s);
            trace.time_ms.push_back(res.ok() ? res.mean_cost_s() * 1e3
                                             : std::numeric_limits<double>::quiet_NaN());
          }
          if (trace.time_ms.size() >= options.evaluations && runner->clock_s() >= options.time_s) {
            t.request_stop();
          }
        });
        (void)tuner.tune(to);
      } catch (const Error& e) {
        errors[r] = e.status();
      }
      trace.wall_s = elapsed_ms(t0, now_ns()) * 1e-3;
    }
  };
  const unsigned threads =
      std::max(1u, std::min<unsigned>(options.threads, static_cast<unsigned>(options.runs)));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  for (const auto& e : errors) {
    if (!e.is_ok()) return e;
  }
  return traces;
}

}  // namespace tunekit
