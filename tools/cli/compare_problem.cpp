// Re-timing of one GEMM problem for `tunekit compare` (see compare_problem.hpp): contenders,
// sample sizing, interleaved repeats and the head-to-head rounds, as named steps.
#include "compare_problem.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/stats.hpp"
#include "tunekit/measure/cache_flush.hpp"
#include "tunekit/measure/timing.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::cli {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxCopies = 64;
constexpr int kMaxCallsPerSample = 200;

/// Calls of one contender on rotating operand copies, each timed alone.
class ProblemTimer {
 public:
  ProblemTimer(GemmTunableOp& op, const ops::GemmParams& shape, ops::GemmWorkspace& ws,
               std::size_t copies, bool flush)
      : op_(op), shape_(shape), ws_(ws), copies_(copies), flush_(flush) {}

  /// One call of `c` on the next copy; its wall time in `*ms`.
  Status call(const Contender& c, double* ms) {
    const ops::GemmParams p = ws_.bind(rotation_++ % copies_);
    if (flush_) {
      const measure::MemoryRange ranges[] = {{p.a, shape_.a_bytes()},
                                             {p.b, shape_.b_bytes()},
                                             {p.c, shape_.c_bytes()},
                                             {p.bias, shape_.bias_bytes()}};
      measure::flush_data_cache(ranges);
    }
    const std::int64_t t0 = now_ns();
    const Status s = c.index == Contender::kTuned
                         ? op_(p)
                         : op_.candidates()[static_cast<std::size_t>(c.index)]->run(p);
    *ms = elapsed_ms(t0, now_ns());
    return s;
  }

  /// One sample: after the thread pools settled, one untimed call and `c.calls` timed calls;
  /// appends their median per-call ms to c.samples and returns it (NaN, nothing appended, when
  /// the first call fails).
  double sample(Contender& c) {
    (void)ops::settle_threads();
    double lead_in_ms = 0;  // wakes the contender's own pool, as find_fastest's blocks do
    if (!call(c, &lead_in_ms).is_ok()) return kNaN;
    std::vector<double> per_call;
    per_call.reserve(static_cast<std::size_t>(c.calls));
    for (int q = 0; q < c.calls; ++q) {
      double ms = 0;
      if (!call(c, &ms).is_ok()) break;
      per_call.push_back(ms);
    }
    if (per_call.empty()) return kNaN;
    c.samples.push_back(median(per_call));
    return c.samples.back();
  }

  ops::GemmParams first_copy() const { return ws_.bind(0); }

 private:
  GemmTunableOp& op_;
  const ops::GemmParams& shape_;
  ops::GemmWorkspace& ws_;
  std::size_t copies_;
  bool flush_;
  std::size_t rotation_ = 0;
};

/// The candidates that support and prepare `p` (libraries disabled by TUNEKIT_<LIB>_ENABLED=0
/// left out, Default always kept), then the tuned dispatch.
std::vector<Contender> make_contenders(GemmTunableOp& op, const ops::GemmParams& p,
                                       const std::string& solution) {
  std::vector<Contender> contenders;
  const auto& cands = op.candidates();
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!cands[i]->supports(p).is_ok()) continue;
    if (i != 0 && !op.context().is_library_enabled(cands[i]->library())) continue;
    if (!cands[i]->prepare(p).is_ok()) continue;
    Contender c;
    c.index = static_cast<int>(i);
    c.name = cands[i]->name();
    c.library = std::string(cands[i]->library());
    contenders.push_back(std::move(c));
  }
  Contender tuned;
  tuned.index = Contender::kTuned;
  tuned.name = "tuned (" + solution + ")";
  contenders.push_back(std::move(tuned));
  return contenders;
}

/// Calls per sample: enough for `sample_ms` judged from a second call (the first may pay a
/// first-call cost), 1 to kMaxCallsPerSample; 0 when the contender fails.
void size_samples(ProblemTimer& timer, std::vector<Contender>& contenders, double sample_ms) {
  for (Contender& c : contenders) {
    double ms = 0;
    (void)ops::settle_threads();
    if (!timer.call(c, &ms).is_ok()) {
      c.calls = 0;
      continue;
    }
    (void)timer.call(c, &ms);
    // Bounded as a double (sample_ms / ms can exceed any int; NaN gives 1 call).
    const double want = std::ceil(sample_ms / std::max(ms, 1e-6));
    c.calls = want >= kMaxCallsPerSample ? kMaxCallsPerSample
              : want >= 1.0              ? static_cast<int>(want)
                                         : 1;
  }
}

