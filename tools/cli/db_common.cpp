// Opening databases, format detection, environments and output of `tunekit db`.
// See tools/cli/db_common.hpp.
#include "db_common.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::cli {

std::unique_ptr<TuningDb> open_database(const std::string& path, bool system,
                                        TuningDb::Access access) {
  std::string chosen = path;
  if (chosen.empty()) {
    const DbPaths paths = tuning_context().database_paths();
    chosen = system ? paths.system : paths.user;
    if (system) access = TuningDb::Access::kReadOnly;
  }
  if (chosen.empty()) {
    throw CommandFailure{kExitFailure, system ? "no system database (TUNEKIT_SYSTEM_DB=off)"
                                              : "no user database (TUNEKIT_DB=off); name one "
                                                "with --db"};
  }
  auto db = TuningDb::open(chosen, access);
  if (!db) throw CommandFailure{kExitFailure, db.status().message()};
  return std::move(*db);
}

std::string detect_format(const std::string& path) {
  auto fd = files::open_regular(path, O_RDONLY, "input file");
  if (!fd) throw CommandFailure{kExitFailure, fd.status().message()};
  auto text = files::read_all(fd->get(), path, "input file");
  if (!text) throw CommandFailure{kExitFailure, text.status().message()};
  if (text->size() >= 2 && static_cast<unsigned char>((*text)[0]) == 0x1f &&
      static_cast<unsigned char>((*text)[1]) == 0x8b) {
    return "kernel_tuner";
  }
  const std::string_view body = strip_byte_order_mark(*text);
  const std::size_t start = body.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || body[start] != '{') return "tunableop";
  const std::size_t end = body.find('\n', start);
  const auto first = nlohmann::json::parse(body.substr(start, end - start), nullptr, false);
  return first.is_object() && first.contains("input") ? "autotvm" : "kernel_tuner";
}

std::int64_t choose_environment(const TuningDb& db, long long wanted) {
  if (wanted >= 0) return wanted;
  auto environments = db.environments();
  if (!environments) throw CommandFailure{kExitFailure, environments.status().message()};
  std::vector<std::int64_t> with_results;
  std::string listing;
  for (const DbStoredEnvironment& e : *environments) {
    DbResultQuery query;
    query.environment = e.id;
    auto rows = db.results(query);
    if (!rows || rows->empty()) continue;
    with_results.push_back(e.id);
    std::string first;
    for (const auto& [key, value] : e.validators) {
      if (first.size() < 60) first += (first.empty() ? "" : ", ") + key + "=" + value;
    }
    listing += fmt::format("{}{}: {} result(s), {}", listing.empty() ? "" : "; ", e.id,
                           rows->size(), first);
  }
  if (with_results.size() == 1) return with_results.front();
  if (with_results.empty()) {
    throw CommandFailure{kExitFailure, "tuning database '" + db.path() + "' holds no results"};
  }
  throw CommandFailure{kExitFailure, "tuning database '" + db.path() + "' holds results of " +
                                         std::to_string(with_results.size()) +
                                         " environments; choose one with --environment (" +
                                         listing + ")"};
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return;
  }
  if (Status s = write_file_locked(path, text); !s.is_ok()) {
    throw CommandFailure{kExitFailure, s.message()};
  }
}

}  // namespace tunekit::cli
