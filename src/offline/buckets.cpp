// Bucketing of a dynamic dimension for offline tuning: bucket specs, representative problems
// and the bucket entries they provide. See include/tunekit/offline/buckets.hpp.
#include "tunekit/offline/buckets.hpp"

#include <fmt/format.h>

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "tunekit/core/env.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::offline {

using ops::GemmKind;
using ops::GemmParams;

namespace {

Status bad_spec(std::string_view item, const std::string& why) {
  return Status(StatusCode::kInvalidArgument, fmt::format("bucket spec: '{}': {}", item, why));
}

// Sizes are 32-bit BLAS integers.
const std::string kMaxSize = std::to_string(std::numeric_limits<std::int32_t>::max());

std::optional<std::int64_t> parse_size(std::string_view text) {
  auto v = env::parse_int(std::string(text));
  if (!v || *v < 1 || *v > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
  return static_cast<std::int64_t>(*v);
}

// Token index of a dimension in a params signature ("tn_M_N_K[_B_batch]_ld_...").
int dim_token(std::uint8_t dim_bit) {
  switch (dim_bit) {
    case 1:
      return 1;
    case 2:
      return 2;
    case 4:
      return 3;
    case 8:
      return 5;
    default:
      return -1;
  }
}

}  // namespace

Expected<std::vector<Bucket>> parse_buckets(std::string_view spec) {
  std::vector<Bucket> buckets;
  bool open_end = true;
  std::int64_t next_lo = 1;
  auto add = [&](std::string_view item, std::int64_t lo, std::int64_t hi,
                 std::int64_t rep) -> Status {
    if (lo < next_lo) {
      return bad_spec(item, fmt::format("overlaps or precedes the previous bucket (sizes from {} "
                                        "on are free)",
                                        next_lo));
    }
    if (hi < lo) return bad_spec(item, "the upper bound is below the lower bound");
    if (rep < lo || rep > hi) return bad_spec(item, "the representative lies outside the bucket");
    buckets.push_back({lo, hi, rep});
    next_lo = hi + 1;
    return Status::ok();
  };
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = spec.find(',', start);
    std::string_view item =
        spec.substr(start, comma == std::string_view::npos ? spec.npos : comma - start);
    start = comma == std::string_view::npos ? spec.size() + 1 : comma + 1;
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) continue;
    if (item == "end") {
      open_end = false;
      continue;
    }
    if (item.starts_with("pow2:")) {
      const std::string_view range = item.substr(5);
      const std::size_t dash = range.find('-');
      const auto a =
          dash == std::string_view::npos ? std::nullopt : parse_size(range.substr(0, dash));
      const auto b =
          dash == std::string_view::npos ? std::nullopt : parse_size(range.substr(dash + 1));
      if (!a || !b || *a > *b) {
        return bad_spec(item, "expected pow2:A-B with 1 <= A <= B <= " + kMaxSize);
      }
      std::int64_t p = 1;
      while (p < *a) p *= 2;
      for (; p <= *b; p *= 2) TUNEKIT_RETURN_IF_ERROR(add(item, next_lo, p, p));
      continue;
    }
    const std::size_t colon = item.find(':');
    const std::string_view range = item.substr(0, colon);
    const std::size_t dash = range.find('-');
    if (dash == std::string_view::npos) {
      if (colon != std::string_view::npos) return bad_spec(item, "expected R, LO-HI or LO-HI:R");
      const auto r = parse_size(range);
      if (!r) return bad_spec(item, "expected a size from 1 to " + kMaxSize);
      TUNEKIT_RETURN_IF_ERROR(add(item, next_lo, *r, *r));
      continue;
    }
    const auto lo = parse_size(range.substr(0, dash));
    const auto hi = parse_size(range.substr(dash + 1));
    if (!lo || !hi) return bad_spec(item, "expected LO-HI with sizes from 1 to " + kMaxSize);
    std::optional<std::int64_t> rep = hi;
    if (colon != std::string_view::npos) rep = parse_size(item.substr(colon + 1));
    if (!rep) {
      return bad_spec(item, "expected a representative size from 1 to " + kMaxSize + " after ':'");
    }
    TUNEKIT_RETURN_IF_ERROR(add(item, *lo, *hi, *rep));
  }
  if (buckets.empty()) return bad_spec(spec, "no buckets");
  if (open_end) buckets.back().hi = -1;
  return buckets;
}

