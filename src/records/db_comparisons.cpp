// The tuning database's comparisons table (`tunekit compare` and PyTorch benchmark runs):
// storing, reading, merging without duplicates and pruning to each problem's latest run.
// See include/tunekit/records/tuning_db.hpp.
#include <sqlite3.h>

#include <vector>

#include "records/db_transaction.hpp"
#include "records/sqlite_statement.hpp"
#include "tunekit/records/tuning_db.hpp"

namespace tunekit {
namespace {

constexpr const char* kComparisonsTable = R"sql(
CREATE TABLE IF NOT EXISTS comparisons(
  id INTEGER PRIMARY KEY,
  environment INTEGER NOT NULL REFERENCES environments(id),
  run TEXT NOT NULL, tool TEXT NOT NULL, op TEXT NOT NULL, params TEXT NOT NULL,
  contender TEXT NOT NULL, kind TEXT NOT NULL, time_ms REAL,
  host TEXT NOT NULL DEFAULT '', created TEXT NOT NULL);
)sql";

// ?11 = 1 skips a row identical in every column but its id (merging a database twice).
constexpr const char* kInsertComparison =
    "INSERT INTO comparisons(environment, run, tool, op, params, contender, kind, time_ms, host, "
    "created) SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10 WHERE ?11 = 0 OR NOT EXISTS (SELECT "
    "1 FROM comparisons WHERE environment = ?1 AND run = ?2 AND tool = ?3 AND op = ?4 AND "
    "params = ?5 AND contender = ?6 AND kind = ?7 AND time_ms IS ?8 AND host = ?9 AND "
    "created = ?10)";

// Of each (environment, tool, op, params), the rows of runs other than the latest one.
constexpr const char* kPruneComparisons =
    "DELETE FROM comparisons WHERE run <> (SELECT c.run FROM comparisons c WHERE c.environment "
    "= comparisons.environment AND c.tool = comparisons.tool AND c.op = comparisons.op AND "
    "c.params = comparisons.params ORDER BY c.id DESC LIMIT 1)";

}  // namespace

using detail::Statement;

Expected<std::size_t> TuningDb::insert_comparisons_locked(std::span<const DbComparison> rows,
                                                          bool skip_identical) {
  if (rows.empty()) return std::size_t{0};
  TUNEKIT_RETURN_IF_ERROR(exec(kComparisonsTable));
  Statement insert(db_, kInsertComparison);
  const std::string now = utc_now();
  std::size_t added = 0;
  for (const DbComparison& c : rows) {
    insert.reset();
    insert.bind(1, c.environment.value_or(0)).bind(2, c.run).bind(3, c.tool);
    insert.bind(4, c.op_signature).bind(5, c.params_signature).bind(6, c.contender);
    insert.bind(7, c.kind).bind(8, c.time_ms).bind(9, c.provenance.host);
    insert.bind(10, c.provenance.created.empty() ? now : c.provenance.created);
    insert.bind(11, std::int64_t{skip_identical ? 1 : 0});
    if (insert.step() != SQLITE_DONE) return error("cannot store a comparison");
    added += static_cast<std::size_t>(sqlite3_changes(db_));
  }
  return added;
}

Expected<std::size_t> TuningDb::prune_comparisons_locked() {
  {
    Statement table(db_,
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                    "'comparisons'");
    if (table.prepared() != SQLITE_OK) return error("cannot read the schema");
    if (table.step() != SQLITE_ROW) return std::size_t{0};  // no comparison stored yet
  }
  TUNEKIT_RETURN_IF_ERROR(exec(kPruneComparisons));
  return static_cast<std::size_t>(sqlite3_changes(db_));
}

Expected<std::size_t> TuningDb::add_comparisons(const DbEnvironment& environment,
                                                std::span<const DbComparison> rows) {
  std::lock_guard lock(mutex_);
  return in_transaction([&]() -> Expected<std::size_t> {
    auto env = environment_id_locked(environment);
    if (!env) return env.status();
    std::vector<DbComparison> stored(rows.begin(), rows.end());
    for (DbComparison& c : stored) c.environment = *env;
    return insert_comparisons_locked(stored, /*skip_identical=*/false);
  });
}

Expected<std::vector<DbComparison>> TuningDb::comparisons() const {
  std::lock_guard lock(mutex_);
  Statement select(db_,
                   "SELECT environment, run, tool, op, params, contender, kind, time_ms, host, "
                   "created FROM comparisons ORDER BY id");
  std::vector<DbComparison> out;
  if (select.prepared() != SQLITE_OK) return out;  // no comparison stored yet
  int rc = SQLITE_ROW;
  while ((rc = select.step()) == SQLITE_ROW) {
    DbComparison c;
    c.environment = select.integer(0);
    c.run = select.text(1);
    c.tool = select.text(2);
    c.op_signature = select.text(3);
    c.params_signature = select.text(4);
    c.contender = select.text(5);
    c.kind = select.text(6);
    c.time_ms = select.real(7);
    c.provenance = DbProvenance{select.text(8), c.tool, select.text(9)};
    out.push_back(std::move(c));
  }
  if (rc != SQLITE_DONE) return error("cannot read comparisons");
  return out;
}

}  // namespace tunekit
