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
/// Once locked, an append checks that its file is still the one at the path; when a LockedLog
/// replaced it meanwhile, the append reopens the path and goes to the new file, so rewrites
/// under LockedLog lose no concurrent append.
class JsonLinesStore : public RecordStore {
 public:
  /// A store on the log file `path` (created on the first append).
  explicit JsonLinesStore(std::string path) : path_(std::move(path)) {}
  using RecordStore::append;
  /// Appends one line (see the class comment). Errors: kIoError naming the file.
  Status append(const Record& record) override;
  /// Appends all lines with one write. Errors: kIoError naming the file.
  Status append(std::span<const Record> records) override;
  /// load_records(path()), read under a shared flock (after complete appends, never during one).
  /// Errors: kIoError, kParseError as load_records.
  Expected<std::vector<Record>> load() const override;
  /// The log file.
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

/// An exclusive hold on a JSON-lines log file: the flock JsonLinesStore::append takes, on the
/// file at the path when the lock is granted. While it is held, appenders and other LockedLogs
/// on the same path wait, so a read (load) and a replacement (replace) under one LockedLog form
/// one step that no concurrent writer splits: appends made before it are read, appends made
/// after it land in the new file. Released on destruction. flock locks belong to one open file,
/// so a thread holding a LockedLog must not append to the same path meanwhile (it would wait
/// for itself).
class LockedLog {
 public:
  /// Locks the log at `path` (waiting for other holders), creating it empty when absent; a file
  /// created here and never replaced is removed again on release.
  /// Errors: kIoError "cannot open tuning log '<path>': <reason>" (permission denied, a
  /// directory, ...) or "cannot lock tuning log '<path>': not a regular file".
  static Expected<LockedLog> acquire(const std::string& path);
  /// Takes over the lock of `other`.
  LockedLog(LockedLog&& other) noexcept;
  /// Releases the held lock, then takes over the lock of `other`.
  LockedLog& operator=(LockedLog&& other) noexcept;
  LockedLog(const LockedLog&) = delete;
  LockedLog& operator=(const LockedLog&) = delete;
  /// Releases the lock (removing the file if acquire created it and nothing replaced it).
  ~LockedLog();

  /// True when acquire created the file (it did not exist before).
  bool created() const noexcept { return created_; }
  /// The log file.
  const std::string& path() const noexcept { return path_; }
  /// The records of the locked file (parse_records, messages naming path()).
  /// Errors: kIoError (cannot read), kParseError from parse_records.
  Expected<std::vector<Record>> load(const LoadOptions& options = {}) const;
  /// Replaces the file's content with `records`: writes a temporary file next to it
  /// ("<path>.tmp.XXXXXX"), flushes it to disk, locks it and renames it over the path, so a
  /// reader never sees a partial file; the lock moves to the new file and stays held. The
  /// permission bits of the replaced file are kept. Errors: kIoError naming the file.
  Status replace(std::span<const Record> records);

 private:
  LockedLog(std::string path, int fd, bool created)
      : path_(std::move(path)), fd_(fd), created_(created) {}
  void release() noexcept;
  std::string path_;
  int fd_ = -1;
  bool created_ = false;
  bool replaced_ = false;
};

/// Records a log_to_file callback could not write: how many, and why the last write failed.
struct UnsavedRecords {
  std::size_t count = 0;
  Status last;
};

/// AutoTVM log_to_file: a tuning callback appending one record per measured configuration to
/// `path` after each batch. A write failure is warned about once per callback and tuning goes on;
/// with `unsaved`, every record not written is counted there, so that the caller can end its
/// run as failed (unsaved_records_status).
TuneCallback log_to_file(const std::string& path,
                         std::shared_ptr<UnsavedRecords> unsaved = nullptr);

/// Ok when `unsaved` counts nothing; else kIoError, one line naming the log (through the write
/// error) and the count: "cannot write tuning log 'a.json': File too large (the file is as it
/// was): 5 record(s) of this run are not in the log and are lost; fix the cause and run again".
Status unsaved_records_status(const UnsavedRecords& unsaved);

/// The records that may compete for "best" in one workload (Record::workload_key): those written
/// for the config-space definition of the workload's last record in input order, successful or
/// not (its "space_hash"; records without one, as upstream writes them, count as one definition
/// of their own). Costs measured in different definitions are not compared: a config index or
/// entity of one definition may mean another program in the other (autotvm.md §5.2, §12.1).
/// Each workload holding records of other definitions is warned about once, naming the counts:
/// "<workload>: <n> record(s) of another config space definition skipped; the <m> record(s) of
/// space hash <h> (that of its last record) compete". Input order is kept.
std::vector<Record> current_definition_records(std::span<const Record> records);

/// The successful record with the smallest mean cost for each (target, workload), in first-seen
/// order of the pairs; ties keep the earlier record. Failed records are never chosen; only the
/// records of current_definition_records compete.
std::vector<Record> best_records(std::span<const Record> records);

/// The `k` successful records of `workload_key` (Record::workload_key) with the smallest mean
/// cost, best first, among those of current_definition_records.
std::vector<Record> top_k(std::span<const Record> records, const std::string& workload_key,
                          std::size_t k);

/// AutoTVM pick_best: the best record per (model, workload) and per (target key, workload) as
/// ApplyHistoryBest would dispatch them, in input order, each configuration (Record::measure_key)
/// once. Only the records of current_definition_records compete (as in ApplyHistoryBest).
std::vector<Record> pick_best(std::span<const Record> records);

/// Resumes `tuner` from the records of its task (same task name and args) in the log at
/// `path`: refuses them when any was written for another definition of the config space
/// (check_resumable), else feeds them to Tuner::load_history, so they are neither measured nor
/// proposed again. Returns the number of trials loaded.
/// Errors: kIoError / kParseError from load_records; kInvalidArgument from check_resumable.
Expected<std::size_t> resume_from_log(Tuner& tuner, const std::string& path);

/// Writes `records` to `path`, replacing its content, under the log's lock (LockedLog::replace):
/// a reader never sees a truncated file and appends made before the call are discarded with the
/// old content while later ones land in the new file. Errors: kIoError.
Status write_records(const std::string& path, std::span<const Record> records);

}  // namespace tunekit
