// Registration functions of the tunekit sub-commands, one per tools/cli/cmd_*.cpp file.
// main.cpp wires them into one CLI11 application.
#pragma once

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdint>
#include <limits>
#include <string>
#include <system_error>
#include <utility>

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

/// CLI11 check: a whole decimal number >= `min` ("--threads: 'abc' is not a whole number >= 0").
inline CLI::Validator whole_number_at_least(long long min, std::string name) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        std::size_t used = 0;
        long long value = min - 1;
        try {
          value = std::stoll(text, &used);
        } catch (...) {
          used = 0;
        }
        if (used != text.size() || text.empty() || value < min) {
          return "'" + text + "' is not a whole number >= " + std::to_string(min);
        }
        return {};
      },
      "INT>=" + std::to_string(min), std::move(name));
}

/// CLI11 check: a whole decimal number >= 0.
inline CLI::Validator non_negative_integer() {
  return whole_number_at_least(0, "non_negative_integer");
}

/// CLI11 check of a seed: a whole decimal number that fits 64 bits unsigned (CLI11 itself
/// would wrap -1 and 2^64 around).
inline CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::uint64_t value = 0;
        const char* end = text.data() + text.size();
        const auto [stop, ec] = std::from_chars(text.data(), end, value);
        if (text.empty() || ec != std::errc() || stop != end) {
          return "'" + text + "' is not a whole number in [0, " +
                 std::to_string(std::numeric_limits<std::uint64_t>::max()) + "]";
        }
        return {};
      },
      "UINT64", "seed_number");
}

/// CLI11 check: a whole decimal number >= 1.
/// CLI11 check: a finite decimal number > 0 ("--timeout: '0' is not a number > 0"); unlike
/// CLI::PositiveNumber it names no huge bound and refuses NaN and infinities.
inline CLI::Validator positive_finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        double value = 0;
        const bool parsed = CLI::detail::lexical_cast(text, value);
        if (!parsed || !(value > 0) || value > std::numeric_limits<double>::max()) {
          return "'" + text + "' is not a number > 0";
        }
        return {};
      },
      "NUMBER>0", "positive_finite_number");
}

inline CLI::Validator positive_integer() { return whole_number_at_least(1, "positive_integer"); }

}  // namespace tunekit::cli

void register_tune_commands(CLI::App& app);
void register_results_commands(CLI::App& app);
void register_compare_command(CLI::App& app);
void register_simulate_command(CLI::App& app);
void register_log_command(CLI::App& app);
void register_space_command(CLI::App& app);
void register_tune_kernel_command(CLI::App& app);
void register_db_command(CLI::App& app);
void register_report_command(CLI::App& app);
