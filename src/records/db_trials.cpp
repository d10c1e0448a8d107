// Trials in the tuning database: AutoTVM log and Kernel Tuner cache import, AutoTVM export, and
// the log_to_db tuning callback. See include/tunekit/records/db_trials.hpp.
#include "tunekit/records/db_trials.hpp"

#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>

#include "tunekit/core/file_io.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/version.hpp"
#include "tunekit/measure/simulated_runner.hpp"

namespace tunekit {

DbEnvironment host_trial_environment() {
  return {{"TUNEKIT_VERSION", version()},
          {"CPU_MODEL", hw::host_cpu().model},
          {"CPU_ISA", hw::host_cpu().isa}};
}

DbTrial trial_of_record(const Record& record, std::string line, const DbProvenance& provenance) {
  DbTrial t;
  t.line = std::move(line);
  t.format = "autotvm";
  t.target = record.target;
  t.task = record.task_name;
  t.workload = record.workload_key();
  t.config_index = static_cast<std::int64_t>(record.config_index());
  t.config = encode_python_json(record.config);
  if (record.ok()) t.cost_s = record.mean_cost_s();
  t.error_no = static_cast<int>(record.error_no);
  t.space_hash = record.space_hash;
  t.provenance = provenance;
  return t;
}

DbTrial trial_of_measurement(const MeasureInput& input, const MeasureResult& result,
                             const DbProvenance& provenance) {
  const Record record = make_record(input, result);
  std::string line = encode_record(record);
  if (!result.ok() && !result.error_msg.empty() && !line.empty() && line.back() == '}') {
    line.pop_back();
    line += ", \"error_msg\": " + encode_python_json(result.error_msg) + "}";
  }
  return trial_of_record(record, std::move(line), provenance);
}

Expected<std::size_t> add_measured_trials(TuningDb& db, const DbEnvironment& environment,
                                          std::span<const MeasureInput> inputs,
                                          std::span<const MeasureResult> results,
                                          const DbProvenance& provenance) {
  auto id = db.environment_id(environment);
  if (!id) return id.status();
  std::vector<DbTrial> trials;
  for (std::size_t i = 0; i < inputs.size() && i < results.size(); ++i) {
    trials.push_back(trial_of_measurement(inputs[i], results[i], provenance));
    trials.back().environment = *id;
  }
  return db.add_trials(trials);
}

Expected<std::size_t> import_autotvm_log(TuningDb& db, const std::string& path,
                                         std::size_t* skipped) {
  auto fd = files::open_regular(path, O_RDONLY, "tuning log");
  if (!fd) return fd.status();
  auto text = files::read_all(fd->get(), path, "tuning log");
  if (!text) return text.status();
  const DbProvenance provenance{"", path, ""};
  std::vector<DbTrial> trials;
  std::size_t skip = 0, line_no = 0, pos = 0;
  while (pos < text->size()) {
    const std::size_t end = text->find('\n', pos);
    ++line_no;
    if (end == std::string::npos) {  // not completely written: never a record
      log::warn(
          fmt::format("{}:{}: ignoring the incomplete last line (no line end)", path, line_no));
      ++skip;
      break;
    }
    std::string line = text->substr(pos, end - pos);
    pos = end + 1;
    auto decoded = decode_record_line(line);
    if (!decoded) {
      return Status(StatusCode::kParseError,
                    fmt::format("{}:{}: {}", path, line_no, decoded.status().message()));
    }
    if (decoded->first != LineKind::kRecord) {
      ++skip;
      continue;
    }
    trials.push_back(trial_of_record(decoded->second, std::move(line), provenance));
  }
  if (skipped != nullptr) *skipped = skip;
  return db.add_trials(trials);
}

Expected<std::size_t> import_kernel_tuner_cache(TuningDb& db, const std::string& path) {
  auto data = ReplayData::load(path);
  if (!data) return data.status();
  const std::string target = "kernel_tuner -device=" + data->device_name();
  const std::string hash = data->space()->hash();
  std::vector<DbTrial> trials;
  std::int64_t index = 0;
  for (const ReplayEntry& e : data->entries()) {
    nlohmann::ordered_json config = nlohmann::ordered_json::object();
    for (std::size_t p = 0; p < data->parameter_names().size(); ++p) {
      config[data->parameter_names()[p]] =
          data->parameter_values()[p][static_cast<std::size_t>(e.knobs[p])];
    }
    nlohmann::ordered_json line = {{"kernel", data->kernel_name()}, {"config", config}};
    if (e.ok()) {
      line["time"] = e.time_ms;
    } else {
      line["time"] = e.failure;
    }
    DbTrial t;
    t.format = "kernel_tuner";
    t.target = target;
    t.task = data->kernel_name();
    t.workload = data->kernel_name();
    t.config_index = index++;
    t.config = config.dump();
    if (e.ok()) t.cost_s = e.time_ms / 1000.0;
    t.error_no = static_cast<int>(e.error_no);
    t.space_hash = hash;
    t.line = line.dump();
    t.provenance = DbProvenance{"", path, ""};
    trials.push_back(std::move(t));
  }
  return db.add_trials(trials);
}

Expected<std::string> export_autotvm_log(const TuningDb& db) {
  auto trials = db.trials("autotvm");
  if (!trials) return trials.status();
  std::string out;
  for (const DbTrial& t : *trials) out.append(t.line).push_back('\n');
  return out;
}

TuneCallback log_to_db(std::shared_ptr<TuningDb> db, std::shared_ptr<UnsavedRecords> unsaved) {
  auto warned = std::make_shared<bool>(false);
  return [db, warned, unsaved](const Tuner&, std::span<const MeasureInput> inputs,
                               std::span<const MeasureResult> results) {
    auto added = add_measured_trials(*db, host_trial_environment(), inputs, results,
                                     DbProvenance{hw::host_name(), "tuned", ""});
    if (added) return;
    if (unsaved) {
      unsaved->count += std::min(inputs.size(), results.size());
      unsaved->last = added.status();
    }
    if (!*warned) {
      *warned = true;
      log::warn(added.status().message() + " (tuning goes on; later trials may be lost too)");
    }
  };
}

}  // namespace tunekit
