// TuningDb: the SQLite tuning database (WAL, one transaction per write) holding TunableOp results
// with their candidates' times, search trials, and the environment (provenance) of every row.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"

struct sqlite3;

namespace tunekit {

/// An environment: the validator entries (key, value) of the process that measured a row, in
/// the order it listed them (TUNEKIT_VERSION, CPU_MODEL, CPU_ISA, THREADS, <LIB>_VERSION ...).
/// Two environments are the same for dispatch when they hold the same entries in any order.
using DbEnvironment = std::vector<std::pair<std::string, std::string>>;

/// True when `a` and `b` hold the same entries (order ignored).
bool same_environment(const DbEnvironment& a, const DbEnvironment& b);

/// One TunableOp result as the database stores it.
struct DbResult {
  std::string op_signature;      ///< e.g. "GemmTunableOp_float_NT"
  std::string params_signature;  ///< e.g. "nt_4096_4096_64_ld_4096_4096_4096"
  std::string solution;          ///< candidate name, byte for byte
  double time_ms = 0.0;          ///< the winner's time in milliseconds (0 for 3-field lines)
  /// The time field exactly as written in the file it came from (PyTorch and tunekit write
  /// 6 significant digits); export writes it back, so a round trip changes no byte.
  std::string time_text;
  std::string extra;  ///< fields after the 4th, verbatim (BLAS_PARAMS block)
};

/// Where a row came from and when.
struct DbProvenance {
  std::string host;     ///< host name of the measuring process ("" when unknown)
  std::string source;   ///< "tuned", or the file or database a row was imported or merged from
  std::string created;  ///< UTC date "YYYY-MM-DDTHH:MM:SSZ"; empty: now
};

/// One candidate's outcome in the tuning that produced a result.
struct DbCandidateTime {
  std::string name;     ///< solution name
  std::string outcome;  ///< "measured", "rejected-screen1", "unsupported", ... (report.hpp)
  double time_ms = std::numeric_limits<double>::quiet_NaN();  ///< its score; NaN: not measured
};

/// A stored result with its identity and provenance.
struct DbStoredResult {
  std::int64_t id = 0;
  std::int64_t environment = 0;  ///< DbStoredEnvironment::id
  DbResult result;
  DbProvenance provenance;
};

/// A stored environment.
struct DbStoredEnvironment {
  std::int64_t id = 0;
  DbEnvironment validators;
};

/// One search trial (an AutoTVM record, a Kernel Tuner cache entry).
struct DbTrial {
  /// The trial as its log format writes it, byte for byte, without the line end (an AutoTVM
  /// JSON line; a Kernel Tuner cache entry as JSON). Export writes it back unchanged.
  std::string line;
  std::string format = "autotvm";  ///< "autotvm" or "kernel_tuner"
  std::string target;              ///< e.g. "llvm -mcpu=skylake"
  std::string task;                ///< task or kernel name
  std::string workload;            ///< canonical workload text (Record::workload_key)
  std::int64_t config_index = 0;   ///< index in the config space
  std::string config;              ///< the configuration as JSON text
  double cost_s = std::numeric_limits<double>::quiet_NaN();  ///< mean cost (s); NaN: failed
  int error_no = 0;                                          ///< 0: success
  std::string space_hash;                                    ///< ConfigSpace::hash(); "" unknown
  DbProvenance provenance;
  std::optional<std::int64_t> environment;  ///< the measuring environment, when known
};

/// One contender's time in a stored comparison run (`tunekit compare`, the PyTorch benchmark
/// bench/python/torch_vs_tunekit.py).
struct DbComparison {
  std::string run;               ///< one run's id: every row of a run shares it
  std::string tool;              ///< "compare" or "torch"
  std::string op_signature;      ///< e.g. "GemmTunableOp_float_TN"
  std::string params_signature;  ///< e.g. "tn_4096_16_4096_ld_4096_4096_4096"
  std::string contender;         ///< candidate name, "tuned", or "torch"
  std::string kind;              ///< "tuned", "default", "library", "native" or "torch"
  double time_ms = std::numeric_limits<double>::quiet_NaN();  ///< median per call; NaN: failed
  DbProvenance provenance;
  std::optional<std::int64_t> environment;  ///< the measuring environment (set when read)
};

/// Filters of DbResult queries; empty fields match everything.
struct DbResultQuery {
  std::string op_signature;      ///< exact op signature
  std::string params_signature;  ///< exact params signature (a problem)
  std::string machine;           ///< substring of the host or of CPU_MODEL
  std::optional<std::int64_t> environment;
};

/// What prune() removed (merge_from(): what it added).
struct DbPruneCount {
  std::size_t results = 0;
  std::size_t trials = 0;
  std::size_t comparisons = 0;  ///< comparison rows
};

/// A tuning database file. Writes run in their own transaction (BEGIN IMMEDIATE ... COMMIT) in
/// WAL mode with synchronous=FULL, so a write that returned ok survives kill -9 and power loss,
/// and one that failed (a full disk) left nothing. Several processes may write one database at
/// once (each waits for the others' transactions, up to 60 s). Thread-safe (one connection
/// guarded by a mutex).
///
/// Schema (version 1, PRAGMA user_version): environments(id, validators JSON, tunekit_version,
/// cpu_model, cpu_flags, libraries JSON); results(id, environment, op, params, solution, time_ms,
/// time_text, extra, host, source, created); candidates(result, position, name, outcome,
/// time_ms); trials(id, environment, format, target, task, workload, config_index, config,
/// cost_s, error_no, space_hash, line, host, source, created); comparisons(id, environment,
/// run, tool, op, params, contender, kind, time_ms, host, created), created by the first
/// comparison stored. docs/database.md.
class TuningDb {
 public:
  /// How a database is opened.
  enum class Access : std::uint8_t {
    kReadWrite,  ///< created (with its folder) when missing
    kReadOnly,   ///< never written, never locked (an installed system database)
  };
  /// Opens (and for kReadWrite creates) the database at `path`.
  /// Errors: kNotFound for a missing read-only database; kIoError naming the path when it is
  /// not a regular file, cannot be created, or is not a tunekit database (another SQLite file
  /// or other bytes); kInvalidArgument for a database of a newer schema.
  static Expected<std::unique_ptr<TuningDb>> open(const std::string& path, Access access);
  ~TuningDb();
  TuningDb(const TuningDb&) = delete;
  TuningDb& operator=(const TuningDb&) = delete;

