// oneDNN candidates: "onednn_matmul" (the matmul primitive, cached per problem; bf16 natively
// from avx512_core up, bf16 C included, staged to float below), "onednn_matmul[packed_b]" (weights
// reordered to oneDNN's blocked layout on every call) and "onednn_sgemm" (dnnl_sgemm).
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "ops/bf16_output.hpp"
#include "ops/gemm_internal.hpp"
#include "ops/onednn_shared.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops::detail {
namespace {

std::string dnnl_error(dnnl_status_t status) {
  switch (status) {
    case dnnl_success:
      return "success";
    case dnnl_out_of_memory:
      return "out of memory";
    case dnnl_invalid_arguments:
      return "invalid arguments";
    case dnnl_unimplemented:
      return "unimplemented";
    case dnnl_iterator_ends:
      return "iterator ends";
    case dnnl_runtime_error:
      return "runtime error";
    case dnnl_not_required:
      return "not required";
  }
  return fmt::format("status {}", static_cast<int>(status));
}

std::string dnnl_version_string() {
  const dnnl_version_t* v = dnnl_version();
  return v != nullptr ? fmt::format("oneDNN {}.{}.{}", v->major, v->minor, v->patch) : "oneDNN";
}

// The highest ISA oneDNN dispatches to on this CPU (dnnl_get_effective_cpu_isa), in
// dnnl_types.h's words: "avx2" on Zen 3, "avx512_core_bf16" on Zen 4, "avx512_core_amx" on AMX.
std::string_view dnnl_isa_name() {
  struct IsaName {
    dnnl_cpu_isa_t isa;
    std::string_view name;
  };
  static constexpr IsaName kNames[] = {
      {dnnl_cpu_isa_all, "all"},
      {dnnl_cpu_isa_sse41, "sse41"},
      {dnnl_cpu_isa_avx, "avx"},
      {dnnl_cpu_isa_avx2, "avx2"},
      {dnnl_cpu_isa_avx512_mic, "avx512_mic"},
      {dnnl_cpu_isa_avx512_mic_4ops, "avx512_mic_4ops"},
      {dnnl_cpu_isa_avx512_core, "avx512_core"},
      {dnnl_cpu_isa_avx512_core_vnni, "avx512_core_vnni"},
      {dnnl_cpu_isa_avx512_core_bf16, "avx512_core_bf16"},
      {dnnl_cpu_isa_avx512_core_amx, "avx512_core_amx"},
      {dnnl_cpu_isa_avx2_vnni, "avx2_vnni"},
  };
  const dnnl_cpu_isa_t isa = dnnl_get_effective_cpu_isa();
  for (const IsaName& n : kNames) {
    if (n.isa == isa) return n.name;
  }
  return "unknown";
}

// The CPU engine, created once and kept for the life of the process.
dnnl_engine_t cpu_engine() {
  static dnnl_engine_t engine = [] {
    dnnl_engine_t e = nullptr;
    if (dnnl_engine_create(&e, dnnl_cpu, 0) != dnnl_success) e = nullptr;
    return e;
  }();
  return engine;
}

// One stream per calling thread (streams are not shared between concurrent executions).
dnnl_stream_t thread_stream() {
  struct Holder {
    dnnl_stream_t stream = nullptr;
    ~Holder() {
      if (stream != nullptr) dnnl_stream_destroy(stream);
    }
  };
  thread_local Holder holder;
  if (holder.stream == nullptr && cpu_engine() != nullptr) {
    if (dnnl_stream_create(&holder.stream, cpu_engine(), dnnl_stream_default_flags) !=
        dnnl_success) {
      holder.stream = nullptr;
    }
  }
  return holder.stream;
}

// Memory objects wrapping caller pointers for one execution; destroyed afterwards.
class MemoryArgs {
 public:
  MemoryArgs() = default;
  MemoryArgs(const MemoryArgs&) = delete;
  MemoryArgs& operator=(const MemoryArgs&) = delete;
  ~MemoryArgs() {
    for (const dnnl_exec_arg_t& a : args_) dnnl_memory_destroy(a.memory);
  }
  dnnl_status_t add(int arg, const dnnl_memory_desc_t& md, const void* data) {
    dnnl_memory_t mem = nullptr;
    const dnnl_status_t s = dnnl_memory_create(&mem, &md, cpu_engine(), const_cast<void*>(data));
    if (s == dnnl_success) args_.push_back({arg, mem});
    return s;
  }
  int size() const { return static_cast<int>(args_.size()); }
  const dnnl_exec_arg_t* data() const { return args_.data(); }
  dnnl_memory_t memory(std::size_t i) const { return args_[i].memory; }

