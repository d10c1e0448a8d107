// Overhead of a GEMM hit over calling the chosen candidate directly: through TunableOp and through
// the public tunekit::gemm, on small square float problems (the argument is m = n = k), from 1
// and 2 threads calling concurrently (each with its own operands). The library thread count is
// TUNEKIT_THREADS (1 when unset).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/threading.hpp"

namespace {

using Cand = tunekit::Candidate<tunekit::ops::GemmParams>;

struct Operands {
  explicit Operands(std::int64_t s)
      : size(s),
        a(static_cast<std::size_t>(s * s), 1.0f),
        b(static_cast<std::size_t>(s * s), 0.5f),
        c(static_cast<std::size_t>(s * s), 0.0f) {}
  std::int64_t size;
  std::vector<float> a, b, c;
  tunekit::ops::GemmParams params() {
    tunekit::ops::GemmParams p;
    p.m = p.n = p.k = size;
    p.lda = p.ldb = p.ldc = size;
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    return p;
  }
  /// The call a user makes.
  void public_gemm() {
    tunekit::gemm('n', 'n', size, size, size, 1.0f, a.data(), size, b.data(), size, 0.0f, c.data(),
                  size);
  }
};

/// Applies the thread count (TUNEKIT_THREADS, else 1) once, before anything is tuned.
void set_up_threads() {
  static const bool done = [] {
    tunekit::TuningContext& ctx = tunekit::tuning_context();
    if (std::getenv("TUNEKIT_THREADS") == nullptr) ctx.set_threads(1);
    ctx.set_threads(tunekit::ops::set_num_threads(ctx.threads()));
    return true;
  }();
  (void)done;
}

/// Tunes the size^3 problem once (5 ms budget, results in a private file) so that every
/// benchmark below measures the hit path; returns the chosen candidate.
Cand* chosen_candidate(std::int64_t size) {
  static std::mutex mutex;
  static std::map<std::int64_t, Cand*> chosen;
  std::lock_guard lock(mutex);
  if (auto it = chosen.find(size); it != chosen.end()) return it->second;
  set_up_threads();
  tunekit::TuningContext& ctx = tunekit::tuning_context();
  const std::string file = "/tmp/tunekit_dispatch_bench_" + std::to_string(::getpid()) + ".csv";
  ctx.set_filename(file);
  ctx.set_max_tuning_duration_ms(5);
  Operands o(size);
  const auto p = o.params();
  if (!tunekit::try_gemm(p).is_ok()) std::abort();
  auto entry = ctx.results_manager().lookup(p.op_signature(), p.signature());
  std::remove(file.c_str());
  if (!entry) std::abort();
  auto idx = tunekit::gemm_op().find_candidate(entry->solution);
  Cand* cand = tunekit::gemm_op().candidates()[idx.value_or(0)].get();
  chosen.emplace(size, cand);
  return cand;
}

std::string label(const Cand& cand) {
  return cand.name() + " threads=" + std::to_string(tunekit::ops::num_threads());
}

void BM_DirectCandidate(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  const auto p = o.params();
  for (auto _ : state) {
    benchmark::DoNotOptimize(cand->run(p));
    benchmark::ClobberMemory();
  }
  state.SetLabel(label(*cand));
}

void BM_TunekitGemmHit(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  const auto p = o.params();
  auto& op = tunekit::gemm_op();
  for (auto _ : state) {
    benchmark::DoNotOptimize(op(p));
    benchmark::ClobberMemory();
  }
  state.SetLabel(label(*cand));
}

void BM_TunekitGemmHitPublicApi(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  for (auto _ : state) {
    o.public_gemm();
    benchmark::ClobberMemory();
  }
  state.SetLabel(label(*cand));
}

/// Direct calls of the chosen candidate and `dispatch` calls alternate in blocks of 64 inside one
/// benchmark, on the same operands, so both see the same machine state; counters give per-call
/// nanoseconds and their difference (the overhead).
template <class Dispatch>
void interleaved(benchmark::State& state, Cand& cand, const tunekit::ops::GemmParams& p,
                 Dispatch dispatch) {
  constexpr int kBlock = 64;
  std::int64_t direct_ns = 0, dispatch_ns = 0, calls = 0;
  for (auto _ : state) {
    const std::int64_t t0 = tunekit::now_ns();
    for (int i = 0; i < kBlock; ++i) benchmark::DoNotOptimize(cand.run(p));
    const std::int64_t t1 = tunekit::now_ns();
    for (int i = 0; i < kBlock; ++i) dispatch();
    const std::int64_t t2 = tunekit::now_ns();
    direct_ns += t1 - t0;
    dispatch_ns += t2 - t1;
    calls += kBlock;
  }
  const double d = static_cast<double>(direct_ns) / static_cast<double>(calls);
  const double t = static_cast<double>(dispatch_ns) / static_cast<double>(calls);
  state.counters["direct_ns"] = benchmark::Counter(d, benchmark::Counter::kAvgThreads);
  state.counters["dispatch_ns"] = benchmark::Counter(t, benchmark::Counter::kAvgThreads);
  state.counters["overhead_ns"] = benchmark::Counter(t - d, benchmark::Counter::kAvgThreads);
  state.SetLabel(label(cand));
}

/// TunableOp::operator() against the candidate.
void BM_InterleavedOverhead(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  const auto p = o.params();
  auto& op = tunekit::gemm_op();
  interleaved(state, *cand, p, [&] { benchmark::DoNotOptimize(op(p)); });
}

/// tunekit::gemm(...) (what users call: argument checks, the op, errors as exceptions) against
/// the candidate.
void BM_InterleavedOverheadPublicApi(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  const auto p = o.params();
  interleaved(state, *cand, p, [&] {
    o.public_gemm();
    benchmark::ClobberMemory();
  });
}

void BM_KeyAndHash(benchmark::State& state) {
  Operands o(4);
  auto p = o.params();
  for (auto _ : state) {
    benchmark::DoNotOptimize(p);
    benchmark::DoNotOptimize(tunekit::ops::GemmParams::hash(p.key()));
  }
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int s : {4, 16, 64}) b->Arg(s);
  b->Threads(1)->Threads(2)->UseRealTime();
}

BENCHMARK(BM_KeyAndHash);
BENCHMARK(BM_InterleavedOverhead)->Apply(sizes);
BENCHMARK(BM_InterleavedOverheadPublicApi)->Apply(sizes);
BENCHMARK(BM_DirectCandidate)->Apply(sizes);
BENCHMARK(BM_TunekitGemmHit)->Apply(sizes);
BENCHMARK(BM_TunekitGemmHitPublicApi)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
