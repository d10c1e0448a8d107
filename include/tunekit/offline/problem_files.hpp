// Problem files of offline tuning: TunableOp untuned or results files, each line read into parsed
// GemmParams or a skipped entry with its file:line and the reason; file arguments and patterns.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::offline {

using ops::DType;
using ops::GemmParams;

/// One problem line of an untuned or results file.
struct GemmProblem {
  std::string file;              ///< path it came from
  int line = 0;                  ///< 1-based line number
  std::string op_signature;      ///< as written
  std::string params_signature;  ///< as written
  GemmParams params;             ///< parsed (no operand pointers)
};

/// A line that cannot be tuned here, with why ("ScaledGemm: no fp8 candidate", parse errors).
struct SkippedProblem {
  std::string file;
  int line = 0;
  std::string op_signature;
  std::string params_signature;
  Status reason;
};

/// Problems of one or more files, deduplicated by (op signature, params signature) in first-seen
/// order.
struct GemmProblemSet {
  std::vector<GemmProblem> problems;
  std::vector<SkippedProblem> skipped;
  int duplicates = 0;  ///< lines dropped because an identical problem came earlier
};

/// Reads `path` (untuned lines `<op>,<params>[,...]` or results lines; `Validator` lines and
/// empty lines are ignored; CRLF tolerated) and appends its problems to `set`.
/// Lines whose op kind or dtype tunekit cannot run are added to `set.skipped` with the reason;
/// malformed problem lines too (kParseError naming file:line), and wildcard or bucket entries
/// of results files ('*' or '[lo-hi]' tokens: patterns, not problems). Fields after the second
/// (solution, time, BLAS_PARAMS blocks with commas, foreign solution names) are ignored, and so
/// is validation: problems of files from other machines can be tuned here.
/// Errors: kIoError when the file cannot be read; kParseError "<file>:<line>: binary content
/// ...: not a TunableOp CSV file" when it holds control bytes.
/// `dtype_override`: when set, every problem is tuned in this dtype instead (op signature
/// rewritten accordingly).
Status read_gemm_problems(const std::string& path, GemmProblemSet& set,
                          const DType* dtype_override = nullptr);

/// Parses "float", "double", "bf16"/"bfloat16"/"BFloat16" (kBFloat16: bf16 A, B and C) and
/// "bf16_float"/"bfloat16_float"/"BFloat16_float" (kBFloat16Float: bf16 A and B, float C).
/// Errors: kInvalidArgument.
Expected<DType> parse_dtype(const std::string& name);

/// Expands file arguments: an existing path stays as it is; an argument with glob characters
/// (`*`, `?`, `[`) is expanded (sorted, regular files only), e.g. 'tunekit_untuned?.csv'.
/// Duplicate paths are dropped. Errors: kNotFound naming the argument when it is missing or
/// its pattern matches nothing; kIoError when it is not a regular file.
Expected<std::vector<std::string>> expand_file_patterns(const std::vector<std::string>& args);

}  // namespace tunekit::offline
