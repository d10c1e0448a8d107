// Confirmation: a winner's first calls in a process alternate with Default on the caller's own
// operands, timed, and decide whether the winner keeps the problem.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tunekit {

/// The outcome of one problem's confirmation.
struct ConfirmationVerdict {
  std::string op_signature;      ///< e.g. "GemmTunableOp_BFloat16_TN"
  std::string params_signature;  ///< e.g. "tn_4096_1_4096_ld_4096_4096_4096"
  std::string solution;          ///< the winner that was confirmed (or not)
  std::size_t calls = 0;         ///< counted calls per side (the warm-up pair aside)
  double winner_ms = 0;          ///< median time of the winner's calls, ms
  double default_ms = 0;         ///< median time of Default's calls, ms
  bool kept = true;              ///< the winner keeps the problem (else Default serves it)
};

/// Confirmation of stored and tuned winners in place (TUNEKIT_CONFIRM_CALLS). A winner is timed
/// by find_fastest alone on the CPUs with rotating operand copies; inside a program its
/// operands, caches and neighbouring work differ, and a winner by a few per cent there can
/// lose to Default in place. So its first `calls` dispatches in a process run in pairs, one
/// call of the winner and one of Default on the caller's operands, timed, the order within a
/// pair drawn pseudo-randomly (no side keeps one place in a program's cycle of calls). The first
/// pair is a warm-up and not counted (a side's first call in a process may create its kernel
/// or primitive); once both sides have calls / 2 counted timings, Default keeps the problem
/// when its median time is lower than the winner's, otherwise the winner does. Pairing compares
/// calls made under the same conditions (the same neighbours, the same cache state), as
/// find_fastest's paired timings.
///
/// Not thread-safe: TunableOp calls it under its mutex. Problems are named by
/// "<op signature>,<params signature>".
class Confirmation {
 public:
  /// Which side runs a call.
  enum class Turn : std::uint8_t { kWinner, kDefault };

  /// Starts confirming `problem` (no-op while it is being confirmed or decided for the same
  /// `winner` index; another winner starts over). `calls` (even, > 0) are counted after the
  /// warm-up pair, so the confirmation takes calls + 2 calls.
  void begin(const std::string& op, const std::string& signature, std::uint32_t winner,
             std::string solution, std::size_t calls);
  /// The side the next call of `problem` runs (both once in every pair of calls). Precondition:
  /// begin() was called for it.
  Turn next(const std::string& op, const std::string& signature);
  /// Records the time of one call that next() assigned to `turn`; returns the verdict when this
  /// call completed the confirmation (once per problem).
  std::optional<ConfirmationVerdict> record(const std::string& op, const std::string& signature,
                                            Turn turn, double ms);
  /// Ends a confirmation early, keeping the winner (Default failed on the caller's operands).
  ConfirmationVerdict keep(const std::string& op, const std::string& signature);
  /// The candidate index that serves `problem` once decided (the winner or 0), for `winner`;
  /// nullopt while undecided or for another winner.
  std::optional<std::uint32_t> decided(const std::string& op, const std::string& signature,
                                       std::uint32_t winner) const;
  /// Every verdict so far, in the order they were reached.
  const std::vector<ConfirmationVerdict>& verdicts() const noexcept { return verdicts_; }

 private:
  struct State {
    std::uint32_t winner = 0;
    std::string solution;
    std::size_t calls = 0;
    std::vector<double> winner_ms, default_ms;
    std::size_t issued = 0;    // calls handed out by next()
    std::size_t recorded = 0;  // calls given to record()
    std::optional<bool> kept;
  };
  ConfirmationVerdict finish(const std::string& op, const std::string& signature, State& state,
                             bool kept);

  std::map<std::string, State> states_;
  std::vector<ConfirmationVerdict> verdicts_;
};

}  // namespace tunekit
