// UntunedRecorder: appends `<op_sig>,<params_sig>[,BLAS_PARAMS...]` lines for problems that missed
// with tuning off, deduplicated per process, for a later offline tuning run.
#pragma once

#include <mutex>
#include <set>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Records untuned problems. The file has no validator header; each line is appended with one
/// write() under an exclusive flock, all or nothing (append_line_locked), so several processes
/// may share a file. The file is opened
/// per line, so nothing stays open once recording is disabled. Thread-safe.
/// Source: PyTorch TunableOp untuned file (dedup per process; re-enabling clears the dedup set,
/// PR #186270; the file closes on disable, PR #146574).
class UntunedRecorder {
 public:
  /// Appends the line unless (op, params) was recorded since the last clear(). `extra` (e.g.
  /// "BLAS_PARAMS: - {...}") is appended as a further field when not empty.
  /// Returns true when a line was written, false for a duplicate.
  /// Errors: kIoError naming the file (the problem is then not marked as recorded).
  Expected<bool> record(std::string_view op_signature, std::string_view params_signature,
                        std::string_view extra, const std::string& path);
  /// Forgets which problems were recorded (so they are recorded again).
  void clear();
  /// Problems recorded since the last clear().
  std::size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::set<std::string, std::less<>> recorded_;
};

}  // namespace tunekit
