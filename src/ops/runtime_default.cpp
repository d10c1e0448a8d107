// The GEMM op with a runtime's own Default (PyTorch's kernels through tunekit.torch), installed
// through the C interface of include/tunekit/ops/gemm_abi.h. See active_gemm_op() in gemm.hpp.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_abi.h"

namespace tunekit {
namespace {

// Copies `message` into a C caller's buffer (truncated, always terminated).
void write_error(const std::string& message, char* error, std::size_t size) {
  if (error == nullptr || size == 0) return;
  const std::size_t n = std::min(message.size(), size - 1);
  std::memcpy(error, message.data(), n);
  error[n] = '\0';
}

int fail(const Status& status, char* error, std::size_t size) {
  write_error(status.message(), error, size);
  return static_cast<int>(status.code());
}

ops::GemmParams to_params(const tunekit_gemm_problem& p) {
  return ops::GemmParams{.kind = static_cast<ops::GemmKind>(p.kind),
                         .dtype = static_cast<ops::DType>(p.dtype),
                         .transa = p.transa,
                         .transb = p.transb,
                         .m = p.m,
                         .n = p.n,
                         .k = p.k,
                         .lda = p.lda,
                         .ldb = p.ldb,
                         .ldc = p.ldc,
                         .batch = p.batch,
                         .stride_a = p.stride_a,
                         .stride_b = p.stride_b,
                         .stride_c = p.stride_c,
                         .alpha = p.alpha,
                         .beta = p.beta,
                         .a = p.a,
                         .b = p.b,
                         .c = p.c,
                         .bias = p.bias};
}

tunekit_gemm_problem to_problem(const ops::GemmParams& p) {
  return tunekit_gemm_problem{static_cast<std::int32_t>(p.kind),
                              static_cast<std::int32_t>(p.dtype),
                              p.transa,
                              p.transb,
                              p.m,
                              p.n,
                              p.k,
                              p.lda,
                              p.ldb,
                              p.ldc,
                              p.batch,
                              p.stride_a,
                              p.stride_b,
                              p.stride_c,
                              p.alpha,
                              p.beta,
                              p.a,
                              p.b,
                              p.c,
                              p.bias};
}

/// Candidate 0 of the runtime's op: the runtime's own kernel, called back through the C
/// interface. It runs every valid float, double and bf16-C problem (what the runtime asks for).
class RuntimeDefault final : public ops::GemmCandidate {
 public:
  explicit RuntimeDefault(const tunekit_gemm_default& d)
      : library_(d.library), version_(d.version), detail_(d.detail), run_(d.run), user_(d.user) {}
  const std::string& name() const override { return name_; }
  std::string_view library() const override { return library_; }
  Status supports(const ops::GemmParams& p) const override {
    if (p.dtype != ops::DType::kFloat && p.dtype != ops::DType::kDouble &&
        p.dtype != ops::DType::kBFloat16) {
      return {StatusCode::kUnsupported, library_ + " writes bf16 C for bf16 operands"};
    }
    return p.validate_shape();
  }
  Status run(const ops::GemmParams& p) override {
    if (!p.passes_quick_checks()) TUNEKIT_RETURN_IF_ERROR(p.validate());
    const tunekit_gemm_problem problem = to_problem(p);
    char error[512] = {0};
    const int rc = run_(user_, &problem, error, sizeof error);
    if (rc == 0) return Status::ok();
    return {StatusCode::kRuntimeError, library_ + " Default: " + error};
  }
  Expected<ops::LibraryBinding> binding() override {
    return ops::LibraryBinding{.symbol = library_ + " Default",
                               .file = "",
                               .namespace_id = 0,
                               .detail = library_ + " " + version_ + " " + detail_};
  }

 private:
  std::string name_ = std::string(kDefaultSolution);
  std::string library_, version_, detail_;
  tunekit_gemm_run_fn run_;
  void* user_;
};

/// The library list's own Default (OpenBLAS's cblas call) kept as an ordinary candidate.
class RenamedCandidate final : public ops::GemmCandidate {
 public:
  RenamedCandidate(std::unique_ptr<Candidate<ops::GemmParams>> inner, std::string name)
      : inner_(std::move(inner)),
        gemm_(dynamic_cast<ops::GemmCandidate*>(inner_.get())),
        name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  std::string_view library() const override { return inner_->library(); }
  Status supports(const ops::GemmParams& p) const override { return inner_->supports(p); }
  Status prepare(const ops::GemmParams& p) override { return inner_->prepare(p); }
  Status run(const ops::GemmParams& p) override { return inner_->run(p); }
  Status run_resolved(const ops::GemmParams& p) override { return inner_->run_resolved(p); }
  Expected<ops::LibraryBinding> binding() override {
    if (gemm_ == nullptr) return Status(StatusCode::kUnsupported, "no library binding");
    return gemm_->binding();
  }

