// Instructions per GEMM hit, counted by callgrind: the direct candidate call, the TunableOp hit and
// the public tunekit::gemm hit on one float problem, each phase in its own function.
//
// Usage, one command (docs/performance.md, "Dispatch overhead of a hit"):
//   valgrind --tool=callgrind --callgrind-out-file=cg.out
//       build/bench/dispatch_instructions [candidate=libxsmm] [size=16] [calls=20000]
//   callgrind_annotate --inclusive=yes cg.out | grep phase_
// Each phase_* line's inclusive count divided by `calls` is the instructions per call. The
// candidate is stored as the problem's result (no tuning), so every run measures the same code;
// TUNEKIT_THREADS sets the library thread count as for any program.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tunekit/ops/gemm.hpp"

namespace {

struct Problem {
  int size = 16;
  std::vector<float> a, b, c;
  explicit Problem(int s)
      : size(s),
        a(static_cast<std::size_t>(s) * s, 1.0f),
        b(static_cast<std::size_t>(s) * s, 0.5f),
        c(static_cast<std::size_t>(s) * s, 0.0f) {}
  tunekit::ops::GemmParams params() {
    tunekit::ops::GemmParams p;
    p.m = p.n = p.k = p.lda = p.ldb = p.ldc = size;
    p.a = a.data();
    p.b = b.data();
    p.c = c.data();
    return p;
  }
};

__attribute__((noinline)) void phase_direct(tunekit::Candidate<tunekit::ops::GemmParams>& cand,
                                            const tunekit::ops::GemmParams& p, int calls) {
  for (int i = 0; i < calls; ++i) {
    if (!cand.run(p).is_ok()) std::abort();
  }
}

__attribute__((noinline)) void phase_op(tunekit::GemmTunableOp& op,
                                        const tunekit::ops::GemmParams& p, int calls) {
  for (int i = 0; i < calls; ++i) {
    if (!op(p).is_ok()) std::abort();
  }
}

__attribute__((noinline)) void phase_public(Problem& pr, int calls) {
  const int s = pr.size;
  for (int i = 0; i < calls; ++i) {
    tunekit::gemm('n', 'n', s, s, s, 1.0f, pr.a.data(), s, pr.b.data(), s, 0.0f, pr.c.data(), s);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string name = argc > 1 ? argv[1] : "libxsmm";
  const int size = argc > 2 ? std::atoi(argv[2]) : 16;
  const int calls = argc > 3 ? std::atoi(argv[3]) : 20000;
  tunekit::TuningContext& ctx = tunekit::tuning_context();
  ctx.set_filename("");  // no results file: the result below lives in memory only
  tunekit::GemmTunableOp& op = tunekit::gemm_op();
  const auto index = op.find_candidate(name);
  if (!index) {
    std::fprintf(stderr, "no candidate '%s' on this machine\n", name.c_str());
    return 2;
  }
  Problem pr(size);
  const tunekit::ops::GemmParams p = pr.params();
  auto added = ctx.add_result({p.op_signature(), p.signature(), name, 0.001, ""});
  if (!added) {
    std::fprintf(stderr, "%s\n", added.status().to_string().c_str());
    return 2;
  }
  // Resolve the stored result (prepare, publish), then warm every path once.
  phase_public(pr, 1);
  if (op.cached_solution(p) != name) {
    std::fprintf(stderr, "the hit path does not run %s\n", name.c_str());
    return 2;
  }
  auto& cand = *op.candidates()[*index];
  phase_direct(cand, p, 1);
  phase_op(op, p, 1);
  phase_direct(cand, p, calls);
  phase_op(op, p, calls);
  phase_public(pr, calls);
  std::printf("%s %dx%dx%d float, %d threads, %d calls per phase\n", name.c_str(), size, size, size,
              ctx.threads(), calls);
  return 0;
}
