// GemmWorkspace: aligned operand copies for rotating buffers and numerical checks, filled from
// the caller's operands or from a deterministic counter-based generator.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tunekit/ops/gemm_memory.hpp"
#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::ops {
namespace {

constexpr std::size_t kAlignment = 64;

// Counter-based generator: value i of stream `tag` depends only on (seed, tag, i), so copies
// and reruns agree. Returns a uniform value in [-1, 1) with 24 significant bits (exact in
// float; rounded to bf16 by the caller for bf16 operands).
double uniform_at(std::uint64_t seed, std::uint64_t tag, std::uint64_t i) noexcept {
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ULL + (tag << 56) + i;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return static_cast<double>(x >> 40) * (1.0 / 8388608.0) - 1.0;  // (x >> 40) / 2^23 - 1
}

// Fills `bytes` of `dst` with `elem`-byte values: double (8), float (4) or bf16 (2).
void random_fill(unsigned char* dst, std::size_t bytes, std::size_t elem, std::uint64_t seed,
                 std::uint64_t tag) noexcept {
  const std::size_t count = bytes / elem;
  if (elem == 8) {
    auto* d = reinterpret_cast<double*>(dst);
    for (std::size_t i = 0; i < count; ++i) d[i] = uniform_at(seed, tag, i);
  } else if (elem == 4) {
    auto* d = reinterpret_cast<float*>(dst);
    for (std::size_t i = 0; i < count; ++i) d[i] = static_cast<float>(uniform_at(seed, tag, i));
  } else {
    auto* d = reinterpret_cast<BFloat16*>(dst);
    for (std::size_t i = 0; i < count; ++i) {
      d[i] = to_bfloat16(static_cast<float>(uniform_at(seed, tag, i)));
    }
  }
}

}  // namespace

void GemmWorkspace::FreeDeleter::operator()(unsigned char* p) const noexcept { std::free(p); }

GemmWorkspace::Buffer GemmWorkspace::allocate(std::size_t bytes) {
  const std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  return Buffer(
      static_cast<unsigned char*>(std::aligned_alloc(kAlignment, rounded ? rounded : kAlignment)));
}

/// Bytes a caller's operand view really addresses: ld * (cols - 1) + rows elements per matrix,
/// plus (batch - 1) strides. Copying more could read past the end of an exactly sized buffer
/// (a sub-matrix view or the last matrix of a batch), so copies take only this much and the rest
/// of the workspace buffer is zeroed.
static std::size_t view_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld,
                              std::int64_t stride, std::int64_t batch, std::size_t elem,
                              std::size_t cap) {
  if (rows <= 0 || cols <= 0) return 0;
  std::int64_t elems = ld * (cols - 1) + rows;
  if (batch > 1) elems += stride * (batch - 1);
  return std::min(cap, static_cast<std::size_t>(elems) * elem);
}

static void copy_view(void* dst, const void* src, std::size_t view, std::size_t total) {
  std::memcpy(dst, src, view);
  if (total > view) std::memset(static_cast<unsigned char*>(dst) + view, 0, total - view);
}

