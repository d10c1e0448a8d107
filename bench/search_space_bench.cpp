// Google Benchmark of the space layer on a space of 10^12 points whose constraint keeps ~1%:
// uniform valid sampling, validity checks, neighbour walks and index mapping, per call.
#include <benchmark/benchmark.h>

#include "huge_space.hpp"
#include "tunekit/space/random.hpp"

namespace {

using tunekit::bench::huge_space;

void BM_RandomValid(benchmark::State& state) {
  const auto& space = huge_space();
  tunekit::Rng rng(1);
  for (auto _ : state) {
    auto c = space.random_valid(rng);
    benchmark::DoNotOptimize(c);
  }
  // Fraction of valid points, estimated from plain uniform draws.
  std::size_t valid = 0;
  const std::size_t draws = 200000;
  for (std::size_t i = 0; i < draws; ++i)
    valid += space.is_valid(rng.uniform(space.range_length()));
  state.counters["valid_fraction"] = static_cast<double>(valid) / static_cast<double>(draws);
  state.counters["range_length"] = static_cast<double>(space.range_length());
}
BENCHMARK(BM_RandomValid)->Unit(benchmark::kMicrosecond);

void BM_IsValidIndex(benchmark::State& state) {
  const auto& space = huge_space();
  tunekit::Rng rng(2);
  for (auto _ : state) benchmark::DoNotOptimize(space.is_valid(rng.uniform(space.range_length())));
}
BENCHMARK(BM_IsValidIndex)->Unit(benchmark::kMicrosecond);

void BM_HammingNeighbours(benchmark::State& state) {
  const auto& space = huge_space();
  tunekit::Rng rng(3);
  const auto c = space.random_valid(rng).value();
  std::size_t found = 0;
  for (auto _ : state) {
    auto n = space.neighbours(c);
    found = n.size();
    benchmark::DoNotOptimize(n);
  }
  state.counters["neighbours"] = static_cast<double>(found);
}
BENCHMARK(BM_HammingNeighbours)->Unit(benchmark::kMicrosecond);

void BM_RandomWalk(benchmark::State& state) {
  const auto& space = huge_space();
  tunekit::Rng rng(4);
  auto c = space.random_valid(rng).value();
  for (auto _ : state) {
    c = space.random_walk(c, rng);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_RandomWalk)->Unit(benchmark::kMicrosecond);

void BM_IndexToConfig(benchmark::State& state) {
  const auto& space = huge_space();
  tunekit::Rng rng(5);
  for (auto _ : state) {
    auto c = space.config_at(rng.uniform(space.range_length()));
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_IndexToConfig)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
