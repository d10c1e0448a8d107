// tunekit.torch's kernels: PyTorch's CPU matrix products (aten::mm, addmm, bmm, baddbmm) through
// tunekit's GEMM tunable op, whose Default is PyTorch's own CPU kernel (at::cpu::*). Compiled
// against the installed torch's headers when tunekit.torch is first imported
// (torch.utils.cpp_extension), so that it always matches that torch; it needs nothing of
// tunekit but the C interface tunekit/ops/gemm_abi.h.
//
// Frames: a row-major torch product out[M, N] = x[M, K] @ w[K, N] is the column-major BLAS
// product C = op(A) op(B) with C = out^T (m = N, n = M), A from w and B from x: a matrix with
// unit stride in its last dim is an 'n' operand with ld = stride(0), one with unit stride in its
// first dim a 't' operand with ld = stride(1).
#include <ATen/ExpandUtils.h>
#include <ATen/core/Tensor.h>
#include <ATen/ops/addmm_cpu_dispatch.h>
#include <ATen/ops/baddbmm_cpu_dispatch.h>
#include <ATen/ops/bmm_cpu_dispatch.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/mm_cpu_dispatch.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include <array>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/ops/gemm_abi.h"

namespace tunekit_torch {
namespace {

// ---------------------------------------------------------------------------------------------
// What was served and what fell through to PyTorch, by reason (tunekit.torch.stats()).

enum Reason : int {
  kServed = 0,
  kDtype,      // not float32 / bfloat16, or operands of different dtypes
  kDevice,     // not a CPU tensor
  kLayout,     // sparse/mkldnn layout, or no unit stride in either matrix dim
  kEmpty,      // a zero-sized dim
  kSize,       // a dim, leading dimension or batch stride beyond 32-bit BLAS integers
  kBias,       // an addmm/baddbmm input tunekit cannot take (dtype, shape)
  kScalar,     // alpha or beta not finite, or beyond float's range (PyTorch's own error or inf)
  kReentrant,  // called from inside PyTorch's Default (never expected)
  kReasons
};

constexpr std::array<const char*, kReasons> kReasonNames = {
    "served", "dtype", "device", "layout", "empty", "size", "bias", "scalar", "reentrant"};

std::array<std::atomic<std::int64_t>, kReasons> g_calls{};
std::array<std::atomic<double>, kReasons> g_flops{};

void count(Reason reason, double flops) {
  g_calls[reason].fetch_add(1, std::memory_order_relaxed);
  double old = g_flops[reason].load(std::memory_order_relaxed);
  while (!g_flops[reason].compare_exchange_weak(old, old + flops, std::memory_order_relaxed)) {
  }
}

// ---------------------------------------------------------------------------------------------
// One matrix operand in the BLAS frame.

struct BlasOperand {
  char trans = 'n';
  std::int64_t ld = 0;
};

constexpr std::int64_t kMaxBlasInt = (std::int64_t{1} << 31) - 1;

/// The BLAS view of a row-major matrix with `rows` x `cols` and strides (s0, s1): 'n' with
/// ld = s0 when s1 is 1 and rows lie at least `cols` apart, 't' with ld = s1 when s0 is 1 and
/// columns lie at least `rows` apart (a dim of extent 1 has any stride). Nothing for every other
/// layout, expanded (stride 0) and overlapping ones included: BLAS cannot read them.
std::optional<BlasOperand> blas_operand(std::int64_t rows, std::int64_t cols, std::int64_t s0,
                                        std::int64_t s1) {
  if ((cols == 1 || s1 == 1) && (rows == 1 || s0 >= cols)) {
    return BlasOperand{'n', rows == 1 ? cols : s0};
  }
  if ((rows == 1 || s0 == 1) && (cols == 1 || s1 >= rows)) {
    return BlasOperand{'t', cols == 1 ? rows : s1};
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// The call in flight on this thread: PyTorch's Default runs on these tensors when tunekit hands
// it the caller's own operands (a dispatch hit), instead of wrapping pointers again.

struct Call {
  const at::Tensor* x = nullptr;     // row-major left operand (B in the BLAS frame)
  const at::Tensor* w = nullptr;     // row-major right operand (A in the BLAS frame)
  const at::Tensor* bias = nullptr;  // 1-D bias of a GemmAndBias problem
  at::Tensor* out = nullptr;
};

thread_local const Call* t_call = nullptr;
thread_local bool t_in_default = false;

struct CallScope {
  explicit CallScope(const Call* call) { t_call = call; }
  ~CallScope() { t_call = nullptr; }
};

// ---------------------------------------------------------------------------------------------
// PyTorch's Default for any problem tunekit hands it.

at::ScalarType scalar_type(int dtype) {
  return dtype == 1 ? at::kDouble : dtype == 2 ? at::kBFloat16 : at::kFloat;
}

/// A row-major [rows, cols] view (batched: [batch, rows, cols]) of a BLAS operand stored at p.
at::Tensor wrap(const void* p, char trans, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                std::int64_t batch, std::int64_t batch_stride, at::ScalarType type, bool batched) {
  // op(X)^T of a column-major X: 'n' -> X^T row-major with strides (ld, 1); 't' -> (1, ld).
  const std::int64_t s0 = trans == 'n' ? ld : 1, s1 = trans == 'n' ? 1 : ld;
  auto options = at::TensorOptions().dtype(type).device(at::kCPU);
  void* data = const_cast<void*>(p);
  if (!batched) return at::from_blob(data, {rows, cols}, {s0, s1}, options);
  return at::from_blob(data, {batch, rows, cols}, {batch_stride, s0, s1}, options);
}

/// out = beta * out + alpha * x @ w (+ bias), PyTorch's CPU kernels.
void torch_product(const tunekit_gemm_problem& p, const at::Tensor& x, const at::Tensor& w,
                   const at::Tensor* bias, at::Tensor& out) {
  const bool plain = p.beta == 0 && p.alpha == 1;
  if (p.kind == 1) {
    if (plain)
      at::cpu::bmm_out(out, x, w);
    else
      at::cpu::baddbmm_out(out, out, x, w, p.beta, p.alpha);
  } else if (p.kind == 2) {
    at::cpu::addmm_out(out, *bias, x, w, 1, p.alpha);
  } else if (plain) {
    at::cpu::mm_out(out, x, w);
  } else {
    at::cpu::addmm_out(out, out, x, w, p.beta, p.alpha);
  }
}

bool is_current_call(const tunekit_gemm_problem& p) {
  const Call* c = t_call;
  return c != nullptr && c->x->data_ptr() == p.b && c->w->data_ptr() == p.a &&
         c->out->data_ptr() == p.c && (c->bias == nullptr || c->bias->data_ptr() == p.bias);
}

void run_default(const tunekit_gemm_problem& p) {
  if (is_current_call(p)) {
    torch_product(p, *t_call->x, *t_call->w, t_call->bias, *t_call->out);
    return;
  }
  const at::ScalarType type = scalar_type(p.dtype);
  const bool batched = p.kind == 1;
  // C = op(A) op(B)  <=>  C^T[n, m] = op(B)^T[n, k] @ op(A)^T[k, m].
  at::Tensor x = wrap(p.b, p.transb, p.ldb, p.n, p.k, p.batch, p.stride_b, type, batched);
  at::Tensor w = wrap(p.a, p.transa, p.lda, p.k, p.m, p.batch, p.stride_a, type, batched);
  at::Tensor out = wrap(p.c, 'n', p.ldc, p.n, p.m, p.batch, p.stride_c, type, batched);
  std::optional<at::Tensor> bias;
  if (p.kind == 2) bias = wrap(p.bias, 'n', p.m, 1, p.m, 1, 0, type, false).view({p.m});
  torch_product(p, x, w, bias ? &*bias : nullptr, out);
}

int default_entry(void* /*user*/, const tunekit_gemm_problem* p, char* error, size_t size) {
  t_in_default = true;
  try {
    run_default(*p);
    t_in_default = false;
    return 0;
  } catch (const std::exception& e) {
    t_in_default = false;
    std::snprintf(error, size, "%s", e.what());
    return 1;
  }
}

// ---------------------------------------------------------------------------------------------
// Building the BLAS problem of a torch call.

/// Why a pair of row-major operands x[.., M, K] and w[.., K, N] cannot go to tunekit (kServed
/// when it can).
Reason operands_reason(const at::Tensor& x, const at::Tensor& w) {
  if (t_in_default) return kReentrant;
  if (x.device().type() != at::kCPU || w.device().type() != at::kCPU) return kDevice;
  const at::ScalarType t = x.scalar_type();
  if ((t != at::kFloat && t != at::kBFloat16) || w.scalar_type() != t) return kDtype;
  if (x.layout() != at::kStrided || w.layout() != at::kStrided) return kLayout;
  if (x.numel() == 0 || w.numel() == 0) return kEmpty;
  return kServed;
}

/// A problem for x[.., M, K] @ w[.., K, N] -> out[.., M, N] (dims are the last two), or the
/// reason it cannot be built.
Reason make_problem(const at::Tensor& x, const at::Tensor& w, const at::Tensor& out,
                    tunekit_gemm_problem& p) {
  const std::int64_t d = x.dim();
  const std::int64_t M = x.size(d - 2), K = x.size(d - 1), N = w.size(d - 1);
  const auto a = blas_operand(K, N, w.stride(d - 2), w.stride(d - 1));
  const auto b = blas_operand(M, K, x.stride(d - 2), x.stride(d - 1));
  if (!a || !b) return kLayout;
  p = tunekit_gemm_problem{};
  p.dtype = x.scalar_type() == at::kBFloat16 ? 2 : 0;
  p.transa = a->trans;
  p.transb = b->trans;
  p.m = N;
  p.n = M;
  p.k = K;
  p.lda = a->ld;
  p.ldb = b->ld;
  p.ldc = N;
  p.batch = 1;
  p.alpha = 1;
  p.a = w.data_ptr();
  p.b = x.data_ptr();
  p.c = out.data_ptr();
  for (std::int64_t v : {p.m, p.n, p.k, p.lda, p.ldb}) {
    if (v > kMaxBlasInt) return kSize;
  }
  return kServed;
}

/// Adds the batch of 3-D operands to `p` (strided batched; strides 0 broadcast).
Reason add_batch(const at::Tensor& x, const at::Tensor& w, tunekit_gemm_problem& p) {
  p.kind = 1;
  p.batch = x.size(0);
  p.stride_a = p.batch == 1 ? p.lda * (p.transa == 'n' ? p.k : p.m) : w.stride(0);
  p.stride_b = p.batch == 1 ? p.ldb * (p.transb == 'n' ? p.n : p.k) : x.stride(0);
  p.stride_c = p.m * p.n;
  if (p.batch > kMaxBlasInt || p.stride_a < 0 || p.stride_b < 0) return kSize;
  return kServed;
}

void run_tunekit(const tunekit_gemm_problem& p, const Call& call) {
  CallScope scope(&call);
  char error[1024] = {0};
  const int rc = tunekit_gemm_run(&p, error, sizeof error);
  TORCH_CHECK(rc == 0, "tunekit: ", error);
}

// ---------------------------------------------------------------------------------------------
// The aten overrides: one request type for the four products, functional and out= forms.

enum class Op { kMm, kAddmm, kBmm, kBaddbmm };

struct Request {
  Op op;
  const at::Tensor* input;  // addmm/baddbmm's input (beta * input)
  const at::Tensor& x;
  const at::Tensor& w;
  double beta = 0;
  double alpha = 1;
  bool in_place = false;  // addmm_ / baddbmm_: out is the input
  bool batched() const { return op == Op::kBmm || op == Op::kBaddbmm; }
};

/// Whether alpha and beta are finite and within float's range, as PyTorch's float and bf16
/// kernels need them (outside it PyTorch raises or computes inf/NaN itself).
bool scalars_fit(const Request& r) {
  constexpr double kMax = std::numeric_limits<float>::max();
  return std::isfinite(r.alpha) && std::isfinite(r.beta) && std::abs(r.alpha) <= kMax &&
         std::abs(r.beta) <= kMax;
}

bool shapes_fit(const Request& r) {
  const std::int64_t d = r.batched() ? 3 : 2;
  return r.x.dim() == d && r.w.dim() == d && r.x.size(d - 1) == r.w.size(d - 2) &&
         (d == 2 || r.x.size(0) == r.w.size(0));
}

/// The product's sizes, [M, N] or [batch, M, N], without allocating (a call's hot path).
struct OutSizes {
  std::array<std::int64_t, 3> dims{};
  std::size_t count = 0;
  at::IntArrayRef ref() const { return {dims.data(), count}; }
};

OutSizes out_sizes(const Request& r) {
  if (r.batched()) return {{r.x.size(0), r.x.size(1), r.w.size(2)}, 3};
  return {{r.x.size(0), r.w.size(1), 0}, 2};
}

double product_flops(const Request& r) {
  if (!shapes_fit(r)) return 0;
  double flops = 2.0;
  for (std::int64_t v : out_sizes(r).ref()) flops *= static_cast<double>(v);
  return flops * static_cast<double>(r.x.size(r.x.dim() - 1));
}

/// PyTorch's own kernel for the request, into `out` (what stock torch runs).
void stock_into(const Request& r, at::Tensor& out) {
  switch (r.op) {
    case Op::kMm:
      at::cpu::mm_out(out, r.x, r.w);
      return;
    case Op::kAddmm:
      if (r.in_place)
        at::cpu::addmm_(out, r.x, r.w, r.beta, r.alpha);
      else
        at::cpu::addmm_out(out, *r.input, r.x, r.w, r.beta, r.alpha);
      return;
    case Op::kBmm:
      at::cpu::bmm_out(out, r.x, r.w);
      return;
    case Op::kBaddbmm:
      if (r.in_place)
        at::cpu::baddbmm_(out, r.x, r.w, r.beta, r.alpha);
      else
        at::cpu::baddbmm_out(out, *r.input, r.x, r.w, r.beta, r.alpha);
      return;
  }
}

/// PyTorch's own functional kernel for the request (its own errors for bad arguments).
at::Tensor stock_new(const Request& r) {
  switch (r.op) {
    case Op::kMm:
      return at::cpu::mm(r.x, r.w);
    case Op::kAddmm:
      return at::cpu::addmm(*r.input, r.x, r.w, r.beta, r.alpha);
    case Op::kBmm:
      return at::cpu::bmm(r.x, r.w);
    case Op::kBaddbmm:
      return at::cpu::baddbmm(*r.input, r.x, r.w, r.beta, r.alpha);
  }
  return {};
}

/// out = beta * input + alpha * x @ w for addmm/baddbmm: a 1-D input with beta 1 on a 2-D
/// product is GemmAndBias (bias per output column); otherwise input is broadcast into out and
/// the problem reads it through beta (beta 0: input ignored, as PyTorch).
Reason add_input(const at::Tensor& input, double beta, at::Tensor& out, tunekit_gemm_problem& p,
                 const at::Tensor** bias) {
  if (input.scalar_type() != out.scalar_type() || input.device().type() != at::kCPU ||
      input.layout() != at::kStrided) {
    return kBias;
  }
  p.beta = beta;
  if (beta == 0) return kServed;
  if (p.kind == 0 && beta == 1 && input.dim() == 1 && input.size(0) == p.m &&
      input.stride(0) == 1) {
    p.kind = 2;
    p.beta = 0;
    p.bias = input.data_ptr();
    *bias = &input;
    return kServed;
  }
  if (!at::is_expandable_to(input.sizes(), out.sizes())) return kBias;
  if (!input.is_same(out)) out.copy_(input.expand(out.sizes()));
  return kServed;
}

/// Why a request cannot go to tunekit whatever its output (kServed when it may): shapes that do
/// not multiply (PyTorch reports them), the operands, alpha and beta.
Reason precheck(const Request& r) {
  if (!shapes_fit(r)) return kLayout;
  const Reason why = operands_reason(r.x, r.w);
  if (why != kServed) return why;
  return scalars_fit(r) ? kServed : kScalar;
}

/// The problem of a request that passed precheck(), into `out` of the product's sizes, or the
/// reason it goes to PyTorch after all (out's layout, the operands' strides, the input).
Reason plan(const Request& r, at::Tensor& out, tunekit_gemm_problem& p, const at::Tensor** bias) {
  if (out.scalar_type() != r.x.scalar_type() || !out.is_contiguous() || out.is_alias_of(r.x) ||
      out.is_alias_of(r.w)) {
    return kLayout;
  }
  Reason why = make_problem(r.x, r.w, out, p);
  if (why == kServed && r.batched()) why = add_batch(r.x, r.w, p);
  p.alpha = r.alpha;
  if (why == kServed && r.input != nullptr) why = add_input(*r.input, r.beta, out, p, bias);
  return why;
}

/// Counts the request and runs it into `out`: through tunekit when `why` is kServed (with the
/// problem planned for it), else PyTorch's own kernel.
at::Tensor& finish(const Request& r, at::Tensor& out, Reason why, const tunekit_gemm_problem& p,
                   const at::Tensor* bias) {
  count(why, product_flops(r));
  if (why != kServed) {
    stock_into(r, out);
    return out;
  }
  const Call call{&r.x, &r.w, bias, &out};
  run_tunekit(p, call);
  return out;
}

at::Tensor& run_into(const Request& r, at::Tensor& out) {
  tunekit_gemm_problem p{};
  const at::Tensor* bias = nullptr;
  Reason why = precheck(r);
  if (why == kServed && out.sizes() != out_sizes(r).ref()) why = kLayout;
  if (why == kServed) why = plan(r, out, p, &bias);
  return finish(r, out, why, p, bias);
}

at::Tensor run_new(const Request& r) {
  const Reason why = precheck(r);
  if (why != kServed) {
    count(why, product_flops(r));
    return stock_new(r);  // PyTorch's result, or its own error in its own words
  }
  at::Tensor out = at::empty(out_sizes(r).ref(), r.x.options());
  tunekit_gemm_problem p{};
  const at::Tensor* bias = nullptr;
  const Reason planned = plan(r, out, p, &bias);  // sets bias: before finish() reads it
  finish(r, out, planned, p, bias);
  return out;
}

at::Tensor tk_mm(const at::Tensor& x, const at::Tensor& w) {
  return run_new({Op::kMm, nullptr, x, w});
}
at::Tensor& tk_mm_out(const at::Tensor& x, const at::Tensor& w, at::Tensor& out) {
  return run_into({Op::kMm, nullptr, x, w}, out);
}
at::Tensor tk_bmm(const at::Tensor& x, const at::Tensor& w) {
  return run_new({Op::kBmm, nullptr, x, w});
}
at::Tensor& tk_bmm_out(const at::Tensor& x, const at::Tensor& w, at::Tensor& out) {
  return run_into({Op::kBmm, nullptr, x, w}, out);
}
at::Tensor tk_addmm(const at::Tensor& input, const at::Tensor& x, const at::Tensor& w,
                    const at::Scalar& beta, const at::Scalar& alpha) {
  return run_new({Op::kAddmm, &input, x, w, beta.toDouble(), alpha.toDouble()});
}
at::Tensor& tk_addmm_out(const at::Tensor& input, const at::Tensor& x, const at::Tensor& w,
                         const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return run_into({Op::kAddmm, &input, x, w, beta.toDouble(), alpha.toDouble()}, out);
}
at::Tensor& tk_addmm_(at::Tensor& self, const at::Tensor& x, const at::Tensor& w,
                      const at::Scalar& beta, const at::Scalar& alpha) {
  Request r{Op::kAddmm, &self, x, w, beta.toDouble(), alpha.toDouble()};
  r.in_place = true;
  return run_into(r, self);
}
at::Tensor& tk_baddbmm_(at::Tensor& self, const at::Tensor& x, const at::Tensor& w,
                        const at::Scalar& beta, const at::Scalar& alpha) {
  Request r{Op::kBaddbmm, &self, x, w, beta.toDouble(), alpha.toDouble()};
  r.in_place = true;
  return run_into(r, self);
}
at::Tensor tk_baddbmm(const at::Tensor& input, const at::Tensor& x, const at::Tensor& w,
                      const at::Scalar& beta, const at::Scalar& alpha) {
  return run_new({Op::kBaddbmm, &input, x, w, beta.toDouble(), alpha.toDouble()});
}
at::Tensor& tk_baddbmm_out(const at::Tensor& input, const at::Tensor& x, const at::Tensor& w,
                           const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  return run_into({Op::kBaddbmm, &input, x, w, beta.toDouble(), alpha.toDouble()}, out);
}

// ---------------------------------------------------------------------------------------------
// Switching the overrides on and off, and the counters.

std::mutex g_mutex;
std::unique_ptr<torch::Library> g_library;  // the aten CPU overrides while enabled

void install_default(const std::vector<std::string>& keys, const std::vector<std::string>& values,
                     const std::string& version, const std::string& detail) {
  TORCH_CHECK(keys.size() == values.size(), "tunekit.torch: validator keys and values differ");
  TORCH_CHECK(tunekit_gemm_abi_version() == TUNEKIT_GEMM_ABI_VERSION,
              "tunekit.torch: libtunekit implements GEMM ABI ", tunekit_gemm_abi_version(),
              ", this extension was built for ", TUNEKIT_GEMM_ABI_VERSION);
  std::vector<const char*> k, v;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    k.push_back(keys[i].c_str());
    v.push_back(values[i].c_str());
  }
  tunekit_gemm_default d{"torch", version.c_str(), detail.c_str(), &default_entry,
                         nullptr, k.data(),        v.data(),       k.size()};
  char error[1024] = {0};
  TORCH_CHECK(tunekit_gemm_install_default(&d, error, sizeof error) == 0, "tunekit.torch: ", error);
}

void enable(std::vector<std::string> keys, std::vector<std::string> values, std::string version,
            std::string detail) {
  std::lock_guard<std::mutex> lock(g_mutex);
  install_default(keys, values, version, detail);
  if (g_library) return;
  // PyTorch warns once per op that a kernel is overridden: that is the point here.
  c10::WarningUtils::WarningHandlerGuard quiet(nullptr);
  auto lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::CPU,
                                              __FILE__, __LINE__);
  lib->impl("mm", TORCH_FN(tk_mm));
  lib->impl("mm.out", TORCH_FN(tk_mm_out));
  lib->impl("bmm", TORCH_FN(tk_bmm));
  lib->impl("bmm.out", TORCH_FN(tk_bmm_out));
  lib->impl("addmm", TORCH_FN(tk_addmm));
  lib->impl("addmm.out", TORCH_FN(tk_addmm_out));
  lib->impl("addmm_", TORCH_FN(tk_addmm_));
  lib->impl("baddbmm", TORCH_FN(tk_baddbmm));
  lib->impl("baddbmm.out", TORCH_FN(tk_baddbmm_out));
  lib->impl("baddbmm_", TORCH_FN(tk_baddbmm_));
  g_library = std::move(lib);
}

void disable() {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_library.reset();  // deregisters: PyTorch's own kernels are back
}

bool is_enabled() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_library != nullptr;
}

std::tuple<std::vector<std::string>, std::vector<std::int64_t>, std::vector<double>> stats() {
  std::vector<std::string> names(kReasonNames.begin(), kReasonNames.end());
  std::vector<std::int64_t> calls;
  std::vector<double> flops;
  for (int i = 0; i < kReasons; ++i) {
    calls.push_back(g_calls[i].load());
    flops.push_back(g_flops[i].load());
  }
  return {names, calls, flops};
}

void reset_stats() {
  for (int i = 0; i < kReasons; ++i) {
    g_calls[i].store(0);
    g_flops[i].store(0);
  }
}

}  // namespace
}  // namespace tunekit_torch

TORCH_LIBRARY(tunekit, m) {
  m.def("enable(str[] keys, str[] values, str version, str detail) -> ()", &tunekit_torch::enable);
  m.def("disable() -> ()", &tunekit_torch::disable);
  m.def("is_enabled() -> bool", &tunekit_torch::is_enabled);
  m.def("stats() -> (str[], int[], float[])", &tunekit_torch::stats);
  m.def("reset_stats() -> ()", &tunekit_torch::reset_stats);
}
