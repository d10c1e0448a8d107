// tunekit's own GEMM kernels against the GEMM libraries, with the machine's bounds measured in the
// same run: the fp32 FMA peak (independent FMA chains in registers), where the process may run AMX
// the bf16 peak of its tiles (bf16 problems are rated against it), and the read bandwidth (sums
// over 1 GiB as 1, 4 or 8 streams per thread, the best of them), all with the benchmark's threads.
// For every problem the native configuration is found first by find_fastest over {Default, native
// templates} (search budget --search-ms), then every library candidate and the native
// configuration are timed on rotating operand copies spanning >= 256 MiB, each after one untimed
// call. The decode group runs each shape with fp32 and with bf16 weights. In the "constant" group
// (fp32, and bf16 at 128 tokens) every call reads the same weights (A), the native kernels pack
// them once (widening bf16 weights to fp32 as they pack them), the libraries' constant-weights
// modes (oneDNN 2's and 3's matmul with reordered weights, MKL's packed weights) join the
// libraries, and the one-time pack cost is printed. The
// summary gives per problem the best library, native's ratio to it, and native's share of the FMA
// peak (or of the read bound for 1 token), then bf16 decode's speed against fp32 decode. For
// decode, both come from benchmarks that alternate call by call (native_vs_read: the native
// configuration and plain reads of the same rotating weights; bf16_vs_f32: the bf16 and fp32
// configurations), so that the machine's phases fall on both sides of each ratio; every other
// problem's native configuration is also alternated call by call with the library fastest in a
// short screen (native_vs_best: the summary's "paired" column).
// Every benchmark is repeated (--repetitions, 5 by default) with the repetitions of all of them
// interleaved in random order, and the summary takes each one's median.
// Run: build/bench/native_gemm [--threads N] [--search-ms MS] [--repetitions R]
//          [--problems large,prefill,decode,constant] [benchmark flags]; figures in docs/native.md.
#include "tunekit/ops/native_gemm.hpp"

#include <benchmark/benchmark.h>
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/tunable/find_fastest.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace {

using tunekit::Candidate;
using tunekit::CandidateList;
using tunekit::Status;
using tunekit::ops::GemmParams;
using tunekit::ops::GemmWorkspace;

constexpr std::size_t kRotateBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxCopies = 16;

struct Problem {
  const char* group;  // large, prefill, decode, constant (every call reads the same weights A)
  const char* op;
  const char* params;
};

constexpr Problem kProblems[] = {
    {"large", "GemmTunableOp_float_NN", "nn_2048_2048_2048_ld_2048_2048_2048"},
    {"large", "GemmTunableOp_float_NN", "nn_4096_4096_4096_ld_4096_4096_4096"},
    {"large", "GemmTunableOp_float_TN", "tn_11008_512_4096_ld_4096_4096_11008"},
    {"prefill", "GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096"},
    {"prefill", "GemmTunableOp_float_TN", "tn_4096_128_4096_ld_4096_4096_4096"},
    {"prefill", "GemmTunableOp_BFloat16_float_TN", "tn_4096_128_4096_ld_4096_4096_4096"},
    {"decode", "GemmTunableOp_float_TN", "tn_4096_1_4096_ld_4096_4096_4096"},
    {"decode", "GemmTunableOp_float_TN", "tn_11008_1_4096_ld_4096_4096_11008"},
    {"decode", "GemmTunableOp_BFloat16_float_TN", "tn_4096_1_4096_ld_4096_4096_4096"},
    {"decode", "GemmTunableOp_BFloat16_float_TN", "tn_11008_1_4096_ld_4096_4096_11008"},
    {"constant", "GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096"},
    {"constant", "GemmTunableOp_float_TN", "tn_4096_128_4096_ld_4096_4096_4096"},
    {"constant", "GemmTunableOp_BFloat16_float_TN", "tn_4096_128_4096_ld_4096_4096_4096"},
};

int g_threads = 1;
int g_repetitions = 5;
double g_search_ms = 20000;
std::string g_groups = "large,prefill,decode,constant";

// ---- machine bounds ------------------------------------------------------------------------

// 12 independent FMA chains per thread (latency 4-5 cycles x 2 ports: 8-10 chains suffice).
__attribute__((target("avx2,fma"))) double fma_loop_avx2(long iterations) {
  __m256 acc[12];
  for (auto& a : acc) a = _mm256_set1_ps(1.0f);
  const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);  // kept in registers
  }
  float sink[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(sink, s);
  return sink[0];
}

