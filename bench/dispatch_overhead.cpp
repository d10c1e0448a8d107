// Overhead of a GEMM hit over calling the chosen candidate directly: through TunableOp and through
// the public tunekit::gemm, on small square float problems (the argument is m = n = k), from 1
// and 2 threads calling concurrently (each with its own operands). The library thread count is
// TUNEKIT_THREADS (1 when unset); DISPATCH_BENCH_SOLUTION fixes the candidate (else it is tuned).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
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
/// benchmark below measures the hit path; returns the chosen candidate. With
/// DISPATCH_BENCH_SOLUTION=<candidate name> that candidate is stored as the result instead (the
/// same code in every run).
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
  if (const char* solution = std::getenv("DISPATCH_BENCH_SOLUTION")) {
    if (!tunekit::gemm_op().find_candidate(solution)) std::abort();
    if (!ctx.add_result({p.op_signature(), p.signature(), solution, 0.001, ""})) std::abort();
  }
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

/// Median of `v` (reorders it).
double median(std::vector<double>& v) {
  if (v.empty()) return 0.0;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

/// Direct calls of the chosen candidate and `dispatch` calls alternate in blocks of 64 inside one
/// benchmark, on the same operands, so both see the same machine state; which block goes first
/// alternates too. Each pair of blocks gives one per-call difference; the counters are medians
/// over the pairs (per-call nanoseconds of each side and the difference, the overhead), so a
/// pair that the scheduler interrupted does not move them.
template <class Dispatch>
void interleaved(benchmark::State& state, Cand& cand, const tunekit::ops::GemmParams& p,
                 Dispatch dispatch) {
  constexpr int kBlock = 64;
  std::vector<double> direct, dispatched, difference;
  const auto reserve = static_cast<std::size_t>(std::min<benchmark::IterationCount>(
      state.max_iterations, benchmark::IterationCount{1} << 22));
  for (auto* v : {&direct, &dispatched, &difference}) v->reserve(reserve);
  const auto time_direct = [&] {
    const std::int64_t t0 = tunekit::now_ns();
    for (int i = 0; i < kBlock; ++i) benchmark::DoNotOptimize(cand.run(p));
    return static_cast<double>(tunekit::now_ns() - t0) / kBlock;
  };
  const auto time_dispatch = [&] {
    const std::int64_t t0 = tunekit::now_ns();
    for (int i = 0; i < kBlock; ++i) dispatch();
    return static_cast<double>(tunekit::now_ns() - t0) / kBlock;
  };
  bool direct_first = true;
  for (auto _ : state) {
    double d = 0, t = 0;
    if (direct_first) {
      d = time_direct();
      t = time_dispatch();
    } else {
      t = time_dispatch();
      d = time_direct();
    }
    direct_first = !direct_first;
    direct.push_back(d);
    dispatched.push_back(t);
    difference.push_back(t - d);
  }
  state.counters["direct_ns"] = benchmark::Counter(median(direct), benchmark::Counter::kAvgThreads);
  state.counters["dispatch_ns"] =
      benchmark::Counter(median(dispatched), benchmark::Counter::kAvgThreads);
  state.counters["overhead_ns"] =
      benchmark::Counter(median(difference), benchmark::Counter::kAvgThreads);
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

/// tunekit::try_gemm(params) (the public entry point for prepared params: no exceptions) against
/// the candidate.
void BM_InterleavedOverheadTryGemm(benchmark::State& state) {
  auto* cand = chosen_candidate(state.range(0));
  Operands o(state.range(0));
  const auto p = o.params();
  interleaved(state, *cand, p, [&] { benchmark::DoNotOptimize(tunekit::try_gemm(p)); });
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
BENCHMARK(BM_InterleavedOverheadTryGemm)->Apply(sizes);
BENCHMARK(BM_DirectCandidate)->Apply(sizes);
BENCHMARK(BM_TunekitGemmHit)->Apply(sizes);
BENCHMARK(BM_TunekitGemmHitPublicApi)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();
