// "onednn3_matmul" and "onednn3_matmul[constant_b]": the matmul primitive of the oneDNN 3 wheel
// (brgemm kernels, AMX on CPUs that have it), cached per problem; the constant-weights mode
// reorders the weights once into the layout the primitive prefers (ops::Linear).
#include "ops/gemm_internal.hpp"

#if TUNEKIT_HAVE_ONEDNN3

#include <fmt/format.h>

#include <memory>
#include <vector>

#include "ops/bf16_output.hpp"
#include "ops/onednn3_api.hpp"
#include "ops/onednn_shared.hpp"

namespace tunekit::ops::detail {
namespace {

std::string status_text(dnnl_status_t s) {
  switch (s) {
    case dnnl_out_of_memory:
      return "out of memory";
    case dnnl_invalid_arguments:
      return "invalid arguments";
    case dnnl_unimplemented:
      return "unimplemented";
    case dnnl_runtime_error:
      return "runtime error";
    default:
      return fmt::format("status {}", static_cast<int>(s));
  }
}

/// A memory descriptor owned here (oneDNN 3 descriptors are handles).
class Md {
 public:
  Md() = default;
  Md(const Md&) = delete;
  Md& operator=(const Md&) = delete;
  ~Md() {
    if (md_ != nullptr) api_->dnnl_memory_desc_destroy(md_);
  }
  void reset(const Onednn3Api& api, dnnl_memory_desc_t md) {
    if (md_ != nullptr) api_->dnnl_memory_desc_destroy(md_);
    api_ = &api;
    md_ = md;
  }
  dnnl_memory_desc_t get() const { return md_; }

 private:
  const Onednn3Api* api_ = nullptr;
  dnnl_memory_desc_t md_ = nullptr;
};

dnnl_status_t strided(const Onednn3Api& api, Md& out, int ndims, const MatmulOperand& x,
                      dnnl_data_type_t type) {
  dnnl_memory_desc_t md = nullptr;
  const dnnl_status_t s =
      api.dnnl_memory_desc_create_with_strides(&md, ndims, x.dims, type, x.strides);
  if (s == dnnl_success) out.reset(api, md);
  return s;
}

dnnl_status_t any_layout(const Onednn3Api& api, Md& out, int ndims, const MatmulOperand& x,
                         dnnl_data_type_t type) {
  dnnl_memory_desc_t md = nullptr;
  const dnnl_status_t s =
      api.dnnl_memory_desc_create_with_tag(&md, ndims, x.dims, type, dnnl_format_tag_any);
  if (s == dnnl_success) out.reset(api, md);
  return s;
}

dnnl_status_t queried(const Onednn3Api& api, Md& out, const_dnnl_primitive_desc_t pd,
                      dnnl_query_t what) {
  dnnl_memory_desc_t md = nullptr;
  const dnnl_status_t s =
      api.dnnl_memory_desc_clone(&md, api.dnnl_primitive_desc_query_md(pd, what, 0));
  if (s == dnnl_success) out.reset(api, md);
  return s;
}

/// A created matmul (and, for constant weights, the reorder into its layout).
struct Matmul3 {
  const Onednn3Api* api = nullptr;
  dnnl_primitive_t matmul = nullptr;
  dnnl_primitive_t reorder = nullptr;
  Md src, weights, dst, bias, packed_weights, scratchpad, scale;
  std::size_t scratchpad_bytes = 0, packed_weights_bytes = 0;
  bool has_bias = false, scaled = false;
  /// No primitive: oneDNN 3 has no bf16-output matmul for this bf16-C problem, which runs as
  /// its float-C twin through the bf16-output adapter.
  bool float_output = false;
  float alpha = 1.0f;
  std::string impl;

  Matmul3() = default;
  Matmul3(const Matmul3&) = delete;
  Matmul3& operator=(const Matmul3&) = delete;
  ~Matmul3() {
    if (matmul != nullptr) api->dnnl_primitive_destroy(matmul);
    if (reorder != nullptr) api->dnnl_primitive_destroy(reorder);
  }
};

/// Memory objects wrapping caller pointers for one execution; destroyed afterwards.
class Args {
 public:
  explicit Args(const Onednn3Api& api) : api_(api) {}
  Args(const Args&) = delete;
  Args& operator=(const Args&) = delete;
  ~Args() {
    for (const dnnl_exec_arg_t& a : args_) api_.dnnl_memory_destroy(a.memory);
  }
  bool add(int arg, const Md& md, const void* data) {
    dnnl_memory_t mem = nullptr;
    if (api_.dnnl_memory_create(&mem, md.get(), api_.engine, const_cast<void*>(data)) !=
        dnnl_success) {
      return false;
    }
    args_.push_back({arg, mem});
    return true;
  }
  int size() const { return static_cast<int>(args_.size()); }
  const dnnl_exec_arg_t* data() const { return args_.data(); }