Expected<std::unique_ptr<GemmWorkspace>> GemmWorkspace::create(const GemmParams& params,
                                                               std::size_t copies,
                                                               bool random_fill_operands,
                                                               std::uint64_t seed) {
  TUNEKIT_RETURN_IF_ERROR(params.validate_shape());
  if (copies == 0) return Status(StatusCode::kInvalidArgument, "workspace copies must be >= 1");
  if (!random_fill_operands) {
    if (params.a == nullptr || params.b == nullptr) {
      return Status(StatusCode::kInvalidArgument,
                    "workspace without random_fill needs the caller's a and b");
    }
    if (params.kind == GemmKind::kGemmAndBias && params.bias == nullptr) {
      return Status(StatusCode::kInvalidArgument,
                    "workspace without random_fill needs the caller's bias");
    }
  }
  auto ws = std::unique_ptr<GemmWorkspace>(new (std::nothrow) GemmWorkspace());
  if (!ws) return Status(StatusCode::kRuntimeError, "out of memory creating a GEMM workspace");
  ws->base_ = params;
  ws->copies_ = copies;
  const std::size_t a_bytes = params.a_bytes();
  const std::size_t b_bytes = params.b_bytes();
  const std::size_t c_bytes = params.c_bytes();
  const std::size_t bias_bytes = params.bias_bytes();
  const std::size_t in_elem = element_bytes(params.dtype);
  const std::size_t out_elem = output_element_bytes(params.dtype);
  const bool batched = params.kind == GemmKind::kStridedBatched;
  const std::int64_t nb = batched ? params.batch : 1;
  const std::size_t a_view = view_bytes(params.transa == 'n' ? params.m : params.k,
                                        params.transa == 'n' ? params.k : params.m, params.lda,
                                        params.stride_a, nb, in_elem, a_bytes);
  const std::size_t b_view = view_bytes(params.transb == 'n' ? params.k : params.n,
                                        params.transb == 'n' ? params.n : params.k, params.ldb,
                                        params.stride_b, nb, in_elem, b_bytes);
  const std::size_t c_view =
      view_bytes(params.m, params.n, params.ldc, params.stride_c, nb, out_elem, c_bytes);

  // Refuse up front what would drive the machine into the out-of-memory killer (the pages are
  // touched at once by the fill): every buffer allocated below. Memory the caller holds already
  // (its operands) is no longer available; tune-file counts its own operands before making them
  // (gemm_tuning_bytes).
  TUNEKIT_RETURN_IF_ERROR(check_memory_for(
      gemm_workspace_bytes(params, copies),
      fmt::format("a workspace of {} operand cop{}", copies, copies == 1 ? "y" : "ies")));
  ws->c_initial_ = allocate(c_bytes);
  if (!ws->c_initial_) {
    return Status(StatusCode::kRuntimeError,
                  fmt::format("cannot allocate {} bytes for the output", c_bytes));
  }
  if (random_fill_operands) {
    random_fill(ws->c_initial_.get(), c_bytes, out_elem, seed, 3);
  } else if (params.c != nullptr) {
    copy_view(ws->c_initial_.get(), params.c, c_view, c_bytes);
  } else {
    std::memset(ws->c_initial_.get(), 0, c_bytes);
  }

  for (std::size_t i = 0; i < copies; ++i) {
    Buffer a = allocate(a_bytes);
    Buffer b = allocate(b_bytes);
    Buffer c = allocate(c_bytes);
    Buffer bias = bias_bytes ? allocate(bias_bytes) : Buffer();
    if (!a || !b || !c || (bias_bytes && !bias)) {
      return Status(StatusCode::kRuntimeError,
                    fmt::format("cannot allocate operand copy {} of {} ({} bytes each)", i + 1,
                                copies, a_bytes + b_bytes + c_bytes + bias_bytes));
    }
    if (i > 0) {  // every copy equals copy 0
      std::memcpy(a.get(), ws->a_[0].get(), a_bytes);
      std::memcpy(b.get(), ws->b_[0].get(), b_bytes);
      if (bias_bytes) std::memcpy(bias.get(), ws->bias_[0].get(), bias_bytes);
    } else if (random_fill_operands) {
      random_fill(a.get(), a_bytes, in_elem, seed, 1);
      random_fill(b.get(), b_bytes, in_elem, seed, 2);
      if (bias_bytes) random_fill(bias.get(), bias_bytes, out_elem, seed, 4);
    } else {
      copy_view(a.get(), params.a, a_view, a_bytes);
      copy_view(b.get(), params.b, b_view, b_bytes);
      if (bias_bytes) std::memcpy(bias.get(), params.bias, bias_bytes);
    }
    std::memcpy(c.get(), ws->c_initial_.get(), c_bytes);
    ws->a_.push_back(std::move(a));
    ws->b_.push_back(std::move(b));
    ws->c_.push_back(std::move(c));
    ws->bias_.push_back(std::move(bias));
  }
  return ws;
}

GemmParams GemmWorkspace::bind(std::size_t i) const noexcept {
  TUNEKIT_CHECK(i < copies_);
  GemmParams p = base_;
  p.a = a_[i].get();
  p.b = b_[i].get();
  p.c = c_[i].get();
  p.bias = bias_[i].get();
  return p;
}

void GemmWorkspace::reset_output(std::size_t i) noexcept {
  if (i < copies_) std::memcpy(c_[i].get(), c_initial_.get(), base_.c_bytes());
}

}  // namespace tunekit::ops
