// Tests of the CPU facts: the fixtures of the project's three CPUs (tests/data/cpu/), one-line
// errors naming file and line for bad fixtures, the x86-64 levels, the scoped override, and
// that the real CPU's flags agree with the compiler's CPU detection.
#include "tunekit/core/hardware.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tunekit::hw {
namespace {

std::string fixture_path(const std::string& name) {
  return std::string(TUNEKIT_TEST_DATA_DIR) + "/cpu/" + name + ".txt";
}

CpuInfo fixture(const std::string& name) {
  auto info = load_cpu_fixture(fixture_path(name));
  EXPECT_TRUE(info) << info.status().to_string();
  return info ? *info : CpuInfo{};
}

TEST(CpuFixtures, IntelXeonWithAmx) {
  const CpuInfo c = fixture("intel_xeon_amx");
  EXPECT_TRUE(c.is_intel());
  EXPECT_EQ(c.family, 6);
  EXPECT_EQ(c.model_number, 207);
  EXPECT_EQ(c.model, "Intel(R) Xeon(R) Processor");
  EXPECT_EQ(c.x86_level(), X86Level::kV4);
  EXPECT_TRUE(c.has_all({"amx_bf16", "amx_tile", "avx512_bf16", "avx512f"}));
  // The same ISA validator string as results files tuned on that machine carry.
  EXPECT_EQ(c.isa,
            "avx2+fma+avx512f+avx512bw+avx512vl+avx512_vnni+avx512_bf16+avx512_fp16+amx_tile+"
            "amx_bf16+amx_int8");
  EXPECT_EQ(c.l1d_bytes, 48u << 10);
  EXPECT_EQ(c.l2_bytes, 2u << 20);
  EXPECT_EQ(c.llc_bytes, std::size_t{480} << 20);
  EXPECT_EQ(c.source, fixture_path("intel_xeon_amx"));
}

TEST(CpuFixtures, AmdZen4HasAvx512AndBf16ButNoAmx) {
  const CpuInfo c = fixture("amd_zen4");
  EXPECT_TRUE(c.is_amd());
  EXPECT_EQ(c.family, 25);
  EXPECT_EQ(c.model_number, 17);
  EXPECT_EQ(c.x86_level(), X86Level::kV4);
  EXPECT_TRUE(c.has("avx512_bf16"));
  EXPECT_FALSE(c.has("amx_tile"));
  EXPECT_EQ(c.l2_bytes, 1u << 20);
}

TEST(CpuFixtures, AmdZen3IsAvx2Only) {
  const CpuInfo c = fixture("amd_zen3");
  EXPECT_TRUE(c.is_amd());
  EXPECT_EQ(c.family, 25);
  EXPECT_EQ(c.model_number, 1);
  EXPECT_EQ(c.x86_level(), X86Level::kV3);
  EXPECT_TRUE(c.has_all({"avx2", "fma"}));
  EXPECT_FALSE(c.has("avx512f"));
  EXPECT_FALSE(c.has("avx2 "));  // whole words only
  EXPECT_EQ(c.isa, "avx2+fma");
  EXPECT_EQ(c.describe(), "AMD EPYC (AuthenticAMD family 25 model 1)");
  EXPECT_EQ(c.l2_bytes, 512u << 10);
  EXPECT_EQ(c.llc_bytes, 32u << 20);
}

TEST(CpuFixtures, LevelsFollowTheFlags) {
  CpuInfo c;
  EXPECT_EQ(c.x86_level(), X86Level::kBaseline);
  c = fixture("amd_zen3");
  std::erase(c.flags, "movbe");
  EXPECT_EQ(c.x86_level(), X86Level::kV2);
  EXPECT_EQ(x86_level_name(X86Level::kV3), "x86-64-v3");
  EXPECT_EQ(x86_level_name(X86Level::kBaseline), "x86-64");
}

TEST(CpuFixtures, RealCpuinfoTextParsesFirstProcessorBlock) {
  const std::string text =
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
      "model name\t: Xeon\nflags\t\t: sse2 avx2 fma\n\nprocessor\t: 1\nvendor_id\t: Other\n"
      "cpu family\t: 7\nmodel\t\t: 1\nflags\t\t: sse2\n";
  auto c = parse_cpuinfo(text, "cpuinfo.txt");
  ASSERT_TRUE(c) << c.status().to_string();
  EXPECT_EQ(c->vendor, "GenuineIntel");
  EXPECT_EQ(c->family, 6);
  EXPECT_EQ(c->model_number, 85);
  EXPECT_TRUE(c->has("avx2"));
  EXPECT_EQ(c->l2_bytes, 0u);  // no cache lines: unknown
  EXPECT_GE(c->usable_cores, 1);
}

struct BadFixture {
  const char* text;
  const char* message;
};

TEST(CpuFixtures, BadFixtureIsOneErrorNamingFileAndLine) {
  const std::string head = "vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 1\n";
  const BadFixture cases[] = {
      {"vendor_id : X\nflags without colon\n",
       "f.txt:2: expected 'key : value', got 'flags without colon'"},
      {"vendor_id : X\n# comment\ncpu family : twenty\n",
       "f.txt:3: 'cpu family' must be a non-negative integer, got 'twenty'"},
      {"vendor_id : X\nmodel : -1\n", "f.txt:2: 'model' must be a non-negative integer, got '-1'"},
      {"vendor_id : X\nl2 cache : 512 parsecs\n",
       "f.txt:2: 'l2 cache' must be a size such as 48K, 2M or 1048576, got '512 parsecs'"},
      {"vendor_id : AuthenticAMD\ncpu family : 25\nmodel : 1\n", "f.txt: no 'flags' line"},
      {"flags : avx2\n", "f.txt: no 'vendor_id' line"},
  };
  for (const BadFixture& bad : cases) {
    auto c = parse_cpuinfo(bad.text, "f.txt");
    ASSERT_FALSE(c) << bad.text;
    EXPECT_EQ(c.status().code(), StatusCode::kParseError);
    EXPECT_EQ(c.status().message(), bad.message);
    EXPECT_EQ(c.status().message().find('\n'), std::string::npos);
  }
  EXPECT_TRUE(parse_cpuinfo(head + "flags : avx2\nl2 cache : 2 MiB\n", "f.txt"));
}

TEST(CpuFixtures, MissingFileIsAnErrorNamingIt) {
  auto c = load_cpu_fixture("/nonexistent/cpu.txt");
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(c.status().message(),
            "cannot open CPU fixture '/nonexistent/cpu.txt': No such file or directory");
}

TEST(CpuFixtures, OnlyRegularFilesAreReadSoDevicesAndFifosNeitherHangNorFillMemory) {
  const std::string dir = ::testing::TempDir() + "tunekit_fixture_" + std::to_string(::getpid());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  const std::string fifo = dir + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), fifo, dir}) {
    auto c = load_cpu_fixture(path);
    ASSERT_FALSE(c) << path;
    EXPECT_EQ(c.status().code(), StatusCode::kIoError) << path;
    EXPECT_NE(c.status().message().find("CPU fixture '" + path + "'"), std::string::npos)
        << c.status().message();
  }
  EXPECT_NE(load_cpu_fixture("/dev/zero").status().message().find("a character device"),
            std::string::npos);
  ::unlink(fifo.c_str());
  ::rmdir(dir.c_str());
}

