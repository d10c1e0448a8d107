// MeasureErrorNo names, MeasureResult helpers and measure_batch (build, then run).
// See include/tunekit/measure/measure_types.hpp.
#include "tunekit/measure/measure_types.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "tunekit/core/clock.hpp"

namespace tunekit {

std::string_view to_string(MeasureErrorNo code) noexcept {
  switch (code) {
    case MeasureErrorNo::kNoError:
      return "NO_ERROR";
    case MeasureErrorNo::kInstantiationError:
      return "INSTANTIATION_ERROR";
    case MeasureErrorNo::kCompileHost:
      return "COMPILE_HOST";
    case MeasureErrorNo::kCompileDevice:
      return "COMPILE_DEVICE";
    case MeasureErrorNo::kRuntimeDevice:
      return "RUNTIME_DEVICE";
    case MeasureErrorNo::kWrongAnswer:
      return "WRONG_ANSWER";
    case MeasureErrorNo::kBuildTimeout:
      return "BUILD_TIMEOUT";
    case MeasureErrorNo::kRunTimeout:
      return "RUN_TIMEOUT";
    case MeasureErrorNo::kUnknownError:
      return "UNKNOWN_ERROR";
  }
  return "UNKNOWN_ERROR";
}

MeasureErrorNo measure_error_from_int(int code) noexcept {
  if (code < 0 || code > 8) return MeasureErrorNo::kUnknownError;
  return static_cast<MeasureErrorNo>(code);
}

double MeasureResult::mean_cost_s() const noexcept {
  if (!ok()) return std::numeric_limits<double>::quiet_NaN();
  return std::accumulate(costs_s.begin(), costs_s.end(), 0.0) / static_cast<double>(costs_s.size());
}

double Runner::clock_s() const { return static_cast<double>(now_ns()) * 1e-9; }

int MeasureOptions::batch_size() const {
  int n = builder ? builder->n_parallel() : (runner ? runner->n_parallel() : 1);
  return n < 1 ? 1 : n;
}

std::vector<MeasureResult> measure_batch(const MeasureOptions& options,
                                         std::span<const MeasureInput> inputs) {
  std::vector<MeasureResult> out(inputs.size());
  if (!options.runner) {
    for (auto& r : out) {
      r.error_no = MeasureErrorNo::kUnknownError;
      r.error_msg = "no runner in the measure options";
      r.timestamp_s = unix_time_s();
    }
    return out;
  }
  std::vector<BuildResult> builds;
  if (options.builder) {
    builds = options.builder->build(inputs);
    builds.resize(inputs.size());
  }
  // Run only what built; failed builds pass through.
  std::vector<MeasureInput> to_run;
  std::vector<BuildResult> to_run_builds;
  std::vector<std::size_t> where;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!builds.empty() && builds[i].error_no != MeasureErrorNo::kNoError) {
      out[i].error_no = builds[i].error_no;
      out[i].error_msg = builds[i].error_msg;
      out[i].all_cost_s = builds[i].time_cost_s;
      out[i].build_cost_s = builds[i].time_cost_s;
      out[i].timestamp_s = options.runner->clock_s();
      continue;
    }
    to_run.push_back(inputs[i]);
    if (!builds.empty()) to_run_builds.push_back(builds[i]);
    where.push_back(i);
  }
  if (!to_run.empty()) {
    auto results = options.runner->run(to_run, to_run_builds);
    for (std::size_t j = results.size(); j < to_run.size(); ++j) {
      MeasureResult missing;
      missing.error_no = MeasureErrorNo::kUnknownError;
      missing.error_msg = "the runner returned no result for this input";
      missing.timestamp_s = options.runner->clock_s();
      results.push_back(std::move(missing));
    }
    for (std::size_t j = 0; j < where.size(); ++j) {
      MeasureResult& r = out[where[j]];
      r = std::move(results[j]);
      if (!builds.empty()) {
        r.all_cost_s += builds[where[j]].time_cost_s;
        r.build_cost_s = builds[where[j]].time_cost_s;
      }
      // A success must carry costs a tuner can compare: a zero, negative or non-finite cost
      // would win every comparison (or none) and could not be written to a log and read back.
      if (r.error_no == MeasureErrorNo::kNoError) {
        const auto bad = std::find_if(r.costs_s.begin(), r.costs_s.end(),
                                      [](double c) { return !(std::isfinite(c) && c > 0.0); });
        if (bad != r.costs_s.end()) {
          r.error_msg = "the runner reported cost " + std::to_string(*bad) +
                        " s for a successful run (costs must be finite and > 0)";
          r.error_no = MeasureErrorNo::kRuntimeDevice;
          r.costs_s.clear();
        }
      }
    }
  }
  return out;
}

}  // namespace tunekit
