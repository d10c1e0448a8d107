// The HTML report: one self-contained page (data, Chart.js and the page's script inlined) drawn
// from tuning databases, TunableOp results files and AutoTVM logs. docs/report.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {
class TuningDb;
}

namespace tunekit::report {

/// What a report is drawn from.
struct ReportSources {
  std::vector<std::string> databases;      ///< tuning databases (read only)
  std::vector<std::string> results_files;  ///< TunableOp results CSV files
  std::vector<std::string> logs;           ///< AutoTVM JSON-lines tuning logs
  std::string title = "tunekit report";
};

/// The page's data from one database, appended to `data` (keys "environments", "ops",
/// "searches", "comparisons"; docs/report.md lists their fields). `source` labels the rows.
/// Units: times in milliseconds, GFLOP/s, search costs in milliseconds, tuning time in seconds.
/// Errors: kIoError from the database.
Status collect_database(const TuningDb& db, const std::string& source, nlohmann::json& data);

/// The page's data from every source: each database read as it is; results files and logs
/// imported into a scratch database first (removed afterwards).
/// Errors: those of TuningDb::open, import_results_file and import_autotvm_log, naming the file.
Expected<nlohmann::json> collect_report(const ReportSources& sources);

/// Refuses an output that is one of the report's inputs, which writing the page would destroy:
/// the same file (std::filesystem::equivalent) when both exist, else the same weakly canonical
/// path; a database's -wal and -shm files count as the database. Call before collect_report.
/// Errors: kInvalidArgument "the report's output '<output>' is its input '<input>' ...".
Status check_output_is_not_an_input(const ReportSources& sources, const std::string& output);

/// The HTML page of `data` (collect_report): Chart.js, the data as JSON and the page's script
/// inlined, so opening it makes no request. Errors: chart_library_source()'s.
Expected<std::string> render_report_html(const nlohmann::json& data);

/// render_report_html of `data` written to `path`: through a temporary file renamed over it, or
/// straight into `path` when it exists and is no regular file (a device, a FIFO).
/// Errors: render_report_html's; kIoError "cannot write the report '<path>': <reason>" when it
/// cannot be opened, written, flushed or closed (e.g. "No space left on device").
Status write_report(const nlohmann::json& data, const std::string& path);

}  // namespace tunekit::report
