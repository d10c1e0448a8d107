// Record: one line of an AutoTVM tuning log (v0.2 JSON lines; v0.1 is recognised and skipped),
// its byte-exact encoding, log loading with file:line errors, and target parsing (keys, model).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/search/tuner.hpp"

namespace tunekit {

/// One measured configuration in a tuning log (AutoTVM MeasureInput + MeasureResult).
/// Units: seconds (costs, all_cost), Unix seconds (timestamp), as upstream logs them.
/// Errors are data: `error_no != kNoError` with empty `costs_s` in memory (the log line carries
/// upstream's `[1000000000.0]` placeholder, which is never read back as a cost).
struct Record {
  std::string target;     ///< e.g. "cuda -model=titanx"
  std::string task_name;  ///< e.g. "conv2d_nchw.cuda"
  nlohmann::ordered_json args = nlohmann::ordered_json::array();
  nlohmann::ordered_json kwargs = nlohmann::ordered_json::object();
  /// {"index": i, "code_hash": null, "entity": [[name, tag, payload], ...]}
  nlohmann::ordered_json config = nlohmann::ordered_json::object();
  std::vector<double> costs_s;
  MeasureErrorNo error_no = MeasureErrorNo::kNoError;
  double all_cost_s = 0.0;
  double timestamp_s = 0.0;
  /// Value of "tvm_version" (kept as read; tunekit writes "tunekit-<version>").
  std::string tvm_version;
  /// tunekit's extension key "space_hash": ConfigSpace::hash() of the space the config belongs
  /// to; empty for upstream records.
  std::string space_hash;
  /// tunekit's extension key "build_cost": seconds of all_cost_s spent building the
  /// configuration (MeasureResult::build_cost_s); written only when > 0, 0 for upstream records.
  double build_cost_s = 0.0;

  /// True for a successful record (error_no 0 and at least one cost).
  bool ok() const noexcept { return error_no == MeasureErrorNo::kNoError && !costs_s.empty(); }
  /// Mean of costs_s in seconds; +inf for a failed record (never the best).
  double mean_cost_s() const noexcept;
  /// Config index ("index" of config), 0 when absent or not a non-negative integer (decoded
  /// records always hold one).
  std::uint64_t config_index() const;
  /// The entity list of config.
  const nlohmann::ordered_json& entity() const;
  /// Canonical text of the workload (task name, args): records with equal keys are the same
  /// workload (exact structural equality, autotvm.md §3).
  std::string workload_key() const;
  /// Canonical text of (target, task name, args, kwargs, entity): tunekit's measure_str_key.
  std::string measure_key() const;
};

/// Builds a record from a measurement of `task`.
Record make_record(const MeasureInput& input, const MeasureResult& result);

/// Encodes a record as one v0.2 line (no newline), byte-compatible with upstream: key order
/// input, config, result, version, tvm_version (+ space_hash and build_cost when set); separators
/// ", " and
/// ": "; floats in shortest round-trip form; ASCII escapes. Failed records write costs
/// [1000000000.0]. Source: autotvm.md §5.1.
std::string encode_record(const Record& record);

/// Encodes any JSON value with Python json.dumps' default separators (", ", ": ").
std::string encode_python_json(const nlohmann::ordered_json& value);

/// Result of decoding one log line.
enum class LineKind : std::uint8_t { kRecord, kSkipped, kLegacy };

/// Decodes one line. Blank lines, lines starting with '#' and trailing whitespace are skipped
/// (kSkipped); a v0.1 row (keys "i"/"r"/"v", autotvm.md §5.2) is kLegacy (upstream no longer
/// supports it). A v0.2 row must hold (autotvm.md §5.1):
///   - "input" [target, task name, args(, kwargs)] with string target and name;
///   - "config" {"index": integer >= 0, "entity": [[knob name, tag, payload], ...]};
///   - "result" [costs, error_no, all_cost, timestamp] with an integer error_no >= 0; when
///     error_no is 0, one or more costs, each a finite number > 0 (seconds); a failed record's
///     costs are upstream's placeholder and are not read;
///   - "version": 0.2 (every v0.2 writer, upstream and tunekit, writes it).
/// Never throws: any JSON error (syntax, a NUL byte, a number out of range, nesting deeper than
/// kMaxJsonDepth levels, a wrong type) is a kParseError, worded without nlohmann's exception ids.
/// Errors: kParseError describing what is wrong (the caller adds file:line).
Expected<std::pair<LineKind, Record>> decode_record_line(std::string_view line);

/// Options of load_records.
struct LoadOptions {
  /// Stop at the first malformed line (error) instead of warning and skipping it.
  bool strict = false;
};

/// Decodes the text of a whole log (lines separated by '\n') read from `source` (a file name
/// used in messages). v0.1 rows are skipped with one warning per process, "AutoTVM log version
/// 0.1 is no longer supported."; malformed lines (decode_record_line) are warned about as
/// "<source>:<line>: <reason> (line skipped)", or returned as the error when strict. A last line
/// without its '\n' was not completely written (every record is written whole with its line
/// end): it is never a record, and is warned about as "<source>:<line>: ignoring the incomplete
/// last line ...", strict or not.
/// Errors: kParseError for the first malformed line when strict; kParseError naming `source`
/// when the text is gzip-compressed (logs are plain JSON lines), strict or not.
Expected<std::vector<Record>> parse_records(std::string_view text, const std::string& source,
                                            const LoadOptions& options = {});

/// Reads every record of a log file (path "-" = stdin) with parse_records. Only a regular file
/// is opened (a device or FIFO is refused before it is read: no endless read, no hang), at most
/// 1 GiB; standard input is read to its end, refusing a line longer than 16 MiB.
/// Errors: kNotFound "cannot open tuning log '<path>': No such file or directory"; kIoError
/// "cannot open tuning log '<path>': <reason>" (unreadable, a directory), "tuning log '<path>' is
/// not a regular file (a character device)", or "cannot read ..."; kParseError from
/// parse_records.
Expected<std::vector<Record>> load_records(const std::string& path,
                                           const LoadOptions& options = {});

/// Records that may resume a tuning run in `space`: refuses (kInvalidArgument) when any record
/// carries another space_hash, naming the file, the count and both hashes. Records without a
/// hash (upstream logs) are accepted and matched by entity.
Status check_resumable(std::span<const Record> records, const ConfigSpace& space,
                       const std::string& source);

/// Converts records of `task` (same task name and args, entities in `task.space`) to trials
/// for Tuner::load_history. Records of other workloads or not in the space are skipped.
std::vector<Trial> records_to_trials(std::span<const Record> records,
                                     const std::shared_ptr<const Task>& task);

/// A parsed target string: kind, option map, device keys and model (autotvm.md §3, §4.1).
struct Target {
  std::string text;  ///< the original string
  std::string kind;  ///< first word: "cuda", "llvm", ...
  std::vector<std::string>
      keys;  ///< explicit -keys= first, then -device=, then the kind's defaults
  std::string model = "unknown";  ///< -model=, else "unknown"
};

/// Parses a target string. Default keys: llvm/c -> cpu; cuda -> cuda, gpu; rocm -> rocm, gpu;
/// opencl/vulkan/metal -> kind, gpu; others -> kind. "-device=arm_cpu" on llvm gives
/// [arm_cpu, cpu]; "-device=mali" on opencl gives [mali, opencl, gpu].
Target parse_target(std::string_view text);

}  // namespace tunekit