/// `repeats` rounds over every contender, the order rotated by one per round.
void interleave(ProblemTimer& timer, std::vector<Contender>& contenders, int repeats) {
  for (int r = 0; r < repeats; ++r) {
    for (std::size_t j = 0; j < contenders.size(); ++j) {
      Contender& c = contenders[(j + static_cast<std::size_t>(r)) % contenders.size()];
      c.repeat_ms.push_back(c.calls > 0 ? timer.sample(c) : kNaN);
    }
  }
  for (Contender& c : contenders) {
    c.repeats_median_ms = c.samples.empty() ? kNaN : median(c.samples);
    c.median_ms = c.repeats_median_ms;
  }
}

std::optional<std::size_t> fastest_single(const std::vector<Contender>& contenders) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < contenders.size(); ++i) {
    const Contender& c = contenders[i];
    if (c.index == Contender::kTuned || std::isnan(c.median_ms)) continue;
    if (!best || c.median_ms < contenders[*best].median_ms) best = i;
  }
  return best;
}

/// The tuned dispatch and the best single alternate (order swapped every round); each round
/// gives one paired ratio, so host drift cancels out and the best single's lucky median (the
/// minimum over all contenders) is measured again. `rounds` rounds, then more (up to 4 x
/// rounds, an even count) while all of them took less than `budget_ms`. Returns the median
/// ratio (NaN: no round).
double head_to_head(ProblemTimer& timer, Contender& tuned, Contender& best, int rounds,
                    double budget_ms) {
  std::vector<double> paired;
  const std::int64_t start = now_ns();
  const auto more = [&](int r) {
    if (r < rounds) return true;
    return r < 4 * rounds && (r % 2 == 1 || elapsed_ms(start, now_ns()) < budget_ms);
  };
  for (int r = 0; more(r); ++r) {
    double round_ms[2] = {kNaN, kNaN};
    for (int j = 0; j < 2; ++j) {
      const int which = (j + r) % 2;  // 0: tuned, 1: best
      round_ms[which] = timer.sample(which == 0 ? tuned : best);
    }
    if (std::isfinite(round_ms[0]) && std::isfinite(round_ms[1])) {
      paired.push_back(round_ms[0] / round_ms[1]);
    }
  }
  tuned.median_ms = median(tuned.samples);
  best.median_ms = median(best.samples);
  return paired.empty() ? kNaN : median(paired);
}

}  // namespace

double ProblemComparison::paired_ratio_to_tuned(const Contender& c) const {
  const std::vector<double>& t = tuned().repeat_ms;
  std::vector<double> ratios;
  for (std::size_t r = 0; r < c.repeat_ms.size() && r < t.size(); ++r) {
    if (std::isfinite(c.repeat_ms[r]) && std::isfinite(t[r]) && t[r] > 0) {
      ratios.push_back(c.repeat_ms[r] / t[r]);
    }
  }
  return ratios.empty() ? kNaN : median(ratios);
}

const Contender* ProblemComparison::default_contender() const {
  return !contenders.empty() && contenders.front().index == 0 ? &contenders.front() : nullptr;
}

Expected<ProblemComparison> compare_problem(GemmTunableOp& op, const ops::GemmParams& shape,
                                            const std::string& solution,
                                            const CompareOptions& options) {
  const std::size_t copies = std::min(
      kMaxCopies, measure::rotating_copies(options.rotating_bytes, shape.c_bytes(),
                                           shape.a_bytes() + shape.b_bytes() + shape.bias_bytes()));
  auto ws = ops::GemmWorkspace::create(shape, copies, true, 7);
  if (!ws) return ws.status();
  ProblemTimer timer(op, shape, **ws, copies, options.flush);
  ProblemComparison out;
  out.contenders = make_contenders(op, timer.first_copy(), solution);
  size_samples(timer, out.contenders, options.sample_ms);
  interleave(timer, out.contenders, options.repeats);
  out.best = fastest_single(out.contenders);
  Contender& tuned = out.contenders.back();
  if (!out.best || std::isnan(tuned.median_ms)) return out;
  Contender& best = out.contenders[*out.best];
  const double paired =
      head_to_head(timer, tuned, best, options.head_to_head, options.head_to_head_ms);
  out.tuned_over_best =
      std::isfinite(paired) ? paired : tuned.repeats_median_ms / best.repeats_median_ms;
  return out;
}

}  // namespace tunekit::cli
