// Collecting the report's data from databases, results files and logs, and writing the page
// (include/tunekit/report/report.hpp).
#include "tunekit/report/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "report/report_internal.hpp"
#include "tunekit/core/version.hpp"
#include "tunekit/records/db_trials.hpp"
#include "tunekit/records/tuning_db.hpp"
#include "tunekit/tunable/results_db.hpp"

namespace tunekit::report {
namespace {

using nlohmann::json;

/// A database file in the temporary folder, removed (with its WAL files) on destruction.
class ScratchDb {
 public:
  ScratchDb() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tunekit-report-XXXXXX").string();
    const int fd = ::mkstemp(pattern.data());
    if (fd >= 0) {
      ::close(fd);
      std::filesystem::remove(pattern);
      path_ = pattern;
    }
  }
  ~ScratchDb() {
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path_ + suffix).c_str());
  }
  ScratchDb(const ScratchDb&) = delete;
  ScratchDb& operator=(const ScratchDb&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Appends the array `part` to `data[key]`.
void append(json& data, const char* key, json part) {
  for (json& item : part) data[key].push_back(std::move(item));
}

/// Imports every results file and log into `db`.
Status import_files(TuningDb& db, const ReportSources& sources) {
  for (const std::string& path : sources.results_files) {
    if (auto n = import_results_file(db, path); !n) return n.status();
  }
  for (const std::string& path : sources.logs) {
    if (auto n = import_autotvm_log(db, path); !n) return n.status();
  }
  return Status::ok();
}

}  // namespace

Status collect_database(const TuningDb& db, const std::string& source, json& data) {
  auto envs = detail::environment_sections(db, source);
  if (!envs) return envs.status();
  auto ops = detail::problem_sections(db, source);
  if (!ops) return ops.status();
  auto searches = detail::search_sections(db, source);
  if (!searches) return searches.status();
  auto comparisons = detail::comparison_sections(db, source);
  if (!comparisons) return comparisons.status();
  append(data, "environments", std::move(*envs));
  append(data, "ops", std::move(*ops));
  append(data, "searches", std::move(*searches));
  append(data, "comparisons", std::move(*comparisons));
  return Status::ok();
}

Expected<json> collect_report(const ReportSources& sources) {
  json data = {{"title", sources.title},       {"generated", utc_now()},
               {"tunekit_version", version()}, {"environments", json::array()},
               {"ops", json::array()},         {"searches", json::array()},
               {"comparisons", json::array()}};
  for (const std::string& path : sources.databases) {
    auto db = TuningDb::open(path, TuningDb::Access::kReadOnly);
    if (!db) return db.status();
    TUNEKIT_RETURN_IF_ERROR(collect_database(**db, path, data));
  }
  if (sources.results_files.empty() && sources.logs.empty()) return data;
  ScratchDb scratch;
  auto db = TuningDb::open(scratch.path(), TuningDb::Access::kReadWrite);
  if (!db) return db.status();
  TUNEKIT_RETURN_IF_ERROR(import_files(**db, sources));
  TUNEKIT_RETURN_IF_ERROR(collect_database(**db, "files", data));
  return data;
}

Status write_report(const json& data, const std::string& path) {
  auto page = render_report_html(data);
  if (!page) return page.status();
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << *page;
    if (!out.flush()) {
      std::remove(tmp.c_str());
      return Status(StatusCode::kIoError, fmt::format("cannot write the report '{}'", path));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return Status(StatusCode::kIoError,
                  fmt::format("cannot write the report '{}': {}", path, ec.message()));
  }
  return Status::ok();
}

}  // namespace tunekit::report
