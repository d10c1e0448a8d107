// The SQLite tuning database: opening (WAL, schema), environments, results, trials, merge and
// prune (comparisons: db_comparisons.cpp). See include/tunekit/records/tuning_db.hpp.
#include "tunekit/records/tuning_db.hpp"

#include <fmt/format.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "records/db_transaction.hpp"
#include "records/sqlite_statement.hpp"
#include "tunekit/core/file_io.hpp"

namespace tunekit {
namespace {

using detail::Statement;

constexpr int kSchemaVersion = 1;
constexpr int kApplicationId = 0x544b4442;  // "TKDB"
constexpr int kBusyTimeoutMs = 60'000;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS environments(
  id INTEGER PRIMARY KEY,
  validators TEXT NOT NULL UNIQUE,
  tunekit_version TEXT NOT NULL DEFAULT '',
  cpu_model TEXT NOT NULL DEFAULT '',
  cpu_flags TEXT NOT NULL DEFAULT '',
  libraries TEXT NOT NULL DEFAULT '{}');
CREATE TABLE IF NOT EXISTS results(
  id INTEGER PRIMARY KEY,
  environment INTEGER NOT NULL REFERENCES environments(id),
  op TEXT NOT NULL, params TEXT NOT NULL, solution TEXT NOT NULL,
  time_ms REAL NOT NULL, time_text TEXT NOT NULL, extra TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,
  UNIQUE(environment, op, params, solution, time_text, extra));
CREATE INDEX IF NOT EXISTS results_by_problem ON results(op, params);
CREATE TABLE IF NOT EXISTS candidates(
  result INTEGER NOT NULL REFERENCES results(id) ON DELETE CASCADE,
  position INTEGER NOT NULL, name TEXT NOT NULL, outcome TEXT NOT NULL, time_ms REAL,
  PRIMARY KEY(result, position));
CREATE TABLE IF NOT EXISTS trials(
  id INTEGER PRIMARY KEY,
  environment INTEGER REFERENCES environments(id),
  format TEXT NOT NULL, target TEXT NOT NULL, task TEXT NOT NULL, workload TEXT NOT NULL,
  config_index INTEGER NOT NULL, config TEXT NOT NULL, cost_s REAL, error_no INTEGER NOT NULL,
  space_hash TEXT NOT NULL DEFAULT '', line TEXT NOT NULL,
  host TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', created TEXT NOT NULL,
  UNIQUE(format, target, task, line));
CREATE INDEX IF NOT EXISTS trials_by_workload ON trials(format, target, workload);
)sql";

std::string value_of(const DbEnvironment& env, std::string_view key) {
  for (const auto& [k, v] : env) {
    if (k == key) return v;
  }
  return {};
}

std::string environment_json(const DbEnvironment& env) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& [k, v] : env) j.push_back({k, v});
  return j.dump();
}

// The library versions of an environment: every "<LIB>_VERSION" key but tunekit's own.
std::string libraries_json(const DbEnvironment& env) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : env) {
    if (k.size() > 8 && k.ends_with("_VERSION") && k != "TUNEKIT_VERSION") j[k] = v;
  }
  return j.dump();
}

DbEnvironment parse_environment(const std::string& text) {
  DbEnvironment env;
  const auto j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_array()) return env;
  for (const auto& kv : j) {
    if (kv.is_array() && kv.size() == 2 && kv[0].is_string() && kv[1].is_string()) {
      env.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
    }
  }
  return env;
}

// A file: URI for sqlite3_open_v2 (reserved characters percent-encoded).
std::string file_uri(const std::string& path, std::string_view query) {
  std::string uri = "file:";
  for (const unsigned char c : path) {
    if (c == '?' || c == '#' || c == '%' || c < 0x20 || c >= 0x7f) {
      uri += fmt::format("%{:02X}", static_cast<unsigned>(c));
    } else {
      uri.push_back(static_cast<char>(c));
    }
  }
  return uri + "?" + std::string(query);
}

// Refuses an existing path that is not a regular file before SQLite opens it.
Status check_regular(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::ok();
  if (S_ISREG(st.st_mode)) return Status::ok();
  return Status(StatusCode::kIoError, fmt::format("tuning database '{}' is not a regular file ({})",
                                                  path, files::kind_of(st.st_mode)));
}

}  // namespace

