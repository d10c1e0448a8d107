// `tunekit db show`: results per environment and op, trials per task. See tools/cli/db_common.hpp.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "commands.hpp"
#include "db_common.hpp"
#include "table.hpp"

namespace tunekit::cli {
namespace {

std::string value_of(const DbEnvironment& env, std::string_view key) {
  for (const auto& [k, v] : env) {
    if (k == key) return v;
  }
  return "-";
}

// "CPU model; tunekit or PyTorch version; threads; <LIB>=<version> ..."
std::string describe(const DbEnvironment& env) {
  std::string text = value_of(env, "CPU_MODEL");
  for (const auto& [k, v] : env) {
    if (k == "CPU_MODEL" || k == "CPU_ISA") continue;
    text += "; " + k + "=" + v;
  }
  return text;
}

// Default's time in the tuning of `row` (NaN when it was not measured or not recorded).
double default_ms(const TuningDb& db, std::int64_t row) {
  auto times = db.candidates(row);
  if (!times) return std::nan("");
  for (const DbCandidateTime& c : *times) {
    if (c.name == "Default") return c.time_ms;
  }
  return std::nan("");
}

}  // namespace

void print_results(const TuningDb& db, const DbResultQuery& query) {
  auto environments = db.environments();
  if (!environments) throw CommandFailure{kExitFailure, environments.status().message()};
  std::map<std::int64_t, const DbEnvironment*> by_id;
  for (const DbStoredEnvironment& e : *environments) by_id[e.id] = &e.validators;
  auto rows = db.best_results(query);
  if (!rows) throw CommandFailure{kExitFailure, rows.status().message()};
  std::map<std::pair<std::int64_t, std::string>, std::vector<const DbStoredResult*>> groups;
  for (const DbStoredResult& r : *rows)
    groups[{r.environment, r.result.op_signature}].push_back(&r);
  std::printf("%s: %zu result(s) in %zu environment(s)\n", db.path().c_str(), rows->size(),
              environments->size());
  std::int64_t shown_env = -1;
  for (const auto& [key, group] : groups) {
    if (key.first != shown_env) {
      shown_env = key.first;
      std::printf("\nenvironment %lld: %s\n", static_cast<long long>(key.first),
                  describe(*by_id[key.first]).c_str());
    }
    std::printf("\n%s\n", key.second.c_str());
    Table table({"problem", "winner", "ms", "Default ms", "speed-up", "host", "date"},
                {false, false, true, true, true, false, false});
    for (const DbStoredResult* r : group) {
      const double d = default_ms(db, r->id);
      const double t = r->result.time_ms;
      table.add_row({r->result.params_signature, r->result.solution, format_number(t),
                     std::isnan(d) ? "-" : format_number(d),
                     std::isnan(d) || !(t > 0) ? "-" : format_number(d / t) + "x",
                     r->provenance.host.empty() ? "-" : r->provenance.host,
                     r->provenance.created.substr(0, 10)});
    }
    std::fputs(table.render().c_str(), stdout);
  }
}

void print_trials(const TuningDb& db) {
  auto trials = db.trials();
  if (!trials) throw CommandFailure{kExitFailure, trials.status().message()};
  if (trials->empty()) return;
  struct Summary {
    std::size_t count = 0, failed = 0;
    double best_s = std::nan("");
    std::string best_config;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Summary> by_task;
  for (const DbTrial& t : *trials) {
    Summary& s = by_task[{t.format, t.target, t.task}];
    ++s.count;
    if (t.error_no != 0 || std::isnan(t.cost_s)) {
      ++s.failed;
    } else if (std::isnan(s.best_s) || t.cost_s < s.best_s) {
      s.best_s = t.cost_s;
      s.best_config = t.config;
    }
  }
  std::printf("\n%zu trial(s)\n", trials->size());
  Table table({"format", "target", "task", "trials", "failed", "best ms", "best configuration"},
              {false, false, false, true, true, true, false});
  for (const auto& [key, s] : by_task) {
    const auto& [format, target, task] = key;
    table.add_row(
        {format, target, task, std::to_string(s.count), std::to_string(s.failed),
         std::isnan(s.best_s) ? "-" : format_number(s.best_s * 1e3),
         s.best_config.size() > 60 ? s.best_config.substr(0, 57) + "..." : s.best_config});
  }
  std::fputs(table.render().c_str(), stdout);
}

}  // namespace tunekit::cli