 private:
  std::vector<dnnl_exec_arg_t> args_;
};

// ---------------------------------------------------------------------------------------------
// onednn_matmul

/// A created matmul (and, for packed weights, the reorder into the matmul's layout).
struct MatmulPrimitive {
  dnnl_primitive_t matmul = nullptr;
  dnnl_primitive_t reorder = nullptr;  ///< user weights -> packed weights (packed only)
  dnnl_memory_desc_t src_md{}, weights_md{}, dst_md{}, bias_md{};
  dnnl_memory_desc_t packed_weights_md{};
  dnnl_memory_desc_t scratchpad_md{};
  std::size_t scratchpad_bytes = 0;
  std::size_t packed_weights_bytes = 0;
  bool staged = false;    ///< bf16 A and B converted to float first (no bf16 matmul on this CPU)
  bool has_bias = false;  ///< bias fused as the matmul's own bias (alpha == 1)
  bool bias_post_op = false;  ///< bias as binary-add post-op 0 (after the alpha scale)
  std::string impl;

  MatmulPrimitive() = default;
  MatmulPrimitive(const MatmulPrimitive&) = delete;
  MatmulPrimitive& operator=(const MatmulPrimitive&) = delete;
  ~MatmulPrimitive() {
    if (matmul != nullptr) dnnl_primitive_destroy(matmul);
    if (reorder != nullptr) dnnl_primitive_destroy(reorder);
  }
};

struct Views {
  dnnl_memory_desc_t src{}, weights{}, dst{}, bias{};
};

dnnl_status_t make_views(const GemmParams& p, bool packed, Views& v) {
  const dnnl_data_type_t in = has_bf16_inputs(p.dtype) ? dnnl_bf16 : dnnl_f32;
  const dnnl_data_type_t out = p.dtype == DType::kBFloat16 ? dnnl_bf16 : dnnl_f32;
  const MatmulView m = matmul_view(p);
  dnnl_status_t s =
      dnnl_memory_desc_init_by_strides(&v.src, m.ndims, m.src.dims, in, m.src.strides);
  if (s == dnnl_success) {
    s = packed ? dnnl_memory_desc_init_by_tag(&v.weights, m.ndims, m.weights.dims, in,
                                              dnnl_format_tag_any)
               : dnnl_memory_desc_init_by_strides(&v.weights, m.ndims, m.weights.dims, in,
                                                  m.weights.strides);
  }
  if (s == dnnl_success) {
    s = dnnl_memory_desc_init_by_strides(&v.dst, m.ndims, m.dst.dims, out, m.dst.strides);
  }
  if (s == dnnl_success && p.kind == GemmKind::kGemmAndBias) {
    s = dnnl_memory_desc_init_by_strides(&v.bias, 2, m.bias.dims, out, m.bias.strides);
  }
  return s;
}

// `p` with its bf16 A and B converted to float into the calling thread's buffers, in the same
// layout (leading dimensions, batch strides), so the float primitive reads them as it would the
// bf16 ones. Single-threaded, like the other candidates' staging (run_as_gemm_calls).
GemmParams staged_to_float(const GemmParams& p) {
  thread_local std::vector<float> a, b;
  const std::size_t a_count = p.a_bytes() / element_bytes(p.dtype);
  const std::size_t b_count = p.b_bytes() / element_bytes(p.dtype);
  a.resize(a_count);
  b.resize(b_count);
  to_float(static_cast<const BFloat16*>(p.a), a.data(), a_count);
  to_float(static_cast<const BFloat16*>(p.b), b.data(), b_count);
  GemmParams q = p;
  q.dtype = DType::kFloat;
  q.a = a.data();
  q.b = b.data();
  return q;
}

const char* matmul_name(OnednnWeights mode) {
  switch (mode) {
    case OnednnWeights::kPackedPerCall:
      return "onednn_matmul[packed_b]";
    case OnednnWeights::kConstant:
      return "onednn_matmul[constant_b]";
    default:
      return "onednn_matmul";
  }
}

class OnednnMatmul final : public GemmCandidateBase {
 public:
  explicit OnednnMatmul(OnednnWeights mode)
      : GemmCandidateBase(matmul_name(mode), "onednn"),
        packed_(mode != OnednnWeights::kPlain),
        constant_(mode == OnednnWeights::kConstant) {}

