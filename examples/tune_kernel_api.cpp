// Tuning a kernel from C++ without a JSON spec: the config space through define_split /
// define_knob (AutoTVM's names), the problem and FLOP count in code, tune_kernel to search, then
// load_best to call the winner (the compiled-code counterpart of apply_history_best).
//
// Usage: example_tune_kernel_api LOG [TRIALS]   (LOG: the tuning log, resumed when it exists)
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tunekit/kernel/load_best.hpp"
#include "tunekit/kernel/tune_kernel.hpp"

namespace {

constexpr int kRows = 512;
constexpr int kCols = 2048;

// y = A x for a row-major kRows x kCols matrix: rows in tiles of TILE_M_1 (the inner factor of
// the split), the dot product unrolled UNROLL times.
constexpr const char* kSource = R"(
extern "C" void matvec(int m, int n, const float* a, const float* x, float* y) {
  for (int r0 = 0; r0 < m; r0 += TILE_M_1) {
    for (int r = r0; r < r0 + TILE_M_1 && r < m; ++r) {
      float acc[UNROLL] = {0};
      int c = 0;
      for (; c + UNROLL <= n; c += UNROLL)
        for (int u = 0; u < UNROLL; ++u) acc[u] += a[(long)r * n + c + u] * x[c + u];
      float sum = 0;
      for (int u = 0; u < UNROLL; ++u) sum += acc[u];
      for (; c < n; ++c) sum += a[(long)r * n + c] * x[c];
      y[r] = sum;
    }
  }
}
)";

tunekit::KernelArgument scalar(const char* name, int value) {
  tunekit::KernelArgument arg;
  arg.name = name;
  arg.dtype = tunekit::ArgDtype::kInt32;
  arg.is_scalar = true;
  arg.scalar_value = value;
  return arg;
}

tunekit::KernelArgument array(const char* name, std::size_t size, bool output) {
  tunekit::KernelArgument arg;
  arg.name = name;
  arg.size = size;
  arg.is_output = output;
  if (output) arg.fill.kind = tunekit::FillKind::kZeros;
  return arg;
}

tunekit::KernelSpec make_spec(const std::string& log, std::size_t trials) {
  auto space = std::make_shared<tunekit::ConfigSpace>();
  tunekit::SplitOptions split;
  split.policy = "power2";
  if (!space->define_split("TILE_M", kRows, split).is_ok() ||
      !space->define_knob("UNROLL", {1, 2, 4, 8, 16}).is_ok()) {
    std::fprintf(stderr, "cannot define the space\n");
    std::exit(1);
  }
  tunekit::KernelSpec spec;
  spec.source.name = "matvec";
  spec.source.path = "matvec.cpp";  // named in compiler messages
  spec.source.text = kSource;
  spec.source.entry = "matvec";
  spec.source.flags = {"-O3"};
  spec.problem.arguments = {scalar("m", kRows), scalar("n", kCols),
                            array("a", std::size_t{kRows} * kCols, false), array("x", kCols, false),
                            array("y", kRows, true)};
  spec.space = space;
  spec.verify.atol = 1e-3;
  spec.verify.rtol = 1e-4;
  spec.strategy = "random";
  spec.budget.trials = trials;
  spec.log_path = log;
  spec.flop = 2.0 * kRows * kCols;  // add_flop
  return spec;
}

// Calls the tuned kernel on fresh data and returns the largest error against a plain loop.
double check_best(const tunekit::KernelFunction& best) {
  std::vector<float> a(std::size_t{kRows} * kCols), x(kCols), y(kRows);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) - 3.0f;
  for (int c = 0; c < kCols; ++c) x[c] = static_cast<float>(c % 5) * 0.5f;
  best(kRows, kCols, static_cast<const float*>(a.data()), static_cast<const float*>(x.data()),
       y.data());
  double worst = 0.0;
  for (int r = 0; r < kRows; ++r) {
    double want = 0.0;
    for (int c = 0; c < kCols; ++c)
      want += double{a[static_cast<std::size_t>(r) * kCols + c]} * x[c];
    worst = std::fmax(worst, std::fabs(want - y[r]));
  }
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s LOG [TRIALS]\n", argv[0]);
    return 2;
  }
  const std::size_t trials = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20;
  const tunekit::KernelSpec spec = make_spec(argv[1], trials);
  tunekit::KernelTuneOptions options;
  options.progress = stdout;
  auto result = tunekit::tune_kernel(spec, options);
  if (!result || !result->best) {
    std::fprintf(stderr, "tuning failed: %s\n",
                 result ? "no configuration ran" : result.status().message().c_str());
    return 1;
  }
  std::printf("best of %zu trial(s): %s, %.1f us\n", result->trials.size(),
              result->best->config.to_string().c_str(), result->best->result.mean_cost_s() * 1e6);
  auto best = tunekit::load_best(spec.log_path, spec);
  if (!best) {
    std::fprintf(stderr, "%s\n", best.status().message().c_str());
    return 1;
  }
  const double error = check_best(*best);
  std::printf("load_best: %s from %s, largest error %.2g\n", best->config_text().c_str(),
              best->artifact().c_str(), error);
  return error < 1e-2 ? 0 : 1;
}
