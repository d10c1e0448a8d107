// CppBuilder: C/C++ kernels compiled per configuration into cached shared objects.
// See include/tunekit/measure/cpp_builder.hpp and docs/builder.md.
#include "tunekit/measure/cpp_builder.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "measure/parallel_for.hpp"
#include "tunekit/core/clock.hpp"
#include "tunekit/core/env.hpp"
#include "tunekit/measure/cache_key.hpp"
#include "tunekit/measure/tool_command.hpp"

namespace tunekit {
namespace {

/// Longest error_msg taken from a compiler's diagnostics (whole lines).
constexpr std::size_t kMaxMessageBytes = 2048;

std::vector<std::string> split_words(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

std::vector<std::string> compiler_command(const std::string& configured) {
  std::string text = configured;
  if (text.empty()) text = env::get_string("CXX").value_or("c++");
  auto words = split_words(text);
  if (words.empty()) words.push_back("c++");
  return words;
}

int resolve_parallel(int configured) {
  if (configured > 0) return configured;
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  return cpus > 0 ? static_cast<int>(cpus) : 1;
}

/// The name diagnostics give the source: its path, else "<name>.cpp".
std::string display_path(const KernelSource& source) {
  if (!source.path.empty()) return source.path;
  return (source.name.empty() ? std::string("kernel") : source.name) + ".cpp";
}

/// Absolute directory of the source file ("" without a path), searched for its includes.
std::string include_dir(const KernelSource& source) {
  if (source.path.empty()) return "";
  std::error_code ec;
  auto dir = std::filesystem::absolute(source.path, ec).parent_path();
  return ec ? std::filesystem::path(source.path).parent_path().string() : dir.string();
}

/// `#line 1 "<path>"` and the source text.
std::string source_with_line(const KernelSource& source) {
  std::string quoted;
  for (char c : display_path(source)) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return fmt::format("#line 1 \"{}\"\n{}", quoted, source.text);
}

Status write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    return Status(StatusCode::kIoError, fmt::format("cannot write the kernel source '{}'", path));
  }
  return Status::ok();
}

/// The first whole lines of `text` up to kMaxMessageBytes, with a pointer to the full text
/// in `full_path` when some was left out.
std::string first_lines(const std::string& text, const std::string& full_path) {
  std::string body = text;
  while (!body.empty() && body.back() == '\n') body.pop_back();
  if (body.size() <= kMaxMessageBytes) return body;
  std::size_t cut = body.rfind('\n', kMaxMessageBytes);
  if (cut == std::string::npos || cut == 0) cut = kMaxMessageBytes;
  return fmt::format("{}\n... (all diagnostics in {})", body.substr(0, cut), full_path);
}

BuildResult failure(MeasureErrorNo code, std::string message) {
  BuildResult result;
  result.error_no = code;
  result.error_msg = std::move(message);
  return result;
}

std::vector<std::string> define_args(const Config& config) {
  std::vector<std::string> out;
  for (const auto& [name, value] : config_defines(config)) {
    out.push_back(fmt::format("-D{}={}", name, value));
  }
  return out;
}

}  // namespace

bool compiles_as_c(const KernelSource& source) noexcept {
  const std::string& path = source.path;
  return path.size() > 2 && path.compare(path.size() - 2, 2, ".c") == 0;
}

CppBuilder::CppBuilder(KernelSource source, BuildOptions options)
    : source_(std::move(source)),
      options_(std::move(options)),
      compiler_(compiler_command(options_.compiler)),
      n_parallel_(resolve_parallel(options_.n_parallel)) {}

const Expected<std::string>& CppBuilder::compiler_version() {
  std::call_once(version_once_, [this] {
    auto argv = compiler_;
    argv.push_back("--version");
    auto ran = run_command(argv, options_.timeout_s);
    if (!ran) {
      version_.emplace(Status(StatusCode::kCompileError,
                              fmt::format("C/C++ compiler: {}", ran.status().message())));
    } else if (!ran->succeeded()) {
      version_.emplace(Status(
          StatusCode::kCompileError,
          fmt::format("C/C++ compiler '{}' --version failed ({}): {}", fmt::join(compiler_, " "),
                      ran->ending(), first_lines(ran->output, "its output"))));
    } else {
      version_.emplace(std::move(ran->output));
    }
  });
  return *version_;
}

