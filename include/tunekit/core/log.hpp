// Leveled logging (0 off, 1 basic, 2 tuning status, 3 full trace) to stderr, stdout or a file.
// Level and sink follow TUNEKIT_VERBOSE / TUNEKIT_VERBOSE_FILENAME through TuningContext.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit::log {

/// Current level, 0..3. Reading it is a relaxed atomic load (cheap on hot paths).
int level() noexcept;
/// Sets the level (clamped to 0..3).
void set_level(int level) noexcept;
/// Sets the sink: "err" (default), "out", or a file path opened for append.
/// Errors: kIoError when the file cannot be opened (the previous sink stays).
Status set_sink(const std::string& sink);
/// Writes one line "tunekit: <message>" to the sink if `at_level` <= level(). Thread-safe.
void write(int at_level, std::string_view message);
/// Writes a warning (always shown unless level is forced to -1 internally) to stderr-or-sink.
void warn(std::string_view message);

/// Registers the line a terminal shows (a progress line) that log lines must not be glued to:
/// `clear(context)` runs, under the log's lock, before each line written to stderr or stdout
/// (not to a log file); it clears the line. `clear` nullptr: none. `clear` must not log.
void set_line_clearer(void (*clear)(void* context), void* context) noexcept;

template <class... Args>
void info(int at_level, fmt::format_string<Args...> f, Args&&... args) {
  if (at_level <= level()) write(at_level, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace tunekit::log
