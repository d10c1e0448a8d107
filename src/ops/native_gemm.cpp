// tunekit's own GEMM kernels as candidates: the configured instances ("native_f32[...]",
// "native_decode_f32[...]") and the two template candidates that search their spaces.
// See include/tunekit/ops/native_gemm.hpp.
#include "tunekit/ops/native_gemm.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <vector>

#include "ops/gemm_internal.hpp"
#include "ops/native_build.hpp"
#include "tunekit/ops/threading.hpp"
#include "tunekit/tunable/template_search.hpp"

namespace tunekit::ops {
namespace detail {
namespace {

template <class T>
NativeCallOf<T> native_call(const GemmCall& c) {
  NativeCallOf<T> n;
  n.transa = c.transa;
  n.transb = c.transb;
  n.m = c.m;
  n.n = c.n;
  n.k = c.k;
  n.alpha = static_cast<float>(c.alpha);
  n.beta = static_cast<float>(c.beta);
  n.a = static_cast<const T*>(c.a);
  n.lda = c.lda;
  n.b = static_cast<const T*>(c.b);
  n.ldb = c.ldb;
  n.c = static_cast<float*>(c.c);
  n.ldc = c.ldc;
  return n;
}

NativeBlocking blocking_of(const NativeGemmConfig& c) {
  NativeBlocking b;
  b.mr = c.mr;
  b.nr = c.nr;
  b.kc = c.kc;
  b.mc = c.mc;
  b.nc = c.nc;
  b.order = c.order == "ij" ? NativeOrder::kIJ : NativeOrder::kJI;
  b.threads = c.threads;
  b.own_rows = c.part == "own";
  return b;
}

Status dtype_only(const GemmParams& p, DType dtype, std::string_view family) {
  if (p.dtype == dtype) return Status::ok();
  return Status(StatusCode::kUnsupported, fmt::format("{}: runs {} problems only, not {}", family,
                                                      dtype_name(dtype), dtype_name(p.dtype)));
}

// The blocked family: float problems, and bf16 ones (native_bf16_kernels: on AMX tiles for the
// AMX tile shapes, through AVX512-BF16 where the CPU has it, otherwise widened to fp32 as they
// are packed).
Status blocked_dtype(const GemmParams& p, std::string_view family) {
  if (p.dtype == DType::kFloat || p.dtype == DType::kBFloat16Float) return Status::ok();
  return Status(
      StatusCode::kUnsupported,
      fmt::format("{}: runs float and bf16 problems only, not {}", family, dtype_name(p.dtype)));
}

// The refusal of a CPU without the kernels' lowest build (x86-64-v3).
Status no_kernels(std::string_view family) {
  return Status(StatusCode::kUnsupported,
                fmt::format("{}: the kernels need AVX2 + FMA (x86-64-v3); {}", family,
                            hw::host_cpu().describe()));
}

// Decode problems: at most 16 columns and the rows of op(A) contiguous.
Status decode_shape(const GemmParams& p, std::string_view family) {
  if (p.n <= 16 && !p.a_is_n()) return Status::ok();
  return Status(
      StatusCode::kUnsupported,
      fmt::format("{}: decode kernels take n <= 16 and a row-contiguous A (transa 't')", family));
}

// One configuration of the blocked family. With `constant_a` (ops::Linear) it packs op(A) on its
// first run into a buffer it owns and reuses it: it then serves that one problem only.
class NativeGemmInstance final : public GemmCandidateBase {
 public:
  NativeGemmInstance(const NativeGemmConfig& config, const NativeKernels* kernels,
                     bool constant_a = false)
      : GemmCandidateBase(solution_name(config), "native"),
        blocking_(blocking_of(config)),
        kernels_(kernels),
        bf16_(native_bf16_kernels(kernels, config.mr, config.nr)),
        amx_(is_amx_tile(config.mr, config.nr)),
        constant_a_(constant_a) {}

