// Progress of a long command (tune-file, compare, simulate) over a known number of units: a line
// rewritten in place on a terminal, or one plain line per finished unit in logs and pipes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tunekit::cli {

/// How a command shows its progress.
enum class ProgressMode : std::uint8_t {
  kTerminal,  ///< stdout and stderr are terminals: one line on stderr, rewritten with '\r'
  kPlain,     ///< otherwise (CI logs, `| tee`, redirects): one line on stdout per finished unit
  kOff,       ///< nothing (workers whose parent reports)
};

/// kTerminal when both stdout and stderr are terminals, else kPlain.
ProgressMode detect_progress_mode();

/// The progress of `total` units of work, timed from construction.
///
/// Terminal: `[#####...................] 5/16  12 s elapsed, ~26 s left  <label>` (rewritten
/// when a unit begins and when it finishes; cleared by done()).
/// Plain: `[5/16] <label>: <outcome> (elapsed 12.3 s)` once per finished unit, on stdout (so
/// `| tee log` keeps them, before the command's table).
/// `out` (null: stderr on a terminal, stdout in plain mode) receives either. On a terminal,
/// a tunekit log line (a warning) clears the progress line first (log::set_line_clearer), so
/// the two are never glued together; the next update draws the line again.
/// Units: the estimate of the time left is elapsed / finished units x units left.
class Progress {
 public:
  explicit Progress(std::size_t total, ProgressMode mode = detect_progress_mode(),
                    std::FILE* out = nullptr);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  ~Progress();

  /// Unit `index` (0-based) named `label` starts.
  void begin(std::size_t index, const std::string& label);
  /// Unit `index` named `label` finished with `outcome` (e.g. the winner and its time).
  void finished(std::size_t index, const std::string& label, const std::string& outcome);
  /// Clears the terminal line (nothing in plain mode); also run by the destructor.
  void done();
  /// The mode in use.
  ProgressMode mode() const noexcept { return mode_; }

 private:
  void draw(std::size_t done_units, const std::string& label);
  /// The log's line clearer: clears the line of the Progress `self` when it is shown.
  static void clear_for_log(void* self);
  double elapsed_s() const;

  std::size_t total_ = 0;
  std::size_t finished_ = 0;
  ProgressMode mode_ = ProgressMode::kOff;
  std::FILE* out_ = nullptr;
  std::int64_t start_ns_ = 0;
  std::atomic<bool> line_open_{false};
};

/// "12.3 s", "4 min 05 s", "1 h 02 min": a duration for people.
std::string format_duration(double seconds);

}  // namespace tunekit::cli