bool same_environment(const DbEnvironment& a, const DbEnvironment& b) {
  return a.size() == b.size() && std::is_permutation(a.begin(), a.end(), b.begin());
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

TuningDb::TuningDb(std::string path, sqlite3* db, bool read_only)
    : path_(std::move(path)), db_(db), read_only_(read_only) {}

TuningDb::~TuningDb() { sqlite3_close_v2(db_); }

Status TuningDb::error(const std::string& what) const {
  const int code = sqlite3_extended_errcode(db_);
  std::string reason = sqlite3_errmsg(db_);
  if ((code & 0xff) == SQLITE_NOTADB) reason = "not a tunekit database";
  return Status(StatusCode::kIoError,
                fmt::format("tuning database '{}': {}: {}", path_, what, reason));
}

Status TuningDb::exec(const char* sql) const {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  sqlite3_free(message);
  return rc == SQLITE_OK ? Status::ok() : error(std::string("cannot run '") + sql + "'");
}

Expected<std::unique_ptr<TuningDb>> TuningDb::open(const std::string& path, Access access) {
  TUNEKIT_RETURN_IF_ERROR(check_regular(path));
  const bool read_only = access == Access::kReadOnly;
  std::error_code ec;
  if (read_only && !std::filesystem::exists(path, ec)) {
    return Status(StatusCode::kNotFound, fmt::format("tuning database '{}' does not exist", path));
  }
  if (!read_only) {
    const auto dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  }
  const int flags = SQLITE_OPEN_URI | SQLITE_OPEN_FULLMUTEX |
                    (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  sqlite3* handle = nullptr;
  const int rc = sqlite3_open_v2(file_uri(path, read_only ? "mode=ro" : "mode=rwc").c_str(),
                                 &handle, flags, nullptr);
  std::unique_ptr<TuningDb> db(new TuningDb(path, handle, read_only));
  if (rc != SQLITE_OK) return db->error("cannot open");
  Status ready = db->initialise();
  if (!ready.is_ok() && read_only) {
    // A WAL database in a folder this process cannot write (an installed system database) is
    // read as an immutable file.
    sqlite3_close_v2(db->db_);
    db->db_ = nullptr;
    if (sqlite3_open_v2(file_uri(path, "mode=ro&immutable=1").c_str(), &db->db_, flags, nullptr) !=
        SQLITE_OK) {
      return db->error("cannot open");
    }
    ready = db->initialise();
  }
  if (!ready.is_ok()) return ready;
  return db;
}

Status TuningDb::initialise() {
  sqlite3_busy_timeout(db_, kBusyTimeoutMs);
  sqlite3_extended_result_codes(db_, 1);
  // Read in one scope: an unfinished statement holds a read transaction, and the journal mode
  // cannot change inside one.
  std::int64_t id = 0, schema = 0;
  bool empty = false;
  {
    Statement app(db_, "PRAGMA application_id");
    if (app.prepared() != SQLITE_OK || app.step() != SQLITE_ROW) return error("cannot read");
    id = app.integer(0);
    Statement version(db_, "PRAGMA user_version");
    if (version.prepared() != SQLITE_OK || version.step() != SQLITE_ROW) {
      return error("cannot read");
    }
    schema = version.integer(0);
    Statement tables(db_, "SELECT count(*) FROM sqlite_master");
    if (tables.prepared() != SQLITE_OK || tables.step() != SQLITE_ROW) return error("cannot read");
    empty = tables.integer(0) == 0;
  }
  if (id != kApplicationId && !(id == 0 && empty)) {
    return Status(StatusCode::kIoError,
                  fmt::format("tuning database '{}': not a tunekit database (another SQLite "
                              "file)",
                              path_));
  }
  if (schema > kSchemaVersion) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("tuning database '{}' has schema version {}; this tunekit reads "
                              "up to {}",
                              path_, schema, kSchemaVersion));
  }
  if (read_only_) return Status::ok();
  TUNEKIT_RETURN_IF_ERROR(exec("PRAGMA journal_mode=WAL"));
  TUNEKIT_RETURN_IF_ERROR(exec("PRAGMA synchronous=FULL"));
  TUNEKIT_RETURN_IF_ERROR(exec("PRAGMA foreign_keys=ON"));
  if (schema == kSchemaVersion) return Status::ok();
  return in_transaction([&]() -> Status {
    TUNEKIT_RETURN_IF_ERROR(exec(kSchema));
    TUNEKIT_RETURN_IF_ERROR(exec(fmt::format("PRAGMA application_id={}", kApplicationId).c_str()));
    return exec(fmt::format("PRAGMA user_version={}", kSchemaVersion).c_str());
  });
}

