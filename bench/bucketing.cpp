// How close bucketed dispatch comes to per-shape tuning for token counts that were never tuned.
// Tunes the Llama-2-7B projections at the representative token counts 1, 16, 128, 512 (buckets
// [1-1], [2-16], [17-128], [129-], as `tunekit tune-file --buckets 1,16,128,512`), then for the
// untuned token counts 8, 64, 256 tunes each exact shape too, and times the bucket's winner, the
// per-shape winner and Default interleaved (rounds in rotating order, operand caches flushed
// before every call, medians). Prints per problem the ratio bucket/per-shape and the geometric
// mean.
// Run: build/bench/bucketing [--threads N] [--budget-ms 30] [--rounds 7] [--no-vocab]
//      [--workload examples/workloads/llama2-7b_float_untuned.csv]
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/offline/buckets.hpp"
#include "tunekit/offline/tune_problems.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/threading.hpp"

namespace {

using tunekit::ops::GemmParams;

struct Options {
  int threads = 0;
  long long budget_ms = 30;
  int rounds = 7;
  bool vocab = true;
  std::string workload = "examples/workloads/llama2-7b_float_untuned.csv";
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median ms per call of each named candidate on `shape`, timed interleaved.
std::map<std::string, double> time_interleaved(tunekit::GemmTunableOp& op, const GemmParams& shape,
                                               const std::vector<std::string>& names, int rounds) {
  auto ws = tunekit::ops::GemmWorkspace::create(shape, 1, /*random_fill=*/true, /*seed=*/7);
  if (!ws) throw tunekit::Error(ws.status());
  const GemmParams p = (*ws)->bind(0);
  const std::vector<tunekit::measure::MemoryRange> ranges = {
      {p.a, p.a_bytes()}, {p.b, p.b_bytes()}, {p.c, p.c_bytes()}};
  std::vector<tunekit::Candidate<GemmParams>*> cands;
  for (const std::string& name : names) {
    auto* c = op.candidates()[*op.find_candidate(name)].get();
    if (!c->prepare(p).is_ok()) throw std::runtime_error("prepare failed: " + name);
    (void)c->run(p);  // untimed first call
    cands.push_back(c);
  }
  std::vector<std::vector<double>> samples(cands.size());
  for (int r = 0; r < rounds; ++r) {
    for (std::size_t j = 0; j < cands.size(); ++j) {
      const std::size_t i = (j + static_cast<std::size_t>(r)) % cands.size();
      tunekit::measure::flush_data_cache(ranges);
      const std::int64_t t0 = tunekit::now_ns();
      const tunekit::Status s = cands[i]->run(p);
      const std::int64_t t1 = tunekit::now_ns();
      if (!s.is_ok()) throw tunekit::Error(s);
      samples[i].push_back(tunekit::elapsed_ms(t0, t1));
    }
  }
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < cands.size(); ++i) out[names[i]] = median(samples[i]);
  return out;
}

std::string tune(tunekit::GemmTunableOp& op, const GemmParams& shape) {
  const auto o = tunekit::offline::tune_problem(op, shape, 0, nullptr);
  if (o.kind == tunekit::offline::ProblemOutcome::Kind::kFailed) {
    throw std::runtime_error(shape.signature() + ": " + o.note);
  }
  std::fprintf(stderr, "  tuned %-40s -> %s (%.4g ms)\n", shape.signature().c_str(),
               o.winner.c_str(), o.time_ms);
  return o.winner;
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return std::string(argv[++i]);
    };
    if (a == "--threads")
      opt.threads = std::stoi(next());
    else if (a == "--budget-ms")
      opt.budget_ms = std::stoll(next());
    else if (a == "--rounds")
      opt.rounds = std::stoi(next());
    else if (a == "--no-vocab")
      opt.vocab = false;
    else if (a == "--workload")
      opt.workload = next();
    else {
      std::fprintf(stderr,
                   "usage: bucketing [--threads N] [--budget-ms MS] [--rounds R] "
                   "[--no-vocab] [--workload FILE]\n");
      return 2;
    }
  }
  try {
    tunekit::TuningContext ctx;
    ctx.set_filename("");  // in memory only
    if (opt.threads > 0) ctx.set_threads(opt.threads);
    ctx.set_threads(tunekit::ops::set_num_threads(ctx.threads()));
    ctx.set_max_tuning_duration_ms(opt.budget_ms);
    tunekit::GemmTunableOp op(tunekit::ops::make_gemm_candidates(), ctx);

    tunekit::offline::GemmProblemSet set;
    if (auto s = tunekit::offline::read_gemm_problems(opt.workload, set); !s.is_ok()) {
      throw tunekit::Error(s);
    }
    std::vector<tunekit::offline::GemmProblem> problems;
    for (auto& p : set.problems) {
      if (opt.vocab || p.params.m != 32000) problems.push_back(p);
    }
    constexpr std::uint8_t kTokens = tunekit::kDynamicN;
    const auto buckets = tunekit::offline::parse_buckets("1,16,128,512").value();
    const auto plan = tunekit::offline::plan_buckets(problems, kTokens, buckets);
    std::fprintf(stderr, "tuning %zu representatives (%d threads, %lld ms per candidate)\n",
                 plan.representatives.size(), ctx.threads(), opt.budget_ms);
    for (const auto& rep : plan.representatives) tune(op, rep.params);
    for (const auto& e : plan.entries) {
      auto r = ctx.results_manager().lookup(e.op_signature, e.representative_signature);
      ctx.results_manager().add(
          {e.op_signature, e.bucket_params_signature, r->solution, r->time_ms, ""});
    }

    std::printf("%-40s %6s %-14s %-24s %-24s %10s %10s %10s %7s\n", "problem (m_n_k)", "tokens",
                "bucket", "bucket winner", "per-shape winner", "bucket ms", "shape ms",
                "Default ms", "ratio");
    std::vector<double> ratios, default_ratios;
    int same = 0;
    std::map<std::string, bool> families;
    for (const std::int64_t tokens : {8, 64, 256}) {
      families.clear();
      for (const auto& p : problems) {
        if (!families.emplace(p.params.dynamic_signature(kTokens), true).second) continue;
        const GemmParams shape = tunekit::offline::with_dim(p.params, kTokens, tokens).value();
        const auto bucket =
            ctx.results_manager().lookup_wildcard(shape.op_signature(), shape.signature());
        const std::string per_shape = tune(op, shape);
        std::vector<std::string> names;
        for (const std::string& n : {std::string("Default"), bucket->solution, per_shape}) {
          if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        }
        auto t = time_interleaved(op, shape, names, opt.rounds);
        const double ratio = t[bucket->solution] / t[per_shape];
        same += per_shape == bucket->solution;
        ratios.push_back(ratio);
        default_ratios.push_back(t["Default"] / t[per_shape]);
        const std::string range = bucket->params_signature.substr(
            bucket->params_signature.find('['),
            bucket->params_signature.find(']') - bucket->params_signature.find('[') + 1);
        std::printf("%-40s %6lld %-14s %-24s %-24s %10.4g %10.4g %10.4g %7.3f\n",
                    fmt::format("{}_{}_{}", shape.m, shape.n, shape.k).c_str(),
                    static_cast<long long>(tokens), range.c_str(), bucket->solution.c_str(),
                    per_shape.c_str(), t[bucket->solution], t[per_shape], t["Default"], ratio);
        std::fflush(stdout);
      }
    }
    std::printf(
        "\n%zu untuned problems: bucket winner = per-shape winner in %d; geometric-mean "
        "time ratio bucket / per-shape %.3f (worst %.3f); Default / per-shape %.3f\n",
        ratios.size(), same, tunekit::geometric_mean(ratios),
        *std::max_element(ratios.begin(), ratios.end()), tunekit::geometric_mean(default_ratios));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bucketing: %s\n", e.what());
    return 1;
  }
}