Expected<std::string> CppBuilder::key_of(const std::vector<std::string>& defines) {
  CacheKey key;
  key.add("language", compiles_as_c(source_) ? "c" : "c++")
      .add("source", source_with_line(source_))
      .add("include_dir", include_dir(source_));
  for (const auto& flag : source_.flags) key.add("flag", flag);
  for (const auto& define : defines) key.add("define", define);
  key.add("march", options_.march);
  for (const auto& word : compiler_) key.add("compiler", word);
  key.add("compiler_version", *compiler_version());
  return key.hex();
}

std::vector<std::string> CppBuilder::command(const std::vector<std::string>& defines,
                                             const std::string& source_file,
                                             const std::string& output_file) const {
  std::vector<std::string> argv = compiler_;
  argv.insert(argv.end(), source_.flags.begin(), source_.flags.end());
  if (compiles_as_c(source_)) argv.insert(argv.end(), {"-x", "c"});
  argv.insert(argv.end(), {"-shared", "-fPIC"});
  if (!options_.march.empty()) argv.push_back("-march=" + options_.march);
  if (const auto dir = include_dir(source_); !dir.empty()) argv.push_back("-I" + dir);
  argv.insert(argv.end(), defines.begin(), defines.end());
  argv.insert(argv.end(), {source_file, "-o", output_file});
  return argv;
}

BuildResult CppBuilder::compile(const ArtifactCache& cache, const std::string& key,
                                const std::vector<std::string>& defines) {
  const std::string source_file = cache.temp_path(key, compiles_as_c(source_) ? ".c" : ".cpp");
  const std::string output_file = cache.temp_path(key, ".so");
  if (auto st = write_text(source_file, source_with_line(source_)); !st) {
    return failure(MeasureErrorNo::kCompileHost, st.message());
  }
  auto ran = run_command(command(defines, source_file, output_file), options_.timeout_s);
  ::unlink(source_file.c_str());
  if (!ran) return failure(MeasureErrorNo::kCompileHost, ran.status().message());
  if (ran->timed_out) {
    ::unlink(output_file.c_str());
    return failure(MeasureErrorNo::kBuildTimeout,
                   fmt::format("build ran past the {:g} s timeout", options_.timeout_s));
  }
  if (!ran->succeeded()) {
    ::unlink(output_file.c_str());
    const std::string text = fmt::format("compiling '{}' failed ({}):\n{}", display_path(source_),
                                         ran->ending(), ran->output);
    (void)cache.store_failure(key, text);  // a cache that cannot keep it only costs a rebuild
    return failure(MeasureErrorNo::kCompileHost, first_lines(text, cache.failure_path(key)));
  }
  auto stored = cache.store_file(key, ".so", output_file);
  if (!stored) return failure(MeasureErrorNo::kCompileHost, stored.status().message());
  BuildResult result;
  result.artifact = std::move(*stored);
  return result;
}

BuildResult CppBuilder::build_with(const ArtifactCache& cache, const Config& config) {
  if (config.space() != nullptr) {
    if (auto st = check_define_names(*config.space()); !st) {
      return failure(MeasureErrorNo::kCompileHost, st.message());
    }
  }
  const auto defines = define_args(config);
  auto key = key_of(defines);
  if (!key) return failure(MeasureErrorNo::kCompileHost, key.status().message());
  const CacheLookup found = cache.lookup(*key, ".so");
  if (found.state == CacheLookup::State::kArtifact) {
    BuildResult result;
    result.artifact = found.path;
    return result;
  }
  if (found.state == CacheLookup::State::kFailure) {
    return failure(MeasureErrorNo::kCompileHost, first_lines(found.diagnostics, found.path));
  }
  return compile(cache, *key, defines);
}

BuildResult CppBuilder::build_config(const Config& config) {
  const MeasureInput input{nullptr, config};
  return build(std::span<const MeasureInput>(&input, 1)).front();
}

std::vector<BuildResult> CppBuilder::build(std::span<const MeasureInput> inputs) {
  std::vector<BuildResult> results(inputs.size());
  auto dir = resolve_kernel_cache_dir(options_.cache_dir);
  auto cache = dir ? ArtifactCache::open(*dir) : Expected<ArtifactCache>(dir.status());
  const auto& version = compiler_version();
  const Status setup = !cache ? cache.status() : version.status();
  parallel_for(inputs.size(), static_cast<std::size_t>(n_parallel_), [&](std::size_t i) {
    const std::int64_t start_ns = now_ns();
    results[i] = setup.is_ok() ? build_with(*cache, inputs[i].config)
                               : failure(MeasureErrorNo::kCompileHost, setup.message());
    results[i].time_cost_s = static_cast<double>(now_ns() - start_ns) * 1e-9;
  });
  return results;
}

}  // namespace tunekit
