// The strided N-d GEMM engine: layouts, dense copies, batch planning and the tuned calls.
// See strided_gemm.hpp.
#include "strided_gemm.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tunekit/ops/gemm.hpp"

namespace tunekit::python {
namespace {

constexpr std::int64_t kMaxLd = (std::int64_t{1} << 31) - 1;

std::atomic<std::uint64_t> g_copies{0};

/// How a matrix lies in memory for BLAS: rows or columns adjacent, `ld` elements apart.
struct Layout {
  bool row_major = true;
  std::int64_t ld = 1;
};

/// The BLAS layout of a rows x cols matrix with byte strides (rs, cs), if it has one (a
/// dimension of extent 1 takes any stride). Row-major is preferred when both fit.
std::optional<Layout> matrix_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs,
                                    std::int64_t cs, std::int64_t elem) {
  const bool one_row = rows == 1, one_col = cols == 1;
  if ((!one_row && (rs <= 0 || rs % elem != 0)) || (!one_col && (cs <= 0 || cs % elem != 0))) {
    return std::nullopt;
  }
  const std::int64_t r = one_row ? 0 : rs / elem, c = one_col ? 0 : cs / elem;
  if ((one_col || c == 1) && (one_row || (r >= cols && r <= kMaxLd))) {
    return Layout{true, one_row ? cols : r};
  }
  if ((one_row || r == 1) && (one_col || (c >= rows && c <= kMaxLd))) {
    return Layout{false, one_col ? rows : c};
  }
  return std::nullopt;
}

std::optional<Layout> layout_of(const Operand& x) {
  const int r = x.ndim - 2, c = x.ndim - 1;
  return matrix_layout(x.shape[r], x.shape[c], x.strides[r], x.strides[c], element_size(x.type));
}

/// Buffers allocated during one call (dense copies, an output buffer).
class Scratch {
 public:
  char* allocate(std::size_t bytes) {
    buffers_.push_back(std::make_unique<char[]>(std::max<std::size_t>(bytes, 1)));
    return buffers_.back().get();
  }

