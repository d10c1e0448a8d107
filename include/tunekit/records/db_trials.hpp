// Search trials in the tuning database: AutoTVM JSON-lines logs and Kernel Tuner caches imported
// as trials, AutoTVM logs exported byte for byte, and the tuning callback that stores trials.
#pragma once

#include <memory>
#include <span>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/records/record.hpp"
#include "tunekit/records/record_store.hpp"
#include "tunekit/records/tuning_db.hpp"

namespace tunekit {

/// The environment of trials measured by this process: TUNEKIT_VERSION, CPU_MODEL and CPU_ISA
/// (the validators of the search layer, which runs no library candidates).
DbEnvironment host_trial_environment();

/// The trial of `record`, whose log line is `line` (byte for byte, without its line end).
DbTrial trial_of_record(const Record& record, std::string line, const DbProvenance& provenance);

/// The trial of one measured configuration of `input.task`: its v0.2 log line
/// (encode_record(make_record(input, result))) and, for a failure with a message, tunekit's key
/// "error_msg" appended (readers of AutoTVM logs, upstream's and tunekit's, ignore it; the report
/// shows it as the failure's reason).
DbTrial trial_of_measurement(const MeasureInput& input, const MeasureResult& result,
                             const DbProvenance& provenance);

/// Stores measured configurations (inputs[i] with results[i]; the shorter span bounds them) as
/// trials of `environment` in one transaction. Returns how many were new.
/// Errors: kIoError from the database.
Expected<std::size_t> add_measured_trials(TuningDb& db, const DbEnvironment& environment,
                                          std::span<const MeasureInput> inputs,
                                          std::span<const MeasureResult> results,
                                          const DbProvenance& provenance);

/// Imports every v0.2 record line of the AutoTVM log `path` as a trial (source: the path; no
/// environment: a log does not say where it was measured), byte for byte, in one transaction;
/// blank, comment and v0.1 lines and an incomplete last line are skipped (counted in
/// `skipped`). Returns how many trials were new (an identical line stored already is not).
/// Errors: kNotFound, kIoError (the file; the database); kParseError "<path>:<line>: <reason>"
/// for a malformed line (nothing is imported).
Expected<std::size_t> import_autotvm_log(TuningDb& db, const std::string& path,
                                         std::size_t* skipped = nullptr);

/// Imports a Kernel Tuner cache file (plain or gzip; checked as ReplayData::load) as trials of
/// format "kernel_tuner": target "kernel_tuner -device=<device_name>", task and workload the
/// kernel name, the configuration as a JSON object of its parameters, cost = time / 1000 s, a
/// failure string as its MeasureErrorNo. Returns how many were new.
/// Errors: those of ReplayData::load; kIoError from the database.
Expected<std::size_t> import_kernel_tuner_cache(TuningDb& db, const std::string& path);

/// The AutoTVM log of every "autotvm" trial, in insertion order: each stored line and '\n'. A
/// log imported into an empty database comes back byte for byte (without its skipped lines).
Expected<std::string> export_autotvm_log(const TuningDb& db);

/// A tuning callback (as log_to_file) storing each measured configuration as a trial of this
/// process's environment, one transaction per batch. A write failure is counted in `unsaved`
/// (when given) and warned about once; tuning goes on.
TuneCallback log_to_db(std::shared_ptr<TuningDb> db,
                       std::shared_ptr<UnsavedRecords> unsaved = nullptr);

}  // namespace tunekit
