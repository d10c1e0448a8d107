// TunableOp<Params>: an operator with an ordered candidate list (entry 0 "Default") that dispatches
// each problem to its stored, freshly tuned or default solution; hits are lock- and
// allocation-free.
#pragma once

#include <atomic>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "tunekit/core/log.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/confirmation.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/find_fastest.hpp"
#include "tunekit/tunable/params_traits.hpp"
#include "tunekit/tunable/persisted_winners.hpp"
#include "tunekit/tunable/report.hpp"
#include "tunekit/tunable/result_table.hpp"
#include "tunekit/tunable/template_candidate.hpp"

namespace tunekit {

/// The name candidate 0 must carry.
inline constexpr std::string_view kDefaultSolution = "Default";

/// A tunable operator.
///
/// Dispatch, `operator()(params)` (PyTorch TunableOp §2, with tunekit's choices):
///  1. disabled (TUNEKIT_ENABLED=0) -> Default;
///  2. hit in the op's lock-free cache -> the cached candidate (a hit is never re-tuned);
///  3. otherwise, under the op's mutex: the results file is loaded on first use; a stored result
///     (op signature, params signature) is resolved to a candidate index (an unknown solution
///     name warns once, "missing candidate X for <op>,<params>; using Default", and runs Default);
///  4. miss + tuning on -> find_fastest, the winner is stored and appended to the results file
///     (with search transfer on, the templates first learn the stored winners of their
///     families, PersistedWinners, so their searches seed from them);
///  5. miss + record-untuned on -> `<op>,<params>[,BLAS_PARAMS: ...]` goes to the untuned file
///     (once per process);
///  6. miss + wildcard fallback on -> the most specific matching wildcard result of the op
///     (ResultsManager::lookup_wildcard: fewest '*', then fewest ranges, then file order);
///  7. otherwise Default (verbose 2 logs "no result, using Default").
/// With TUNEKIT_CONFIRM_CALLS > 0, a stored or tuned winner other than Default is confirmed in
/// place first (Confirmation): its next calls alternate with Default, timed, and Default serves
/// the problem in this process when it was faster there (confirmations() lists the verdicts).
/// The resolved decision is cached per Params::Key; decisions without a stored result are
/// re-resolved after any change of the results or of the dispatch switches.
/// Validation: when Params has `validate() -> Status`, every call that is not a hit (steps 1
/// and 3-7 before any work) and tune() return its error first, so only keys of valid problems
/// are ever cached. A hit does not call it again: it runs the candidate's run_resolved(), which
/// must still refuse what can differ between calls with the same key (operand pointers,
/// scalars).
///
/// Thread safety: operator() and tune() may be called from many threads. Hits take no lock and
/// allocate nothing (one hash probe of atomic pointers); misses serialise on a per-op mutex
/// (tuning one problem at a time per op). Candidates' run() may execute concurrently.
/// Errors: dispatch returns the chosen candidate's status, or on a miss Params::validate()'s
/// error or the environment error (a malformed TUNEKIT_* variable).
template <TunableParams Params>
class TunableOp {
 public:
  /// The problem identity the lock-free cache is keyed by.
  using Key = typename Params::Key;

  /// Takes the candidates in registration order (the order they are profiled in).
  /// Errors: throws Error(kInvalidArgument) when the list is empty, entry 0 is not named
  /// "Default", or two candidates share a name.
  explicit TunableOp(CandidateList<Params> candidates, TuningContext& context = tuning_context())
      : candidates_(std::move(candidates)), context_(context) {
    if (candidates_.empty() || candidates_[0] == nullptr ||
        candidates_[0]->name() != kDefaultSolution) {
      throw Error(StatusCode::kInvalidArgument,
                  "TunableOp: candidate 0 must be named \"Default\" (the untuned library call)");
    }
    for (std::size_t i = 0; i < candidates_.size(); ++i) {
      if (candidates_[i] == nullptr) {
        throw Error(StatusCode::kInvalidArgument,
                    "TunableOp: candidate " + std::to_string(i) + " is null");
      }
      if (!index_.emplace(candidates_[i]->name(), i).second) {
        throw Error(StatusCode::kInvalidArgument,
                    "TunableOp: duplicate candidate name '" + candidates_[i]->name() + "'");
      }
    }
  }
  TunableOp(const TunableOp&) = delete;
  TunableOp& operator=(const TunableOp&) = delete;

