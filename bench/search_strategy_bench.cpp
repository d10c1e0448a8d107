// Google Benchmark of search strategies on a space of 10^12 points (1% valid): the time to
// propose and learn from one configuration, with a synthetic cost instead of a measurement.
#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <string>

#include "huge_space.hpp"
#include "tunekit/search/cost_model.hpp"
#include "tunekit/search/forest_model.hpp"
#include "tunekit/search/pairwise_model.hpp"
#include "tunekit/search/strategy.hpp"

namespace {

using tunekit::bench::huge_space;

/// A smooth synthetic landscape: seconds = 1 + sum_k (knob_k - 4.5)^2 / 20.
double synthetic_cost_s(const tunekit::Config& c) {
  double s = 1.0;
  for (auto v : c.knobs())
    s += (static_cast<double>(v) - 4.5) * (static_cast<double>(v) - 4.5) / 20.0;
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
BENCHMARK_CAPTURE(BM_Strategy, auto, "auto") -> Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Strategy, xgb, "xgb")->Unit(benchmark::kMillisecond)->Iterations(1);

/// Training rows like the default strategy's after 100 trials: 7 knob features with 2-8 values
/// each and a near-additive log-score target.
struct ModelData {
  tunekit::FeatureMatrix x, candidates;
  std::vector<double> y;
  ModelData() {
    tunekit::Rng rng(42);
    auto row = [&] {
      std::vector<float> r;
      for (int k = 0; k < 7; ++k) r.push_back(static_cast<float>(rng.uniform(2 + k)));
      return r;
    };
    for (int i = 0; i < 100; ++i) {
      auto r = row();
      double v = 0.0;
      for (int k = 0; k < 7; ++k) v -= 0.1 * std::abs(r[k] - 1.5f) * (k + 1);
      x.add_row(r);
      y.push_back(v + 0.05 * rng.uniform01());
    }
    for (int i = 0; i < 550; ++i) candidates.add_row(row());
  }
};

/// One fit of 60 rounds of depth-3 trees (the default strategy's model) on 100 rows, plus the
/// prediction of a 550-candidate pool: BoostedTreesModel ("gbt") against XGBoost ("xgb").
void BM_ModelFit(benchmark::State& state, const char* which) {
  static const ModelData data;
  std::unique_ptr<tunekit::CostModel> model;
  if (std::string(which) == "xgb") {
    tunekit::XGBoostSettings xs;
    xs.max_rounds = 60;
    xs.early_stopping_rounds = 1000000;
    model = std::make_unique<tunekit::XGBoostCostModel>(xs);
  } else {
    model = std::make_unique<tunekit::BoostedTreesModel>();
  }
  for (auto _ : state) {
    if (!model->fit(data.x, data.y)) state.SkipWithError("fit failed");
    auto p = model->predict(data.candidates);
    benchmark::DoNotOptimize(p);
  }
}
/// The default model on the same data: a PairwiseBayesModel posterior draw from scratch (the
/// strategy grows its Cholesky factor instead, one row per trial) on the 100 rows as knob
/// positions (7 knobs of 2..8 values), plus the prediction of the 550 candidates.
void BM_ModelFitPairwise(benchmark::State& state) {
  static const ModelData data;
  auto positions = [](const tunekit::FeatureMatrix& m) {
    std::vector<std::vector<std::uint32_t>> rows(m.rows);
    for (std::size_t i = 0; i < m.rows; ++i)
      for (std::size_t k = 0; k < m.cols; ++k)
        rows[i].push_back(static_cast<std::uint32_t>(m.data[i * m.cols + k]));
    return rows;
  };
  static const auto rows = positions(data.x);
  static const auto candidates = positions(data.candidates);
  const std::vector<std::uint64_t> sizes{2, 3, 4, 5, 6, 7, 8};
  tunekit::Rng rng(1);
  for (auto _ : state) {
    tunekit::PairwiseBayesModel model(sizes);
    if (!model.fit(rows, data.y, rng)) state.SkipWithError("fit failed");
    double best = -1e300;
    for (const auto& c : candidates) best = std::max(best, model.predict(c));
    benchmark::DoNotOptimize(best);
  }
}
BENCHMARK(BM_ModelFitPairwise)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModelFit, gbt, "gbt")->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_ModelFit, xgb, "xgb")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
