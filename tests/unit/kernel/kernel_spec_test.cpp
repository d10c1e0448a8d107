// Kernel spec parsing: every field of a full spec, defaults, and each error path (one line naming
// the file and the field).
#include "tunekit/kernel/kernel_spec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "../test_files.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

/// A directory holding k.cpp and ref.cpp, and spec files written on demand.
class KernelSpecTest : public ::testing::Test {
 protected:
  KernelSpecTest() {
    dir_.write("k.cpp", "extern \"C\" void k(int n, float* x) {}\n");
    dir_.write("ref.cpp", "extern \"C\" void ref(int n, float* x) {}\n");
  }

  /// Writes `text` as spec.json and loads it.
  Expected<KernelSpec> load(const std::string& text) {
    return load_kernel_spec(dir_.write("spec.json", text));
  }

  /// The one-line message of a spec that must fail, after "<dir>/spec.json: ".
  std::string error_of(const std::string& text) {
    auto spec = load(text);
    if (spec) return "(parsed)";
    const std::string m = spec.status().message();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    const std::string prefix = dir_.file("spec.json") + ": ";
    EXPECT_EQ(m.rfind(prefix, 0), 0u) << m;
    return m.substr(prefix.size());
  }

  /// A minimal valid spec with `extra` members added to the root object.
  static std::string minimal(const std::string& extra = "") {
    return R"({"name": "k", "source": "k.cpp",
      "arguments": [{"name": "n", "dtype": "int32", "value": 8},
                    {"name": "x", "dtype": "float32", "size": "n*2", "output": true}],
      "space": {"params": {"tile": [1, 2, 4]}})" +
           extra + "}";
  }

  TempDir dir_;
};

TEST_F(KernelSpecTest, MinimalSpecTakesTheDefaults) {
  auto spec = load(minimal());
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(spec->source.name, "k");
  EXPECT_EQ(spec->source.entry, "k");
  EXPECT_EQ(spec->source.language, KernelLanguage::kCpp);
  EXPECT_EQ(spec->source.path, dir_.file("k.cpp"));
  EXPECT_NE(spec->source.text.find("extern"), std::string::npos);
  ASSERT_EQ(spec->problem.arguments.size(), 2u);
  EXPECT_TRUE(spec->problem.arguments[0].is_scalar);
  EXPECT_EQ(spec->problem.arguments[0].scalar_value, 8.0);
  EXPECT_EQ(spec->problem.arguments[1].size, 16u);
  EXPECT_TRUE(spec->problem.arguments[1].is_output);
  EXPECT_EQ(spec->problem.arguments[1].fill.kind, FillKind::kZeros);
  EXPECT_EQ(spec->space->knob_count(), 1u);
  EXPECT_EQ(spec->space->range_length(), 3u);
  EXPECT_EQ(spec->verify.reference, VerifyRule::Reference::kFirstValid);
  EXPECT_EQ(spec->isolation, Isolation::kWorker);
  EXPECT_EQ(spec->strategy, "auto");
  EXPECT_FALSE(spec->budget.trials);
  EXPECT_EQ(spec->log_path, dir_.file("k.log.json"));
  EXPECT_EQ(spec->flop, 0.0);
}