 private:
  std::vector<std::unique_ptr<char[]>> buffers_;
};

/// An operand of `x`'s shape and type in a new C-ordered buffer (contents uninitialised).
Operand dense_like(const Operand& x, Scratch& scratch) {
  Operand d;
  d.type = x.type;
  d.ndim = x.ndim;
  std::int64_t stride = element_size(x.type);
  for (int i = x.ndim - 1; i >= 0; --i) {
    d.shape[i] = x.shape[i];
    d.strides[i] = stride;
    stride *= x.shape[i];
  }
  d.data = scratch.allocate(static_cast<std::size_t>(stride));
  d.own_range_only();
  g_copies.fetch_add(1, std::memory_order_relaxed);
  return d;
}

/// Calls f(element of x, element of y) for every index of their common shape (x.ndim >= 1).
template <class F>
void for_each_pair(const Operand& x, const Operand& y, F f) {
  if (x.size() == 0) return;
  const int last = x.ndim - 1;
  std::int64_t index[kMaxDims] = {};
  for (;;) {
    std::int64_t ox = 0, oy = 0;
    for (int d = 0; d < last; ++d) {
      ox += index[d] * x.strides[d];
      oy += index[d] * y.strides[d];
    }
    for (std::int64_t i = 0; i < x.shape[last]; ++i) {
      f(x.data + ox + i * x.strides[last], y.data + oy + i * y.strides[last]);
    }
    int d = last - 1;
    while (d >= 0 && ++index[d] == x.shape[d]) index[d--] = 0;
    if (d < 0) return;
  }
}

/// Copies the elements of `from` into `to` (same shape and type).
void copy_elements(const Operand& to, const Operand& from) {
  const auto bytes = static_cast<std::size_t>(element_size(to.type));
  for_each_pair(to, from, [bytes](char* t, const char* f) { std::memcpy(t, f, bytes); });
}

/// C = beta * C (C = 0 when beta is 0, NaN not propagated), for an empty inner dimension.
void scale_output(const Operand& c, double beta) {
  const bool wide = c.type == ElementType::kFloat64;
  for_each_pair(c, c, [&](char* p, const char*) {
    if (wide) {
      double v = 0;
      if (beta != 0) std::memcpy(&v, p, sizeof v);
      v *= beta;
      std::memcpy(p, &v, sizeof v);
    } else {
      float v = 0;
      if (beta != 0) std::memcpy(&v, p, sizeof v);
      v = static_cast<float>(v * beta);
      std::memcpy(p, &v, sizeof v);
    }
  });
}

bool aligned(const Operand& x) {
  return reinterpret_cast<std::uintptr_t>(x.data) %
             static_cast<std::uintptr_t>(element_size(x.type)) ==
         0;
}

/// Whether every byte a library may read for any matrix of `x` (the TunableOp span rule:
/// ld * stored columns, GemmParams::a_bytes) lies in memory x's owner holds.
bool padding_fits(const Operand& x, const Layout& l) {
  const std::int64_t rows = x.shape[x.ndim - 2], cols = x.shape[x.ndim - 1];
  const std::int64_t dense = l.row_major ? cols : rows;
  if (l.ld == dense) return true;  // no padding: a library reads exactly the elements
  std::int64_t low = 0, high = 0;
  for (int i = 0; i < x.ndim - 2; ++i) {
    const std::int64_t reach = (x.shape[i] - 1) * x.strides[i];
    (reach < 0 ? low : high) += reach;
  }
  const std::int64_t reads =
      element_size(x.type) * std::max(l.ld * (l.row_major ? rows : cols), rows * cols);
  return x.data + low >= x.owner_begin && x.data + high + reads <= x.owner_end;
}

/// An input usable in place (x itself), or else its dense copy (in `copy`).
const Operand& prepare_input(const Operand& x, Scratch& scratch, Operand& copy) {
  const std::optional<Layout> l = layout_of(x);
  if (l && aligned(x) && padding_fits(x, *l)) return x;
  copy = dense_like(x, scratch);
  copy_elements(copy, x);
  return copy;
}

bool overlap(const Operand& x, const Operand& y) {
  const char *xl, *xh, *yl, *yh;
  x.byte_range(&xl, &xh);
  y.byte_range(&yl, &yh);
  return xl < yh && yl < xh;
}

/// Whether the output must be computed in a buffer (no BLAS layout, padding, or it shares
/// memory with an input).
bool needs_output_buffer(const Operand& c, const Operand& a, const Operand& b) {
  const std::optional<Layout> l = layout_of(c);
  return !l || !aligned(c) || !padding_fits(c, *l) || overlap(c, a) || overlap(c, b);
}

/// One output batch dimension: its extent and each operand's byte stride along it.
struct BatchDim {
  std::int64_t extent = 1;
  std::int64_t sa = 0, sb = 0, sc = 0;
};

/// x's stride along output batch dimension i of `batch_dims` (0 where x broadcasts).
std::int64_t batch_stride(const Operand& x, int i, int batch_dims) {
  const int j = i - (batch_dims - (x.ndim - 2));
  return (j < 0 || x.shape[j] == 1) ? 0 : x.strides[j];
}

/// The output's batch dimensions without those of extent 1, adjacent ones merged where every
/// operand is evenly strided across them. Returns their count.
int plan_batches(const Operand& a, const Operand& b, const Operand& c, BatchDim* dims) {
  const int batch_dims = c.ndim - 2;
  int count = 0;
  for (int i = 0; i < batch_dims; ++i) {
    if (c.shape[i] == 1) continue;
    const BatchDim d{c.shape[i], batch_stride(a, i, batch_dims), batch_stride(b, i, batch_dims),
                     c.strides[i]};
    if (count > 0) {
      BatchDim& p = dims[count - 1];
      if (p.sa == d.sa * d.extent && p.sb == d.sb * d.extent && p.sc == d.sc * d.extent) {
        p = BatchDim{p.extent * d.extent, d.sa, d.sb, d.sc};
        continue;
      }
    }
    dims[count++] = d;
  }
  return count;
}

ops::DType dtype_of(ElementType t) {
  switch (t) {
    case ElementType::kFloat64:
      return ops::DType::kDouble;
    case ElementType::kBFloat16:
      return ops::DType::kBFloat16Float;
    case ElementType::kFloat32:
      break;
  }
  return ops::DType::kFloat;
}

/// One call's fixed part: the operands (in place or copies), their layouts and the BLAS frame.
/// A row-major C is computed as C^T = B^T A^T in the column-major BLAS frame (BLAS m = N), so
/// C-ordered NumPy operands give the keys PyTorch's torch.mm gives.
struct Frame {
  const Operand* a;
  const Operand* b;
  const Operand* c;
  Layout la, lb, lc;
  double alpha = 1, beta = 0;

