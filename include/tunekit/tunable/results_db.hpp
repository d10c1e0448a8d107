// TunableOp results files and the tuning database: a results file (PyTorch's or tunekit's)
// imported with its validators as the environment, and exported back byte for byte.
#pragma once

#include <cstdint>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/records/tuning_db.hpp"

namespace tunekit {

/// Imports the TunableOp results file `path` into `db` in one transaction: its validator lines
/// (in file order) are the environment, and every result is stored in file order with its time
/// field as written (source: the path). Duplicate lines of the file are dropped (first wins, as
/// the reader). Returns how many results were new (an identical row stored already is not).
/// Errors: those of read_results_file (kNotFound, kIoError, kParseError naming file:line);
/// kInvalidArgument for a file without validator lines (an untuned file); kIoError from the
/// database (nothing is imported).
Expected<std::size_t> import_results_file(TuningDb& db, const std::string& path);

/// The results file of `environment` in `db`: its validator lines in stored order, then the
/// result dispatch uses for each problem (TuningDb::best_results) in insertion order, each with
/// its time as it was written. A file imported into an empty database comes back byte for byte
/// when it ends every line, has no duplicate problems, no byte order mark and no CRLF.
/// Errors: kNotFound for an unknown environment id; kIoError from the database.
Expected<std::string> export_results_file(const TuningDb& db, std::int64_t environment);

}  // namespace tunekit
