// CppBuilder: cache hits spawn no compiler, definitions select artefacts, compile errors and
// timeouts, parallel builds, relative includes, unusable cache directories; make_kernel_builder.
#include "tunekit/measure/cpp_builder.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <set>

#include "../test_files.hpp"
#include "tunekit/core/clock.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

/// extern "C" int value(void) returning the VALUE definition.
constexpr const char* kValueKernel = R"(extern "C" int value(void) { return VALUE; }
)";

/// A compiler wrapper in `tmp` that appends one line per compile (not per --version) to
/// `calls`, then runs c++.
std::string counting_compiler(const TempDir& tmp) {
  const std::string path =
      tmp.write("counting-c++", "#!/bin/sh\ncase \"$*\" in *--version*) ;; *) echo compile >> '" +
                                    tmp.file("calls") + "';; esac\nexec c++ \"$@\"\n");
  ::chmod(path.c_str(), 0755);
  return path;
}

std::size_t compile_calls(const TempDir& tmp) {
  const std::string text = testing::slurp(tmp.file("calls"));
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

KernelSource source_of(const TempDir& tmp, const std::string& text,
                       const std::string& name = "kernel.cpp") {
  KernelSource source;
  source.name = "kernel";
  source.path = tmp.write(name, text);
  source.text = text;
  source.entry = "value";
  return source;
}

BuildOptions options_in(const TempDir& tmp, const std::string& compiler = "") {
  BuildOptions options;
  options.cache_dir = tmp.file("cache");
  options.compiler = compiler;
  options.n_parallel = 1;
  return options;
}

/// A space with one knob VALUE over `values`.
std::shared_ptr<ConfigSpace> value_space(const std::vector<nlohmann::json>& values) {
  auto space = std::make_shared<ConfigSpace>();
  EXPECT_TRUE(space->define_knob("VALUE", values));
  return space;
}

std::vector<MeasureInput> inputs_of(const ConfigSpace& space, std::vector<std::uint32_t> at) {
  std::vector<MeasureInput> inputs;
  for (auto i : at) inputs.push_back({nullptr, space.config_of({i})});
  return inputs;
}

/// Calls value() of the shared object `path`; -1 when it cannot be loaded.
int call_value(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return -1;
  auto* fn = reinterpret_cast<int (*)()>(::dlsym(handle, "value"));
  const int got = fn != nullptr ? fn() : -1;
  ::dlclose(handle);
  return got;
}

TEST(CppBuilder, ASecondBuildSpawnsNoCompiler) {
  TempDir tmp;
  const auto space = value_space({11, 22});
  const auto inputs = inputs_of(*space, {1});
  const auto source = source_of(tmp, kValueKernel);
  CppBuilder first(source, options_in(tmp, counting_compiler(tmp)));
  const auto built = first.build(inputs);
  ASSERT_EQ(built[0].error_no, MeasureErrorNo::kNoError) << built[0].error_msg;
  EXPECT_EQ(compile_calls(tmp), 1u);
  EXPECT_EQ(call_value(built[0].artifact), 22);
  EXPECT_GT(built[0].time_cost_s, 0.0);

  // A new builder (a re-run of the program) finds the artefact and compiles nothing.
  CppBuilder second(source, options_in(tmp, counting_compiler(tmp)));
  const auto again = second.build(inputs);
  ASSERT_EQ(again[0].error_no, MeasureErrorNo::kNoError) << again[0].error_msg;
  EXPECT_EQ(again[0].artifact, built[0].artifact);
  EXPECT_EQ(compile_calls(tmp), 1u);
}

TEST(CppBuilder, DefinitionsSelectTheArtefact) {
  TempDir tmp;
  const auto space = value_space({3, 4});
  CppBuilder builder(source_of(tmp, kValueKernel), options_in(tmp, counting_compiler(tmp)));
  const auto built = builder.build(inputs_of(*space, {0, 1, 0}));
  for (const auto& b : built) ASSERT_EQ(b.error_no, MeasureErrorNo::kNoError) << b.error_msg;
  EXPECT_NE(built[0].artifact, built[1].artifact);
  EXPECT_EQ(built[0].artifact, built[2].artifact);
  EXPECT_EQ(compile_calls(tmp), 2u);
  EXPECT_EQ(call_value(built[0].artifact), 3);
  EXPECT_EQ(call_value(built[1].artifact), 4);
}

TEST(CppBuilder, CompileErrorNamesTheSourceLineAndIsRememberedInTheCache) {
  TempDir tmp;
  const auto source =
      source_of(tmp, "extern \"C\" int value(void) {\n  int x = 1;\n  return y;\n}\n");
  const auto space = value_space({1});
  CppBuilder builder(source, options_in(tmp, counting_compiler(tmp)));
  const auto built = builder.build(inputs_of(*space, {0}));
  EXPECT_EQ(built[0].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_TRUE(built[0].artifact.empty());
  EXPECT_NE(built[0].error_msg.find(source.path + ":3:"), std::string::npos) << built[0].error_msg;
  EXPECT_NE(built[0].error_msg.find("error"), std::string::npos) << built[0].error_msg;
  EXPECT_LE(built[0].error_msg.size(), 2300u);
  EXPECT_EQ(compile_calls(tmp), 1u);

  CppBuilder again(source, options_in(tmp, counting_compiler(tmp)));
  const auto rerun = again.build(inputs_of(*space, {0}));
  EXPECT_EQ(rerun[0].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_EQ(rerun[0].error_msg, built[0].error_msg);
  EXPECT_EQ(compile_calls(tmp), 1u);
}

TEST(CppBuilder, ACompilerThatHangsIsStoppedAtTheTimeout) {
  TempDir tmp;
  const std::string compiler =
      tmp.write("slow-c++",
                "#!/bin/sh\ncase \"$*\" in *--version*) echo slow 1.0; exit 0;; esac\nsleep 30\n");
  ::chmod(compiler.c_str(), 0755);
  BuildOptions options = options_in(tmp, compiler);
  options.timeout_s = 0.5;
  CppBuilder builder(source_of(tmp, kValueKernel), options);
  const auto space = value_space({1});
  const auto start = now_ns();
  const auto built = builder.build(inputs_of(*space, {0}));
  EXPECT_EQ(built[0].error_no, MeasureErrorNo::kBuildTimeout);
  EXPECT_EQ(built[0].error_msg, "build ran past the 0.5 s timeout");
  EXPECT_LT(elapsed_ms(start, now_ns()), 5000.0);  // not 10x the timeout
  // A timeout is not remembered as a failure.
  EXPECT_FALSE(std::filesystem::exists(tmp.file("cache")) &&
               !std::filesystem::is_empty(tmp.file("cache")));
}

TEST(CppBuilder, ParallelBuildsGiveLoadableSharedObjects) {
  TempDir tmp;
  const auto space = value_space({10, 20, 30, 40});
  BuildOptions options = options_in(tmp);
  options.n_parallel = 4;
  CppBuilder builder(source_of(tmp, kValueKernel), options);
  EXPECT_EQ(builder.n_parallel(), 4);
  const auto built = builder.build(inputs_of(*space, {0, 1, 2, 3}));
  ASSERT_EQ(built.size(), 4u);
  std::set<std::string> paths;
  for (std::size_t i = 0; i < built.size(); ++i) {
    ASSERT_EQ(built[i].error_no, MeasureErrorNo::kNoError) << built[i].error_msg;
    EXPECT_EQ(call_value(built[i].artifact), 10 * static_cast<int>(i + 1));
    paths.insert(built[i].artifact);
  }
  EXPECT_EQ(paths.size(), 4u);
}

TEST(CppBuilder, RelativeIncludesAndCSourcesWork) {
  TempDir tmp;
  tmp.write("params.h", "#define OFFSET 5\n");
  // A .c file is compiled as C: no extern "C" needed.
  const auto source =
      source_of(tmp, "#include \"params.h\"\nint value(void) { return VALUE + OFFSET; }\n", "k.c");
  const auto space = value_space({1});
  CppBuilder builder(source, options_in(tmp));
  const auto built = builder.build(inputs_of(*space, {0}));
  ASSERT_EQ(built[0].error_no, MeasureErrorNo::kNoError) << built[0].error_msg;
  EXPECT_EQ(call_value(built[0].artifact), 6);
}

TEST(CppBuilder, AnUnusableCacheDirectoryFailsEveryResultClearly) {
  TempDir tmp;
  const std::string file = tmp.write("plain", "x");
  BuildOptions options = options_in(tmp);
  options.cache_dir = file + "/kernels";
  CppBuilder builder(source_of(tmp, kValueKernel), options);
  const auto space = value_space({1, 2});
  const auto built = builder.build(inputs_of(*space, {0, 1}));
  ASSERT_EQ(built.size(), 2u);
  for (const auto& b : built) {
    EXPECT_EQ(b.error_no, MeasureErrorNo::kCompileHost);
    EXPECT_EQ(b.error_msg.find('\n'), std::string::npos) << b.error_msg;
    EXPECT_NE(b.error_msg.find("cannot create the kernel cache directory '" + file + "/kernels'"),
              std::string::npos)
        << b.error_msg;
  }
}

TEST(CppBuilder, ParameterNamesMustBeCIdentifiers) {
  TempDir tmp;
  auto space = std::make_shared<ConfigSpace>();
  ASSERT_TRUE(space->define_knob("tile-x", {1}));
  CppBuilder builder(source_of(tmp, kValueKernel), options_in(tmp, counting_compiler(tmp)));
  const auto built = builder.build(inputs_of(*space, {0}));
  EXPECT_EQ(built[0].error_no, MeasureErrorNo::kCompileHost);
  EXPECT_NE(built[0].error_msg.find("'tile-x' is not a C identifier"), std::string::npos);
  EXPECT_EQ(compile_calls(tmp), 0u);
}

TEST(CppBuilder, AMissingCompilerIsOneClearError) {
  TempDir tmp;
  CppBuilder builder(source_of(tmp, kValueKernel), options_in(tmp, "tunekit-no-such-cc"));
  const auto built = builder.build_config(Config());
  EXPECT_EQ(built.error_no, MeasureErrorNo::kCompileHost);
  EXPECT_NE(built.error_msg.find("cannot run 'tunekit-no-such-cc'"), std::string::npos)
      << built.error_msg;
}

TEST(MakeKernelBuilder, ChoosesByLanguage) {
  KernelSource source;
  source.name = "k";
  source.language = KernelLanguage::kCpp;
  auto cpp = make_kernel_builder(source, BuildOptions{});
  ASSERT_TRUE(cpp.has_value()) << cpp.status().to_string();
  EXPECT_NE(dynamic_cast<CppBuilder*>(cpp->get()), nullptr);
  // OpenCL and CUDA get their own builders where this build has them, else one clear refusal.
  for (const auto& [language, name] :
       {std::pair{KernelLanguage::kOpenCL, "OpenCL"}, std::pair{KernelLanguage::kCuda, "CUDA"}}) {
    source.language = language;
    auto device = make_kernel_builder(source, BuildOptions{});
    if (device.has_value()) {
      EXPECT_EQ(dynamic_cast<CppBuilder*>(device->get()), nullptr) << name;
    } else {
      EXPECT_EQ(device.status().code(), StatusCode::kUnsupported) << name;
      EXPECT_NE(device.status().message().find(name), std::string::npos) << name;
    }
  }
}

}  // namespace
}  // namespace tunekit