TEST_F(KernelSpecTest, FullSpecReadsEveryField) {
  auto spec = load(R"({"name": "mm", "language": "cpp", "source": "k.cpp", "entry": "k",
    "flags": ["-O3", "-fopenmp"], "description": "test",
    "arguments": [{"name": "M", "dtype": "int32", "value": 4},
                  {"name": "K", "dtype": "int64", "value": 3},
                  {"name": "A", "dtype": "float", "size": "M*K", "fill": "index"},
                  {"name": "B", "dtype": "double", "size": 12, "fill": 2.5},
                  {"name": "C", "dtype": "float32", "size": "M", "fill": "ones", "output": true}],
    "space": {"parameters": {"bx": [1, 2], "by": {"power2": [1, 4]}},
              "restrictions": ["bx*by <= 4"]},
    "launch": {"global": ["M", 8], "local": ["bx", "by"]},
    "flop": "2*M*K",
    "verify": {"atol": 1e-3, "rtol": 0, "reference": {"source": "ref.cpp", "entry": "ref"}},
    "timing": {"number": 2, "repeat": 5, "min_repeat_ms": 1.5, "warmup": 0, "cooldown": 0.01,
               "flush_cache": true, "timeout": 3},
    "build": {"timeout": 20, "n_parallel": 2, "march": "x86-64-v3", "compiler": "g++",
              "cache_dir": "cache"},
    "isolation": "in-process", "strategy": "random", "strategy_settings": {"begin": 1},
    "budget": {"trials": 5, "seconds": 30, "early_stopping": 3},
    "log": "logs/mm.json", "seed": 7})");
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(spec->source.flags, (std::vector<std::string>{"-O3", "-fopenmp"}));
  EXPECT_EQ(spec->problem.seed, 7u);
  EXPECT_EQ(spec->seed, 7u);
  EXPECT_EQ(spec->problem.arguments[2].size, 12u);
  EXPECT_EQ(spec->problem.arguments[2].fill.kind, FillKind::kIndex);
  EXPECT_EQ(spec->problem.arguments[3].dtype, ArgDtype::kFloat64);
  EXPECT_EQ(spec->problem.arguments[3].fill.kind, FillKind::kConstant);
  EXPECT_EQ(spec->problem.arguments[3].fill.value, 2.5);
  EXPECT_EQ(spec->problem.arguments[4].fill.kind, FillKind::kOnes);
  EXPECT_EQ(spec->space->knob(1).name, "by");
  EXPECT_EQ(spec->source.launch.global, (std::vector<std::string>{"M", "8"}));
  EXPECT_EQ(spec->flop, 24.0);
  EXPECT_EQ(spec->verify.reference, VerifyRule::Reference::kKernel);
  EXPECT_EQ(spec->verify.reference_source.entry, "ref");
  EXPECT_EQ(spec->verify.reference_source.flags, spec->source.flags);
  EXPECT_EQ(spec->verify.atol, 1e-3);
  EXPECT_EQ(spec->timing.repeat, 5);
  EXPECT_EQ(spec->timing.cooldown_s, 0.01);
  EXPECT_TRUE(spec->timing.flush_cache);
  EXPECT_EQ(spec->timing.timeout_s, 3.0);
  EXPECT_EQ(spec->build.n_parallel, 2);
  EXPECT_EQ(spec->build.march, "x86-64-v3");
  EXPECT_EQ(spec->build.cache_dir, dir_.file("cache"));
  EXPECT_EQ(spec->isolation, Isolation::kInProcess);
  EXPECT_EQ(spec->strategy, "random");
  EXPECT_EQ(*spec->budget.trials, 5u);
  EXPECT_EQ(*spec->budget.seconds, 30.0);
  EXPECT_EQ(*spec->budget.early_stopping, 3u);
  EXPECT_EQ(spec->log_path, dir_.file("logs/mm.json"));
}

TEST_F(KernelSpecTest, BudgetNumberAndReferenceForms) {
  auto spec = load(minimal(R"(, "budget": 9, "log": "/tmp/abs.json",
      "verify": {"reference": {"params": {"tile": 2}}})"));
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(*spec->budget.trials, 9u);
  EXPECT_EQ(spec->log_path, "/tmp/abs.json");
  EXPECT_EQ(spec->verify.reference, VerifyRule::Reference::kConfig);
  EXPECT_EQ(spec->verify.reference_params["tile"], 2);
  auto none = load(minimal(R"(, "verify": {"reference": "none"})"));
  ASSERT_TRUE(none) << none.status().message();
  EXPECT_EQ(none->verify.reference, VerifyRule::Reference::kNone);
}

TEST_F(KernelSpecTest, SpaceKeepsParameterOrderOfParams) {
  auto spec = load(R"({"name": "k", "source": "k.cpp",
      "arguments": [{"name": "x", "dtype": "float32", "size": 4}],
      "space": {"params": {"zeta": [1, 2], "alpha": [3]}}})");
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(spec->space->knob(0).name, "zeta");
  EXPECT_EQ(spec->space->knob(1).name, "alpha");
}

TEST_F(KernelSpecTest, SizeNamingAnUnknownScalar) {
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp",
      "arguments": [{"name": "M", "dtype": "int32", "value": 2},
                    {"name": "N", "dtype": "int32", "value": 2},
                    {"name": "A", "dtype": "float32", "size": "M*Q"}],
      "space": {"params": {"t": [1]}}})"),
            "arguments[2].size: unknown name 'Q' in 'M*Q' (scalar arguments may be named)");
}