TEST(CpuOverride, ScopedOverrideChangesThePlannedCpuOnly) {
  const std::string real_model = host_cpu().model;
  const int cores = host_cpu().usable_cores;
  {
    ScopedCpuOverride intel(fixture("intel_xeon_amx"));
    EXPECT_EQ(cpu().model_number, 207);
    EXPECT_EQ(cpu().usable_cores, cores);  // threads follow the real affinity mask
    {
      ScopedCpuOverride zen3(fixture("amd_zen3"));
      EXPECT_EQ(cpu().model_number, 1);
    }
    EXPECT_EQ(cpu().model_number, 207);
    EXPECT_EQ(host_cpu().model, real_model);
  }
  if (std::getenv("TUNEKIT_CPU_FIXTURE") == nullptr) {
    EXPECT_EQ(cpu().source, "/proc/cpuinfo");
    EXPECT_TRUE(cpu_fixture_status());
  }
}

TEST(HostCpu, FlagsAgreeWithTheCompilersCpuDetection) {
  const CpuInfo& c = host_cpu();
  EXPECT_EQ(c.source, "/proc/cpuinfo");
  EXPECT_EQ(c.has("avx2"), __builtin_cpu_supports("avx2") != 0);
  EXPECT_EQ(c.has("fma"), __builtin_cpu_supports("fma") != 0);
  EXPECT_EQ(c.has("avx512f"), __builtin_cpu_supports("avx512f") != 0);
  EXPECT_EQ(c.x86_level() >= X86Level::kV3, __builtin_cpu_supports("x86-64-v3") != 0);
  EXPECT_EQ(c.x86_level() >= X86Level::kV4, __builtin_cpu_supports("x86-64-v4") != 0);
  EXPECT_FALSE(c.vendor.empty());
  EXPECT_GE(c.usable_cores, 1);
}

// The AMX permission follows the host CPU: never granted without amx_tile (and then nothing is
// asked of Linux), and when refused the reason is one line.
TEST(Hardware, AmxPermissionIsRefusedWithAReasonOrGranted) {
  const std::string& refusal = amx_refusal();
  EXPECT_EQ(amx_permitted(), refusal.empty());
  EXPECT_EQ(refusal.find('\n'), std::string::npos);
  if (!host_cpu().has("amx_tile")) {
    EXPECT_FALSE(amx_permitted());
    EXPECT_NE(refusal.find("amx_tile"), std::string::npos) << refusal;
  }
  ScopedCpuOverride intel(fixture("intel_xeon_amx"));  // planning for AMX grants nothing
  EXPECT_EQ(amx_permitted(), refusal.empty());
}

// TUNEKIT_NATIVE_AMX=0 keeps the process from asking for the tile state; a malformed value is
// refused with the variable's name. Each in a fresh process (the answer is kept per process).
TEST(Hardware, AmxCanBeTurnedOffByTheEnvironment) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto refused_for = [](const char* value, const char* expected) {
    setenv("TUNEKIT_NATIVE_AMX", value, 1);
    const bool ok = !amx_permitted() && amx_refusal().find(expected) != std::string::npos;
    std::fprintf(stderr, "refusal: %s\n", amx_refusal().c_str());
    std::exit(ok ? 0 : 1);
  };
  EXPECT_EXIT(refused_for("0", "TUNEKIT_NATIVE_AMX=0"), testing::ExitedWithCode(0), "refusal");
  EXPECT_EXIT(refused_for("maybe", "TUNEKIT_NATIVE_AMX: expected a boolean"),
              testing::ExitedWithCode(0), "refusal");
}

}  // namespace
}  // namespace tunekit::hw
