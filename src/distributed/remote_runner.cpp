// Remote measurement over a Transport. See include/tunekit/distributed/remote_runner.hpp.
#include "tunekit/distributed/remote_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit::distributed {

namespace {

double now_s() { return static_cast<double>(now_ns()) * 1e-9; }

MeasureResult failed_result(MeasureErrorNo code, std::string message) {
  MeasureResult result;
  result.error_no = code;
  result.error_msg = std::move(message);
  result.timestamp_s = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                               std::chrono::system_clock::now().time_since_epoch())
                                               .count()) *
                       1e-3;
  return result;
}

}  // namespace

nlohmann::json result_to_json(const MeasureResult& result) {
  return {{"costs", result.costs_s},           {"error_no", static_cast<int>(result.error_no)},
          {"error_msg", result.error_msg},     {"all_cost", result.all_cost_s},
          {"build_cost", result.build_cost_s}, {"timestamp", result.timestamp_s}};
}

Expected<MeasureResult> result_from_json(const nlohmann::json& json) {
  const auto bad = [](const char* key) {
    return Status(StatusCode::kParseError,
                  fmt::format("remote result: '{}' is missing or has the wrong type", key));
  };
  if (!json.is_object()) return Status(StatusCode::kParseError, "remote result: not an object");
  MeasureResult result;
  const auto costs = json.find("costs");
  if (costs == json.end() || !costs->is_array()) return bad("costs");
  for (const auto& cost : *costs) {
    if (!cost.is_number()) return bad("costs");
    result.costs_s.push_back(cost.get<double>());
  }
  const auto error_no = json.find("error_no");
  if (error_no == json.end() || !error_no->is_number_integer()) return bad("error_no");
  result.error_no = measure_error_from_int(error_no->get<int>());
  const auto message = json.find("error_msg");
  if (message == json.end() || !message->is_string()) return bad("error_msg");
  result.error_msg = message->get<std::string>();
  const auto all_cost = json.find("all_cost");
  const auto timestamp = json.find("timestamp");
  if (all_cost == json.end() || !all_cost->is_number()) return bad("all_cost");
  if (timestamp == json.end() || !timestamp->is_number()) return bad("timestamp");
  result.all_cost_s = all_cost->get<double>();
  result.timestamp_s = timestamp->get<double>();
  const auto build_cost = json.find("build_cost");  // optional: older ranks do not send it
  if (build_cost != json.end() && !build_cost->is_number()) return bad("build_cost");
  if (build_cost != json.end()) result.build_cost_s = build_cost->get<double>();
  return result;
}

RemoteRunner::RemoteRunner(Transport& transport, double reply_timeout_s)
    : transport_(transport),
      reply_timeout_s_(reply_timeout_s),
      failed_(static_cast<std::size_t>(std::max(transport.size(), 1)), false),
      busy_(failed_.size()) {
  failed_[0] = true;  // rank 0 searches
}

RemoteRunner::~RemoteRunner() { stop(); }

int RemoteRunner::n_parallel() const {
  const auto live = std::count(failed_.begin(), failed_.end(), false);
  return std::max(static_cast<int>(live), 1);
}

void RemoteRunner::stop() {
  if (stopped_) return;
  stopped_ = true;
  for (int rank = 1; rank < transport_.size(); ++rank) {
    // A rank that stopped answering may never read this; the send is small and does not wait.
    (void)transport_.send(rank, kTagStop, "{}");
  }
}

void RemoteRunner::mark_failed(int rank, const std::string& reason, std::vector<std::size_t>& queue,
                               std::span<const MeasureInput> inputs) {
  const auto r = static_cast<std::size_t>(rank);
  if (failed_[r]) return;
  failed_[r] = true;
  failures_.push_back({rank, reason});
  std::string requeued = "it held no trial";
  if (busy_[r]) {
    queue.push_back(busy_[r]->slot);
    requeued = fmt::format("its trial of config {} goes to another rank",
                           inputs[busy_[r]->slot].config.index());
    busy_[r].reset();
  }
  log::warn(fmt::format("remote: rank {} failed: {}; {}", rank, reason, requeued));
}