  Expected<LibraryBinding> binding() override {
    return describe_entry(reinterpret_cast<const void*>(&dnnl_primitive_execute),
                          "dnnl_primitive_execute",
                          fmt::format("{} matmul{}, isa={}", dnnl_version_string(),
                                      constant_ ? " with weights reordered once"
                                      : packed_ ? " with weights reordered per call"
                                                : "",
                                      dnnl_isa_name()));
  }

  /// Implementation oneDNN chose for `p` (e.g. "brg:avx512_core_amx_bf16"); creates the
  /// primitive when needed.
  Expected<std::string> implementation(const GemmParams& p) override {
    TUNEKIT_RETURN_IF_ERROR(supports(p));
    Expected<std::shared_ptr<const MatmulPrimitive>> prim = get(p);
    if (!prim) return prim.status();
    return (*prim)->impl;
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.dtype == DType::kDouble) return unsupported("oneDNN 2.6 matmul has no f64 on CPU");
    return Status::ok();
  }

  bool writes_bf16_output() const override { return true; }

  Status prepare_impl(const GemmParams& p) override {
    sync_main_threads();
    Expected<std::shared_ptr<const MatmulPrimitive>> got = get(p);
    if (got && float_output(p, **got)) return get(float_output_twin(p)).status();
    return got.status();
  }