  ops::GemmParams params(const char* pa, const char* pb, char* pc) const {
    ops::GemmParams p;
    p.dtype = dtype_of(a->type);
    p.alpha = alpha;
    p.beta = beta;
    const std::int64_t m = a->shape[a->ndim - 2], k = a->shape[a->ndim - 1];
    const std::int64_t n = b->shape[b->ndim - 1];
    if (lc.row_major) {
      p.m = n, p.n = m, p.k = k;
      p.transa = lb.row_major ? 'n' : 't', p.lda = lb.ld, p.a = pb;
      p.transb = la.row_major ? 'n' : 't', p.ldb = la.ld, p.b = pa;
    } else {
      p.m = m, p.n = n, p.k = k;
      p.transa = la.row_major ? 't' : 'n', p.lda = la.ld, p.a = pa;
      p.transb = lb.row_major ? 't' : 'n', p.ldb = lb.ld, p.b = pb;
    }
    p.ldc = lc.ld;
    p.c = pc;
    return p;
  }
};

bool within(const void* p, std::size_t bytes, const Operand& owner) {
  const char* q = static_cast<const char*>(p);
  return q >= owner.owner_begin && q + bytes <= owner.owner_end;
}

/// One strided-batched call for `inner`, when its strides suit one (positive element
/// multiples) and every span a library may read lies in its owner's memory.
std::optional<ops::GemmParams> batched_params(const Frame& f, const BatchDim& inner, const char* pa,
                                              const char* pb, char* pc) {
  const std::int64_t ei = element_size(f.a->type), ec = element_size(f.c->type);
  if (inner.sa <= 0 || inner.sb <= 0 || inner.sc <= 0 || inner.sa % ei != 0 || inner.sb % ei != 0 ||
      inner.sc % ec != 0) {
    return std::nullopt;
  }
  ops::GemmParams p = f.params(pa, pb, pc);
  p.kind = ops::GemmKind::kStridedBatched;
  p.batch = inner.extent;
  p.stride_a = (f.lc.row_major ? inner.sb : inner.sa) / ei;
  p.stride_b = (f.lc.row_major ? inner.sa : inner.sb) / ei;
  p.stride_c = inner.sc / ec;
  const Operand& owner_a = f.lc.row_major ? *f.b : *f.a;
  const Operand& owner_b = f.lc.row_major ? *f.a : *f.b;
  if (!within(p.a, p.a_bytes(), owner_a) || !within(p.b, p.b_bytes(), owner_b) ||
      !within(p.c, p.c_bytes(), *f.c)) {
    return std::nullopt;
  }
  return p;
}

/// The innermost batch dimension: one strided-batched call, or one call per matrix.
Status run_inner(const Frame& f, const BatchDim& inner, const char* pa, const char* pb, char* pc) {
  if (auto p = batched_params(f, inner, pa, pb, pc)) return try_gemm(*p);
  for (std::int64_t i = 0; i < inner.extent; ++i) {
    Status s = try_gemm(f.params(pa + i * inner.sa, pb + i * inner.sb, pc + i * inner.sc));
    if (!s.is_ok()) return s;
  }
  return Status::ok();
}

/// Every matrix of the output: the outer batch dimensions looped, the innermost one batched.
Status run_batches(const Frame& f) {
  BatchDim dims[kMaxDims];
  const int count = plan_batches(*f.a, *f.b, *f.c, dims);
  if (count == 0) return try_gemm(f.params(f.a->data, f.b->data, f.c->data));
  const BatchDim& inner = dims[count - 1];
  std::int64_t index[kMaxDims] = {};
  for (;;) {
    std::int64_t oa = 0, ob = 0, oc = 0;
    for (int d = 0; d < count - 1; ++d) {
      oa += index[d] * dims[d].sa;
      ob += index[d] * dims[d].sb;
      oc += index[d] * dims[d].sc;
    }
    Status s = run_inner(f, inner, f.a->data + oa, f.b->data + ob, f.c->data + oc);
    if (!s.is_ok()) return s;
    int d = count - 2;
    while (d >= 0 && ++index[d] == dims[d].extent) index[d--] = 0;
    if (d < 0) return Status::ok();
  }
}

}  // namespace

std::uint64_t strided_gemm_copies() noexcept { return g_copies.load(std::memory_order_relaxed); }

Status strided_gemm(const Operand& a, const Operand& b, Operand& c, double alpha, double beta) {
  if (c.size() == 0) return Status::ok();
  if (a.shape[a.ndim - 1] == 0) {
    scale_output(c, beta);
    return Status::ok();
  }
  Scratch scratch;
  Operand copies[3];
  const Operand& pa = prepare_input(a, scratch, copies[0]);
  const Operand& pb = prepare_input(b, scratch, copies[1]);
  const bool buffered = needs_output_buffer(c, pa, pb);
  if (buffered) {
    copies[2] = dense_like(c, scratch);
    if (beta != 0) copy_elements(copies[2], c);
  }
  const Operand& pc = buffered ? copies[2] : c;
  const Frame f{&pa, &pb, &pc, *layout_of(pa), *layout_of(pb), *layout_of(pc), alpha, beta};
  Status s = run_batches(f);
  if (s.is_ok() && buffered) copy_elements(c, pc);
  return s;
}

}  // namespace tunekit::python