  /// Runs the operator on `params` with the solution chosen as described above.
  Status operator()(const Params& params) { return dispatch(params, params.key()); }

  /// operator() with the key computed by the caller. Precondition: key == params.key() (entry
  /// points that build params from their arguments compute both from the same values).
  Status dispatch(const Params& params, const Key& key) {
    if (!context_.is_enabled()) [[unlikely]] {
      return dispatch_disabled(params);
    }
    if (const Entry* e = table_.find(key); e != nullptr && serves(*e, key)) [[likely]] {
      Status s = static_cast<Candidate<Params>*>(e->target)->run_resolved(params);
      if (s.code() == StatusCode::kUnsupported && e->candidate != 0) [[unlikely]] {
        return run_default_instead(params, e->candidate, s);
      }
      return s;
    }
    return dispatch_slow(params);
  }

  /// Tunes `params` now (whatever the tuning switch and the cache say) and returns the full
  /// report. The winner is stored and appended like a tuned miss unless a result for the problem
  /// already exists (then report.previous holds it and the stored result is kept: first wins).
  /// The caller's output operand is not written.
  /// Errors: report.status (environment error, workspace failure, no candidate succeeded).
  TuneReport tune(const Params& params) {
    if (Status invalid = validate(params); !invalid.is_ok()) {
      TuneReport report;
      report.op_signature = params.op_signature();
      report.params_signature = params.signature();
      report.status = std::move(invalid);
      return report;
    }
    std::lock_guard lock(mutex_);
    context_.ensure_results_loaded();
    const std::string op = params.op_signature();
    const std::string signature = params.signature();
    std::optional<ResultEntry> previous = context_.results_manager().lookup(op, signature);
    const std::uint64_t epoch = context_.results_manager().epoch();
    std::size_t chosen = 0;
    TuneReport report = tune_locked(params, op, signature, chosen);
    report.previous = std::move(previous);
    if (report.winner && !report.previous) {
      (void)publish_winner(params, params.key(), op, signature, chosen, epoch);
    }
    return report;
  }

  /// The candidates in registration order (template candidates as their family; the
  /// configurations they were tuned or loaded as are not in this list).
  const CandidateList<Params>& candidates() const noexcept { return candidates_; }
  /// Index of the candidate named `name`, if any.
  std::optional<std::size_t> find_candidate(std::string_view name) const {
    auto it = index_.find(std::string(name));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }
  /// Whether a stored solution named `name` runs as itself here (else dispatch runs Default): ok
  /// for a registered candidate's name or a configuration a template candidate rebuilds on this
  /// machine (TemplateCandidate::from_name); else the template's reason (a malformed name, a
  /// configuration this CPU cannot run) or kNotFound "not a candidate of this build".
  /// With `params`, the candidate or the rebuilt configuration must also run that problem (its
  /// supports(): a decode configuration, or the bare decode family, stored on a 128-token or a
  /// float problem gives its reason).
  Status solution_status(std::string_view name, const Params* params = nullptr) const {
    if (auto i = find_candidate(name)) {
      if (*i < candidates_.size()) {  // registered; past them, instances adopted from templates
        return params != nullptr ? candidates_[*i]->supports(*params) : Status::ok();
      }
      if (params == nullptr) return Status::ok();
    }
    for (const auto& c : candidates_) {
      TemplateCandidate<Params>* family = as_template(*c);
      if (family == nullptr) continue;
      auto rebuilt = family->from_name(name);
      if (rebuilt && params != nullptr) return (*rebuilt)->supports(*params);
      if (rebuilt || rebuilt.status().code() != StatusCode::kNotFound) return rebuilt.status();
    }
    return Status(StatusCode::kNotFound, "not a candidate of this build");
  }
  /// solution_status(name).is_ok().
  bool knows_solution(std::string_view name) const { return solution_status(name).is_ok(); }
  /// Name of the solution the next call with `params` would run without taking the slow path,
  /// or nullopt when it is not cached (or the cache entry is stale). Lock-free.
  std::optional<std::string> cached_solution(const Params& params) const {
    const Entry* e = table_.find(params.key());
    if (e == nullptr || !valid(*e)) return std::nullopt;
    return static_cast<const Candidate<Params>*>(e->target)->name();
  }
  /// The verdicts of the confirmations reached so far in this process, in order.
  std::vector<ConfirmationVerdict> confirmations() {
    std::lock_guard lock(mutex_);
    return confirmation_.verdicts();
  }
  /// Number of find_fastest runs so far (diagnostics and tests).
  std::size_t tunings() const noexcept { return tunings_.load(std::memory_order_relaxed); }
  /// The context this op reads its settings from.
  TuningContext& context() noexcept { return context_; }

