// DeviceBuilder: the build loop shared by the OpenCL and NVRTC builders (cache lookup, device
// compile, store of the binary or of the log, builds on threads).
#include "tunekit/measure/device_builder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

#include "measure/parallel_for.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/measure/cache_key.hpp"

namespace tunekit {
namespace {

BuildResult failure(MeasureErrorNo code, std::string message) {
  BuildResult result;
  result.error_no = code;
  result.error_msg = std::move(message);
  return result;
}

/// The language's name in cache keys.
const char* language_key(KernelLanguage language) {
  return language == KernelLanguage::kCuda ? "cuda" : "opencl";
}

int resolve_parallel(int configured) {
  if (configured > 0) return configured;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 ? static_cast<int>(cpus) : 1;
}

/// error_msg of a failed device compile: the kernel and the log's first lines.
std::string compile_message(const KernelSource& source, const std::string& log,
                            const std::string& full_path) {
  return fmt::format("kernel '{}': {} (whole log in {})", source.name, first_log_lines(log, 3),
                     full_path);
}

}  // namespace

DeviceBuilder::DeviceBuilder(KernelSource source, BuildOptions options, std::string suffix)
    : source_(std::move(source)),
      options_(std::move(options)),
      suffix_(std::move(suffix)),
      n_parallel_(resolve_parallel(options_.n_parallel)) {}

BuildResult DeviceBuilder::build_with(const ArtifactCache& cache, const std::string& target,
                                      const Config& config) {
  if (config.space() != nullptr) {
    if (auto st = check_define_names(*config.space()); !st) {
      return failure(MeasureErrorNo::kCompileHost, st.message());
    }
  }
  const auto defines = config_defines(config);
  CacheKey key;
  key.add("language", language_key(source_.language)).add("source", source_.text);
  key.add("source_path", source_.path).add("entry", source_.entry);
  for (const auto& flag : source_.flags) key.add("flag", flag);
  for (const auto& [name, value] : defines) key.add("define", name + "=" + value);
  key.add("target", target);
  auto hex = key.hex();
  if (!hex) return failure(MeasureErrorNo::kCompileHost, hex.status().message());
  const CacheLookup found = cache.lookup(*hex, suffix_);
  if (found.state == CacheLookup::State::kArtifact) return BuildResult{found.path, {}, {}, 0.0};
  if (found.state == CacheLookup::State::kFailure) {
    return failure(MeasureErrorNo::kCompileDevice,
                   compile_message(source_, found.diagnostics, found.path));
  }
  auto out = compile(defines);
  if (!out) return failure(MeasureErrorNo::kCompileHost, out.status().message());
  if (!out->ok) {
    (void)cache.store_failure(*hex, out->log);  // a cache that cannot keep it costs a rebuild
    return failure(MeasureErrorNo::kCompileDevice,
                   compile_message(source_, out->log, cache.failure_path(*hex)));
  }
  auto stored = cache.store_bytes(*hex, suffix_, out->binary);
  if (!stored) return failure(MeasureErrorNo::kCompileHost, stored.status().message());
  return BuildResult{std::move(*stored), {}, {}, 0.0};
}

BuildResult DeviceBuilder::build_config(const Config& config) {
  const MeasureInput input{nullptr, config};
  return build(std::span<const MeasureInput>(&input, 1)).front();
}

std::vector<BuildResult> DeviceBuilder::build(std::span<const MeasureInput> inputs) {
  std::vector<BuildResult> results(inputs.size());
  auto dir = resolve_kernel_cache_dir(options_.cache_dir);
  auto cache = dir ? ArtifactCache::open(*dir) : Expected<ArtifactCache>(dir.status());
  auto built_for = cache ? target() : Expected<std::string>(cache.status());
  parallel_for(inputs.size(), static_cast<std::size_t>(n_parallel_), [&](std::size_t i) {
    const std::int64_t start_ns = now_ns();
    results[i] = built_for ? build_with(*cache, *built_for, inputs[i].config)
                           : failure(MeasureErrorNo::kCompileHost, built_for.status().message());
    results[i].time_cost_s = static_cast<double>(now_ns() - start_ns) * 1e-9;
  });
  return results;
}

}  // namespace tunekit