  Status run_impl(const GemmParams& problem) override {
    sync_main_threads();
    Expected<std::shared_ptr<const MatmulPrimitive>> got = get(problem);
    if (!got) return got.status();
    const MatmulPrimitive& prim = **got;
    if (float_output(problem, prim)) {
      auto run_float = [this](const GemmParams& twin) { return run_impl(twin); };
      return run_with_float_output(problem, run_float);
    }
    const GemmParams p = prim.staged ? staged_to_float(problem) : problem;
    dnnl_stream_t stream = thread_stream();
    if (stream == nullptr) return Status(StatusCode::kRuntimeError, "oneDNN stream unavailable");
    thread_local AlignedBuffer scratchpad, packed_weights;
    const void* weights = p.a;
    if (constant_) {
      auto packed = constant_weights(p, prim, stream);
      if (!packed) return packed.status();
      weights = *packed;
    } else if (prim.reorder != nullptr) {
      void* packed = packed_weights.get(prim.packed_weights_bytes);
      if (packed == nullptr) return Status(StatusCode::kRuntimeError, "out of memory");
      MemoryArgs reorder_args;
      if (reorder_args.add(DNNL_ARG_FROM, prim.weights_md, p.a) != dnnl_success ||
          reorder_args.add(DNNL_ARG_TO, prim.packed_weights_md, packed) != dnnl_success) {
        return Status(StatusCode::kRuntimeError, "oneDNN: cannot wrap weights memory");
      }
      const dnnl_status_t s =
          dnnl_primitive_execute(prim.reorder, stream, reorder_args.size(), reorder_args.data());
      if (s != dnnl_success) {
        return Status(StatusCode::kRuntimeError, "oneDNN weights reorder: " + dnnl_error(s));
      }
      weights = packed;
    }
    MemoryArgs args;
    dnnl_status_t s = args.add(DNNL_ARG_SRC, prim.src_md, p.b);
    if (s == dnnl_success) {
      s = args.add(DNNL_ARG_WEIGHTS,
                   prim.reorder != nullptr ? prim.packed_weights_md : prim.weights_md, weights);
    }
    if (s == dnnl_success) s = args.add(DNNL_ARG_DST, prim.dst_md, p.c);
    if (s == dnnl_success && prim.has_bias) s = args.add(DNNL_ARG_BIAS, prim.bias_md, p.bias);
    if (s == dnnl_success && prim.bias_post_op) {
      s = args.add(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, prim.bias_md, p.bias);
    }
    if (s == dnnl_success && prim.scratchpad_bytes > 0) {
      void* pad = scratchpad.get(prim.scratchpad_bytes);
      if (pad == nullptr) return Status(StatusCode::kRuntimeError, "out of memory");
      s = args.add(DNNL_ARG_SCRATCHPAD, prim.scratchpad_md, pad);
    }
    if (s != dnnl_success) {
      return Status(StatusCode::kRuntimeError, "oneDNN: cannot wrap operands: " + dnnl_error(s));
    }
    s = dnnl_primitive_execute(prim.matmul, stream, args.size(), args.data());
    if (s == dnnl_success) s = dnnl_stream_wait(stream);
    if (s != dnnl_success) {
      return Status(StatusCode::kRuntimeError, "oneDNN matmul execute: " + dnnl_error(s));
    }
    return Status::ok();
  }

 private:
  // A bf16-C problem without a bf16 matmul on this CPU (its primitive is the staged float one):
  // it runs as its float-C twin through the bf16-output adapter.
  static bool float_output(const GemmParams& p, const MatmulPrimitive& prim) {
    return prim.staged && p.dtype == DType::kBFloat16;
  }

  // Constant weights: reordered on the first run of this instance (which serves one problem)
  // into a buffer it owns, then reused.
  Expected<const void*> constant_weights(const GemmParams& p, const MatmulPrimitive& prim,
                                         dnnl_stream_t stream) {
    return constant_weights_.get(p, prim.packed_weights_bytes, false, [&](void* packed) {
      MemoryArgs reorder_args;
      if (reorder_args.add(DNNL_ARG_FROM, prim.weights_md, p.a) != dnnl_success ||
          reorder_args.add(DNNL_ARG_TO, prim.packed_weights_md, packed) != dnnl_success) {
        return Status(StatusCode::kRuntimeError, "oneDNN: cannot wrap weights memory");
      }
      dnnl_status_t s =
          dnnl_primitive_execute(prim.reorder, stream, reorder_args.size(), reorder_args.data());
      if (s == dnnl_success) s = dnnl_stream_wait(stream);
      if (s != dnnl_success) {
        return Status(StatusCode::kRuntimeError, "oneDNN weights reorder: " + dnnl_error(s));
      }
      return Status::ok();
    });
  }

  Expected<std::shared_ptr<const MatmulPrimitive>> get(const GemmParams& p) {
    return cache_.get(matmul_key(p, packed_), [&] { return create(p); });
  }

  // The primitive for `problem`; a bf16 problem for which oneDNN has no bf16 matmul on this CPU
  // (oneDNN 2.6 needs avx512_core: "unimplemented" on AVX2-only CPUs such as Zen 3) gets the
  // float primitive and runs staged, like the other candidates.
  Expected<std::shared_ptr<const MatmulPrimitive>> create(const GemmParams& problem) const {
    bool unimplemented = false;
    auto prim = create_for(problem, false, unimplemented);
    if (prim || !unimplemented || !has_bf16_inputs(problem.dtype)) return prim;
    return create_for(problem, true, unimplemented);
  }

