// The GEMM candidate skeleton and the BLAS-style driver shared by the library candidates:
// batch loop, bf16 -> float staging, bias epilogue, entry-point descriptions.
#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <vector>

#include "ops/bf16_output.hpp"
#include "ops/gemm_internal.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops::detail {
namespace {

// Copies the stored rows x cols matrix at `src` (leading dimension ld) into a compact float
// matrix (leading dimension rows) in `dst`; returns rows.
std::int64_t stage_bf16(const void* src, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                        std::vector<float>& dst) {
  const auto* from = static_cast<const BFloat16*>(src);
  dst.resize(static_cast<std::size_t>(rows * cols));
  for (std::int64_t j = 0; j < cols; ++j) {
    to_float(from + j * ld, dst.data() + j * rows, static_cast<std::size_t>(rows));
  }
  return rows;
}

// The calling thread's staging buffer for operand 0 (A) or 1 (B), reused across calls.
std::vector<float>& staging_buffer(int operand) {
  thread_local std::vector<float> buffers[2];
  return buffers[operand];
}

// The stored A (stage_bf16_a) or B (stage_bf16_b) of the bf16 problem `p`, read at `stored` (one
// batch entry's), as a compact float matrix of the same storage order in `dst`; returns its
// leading dimension.
std::int64_t stage_bf16_a(const GemmParams& p, const void* stored, std::vector<float>& dst) {
  return stage_bf16(stored, p.a_is_n() ? p.m : p.k, p.a_is_n() ? p.k : p.m, p.lda, dst);
}

std::int64_t stage_bf16_b(const GemmParams& p, const void* stored, std::vector<float>& dst) {
  return stage_bf16(stored, p.b_is_n() ? p.k : p.n, p.b_is_n() ? p.n : p.k, p.ldb, dst);
}

}  // namespace

void add_bias(DType output, void* c, std::int64_t ldc, std::int64_t m, std::int64_t n,
              const void* bias) {
  if (output == DType::kDouble) {
    auto* cc = static_cast<double*>(c);
    const auto* bb = static_cast<const double*>(bias);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) cc[i + j * ldc] += bb[i];
    }
  } else {
    auto* cc = static_cast<float*>(c);
    const auto* bb = static_cast<const float*>(bias);
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < m; ++i) cc[i + j * ldc] += bb[i];
    }
  }
}

Status run_as_gemm_call_sequence(const GemmParams& p, bool native_bf16, GemmCallRef gemm) {
  const std::size_t in_elem = element_bytes(p.dtype);
  const std::size_t out_elem = output_element_bytes(p.dtype);
  const std::int64_t batches = p.kind == GemmKind::kStridedBatched ? p.batch : 1;
  const bool stage = p.dtype == DType::kBFloat16Float && !native_bf16;
  for (std::int64_t i = 0; i < batches; ++i) {
    GemmCall call = plain_gemm_call(p);
    if (stage) call.real = DType::kFloat;
    call.a =
        static_cast<const unsigned char*>(p.a) + static_cast<std::size_t>(i * p.stride_a) * in_elem;
    call.b =
        static_cast<const unsigned char*>(p.b) + static_cast<std::size_t>(i * p.stride_b) * in_elem;
    call.c = static_cast<unsigned char*>(p.c) + static_cast<std::size_t>(i * p.stride_c) * out_elem;
    if (stage) {
      std::vector<float>& staged_a = staging_buffer(0);
      std::vector<float>& staged_b = staging_buffer(1);
      call.lda = stage_bf16_a(p, call.a, staged_a);
      call.ldb = stage_bf16_b(p, call.b, staged_b);
      call.a = staged_a.data();
      call.b = staged_b.data();
    }
    TUNEKIT_RETURN_IF_ERROR(gemm(call));
    if (p.kind == GemmKind::kGemmAndBias) {
      add_bias(p.dtype == DType::kDouble ? DType::kDouble : DType::kFloat, call.c, p.ldc, p.m, p.n,
               p.bias);
    }
  }
  return Status::ok();
}

LibraryBinding describe_entry(const void* entry, std::string symbol, std::string detail) {
  LibraryBinding binding;
  binding.symbol = std::move(symbol);
  binding.detail = std::move(detail);
  Dl_info info{};
  link_map* map = nullptr;
  if (entry != nullptr &&
      dladdr1(entry, &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) != 0) {
    binding.file = info.dli_fname != nullptr ? info.dli_fname : "";
    Lmid_t lmid = LM_ID_BASE;
    if (map != nullptr && dlinfo(map, RTLD_DI_LMID, &lmid) == 0) binding.namespace_id = lmid;
  }
  return binding;
}

}  // namespace tunekit::ops::detail

namespace tunekit::ops {

Expected<std::string> GemmCandidate::implementation(const GemmParams& params) {
  TUNEKIT_RETURN_IF_ERROR(supports(params));
  Expected<LibraryBinding> b = binding();
  if (!b) return b.status();
  return b->detail;
}

}  // namespace tunekit::ops

namespace tunekit::ops::detail {

// ---------------------------------------------------------------------------------------------
// GemmCandidateBase

Status GemmCandidateBase::unsupported(std::string_view reason) const {
  return Status(StatusCode::kUnsupported, fmt::format("{}: {}", name_, reason));
}

Status GemmCandidateBase::supports(const GemmParams& params) const {
  TUNEKIT_RETURN_IF_ERROR(params.validate_shape());
  return adapts(params) ? supports_impl(float_output_twin(params)) : supports_impl(params);
}

Status GemmCandidateBase::prepare(const GemmParams& params) {
  TUNEKIT_RETURN_IF_ERROR(supports(params));
  TUNEKIT_RETURN_IF_ERROR(adapts(params) ? prepare_impl(float_output_twin(params))
                                         : prepare_impl(params));
  // Idle workers of another runtime may still spin (5-8 ms after its last call): let them stop
  // before this candidate is timed. Same runtime: its workers are this candidate's own.
  if (last_runtime() != runtime_id()) (void)settle_threads();
  return Status::ok();
}

Status GemmCandidateBase::run(const GemmParams& params) {
  if (!params.passes_quick_checks()) TUNEKIT_RETURN_IF_ERROR(params.validate());
  if (adapts(params)) [[unlikely]] {
    return run_adapted(params);
  }
  TUNEKIT_RETURN_IF_ERROR(supports_impl(params));
  note_runtime(runtime_id());
  return run_impl(params);
}

Status GemmCandidateBase::run_resolved(const GemmParams& params) {
  // The key's fields were validated when the op cached it (GemmKey: a key match means equal
  // fields); support is re-checked, since it may depend on alpha and beta.
  if (!params.passes_call_checks()) return run(params);
  if (adapts(params)) [[unlikely]] {
    return run_adapted(params);
  }
  TUNEKIT_RETURN_IF_ERROR(supports_impl(params));
  note_runtime(runtime_id());
  return run_impl(params);
}

Status GemmCandidateBase::run_adapted(const GemmParams& params) {
  TUNEKIT_RETURN_IF_ERROR(supports_impl(float_output_twin(params)));
  note_runtime(runtime_id());
  auto run_float = [this](const GemmParams& twin) { return run_impl(twin); };
  return run_with_float_output(params, run_float);
}

}  // namespace tunekit::ops::detail
