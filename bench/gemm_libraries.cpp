// Times every GEMM candidate (Default/OpenBLAS, BLIS per sub-architecture, Eigen, oneDNN, libxsmm)
// on Llama-2-7B projection shapes, float and bf16, with 1 and 2 threads; reports GFLOP/s.
//
// Shapes are lines of ../shared/data/workloads/llama2-7b_float_untuned.csv (n = tokens 1 and 16;
// q/k/v/o 4096x4096, gate/up 11008x4096, down 4096x11008) plus a 64^3 problem for libxsmm.
// Operands rotate through copies spanning >= 256 MiB, so the weights are not served from the
// last-level cache (48-192 MB usable on the Intel Xeon); all problems' copies stay
// allocated (about 2.5 GiB) so that --benchmark_enable_random_interleaving=true can mix them. Each
// benchmark prepares its candidate (library load, JIT, primitive creation, settle of other thread
// pools) untimed. Run: build-*/bench/gemm_libraries [--benchmark_filter=...]; counters: GFLOP/s
// (wall clock).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm_candidates.hpp"
#include "tunekit/ops/threading.hpp"

namespace {

using tunekit::CandidateList;
using tunekit::Status;
using tunekit::ops::DType;
using tunekit::ops::GemmParams;
using tunekit::ops::GemmWorkspace;

constexpr std::size_t kRotateBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxCopies = 16;

struct Problem {
  const char* op;
  const char* params;
};

// Llama-2-7B lines (float); each is also run as bf16.
constexpr Problem kProblems[] = {
    {"GemmTunableOp_float_TN", "tn_4096_1_4096_ld_4096_4096_4096"},
    {"GemmTunableOp_float_TN", "tn_4096_16_4096_ld_4096_4096_4096"},
    {"GemmTunableOp_float_TN", "tn_11008_16_4096_ld_4096_4096_11008"},
    {"GemmTunableOp_float_TN", "tn_4096_16_11008_ld_11008_11008_4096"},
    {"GemmTunableOp_float_NN", "nn_64_64_64_ld_64_64_64"},
};

CandidateList<GemmParams>& candidates() {
  static CandidateList<GemmParams> list = tunekit::ops::make_gemm_candidates();
  return list;
}

// Operand sets for one problem, shared by all candidates and thread counts (built on first use).
GemmWorkspace* workspace(const GemmParams& shape) {
  struct Entry {
    std::string key;
    std::unique_ptr<GemmWorkspace> ws;
  };
  static std::vector<Entry> cache;
  const std::string key = shape.op_signature() + shape.signature();
  for (Entry& e : cache) {
    if (e.key == key) return e.ws.get();
  }
  const std::size_t bytes = shape.operand_bytes() + shape.output_bytes();
  const std::size_t copies = std::clamp<std::size_t>(kRotateBytes / bytes + 1, 1, kMaxCopies);
  auto ws = GemmWorkspace::create(shape, copies, /*random_fill=*/true, 1);
  if (!ws) return nullptr;
  cache.push_back({key, std::move(*ws)});
  return cache.back().ws.get();
}

void run_candidate(benchmark::State& state, std::size_t index, GemmParams shape, int threads) {
  tunekit::ops::set_num_threads(threads);
  tunekit::Candidate<GemmParams>& c = *candidates()[index];
  if (Status s = c.supports(shape); !s) {
    state.SkipWithError(s.to_string().c_str());
    return;
  }
  GemmWorkspace* ws = workspace(shape);
  if (ws == nullptr) {
    state.SkipWithError("cannot allocate operands");
    return;
  }
  if (Status s = c.prepare(ws->bind(0)); !s) {
    state.SkipWithError(s.to_string().c_str());
    return;
  }
  std::size_t i = 0;
  for (auto _ : state) {
    const Status s = c.run(ws->bind(i));
    if (!s) {
      state.SkipWithError(s.to_string().c_str());
      break;
    }
    i = (i + 1) % ws->copies();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      shape.flops() * static_cast<double>(state.iterations()) * 1e-9, benchmark::Counter::kIsRate);
  state.counters["copies"] = static_cast<double>(ws->copies());
}

void register_all() {
  const int usable = std::max(1, tunekit::hw::cpu().usable_cores);
  std::vector<int> thread_counts = {1};
  if (usable >= 2) thread_counts.push_back(2);
  for (const Problem& problem : kProblems) {
    for (DType dtype : {DType::kFloat, DType::kBFloat16Float, DType::kBFloat16}) {
      auto parsed = GemmParams::from_signature(problem.op, problem.params);
      if (!parsed) {
        std::fprintf(stderr, "bad problem %s,%s: %s\n", problem.op, problem.params,
                     parsed.status().to_string().c_str());
        continue;
      }
      GemmParams shape = *parsed;
      shape.dtype = dtype;
      for (int threads : thread_counts) {
        for (std::size_t i = 0; i < candidates().size(); ++i) {
          const std::string name = shape.op_signature() + "/" + shape.signature() + "/" +
                                   candidates()[i]->name() + "/threads:" + std::to_string(threads);
          benchmark::RegisterBenchmark(name.c_str(), run_candidate, i, shape, threads)
              ->UseRealTime()
              ->MinTime(0.3)
              ->Unit(benchmark::kMillisecond);
        }
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
