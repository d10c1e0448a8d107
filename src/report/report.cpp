// Collecting the report's data from databases, results files and logs, and writing the page
// (include/tunekit/report/report.hpp).
#include "tunekit/report/report.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

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

Status check_output_is_not_an_input(const ReportSources& sources, const std::string& output) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out(output);
  const fs::path out_canonical = fs::weakly_canonical(out, ec);
  const bool out_exists = fs::exists(out, ec);
  const auto same = [&](const std::string& input) {
    std::error_code e;
    if (out_exists && fs::exists(input, e)) return fs::equivalent(out, input, e) && !e;
    const fs::path in = fs::weakly_canonical(input, e);
    return !e && !out_canonical.empty() && in == out_canonical;
  };
  std::vector<std::string> inputs;
  for (const std::string& db : sources.databases) {
    for (const char* suffix : {"", "-wal", "-shm"}) inputs.push_back(db + suffix);
  }
  inputs.insert(inputs.end(), sources.results_files.begin(), sources.results_files.end());
  inputs.insert(inputs.end(), sources.logs.begin(), sources.logs.end());
  for (const std::string& input : inputs) {
    if (same(input)) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("the report's output '{}' is its input '{}'; writing it would "
                                "destroy that input (name another output)",
                                output, input));
    }
  }
  return Status::ok();
}

namespace {

/// `text` written to `path` with stdio, every step checked: the error names `shown` and the
/// reason (errno's text).
Status write_file(const std::string& path, const std::string& text, const std::string& shown) {
  const auto failed = [&](int error) {
    return Status(StatusCode::kIoError,
                  fmt::format("cannot write the report '{}': {}", shown, std::strerror(error)));
  };
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return failed(errno);
  int error = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fflush(f) != 0) {
    error = errno;
  }
  if (std::fclose(f) != 0 && error == 0) error = errno;
  if (error != 0) return failed(error);
  return Status::ok();
}

}  // namespace

Status write_report(const json& data, const std::string& path) {
  auto page = render_report_html(data);
  if (!page) return page.status();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    // A device or FIFO is written in place (renaming over it would replace it with a file).
    return write_file(path, *page, path);
  }
  const std::string tmp = path + ".tmp";
  if (Status written = write_file(tmp, *page, path); !written.is_ok()) {
    std::remove(tmp.c_str());
    return written;
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return Status(StatusCode::kIoError,
                  fmt::format("cannot write the report '{}': {}", path, ec.message()));
  }
  return Status::ok();
}

}  // namespace tunekit::report
