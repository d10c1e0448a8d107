// Google Benchmark of search strategies on a space of 10^12 points (1% valid): the time to
// propose and learn from one configuration, with a synthetic cost instead of a measurement.
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "huge_space.hpp"
#include "tunekit/search/strategy.hpp"

namespace {

using tunekit::bench::huge_space;

/// A smooth synthetic landscape: seconds = 1 + sum_k (knob_k - 4.5)^2 / 20.
double synthetic_cost_s(const tunekit::Config& c) {
  double s = 1.0;
  for (auto v : c.knobs()) s += (static_cast<double>(v) - 4.5) * (static_cast<double>(v) - 4.5) / 20.0;
  return s;
}

/// Proposes and updates 200 configurations per iteration; reports time per proposal.
void BM_Strategy(benchmark::State& state, const char* name) {
  const auto& space = huge_space();
  double best = 0.0;
  for (auto _ : state) {
    auto strategy = tunekit::make_strategy(name).value();
    (void)strategy->initialize(space, 7);
    for (int i = 0; i < 200; ++i) {
      auto batch = strategy->next_batch(1);
      if (batch.empty()) break;
      tunekit::Trial t;
      t.config = batch[0];
      t.result.costs_s = {synthetic_cost_s(batch[0])};
      t.score = 1.0 / t.result.costs_s[0];
      best = std::max(best, t.score);
      strategy->update(std::span<const tunekit::Trial>(&t, 1));
    }
  }
  state.SetItemsProcessed(state.iterations() * 200);
  state.counters["best_score"] = best;
}
BENCHMARK_CAPTURE(BM_Strategy, random, "random")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Strategy, ga, "ga")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Strategy, sa, "sa")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Strategy, auto, "auto")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Strategy, xgb, "xgb")->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