 private:
  using Entry = CachedSolution<Key>;
  using Traits = ParamsTraits<Params>;

  bool valid(const Entry& e) const noexcept {
    const ResultsManager& results = context_.results_manager();
    return e.stamp == (e.kind == CachedKind::kFallback ? results.generation() : results.epoch());
  }

  // Publishes a stored or tuned winner for `key` and returns the index this call runs: with
  // confirmation on, a winner other than Default that this process has not confirmed yet is
  // published as confirming (Default prepared for the calls it will take); a confirmed problem
  // gets its verdict.
  std::size_t publish_winner(const Params& params, const Key& key, const std::string& op,
                             const std::string& signature, std::size_t index, std::uint64_t epoch) {
    const long long calls = context_.confirm_calls();
    const auto winner = static_cast<std::uint32_t>(index);
    if (index == 0 || calls <= 0) {
      publish(key, winner, CachedKind::kResult, epoch);
      return index;
    }
    if (auto done = confirmation_.decided(op, signature, winner)) {
      if (*done == 0) (void)detail::guarded_prepare(*candidates_[0], params);
      publish(key, *done, CachedKind::kResult, epoch);
      return *done;
    }
    confirmation_.begin(op, signature, winner, at(index).name(), static_cast<std::size_t>(calls));
    (void)detail::guarded_prepare(*candidates_[0], params);
    publish(key, winner, CachedKind::kConfirming, epoch);
    return index;
  }

  // A call of a problem under confirmation: the side Confirmation assigns runs on the caller's
  // operands, timed with the context's clock; a verdict is published for the calls after it.
  [[gnu::noinline]] Status confirm_call(const Params& params, const Key& key, const Entry& e) {
    const std::string op = params.op_signature();
    const std::string signature = params.signature();
    auto& winner = *static_cast<Candidate<Params>*>(e.target);
    Confirmation::Turn turn = Confirmation::Turn::kWinner;
    {
      std::lock_guard lock(mutex_);
      if (context_.confirm_calls() <= 0) {
        conclude(key, e, confirmation_.keep(op, signature));
      } else {
        turn = confirmation_.next(op, signature);
      }
    }
    const bool on_default = turn == Confirmation::Turn::kDefault;
    const measure::ClockFn clock = context_.hooks().clock();
    const std::int64_t start = clock();
    Status s = on_default ? candidates_[0]->run(params) : winner.run_resolved(params);
    const double ms = static_cast<double>(clock() - start) * 1e-6;
    if (!on_default && s.code() == StatusCode::kUnsupported) {
      return run_default_instead(params, e.candidate, s);
    }
    {
      std::lock_guard lock(mutex_);
      if (on_default && !s.is_ok()) {
        conclude(key, e, confirmation_.keep(op, signature));
      } else if (auto verdict = confirmation_.record(op, signature, turn, ms)) {
        conclude(key, e, *verdict);
      }
    }
    return on_default && !s.is_ok() ? winner.run(params) : s;
  }

  // Publishes a confirmation's verdict for `key` (under mutex_).
  void conclude(const Key& key, const Entry& e, const ConfirmationVerdict& v) {
    publish(key, v.kept ? e.candidate : 0U, CachedKind::kResult, e.stamp);
    log::info(1, "{}({}) confirmed in place: {} {} ({} calls each: {} against Default {})",
              v.op_signature, v.params_signature, v.solution, v.kept ? "kept" : "lost to Default",
              v.calls, format_time_ms(v.winner_ms), format_time_ms(v.default_ms));
  }

  void publish(const Key& key, std::uint32_t candidate, CachedKind kind, std::uint64_t stamp) {
    table_.publish(Entry{key, candidate, kind, stamp, &at(candidate)});
  }

  std::string blas_extra(const Params& params) const {
    if (!context_.is_blas_log_enabled()) return {};
    std::string sig = Traits::blas_signature(params);
    return sig.empty() ? std::string() : "BLAS_PARAMS: " + sig;
  }