  Expected<LibraryBinding> binding() override {
    return describe_entry(
        reinterpret_cast<const void*>(kernels_->gemm), "tunekit native_f32",
        fmt::format("tunekit {} kernels, {}x{} {}", kernels_->level, blocking_.mr, blocking_.nr,
                    amx_ ? "tile; bf16 only, on AMX tiles"
                    : bf16_ == kernels_->bf16_pairs
                        ? "micro-kernel; bf16 through AVX512-BF16"
                        : "micro-kernel; bf16 widened to fp32 as packed"));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    TUNEKIT_RETURN_IF_ERROR(blocked_dtype(p, name()));
    if (amx_ && p.dtype != DType::kBFloat16Float) {
      return unsupported(fmt::format("the {}x{} tile runs on AMX tiles, for bf16 problems only",
                                     blocking_.mr, blocking_.nr));
    }
    if (constant_a_ && p.kind != GemmKind::kGemm) {
      return unsupported("constant weights are packed for plain GEMMs only");
    }
    return Status::ok();
  }
  Status run_impl(const GemmParams& p) override {
    const bool bf16 = p.dtype == DType::kBFloat16Float;
    if (constant_a_) {
      auto packed = packed_a(p);
      if (!packed) return packed.status();
      return gemm(plain_gemm_call(p), bf16, *packed);
    }
    return run_as_gemm_calls(p, bf16,
                             [this, bf16](const GemmCall& c) { return gemm(c, bf16, nullptr); });
  }

 private:
  // One call through the kernels of its dtype. A kernel's false means a blocking it has no
  // micro-kernel for (make_gemm_instance prevents it).
  Status gemm(const GemmCall& c, bool bf16, const float* packed) const {
    const bool ok = bf16 ? bf16_->gemm(native_call<std::uint16_t>(c), blocking_, packed)
                         : kernels_->gemm(native_call<float>(c), blocking_, packed);
    if (ok) return Status::ok();
    return Status(StatusCode::kInternal,
                  fmt::format("{}: no {}x{} micro-kernel in the {} kernels", name(), blocking_.mr,
                              blocking_.nr, kernels_->level));
  }

  Expected<const float*> packed_a(const GemmParams& p) {
    std::lock_guard lock(pack_mutex_);
    if (!packed_.empty()) {
      if (!(packed_key_ == p.key())) {
        return unsupported("a constant-weights instance serves the one problem it packed for");
      }
      return static_cast<const float*>(packed_.data());
    }
    const GemmCall call = plain_gemm_call(p);
    if (p.dtype == DType::kBFloat16Float) {
      packed_.resize(bf16_->packed_a_words(call.m, call.k, blocking_));
      bf16_->pack_a(native_call<std::uint16_t>(call), blocking_, packed_.data());
    } else {
      packed_.resize(kernels_->packed_a_floats(call.m, call.k, blocking_));
      kernels_->pack_a(native_call<float>(call), blocking_, packed_.data());
    }
    packed_key_ = p.key();
    return static_cast<const float*>(packed_.data());
  }

  NativeBlocking blocking_;
  const NativeKernels* kernels_;
  const NativeBf16Kernels* bf16_;  // the bf16 route of this CPU (native_bf16_kernels)
  bool amx_;                       // the tile is an AMX one: bf16 problems only
  bool constant_a_;
  std::mutex pack_mutex_;
  std::vector<float> packed_;  // op(A) in the driver's block order (constant_a_), 32-bit words
  GemmKey packed_key_{};
};

// The instance of `c`, or kUnsupported when no build this CPU runs has its micro-kernel.
Expected<std::unique_ptr<Candidate<GemmParams>>> make_gemm_instance(const NativeGemmConfig& c,
                                                                    bool constant_a) {
  const NativeKernels* k = native_build_for(c.mr, c.nr);
  if (k == nullptr) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("native_f32: no {}x{} micro-kernel on this CPU", c.mr, c.nr));
  }
  return std::unique_ptr<Candidate<GemmParams>>(
      std::make_unique<NativeGemmInstance>(c, k, constant_a));
}

// One configuration of the decode family (float or bf16 A and B, per the configuration; C float,
// a bf16 C through the bf16-output adapter).
class NativeDecodeInstance final : public GemmCandidateBase {
 public:
  NativeDecodeInstance(const NativeDecodeConfig& config, const NativeKernels* kernels)
      : GemmCandidateBase(solution_name(config), "native"),
        config_{config.rows, config.threads, float_output_dtype(config.dtype)},
        kernels_(kernels),
        bf16_(native_decode_bf16_kernel(kernels)) {}

