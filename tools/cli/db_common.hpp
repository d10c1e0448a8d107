// Shared pieces of `tunekit db`: opening the database a command names, recognising an input
// file's format, choosing an environment, writing output, and the `show` tables.
#pragma once

#include <memory>
#include <string>

#include "tunekit/records/tuning_db.hpp"

namespace tunekit::cli {

/// Opens `path`, else the system database (`system`), else the user database of this process
/// (TUNEKIT_DB, else $XDG_DATA_HOME/tunekit/tunekit.db). Throws CommandFailure with one line
/// when there is none (TUNEKIT_DB=off) or it cannot be opened.
std::unique_ptr<TuningDb> open_database(const std::string& path, bool system,
                                        TuningDb::Access access);

/// "tunableop", "autotvm" or "kernel_tuner" from a file's first bytes: gzip or a JSON object
/// spread over lines (Kernel Tuner cache), a JSON object per line with "input" (AutoTVM log),
/// anything else a TunableOp CSV file.
std::string detect_format(const std::string& path);

/// `wanted` when >= 0; else the only environment of `db` that has results. Throws
/// CommandFailure listing the environments when there are several.
std::int64_t choose_environment(const TuningDb& db, long long wanted);

/// Writes `text` to `path` (replacing it crash-safely), or to standard output for "" or "-".
void write_output(const std::string& path, const std::string& text);

/// `db show`: one block per environment (its provenance), one table per op: problem, winner,
/// time, Default's time, speed-up, host, date.
void print_results(const TuningDb& db, const DbResultQuery& query);

/// `db show`: trials per (format, target, task): count, failed, best cost and configuration.
void print_trials(const TuningDb& db);

}  // namespace tunekit::cli