__attribute__((target("avx512f"))) double fma_loop_avx512(long iterations) {
  __m512 acc[12];
  for (auto& a : acc) a = _mm512_set1_ps(1.0f);
  const __m512 x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  __m512 s = acc[0];  // every chain feeds the result, or the compiler drops the unused ones
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

void BM_FmaPeak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const bool wide = tunekit::hw::host_cpu().has("avx512f");
  const long iterations = 1 << 20;
  double sink = 0;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += wide ? fma_loop_avx512(iterations) : fma_loop_avx2(iterations);
  }
  benchmark::DoNotOptimize(sink);
  const double flop_per_call = 2.0 * 12 * (wide ? 16 : 8) * iterations * threads;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flop_per_call * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

// AMX bf16: four C tiles (16 x 16 fp32) each accumulating A x B of two A and two B tiles kept in
// registers (16 rows x 32 bf16 pairs), so every tdpbf16ps is independent of the last four: 2 *
// 16 * 16 * 32 = 16384 FLOP each. Source: Intel's ISA reference (TDPBF16PS, LDTILECFG palette 1).
struct alignas(64) TileConfig {
  std::uint8_t palette = 1, start_row = 0, reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

__attribute__((target("amx-tile,amx-bf16"))) double amx_loop(long iterations) {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  alignas(64) std::uint16_t ones[16 * 32];
  for (auto& v : ones) v = 0x3f80;  // bf16 1.0
  alignas(64) float out[16 * 16];
  _tile_loadconfig(&config);
  _tile_loadd(4, ones, 64);
  _tile_loadd(5, ones, 64);
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (long i = 0; i < iterations; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  _tile_stored(0, out, 64);
  _tile_release();
  return out[0];
}

// The AMX bf16 peak, where this process may run tile instructions (hw::amx_permitted()):
// bf16 problems on such CPUs are rated against it, not against the fp32 FMA peak.
void BM_AmxBf16Peak(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const long iterations = 1 << 16;
  double sink = 0;
  for (auto _ : state) {
#pragma omp parallel num_threads(threads) reduction(+ : sink)
    sink += amx_loop(iterations);
  }
  benchmark::DoNotOptimize(sink);
  const double flop_per_call = 4.0 * 16384.0 * static_cast<double>(iterations) * threads;
  state.counters["GFLOP/s"] = benchmark::Counter(
      flop_per_call * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

// The sum of S equal chunks of [p, p + n) read in lock step, one cache line of each per step:
// S sequential streams in flight at once, as a decode kernel reading S rows of weights has.
template <int S>
__attribute__((target("avx2"))) float sum_streams(const float* p, std::size_t n) {
  const std::size_t chunk = n / S / 16 * 16;
  __m256 acc[S][2];
  for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
  for (std::size_t i = 0; i < chunk; i += 16) {
#pragma GCC unroll 8
    for (int s = 0; s < S; ++s) {
      acc[s][0] = _mm256_add_ps(acc[s][0], _mm256_loadu_ps(p + s * chunk + i));
      acc[s][1] = _mm256_add_ps(acc[s][1], _mm256_loadu_ps(p + s * chunk + i + 8));
    }
  }
  float out[8];
  __m256 total = _mm256_setzero_ps();
  for (auto& a : acc) total = _mm256_add_ps(total, _mm256_add_ps(a[0], a[1]));
  _mm256_storeu_ps(out, total);
  return out[0] + out[7];
}

// Reads the `bytes` at `p` (a multiple of 64) with `threads` threads, each its share as
// `streams` (1, 4 or 8) sequential streams; returns their sum.
float read_bytes(const void* p, std::size_t bytes, int streams, int threads) {
  const std::size_t floats = bytes / 4;
  float sink = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sink)
  {
    const std::size_t part = floats / static_cast<std::size_t>(omp_get_num_threads());
    const float* mine =
        static_cast<const float*>(p) + part * static_cast<std::size_t>(omp_get_thread_num());
    sink += streams >= 8   ? sum_streams<8>(mine, part)
            : streams >= 4 ? sum_streams<4>(mine, part)
                           : sum_streams<1>(mine, part);
  }
  return sink;
}

// Read bandwidth of `threads` threads, each summing its share of 1 GiB as `streams` (1, 4 or 8)
// streams; the summary takes the best stream count as the machine's read bound.
void BM_ReadBandwidth(benchmark::State& state, int streams) {
  const int threads = static_cast<int>(state.range(0));
  static std::vector<float> data(std::size_t{1} << 28, 1.0f);  // 1 GiB, past any LLC here
  float sink = 0;
  for (auto _ : state) sink += read_bytes(data.data(), data.size() * 4, streams, threads);
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] = benchmark::Counter(
      static_cast<double>(data.size()) * 4.0 * static_cast<double>(state.iterations()) * 1e-9,
      benchmark::Counter::kIsRate);
}

// ---- GEMM ----------------------------------------------------------------------------------

CandidateList<GemmParams>& candidates() {
  static CandidateList<GemmParams> list = tunekit::ops::make_gemm_candidates();
  return list;
}

GemmWorkspace* workspace(const GemmParams& shape) {
  static std::map<std::string, std::unique_ptr<GemmWorkspace>> cache;
  const std::string key = shape.op_signature() + shape.signature();
  if (auto it = cache.find(key); it != cache.end()) return it->second.get();
  const std::size_t bytes = shape.operand_bytes() + shape.output_bytes();
  const std::size_t copies = std::clamp<std::size_t>(kRotateBytes / bytes + 1, 2, kMaxCopies);
  auto ws = GemmWorkspace::create(shape, copies, /*random_fill=*/true, 1);
  if (!ws) return nullptr;
  return (cache[key] = std::move(*ws)).get();
}

// The native configuration for `shape`: find_fastest over Default and the native templates
// (with `constant`, the blocked family packs the weights once per configuration).
std::unique_ptr<Candidate<GemmParams>> tune_native(const GemmParams& shape, bool constant) {
  CandidateList<GemmParams> list;
  for (auto& c : tunekit::ops::make_gemm_candidates()) {
    // Default and the decode families (the blocked one is added below, with `constant`).
    if (c->name() == "Default" ||
        (c->library() == "native" && c->name() != tunekit::ops::kNativeGemmFamily)) {
      list.push_back(std::move(c));
    }
  }
  list.push_back(tunekit::ops::make_native_gemm_template(constant));
  tunekit::TuningSettings settings;
  settings.max_search_duration_ms = static_cast<long long>(g_search_ms);
  settings.max_search_trials = 32;
  settings.rotating_buffer_bytes = kRotateBytes;
  settings.finalist_margin = 0;  // the ranking here is the benchmark's
  const tunekit::TuneReport report =
      tunekit::find_fastest(workspace(shape)->bind(0), list, settings);
  // The fastest native configuration measured, whether or not it beat Default.
  std::unique_ptr<Candidate<GemmParams>> best;
  double best_ms = 1e300;
  for (const auto& r : report.candidates) {
    if (r.library != "native") continue;
    std::printf("  %s: %zu configurations (%zu seeds) in %.0f ms%s%s\n", r.name.c_str(),
                r.search_trials, r.search_seeds, r.search_ms, r.reason.empty() ? "" : ", ",
                r.reason.c_str());
    if (!r.measured() || r.score_ms >= best_ms) continue;
    auto* family = dynamic_cast<tunekit::TemplateCandidate<GemmParams>*>(list[r.index].get());
    if (auto rebuilt = family->from_name(r.name)) {
      best = std::move(*rebuilt);
      best_ms = r.score_ms;
    }
  }
  std::printf("native for %s%s: %s\n", shape.signature().c_str(), constant ? " (constant A)" : "",
              best ? best->name().c_str() : "none");
  return best;
}

// The one-time cost of packing the weights for `tuned`: a fresh copy's first call minus its
// second (nothing for the decode kernels, which pack nothing).
void print_pack_time(const Candidate<GemmParams>& tuned, const GemmParams& shape) {
  auto family = tunekit::ops::make_native_gemm_template(/*constant_a=*/true);
  auto* t = dynamic_cast<tunekit::TemplateCandidate<GemmParams>*>(family.get());
  auto fresh = t->from_name(tuned.name());
  if (!fresh) return;
  const GemmParams p = workspace(shape)->bind(0);
  double ms[2];
  for (double& m : ms) {
    const auto start = std::chrono::steady_clock::now();
    (void)(*fresh)->run(p);
    m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  std::printf("  first call %.2f ms, then %.2f ms: weights packed in %.2f ms\n", ms[0], ms[1],
              ms[0] - ms[1]);
}

// Copy i of the workspace's operands; with `constant_a`, with the first copy's A (the weights
// stay where they are).
GemmParams copy_of(GemmWorkspace* ws, std::size_t i, bool constant_a) {
  GemmParams p = ws->bind(i % ws->copies());
  if (constant_a) p.a = ws->bind(0).a;
  return p;
}

// Prepares `c` and runs it once on `p`, untimed (first-call costs, packing); false, with the
// benchmark skipped, when either fails.
bool warm(benchmark::State& state, Candidate<GemmParams>* c, const GemmParams& p) {
  Status s = c->prepare(p);
  if (s.is_ok()) s = c->run(p);
  if (!s.is_ok()) state.SkipWithError(s.to_string().c_str());
  return s.is_ok();
}

// Times `c` on rotating copies after one untimed call; with `constant_a` every call reads the
// first copy's A (the weights stay where they are).
void run_gemm(benchmark::State& state, Candidate<GemmParams>* c, GemmParams shape,
              bool constant_a) {
  tunekit::ops::set_num_threads(g_threads);
  GemmWorkspace* ws = workspace(shape);
  if (!warm(state, c, copy_of(ws, 0, constant_a))) return;
  std::size_t i = 0;
  for (auto _ : state) {
    if (Status s = c->run(copy_of(ws, i, constant_a)); !s.is_ok()) {
      state.SkipWithError(s.to_string().c_str());
      break;
    }
    i = (i + 1) % ws->copies();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      shape.flops() * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
}

// ---- decode, paired ------------------------------------------------------------------------

// Seconds `f` takes.
template <class F>
double seconds_of(F&& f) {
  const auto start = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Decode against the read bound of the same weights in the same seconds: every iteration runs
// `c` on one rotating copy, then reads the weights (A) of the next copy as 1 and of the one after
// as 8 streams per thread. Counters "native GB/s" (A's bytes over the native calls' time),
// "read GB/s" (the faster read) and "of read" (their ratio, per repetition). The bandwidth of this
// shared machine swings between phases (29 to 48 GB/s on the Zen 4 within minutes), so a bound
// measured in other seconds than the kernel says more about the phases than about the kernel.
void run_decode_vs_read(benchmark::State& state, Candidate<GemmParams>* c, GemmParams shape) {
  tunekit::ops::set_num_threads(g_threads);
  GemmWorkspace* ws = workspace(shape);
  if (!warm(state, c, ws->bind(0))) return;
  double native_s = 0, read_s[2] = {0, 0};
  float sink = 0;
  std::size_t i = 0;
  auto next = [&] { return ws->bind(i++ % ws->copies()); };
  for (auto _ : state) {
    const GemmParams p = next();
    native_s += seconds_of([&] { (void)c->run(p); });
    for (int r = 0; r < 2; ++r) {
      const GemmParams q = next();
      read_s[r] +=
          seconds_of([&] { sink += read_bytes(q.a, shape.a_bytes(), r == 0 ? 1 : 8, g_threads); });
    }
  }
  benchmark::DoNotOptimize(sink);
  const double gb =
      static_cast<double>(shape.a_bytes()) * static_cast<double>(state.iterations()) * 1e-9;
  state.counters["native GB/s"] = gb / native_s;
  state.counters["read GB/s"] = gb / std::min(read_s[0], read_s[1]);
  state.counters["of read"] = std::min(read_s[0], read_s[1]) / native_s;
}

// bf16 weights against fp32 weights, alternated call by call: the native configurations of the
// same decode shape, each on its own rotating copies. Counter "speed-up": fp32's time over
// bf16's.
void run_bf16_vs_f32(benchmark::State& state, Candidate<GemmParams>* bf16, GemmParams bf16_shape,
                     Candidate<GemmParams>* f32, GemmParams f32_shape) {
  tunekit::ops::set_num_threads(g_threads);
  GemmWorkspace* ws[2] = {workspace(bf16_shape), workspace(f32_shape)};
  Candidate<GemmParams>* c[2] = {bf16, f32};
  for (int j = 0; j < 2; ++j) {
    if (!warm(state, c[j], ws[j]->bind(0))) return;
  }
  double s[2] = {0, 0};
  std::size_t i = 0;
  for (auto _ : state) {
    for (int j = 0; j < 2; ++j) {
      const GemmParams p = ws[j]->bind(i % ws[j]->copies());
      s[j] += seconds_of([&] { (void)c[j]->run(p); });
    }
    ++i;
  }
  state.counters["speed-up"] = s[1] / s[0];
}

// ---- native against the fastest library, paired ------------------------------------------

// The candidate among `libraries` fastest on `shape` in a short screen, null when none runs:
// the rival of run_native_vs. Each runs once untimed, then 3 rounds run each once in turn (so a
// slow phase of the machine falls on all of them), and the best of a candidate's 3 counts.
Candidate<GemmParams>* fastest_library(const std::vector<Candidate<GemmParams>*>& libraries,
                                       const GemmParams& shape, bool constant_a) {
  tunekit::ops::set_num_threads(g_threads);
  GemmWorkspace* ws = workspace(shape);
  std::vector<Candidate<GemmParams>*> runs;
  for (Candidate<GemmParams>* c : libraries) {
    const GemmParams p = copy_of(ws, 0, constant_a);
    if (c->prepare(p).is_ok() && c->run(p).is_ok()) runs.push_back(c);
  }
  std::vector<double> best(runs.size(), 1e300);
  std::size_t copy = 1;
  for (int round = 0; round < 3; ++round) {
    for (std::size_t j = 0; j < runs.size(); ++j) {
      const GemmParams p = copy_of(ws, copy++, constant_a);
      best[j] = std::min(best[j], seconds_of([&] { (void)runs[j]->run(p); }));
    }
  }
  const auto fastest = std::min_element(best.begin(), best.end());
  return fastest == best.end() ? nullptr : runs[static_cast<std::size_t>(fastest - best.begin())];
}

// The native configuration against `rival` in the same seconds: every iteration runs both, the
// one that goes first alternating, every call on the next rotating copy (constant A as in
// run_gemm), so that both sides cover all copies.
// Counters "native GFLOP/s", "rival GFLOP/s" and "ratio" (the rival's time over native's: above 1,
// native is faster), per repetition; the summary takes their medians.
void run_native_vs(benchmark::State& state, Candidate<GemmParams>* native,
                   Candidate<GemmParams>* rival, GemmParams shape, bool constant_a) {
  tunekit::ops::set_num_threads(g_threads);
  GemmWorkspace* ws = workspace(shape);
  Candidate<GemmParams>* c[2] = {native, rival};
  for (Candidate<GemmParams>* x : c) {
    if (!warm(state, x, copy_of(ws, 0, constant_a))) return;
  }
  double s[2] = {0, 0};
  std::size_t i = 0, copy = 0;
  Status st;
  for (auto _ : state) {
    for (int n = 0; n < 2 && st.is_ok(); ++n) {
      const int j = (static_cast<int>(i) + n) % 2;           // native first in even iterations
      const GemmParams p = copy_of(ws, copy++, constant_a);  // every call on the next copy
      s[j] += seconds_of([&] { st = c[j]->run(p); });
    }
    if (!st.is_ok()) {
      state.SkipWithError(st.to_string().c_str());
      break;
    }
    ++i;
  }
  const double flops = shape.flops() * static_cast<double>(state.iterations()) * 1e-9;
  state.counters["native GFLOP/s"] = flops / s[0];
  state.counters["rival GFLOP/s"] = flops / s[1];
  state.counters["ratio"] = s[1] / s[0];
}

// ---- summary -------------------------------------------------------------------------------

// Keeps every benchmark's counters for the summary (and prints as the console reporter does):
// those of its run, or with repetitions the median over them (the repetitions of all benchmarks
// are interleaved in random order, so a slow phase of the machine falls on every contender).
class Collector : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      const bool median = r.run_type == Run::RT_Aggregate && r.aggregate_name == "median";
      if (r.error_occurred || (r.run_type != Run::RT_Iteration && !median)) continue;
      // Keyed by the registered name ("peak/fma", "decode/<signature>/native").
      for (const auto& [name, counter] : r.counters) {
        values[r.run_name.function_name][name] = counter;
      }
    }
    ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, std::map<std::string, double>> values;
};

/// One summary row: a problem of a group, its benchmark prefix and the native configuration.
struct Row {
  GemmParams shape;
  std::string group, prefix, native;
  Candidate<GemmParams>* tuned = nullptr;  // the native configuration, when one was found
  std::string rival = "-";                 // the library paired with it (native_vs_best)
};

// "tn_4096_1_4096_ld_4096_4096_4096", with " bf16" for bf16 problems.
std::string describe(const GemmParams& shape) {
  return shape.signature() + (tunekit::ops::has_bf16_inputs(shape.dtype) ? " bf16" : "");
}

void summarise(const Collector& collected, const std::vector<Row>& rows) {
  auto value = [&](const std::string& bench, const char* counter) {
    auto it = collected.values.find(bench);
    if (it == collected.values.end()) return 0.0;
    auto c = it->second.find(counter);
    return c == it->second.end() ? 0.0 : c->second;
  };
  const double peak = value("peak/fma", "GFLOP/s");
  const double amx_peak = value("peak/amx_bf16", "GFLOP/s");  // 0 without AMX
  double bandwidth = 0;                                       // the best of the stream counts
  for (const auto& [name, counters] : collected.values) {
    auto gbs = counters.find("GB/s");
    if (name.rfind("bound/read", 0) == 0 && gbs != counters.end()) {
      bandwidth = std::max(bandwidth, gbs->second);
    }
  }
  std::printf("\n%s, %d threads: FMA peak %.1f GFLOP/s, read bandwidth %.1f GB/s",
              tunekit::hw::host_cpu().describe().c_str(), g_threads, peak, bandwidth);
  if (amx_peak > 0) {
    std::printf(", AMX bf16 peak %.1f GFLOP/s (the bound of bf16 problems)", amx_peak);
  }
  std::printf("\n");
  std::printf("%-9s %-43s %-26s %8s %8s %7s %7s %8s  %s\n", "group", "problem", "best library",
              "GFLOP/s", "native", "ratio", "paired", "of bound", "native configuration");
  std::vector<std::string> best_names;  // per row, for the paired lines below
  for (const Row& row : rows) {
    std::vector<std::string> names;
    for (const auto& c : candidates()) {
      if (c->library() != "native") names.push_back(c->name());
    }
    if (row.group == "constant") {
      for (const auto& c : tunekit::ops::detail::constant_weight_libraries()) {
        names.push_back(c->name());
      }
    }
    std::string best_name = "-";
    double best = 0;
    for (const std::string& name : names) {
      const double v = value(row.prefix + name, "GFLOP/s");
      if (v > best) {
        best = v;
        best_name = name;
      }
    }
    const double native = value(row.prefix + "native", "GFLOP/s");
    const bool on_amx = amx_peak > 0 && tunekit::ops::has_bf16_inputs(row.shape.dtype);
    const double compute_peak = on_amx ? amx_peak : peak;
    double bound_share = compute_peak > 0 ? native / compute_peak : 0;  // of the compute peak
    const double of_read = value(row.prefix + "native_vs_read", "of read");
    if (row.shape.n == 1 && of_read > 0) {  // of the read bound, measured alternately with it
      bound_share = of_read;
    } else if (row.shape.n == 1 && bandwidth > 0) {  // of the read bound: weights stream once
      bound_share =
          native / row.shape.flops() * static_cast<double>(row.shape.a_bytes()) / bandwidth;
    }
    const double paired = value(row.prefix + "native_vs_best", "ratio");
    char paired_text[16] = "-";  // no paired benchmark, or it failed
    if (paired > 0) std::snprintf(paired_text, sizeof paired_text, "%.3f", paired);
    std::printf("%-9s %-43s %-26s %8.1f %8.1f %7.3f %7s %7.1f%%  %s\n", row.group.c_str(),
                describe(row.shape).c_str(), best_name.c_str(), best, native,
                best > 0 ? native / best : 0.0, paired_text, 100.0 * bound_share,
                row.native.c_str());
    best_names.push_back(best_name);
  }
  // Native against the library fastest in a short screen, or decode against plain reads of the
  // same weights, alternated call by call.
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const Row& row = rows[r];
    const std::string name = row.group + " " + describe(row.shape);
    const std::string best = row.prefix + "native_vs_best", read = row.prefix + "native_vs_read";
    if (value(best, "ratio") > 0) {
      const std::string other = best_names[r] == row.rival || best_names[r] == "-"
                                    ? ""
                                    : "; the separate benchmarks' best: " + best_names[r];
      std::printf(
          "%s: native %.1f GFLOP/s, %s %.1f GFLOP/s in the same seconds, ratio %.3f (median of "
          "the repetitions' ratios%s)\n",
          name.c_str(), value(best, "native GFLOP/s"), row.rival.c_str(),
          value(best, "rival GFLOP/s"), value(best, "ratio"), other.c_str());
    } else if (value(read, "of read") > 0) {
      std::printf(
          "%s: native %.1f GB/s, plain reads of the same copies %.1f GB/s, %.1f%% (median "
          "of the repetitions' ratios)\n",
          name.c_str(), value(read, "native GB/s"), value(read, "read GB/s"),
          100.0 * value(read, "of read"));
    }
  }
  // bf16 weights against fp32 weights of the same decode shape (native kernels both).
  for (const Row& bf16 : rows) {
    if (!tunekit::ops::has_bf16_inputs(bf16.shape.dtype) || bf16.group != "decode") continue;
    for (const Row& f32 : rows) {
      if (f32.group != bf16.group || f32.shape.dtype != tunekit::ops::DType::kFloat ||
          f32.shape.signature() != bf16.shape.signature()) {
        continue;
      }
      const double a = value(bf16.prefix + "native", "GFLOP/s");
      const double b = value(f32.prefix + "native", "GFLOP/s");
      std::printf(
          "%s: bf16 weights %.3fx the speed of fp32 weights (native decode), %.3fx "
          "alternated call by call\n",
          bf16.shape.signature().c_str(), b > 0 ? a / b : 0.0,
          value(bf16.prefix + "bf16_vs_f32", "speed-up"));
    }
  }
}

[[noreturn]] void bad_flag(const char* flag, const std::string& value, const char* expected) {
  std::fprintf(stderr, "native_gemm: %s '%s': expected %s\n", flag, value.c_str(), expected);
  std::exit(2);
}

// Takes the first "flag value" or "flag=value" out of argv (a value starting with "--" is the
// next flag, not a value); called until it returns false, every occurrence is checked and the
// last one wins.
bool take_flag(int& argc, char** argv, const char* flag, std::string& value) {
  const std::size_t len = std::strlen(flag);
  for (int i = 1; i < argc; ++i) {
    const bool joined = std::strncmp(argv[i], flag, len) == 0 && argv[i][len] == '=';
    if (!joined && std::strcmp(argv[i], flag) != 0) continue;
    if (!joined && (i + 1 >= argc || std::strncmp(argv[i + 1], "--", 2) == 0)) {
      bad_flag(flag, "", "a value after it");
    }
    value = joined ? argv[i] + len + 1 : argv[i + 1];
    const int taken = joined ? 1 : 2;
    for (int j = i; j + taken <= argc; ++j) argv[j] = argv[j + taken];
    argc -= taken;
    return true;
  }
  return false;
}

// An integer flag's value in [lo, hi]; exits with a message naming the flag otherwise.
int int_flag(const char* flag, const std::string& value, int lo, int hi) {
  int v = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || end != value.data() + value.size() || v < lo || v > hi) {
    bad_flag(flag, value,
             ("an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]").c_str());
  }
  return v;
}

// The --problems list: known group names only.
std::string groups_flag(const std::string& value) {
  std::size_t start = 0;
  while (start <= value.size()) {
    const std::size_t comma = std::min(value.find(',', start), value.size());
    const std::string group = value.substr(start, comma - start);
    bool known = false;
    for (const Problem& p : kProblems) known = known || group == p.group;
    if (!known) bad_flag("--problems", value, "groups among large, prefill, decode, constant");
    start = comma + 1;
  }
  return value;
}

// Every benchmark runs g_repetitions times; the console shows their median and spread.
benchmark::internal::Benchmark* repeated(benchmark::internal::Benchmark* b) {
  return b->UseRealTime()->Repetitions(g_repetitions)->DisplayAggregatesOnly(true);
}

void register_gemm(const std::string& name, Candidate<GemmParams>* c, const GemmParams& shape,
                   bool constant) {
  repeated(benchmark::RegisterBenchmark(name.c_str(), run_gemm, c, shape, constant))
      ->MinTime(0.5)
      ->Unit(benchmark::kMillisecond);
}

// Registers every library on `p`, oneDNN with constant weights for the constant group, and the
// tuned native configuration (kept alive in `owned`).
Row register_problem(const Problem& p, const GemmParams& shape,
                     std::vector<std::unique_ptr<Candidate<GemmParams>>>& owned) {
  const bool constant = std::string(p.group) == "constant";
  const char* dtype = tunekit::ops::has_bf16_inputs(shape.dtype) ? "bf16_" : "";
  Row row{shape, p.group, std::string(p.group) + "/" + dtype + shape.signature() + "/", "none"};
  std::vector<Candidate<GemmParams>*> libraries;
  for (auto& c : candidates()) {
    if (c->library() != "native" && c->supports(shape)) libraries.push_back(c.get());
  }
  if (constant) {  // the libraries' constant-weights modes (ops::Linear's)
    for (auto& c : tunekit::ops::detail::constant_weight_libraries()) {
      if (!c->supports(shape).is_ok()) continue;
      owned.push_back(std::move(c));
      libraries.push_back(owned.back().get());
    }
  }
  for (Candidate<GemmParams>* c : libraries)
    register_gemm(row.prefix + c->name(), c, shape, constant);
  auto native = tune_native(shape, constant);
  if (!native) return row;
  row.native = native->name();
  row.tuned = native.get();
  if (constant) print_pack_time(*native, shape);
  register_gemm(row.prefix + "native", native.get(), shape, constant);
  if (row.group == "decode") {
    repeated(benchmark::RegisterBenchmark((row.prefix + "native_vs_read").c_str(),
                                          run_decode_vs_read, native.get(), shape))
        ->MinTime(0.5);
  } else if (Candidate<GemmParams>* rival = fastest_library(libraries, shape, constant)) {
    row.rival = rival->name();
    repeated(benchmark::RegisterBenchmark((row.prefix + "native_vs_best").c_str(), run_native_vs,
                                          native.get(), rival, shape, constant))
        ->MinTime(0.5);
  } else {
    std::printf("  no library ran %s: nothing to pair the native configuration with\n",
                describe(shape).c_str());
  }
  owned.push_back(std::move(native));
  return row;
}

// For every bf16 decode row with an fp32 twin (same signature), both tuned: their native
// configurations alternated call by call.
void register_bf16_vs_f32(const std::vector<Row>& rows) {
  for (const Row& bf16 : rows) {
    if (bf16.group != "decode" || !tunekit::ops::has_bf16_inputs(bf16.shape.dtype)) continue;
    for (const Row& f32 : rows) {
      if (f32.group != "decode" || f32.shape.dtype != tunekit::ops::DType::kFloat ||
          f32.shape.signature() != bf16.shape.signature() || !bf16.tuned || !f32.tuned) {
        continue;
      }
      repeated(benchmark::RegisterBenchmark((bf16.prefix + "bf16_vs_f32").c_str(), run_bf16_vs_f32,
                                            bf16.tuned, bf16.shape, f32.tuned, f32.shape))
          ->MinTime(0.5);
    }
  }
}

}  // namespace