  Expected<LibraryBinding> binding() override {
    const bool bf16 = config_.dtype == DType::kBFloat16Float;
    const bool pairs = bf16_ == kernels_->gemv_rows_bf16_pairs;
    return describe_entry(bf16 ? reinterpret_cast<const void*>(bf16_)
                               : reinterpret_cast<const void*>(kernels_->gemv_rows),
                          bf16 ? "tunekit native_decode_bf16" : "tunekit native_decode_f32",
                          fmt::format("tunekit {} decode kernels{}", kernels_->level,
                                      !bf16   ? ""
                                      : pairs ? ", bf16 through AVX512-BF16"
                                              : ", bf16 widened to fp32 as loaded"));
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    TUNEKIT_RETURN_IF_ERROR(dtype_only(p, config_.dtype, name()));
    return decode_shape(p, name());
  }
  Status run_impl(const GemmParams& p) override {
    if (config_.dtype == DType::kBFloat16Float) {
      return run_as_gemm_calls(p, true, [this](const GemmCall& c) {
        bf16_(native_call<std::uint16_t>(c), config_.rows, config_.threads);
        return Status::ok();
      });
    }
    return run_as_gemm_calls(p, false, [this](const GemmCall& c) {
      kernels_->gemv_rows(native_call<float>(c), config_.rows, config_.threads);
      return Status::ok();
    });
  }

 private:
  NativeDecodeConfig config_;
  const NativeKernels* kernels_;
  NativeDecodeBf16 bf16_;  // the bf16 kernel of this CPU (native_decode_bf16_kernel)
};

// The winning configurations of the problems tuned so far, for seeds (transfer).
template <class Config>
class History {
 public:
  void add(const GemmParams& p, const Config& c) {
    std::lock_guard lock(mutex_);
    for (const Entry& e : entries_) {
      if (e.m == p.m && e.n == p.n && e.k == p.k && e.config == c) return;
    }
    entries_.push_back({p.m, p.n, p.k, c});
  }
  // Up to `count` distinct configurations, those of the nearest problems (log-distance of the
  // dims) first.
  std::vector<Config> nearest(const GemmParams& p, std::size_t count) const {
    std::lock_guard lock(mutex_);
    std::vector<std::pair<double, const Config*>> ranked;
    auto d = [](std::int64_t x, std::int64_t y) {
      return std::abs(std::log(static_cast<double>(std::max<std::int64_t>(x, 1)) /
                               static_cast<double>(std::max<std::int64_t>(y, 1))));
    };
    for (const Entry& e : entries_) {
      ranked.emplace_back(d(e.m, p.m) + d(e.n, p.n) + d(e.k, p.k), &e.config);
    }
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<Config> out;
    for (const auto& [distance, c] : ranked) {
      if (out.size() >= count) break;
      if (std::find(out.begin(), out.end(), *c) == out.end()) out.push_back(*c);
    }
    return out;
  }

 private:
  struct Entry {
    std::int64_t m, n, k;
    Config config;
  };
  mutable std::mutex mutex_;
  std::vector<Entry> entries_;
};

// Seeds taken from the nearest problems' winners.
constexpr std::size_t kTransferSeeds = 3;

class NativeGemmTemplate final : public GemmCandidateBase, public SearchedTemplate<GemmParams> {
 public:
  explicit NativeGemmTemplate(bool constant_a)
      : GemmCandidateBase(std::string(kNativeGemmFamily), "native"), constant_a_(constant_a) {}

  const std::string& family() const override { return name(); }
  Expected<LibraryBinding> binding() override {
    auto instance = default_instance();
    if (!instance) return instance.status();
    return static_cast<NativeGemmInstance&>(**instance).binding();
  }

