// Record stores (AutoTVM JSON-lines log files), the log_to_file tuning callback, best-record
// queries and the pick-best / merge utilities behind `tunekit log`.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/records/record.hpp"
#include "tunekit/search/tuner.hpp"

namespace tunekit {

/// Where records live. Implementations: JsonLinesStore (AutoTVM log files).
class RecordStore {
 public:
  /// Closes the store.
  virtual ~RecordStore() = default;
  /// Appends one record durably (flushed before returning). Errors: kIoError.
  virtual Status append(const Record& record) = 0;
  /// Appends several records in one write.
  virtual Status append(std::span<const Record> records);
  /// Every record in the store, in order.
  virtual Expected<std::vector<Record>> load() const = 0;
};

/// AutoTVM JSON-lines log file. Each append opens the file in append mode, writes complete
/// lines with one write(2) call under an exclusive flock, and closes it, so several processes
/// may tune into one file without interleaving or losing lines (upstream reopens per batch too).
class JsonLinesStore : public RecordStore {
 public:
  /// A store on the log file `path` (created on the first append).
  explicit JsonLinesStore(std::string path) : path_(std::move(path)) {}
  using RecordStore::append;
  /// Appends one line (see the class comment). Errors: kIoError naming the file.
  Status append(const Record& record) override;
  /// Appends all lines with one write. Errors: kIoError naming the file.
  Status append(std::span<const Record> records) override;
  /// load_records(path()).
  Expected<std::vector<Record>> load() const override;
  /// The log file.
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// AutoTVM log_to_file: a tuning callback appending one record per measured configuration to
/// `path` after each batch. A write failure is warned about once per callback and tuning goes on.
TuneCallback log_to_file(const std::string& path);

/// The successful record with the smallest mean cost for each (target, workload), in first-seen
/// order of the pairs; ties keep the earlier record. Failed records are never chosen.
std::vector<Record> best_records(std::span<const Record> records);

/// The `k` successful records of `workload_key` (Record::workload_key) with the smallest mean
/// cost, best first.
std::vector<Record> top_k(std::span<const Record> records, const std::string& workload_key, std::size_t k);

/// AutoTVM pick_best: the best record per (model, workload) and per (target key, workload) as
/// ApplyHistoryBest would dispatch them, in input order, each configuration (Record::measure_key)
/// once.
std::vector<Record> pick_best(std::span<const Record> records);

/// Resumes `tuner` from the records of its task (same task name and args) in the log at
/// `path`: refuses them when any was written for another definition of the config space
/// (check_resumable), else feeds them to Tuner::load_history, so they are neither measured nor
/// proposed again. Returns the number of trials loaded.
/// Errors: kIoError / kParseError from load_records; kInvalidArgument from check_resumable.
Expected<std::size_t> resume_from_log(Tuner& tuner, const std::string& path);

/// Writes `records` to `path` (replacing it) through a temporary file and a rename, so a reader
/// never sees a truncated file. Errors: kIoError.
Status write_records(const std::string& path, std::span<const Record> records);

}  // namespace tunekit
