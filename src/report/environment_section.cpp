// The report's environments: where rows were measured (CPU, threads, library versions).
#include <cmath>

#include "report/report_internal.hpp"

namespace tunekit::report::detail {

using nlohmann::json;

Expected<json> environment_sections(const TuningDb& db, const std::string& source) {
  auto envs = db.environments();
  if (!envs) return envs.status();
  json out = json::array();
  for (const DbStoredEnvironment& e : *envs) {
    json entries = json::object(), libraries = json::object();
    for (const auto& [key, value] : e.validators) {
      entries[key] = value;
      if (key.ends_with("_VERSION") && key != "TUNEKIT_VERSION") libraries[key] = value;
    }
    out.push_back({{"source", source},
                   {"id", e.id},
                   {"cpu_model", entries.value("CPU_MODEL", "")},
                   {"cpu_isa", entries.value("CPU_ISA", "")},
                   {"threads", entries.value("THREADS", "")},
                   {"tunekit_version", entries.value("TUNEKIT_VERSION", "")},
                   {"libraries", std::move(libraries)}});
  }
  return out;
}

json number_or_null(double value) { return std::isfinite(value) ? json(value) : json(nullptr); }

}  // namespace tunekit::report::detail
