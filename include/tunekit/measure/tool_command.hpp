// Running an external tool (a compiler) as a child process: its output captured through a pipe,
// a time limit enforced on its whole process group.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// How a command ended and what it printed.
struct CommandOutcome {
  /// Exit status when it exited by itself, else -1.
  int exit_status = -1;
  /// Signal that ended it (SIGKILL after a timeout), else 0.
  int signal = 0;
  /// It ran past its time limit and was killed.
  bool timed_out = false;
  /// Standard output and standard error, interleaved as written, up to the byte limit.
  std::string output;
  /// Units: seconds of wall time from the start to the end of the process.
  double seconds = 0.0;

  /// Exited by itself with status 0.
  bool succeeded() const noexcept { return !timed_out && signal == 0 && exit_status == 0; }
  /// "exit status 1", "killed by signal 11 (Segmentation fault)" or "timed out".
  std::string ending() const;
};

/// Runs `argv` (argv[0] looked up in PATH) with posix_spawn in a process group of its own, stdin
/// from /dev/null and stdout + stderr into one pipe read with poll (a chatty tool cannot fill
/// the pipe and stall), keeping the first `max_output_bytes` of its output. With timeout_s > 0,
/// the whole group is sent SIGKILL once that time has passed (the tool's own children too).
/// Thread safe: any number of commands may run at once from different threads.
/// Units: timeout_s in seconds.
/// Errors: kInvalidArgument for an empty argv; kIoError "cannot run 'c++': No such file or
/// directory" when the program cannot be started.
Expected<CommandOutcome> run_command(const std::vector<std::string>& argv, double timeout_s,
                                     std::size_t max_output_bytes = std::size_t{4} << 20);

}  // namespace tunekit
