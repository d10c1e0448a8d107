// Bucketing of a dynamic dimension for offline tuning: bucket specs, the representative problem
// of each bucket and the bucket entries (range signatures) its winner provides.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/offline/problem_files.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::offline {

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

}  // namespace tunekit::offline