 private:
  const Onednn3Api& api_;
  std::vector<dnnl_exec_arg_t> args_;
};

// One stream per calling thread (streams are not shared between concurrent executions).
dnnl_stream_t thread_stream(const Onednn3Api& api) {
  struct Holder {
    const Onednn3Api* api = nullptr;
    dnnl_stream_t stream = nullptr;
    ~Holder() {
      if (stream != nullptr) api->dnnl_stream_destroy(stream);
    }
  };
  thread_local Holder holder;
  if (holder.stream == nullptr &&
      api.dnnl_stream_create(&holder.stream, api.engine, dnnl_stream_default_flags) ==
          dnnl_success) {
    holder.api = &api;
  }
  return holder.stream;
}

// The attributes of `p`: user scratchpad, alpha as the source's scale, beta as a sum post-op.
// oneDNN 3 applies scales to the inputs and adds the bias afterwards, so alpha * A B + bias
// needs no special case.
dnnl_status_t make_attr(const Onednn3Api& api, const GemmParams& p, dnnl_primitive_attr_t& attr) {
  dnnl_status_t s = api.dnnl_primitive_attr_create(&attr);
  if (s == dnnl_success)
    s = api.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
  if (s == dnnl_success && p.alpha != 1.0) {
    s = api.dnnl_primitive_attr_set_scales_mask(attr, DNNL_ARG_SRC, 0);
  }
  if (s == dnnl_success && p.beta != 0.0) {
    dnnl_post_ops_t post_ops = nullptr;
    s = api.dnnl_post_ops_create(&post_ops);
    if (s == dnnl_success) {
      s = api.dnnl_post_ops_append_sum(post_ops, static_cast<float>(p.beta), 0,
                                       dnnl_data_type_undef);
    }
    if (s == dnnl_success) s = api.dnnl_primitive_attr_set_post_ops(attr, post_ops);
    if (post_ops != nullptr) api.dnnl_post_ops_destroy(post_ops);
  }
  return s;
}

class Onednn3Matmul final : public GemmCandidateBase {
 public:
  explicit Onednn3Matmul(OnednnWeights mode)
      : GemmCandidateBase(
            mode == OnednnWeights::kConstant ? "onednn3_matmul[constant_b]" : "onednn3_matmul",
            "onednn3"),
        constant_(mode == OnednnWeights::kConstant) {}

  Expected<LibraryBinding> binding() override {
    Expected<const Onednn3Api*> api = onednn3_api();
    if (!api) return api.status();
    return describe_entry(
        reinterpret_cast<const void*>((*api)->dnnl_primitive_execute), "dnnl_primitive_execute",
        fmt::format("oneDNN {} matmul{}, OpenMP threading, isa={}", (*api)->version,
                    constant_ ? " with weights reordered once" : "", (*api)->isa));
  }

  /// The implementation oneDNN chose for `p` (e.g. "brg_matmul:avx512_core_bf16").
  Expected<std::string> implementation(const GemmParams& p) override {
    TUNEKIT_RETURN_IF_ERROR(supports(p));
    Expected<std::shared_ptr<const Matmul3>> prim = get(p);
    if (!prim) return prim.status();
    return (*prim)->impl;
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    if (p.dtype == DType::kDouble) return unsupported("oneDNN's matmul has no f64 on CPU");
    if (constant_ && p.kind == GemmKind::kStridedBatched) {
      return unsupported("one weight matrix, no batches");
    }
    return Status::ok();
  }

  bool writes_bf16_output() const override { return true; }

  Status prepare_impl(const GemmParams& p) override {
    Expected<std::shared_ptr<const Matmul3>> got = get(p);
    if (got && (*got)->float_output) return get(float_output_twin(p)).status();
    return got.status();
  }

