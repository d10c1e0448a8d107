// Reading GEMM problems from TunableOp untuned or results files (offline tuning input): each line
// becomes GemmParams, or a skipped entry with its file:line and the reason.
#pragma once

#include <string>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::ops {

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
/// malformed problem lines too (kParseError naming file:line).
/// Errors: kIoError when the file cannot be read; kParseError "<file>: not a TunableOp file"
/// when it holds NUL bytes (binary).
/// `dtype_override`: when set, every problem is tuned in this dtype instead (op signature
/// rewritten accordingly).
Status read_gemm_problems(const std::string& path, GemmProblemSet& set,
                          const DType* dtype_override = nullptr);

/// Parses "float", "double", "bf16"/"bfloat16"/"BFloat16". Errors: kInvalidArgument.
Expected<DType> parse_dtype(const std::string& name);

}  // namespace tunekit::ops
