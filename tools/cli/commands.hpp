// Registration functions of the tunekit sub-commands, one per tools/cli/cmd_*.cpp file.
// main.cpp wires them into one CLI11 application.
#pragma once

#include <CLI/CLI.hpp>

namespace tunekit::cli {

/// Exit status of a failed command: the reason was already printed as one line on stderr.
inline constexpr int kExitFailure = 1;
/// Exit status for malformed command-line usage (CLI11's own errors).
inline constexpr int kExitUsage = 2;

/// Thrown by a sub-command's callback to end the program with `code` after printing `message`.
struct CommandFailure {
  int code = kExitFailure;
  std::string message;
};

}  // namespace tunekit::cli

void register_tune_commands(CLI::App& app);
void register_results_commands(CLI::App& app);
void register_compare_command(CLI::App& app);
void register_simulate_command(CLI::App& app);
void register_log_command(CLI::App& app);