  // The candidate at `index`: the registered ones, then the template instances adopted.
  // Under mutex_ (instances_ grows there); lock-free paths use the entry's pointer instead.
  Candidate<Params>& at(std::size_t index) {
    return index < candidates_.size() ? *candidates_[index]
                                      : *instances_[index - candidates_.size()];
  }

  // Keeps a template's instance for dispatch; its index (an instance of the same name adopted
  // before is reused).
  std::size_t adopt(std::unique_ptr<Candidate<Params>> instance) {
    if (auto it = index_.find(instance->name()); it != index_.end()) return it->second;
    const std::size_t index = candidates_.size() + instances_.size();
    index_.emplace(instance->name(), index);
    instances_.push_back(std::move(instance));
    return index;
  }

  // A solution name no registered candidate has, rebuilt by the template it names; nullopt when
  // none does. A malformed or unrunnable configuration warns once.
  std::optional<std::size_t> rebuild(const std::string& solution, const std::string& where) {
    for (const auto& c : candidates_) {
      TemplateCandidate<Params>* family = as_template(*c);
      if (family == nullptr) continue;
      auto instance = family->from_name(solution);
      if (instance) return adopt(std::move(*instance));
      if (instance.status().code() == StatusCode::kNotFound) continue;
      if (warned_missing_.insert(where + "," + solution).second) {
        log::warn("cannot rebuild " + solution + " for " + where + " (" +
                  instance.status().message() + "); using Default");
      }
      return std::size_t{0};
    }
    return std::nullopt;
  }

  // Index of a stored solution; unknown names warn once and resolve to Default.
  std::size_t index_for(const std::string& solution, const std::string& op,
                        const std::string& signature) {
    auto it = index_.find(solution);
    if (it != index_.end()) return it->second;
    if (auto rebuilt = rebuild(solution, op + "," + signature)) return *rebuilt;
    if (warned_missing_.insert(op + "," + signature + "," + solution).second) {
      log::warn("missing candidate " + solution + " for " + op + "," + signature +
                "; using Default");
    }
    return 0;
  }

  // prepare() for a candidate chosen at dispatch; Default when it fails.
  std::size_t prepared_or_default(std::size_t index, const Params& params) {
    if (index == 0) {
      (void)detail::guarded_prepare(*candidates_[0], params);
      return 0;
    }
    Status s = detail::guarded_prepare(at(index), params);
    if (s.is_ok()) return index;
    log::warn(params.op_signature() + "(" + params.signature() + "): prepare of " +
              at(index).name() + " failed (" + s.to_string() + "); using Default");
    (void)detail::guarded_prepare(*candidates_[0], params);
    return 0;
  }

  // find_fastest and the winner stored; `chosen` receives the index dispatch runs it as (a
  // template's winning configuration is adopted as an instance).
  TuneReport tune_locked(const Params& params, const std::string& op, const std::string& signature,
                         std::size_t& chosen) {
    auto settings = context_.tuning_settings();
    if (!settings) {
      TuneReport report;
      report.op_signature = op;
      report.params_signature = signature;
      report.status = settings.status();
      return report;
    }
    if (settings->search_transfer) persisted_.feed(context_.results_manager(), candidates_);
    std::unique_ptr<Candidate<Params>> instance;
    TuneReport report = find_fastest(params, candidates_, *settings, &instance);
    tunings_.fetch_add(1, std::memory_order_relaxed);
    if (!report.winner) return report;
    chosen = instance ? adopt(std::move(instance)) : *report.winner;
    const std::string name = report.candidates[*report.winner].name;
    const std::string extra = blas_extra(params);
    log::info(1, "{}({}) -> {},{}", op, signature, name, format_time_ms(report.winner_time_ms));
    persisted_.note_own(op, signature, name);
    std::vector<DbCandidateTime> times;
    for (const CandidateReport& c : report.candidates) {
      times.push_back(DbCandidateTime{c.name, std::string(to_string(c.outcome)),
                                      c.measured() ? c.score_ms : std::nan("")});
    }
    auto added = context_.add_result(ResultLine{op, signature, name, report.winner_time_ms, extra},
                                     times, &report.not_saved);
    if (!added) {
      log::warn(added.status().message());
    } else {
      report.persisted = *added;
    }
    add_dynamic_result(params, params.key(), op, signature,
                       ResultEntry{name, report.winner_time_ms, extra});
    return report;
  }

