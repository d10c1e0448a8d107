// Cost of isolation per kernel trial: one configuration of a tiny C kernel (4-element vector
// add, 1 timed call) measured by the in-process runner, by the isolated runner with a forked
// child per trial (Isolation::kProcess) and by the warm worker (Isolation::kWorker); prints the
// times and each isolated runner's difference to and ratio over the in-process one.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "tunekit/measure/kernel_runner.hpp"

namespace {

/// Compiles the kernel with the system C compiler into a temporary directory (once).
const std::string& kernel_artifact() {
  static const std::string path =
      [] {
        const auto dir = std::filesystem::temp_directory_path() /
                         ("tunekit-isolation-bench-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir);
        std::ofstream(dir / "vadd.c")
            << "void kernel(int n, const float* a, const float* b, "
               "float* c) { for (int i = 0; i < n; ++i) c[i] = a[i] + b[i]; }\n";
        const std::string so = (dir / "vadd.so").string();
        const std::string cmd = "cc -O2 -shared -fPIC -o " + so + " " + (dir / "vadd.c").string();
        if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "cannot compile %s\n", cmd.c_str());
        return so;
      }();
  return path;
}

tunekit::KernelProblem tiny_problem() {
  tunekit::KernelProblem p;
  tunekit::KernelArgument n{"n", tunekit::ArgDtype::kInt32, true, 4.0, 0, {}, false};
  tunekit::KernelArgument a{"a", tunekit::ArgDtype::kFloat32, false, 0.0, 4, {}, false};
  tunekit::KernelArgument b = a;
  b.name = "b";
  tunekit::KernelArgument c = a;
  c.name = "c";
  c.is_output = true;
  p.arguments = {n, a, b, c};
  return p;
}

/// The runner of benchmark argument 0, 1, 2 and its label.
constexpr tunekit::Isolation kIsolations[] = {
    tunekit::Isolation::kInProcess, tunekit::Isolation::kProcess, tunekit::Isolation::kWorker};
constexpr const char* kLabels[] = {"in-process", "isolated", "warm-worker"};

void BM_KernelTrial(benchmark::State& state) {
  const auto isolation = kIsolations[state.range(0)];
  tunekit::KernelSource source;
  source.entry = "kernel";
  tunekit::RunnerOptions options;
  options.isolation = isolation;
  options.timing.number = 1;
  options.timing.repeat = 1;
  options.timing.warmup = 0;
  auto runner = tunekit::make_kernel_runner(source, tiny_problem(), options);
  if (!runner) {
    state.SkipWithError(runner.status().message().c_str());
    return;
  }
  tunekit::MeasureInput input;
  tunekit::BuildResult build;
  build.artifact = kernel_artifact();
  for (auto _ : state) {
    auto results = (*runner)->run({&input, 1}, {&build, 1});
    if (!results[0].ok()) state.SkipWithError(results[0].error_msg.c_str());
  }
  state.SetLabel(kLabels[state.range(0)]);
}
BENCHMARK(BM_KernelTrial)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

/// Console output plus the difference and ratio of the two runs at the end.
class IsolationReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& run : runs) {
      seconds_[run.report_label] = run.GetAdjustedRealTime() * 1e-6;  // microseconds
    }
    ConsoleReporter::ReportRuns(runs);
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    if (seconds_.count("in-process") == 0 || seconds_.count("isolated") == 0) return;
    const double in = seconds_["in-process"];
    for (const char* label : {"isolated", "warm-worker"}) {
      if (seconds_.count(label) == 0) continue;
      const double iso = seconds_[label];
      std::printf("%s: isolation cost per trial %.1f us (%.1f us / in-process %.1f us = %.1fx)\n",
                  label, (iso - in) * 1e6, iso * 1e6, in * 1e6, iso / in);
    }
  }

 private:
  std::map<std::string, double> seconds_;
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  IsolationReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