bool RemoteRunner::dispatch(std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs) {
  bool any_live = false;
  for (int rank = 1; rank < transport_.size(); ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (failed_[r]) continue;
    any_live = true;
    if (busy_[r] || queue.empty()) continue;
    const std::size_t slot = queue.front();
    queue.erase(queue.begin());
    const nlohmann::json trial = {
        {"batch", batch_}, {"slot", slot}, {"index", inputs[slot].config.index()}};
    busy_[r] = Busy{slot, now_s() + reply_timeout_s_};
    if (Status sent = transport_.send(rank, kTagTrial, trial.dump()); !sent.is_ok()) {
      mark_failed(rank, sent.message(), queue, inputs);
    }
  }
  return any_live;
}

void RemoteRunner::handle(const Message& message, std::vector<MeasureResult>& results,
                          std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs) {
  const auto r = static_cast<std::size_t>(message.source);
  if (message.source <= 0 || r >= failed_.size() || failed_[r]) return;  // late or foreign
  const auto json = nlohmann::json::parse(message.data, nullptr, false);
  if (message.tag == kTagRankFailed) {
    const bool has_reason =
        json.is_object() && json.contains("reason") && json["reason"].is_string();
    mark_failed(message.source, has_reason ? json["reason"].get<std::string>() : message.data,
                queue, inputs);
    return;
  }
  if (message.tag != kTagResult || !busy_[r]) return;
  if (!json.is_object() || json.value("batch", batch_ + 1) != batch_ ||
      json.value("slot", results.size()) != busy_[r]->slot || !json.contains("result")) {
    return;  // an answer to an earlier batch
  }
  auto result = result_from_json(json["result"]);
  if (!result) {
    mark_failed(message.source, result.status().message(), queue, inputs);
    return;
  }
  results[busy_[r]->slot] = std::move(*result);
  busy_[r].reset();
  ++done_;
}

void RemoteRunner::expire(std::vector<std::size_t>& queue, std::span<const MeasureInput> inputs) {
  const double now = now_s();
  for (int rank = 1; rank < transport_.size(); ++rank) {
    const auto r = static_cast<std::size_t>(rank);
    if (failed_[r] || !busy_[r] || now < busy_[r]->deadline_s) continue;
    silent_rank_ = true;
    mark_failed(rank, fmt::format("no answer within {:g} s", reply_timeout_s_), queue, inputs);
  }
}

std::vector<MeasureResult> RemoteRunner::run(std::span<const MeasureInput> inputs,
                                             std::span<const BuildResult> builds) {
  ++batch_;
  done_ = 0;
  std::vector<MeasureResult> results(inputs.size());
  std::vector<std::size_t> queue;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i < builds.size() && builds[i].error_no != MeasureErrorNo::kNoError) {
      results[i] = failed_result(builds[i].error_no, builds[i].error_msg);
      results[i].all_cost_s = builds[i].time_cost_s;
      results[i].build_cost_s = builds[i].time_cost_s;
      ++done_;
    } else {
      queue.push_back(i);
    }
  }
  while (done_ < inputs.size()) {
    if (!dispatch(queue, inputs)) {
      for (std::size_t slot : queue) {
        results[slot] = failed_result(MeasureErrorNo::kRuntimeDevice, "no rank left to measure on");
      }
      break;
    }
    auto message = transport_.try_receive();
    if (!message) {
      for (int rank = 1; rank < transport_.size(); ++rank) {
        mark_failed(rank, message.status().message(), queue, inputs);
      }
      continue;
    }
    if (*message) {
      handle(**message, results, queue, inputs);
    } else {
      expire(queue, inputs);
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  return results;
}

Status serve_remote_trials(Transport& transport, const Expected<RemoteMeasureFn>& measure) {
  if (!measure) {
    const nlohmann::json failure = {{"reason", measure.status().message()}};
    if (Status sent = transport.send(0, kTagRankFailed, failure.dump()); !sent.is_ok()) return sent;
  }
  for (;;) {
    auto message = transport.receive();
    if (!message) return message.status();
    if (message->tag == kTagStop) return Status::ok();
    if (message->tag != kTagTrial || !measure) continue;
    const auto trial = nlohmann::json::parse(message->data, nullptr, false);
    if (!trial.is_object() || !trial.contains("index") || !trial["index"].is_number_unsigned()) {
      continue;
    }
    const MeasureResult result = (*measure)(trial["index"].get<std::uint64_t>());
    const nlohmann::json reply = {{"batch", trial.value("batch", 0)},
                                  {"slot", trial.value("slot", 0)},
                                  {"result", result_to_json(result)}};
    if (Status sent = transport.send(0, kTagResult, reply.dump()); !sent.is_ok()) return sent;
  }
}

}  // namespace tunekit::distributed
