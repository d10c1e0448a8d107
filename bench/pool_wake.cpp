// The cost of waking a candidate's sleeping thread pool: per candidate and thread count, the
// first call after ops::settle_threads() (the state find_fastest's interleaved blocks start in)
// against the call right after it, on Llama-2-7B decode and prefill shapes.
//
// Each iteration: settle, one timed call ("cold"), one timed call ("warm"); operands flushed
// from the data cache before each call, as in tuning. Counters: medians of cold and warm in ms,
// and cold_over_warm = median(cold) / median(warm), all measured in the same run, interleaved.
// Run: build/bench/pool_wake [--benchmark_filter=...].
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/threading.hpp"

namespace {

using tunekit::CandidateList;
using tunekit::ops::GemmParams;
using tunekit::ops::GemmWorkspace;

CandidateList<GemmParams>& candidates() {
  static CandidateList<GemmParams> list = tunekit::ops::make_gemm_candidates();
  return list;
}

struct Shape {
  const char* op;
  const char* params;
};

constexpr Shape kShapes[] = {
    {"GemmTunableOp_float_TN", "tn_4096_1_4096_ld_4096_4096_4096"},
    {"GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096"},
};

double timed_call(tunekit::Candidate<GemmParams>& c, const GemmParams& p, const GemmParams& shape,
                  bool* ok) {
  const tunekit::measure::MemoryRange ranges[] = {
      {p.a, shape.a_bytes()}, {p.b, shape.b_bytes()}, {p.c, shape.c_bytes()}};
  tunekit::measure::flush_data_cache(ranges);
  const std::int64_t t0 = tunekit::now_ns();
  *ok = c.run(p).is_ok();
  return tunekit::elapsed_ms(t0, tunekit::now_ns());
}

void wake(benchmark::State& state, std::size_t index, const GemmParams& shape, int threads) {
  tunekit::ops::set_num_threads(threads);
  tunekit::Candidate<GemmParams>& c = *candidates()[index];
  auto ws = GemmWorkspace::create(shape, 1, /*random_fill=*/true, 1);
  if (!ws || !c.supports(shape).is_ok() || !c.prepare((*ws)->bind(0)).is_ok()) {
    state.SkipWithError("unsupported here");
    return;
  }
  const GemmParams p = (*ws)->bind(0);
  std::vector<double> cold, warm;
  for (auto _ : state) {
    (void)tunekit::ops::settle_threads();
    bool ok = true;
    const double first = timed_call(c, p, shape, &ok);
    const double second = timed_call(c, p, shape, &ok);
    if (!ok) {
      state.SkipWithError("a call failed");
      return;
    }
    cold.push_back(first);
    warm.push_back(second);
    state.SetIterationTime((first + second) / 1000.0);
  }
  const double cold_ms = tunekit::median(cold), warm_ms = tunekit::median(warm);
  state.counters["cold_ms"] = cold_ms;
  state.counters["warm_ms"] = warm_ms;
  state.counters["cold_over_warm"] = cold_ms / warm_ms;
}

int register_all() {
  for (const Shape& s : kShapes) {
    auto shape = GemmParams::from_signature(s.op, s.params);
    if (!shape) continue;
    for (std::size_t i = 0; i < candidates().size(); ++i) {
      for (int threads : {1, 2}) {
        const std::string name = std::string(s.params) + "/" + candidates()[i]->name() +
                                 "/threads:" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), wake, i, *shape, threads)
            ->UseManualTime()
            ->Iterations(30)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  return 0;
}

const int kRegistered = register_all();

}  // namespace

BENCHMARK_MAIN();