TEST_F(KernelSpecTest, SizeMayNameALaterScalar) {
  auto spec = load(R"({"name": "k", "source": "k.cpp",
      "arguments": [{"name": "A", "dtype": "float32", "size": "N+1"},
                    {"name": "N", "dtype": "int32", "value": 2}],
      "space": {"params": {"t": [1]}}})");
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(spec->problem.arguments[0].size, 3u);
}

TEST_F(KernelSpecTest, RootErrors) {
  EXPECT_EQ(error_of("{\"name\": "),
            "not JSON (syntax error at column 10: unexpected end of input; expected '[', '{', or a "
            "literal)");
  EXPECT_NE(error_of(minimal(R"(, "budjet": 3)")).find("unknown key \"budjet\" (accepted: "),
            std::string::npos);
  EXPECT_EQ(error_of("[1]"), "expected an object, got a list");
  EXPECT_EQ(error_of(R"({"source": "k.cpp"})"), "name: missing (required)");
  EXPECT_EQ(error_of(R"({"name": 3})"), "name: expected a string, got a number");
  EXPECT_EQ(error_of(R"({"name": ""})"), "name: must not be empty");
  EXPECT_EQ(error_of(R"({"name": "k"})"), "source: missing (required)");
  EXPECT_EQ(error_of(R"({"name": "k", "language": "fortran", "source": "k.cpp"})"),
            "language: unknown kernel language 'fortran' (expected c++, cpp, c, opencl or cuda)");
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp", "flags": "-O3"})"),
            "flags: expected a list of strings, got a string");
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp", "flags": ["-O3", 2]})"),
            "flags[1]: expected a string, got a number");
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp", "entry": []})"),
            "entry: expected a string, got a list");
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp", "seed": -1})"),
            "seed: -1 is not a whole number >= 0");
}

TEST_F(KernelSpecTest, MissingSourceFile) {
  const std::string m = error_of(R"({"name": "k", "source": "nope.cpp"})");
  EXPECT_EQ(m, "source: cannot open kernel source '" + dir_.file("nope.cpp") +
                   "': No such file or directory");
}

TEST_F(KernelSpecTest, ArgumentErrors) {
  auto with_args = [&](const std::string& args) {
    return error_of(R"({"name": "k", "source": "k.cpp", "arguments": )" + args +
                    R"(, "space": {"params": {"t": [1]}}})");
  };
  EXPECT_EQ(with_args("[]"), "arguments: expected a non-empty list of arguments");
  EXPECT_EQ(with_args("{}"), "arguments: expected a non-empty list of arguments");
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp"})"), "arguments: missing (required)");
  EXPECT_EQ(with_args("[3]"), "arguments[0]: expected an object, got a number");
  EXPECT_EQ(with_args(R"([{"dtype": "int32", "value": 1}])"),
            "arguments[0].name: missing (required)");
  EXPECT_EQ(with_args(R"([{"name": "", "dtype": "int32", "value": 1}])"),
            "arguments[0].name: must not be empty");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32", "value": 1},
                          {"name": "a", "dtype": "int32", "value": 1}])"),
            "arguments[1].name: 'a' is named twice");
  EXPECT_EQ(with_args(R"([{"name": "a", "value": 1}])"), "arguments[0].dtype: missing (required)");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "half", "value": 1}])"),
            "arguments[0].dtype: unknown dtype 'half' (expected float32, float, float64, double, "
            "int32, int or int64)");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32"}])"),
            "arguments[0]: give \"value\" (a scalar) or \"size\" (an array), not both or neither");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32", "value": 1, "size": 2}])"),
            "arguments[0]: give \"value\" (a scalar) or \"size\" (an array), not both or neither");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32", "value": 1, "output": true}])"),
            "arguments[0]: \"fill\" and \"output\" are for arrays (with \"size\"), not scalars");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32", "value": 1.5}])"),
            "arguments[0].value: 1.5 is not a whole number (dtype int32)");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "int32", "value": 3000000000}])"),
            "arguments[0].value: 3000000000 does not fit int32");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "float32", "value": "x"}])"),
            "arguments[0].value: expected a number, got a string");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "float32", "size": 4, "output": 1}])"),
            "arguments[0].output: expected true or false, got a number");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "float32", "size": 4, "fill": "noise"}])"),
            "arguments[0].fill: unknown fill 'noise' (accepted: \"random\", \"zeros\", \"ones\", "
            "\"index\", a number or {\"file\": PATH})");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "float32", "size": 4, "fill": [1]}])"),
            "arguments[0].fill: expected a string, got a list");
  EXPECT_EQ(with_args(R"([{"name": "a", "dtype": "float32", "size": 4, "shape": [4]}])"),
            "arguments[0]: unknown key \"shape\" (accepted: \"name\", \"dtype\", \"value\", "
            "\"size\", \"fill\", \"output\")");
}