  Status run_impl(const GemmParams& p) override {
    Expected<std::shared_ptr<const Matmul3>> got = get(p);
    if (!got) return got.status();
    const Matmul3& prim = **got;
    if (prim.float_output) {
      auto run_float = [this](const GemmParams& twin) { return run_impl(twin); };
      return run_with_float_output(p, run_float);
    }
    const Onednn3Api& api = *prim.api;
    sync_main_threads();
    dnnl_stream_t stream = thread_stream(api);
    if (stream == nullptr) return Status(StatusCode::kRuntimeError, "oneDNN 3 stream unavailable");
    const void* weights = p.a;
    if (constant_) {
      Expected<const void*> packed = constant_weights(p, prim, stream);
      if (!packed) return packed.status();
      weights = *packed;
    }
    thread_local AlignedBuffer scratchpad;
    Args args(api);
    bool ok = args.add(DNNL_ARG_SRC, prim.src, p.b) &&
              args.add(DNNL_ARG_WEIGHTS, constant_ ? prim.packed_weights : prim.weights, weights) &&
              args.add(DNNL_ARG_DST, prim.dst, p.c);
    if (ok && prim.has_bias) ok = args.add(DNNL_ARG_BIAS, prim.bias, p.bias);
    if (ok && prim.scaled)
      ok = args.add(DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC, prim.scale, &prim.alpha);
    if (ok && prim.scratchpad_bytes > 0) {
      void* pad = scratchpad.get(prim.scratchpad_bytes);
      if (pad == nullptr) return Status(StatusCode::kRuntimeError, "out of memory");
      ok = args.add(DNNL_ARG_SCRATCHPAD, prim.scratchpad, pad);
    }
    if (!ok) return Status(StatusCode::kRuntimeError, "oneDNN 3: cannot wrap the operands");
    dnnl_status_t s = api.dnnl_primitive_execute(prim.matmul, stream, args.size(), args.data());
    if (s == dnnl_success) s = api.dnnl_stream_wait(stream);
    if (s != dnnl_success) {
      return Status(StatusCode::kRuntimeError, "oneDNN 3 matmul: " + status_text(s));
    }
    return Status::ok();
  }

 private:
  // Constant weights: reordered on the first run of this instance (which serves one problem)
  // into a buffer it owns, then reused.
  Expected<const void*> constant_weights(const GemmParams& p, const Matmul3& prim,
                                         dnnl_stream_t stream) {
    const Onednn3Api& api = *prim.api;
    return packed_.get(p, prim.packed_weights_bytes, false, [&](void* packed) {
      Args args(api);
      if (!args.add(DNNL_ARG_FROM, prim.weights, p.a) ||
          !args.add(DNNL_ARG_TO, prim.packed_weights, packed)) {
        return Status(StatusCode::kRuntimeError, "oneDNN 3: cannot wrap the weights");
      }
      dnnl_status_t s = api.dnnl_primitive_execute(prim.reorder, stream, args.size(), args.data());
      if (s == dnnl_success) s = api.dnnl_stream_wait(stream);
      if (s != dnnl_success) {
        return Status(StatusCode::kRuntimeError, "oneDNN 3 weights reorder: " + status_text(s));
      }
      return Status::ok();
    });
  }

  Expected<std::shared_ptr<const Matmul3>> get(const GemmParams& p) {
    return cache_.get(matmul_key(p, constant_), [&]() -> Expected<std::shared_ptr<const Matmul3>> {
      Expected<const Onednn3Api*> api = onednn3_api();
      if (!api) return unsupported(api.status().message());
      sync_main_threads();  // the primitive is made for the thread count it will run with
      Expected<std::shared_ptr<const Matmul3>> made = create(**api, p);
      if (made || p.dtype != DType::kBFloat16) return made;
      return float_output_marker(**api, made.status());
    });
  }

  // The cache entry of a bf16-C problem oneDNN 3 cannot write bf16 C for (`why`).
  static std::shared_ptr<const Matmul3> float_output_marker(const Onednn3Api& api,
                                                            const Status& why) {
    auto marker = std::make_shared<Matmul3>();
    marker->api = &api;
    marker->float_output = true;
    marker->impl = "bf16 C through a float copy (" + why.message() + ")";
    return marker;
  }

