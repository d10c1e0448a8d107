// Results files in and out of the tuning database. See include/tunekit/tunable/results_db.hpp.
#include "tunekit/tunable/results_db.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <map>
#include <utility>

#include "tunekit/core/file_io.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit {
namespace {

// The time field of each result line as written (first line of each problem), by (op, params).
std::map<std::pair<std::string, std::string>, std::string> time_texts(std::string_view text) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  text = strip_byte_order_mark(text);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto fields = split_fields(line);
    if (fields.size() < 3 || fields[0] == "Validator") continue;
    out.try_emplace({std::string(fields[0]), std::string(fields[1])},
                    fields.size() >= 4 ? std::string(fields[3]) : std::string());
  }
  return out;
}

}  // namespace

Expected<std::size_t> import_results_file(TuningDb& db, const std::string& path) {
  auto content = read_results_file(path);
  if (!content) return content.status();
  if (content->validators.empty() && !content->results.empty()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{}: no validator lines: not a results file (an untuned file lists "
                              "problems to tune, not results)",
                              path));
  }
  auto fd = files::open_regular(path, O_RDONLY, "results file");
  if (!fd) return fd.status();
  auto text = files::read_all(fd->get(), path, "results file");
  if (!text) return text.status();
  const auto times = time_texts(*text);
  std::vector<DbResult> rows;
  rows.reserve(content->results.size());
  for (const ResultLine& r : content->results) {
    auto it = times.find({r.op_signature, r.params_signature});
    rows.push_back(DbResult{r.op_signature, r.params_signature, r.solution, r.time_ms,
                            it != times.end() ? it->second : format_time_ms(r.time_ms), r.extra});
  }
  return db.add_results(content->validators, rows, DbProvenance{"", path, ""});
}

Expected<std::string> export_results_file(const TuningDb& db, std::int64_t environment) {
  auto environments = db.environments();
  if (!environments) return environments.status();
  const DbStoredEnvironment* env = nullptr;
  for (const DbStoredEnvironment& e : *environments) {
    if (e.id == environment) env = &e;
  }
  if (env == nullptr) {
    return Status(StatusCode::kNotFound, fmt::format("tuning database '{}' has no environment {}",
                                                     db.path(), environment));
  }
  DbResultQuery query;
  query.environment = environment;
  auto rows = db.best_results(query);
  if (!rows) return rows.status();
  std::string out = format_header(env->validators);
  for (const DbStoredResult& row : *rows) {
    const DbResult& r = row.result;
    out += r.op_signature + "," + r.params_signature + "," + r.solution;
    if (!r.time_text.empty()) out += "," + r.time_text;
    if (!r.extra.empty()) out += "," + r.extra;
    out.push_back('\n');
  }
  return out;
}

}  // namespace tunekit