TEST_F(KernelSpecTest, ArraysNeedingMoreThanTheMachinesMemoryAreRefused) {
  // 2^50 floats: 4.5 PB per array, far more than any machine's memory.
  const std::string m = error_of(R"({"name": "k", "source": "k.cpp", "arguments": [
      {"name": "n", "dtype": "int32", "value": 3},
      {"name": "x", "dtype": "float32", "size": 1125899906842624},
      {"name": "y", "dtype": "float32", "size": "n", "output": true}],
      "space": {"params": {"t": [1]}}})");
  EXPECT_EQ(m.rfind("arguments: the arrays need 18014398.5 GB (4 copies of 4503599.6 GB: "
                    "x 4503599.6 GB, y 0.0 GB), more than this machine's ",
                    0),
            0u)
      << m;
  EXPECT_TRUE(m.ends_with(" GB of memory")) << m;
}

TEST_F(KernelSpecTest, SizeErrors) {
  auto with_size = [&](const std::string& size) {
    return error_of(R"({"name": "k", "source": "k.cpp", "arguments": [
        {"name": "n", "dtype": "int32", "value": 3},
        {"name": "a", "dtype": "float32", "size": )" +
                    size + R"(}], "space": {"params": {"t": [1]}}})");
  };
  EXPECT_EQ(with_size("0"), "arguments[1].size: 0 elements: expected a whole number >= 1");
  EXPECT_EQ(with_size("\"n/2\""), "arguments[1].size: 1.5 elements: expected a whole number >= 1");
  EXPECT_EQ(with_size("\"n-5\""), "arguments[1].size: -2 elements: expected a whole number >= 1");
  EXPECT_EQ(with_size("1e16"),
            "arguments[1].size: 10000000000000000 elements: too large (at "
            "most 2^53)");
  EXPECT_EQ(with_size("true"),
            "arguments[1].size: expected a number or an expression, got a "
            "boolean");
  EXPECT_EQ(with_size("\"n*\""),
            "arguments[1].size: expression 'n*': unexpected 'end of expression' at column 3");
  EXPECT_EQ(with_size("\"n/0\""),
            "arguments[1].size: expression 'n/0': evaluation failed (division by zero, a bad "
            "operand type or a non-integer bitwise operand)");
  EXPECT_EQ(with_size("\"'a'\""), "arguments[1].size: ''a'' is not a finite number");
}

TEST_F(KernelSpecTest, ASizeFromAWrongScalarNamesTheScalarsValue) {
  auto with = [&](const std::string& n, const std::string& size) {
    return error_of(R"({"name": "k", "source": "k.cpp", "arguments": [
        {"name": "n", "dtype": "int32", "value": )" +
                    n + R"(}, {"name": "m", "dtype": "int32", "value": 4},
        {"name": "a", "dtype": "float32", "size": )" +
                    size + R"(}], "space": {"params": {"t": [1]}}})");
  };
  EXPECT_EQ(with("-5", "\"n\""),
            "arguments[0].value: n = -5 gives arguments[2].size 'n' = -5 elements: expected a "
            "whole number >= 1");
  EXPECT_EQ(with("0", "\" n \""),
            "arguments[0].value: n = 0 gives arguments[2].size ' n ' = 0 elements: expected a "
            "whole number >= 1");
  EXPECT_EQ(with("-5", "\"n*m\""),
            "arguments[0].value: n = -5 gives arguments[2].size 'n*m' = -20 elements: expected "
            "a whole number >= 1");
  EXPECT_EQ(with("3", "\"n-m\""), "arguments[2].size: -1 elements: expected a whole number >= 1");
}