  Expected<std::shared_ptr<const MatmulPrimitive>> create_for(const GemmParams& problem,
                                                              bool staged,
                                                              bool& unimplemented) const {
    if (cpu_engine() == nullptr) return unsupported("cannot create a oneDNN CPU engine");
    GemmParams p = problem;
    if (staged) p.dtype = DType::kFloat;
    Views v;
    dnnl_status_t s = make_views(p, packed_, v);
    if (s != dnnl_success) return unsupported("memory descriptors: " + dnnl_error(s));
    // oneDNN 2.6 scales (src * weights + bias) by the output scale, so with alpha != 1 the bias
    // is added afterwards by a binary post-op instead (beta is 0 with a bias: no sum post-op).
    const bool with_bias = p.kind == GemmKind::kGemmAndBias;
    const bool fused_bias = with_bias && p.alpha == 1.0;
    const bool bias_post_op = with_bias && !fused_bias;
    dnnl_matmul_desc_t desc;
    s = dnnl_matmul_desc_init(&desc, &v.src, &v.weights, fused_bias ? &v.bias : nullptr, &v.dst);
    if (s != dnnl_success) return unsupported("matmul descriptor: " + dnnl_error(s));
    dnnl_primitive_attr_t attr = nullptr;
    dnnl_post_ops_t post_ops = nullptr;
    s = dnnl_primitive_attr_create(&attr);
    if (s == dnnl_success)
      s = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (s == dnnl_success && p.alpha != 1.0) {
      const float alpha = static_cast<float>(p.alpha);
      s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &alpha);
    }
    if (s == dnnl_success && (p.beta != 0.0 || bias_post_op)) {
      s = dnnl_post_ops_create(&post_ops);
      if (s == dnnl_success && p.beta != 0.0) {
        s = dnnl_post_ops_append_sum(post_ops, static_cast<float>(p.beta));
      }
      if (s == dnnl_success && bias_post_op) {
        s = dnnl_post_ops_append_binary(post_ops, dnnl_binary_add, &v.bias);
      }
      if (s == dnnl_success) s = dnnl_primitive_attr_set_post_ops(attr, post_ops);
    }
    dnnl_primitive_desc_t pd = nullptr;
    if (s == dnnl_success) s = dnnl_primitive_desc_create(&pd, &desc, attr, cpu_engine(), nullptr);
    if (post_ops != nullptr) dnnl_post_ops_destroy(post_ops);
    if (attr != nullptr) dnnl_primitive_attr_destroy(attr);
    unimplemented = s == dnnl_unimplemented;
    if (s != dnnl_success) return unsupported("matmul primitive descriptor: " + dnnl_error(s));