  /// The database file.
  const std::string& path() const noexcept { return path_; }
  /// True when opened kReadOnly.
  bool read_only() const noexcept { return read_only_; }

  /// Stores one result (and the candidates' times of its tuning) under `environment` in one
  /// transaction. Returns false when the identical row (environment, op, params, solution,
  /// time text, extra) is stored already.
  /// Errors: kIoError naming the database (a full disk, a read-only database); nothing stored.
  Expected<bool> add_result(const DbEnvironment& environment, const DbResult& result,
                            const DbProvenance& provenance,
                            std::span<const DbCandidateTime> candidates = {});
  /// The id of `environment`, stored first when new. Errors: as add_result.
  Expected<std::int64_t> environment_id(const DbEnvironment& environment);
  /// Stores many results in one transaction (imports); returns how many were new.
  /// Errors: as add_result; on error nothing is stored.
  Expected<std::size_t> add_results(const DbEnvironment& environment,
                                    std::span<const DbResult> results,
                                    const DbProvenance& provenance);
  /// Stores trials in one transaction; an identical line already stored is skipped. Returns how
  /// many were new. Errors: as add_result.
  Expected<std::size_t> add_trials(std::span<const DbTrial> trials);

  /// Stores the rows of comparison runs under `environment` in one transaction (the table
  /// `comparisons` is created by the first call). Returns how many rows were stored.
  /// Errors: as add_result.
  Expected<std::size_t> add_comparisons(const DbEnvironment& environment,
                                        std::span<const DbComparison> rows);
  /// Every stored comparison row, in insertion order (none in a database without the table).
  Expected<std::vector<DbComparison>> comparisons() const;

  /// Every environment, by id.
  Expected<std::vector<DbStoredEnvironment>> environments() const;
  /// The results matching `query`, in insertion order.
  Expected<std::vector<DbStoredResult>> results(const DbResultQuery& query = {}) const;
  /// The result per (environment, op, params) that dispatch uses: among valid rows (time > 0
  /// and finite) the fastest, else the first; in insertion order of the chosen rows.
  Expected<std::vector<DbStoredResult>> best_results(const DbResultQuery& query = {}) const;
  /// The candidates' times of the tuning that produced result `result_id`, in candidate order.
  Expected<std::vector<DbCandidateTime>> candidates(std::int64_t result_id) const;
  /// Every trial of `format` ("" any), in insertion order.
  Expected<std::vector<DbTrial>> trials(const std::string& format = {}) const;

  /// Copies every environment, result, candidate time, trial and comparison row of `other` into
  /// this database in one transaction (identical rows once: a comparison row equal in every
  /// column, its run id included); returns how many results, trials and comparison rows were
  /// new.
  Expected<DbPruneCount> merge_from(const TuningDb& other);
  /// Keeps per (environment, op, params) only best_results()' row, per (format, target,
  /// workload, space hash) only the successful trial with the smallest cost (every failed one
  /// goes), as AutoTVM pick_best, and per (environment, tool, op, params) only the comparison
  /// rows of the latest run (every contender of it, failed ones included). One transaction.
  /// Returns what was removed.
  Expected<DbPruneCount> prune();
  /// "ok" when SQLite's integrity check passes; else kIoError with its report.
  Status check_integrity() const;

 private:
  TuningDb(std::string path, sqlite3* db, bool read_only);
  Status initialise();
  Status exec(const char* sql) const;
  Expected<std::vector<DbStoredResult>> select_results(const DbResultQuery& query,
                                                       bool best_only) const;
  Expected<std::size_t> insert_trials_locked(std::span<const DbTrial> trials);
  Expected<std::int64_t> environment_id_locked(const DbEnvironment& environment);
  Expected<std::size_t> insert_comparisons_locked(std::span<const DbComparison> rows,
                                                  bool skip_identical);
  Expected<std::size_t> prune_comparisons_locked();
  Expected<bool> insert_result_locked(std::int64_t environment, const DbResult& result,
                                      const DbProvenance& provenance,
                                      std::span<const DbCandidateTime> candidates);
  Status error(const std::string& what) const;
  template <class Fn>
  auto in_transaction(Fn&& fn) -> decltype(fn());

  std::string path_;
  sqlite3* db_ = nullptr;
  bool read_only_ = false;
  mutable std::mutex mutex_;
};

/// The current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now();

}  // namespace tunekit
