// The bf16-output adapter: a float-C run into the calling thread's scratch, rounded to bf16.
// See src/ops/bf16_output.hpp.
#include "ops/bf16_output.hpp"

#include "ops/gemm_internal.hpp"

namespace tunekit::ops::detail {
namespace {

constexpr std::size_t kScratchAlign = 64;

// The calling thread's float scratch (grow-only).
AlignedBuffer& output_scratch() {
  thread_local AlignedBuffer buffer;
  return buffer;
}

std::size_t element_count(std::int64_t v) noexcept {
  return v > 0 ? static_cast<std::size_t>(v) : 0;
}

// Calls fn(bf16 column, float column) for the m elements of every column of every output of p,
// where `c` and `c_float` hold the outputs at p's ldc and stride_c.
template <class F>
void for_each_output_column(const GemmParams& p, BFloat16* c, float* c_float, F&& fn) {
  const std::int64_t batches = p.kind == GemmKind::kStridedBatched ? p.batch : 1;
  for (std::int64_t b = 0; b < batches; ++b) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      const std::size_t offset = element_count(b * p.stride_c + j * p.ldc);
      fn(c + offset, c_float + offset);
    }
  }
}

}  // namespace

GemmParams float_output_twin(const GemmParams& p) noexcept {
  GemmParams q = p;
  q.dtype = float_output_dtype(p.dtype);
  return q;
}

Status run_with_float_output(const GemmParams& p, ParamsRunRef run_float) {
  const std::size_t c_bytes = (p.c_bytes() * 2 + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
  const std::size_t bias_count = p.bias_bytes() / sizeof(BFloat16);
  auto* base =
      static_cast<unsigned char*>(output_scratch().get(c_bytes + bias_count * sizeof(float)));
  if (base == nullptr) {
    return Status(StatusCode::kRuntimeError, "out of memory for the float copy of a bf16 C");
  }
  auto* c = static_cast<BFloat16*>(p.c);
  auto* c_float = reinterpret_cast<float*>(base);
  const std::size_t m = element_count(p.m);
  GemmParams twin = float_output_twin(p);
  twin.c = c_float;
  if (p.beta != 0.0) {
    for_each_output_column(p, c, c_float, [m](BFloat16* x, float* y) { to_float(x, y, m); });
  }
  if (bias_count > 0) {
    auto* bias = reinterpret_cast<float*>(base + c_bytes);
    to_float(static_cast<const BFloat16*>(p.bias), bias, bias_count);
    twin.bias = bias;
  }
  TUNEKIT_RETURN_IF_ERROR(run_float(twin));
  for_each_output_column(p, c, c_float, [m](BFloat16* x, float* y) { to_bfloat16(y, x, m); });
  return Status::ok();
}

const void* float_output_scratch() noexcept { return output_scratch().data(); }

std::size_t float_output_scratch_bytes() noexcept { return output_scratch().capacity(); }

}  // namespace tunekit::ops::detail