Expected<std::int64_t> TuningDb::environment_id_locked(const DbEnvironment& environment) {
  const std::string json = environment_json(environment);
  Statement insert(db_,
                   "INSERT OR IGNORE INTO environments(validators, tunekit_version, cpu_model, "
                   "cpu_flags, libraries) VALUES(?1, ?2, ?3, ?4, ?5)");
  std::string version = value_of(environment, "TUNEKIT_VERSION");
  if (version.empty()) version = value_of(environment, "PT_VERSION");
  insert.bind(1, json)
      .bind(2, version)
      .bind(3, value_of(environment, "CPU_MODEL"))
      .bind(4, value_of(environment, "CPU_ISA"))
      .bind(5, libraries_json(environment));
  if (insert.step() != SQLITE_DONE) return error("cannot store an environment");
  Statement select(db_, "SELECT id FROM environments WHERE validators = ?1");
  select.bind(1, json);
  if (select.step() != SQLITE_ROW) return error("cannot read an environment");
  return select.integer(0);
}

Expected<bool> TuningDb::insert_result_locked(std::int64_t environment, const DbResult& r,
                                              const DbProvenance& p,
                                              std::span<const DbCandidateTime> candidates) {
  Statement insert(db_,
                   "INSERT OR IGNORE INTO results(environment, op, params, solution, time_ms, "
                   "time_text, extra, host, source, created) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, "
                   "?8, ?9, ?10)");
  insert.bind(1, environment)
      .bind(2, r.op_signature)
      .bind(3, r.params_signature)
      .bind(4, r.solution)
      .bind(5, r.time_ms)
      .bind(6, r.time_text)
      .bind(7, r.extra)
      .bind(8, p.host)
      .bind(9, p.source)
      .bind(10, p.created.empty() ? utc_now() : p.created);
  if (insert.step() != SQLITE_DONE) return error("cannot store a result");
  if (sqlite3_changes(db_) == 0) return false;
  const std::int64_t id = sqlite3_last_insert_rowid(db_);
  Statement candidate(db_,
                      "INSERT INTO candidates(result, position, name, outcome, time_ms) "
                      "VALUES(?1, ?2, ?3, ?4, ?5)");
  std::int64_t position = 0;
  for (const DbCandidateTime& c : candidates) {
    candidate.reset();
    candidate.bind(1, id).bind(2, position++).bind(3, c.name).bind(4, c.outcome).bind(5, c.time_ms);
    if (candidate.step() != SQLITE_DONE) return error("cannot store a candidate's time");
  }
  return true;
}

Expected<bool> TuningDb::add_result(const DbEnvironment& environment, const DbResult& result,
                                    const DbProvenance& provenance,
                                    std::span<const DbCandidateTime> candidates) {
  std::lock_guard lock(mutex_);
  return in_transaction([&]() -> Expected<bool> {
    auto env = environment_id_locked(environment);
    if (!env) return env.status();
    return insert_result_locked(*env, result, provenance, candidates);
  });
}

Expected<std::size_t> TuningDb::add_results(const DbEnvironment& environment,
                                            std::span<const DbResult> results,
                                            const DbProvenance& provenance) {
  std::lock_guard lock(mutex_);
  return in_transaction([&]() -> Expected<std::size_t> {
    auto env = environment_id_locked(environment);
    if (!env) return env.status();
    std::size_t added = 0;
    for (const DbResult& r : results) {
      auto inserted = insert_result_locked(*env, r, provenance, {});
      if (!inserted) return inserted.status();
      added += *inserted ? 1 : 0;
    }
    return added;
  });
}

Expected<std::size_t> TuningDb::insert_trials_locked(std::span<const DbTrial> trials) {
  Statement insert(db_,
                   "INSERT OR IGNORE INTO trials(environment, format, target, task, workload, "
                   "config_index, config, cost_s, error_no, space_hash, line, host, source, "
                   "created) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
  std::size_t added = 0;
  const std::string now = utc_now();
  for (const DbTrial& t : trials) {
    insert.reset();
    if (t.environment) insert.bind(1, *t.environment);
    insert.bind(2, t.format)
        .bind(3, t.target)
        .bind(4, t.task)
        .bind(5, t.workload)
        .bind(6, t.config_index)
        .bind(7, t.config)
        .bind(8, t.cost_s)
        .bind(9, static_cast<std::int64_t>(t.error_no))
        .bind(10, t.space_hash)
        .bind(11, t.line)
        .bind(12, t.provenance.host)
        .bind(13, t.provenance.source)
        .bind(14, t.provenance.created.empty() ? now : t.provenance.created);
    if (insert.step() != SQLITE_DONE) return error("cannot store a trial");
    added += static_cast<std::size_t>(sqlite3_changes(db_));
  }
  return added;
}

Expected<std::size_t> TuningDb::add_trials(std::span<const DbTrial> trials) {
  std::lock_guard lock(mutex_);
  return in_transaction([&] { return insert_trials_locked(trials); });
}

Expected<std::int64_t> TuningDb::environment_id(const DbEnvironment& environment) {
  std::lock_guard lock(mutex_);
  return in_transaction([&] { return environment_id_locked(environment); });
}

Expected<std::vector<DbStoredEnvironment>> TuningDb::environments() const {
  std::lock_guard lock(mutex_);
  Statement select(db_, "SELECT id, validators FROM environments ORDER BY id");
  std::vector<DbStoredEnvironment> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    out.push_back(DbStoredEnvironment{select.integer(0), parse_environment(select.text(1))});
  }
  if (rc != SQLITE_DONE) return error("cannot read environments");
  return out;
}

