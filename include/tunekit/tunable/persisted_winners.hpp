// PersistedWinners<Params>: transfer across processes. The template solutions stored in the
// results (files written by earlier processes or other ranks) are handed to their templates as
// winners, so a search seeds from them as it does from this process's own winners.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "tunekit/core/log.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/results_manager.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit {

/// A Params type that rebuilds itself from the two signatures of a results line
/// (`static Expected<Params> from_signature(op_signature, params_signature)`, as GemmParams).
template <class Params>
concept SignatureParsable = requires(std::string_view s) {
  { Params::from_signature(s, s) } -> std::same_as<Expected<Params>>;
};

/// Feeds the stored template winners of a ResultsManager to the templates among a candidate
/// list (TemplateCandidate::remember_solution), each line once. Lines whose signatures do not
/// parse, or whose solution is no template's (`family[...]`), are skipped. For Params types that
/// are not SignatureParsable it does nothing. Not thread-safe: the owner serialises calls
/// (TunableOp calls it under its mutex, before each search).
template <class Params>
class PersistedWinners {
 public:
  /// Hands over the lines added since the last call (nothing when the results did not change).
  void feed(const ResultsManager& results, const CandidateList<Params>& candidates) {
    if constexpr (SignatureParsable<Params>) {
      const std::uint64_t generation = results.generation();
      if (generation_ == generation) return;
      generation_ = generation;
      for (const ResultLine& line : results.results()) {
        if (seen_.insert(id_of(line.op_signature, line.params_signature, line.solution)).second) {
          feed_line(line, candidates);
        }
      }
    }
  }
  /// A result this process found and stored itself: its template remembered it already
  /// (TemplateCandidate::remember), so feed() passes over it.
  void note_own(const std::string& op_signature, const std::string& params_signature,
                const std::string& solution) {
    seen_.insert(id_of(op_signature, params_signature, solution));
  }

 private:
  static std::string id_of(const std::string& op, const std::string& signature,
                           const std::string& solution) {
    return op + ',' + signature + ',' + solution;
  }

  static void feed_line(const ResultLine& line, const CandidateList<Params>& candidates) {
    for (const auto& c : candidates) {
      TemplateCandidate<Params>* family = as_template(*c);
      if (family == nullptr) continue;
      const std::string& name = family->family();
      if (line.solution.size() <= name.size() + 1 ||
          line.solution.compare(0, name.size(), name) != 0 || line.solution[name.size()] != '[') {
        continue;
      }
      auto params = Params::from_signature(line.op_signature, line.params_signature);
      if (!params) return;
      family->remember_solution(*params, line.solution);
      log::info(2, "{} ({},{} in the results) handed to {} for its seeds", line.solution,
                line.op_signature, line.params_signature, name);
      return;
    }
  }

  std::unordered_set<std::string> seen_;
  std::optional<std::uint64_t> generation_;  // of the results at the last feed()
};

}  // namespace tunekit
