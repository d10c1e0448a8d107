// Reading GEMM problems from TunableOp untuned or results files (offline tuning input): each line
// becomes GemmParams, or a skipped entry with its file:line and the reason.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
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

// --- bucketing of a dynamic dimension ---------------------------------------------------------

/// Sizes lo..hi of a dynamic dimension (hi < 0: no upper bound), all served by the winner tuned
/// at `representative`.
struct Bucket {
  std::int64_t lo = 1;
  std::int64_t hi = -1;
  std::int64_t representative = 1;
  friend bool operator==(const Bucket&, const Bucket&) = default;
};

/// Parses a bucket spec, a comma-separated list of
///  * `R`          a representative that is also the bucket's upper bound: the bucket runs from
///                 the previous bucket's upper bound + 1 (1 for the first) to R;
///  * `LO-HI`      a bucket LO..HI represented by HI;
///  * `LO-HI:R`    a bucket LO..HI represented by R (LO <= R <= HI);
///  * `pow2:A-B`   the powers of two from A to B, each as `R`.
/// Buckets must ascend without overlap. The last bucket is extended to no upper bound (sizes
/// beyond every bucket use the largest representative), unless the spec ends with `,end`.
/// Example: "1,16,128,512" -> [1-1]:1, [2-16]:16, [17-128]:128, [129-]:512.
/// Errors: kInvalidArgument naming the offending item.
Expected<std::vector<Bucket>> parse_buckets(std::string_view spec);

/// Parses a dimension name for bucketing: "m", "n", "k" or "batch" (either case) -> its
/// DynamicDim bit (1, 2, 4, 8). Errors: kInvalidArgument.
Expected<std::uint8_t> parse_bucket_dim(std::string_view name);

/// `params` with the dimension `dim_bit` set to `size`; the leading dimensions that follow it
/// (GemmParams::dynamic_signature's rule) are set to `size` when they were dense (equal to the
/// old size), else kept when still large enough; strides of batched problems are made dense.
/// Errors: kInvalidArgument when the result is not a valid problem (validate_shape()).
Expected<GemmParams> with_dim(const GemmParams& params, std::uint8_t dim_bit, std::int64_t size);

/// The bucket entry's params signature: dynamic_signature(dim_bit) with the dimension's '*'
/// replaced by the range token "[lo-hi]" (or "[lo-]"), e.g.
/// "tn_4096_[17-128]_4096_ld_4096_4096_4096". Empty when `dim_bit` is not a dimension of this
/// problem kind (batch of a plain GEMM).
std::string bucket_signature(const GemmParams& params, std::uint8_t dim_bit, const Bucket& bucket);

/// One bucket entry to write once its representative is tuned.
struct BucketEntry {
  std::string op_signature;              ///< the family's op signature
  std::string bucket_params_signature;   ///< "[lo-hi]" form
  std::string representative_signature;  ///< the concrete problem whose winner it takes
};

/// Representative problems to tune and the bucket entries they provide.
struct BucketPlan {
  std::vector<GemmProblem> representatives;  ///< deduplicated, family by family
  std::vector<BucketEntry> entries;          ///< one per (family, bucket)
  std::vector<SkippedProblem> skipped;       ///< problems that cannot be bucketed, with why
};

/// Groups `problems` into families (equal except for the bucketed dimension and the leading
/// dimensions that follow it; the first problem of a family is its template) and plans one
/// representative per (family, bucket).
BucketPlan plan_buckets(const std::vector<GemmProblem>& problems, std::uint8_t dim_bit,
                        const std::vector<Bucket>& buckets);

}  // namespace tunekit::ops