namespace {

// The WHERE clause of a result query over `results r JOIN environments e`, and its binds.
struct Filter {
  std::string where = "1";
  std::vector<std::string> texts;
  std::optional<std::int64_t> environment;
};

Filter filter_of(const DbResultQuery& q) {
  Filter f;
  auto add = [&](const char* clause, const std::string& value) {
    f.where += clause;
    f.texts.push_back(value);
  };
  if (!q.op_signature.empty()) add(" AND r.op = ?", q.op_signature);
  if (!q.params_signature.empty()) add(" AND r.params = ?", q.params_signature);
  if (!q.machine.empty()) {
    add(" AND (instr(r.host, ?) > 0", q.machine);
    add(" OR instr(e.cpu_model, ?) > 0)", q.machine);
  }
  if (q.environment) {
    f.where += " AND r.environment = ?";
    f.environment = q.environment;
  }
  return f;
}

}  // namespace

Expected<std::vector<DbStoredResult>> TuningDb::select_results(const DbResultQuery& query,
                                                               bool best_only) const {
  const Filter f = filter_of(query);
  std::string sql =
      "SELECT r.id, r.environment, r.op, r.params, r.solution, r.time_ms, r.time_text, r.extra, "
      "r.host, r.source, r.created FROM results r JOIN environments e ON e.id = r.environment "
      "WHERE " +
      f.where;
  if (best_only) {
    sql +=
        " AND r.id = (SELECT b.id FROM results b WHERE b.environment = r.environment AND b.op = "
        "r.op AND b.params = r.params ORDER BY (b.time_ms > 0 AND b.time_ms < 1e308) DESC, "
        "b.time_ms, b.id LIMIT 1)";
  }
  sql += " ORDER BY r.id";
  std::lock_guard lock(mutex_);
  Statement select(db_, sql);
  if (select.prepared() != SQLITE_OK) return error("cannot query results");
  int i = 1;
  for (const std::string& t : f.texts) select.bind(i++, t);
  if (f.environment) select.bind(i++, *f.environment);
  std::vector<DbStoredResult> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    DbStoredResult r;
    r.id = select.integer(0);
    r.environment = select.integer(1);
    r.result = DbResult{select.text(2), select.text(3), select.text(4),
                        select.real(5), select.text(6), select.text(7)};
    r.provenance = DbProvenance{select.text(8), select.text(9), select.text(10)};
    out.push_back(std::move(r));
  }
  if (rc != SQLITE_DONE) return error("cannot read results");
  return out;
}

Expected<std::vector<DbStoredResult>> TuningDb::results(const DbResultQuery& query) const {
  return select_results(query, false);
}

Expected<std::vector<DbStoredResult>> TuningDb::best_results(const DbResultQuery& query) const {
  return select_results(query, true);
}

Expected<std::vector<DbCandidateTime>> TuningDb::candidates(std::int64_t result_id) const {
  std::lock_guard lock(mutex_);
  Statement select(db_,
                   "SELECT name, outcome, time_ms FROM candidates WHERE result = ?1 ORDER BY "
                   "position");
  select.bind(1, result_id);
  std::vector<DbCandidateTime> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    out.push_back(DbCandidateTime{select.text(0), select.text(1), select.real(2)});
  }
  if (rc != SQLITE_DONE) return error("cannot read candidates");
  return out;
}

Expected<std::vector<DbTrial>> TuningDb::trials(const std::string& format) const {
  std::lock_guard lock(mutex_);
  Statement select(db_,
                   "SELECT environment, format, target, task, workload, config_index, config, "
                   "cost_s, error_no, space_hash, line, host, source, created FROM trials WHERE "
                   "?1 = '' OR format = ?1 ORDER BY id");
  select.bind(1, format);
  std::vector<DbTrial> out;
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    DbTrial t;
    if (!select.is_null(0)) t.environment = select.integer(0);
    t.format = select.text(1);
    t.target = select.text(2);
    t.task = select.text(3);
    t.workload = select.text(4);
    t.config_index = select.integer(5);
    t.config = select.text(6);
    t.cost_s = select.real(7);
    t.error_no = static_cast<int>(select.integer(8));
    t.space_hash = select.text(9);
    t.line = select.text(10);
    t.provenance = DbProvenance{select.text(11), select.text(12), select.text(13)};
    out.push_back(std::move(t));
  }
  if (rc != SQLITE_DONE) return error("cannot read trials");
  return out;
}

