// Remote measurement (the role of AutoTVM's RPC runner) over a Transport: rank 0 searches and
// hands configurations to the other ranks, which build and run them and send the results back.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/distributed/transport.hpp"
#include "tunekit/measure/measure_types.hpp"

namespace tunekit::distributed {

/// Message tags of remote measurement (distinct from any other use of the transport).
inline constexpr int kTagTrial = 101;       ///< rank 0 -> worker: {"batch", "slot", "index"}
inline constexpr int kTagResult = 102;      ///< worker -> rank 0: {"batch", "slot", "result"}
inline constexpr int kTagRankFailed = 103;  ///< worker -> rank 0: {"reason"}
inline constexpr int kTagStop = 104;        ///< rank 0 -> worker: no more trials

/// A worker rank that stopped measuring, and why.
struct RankFailure {
  int rank = 0;
  std::string reason;
};

/// A MeasureResult as the JSON object a worker sends ("costs", "error_no", "error_msg",
/// "all_cost", "timestamp"; seconds).
nlohmann::json result_to_json(const MeasureResult& result);

/// The inverse of result_to_json.
/// Errors: kParseError naming the missing or mistyped key.
Expected<MeasureResult> result_from_json(const nlohmann::json& json);

/// Runs configurations on ranks 1..size-1 of `transport`, one trial per rank at a time, the next
/// going to whichever rank answers first. A rank that reports it cannot measure (kTagRankFailed)
/// or does not answer a trial within `reply_timeout_s` is marked failed, warned about once
/// ("remote: rank 2 failed: <reason>; its trial of config 17 goes to another rank") and its
/// trial is re-queued; answers arriving later from it are ignored. When no rank is left the
/// remaining trials fail with kRuntimeDevice "no rank left to measure on". A failed build passes
/// through without being sent (builds are normally done by the ranks: pass no builder).
/// Units: seconds.
class RemoteRunner final : public Runner {
 public:
  /// `transport` must outlive the runner; call it on rank 0 only.
  RemoteRunner(Transport& transport, double reply_timeout_s);
  /// Sends kTagStop to every rank (stop()).
  ~RemoteRunner() override;
  RemoteRunner(const RemoteRunner&) = delete;
  RemoteRunner& operator=(const RemoteRunner&) = delete;

  std::vector<MeasureResult> run(std::span<const MeasureInput> inputs,
                                 std::span<const BuildResult> builds) override;
  /// Worker ranks still measuring (at least 1, so batches never become empty).
  int n_parallel() const override;
  /// Ranks marked failed so far, in the order they failed.
  const std::vector<RankFailure>& failures() const noexcept { return failures_; }
  /// True when a rank was marked failed because it stopped answering (it may never read
  /// kTagStop; the program should end the job with MPI_Abort rather than a collective finalise).
  bool has_silent_rank() const noexcept { return silent_rank_; }
  /// Tells every rank that no trial follows (once).
  void stop();

 private:
  struct Busy {
    std::size_t slot = 0;
    double deadline_s = 0.0;
  };
  void mark_failed(int rank, const std::string& reason, std::vector<std::size_t>& queue,
                   std::span<const MeasureInput> inputs);
  bool dispatch(std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs);
  void handle(const Message& message, std::vector<MeasureResult>& results,
              std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs);
  void expire(std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs);

  Transport& transport_;
  double reply_timeout_s_;
  std::uint64_t batch_ = 0;
  std::vector<bool> failed_;               // by rank
  std::vector<std::optional<Busy>> busy_;  // by rank
  std::vector<RankFailure> failures_;
  std::size_t done_ = 0;
  bool stopped_ = false;
  bool silent_rank_ = false;
};

/// Measures one configuration (by index of the task's space) on a worker rank.
using RemoteMeasureFn = std::function<MeasureResult(std::uint64_t config_index)>;

/// The worker ranks' loop: answers every kTagTrial with `measure`'s result until kTagStop.
/// When `measure` is an error (the rank could not set up its builder or runner), the rank
/// reports it once with kTagRankFailed and then only waits for kTagStop.
/// Errors: kRuntimeError from the transport.
Status serve_remote_trials(Transport& transport, const Expected<RemoteMeasureFn>& measure);

}  // namespace tunekit::distributed