  // V26 dynamic dims: a result tuned (or hit, while tuning is on) for a problem dispatched with
  // dynamic dims is also stored under its wildcard signature, unless one is stored already
  // (first wins). The calling thread's mask applies. Called under mutex_.
  void add_dynamic_result(const Params& params, const Key& key, const std::string& op,
                          const std::string& signature, const ResultEntry& entry) {
    const DynamicDimsMask mask = Traits::kMaskedDynamic ? context_.effective_dynamic_dims() : 0;
    const std::string dynamic = Traits::dynamic_signature(params, mask);
    if (!dynamic.empty() && dynamic != signature &&
        !context_.results_manager().lookup(op, dynamic)) {
      auto added =
          context_.add_result(ResultLine{op, dynamic, entry.solution, entry.time_ms, entry.extra});
      if (!added) log::warn(added.status().message());
    }
    if constexpr (Traits::kMaskedDynamic) {
      if (mask == 0) return;
      const Entry* done = dynamic_done_.find(key);
      const std::uint64_t epoch = context_.results_manager().epoch();
      const std::uint32_t bits =
          mask | (done != nullptr && done->stamp == epoch ? done->candidate : 0U);
      dynamic_done_.publish(Entry{key, bits, CachedKind::kResult, epoch});
    }
  }

  // Whether the wildcard entry for `mask` was already ensured for `key` (lock-free).
  bool dynamic_stored(const Key& key, DynamicDimsMask mask) const noexcept {
    const Entry* done = dynamic_done_.find(key);
    return done != nullptr && done->stamp == context_.results_manager().epoch() &&
           (done->candidate & mask) == mask;
  }

  // Params::validate() where Params has one; the slow paths call it first.
  static Status validate(const Params& params) {
    if constexpr (requires {
                    { params.validate() } -> std::convertible_to<Status>;
                  }) {
      return params.validate();
    } else {
      return Status::ok();
    }
  }

  // Whether a cached entry serves this call: it is valid() and, for a stored result, no wildcard
  // entry of the calling thread's dynamic dims (V26) is still to be stored while tuning is on
  // (that takes the slow path).
  bool serves(const Entry& e, const Key& key) const noexcept {
    const ResultsManager& results = context_.results_manager();
    if (e.kind == CachedKind::kConfirming) return false;
    if (e.kind != CachedKind::kResult) return e.stamp == results.generation();
    return e.stamp == results.epoch() && !needs_dynamic_entry(key);
  }

  bool needs_dynamic_entry(const Key& key) const noexcept {
    if constexpr (Traits::kMaskedDynamic) {
      const DynamicDimsMask mask = context_.effective_dynamic_dims();
      return mask != 0 && !dynamic_stored(key, mask) && context_.is_tuning_enabled();
    } else {
      return false;
    }
  }

  // Dispatch while TUNEKIT_ENABLED=0: Default, prepared once per key, lock-free after that.
  // Out of line and given the params only, as dispatch_slow(), so that the hit path inlines and
  // its key never needs an address (it stays in registers).
  [[gnu::noinline]] Status dispatch_disabled(const Params& params) {
    const Key key = params.key();
    if (prepared_default_.find(key) == nullptr) return dispatch_disabled_slow(params, key);
    return candidates_[0]->run_resolved(params);
  }

  Status dispatch_disabled_slow(const Params& params, const Key& key) {
    TUNEKIT_RETURN_IF_ERROR(validate(params));
    {
      std::lock_guard lock(mutex_);
      if (prepared_default_.find(key) == nullptr) {
        (void)detail::guarded_prepare(*candidates_[0], params);
        prepared_default_.publish(Entry{key, 0, CachedKind::kFallback, 0});
      }
    }
    return candidates_[0]->run(params);
  }

  [[gnu::noinline]] Status dispatch_slow(const Params& params) {
    TUNEKIT_RETURN_IF_ERROR(validate(params));
    const Key key = params.key();
    if (const Entry* e = table_.find(key);
        e != nullptr && e->kind == CachedKind::kConfirming && valid(*e)) {
      return confirm_call(params, key, *e);
    }
    std::size_t index = 0;
    Candidate<Params>* chosen = nullptr;
    {
      std::lock_guard lock(mutex_);
      if (const Entry* e = table_.find(key); e != nullptr && valid(*e)) {
        index = e->candidate;
        if (e->kind == CachedKind::kResult && context_.is_tuning_enabled()) {
          const std::string op = params.op_signature();
          const std::string signature = params.signature();
          if (auto hit = context_.results_manager().lookup(op, signature)) {
            add_dynamic_result(params, key, op, signature, *hit);
          }
        }
      } else {
        auto resolved = resolve_locked(params, key);
        if (!resolved) return resolved.status();
        index = *resolved;
      }
      chosen = &at(index);
    }
    Status s = chosen->run(params);
    if (s.code() == StatusCode::kUnsupported && index != 0) {
      return run_default_instead(params, index, s);
    }
    return s;
  }

