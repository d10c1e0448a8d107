// ArtifactCache: directory resolution, stores and lookups, failures, unusable directories, keys.
#include "tunekit/measure/artifact_cache.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <set>

#include "../test_files.hpp"
#include "tunekit/measure/cache_key.hpp"

namespace tunekit {
namespace {

using testing::TempDir;

TEST(CacheKey, IsSha256OfTheFields) {
  // SHA-256("abc"), FIPS 180-2 appendix B.1.
  EXPECT_EQ(*sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  const auto a = CacheKey().add("flag", "-O3").add("define", "X=1").hex();
  const auto b = CacheKey().add("flag", "-O3").add("define", "X=2").hex();
  // Field boundaries count: "ab" + "c" differs from "a" + "bc".
  const auto c = CacheKey().add("f", "ab").add("f", "c").hex();
  const auto d = CacheKey().add("f", "a").add("f", "bc").hex();
  ASSERT_TRUE(a && b && c && d);
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_NE(*c, *d);
  EXPECT_EQ(*a, *CacheKey().add("flag", "-O3").add("define", "X=1").hex());
}

TEST(ArtifactCache, StoresAndFindsArtefactsAndFailures) {
  TempDir tmp;
  auto cache = ArtifactCache::open(tmp.file("kernels/nested"));
  ASSERT_TRUE(cache.has_value()) << cache.status().to_string();
  EXPECT_EQ(cache->lookup("k1", ".so").state, CacheLookup::State::kMiss);

  auto stored = cache->store_bytes("k1", ".so", "binary");
  ASSERT_TRUE(stored.has_value()) << stored.status().to_string();
  EXPECT_EQ(*stored, cache->artifact_path("k1", ".so"));
  const CacheLookup hit = cache->lookup("k1", ".so");
  EXPECT_EQ(hit.state, CacheLookup::State::kArtifact);
  EXPECT_EQ(testing::slurp(hit.path), "binary");

  ASSERT_TRUE(cache->store_failure("k2", "kernel.cpp:3:1: error: boom\n"));
  const CacheLookup failed = cache->lookup("k2", ".so");
  EXPECT_EQ(failed.state, CacheLookup::State::kFailure);
  EXPECT_EQ(failed.diagnostics, "kernel.cpp:3:1: error: boom\n");
  EXPECT_EQ(failed.path, cache->failure_path("k2"));
}

TEST(ArtifactCache, TempFilesAreUniqueAndLeaveNothingBehind) {
  TempDir tmp;
  auto cache = ArtifactCache::open(tmp.file("c"));
  ASSERT_TRUE(cache.has_value());
  std::set<std::string> names;
  for (int i = 0; i < 100; ++i) names.insert(cache->temp_path("k", ".so"));
  EXPECT_EQ(names.size(), 100u);
  ASSERT_TRUE(cache->store_bytes("k", ".so", "x").has_value());
  std::size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(tmp.file("c"))) {
    EXPECT_EQ(e.path().filename(), "k.so");
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

TEST(ArtifactCache, ADirectoryThatCannotBeCreatedIsOneClearError) {
  TempDir tmp;
  const std::string file = tmp.write("plain", "not a directory");
  auto cache = ArtifactCache::open(file + "/kernels");
  ASSERT_FALSE(cache.has_value());
  EXPECT_EQ(cache.status().code(), StatusCode::kIoError);
  EXPECT_NE(cache.status().message().find("cannot create the kernel cache directory '" + file +
                                          "/kernels'"),
            std::string::npos)
      << cache.status().message();
}

/// Sets (or, for nullptr, unsets) an environment variable and restores it when done.
class EnvOverride {
 public:
  EnvOverride(const char* name, const char* value) : name_(name) {
    const char* old = ::getenv(name);
    if (old != nullptr) saved_ = old;
    had_ = old != nullptr;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~EnvOverride() {
    if (had_) {
      ::setenv(name_, saved_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  EnvOverride(const EnvOverride&) = delete;
  EnvOverride& operator=(const EnvOverride&) = delete;

 private:
  const char* name_;
  std::string saved_;
  bool had_ = false;
};

TEST(ArtifactCache, DirectoryFollowsOptionsThenEnvironment) {
  EnvOverride home("HOME", "/home/u");
  {
    EnvOverride dir("TUNEKIT_CACHE_DIR", "/from/env");
    EnvOverride xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(*resolve_kernel_cache_dir("/given"), "/given");
    EXPECT_EQ(*resolve_kernel_cache_dir(""), "/from/env");
  }
  {
    EnvOverride dir("TUNEKIT_CACHE_DIR", nullptr);
    EnvOverride xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(*resolve_kernel_cache_dir(""), "/xdg/tunekit/kernels");
  }
  {
    EnvOverride dir("TUNEKIT_CACHE_DIR", nullptr);
    EnvOverride xdg("XDG_CACHE_HOME", nullptr);
    EXPECT_EQ(*resolve_kernel_cache_dir(""), "/home/u/.cache/tunekit/kernels");
  }
}

}  // namespace
}  // namespace tunekit