  Expected<std::shared_ptr<const Matmul3>> create(const Onednn3Api& api,
                                                  const GemmParams& p) const {
    auto prim = std::make_shared<Matmul3>();
    prim->api = &api;
    const dnnl_data_type_t in = has_bf16_inputs(p.dtype) ? dnnl_bf16 : dnnl_f32;
    const dnnl_data_type_t out = p.dtype == DType::kBFloat16 ? dnnl_bf16 : dnnl_f32;
    const MatmulView v = matmul_view(p);
    prim->has_bias = p.kind == GemmKind::kGemmAndBias;
    prim->scaled = p.alpha != 1.0;
    prim->alpha = static_cast<float>(p.alpha);
    Md weights_any;
    dnnl_status_t s = strided(api, prim->src, v.ndims, v.src, in);
    if (s == dnnl_success) s = strided(api, prim->weights, v.ndims, v.weights, in);
    if (s == dnnl_success && constant_) s = any_layout(api, weights_any, v.ndims, v.weights, in);
    if (s == dnnl_success) s = strided(api, prim->dst, v.ndims, v.dst, out);
    if (s == dnnl_success && prim->has_bias) s = strided(api, prim->bias, 2, v.bias, out);
    const MatmulOperand one{{1}, {1}};
    if (s == dnnl_success && prim->scaled) s = strided(api, prim->scale, 1, one, dnnl_f32);
    if (s != dnnl_success) return unsupported("memory descriptors: " + status_text(s));
    dnnl_primitive_attr_t attr = nullptr;
    dnnl_primitive_desc_t pd = nullptr;
    s = make_attr(api, p, attr);
    if (s == dnnl_success) {
      s = api.dnnl_matmul_primitive_desc_create(
          &pd, api.engine, prim->src.get(), constant_ ? weights_any.get() : prim->weights.get(),
          prim->has_bias ? prim->bias.get() : nullptr, prim->dst.get(), attr);
    }
    if (attr != nullptr) api.dnnl_primitive_attr_destroy(attr);
    if (s != dnnl_success) return unsupported("matmul primitive descriptor: " + status_text(s));
    Status made = finish(api, pd, *prim);
    api.dnnl_primitive_desc_destroy(pd);
    if (!made.is_ok()) return made;
    return std::shared_ptr<const Matmul3>(std::move(prim));
  }

  // The implementation check, scratchpad, constant-weights reorder and primitive of `pd`.
  Status finish(const Onednn3Api& api, const_dnnl_primitive_desc_t pd, Matmul3& prim) const {
    const char* impl = nullptr;
    if (api.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success &&
        impl != nullptr) {
      prim.impl = impl;
    }
    // The reference code runs large problems for minutes: never a real choice.
    if (prim.impl.rfind("ref", 0) == 0) {
      return unsupported(
          fmt::format("oneDNN 3 has only its reference code ({}) for this problem", prim.impl));
    }
    dnnl_status_t s = queried(api, prim.scratchpad, pd, dnnl_query_scratchpad_md);
    prim.scratchpad_bytes = api.dnnl_memory_desc_get_size(prim.scratchpad.get());
    if (s == dnnl_success && constant_) {
      s = queried(api, prim.packed_weights, pd, dnnl_query_weights_md);
      prim.packed_weights_bytes = api.dnnl_memory_desc_get_size(prim.packed_weights.get());
      dnnl_primitive_desc_t reorder_pd = nullptr;
      if (s == dnnl_success) {
        s = api.dnnl_reorder_primitive_desc_create(&reorder_pd, prim.weights.get(), api.engine,
                                                   prim.packed_weights.get(), api.engine, nullptr);
      }
      if (s == dnnl_success) s = api.dnnl_primitive_create(&prim.reorder, reorder_pd);
      if (reorder_pd != nullptr) api.dnnl_primitive_desc_destroy(reorder_pd);
      if (s != dnnl_success) return unsupported("weights reorder: " + status_text(s));
    }
    if (s == dnnl_success) s = api.dnnl_primitive_create(&prim.matmul, pd);
    if (s != dnnl_success) {
      return Status(StatusCode::kRuntimeError, "matmul primitive creation: " + status_text(s));
    }
    return Status::ok();
  }

  bool constant_;
  PackedWeights packed_;  // the constant weights
  MatmulCache<Matmul3> cache_;
};

}  // namespace

std::unique_ptr<GemmCandidate> make_onednn3_matmul(OnednnWeights weights) {
  return std::make_unique<Onednn3Matmul>(weights);
}

bool onednn3_built() { return true; }

}  // namespace tunekit::ops::detail

#else  // built without the oneDNN 3 wheel's headers

namespace tunekit::ops::detail {

std::unique_ptr<GemmCandidate> make_onednn3_matmul(OnednnWeights) { return nullptr; }

bool onednn3_built() { return false; }

}  // namespace tunekit::ops::detail

#endif