  Expected<std::shared_ptr<const ConfigSpace>> space(const GemmParams& p) override {
    return native_gemm_space(p, hw::cpu(), num_threads());
  }
  Expected<std::unique_ptr<Candidate<GemmParams>>> instantiate(const GemmParams&,
                                                               const Config& config) override {
    return make(native_gemm_config(config), constant_a_);
  }
  Expected<std::unique_ptr<Candidate<GemmParams>>> from_name(std::string_view name) override {
    auto config = parse_native_gemm_name(name);
    if (!config) return config.status();
    return make(*config, constant_a_);
  }
  std::vector<Config> seeds(const GemmParams& p, const ConfigSpace& space, bool transfer) override {
    std::vector<Config> out;
    for (const NativeGemmConfig& c : history_.nearest(p, transfer ? kTransferSeeds : 0)) {
      if (auto point = nearest_point(space, c)) out.push_back(std::move(*point));
    }
    // The analytical blocking of every micro-kernel of the widest build, with threads owning
    // their rows (on compute-bound problems 10-15% faster than sharing the panels of B,
    // docs/native.md), then the first with shared panels: which shape wins differs by vendor.
    const auto tiles = native_tiles();
    if (tiles.empty()) return out;
    const auto* widest = detail::native_build_for(tiles.front().first, tiles.front().second);
    for (const auto& [mr, nr] : tiles) {
      if (detail::native_build_for(mr, nr) != widest || num_threads() == 1 ||
          (p.m + mr - 1) / mr < num_threads()) {
        break;  // one thread, or fewer row panels than threads: own rows would run shared
      }
      NativeGemmConfig c = native_gemm_default(hw::cpu(), num_threads(), p.dtype, mr, nr);
      c.part = "own";
      if (auto point = nearest_point(space, c)) out.push_back(std::move(*point));
    }
    const NativeGemmConfig first = native_gemm_default(hw::cpu(), num_threads(), p.dtype);
    if (auto point = nearest_point(space, first)) out.push_back(std::move(*point));
    return out;
  }
  void remember(const GemmParams& p, const Config& config, double) override {
    history_.add(p, native_gemm_config(config));
  }
  void remember_solution(const GemmParams& p, std::string_view solution) override {
    if (auto config = parse_native_gemm_name(solution)) history_.add(p, *config);
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    TUNEKIT_RETURN_IF_ERROR(blocked_dtype(p, name()));
    if (native_builds().empty()) return no_kernels(name());
    return Status::ok();
  }
  Status run_impl(const GemmParams& p) override {
    auto instance = default_instance();
    if (!instance) return instance.status();
    return (*instance)->run(p);
  }

 private:
  // Blocking from this CPU's caches, every thread.
  static NativeGemmConfig default_config() { return native_gemm_default(hw::cpu(), num_threads()); }
  static Expected<std::unique_ptr<Candidate<GemmParams>>> make(const NativeGemmConfig& c,
                                                               bool constant_a = false) {
    return make_gemm_instance(c, constant_a);
  }
  Expected<Candidate<GemmParams>*> default_instance() {
    std::lock_guard lock(mutex_);
    if (!default_) {
      auto made = make(default_config());
      if (!made) return made.status();
      default_ = std::move(*made);
    }
    return default_.get();
  }

  bool constant_a_;
  History<NativeGemmConfig> history_;
  std::mutex mutex_;
  std::unique_ptr<Candidate<GemmParams>> default_;
};

class NativeDecodeTemplate final : public GemmCandidateBase, public SearchedTemplate<GemmParams> {
 public:
  // `dtype` of A and B; a bf16 family's instances run float-C problems (kBFloat16Float), and
  // bf16-C ones through the bf16-output adapter.
  explicit NativeDecodeTemplate(DType dtype)
      : GemmCandidateBase(
            std::string(has_bf16_inputs(dtype) ? kNativeDecodeBf16Family : kNativeDecodeFamily),
            "native"),
        dtype_(float_output_dtype(dtype)) {}

  const std::string& family() const override { return name(); }
  Expected<LibraryBinding> binding() override {
    auto instance = make(default_config());
    if (!instance) return instance.status();
    return static_cast<NativeDecodeInstance&>(**instance).binding();
  }