TEST_F(KernelSpecTest, SpaceErrors) {
  auto with_space = [&](const std::string& space) {
    return error_of(R"({"name": "k", "source": "k.cpp",
        "arguments": [{"name": "x", "dtype": "float32", "size": 4}], "space": )" +
                    space + "}");
  };
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp",
        "arguments": [{"name": "x", "dtype": "float32", "size": 4}]})"),
            "space: missing (required)");
  EXPECT_EQ(with_space("[1]"), "space: expected an object");
  EXPECT_EQ(with_space(R"({"params": {"a": [1]}, "parameters": {"b": [1]}})"),
            "space: give one of \"params\", \"parameters\" or \"tune_params\"");
  EXPECT_EQ(with_space(R"({"params": {"a": [1, 1]}})"),
            "space: parameter 'a': value 1 is listed twice");
  EXPECT_EQ(with_space(R"({"params": {"a": [1, 2]}, "restrictions": ["a > 5"]})"),
            "space: no configuration of the 2 points passes the restrictions");
}

TEST_F(KernelSpecTest, AParameterNameThatCannotBeADefinitionIsRefused) {
  EXPECT_EQ(error_of(R"({"name": "k", "source": "k.cpp",
      "arguments": [{"name": "n", "dtype": "int32", "value": 8}],
      "space": {"params": {"UN ROLL": [1, 2]}}})"),
            "space: parameter 'UN ROLL' is not a C identifier, so it cannot be a preprocessor "
            "definition");
}

TEST_F(KernelSpecTest, FlopErrors) {
  EXPECT_EQ(error_of(minimal(R"(, "flop": "2*n*m")")),
            "flop: unknown name 'm' in '2*n*m' (scalar arguments may be named)");
  EXPECT_EQ(error_of(minimal(R"(, "flop": -1)")), "flop: -1 is negative");
  EXPECT_EQ(error_of(minimal(R"(, "flop": [1])")),
            "flop: expected a number or an expression, got a list");
  auto spec = load(minimal(R"(, "flop": 1e9)"));
  ASSERT_TRUE(spec);
  EXPECT_EQ(spec->flop, 1e9);
}

TEST_F(KernelSpecTest, LaunchErrors) {
  EXPECT_EQ(error_of(minimal(R"(, "launch": {"global": ["n", "tile*q"]})")),
            "launch.global[1]: unknown name 'q' in 'tile*q'");
  EXPECT_EQ(error_of(minimal(R"(, "launch": {"global": []})")),
            "launch.global: expected a list of 1 to 3 sizes");
  EXPECT_EQ(error_of(minimal(R"(, "launch": {"global": [true]})")),
            "launch.global[0]: expected a number or an expression, got a boolean");
  EXPECT_EQ(error_of(minimal(R"(, "launch": {"global": ["n"], "local": ["tile", 1]})")),
            "launch.local: 2 dimension(s), but launch.global has 1");
  EXPECT_EQ(error_of(minimal(R"(, "launch": {"grid": ["n"]})")),
            "launch: unknown key \"grid\" (accepted: \"global\", \"local\")");
}

TEST_F(KernelSpecTest, VerifyErrors) {
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"atol": -1})")),
            "verify.atol: -1 is out of range (at least 0)");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"rtol": "x"})")),
            "verify.rtol: expected a number, got a string");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": "last"})")),
            "verify.reference: unknown reference 'last' (accepted: \"first\", \"none\", "
            "{\"params\": {...}} or {\"source\": ..., \"entry\": ...})");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": 3})")),
            "verify.reference: expected a string or an object, got a number");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": {"params": {}}})")),
            "verify.reference.params: parameter 'tile' is missing");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": {"params": {"tile": 1, "u": 2}}})")),
            "verify.reference.params: 'u' is not a parameter of the space");
  EXPECT_NE(error_of(minimal(R"(, "verify": {"reference": {"params": {"tile": 3}}})"))
                .find("verify.reference.params: "),
            std::string::npos);
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": {"params": 1}})")),
            "verify.reference.params: expected an object {\"parameter\": value}");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": {"entry": "ref"}})")),
            "verify.reference: give \"params\" or \"source\" (with \"entry\")");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"reference": {"source": "none.cpp"}})")),
            "verify.reference.source: cannot open kernel source '" + dir_.file("none.cpp") +
                "': No such file or directory");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"tolerance": 1})")),
            "verify: unknown key \"tolerance\" (accepted: \"atol\", \"rtol\", \"reference\", "
            "\"function\")");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"function": {"source": "ref.cpp"}})")),
            "verify.function: expected {\"source\": \"check.cpp\", \"entry\": \"check\"}");
  EXPECT_EQ(error_of(minimal(R"(, "verify": {"function": "check"})")),
            "verify.function: expected {\"source\": \"check.cpp\", \"entry\": \"check\"}");
  EXPECT_EQ(error_of(minimal(
                R"(, "verify": {"function": {"source": "ref.cpp", "entry": "c", "cflags": []}})")),
            "verify.function: unknown key \"cflags\" (accepted: \"source\", \"entry\", \"flags\")");
}