 private:
  std::unique_ptr<Candidate<ops::GemmParams>> inner_;
  ops::GemmCandidate* gemm_;
  std::string name_;
};

struct Installed {
  std::mutex mutex;
  std::string library, version;
  std::atomic<GemmTunableOp*> op{nullptr};
};

Installed& installed() {
  static Installed* state = new Installed;  // never destroyed: dispatch may run at exit
  return *state;
}

// Whether a library runs its threads in a pool of its own (ops::GemmCandidate::own_thread_pool).
bool own_pool(const Candidate<ops::GemmParams>& c) {
  const auto* gemm = dynamic_cast<const ops::GemmCandidate*>(&c);
  return gemm != nullptr && gemm->own_thread_pool();
}

// The runtime's Default, then this machine's libraries and kernels, except those with a thread
// pool of their own: inside the runtime's program their idle workers would spin against the
// runtime's pool after every call, slowing the runtime's own kernels, which no tuning times.
CandidateList<ops::GemmParams> runtime_candidates(const tunekit_gemm_default& d) {
  CandidateList<ops::GemmParams> list;
  list.push_back(std::make_unique<RuntimeDefault>(d));
  auto libraries = ops::make_gemm_candidates();
  list.push_back(std::make_unique<RenamedCandidate>(std::move(libraries[0]), "openblas"));
  for (std::size_t i = 1; i < libraries.size(); ++i) {
    if (!own_pool(*libraries[i])) list.push_back(std::move(libraries[i]));
  }
  return list;
}

Status install(const tunekit_gemm_default& d) {
  if (d.library == nullptr || d.version == nullptr || d.detail == nullptr || d.run == nullptr) {
    return {StatusCode::kInvalidArgument,
            "install_default: library, version, detail and run "
            "must be given"};
  }
  Installed& state = installed();
  std::lock_guard<std::mutex> lock(state.mutex);
  if (state.op.load() != nullptr) {
    if (state.library == d.library && state.version == d.version) return Status::ok();
    return {StatusCode::kInvalidArgument,
            "a GEMM Default from " + state.library + " " + state.version +
                " is installed already; one runtime Default per process"};
  }
  TuningContext& ctx = tuning_context();
  prepare_gemm_context(ctx);  // threads, settle hook and the libraries' validators
  auto list = runtime_candidates(d);
  register_gemm_validators(ctx, list);
  for (std::size_t i = 0; i < d.validator_count; ++i) {
    const std::string key = d.validator_keys[i], value = d.validator_values[i];
    if (!ctx.validators().contains(key)) {
      (void)ctx.register_validator(key, [value] { return value; });
    }
  }
  state.library = d.library;
  state.version = d.version;
  state.op.store(new GemmTunableOp(std::move(list)));
  return Status::ok();
}

}  // namespace

GemmTunableOp* runtime_gemm_op() noexcept { return installed().op.load(std::memory_order_acquire); }

GemmTunableOp& active_gemm_op() {
  GemmTunableOp* op = runtime_gemm_op();
  return op != nullptr ? *op : gemm_op();
}

}  // namespace tunekit

extern "C" int tunekit_gemm_abi_version(void) { return TUNEKIT_GEMM_ABI_VERSION; }

extern "C" int tunekit_gemm_install_default(const tunekit_gemm_default* d, char* error,
                                            size_t error_size) {
  if (d == nullptr) {
    return tunekit::fail({tunekit::StatusCode::kInvalidArgument, "install_default: null"}, error,
                         error_size);
  }
  try {
    const tunekit::Status s = tunekit::install(*d);
    return s.is_ok() ? 0 : tunekit::fail(s, error, error_size);
  } catch (const std::exception& e) {
    return tunekit::fail({tunekit::StatusCode::kInternal, e.what()}, error, error_size);
  }
}

extern "C" int tunekit_gemm_run(const tunekit_gemm_problem* problem, char* error,
                                size_t error_size) {
  tunekit::GemmTunableOp* op = tunekit::runtime_gemm_op();
  if (op == nullptr || problem == nullptr) [[unlikely]] {
    return tunekit::fail({tunekit::StatusCode::kInvalidArgument,
                          "tunekit_gemm_run: no runtime Default installed (or null problem)"},
                         error, error_size);
  }
  const tunekit::ops::GemmParams params = tunekit::to_params(*problem);
  tunekit::Status s = (*op)(params);
  if (s.is_ok()) [[likely]]
    return 0;
  return tunekit::fail(s, error, error_size);
}
