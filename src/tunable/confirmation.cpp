#include "tunekit/tunable/confirmation.hpp"

#include <algorithm>
#include <utility>

namespace tunekit {
namespace {

std::string problem_name(const std::string& op, const std::string& signature) {
  return op + "," + signature;
}

// SplitMix64's output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014).
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) / 2;
}

}  // namespace

void Confirmation::begin(const std::string& op, const std::string& signature, std::uint32_t winner,
                         std::string solution, std::size_t calls) {
  State& s = states_[problem_name(op, signature)];
  if (s.calls != 0 && s.winner == winner) return;
  s = State{};
  s.winner = winner;
  s.solution = std::move(solution);
  s.calls = calls;
}

Confirmation::Turn Confirmation::next(const std::string& op, const std::string& signature) {
  State& s = states_[problem_name(op, signature)];
  const std::size_t i = s.issued++;
  // Each pair of calls runs both sides; which goes first is a pseudo-random bit per pair, so
  // that no side always gets the same place in a program's cycle of calls (a layer's q, k, v
  // and o projections share one problem).
  const bool winner_first = (splitmix64(i / 2) & 1U) == 0;
  return (i % 2 == 0) == winner_first ? Turn::kWinner : Turn::kDefault;
}

std::optional<ConfirmationVerdict> Confirmation::record(const std::string& op,
                                                        const std::string& signature, Turn turn,
                                                        double ms) {
  State& s = states_[problem_name(op, signature)];
  if (s.kept || s.calls == 0) return std::nullopt;
  if (++s.recorded <= 2) return std::nullopt;  // the warm-up pair
  (turn == Turn::kWinner ? s.winner_ms : s.default_ms).push_back(ms);
  const std::size_t half = s.calls / 2;
  if (s.winner_ms.size() < half || s.default_ms.size() < half) return std::nullopt;
  return finish(op, signature, s, median(s.default_ms) >= median(s.winner_ms));
}

ConfirmationVerdict Confirmation::keep(const std::string& op, const std::string& signature) {
  return finish(op, signature, states_[problem_name(op, signature)], true);
}

std::optional<std::uint32_t> Confirmation::decided(const std::string& op,
                                                   const std::string& signature,
                                                   std::uint32_t winner) const {
  auto it = states_.find(problem_name(op, signature));
  if (it == states_.end() || !it->second.kept || it->second.winner != winner) return std::nullopt;
  return *it->second.kept ? winner : 0U;
}

ConfirmationVerdict Confirmation::finish(const std::string& op, const std::string& signature,
                                         State& state, bool kept) {
  state.kept = kept;
  ConfirmationVerdict v{op,
                        signature,
                        state.solution,
                        std::min(state.winner_ms.size(), state.default_ms.size()),
                        median(state.winner_ms),
                        median(state.default_ms),
                        kept};
  verdicts_.push_back(v);
  return v;
}

}  // namespace tunekit
