// TemplateCandidate<Params>: a candidate with a configuration space. find_fastest searches the
// space within a share of the tuning budget and lets the best configuration compete with the
// other candidates; its solution name carries the configuration and rebuilds it on load.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/operand_copies.hpp"

namespace tunekit {

// Declared only: this header is included wherever TunableOp is (tunable_op.hpp, find_fastest.hpp),
// and the search layer's headers stay with the code that searches (template_search.hpp).
class Config;
class ConfigSpace;

/// What a template's configuration search found (TemplateCandidate::search).
template <class Params>
struct TemplateSearchResult {
  Status status = Status::ok();                 ///< why nothing was found (then no instance)
  std::unique_ptr<Candidate<Params>> instance;  ///< the fastest configuration's candidate
  double ms = 0.0;                              ///< its mean time per call in the search, ms
  std::size_t trials = 0;                       ///< configurations measured
  std::size_t seeds = 0;                        ///< of which seeds (transfer, default)
  double wall_ms = 0.0;                         ///< time the search took
};

/// A parameterised implementation: one ConfigSpace per problem, one concrete Candidate per
/// point of it. An interface beside Candidate<Params>: a template is registered as a candidate
/// that also implements this (find_fastest and TunableOp find it with as_template()); as a
/// candidate of its own it runs its default configuration (what a stored solution with the bare
/// family name gets).
///
/// Names: family() is the candidate's name ("native_f32"); an instance's is the family followed
/// by its configuration, `native_f32[mr=16;nr=6;kc=256;...]`, written to results files byte for
/// byte and given back to from_name() on load.
template <class Params>
class TemplateCandidate {
 public:
  virtual ~TemplateCandidate() = default;
  /// The family name (the template's Candidate::name()).
  virtual const std::string& family() const = 0;
  /// The configuration space for `params` (constraints from the problem and the hardware).
  /// Errors: kUnsupported when the template cannot run the problem.
  virtual Expected<std::shared_ptr<const ConfigSpace>> space(const Params& params) = 0;
  /// The concrete candidate for one point `config` of space(params).
  /// Errors: kInvalidArgument when the configuration cannot be instantiated.
  virtual Expected<std::unique_ptr<Candidate<Params>>> instantiate(const Params& params,
                                                                   const Config& config) = 0;
  /// The concrete candidate a solution name stands for.
  /// Errors: kNotFound when `name` is not one of this template's (another candidate's name);
  /// kParseError naming the field for a malformed name of this template; kUnsupported when the
  /// configuration cannot run on this machine (e.g. an AVX-512 micro-kernel on an AVX2 CPU).
  virtual Expected<std::unique_ptr<Candidate<Params>>> from_name(std::string_view name) = 0;
  /// Points of `space` (= space(params)) to measure first, most promising first: when
  /// `transfer`, configurations that won on other problems (nearest problems first), then the
  /// template's own default (may be none).
  virtual std::vector<Config> seeds(const Params& params, const ConfigSpace& space,
                                    bool transfer) = 0;
  /// Records that `config` (a point of space(params)) was the fastest found for `params` with
  /// `ms` per call, for later seeds(). Default: nothing.
  virtual void remember(const Params& /*params*/, const Config& /*config*/, double /*ms*/) {}
  /// Records that `solution`, a name of this family read from the results (a winner of an
  /// earlier process or another rank), won `params`, for later seeds() as remember() does.
  /// Names of other families, bare family names and names that do not parse are ignored: they
  /// are reported where the line is used, not here. Default: nothing.
  virtual void remember_solution(const Params& /*params*/, std::string_view /*solution*/) {}
  /// Searches the space for `params` on the rotating operand `copies` within the settings'
  /// share of the budget, each configuration checked by `verify` (when given) before it is
  /// timed. SearchedTemplate (template_search.hpp) implements it with search_template().
  virtual TemplateSearchResult<Params> search(const Params& params, OperandCopies<Params>& copies,
                                              const TuningSettings& settings,
                                              std::function<Status(Candidate<Params>&)> verify) = 0;
};

/// The template behind `candidate`, or null for a plain candidate.
template <class Params>
TemplateCandidate<Params>* as_template(Candidate<Params>& candidate) noexcept {
  return dynamic_cast<TemplateCandidate<Params>*>(&candidate);
}

}  // namespace tunekit