TEST_F(KernelSpecTest, VerificationFunctionIsAHostSourceOfItsOwn) {
  auto spec = load(minimal(
      R"(, "language": "opencl", "verify": {"reference": "none", "function": {"source": "ref.cpp", "entry": "ref"}})"));
  ASSERT_TRUE(spec) << spec.status().message();
  EXPECT_EQ(spec->verify.function.entry, "ref");
  EXPECT_EQ(spec->verify.function.language, KernelLanguage::kCpp);
  EXPECT_EQ(spec->verify.function.path, dir_.file("ref.cpp"));
  EXPECT_NE(spec->verify.function.text.find("void ref"), std::string::npos);
  EXPECT_EQ(spec->verify.reference, VerifyRule::Reference::kNone);
}

TEST_F(KernelSpecTest, TimingAndBuildErrors) {
  EXPECT_EQ(error_of(minimal(R"(, "timing": {"repeat": 0})")),
            "timing.repeat: 0 is out of range [1, 1000000000]");
  EXPECT_EQ(error_of(minimal(R"(, "timing": {"number": 2.5})")),
            "timing.number: 2.5 is not a whole number");
  EXPECT_EQ(error_of(minimal(R"(, "timing": {"timeout": 0})")),
            "timing.timeout: 0 is out of range (at least 0.001)");
  EXPECT_EQ(error_of(minimal(R"(, "timing": {"flush_cache": "yes"})")),
            "timing.flush_cache: expected true or false, got a string");
  EXPECT_NE(error_of(minimal(R"(, "timing": {"repeats": 3})")).find("timing: unknown key"),
            std::string::npos);
  EXPECT_EQ(error_of(minimal(R"(, "build": {"n_parallel": -1})")),
            "build.n_parallel: -1 is out of range [0, 4096]");
  EXPECT_EQ(error_of(minimal(R"(, "build": {"march": 1})")),
            "build.march: expected a string, got a number");
  EXPECT_NE(error_of(minimal(R"(, "build": {"flags": []})")).find("build: unknown key \"flags\""),
            std::string::npos);
}

TEST_F(KernelSpecTest, IsolationStrategyBudgetLogErrors) {
  EXPECT_EQ(error_of(minimal(R"(, "isolation": "thread")")),
            "isolation: unknown isolation 'thread' (accepted: \"process\", \"worker\", "
            "\"in-process\")");
  EXPECT_NE(error_of(minimal(R"(, "strategy": "magic")")).find("strategy: "), std::string::npos);
  EXPECT_NE(error_of(minimal(R"(, "strategy": "ga", "strategy_settings": {"pop": 3})"))
                .find("strategy_settings: "),
            std::string::npos);
  EXPECT_EQ(error_of(minimal(R"(, "strategy_settings": 3)")),
            "strategy_settings: expected an object");
  EXPECT_EQ(error_of(minimal(R"(, "budget": 0)")), "budget: 0 is out of range [1, 1000000000]");
  EXPECT_EQ(error_of(minimal(R"(, "budget": {})")),
            "budget: give \"trials\", \"seconds\" or \"early_stopping\"");
  EXPECT_EQ(error_of(minimal(R"(, "budget": {"seconds": 0})")),
            "budget.seconds: 0 is out of range (at least 0.001)");
  EXPECT_EQ(error_of(minimal(R"(, "budget": {"early_stopping": 0.5})")),
            "budget.early_stopping: 0.5 is not a whole number");
  EXPECT_EQ(error_of(minimal(R"(, "budget": "10")")), "budget: expected an object, got a string");
  EXPECT_EQ(error_of(minimal(R"(, "log": "")")), "log: must not be empty");
}

TEST(KernelSpecFile, UnreadableSpecNamesTheFile) {
  auto spec = load_kernel_spec("/nonexistent/spec.json");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.status().message(),
            "cannot open kernel spec '/nonexistent/spec.json': No such file or directory");
}

TEST(KernelSpecText, ParsedWithoutAFileNameSaysKernelSpec) {
  auto spec = parse_kernel_spec("{}", "", ".");
  ASSERT_FALSE(spec);
  EXPECT_EQ(spec.status().message(), "kernel spec: name: missing (required)");
}

}  // namespace
}  // namespace tunekit
