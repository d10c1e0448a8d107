// What the oneDNN 2 (Debian) and oneDNN 3 (wheel) matmul candidates share, free of either
// version's headers: the row-major view of a column-major problem and the primitive cache.
#pragma once

#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "tunekit/core/status.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops::detail {

/// Dims and strides (elements) of one matmul operand as oneDNN takes them (dnnl_dims_t).
struct MatmulOperand {
  std::int64_t dims[3] = {};
  std::int64_t strides[3] = {};
};

/// oneDNN's row-major view of the column-major problem: D[n x m] = S[n x k] * W[k x m] with
/// S = op(B)^T, W = op(A)^T, D = C^T. Batched problems get a leading batch dimension (size 1,
/// i.e. broadcast, for an operand with stride 0). The bias is a 1 x m row.
struct MatmulView {
  int ndims = 2;
  MatmulOperand src, weights, dst, bias;
};

inline MatmulView matmul_view(const GemmParams& p) {
  MatmulView v;
  const bool batched = p.kind == GemmKind::kStridedBatched;
  v.ndims = batched ? 3 : 2;
  const int o = batched ? 1 : 0;
  auto set = [o](MatmulOperand& x, std::int64_t rows, std::int64_t cols, std::int64_t row_stride,
                 std::int64_t col_stride) {
    x.dims[o] = rows;
    x.dims[o + 1] = cols;
    x.strides[o] = row_stride;
    x.strides[o + 1] = col_stride;
  };
  set(v.src, p.n, p.k, p.b_is_n() ? p.ldb : 1, p.b_is_n() ? 1 : p.ldb);
  set(v.weights, p.k, p.m, p.a_is_n() ? p.lda : 1, p.a_is_n() ? 1 : p.lda);
  set(v.dst, p.n, p.m, p.ldc, 1);
  if (batched) {
    v.src.dims[0] = p.stride_b == 0 ? 1 : p.batch;
    v.src.strides[0] = p.stride_b == 0 ? p.ldb * (p.b_is_n() ? p.n : p.k) : p.stride_b;
    v.weights.dims[0] = p.stride_a == 0 ? 1 : p.batch;
    v.weights.strides[0] = p.stride_a == 0 ? p.lda * (p.a_is_n() ? p.k : p.m) : p.stride_a;
    v.dst.dims[0] = p.batch;
    v.dst.strides[0] = p.stride_c;
  }
  v.bias.dims[0] = 1;
  v.bias.dims[1] = p.m;
  v.bias.strides[0] = p.m;
  v.bias.strides[1] = 1;
  return v;
}

/// What a cached matmul primitive depends on: the problem key plus batch strides, alpha and
/// beta (baked into the primitive), the thread count the primitive was created for, and the
/// weights layout.
struct MatmulKey {
  GemmKey problem;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0;
  std::uint64_t alpha_bits = 0, beta_bits = 0;
  int threads = 0;
  bool packed = false;
  friend bool operator==(const MatmulKey&, const MatmulKey&) = default;
};

inline MatmulKey matmul_key(const GemmParams& p, bool packed) {
  MatmulKey k;
  k.problem = p.key();
  if (p.kind == GemmKind::kStridedBatched) {
    k.stride_a = p.stride_a;
    k.stride_b = p.stride_b;
    k.stride_c = p.stride_c;
  }
  k.alpha_bits = std::bit_cast<std::uint64_t>(p.alpha);
  k.beta_bits = std::bit_cast<std::uint64_t>(p.beta);
  k.threads = num_threads();
  k.packed = packed;
  return k;
}

struct MatmulKeyHash {
  std::size_t operator()(const MatmulKey& k) const noexcept {
    std::uint64_t h = GemmParams::hash(k.problem);
    for (std::uint64_t v :
         {static_cast<std::uint64_t>(k.stride_a), static_cast<std::uint64_t>(k.stride_b),
          static_cast<std::uint64_t>(k.stride_c), k.alpha_bits, k.beta_bits,
          static_cast<std::uint64_t>(k.threads) * 2 + (k.packed ? 1 : 0)}) {
      h = (h ^ v) * 0x100000001b3ULL + (h >> 29);
    }
    return static_cast<std::size_t>(h);
  }
};

/// Created matmul primitives by MatmulKey, shared by the threads that run them. Thread-safe: a
/// lookup takes a reader lock; two threads missing the same key may both create, the first
/// inserted wins.
template <class Primitive>
class MatmulCache {
 public:
  /// The cached primitive of `key`, else `create() -> Expected<shared_ptr<const Primitive>>`'s
  /// (failures are not cached).
  template <class Create>
  Expected<std::shared_ptr<const Primitive>> get(const MatmulKey& key, Create&& create) {
    {
      std::shared_lock lock(mutex_);
      if (auto it = map_.find(key); it != map_.end()) return it->second;
    }
    Expected<std::shared_ptr<const Primitive>> created = create();
    if (!created) return created;
    std::unique_lock lock(mutex_);
    return map_.emplace(key, *created).first->second;
  }

 private:
  std::shared_mutex mutex_;
  std::unordered_map<MatmulKey, std::shared_ptr<const Primitive>, MatmulKeyHash> map_;
};

}  // namespace tunekit::ops::detail
