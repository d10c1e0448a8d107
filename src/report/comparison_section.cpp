// The report's comparisons: stored `tunekit compare` runs and PyTorch benchmark runs, per run
// and problem every contender's time and its ratio to the tuned dispatch.
#include <cmath>
#include <map>
#include <vector>

#include "report/report_internal.hpp"

namespace tunekit::report::detail {

using nlohmann::json;

Expected<json> comparison_sections(const TuningDb& db, const std::string& source) {
  auto rows = db.comparisons();
  if (!rows) return rows.status();
  std::map<std::string, json> runs;
  std::vector<std::string> order;
  for (const DbComparison& c : *rows) {
    json& run = runs[c.run];
    if (run.is_null()) {
      order.push_back(c.run);
      run = {{"source", source},
             {"run", c.run},
             {"tool", c.tool},
             {"environment", c.environment.value_or(0)},
             {"host", c.provenance.host},
             {"created", c.provenance.created},
             {"problems", json::object()}};
    }
    json& problem = run["problems"][c.op_signature + "," + c.params_signature];
    if (problem.is_null()) problem = json::object();
    problem[c.contender] = {{"kind", c.kind}, {"time_ms", number_or_null(c.time_ms)}};
  }
  json out = json::array();
  for (const std::string& id : order) out.push_back(std::move(runs[id]));
  return out;
}

}  // namespace tunekit::report::detail