  Expected<std::shared_ptr<const ConfigSpace>> space(const GemmParams&) override {
    return native_decode_space(num_threads());
  }
  Expected<std::unique_ptr<Candidate<GemmParams>>> instantiate(const GemmParams&,
                                                               const Config& config) override {
    return make(native_decode_config(config, dtype_));
  }
  Expected<std::unique_ptr<Candidate<GemmParams>>> from_name(std::string_view name) override {
    auto config = parse_native_decode_name(name);
    if (!config) return config.status();
    if (config->dtype != dtype_) {
      return Status(StatusCode::kNotFound,
                    fmt::format("'{}' is not a {} solution", name, this->name()));
    }
    return make(*config);
  }
  std::vector<Config> seeds(const GemmParams& p, const ConfigSpace& space, bool transfer) override {
    std::vector<Config> out;
    std::vector<NativeDecodeConfig> wanted = history_.nearest(p, transfer ? kTransferSeeds : 0);
    wanted.push_back(default_config());
    for (const NativeDecodeConfig& c : wanted) {
      if (auto point = decode_point(space, c)) out.push_back(std::move(*point));
    }
    return out;
  }
  void remember(const GemmParams& p, const Config& config, double) override {
    history_.add(p, native_decode_config(config, dtype_));
  }
  void remember_solution(const GemmParams& p, std::string_view solution) override {
    auto config = parse_native_decode_name(solution);
    if (config && config->dtype == dtype_) history_.add(p, *config);
  }

 protected:
  Status supports_impl(const GemmParams& p) const override {
    TUNEKIT_RETURN_IF_ERROR(dtype_only(p, dtype_, name()));
    if (native_decode_build() == nullptr) return no_kernels(name());
    return decode_shape(p, name());
  }
  Status run_impl(const GemmParams& p) override {
    auto instance = make(default_config());
    if (!instance) return instance.status();
    return (*instance)->run(p);
  }

 private:
  NativeDecodeConfig default_config() const { return NativeDecodeConfig{4, num_threads(), dtype_}; }
  // The point of `space` with c's rows and threads, if it offers both.
  static std::optional<Config> decode_point(const ConfigSpace& space, const NativeDecodeConfig& c) {
    const auto& rows = space.knob(0).entities;
    const auto& threads = space.knob(1).entities;
    const auto r = std::find(rows.begin(), rows.end(), nlohmann::json(c.rows));
    const auto t = std::find(threads.begin(), threads.end(), nlohmann::json(c.threads));
    if (r == rows.end() || t == threads.end()) return std::nullopt;
    return space.config_of({static_cast<std::uint32_t>(r - rows.begin()),
                            static_cast<std::uint32_t>(t - threads.begin())});
  }
  Expected<std::unique_ptr<Candidate<GemmParams>>> make(const NativeDecodeConfig& c) const {
    const NativeKernels* k = native_decode_build();
    if (k == nullptr) return no_kernels(name());
    return std::unique_ptr<Candidate<GemmParams>>(std::make_unique<NativeDecodeInstance>(c, k));
  }

  DType dtype_;
  History<NativeDecodeConfig> history_;
};

}  // namespace
}  // namespace detail

Status native_gemm(const GemmParams& params, const NativeGemmConfig& config) {
  // Held to the rules of a stored solution name: ranges, multiples, order, a tile this CPU runs.
  auto checked = parse_native_gemm_name(solution_name(config));
  if (!checked) {
    const Status& s = checked.status();
    return s.code() == StatusCode::kParseError ? Status(StatusCode::kInvalidArgument, s.message())
                                               : s;
  }
  auto instance = detail::make_gemm_instance(config, /*constant_a=*/false);
  if (!instance) return instance.status();
  return (*instance)->run(params);
}

std::unique_ptr<GemmCandidate> make_native_gemm_template(bool constant_a) {
  return std::make_unique<detail::NativeGemmTemplate>(constant_a);
}

std::unique_ptr<GemmCandidate> make_native_decode_template(DType dtype) {
  return std::make_unique<detail::NativeDecodeTemplate>(dtype);
}

}  // namespace tunekit::ops