// The program's own flags, printed before Google Benchmark's on --help.
void print_usage() {
  std::printf(
      "native_gemm: tunekit's own GEMM kernels against the GEMM libraries (docs/native.md)\n"
      "  --threads N        threads of every contender and bound (default: the usable cores)\n"
      "  --search-ms MS     tuning budget of the native configuration per problem "
      "(default %.0f)\n"
      "  --repetitions R    runs of every benchmark, interleaved; medians summarised "
      "(default %d)\n"
      "  --problems LIST    groups among large, prefill, decode, constant (default: all)\n"
      "Google Benchmark's flags:\n",
      g_search_ms, g_repetitions);
}

int main(int argc, char** argv) {
  std::string v;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      print_usage();
      char help[] = "--help";
      char* only_help[] = {argv[0], help, nullptr};
      int two = 2;
      benchmark::Initialize(&two, only_help);  // prints its flags and exits
      return 0;
    }
  }
  g_threads = std::max(1, tunekit::hw::cpu().usable_cores);
  while (take_flag(argc, argv, "--threads", v)) g_threads = int_flag("--threads", v, 1, 1024);
  while (take_flag(argc, argv, "--search-ms", v)) {
    g_search_ms = int_flag("--search-ms", v, 1, 86400000);
  }
  while (take_flag(argc, argv, "--problems", v)) g_groups = groups_flag(v);
  while (take_flag(argc, argv, "--repetitions", v)) {
    g_repetitions = int_flag("--repetitions", v, 1, 1000);
  }
  // Repetitions in random order unless the command line says otherwise (a later flag wins).
  std::vector<char*> args(argv, argv + argc);
  char interleave[] = "--benchmark_enable_random_interleaving=true";
  args.insert(args.begin() + 1, interleave);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  tunekit::ops::set_num_threads(g_threads);
  repeated(benchmark::RegisterBenchmark("peak/fma", BM_FmaPeak))
      ->Arg(g_threads)
      ->ArgName("threads")
      ->MinTime(0.5);
  if (tunekit::hw::amx_permitted()) {
    repeated(benchmark::RegisterBenchmark("peak/amx_bf16", BM_AmxBf16Peak))
        ->Arg(g_threads)
        ->ArgName("threads")
        ->MinTime(0.5);
  }
  for (int streams : {1, 4, 8}) {
    const std::string name = "bound/read/streams:" + std::to_string(streams);
    repeated(benchmark::RegisterBenchmark(name.c_str(), BM_ReadBandwidth, streams))
        ->Arg(g_threads)
        ->ArgName("threads")
        ->MinTime(1.0);
  }
  std::vector<Row> rows;
  std::vector<std::unique_ptr<Candidate<GemmParams>>> owned;
  for (const Problem& p : kProblems) {
    if (g_groups.find(p.group) == std::string::npos) continue;
    auto shape = GemmParams::from_signature(p.op, p.params);
    if (shape) rows.push_back(register_problem(p, *shape, owned));
  }
  register_bf16_vs_f32(rows);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);
  summarise(collector, rows);
  benchmark::Shutdown();
  return 0;
}