  // The stored winner refused this call (a problem's signature does not hold every argument:
  // libxsmm's JIT kernels take alpha = 1 and beta 0 or 1 only): Default runs it, with a warning
  // once per problem and candidate.
  [[gnu::noinline]] Status run_default_instead(const Params& params, std::size_t index,
                                               const Status& refusal) {
    {
      std::lock_guard lock(mutex_);
      const std::string what = params.op_signature() + "(" + params.signature() + ")";
      if (warned_missing_.insert(what + "," + at(index).name() + ",refused").second) {
        log::warn(what + ": " + at(index).name() + " cannot run this call (" + refusal.message() +
                  "); using Default");
      }
      (void)detail::guarded_prepare(*candidates_[0], params);
    }
    return candidates_[0]->run(params);
  }

  Expected<std::size_t> resolve_locked(const Params& params, const Key& key) {
    TUNEKIT_RETURN_IF_ERROR(context_.environment_status());
    context_.ensure_results_loaded();
    ResultsManager& results = context_.results_manager();
    // Stamps are read before the lookups: a concurrent change makes the entry stale, never wrong.
    const std::uint64_t epoch = results.epoch();
    const std::uint64_t generation = results.generation();
    const std::string op = params.op_signature();
    const std::string signature = params.signature();

    if (auto hit = results.lookup(op, signature)) {
      const std::size_t index =
          prepared_or_default(index_for(hit->solution, op, signature), params);
      if (context_.is_tuning_enabled()) add_dynamic_result(params, key, op, signature, *hit);
      return publish_winner(params, key, op, signature, index, epoch);
    }
    if (context_.is_tuning_enabled()) {
      std::size_t chosen = 0;
      TuneReport report = tune_locked(params, op, signature, chosen);
      if (report.winner) return publish_winner(params, key, op, signature, chosen, epoch);
      if (report.status.code() == StatusCode::kInvalidArgument) return report.status;
      log::warn("tuning " + op + "(" + signature + ") failed: " + report.status.message() +
                "; using Default");
    }
    if (context_.is_record_untuned_enabled()) {
      Status s = context_.record_untuned(op, signature, blas_extra(params));
      if (!s.is_ok()) log::warn("cannot record untuned problem: " + s.message());
    }
    if (context_.is_wildcard_fallback_enabled()) {
      if (auto wild = results.lookup_wildcard(op, signature)) {
        const std::size_t index =
            prepared_or_default(index_for(wild->solution, op, wild->params_signature), params);
        log::info(2, "{}({}) wildcard {} -> {}", op, signature, wild->params_signature,
                  at(index).name());
        publish(key, static_cast<std::uint32_t>(index), CachedKind::kFallback, generation);
        return index;
      }
    }
    log::info(2, "{}({}) no result, using Default", op, signature);
    (void)detail::guarded_prepare(*candidates_[0], params);
    publish(key, 0, CachedKind::kFallback, generation);
    return std::size_t{0};
  }

  CandidateList<Params> candidates_;
  // Template instances (tuned or rebuilt configurations), indices from candidates_.size() on;
  // grown under mutex_, never shrunk (entries of the lock-free table point into them).
  std::vector<std::unique_ptr<Candidate<Params>>> instances_;
  TuningContext& context_;
  std::unordered_map<std::string, std::size_t> index_;
  std::mutex mutex_;  // serialises misses, tuning and publishing
  ResultTable<Key, &Params::hash> table_;
  ResultTable<Key, &Params::hash> prepared_default_;  // keys whose Default was prepared
  // Keys whose wildcard entries were ensured; `candidate` holds the mask bits already handled.
  ResultTable<Key, &Params::hash> dynamic_done_;
  std::set<std::string> warned_missing_;
  PersistedWinners<Params> persisted_;  // stored template winners handed to the templates
  Confirmation confirmation_;           // winners confirmed in place (under mutex_)
  std::atomic<std::size_t> tunings_{0};
};

}  // namespace tunekit