Expected<DbPruneCount> TuningDb::merge_from(const TuningDb& other) {
  auto envs = other.environments();
  if (!envs) return envs.status();
  auto rows = other.results();
  if (!rows) return rows.status();
  std::vector<std::vector<DbCandidateTime>> times;
  for (const DbStoredResult& r : *rows) {
    auto c = other.candidates(r.id);
    if (!c) return c.status();
    times.push_back(std::move(*c));
  }
  auto trials = other.trials();
  if (!trials) return trials.status();
  auto comparisons = other.comparisons();
  if (!comparisons) return comparisons.status();
  std::lock_guard lock(mutex_);
  return in_transaction([&]() -> Expected<DbPruneCount> {
    std::map<std::int64_t, std::int64_t> ids;  // other's environment id -> ours
    for (const DbStoredEnvironment& e : *envs) {
      auto id = environment_id_locked(e.validators);
      if (!id) return id.status();
      ids[e.id] = *id;
    }
    DbPruneCount added;
    for (std::size_t i = 0; i < rows->size(); ++i) {
      const DbStoredResult& r = (*rows)[i];
      auto inserted = insert_result_locked(ids[r.environment], r.result, r.provenance, times[i]);
      if (!inserted) return inserted.status();
      added.results += *inserted ? 1 : 0;
    }
    for (DbTrial& t : *trials) {
      if (t.environment) t.environment = ids[*t.environment];
    }
    auto new_trials = insert_trials_locked(*trials);
    if (!new_trials) return new_trials.status();
    added.trials = *new_trials;
    for (DbComparison& c : *comparisons) c.environment = ids[c.environment.value_or(0)];
    auto new_comparisons = insert_comparisons_locked(*comparisons, /*skip_identical=*/true);
    if (!new_comparisons) return new_comparisons.status();
    added.comparisons = *new_comparisons;
    return added;
  });
}

Expected<DbPruneCount> TuningDb::prune() {
  std::lock_guard lock(mutex_);
  return in_transaction([&]() -> Expected<DbPruneCount> {
    DbPruneCount removed;
    TUNEKIT_RETURN_IF_ERROR(
        exec("DELETE FROM results WHERE id NOT IN (SELECT (SELECT b.id FROM results b WHERE "
             "b.environment = r.environment AND b.op = r.op AND b.params = r.params ORDER BY "
             "(b.time_ms > 0 AND b.time_ms < 1e308) DESC, b.time_ms, b.id LIMIT 1) FROM results r "
             "GROUP BY r.environment, r.op, r.params)"));
    removed.results = static_cast<std::size_t>(sqlite3_changes(db_));
    // A group without a successful trial keeps nothing (NULL best ids are filtered out, so that
    // NOT IN sees only ids).
    TUNEKIT_RETURN_IF_ERROR(exec(
        "DELETE FROM trials WHERE id NOT IN (SELECT best FROM (SELECT (SELECT b.id FROM trials b "
        "WHERE b.format = t.format AND b.target = t.target AND b.workload = t.workload AND "
        "b.space_hash = t.space_hash AND b.error_no = 0 AND b.cost_s IS NOT NULL ORDER BY "
        "b.cost_s, b.id LIMIT 1) AS best FROM trials t GROUP BY t.format, t.target, t.workload, "
        "t.space_hash) WHERE best IS NOT NULL)"));
    removed.trials = static_cast<std::size_t>(sqlite3_changes(db_));
    auto comparisons = prune_comparisons_locked();
    if (!comparisons) return comparisons.status();
    removed.comparisons = *comparisons;
    return removed;
  });
}

Status TuningDb::check_integrity() const {
  std::lock_guard lock(mutex_);
  Statement check(db_, "PRAGMA integrity_check");
  std::string report;
  int rc = SQLITE_ROW;
  while ((rc = check.step()) == SQLITE_ROW) {
    if (!report.empty()) report += "; ";
    report += check.text(0);
  }
  if (rc != SQLITE_DONE) return error("cannot check integrity");
  if (report == "ok") return Status::ok();
  return Status(StatusCode::kIoError,
                fmt::format("tuning database '{}' is damaged: {}", path_, report));
}

}  // namespace tunekit
