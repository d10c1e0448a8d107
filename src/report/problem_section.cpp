// The report's tuned problems: per environment and op, each problem's winner, time, GFLOP/s,
// speed-ups over Default and over the best single library, runner-up and candidates' times.
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "report/report_internal.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::report::detail {
namespace {

using nlohmann::json;

/// A measured candidate's time, NaN when it was not measured.
double time_of(const std::vector<DbCandidateTime>& cands, const std::string& name) {
  for (const DbCandidateTime& c : cands) {
    if (c.name == name && c.outcome == "measured" && c.time_ms > 0) return c.time_ms;
  }
  return NAN;
}

/// A "library" is a fixed candidate (tunekit's own configurable kernels are not).
bool is_library(const std::string& name) { return !name.starts_with("native"); }

json problem_json(const DbStoredResult& r, const std::vector<DbCandidateTime>& cands) {
  const double t = r.result.time_ms;
  const auto params =
      ops::GemmParams::from_signature(r.result.op_signature, r.result.params_signature);
  const double gflops = params && t > 0 ? params->flops() / (t * 1e6) : NAN;
  const double default_ms = time_of(cands, "Default");
  std::string runner_up;
  double runner_up_ms = NAN;
  json candidates = json::array();
  for (const DbCandidateTime& c : cands) {
    candidates.push_back(
        {{"name", c.name}, {"outcome", c.outcome}, {"time_ms", number_or_null(c.time_ms)}});
    if (c.name != r.result.solution && c.outcome == "measured" && c.time_ms > 0 &&
        !(c.time_ms >= runner_up_ms)) {
      runner_up = c.name;
      runner_up_ms = c.time_ms;
    }
  }
  return {{"params", r.result.params_signature},
          {"winner", r.result.solution},
          {"time_ms", number_or_null(t)},
          {"gflops", number_or_null(gflops)},
          {"default_ms", number_or_null(default_ms)},
          {"speedup_default", number_or_null(default_ms / t)},
          {"runner_up", runner_up},
          {"runner_up_ms", number_or_null(runner_up_ms)},
          {"host", r.provenance.host},
          {"created", r.provenance.created},
          {"candidates", std::move(candidates)}};
}

/// The library that, used for every problem of the op, comes closest to the tuned winners:
/// smallest geometric mean of its time / the winner's time over the problems; only libraries
/// measured on every problem qualify. Returns ("", NaN) when none does.
std::pair<std::string, double> best_single_library(const json& problems) {
  std::map<std::string, std::pair<double, std::size_t>> log_sums;
  for (const json& p : problems) {
    if (!p["time_ms"].is_number()) continue;
    const double t = p["time_ms"].get<double>();
    for (const json& c : p["candidates"]) {
      const std::string name = c["name"].get<std::string>();
      if (!is_library(name) || !c["time_ms"].is_number() || c["outcome"] != "measured") continue;
      auto& [sum, n] = log_sums[name];
      sum += std::log(c["time_ms"].get<double>() / t);
      ++n;
    }
  }
  std::string best;
  double best_gm = NAN;
  for (const auto& [name, sn] : log_sums) {
    if (sn.second != problems.size()) continue;
    const double gm = std::exp(sn.first / static_cast<double>(sn.second));
    if (best.empty() || gm < best_gm) {
      best = name;
      best_gm = gm;
    }
  }
  return {best, best_gm};
}

/// Adds the speed-up of each problem's winner over `library` (its time there / the winner's).
void add_library_speedups(json& problems, const std::string& library) {
  for (json& p : problems) {
    double lib_ms = NAN;
    for (const json& c : p["candidates"]) {
      if (c["name"] == library && c["time_ms"].is_number()) lib_ms = c["time_ms"].get<double>();
    }
    const double t = p["time_ms"].is_number() ? p["time_ms"].get<double>() : NAN;
    p["best_library_ms"] = number_or_null(lib_ms);
    p["speedup_best_library"] = number_or_null(lib_ms / t);
  }
}

}  // namespace

Expected<json> problem_sections(const TuningDb& db, const std::string& source) {
  auto rows = db.best_results();
  if (!rows) return rows.status();
  std::map<std::pair<std::int64_t, std::string>, json> groups;
  std::vector<std::pair<std::int64_t, std::string>> order;
  for (const DbStoredResult& r : *rows) {
    auto cands = db.candidates(r.id);
    if (!cands) return cands.status();
    const auto key = std::make_pair(r.environment, r.result.op_signature);
    if (!groups.contains(key)) order.push_back(key);
    json& problems = groups[key];
    if (problems.is_null()) problems = json::array();
    problems.push_back(problem_json(r, *cands));
  }
  json out = json::array();
  for (const auto& key : order) {
    json& problems = groups[key];
    const auto [library, gm] = best_single_library(problems);
    add_library_speedups(problems, library);
    out.push_back({{"source", source},
                   {"environment", key.first},
                   {"op", key.second},
                   {"best_library", library},
                   {"best_library_over_tuned", number_or_null(gm)},
                   {"problems", std::move(problems)}});
  }
  return out;
}

}  // namespace tunekit::report::detail
