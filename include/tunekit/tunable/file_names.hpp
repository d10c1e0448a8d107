// Results and untuned file names: the defaults and where the device ordinal (or a worker's
// "_full<i>") goes into a name, as PyTorch TunableOp does.
#pragma once

#include <string>
#include <string_view>

namespace tunekit {

/// Default results file name (before the device ordinal is inserted: "tunekit_results0.csv").
inline constexpr std::string_view kDefaultResultsFilename = "tunekit_results.csv";
/// Default untuned file name (before the device ordinal is inserted: "tunekit_untuned0.csv").
inline constexpr std::string_view kDefaultUntunedFilename = "tunekit_untuned.csv";
/// Inserts the device ordinal into a results file name: replaces the first "%d"; else inserts it
/// before the last '.' of the file's base name; else appends it.
/// Examples: ("tunekit_results.csv", 0) -> "tunekit_results0.csv"; ("res_%d_x.csv", 0) ->
/// "res_0_x.csv"; ("results", 1) -> "results1"; ("out.d/res.csv", 2) -> "out.d/res2.csv".
/// Source: PyTorch TunableOp §7 (tunekit only looks at the base name for the '.').
std::string insert_device_ordinal(std::string_view name, int device);

/// insert_device_ordinal's rule with any text in place of the ordinal: ("tunekit_results.csv",
/// "_full0") -> "tunekit_results_full0.csv".
std::string insert_at_ordinal(std::string_view name, std::string_view text);

/// Untuned-file rule: the ordinal always goes before the last '.' of the base name (no "%d"
/// handling), else at the end: ("tunekit_untuned.csv", 0) -> "tunekit_untuned0.csv".
std::string insert_device_ordinal_before_extension(std::string_view name, int device);

}  // namespace tunekit
