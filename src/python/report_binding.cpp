// The HTML report and stored comparisons from Python: tunekit.report() writes the page that
// `tunekit report` writes; bench/python/torch_vs_tunekit.py stores its run for the report.
#include <fmt/format.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <unistd.h>

#include <string>
#include <tuple>
#include <vector>

#include "bindings.hpp"
#include "errors.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/report/report.hpp"
#include "tunekit/tunable/context.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

/// (op signature, params signature, contender, kind, median ms) of one compared contender.
using ComparisonRow = std::tuple<std::string, std::string, std::string, std::string, double>;

/// write(output, databases, results, logs, title): the page of those sources (the user database
/// when none is named) written to `output`; returns (op groups, searches, comparison runs).
std::tuple<std::size_t, std::size_t, std::size_t> write(const std::string& output,
                                                        std::vector<std::string> databases,
                                                        std::vector<std::string> results,
                                                        std::vector<std::string> logs,
                                                        const std::string& title) {
  report::ReportSources s{std::move(databases), std::move(results), std::move(logs), title};
  if (s.databases.empty() && s.results_files.empty() && s.logs.empty()) {
    const std::string user = default_user_db_path();
    if (user.empty()) {
      raise(Status(StatusCode::kInvalidArgument,
                   "report: no source: TUNEKIT_DB is off; name db, results or logs"));
    }
    s.databases.push_back(user);
  }
  check(report::check_output_is_not_an_input(s, output));
  nlohmann::json data;
  {
    nb::gil_scoped_release unlocked;
    auto collected = report::collect_report(s);
    if (!collected) raise(collected.status());
    data = std::move(*collected);
    check(report::write_report(data, output));
  }
  return {data["ops"].size(), data["searches"].size(), data["comparisons"].size()};
}

/// store_comparison(rows, tool): one comparison run stored in the user tuning database under
/// this process's environment; returns the database's path ("" when there is none).
std::string store_comparison(const std::vector<ComparisonRow>& rows, const std::string& tool) {
  TuningContext& ctx = tuning_context();
  auto db = ctx.databases().user_for_writing();
  if (!db) raise(db.status());
  if (!*db) return {};
  DbComparison run;
  run.tool = tool;
  run.provenance = DbProvenance{hw::host_name(), tool, utc_now()};
  run.run =
      fmt::format("{} {} {} {}", tool, run.provenance.created, run.provenance.host, ::getpid());
  std::vector<DbComparison> stored;
  for (const auto& [op, params, contender, kind, ms] : rows) {
    DbComparison c = run;
    c.op_signature = op;
    c.params_signature = params;
    c.contender = contender;
    c.kind = kind;
    c.time_ms = ms;
    stored.push_back(std::move(c));
  }
  auto added = (*db)->add_comparisons(ctx.validators().values(), stored);
  if (!added) raise(added.status());
  return (*db)->path();
}

}  // namespace

void bind_report(nb::module_& m) {
  nb::module_ r = m.def_submodule("report", "the HTML report (see tunekit.report)");
  r.def("write", &write, nb::arg("output"), nb::arg("databases"), nb::arg("results"),
        nb::arg("logs"), nb::arg("title"));
  r.def("store_comparison", &store_comparison, nb::arg("rows"), nb::arg("tool"));
}

}  // namespace tunekit::python