Expected<std::uint8_t> parse_bucket_dim(std::string_view name) {
  std::string n(name);
  for (char& c : n) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (n == "m") return std::uint8_t{1};
  if (n == "n") return std::uint8_t{2};
  if (n == "k") return std::uint8_t{4};
  if (n == "batch" || n == "b") return std::uint8_t{8};
  return Status(StatusCode::kInvalidArgument,
                "bucket dimension '" + std::string(name) + "': expected m, n, k or batch");
}

Expected<GemmParams> with_dim(const GemmParams& params, std::uint8_t dim_bit, std::int64_t size) {
  GemmParams p = params;
  const auto follow = [size](std::int64_t ld, std::int64_t old_size) {
    return ld == old_size ? size : std::max(ld, size);
  };
  switch (dim_bit) {
    case 1:
      if (p.a_is_n()) p.lda = follow(p.lda, p.m);
      p.ldc = follow(p.ldc, p.m);
      p.m = size;
      break;
    case 2:
      if (!p.b_is_n()) p.ldb = follow(p.ldb, p.n);
      p.n = size;
      break;
    case 4:
      if (!p.a_is_n()) p.lda = follow(p.lda, p.k);
      if (p.b_is_n()) p.ldb = follow(p.ldb, p.k);
      p.k = size;
      break;
    case 8:
      if (p.kind != GemmKind::kStridedBatched) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("{} has no batch dimension", kind_name(p.kind)));
      }
      p.batch = size;
      break;
    default:
      return Status(StatusCode::kInvalidArgument, fmt::format("unknown dimension bit {}", dim_bit));
  }
  if (p.kind == GemmKind::kStridedBatched) {
    p.stride_a = p.lda * (p.a_is_n() ? p.k : p.m);
    p.stride_b = p.ldb * (p.b_is_n() ? p.n : p.k);
    p.stride_c = p.ldc * p.n;
  }
  TUNEKIT_RETURN_IF_ERROR(p.validate_shape());
  return p;
}

std::string bucket_signature(const GemmParams& params, std::uint8_t dim_bit, const Bucket& bucket) {
  const int index = dim_token(dim_bit);
  if (index < 0 || (dim_bit == 8 && params.kind != GemmKind::kStridedBatched)) return {};
  const std::string pattern = params.dynamic_signature(dim_bit);
  std::string out;
  int token = 0;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = pattern.find('_', start);
    const std::string_view tok = std::string_view(pattern).substr(
        start, end == std::string::npos ? std::string::npos : end - start);
    if (token > 0) out.push_back('_');
    out += token == index ? format_range_token(bucket.lo, bucket.hi) : std::string(tok);
    if (end == std::string::npos) break;
    start = end + 1;
    ++token;
  }
  return out;
}

BucketPlan plan_buckets(const std::vector<GemmProblem>& problems, std::uint8_t dim_bit,
                        const std::vector<Bucket>& buckets) {
  BucketPlan plan;
  std::map<std::pair<std::string, std::string>, bool> families;  // (op, pattern) -> seen
  std::set<std::pair<std::string, std::string>> planned;         // representatives
  for (const GemmProblem& problem : problems) {
    const GemmParams& p = problem.params;
    if (dim_bit == 8 && p.kind != GemmKind::kStridedBatched) {
      plan.skipped.push_back(
          {problem.file, problem.line, problem.op_signature, problem.params_signature,
           Status(StatusCode::kUnsupported,
                  fmt::format("{}:{}: {} has no batch dimension to bucket", problem.file,
                              problem.line, problem.op_signature))});
      continue;
    }
    const std::string op = p.op_signature();
    if (!families.emplace(std::pair{op, p.dynamic_signature(dim_bit)}, true).second) continue;
    for (const Bucket& bucket : buckets) {
      auto rep = with_dim(p, dim_bit, bucket.representative);
      if (!rep) {
        plan.skipped.push_back(
            {problem.file, problem.line, problem.op_signature, problem.params_signature,
             Status(
                 rep.status().code(),
                 fmt::format("{}:{}: bucket {}: {}", problem.file, problem.line,
                             format_range_token(bucket.lo, bucket.hi), rep.status().message()))});
        continue;
      }
      const std::string rep_sig = rep->signature();
      if (planned.emplace(op, rep_sig).second) {
        plan.representatives.push_back({problem.file, problem.line, op, rep_sig, *rep});
      }
      plan.entries.push_back({op, bucket_signature(p, dim_bit, bucket), rep_sig});
    }
  }
  return plan;
}

}  // namespace tunekit::offline
