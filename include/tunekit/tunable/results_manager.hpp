// ResultsManager: the process's tuned results keyed by (op signature, params signature), loaded
// from and persisted to TunableOp results CSV files (validated, appended per line, never mixed).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/validators.hpp"

namespace tunekit {

/// A stored solution for one (op, params) pair.
struct ResultEntry {
  std::string solution;  ///< candidate name, byte for byte
  double time_ms = 0.0;  ///< mean per-call time in milliseconds
  std::string extra;     ///< trailing fields (BLAS_PARAMS block), written back verbatim
};

/// String-keyed results store with file I/O. This is the slow, authoritative map; TunableOp keeps
/// its own lock-free cache of resolved entries (ResultTable) in front of it.
/// Thread-safe (a shared mutex for the map, a separate mutex serialising file writes).
/// Source: PyTorch TunableOp TuningResultsManager (disjoint merge, first result wins; V25+ append
/// per result; tunekit never appends under a header that failed validation).
class ResultsManager {
 public:
  /// An empty store validating files against `validators` (which must outlive it).
  explicit ResultsManager(const ValidatorRegistry& validators) : validators_(validators) {}
  ResultsManager(const ResultsManager&) = delete;
  ResultsManager& operator=(const ResultsManager&) = delete;

  /// The stored result for (op, params), if any.
  std::optional<ResultEntry> lookup(std::string_view op_signature,
                                    std::string_view params_signature) const;
  /// The most specific wildcard result of `op_signature` matching `params_signature` token by
  /// token (wildcard_match: '*' tokens and tunekit's '[lo-hi]' range tokens): fewest '*' tokens
  /// first, then fewest range tokens, then the earliest in insertion (file) order. The returned
  /// line carries the pattern. Source: PyTorch TunableOp V26 wildcard fallback (which takes an
  /// arbitrary first match); the ranking is tunekit's.
  std::optional<ResultLine> lookup_wildcard(std::string_view op_signature,
                                            std::string_view params_signature) const;

  /// Adds a result in memory; an existing (op, params) wins. Returns true when added.
  bool add(ResultLine line);
  /// Adds a result and, when it is new and `path` is not empty, appends it to `path` (header
  /// first into a missing or empty file). A file whose header fails validation (checked once per
  /// path, under the file lock) is never appended to: a warning is logged once and the result
  /// stays in memory (write_file(<other name>) saves it). Returns whether the result was new.
  /// Either way a result that did not reach its file is counted in unsaved().
  /// Errors: kIoError naming the file when the append fails (the result stays in memory and the
  /// file is as it was). With `not_saved`, it receives why a new result did not reach its file
  /// (the append's error, or the rejection), and stays ok when it did.
  Expected<bool> add_and_persist(ResultLine line, const std::string& path,
                                 Status* not_saved = nullptr);
  /// Counts a result that did not reach another store (the tuning database) in unsaved().
  void note_unsaved(Status reason);

  /// Results add_and_persist() kept in memory only because their file was rejected or the
  /// append failed: how many since construction, and the reason of the latest.
  struct Unsaved {
    std::uint64_t count = 0;  ///< never decreases
    Status last;              ///< why the latest one was not written
  };
  /// The results not written to their file so far (see Unsaved).
  Unsaved unsaved() const;

  /// Loads `path` and merges it (existing entries win; differing ones are logged at verbose 1).
  /// The whole file is rejected on any parse error or validator mismatch; a rejected file is
  /// never appended to or overwritten afterwards. An empty or blank file loads nothing and is ok.
  /// Errors: kNotFound (missing file), kIoError, kParseError (names file:line),
  /// kValidatorMismatch (names file, key, the file's value and this machine's value).
  Status read_file(const std::string& path);
  /// Writes validators (registration order) and all results (sorted by op, then params) to
  /// `path`, replacing its content; the same state always gives the same bytes.
  /// Errors: kIoError; kValidatorMismatch when `path` is a file rejected earlier (its results
  /// belong to another environment and are kept).
  Status write_file(const std::string& path);

  /// All results sorted by (op signature, params signature).
  std::vector<ResultLine> results() const;
  /// Number of stored results.
  std::size_t size() const;
  /// Drops all results and the per-file verdicts; bumps epoch() and generation().
  void clear();
  /// True when `path` was rejected (parse error or validator mismatch) in this process.
  bool is_rejected(const std::string& path) const;

  /// Incremented by clear(): cached resolutions of stored results are valid while it is unchanged.
  std::uint64_t epoch() const noexcept { return epoch_.load(std::memory_order_acquire); }
  /// Incremented by every change of the store (and by touch()): cached "no result" decisions are
  /// valid while it is unchanged.
  std::uint64_t generation() const noexcept { return generation_.load(std::memory_order_acquire); }
  /// Invalidates cached "no result" decisions (called on dispatch-relevant setting changes).
  void touch() noexcept { generation_.fetch_add(1, std::memory_order_acq_rel); }

 private:
  struct OpBucket {
    std::map<std::string, ResultEntry, std::less<>> by_params;
    std::vector<std::string> wildcards;  // wildcard/range params signatures, insertion order
  };
  bool add_locked(ResultLine&& line);
  Status check_append_target(const std::string& path, std::string_view existing);

  const ValidatorRegistry& validators_;
  mutable std::shared_mutex mutex_;
  std::map<std::string, OpBucket, std::less<>> ops_;
  std::size_t size_ = 0;

  mutable std::mutex file_mutex_;
  std::set<std::string> validated_;              // paths whose header matched
  std::map<std::string, std::string> rejected_;  // path -> reason
  std::set<std::string> warned_;                 // rejected paths already warned about
  Unsaved unsaved_;                              // results not written to their file

  std::atomic<std::uint64_t> epoch_{0};
  std::atomic<std::uint64_t> generation_{0};
};

}  // namespace tunekit