    auto prim = std::make_shared<MatmulPrimitive>();
    const char* impl = nullptr;
    if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) {
      prim->impl = impl;
    }
    prim->staged = staged;
    if (staged) {
      prim->impl += problem.dtype == DType::kBFloat16
                        ? " (bf16 staged to f32, C through a float copy)"
                        : " (bf16 staged to f32)";
    }
    prim->src_md = v.src;
    prim->dst_md = v.dst;
    prim->bias_md = v.bias;
    prim->has_bias = fused_bias;
    prim->bias_post_op = bias_post_op;
    prim->scratchpad_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    prim->scratchpad_bytes = dnnl_memory_desc_get_size(&prim->scratchpad_md);
    if (packed_) {
      // The user's weights keep their strided layout; the matmul reads the layout it chose.
      Views user;
      s = make_views(p, false, user);
      prim->weights_md = user.weights;
      prim->packed_weights_md = *dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
      prim->packed_weights_bytes = dnnl_memory_desc_get_size(&prim->packed_weights_md);
      dnnl_primitive_desc_t reorder_pd = nullptr;
      if (s == dnnl_success) {
        s = dnnl_reorder_primitive_desc_create(&reorder_pd, &prim->weights_md, cpu_engine(),
                                               &prim->packed_weights_md, cpu_engine(), nullptr);
      }
      if (s == dnnl_success) s = dnnl_primitive_create(&prim->reorder, reorder_pd);
      if (reorder_pd != nullptr) dnnl_primitive_desc_destroy(reorder_pd);
      if (s != dnnl_success) {
        dnnl_primitive_desc_destroy(pd);
        return unsupported("weights reorder: " + dnnl_error(s));
      }
    } else {
      prim->weights_md = v.weights;
    }
    s = dnnl_primitive_create(&prim->matmul, pd);
    dnnl_primitive_desc_destroy(pd);
    if (s != dnnl_success) {
      return Status(StatusCode::kRuntimeError, "matmul primitive creation: " + dnnl_error(s));
    }
    return std::shared_ptr<const MatmulPrimitive>(std::move(prim));
  }

  bool packed_;
  bool constant_;
  PackedWeights constant_weights_;  // the constant weights
  MatmulCache<MatmulPrimitive> cache_;
};

// ---------------------------------------------------------------------------------------------
// onednn_sgemm

class OnednnSgemm final : public GemmCandidateBase {
 public:
  OnednnSgemm() : GemmCandidateBase("onednn_sgemm", "onednn") {}

  Expected<LibraryBinding> binding() override {
    return describe_entry(reinterpret_cast<const void*>(&dnnl_sgemm), "dnnl_sgemm",
                          fmt::format("{}, isa={}", dnnl_version_string(), dnnl_isa_name()));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.dtype != DType::kFloat) {
      return unsupported(fmt::format("dnnl_sgemm is float only, not {}", dtype_name(p.dtype)));
    }
    return Status::ok();
  }

  Status prepare_impl(const GemmParams&) override {
    // dnnl_sgemm pays a one-time cost on its first non-trivial call in a process: measured 58-64
    // ms for the first 32^3 or 300x17x33 call (a 1x1x1 call pays only 3-7 ms and does not
    // trigger it; 5-37 ms were measured on the Intel Xeon). Pay it here, untimed, on a 32^3
    // problem.
    static std::once_flag warmed;
    std::call_once(warmed, [] {
      sync_main_threads();
      constexpr int kN = 32;
      std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.5f), c(kN * kN, 0.0f);
      (void)dnnl_sgemm('N', 'N', kN, kN, kN, 1.0f, a.data(), kN, b.data(), kN, 0.0f, c.data(), kN);
    });
    return Status::ok();
  }

  Status run_impl(const GemmParams& p) override {
    sync_main_threads();
    return run_as_gemm_calls(p, /*native_bf16=*/false, [](const GemmCall& c) {
      // dnnl_sgemm is row-major: the column-major C (m x n) is the row-major C^T (n x m), and
      // C^T = op(B)^T op(A)^T, so swap the operands and their transposes.
      const dnnl_status_t s =
          dnnl_sgemm(c.transb == 'n' ? 'N' : 'T', c.transa == 'n' ? 'N' : 'T', c.n, c.m, c.k,
                     static_cast<float>(c.alpha), static_cast<const float*>(c.b), c.ldb,
                     static_cast<const float*>(c.a), c.lda, static_cast<float>(c.beta),
                     static_cast<float*>(c.c), c.ldc);
      if (s != dnnl_success)
        return Status(StatusCode::kRuntimeError, "dnnl_sgemm: " + dnnl_error(s));
      return Status::ok();
    });
  }
};

}  // namespace

std::unique_ptr<GemmCandidate> make_onednn_matmul(OnednnWeights weights) {
  return std::make_unique<OnednnMatmul>(weights);
}

std::unique_ptr<GemmCandidate> make_onednn_sgemm() { return std::make_unique<OnednnSgemm>(); }

}  // namespace tunekit::ops::detail
