// Unit tests for TuningContext: defaults, units, environment precedence and malformed values,
// numerical-check parsing, per-library switches, device-ordinal file names and tolerances.
#include "tunekit/tunable/context.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_op.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

class ContextTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::clear_tunekit_env(); }
  void TearDown() override {
    testing::clear_tunekit_env();
    log::set_level(0);
  }
};

TEST_F(ContextTest, DefaultsFollowTunekitColumn) {
  TuningContext ctx;
  EXPECT_TRUE(ctx.environment_status().is_ok());
  EXPECT_TRUE(ctx.is_enabled());
  EXPECT_TRUE(ctx.is_tuning_enabled());
  EXPECT_FALSE(ctx.is_record_untuned_enabled());
  EXPECT_FALSE(ctx.is_wildcard_fallback_enabled());
  EXPECT_FALSE(ctx.is_blas_log_enabled());
  EXPECT_TRUE(ctx.is_cache_flush_enabled());
  EXPECT_EQ(ctx.numerical_check(), (NumericalCheck{true, std::nullopt}));
  EXPECT_EQ(ctx.max_tuning_duration_ms(), 30);
  EXPECT_EQ(ctx.max_tuning_iterations(), 100);
  EXPECT_EQ(ctx.max_warmup_duration_ms(), 0);
  EXPECT_EQ(ctx.max_warmup_iterations(), 0);
  EXPECT_EQ(ctx.verbose(), 0);
  EXPECT_EQ(ctx.verbose_filename(), "err");
  EXPECT_EQ(ctx.filename(), "tunekit_results0.csv");
  EXPECT_EQ(ctx.untuned_filename(), "tunekit_untuned0.csv");
  EXPECT_EQ(ctx.threads(), hw::cpu().usable_cores);
  EXPECT_TRUE(ctx.is_library_enabled("blis"));
}

TEST_F(ContextTest, RotatingBufferSizeSetInMibGetInBytes) {
  TuningContext ctx;
  EXPECT_GT(ctx.rotating_buffer_size(), 0u);
  EXPECT_EQ(ctx.rotating_buffer_size(), hw::effective_llc_bytes());
  ctx.set_rotating_buffer_size(0);
  EXPECT_EQ(ctx.rotating_buffer_size(), 0u);
  ctx.set_rotating_buffer_size(1);
  EXPECT_EQ(ctx.rotating_buffer_size(), 1048576u);
  ctx.set_rotating_buffer_size(-1);
  EXPECT_EQ(ctx.rotating_buffer_size(), hw::effective_llc_bytes());
  ::setenv("TUNEKIT_ROTATING_BUFFER_SIZE", "2", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.rotating_buffer_size(), 2u << 20);
  ::setenv("TUNEKIT_ROTATING_BUFFER_SIZE", "-5", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.rotating_buffer_size(), hw::effective_llc_bytes());
}

TEST_F(ContextTest, RotatingBufferSizeWhoseBytesDoNotFitIsRefused) {
  TuningContext ctx;
  ctx.set_rotating_buffer_size(kMaxRotatingBufferMib);
  EXPECT_EQ(ctx.rotating_buffer_size(), static_cast<std::size_t>(kMaxRotatingBufferMib) << 20);
  try {
    ctx.set_rotating_buffer_size(1'000'000'000'000'000LL);
    FAIL() << "10^15 MiB accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(e.status().message(),
              "set_rotating_buffer_size: 1000000000000000 MiB is too large (at most "
              "17592186044415 MiB)");
  }
  EXPECT_EQ(ctx.rotating_buffer_size(), static_cast<std::size_t>(kMaxRotatingBufferMib) << 20);
  ::setenv("TUNEKIT_ROTATING_BUFFER_SIZE", "1000000000000000", 1);
  const Status st = ctx.reload_environment();
  EXPECT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("TUNEKIT_ROTATING_BUFFER_SIZE: 1000000000000000 MiB is too large"),
            std::string::npos)
      << st.message();
}

TEST_F(ContextTest, NegativeLimitsBecomeZero) {
  TuningContext ctx;
  ctx.set_max_tuning_duration_ms(-4);
  ctx.set_max_tuning_iterations(-1);
  ctx.set_max_warmup_duration_ms(-2);
  ctx.set_max_warmup_iterations(-3);
  EXPECT_EQ(ctx.max_tuning_duration_ms(), 0);
  EXPECT_EQ(ctx.max_tuning_iterations(), 0);
  EXPECT_EQ(ctx.max_warmup_duration_ms(), 0);
  EXPECT_EQ(ctx.max_warmup_iterations(), 0);
  ::setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "-7", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.max_tuning_iterations(), 0);
}

TEST_F(ContextTest, PinnedSettingsWinOverEnvironmentAndApiUntilReset) {
  TuningContext ctx;
  ::setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "11", 1);
  ::setenv("TUNEKIT_THREADS", "3", 1);
  ::setenv("TUNEKIT_FILENAME", "env_results.csv", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  PinnedSettings pinned;
  pinned.max_tuning_iterations = 5;
  pinned.threads = 2;
  pinned.filename = "flag_results.csv";
  ctx.pin(pinned);
  ctx.set_max_tuning_iterations(7);
  ASSERT_TRUE(ctx.reload_environment().is_ok());  // the variables stay set, the pins win
  EXPECT_EQ(ctx.max_tuning_iterations(), 5);
  EXPECT_EQ(ctx.threads(), 2);
  EXPECT_EQ(ctx.filename(), "flag_results.csv");
  EXPECT_STREQ(std::getenv("TUNEKIT_THREADS"), "3");  // the environment is not edited
  ASSERT_TRUE(ctx.reset().is_ok());
  EXPECT_EQ(ctx.max_tuning_iterations(), 11);
  EXPECT_EQ(ctx.threads(), 3);
  EXPECT_EQ(ctx.filename(), "env_results0.csv");
}

TEST_F(ContextTest, EnvironmentWinsOverApi) {
  TuningContext ctx;
  ctx.set_max_tuning_iterations(7);
  ::setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "11", 1);
  ::setenv("TUNEKIT_ENABLED", "0", 1);
  ::setenv("TUNEKIT_TUNING", "off", 1);
  ::setenv("TUNEKIT_RECORD_UNTUNED", "1", 1);
  ::setenv("TUNEKIT_FILENAME", "env_results.csv", 1);
  ::setenv("TUNEKIT_UNTUNED_FILENAME", "env_untuned.csv", 1);
  ::setenv("TUNEKIT_CACHE_FLUSH_ENABLED", "0", 1);
  ::setenv("TUNEKIT_BLAS_LOG", "1", 1);
  ::setenv("TUNEKIT_WILDCARD_FALLBACK", "true", 1);
  ::setenv("TUNEKIT_MAX_WARMUP_DURATION_MS", "5", 1);
  ::setenv("TUNEKIT_MAX_WARMUP_ITERATIONS", "6", 1);
  ::setenv("TUNEKIT_MAX_TUNING_DURATION_MS", "9", 1);
  ::setenv("TUNEKIT_THREADS", "3", 1);
  ::setenv("TUNEKIT_VERBOSE", "2", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.max_tuning_iterations(), 11);
  ctx.set_max_tuning_iterations(3);
  EXPECT_EQ(ctx.max_tuning_iterations(), 11);
  ctx.enable(true);
  EXPECT_FALSE(ctx.is_enabled());
  EXPECT_FALSE(ctx.is_tuning_enabled());
  EXPECT_TRUE(ctx.is_record_untuned_enabled());
  EXPECT_FALSE(ctx.is_cache_flush_enabled());
  EXPECT_TRUE(ctx.is_blas_log_enabled());
  EXPECT_TRUE(ctx.is_wildcard_fallback_enabled());
  EXPECT_EQ(ctx.max_warmup_duration_ms(), 5);
  EXPECT_EQ(ctx.max_warmup_iterations(), 6);
  EXPECT_EQ(ctx.max_tuning_duration_ms(), 9);
  EXPECT_EQ(ctx.threads(), 3);
  EXPECT_EQ(ctx.verbose(), 2);
  EXPECT_EQ(log::level(), 2);
  ctx.set_filename("api.csv");
  EXPECT_EQ(ctx.filename(), "env_results0.csv");
  EXPECT_EQ(ctx.untuned_filename(), "env_untuned0.csv");

  testing::clear_tunekit_env();
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.max_tuning_iterations(), 3);  // the API value is back
  EXPECT_TRUE(ctx.is_enabled());
  EXPECT_EQ(ctx.filename(), "api.csv");
  EXPECT_EQ(ctx.verbose(), 0);
}

TEST_F(ContextTest, MalformedVariablesAreErrorsNamingTheVariable) {
  TuningContext ctx;
  ctx.set_max_tuning_iterations(9);
  ::setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "12abc", 1);
  ::setenv("TUNEKIT_ENABLED", "maybe", 1);
  ::setenv("TUNEKIT_VERBOSE", "7", 1);
  Status s = ctx.reload_environment();
  ASSERT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("TUNEKIT_MAX_TUNING_ITERATIONS"), std::string::npos);
  EXPECT_NE(s.message().find("12abc"), std::string::npos);
  EXPECT_NE(s.message().find("TUNEKIT_ENABLED"), std::string::npos);
  EXPECT_NE(s.message().find("TUNEKIT_VERBOSE"), std::string::npos);
  EXPECT_EQ(ctx.environment_status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ctx.max_tuning_iterations(), 9);  // the malformed value is not applied
  auto settings = ctx.tuning_settings();
  ASSERT_FALSE(settings.has_value());
  EXPECT_NE(settings.status().message().find("TUNEKIT_ENABLED"), std::string::npos);

  testing::clear_tunekit_env();
  EXPECT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_TRUE(ctx.environment_status().is_ok());
}

TEST_F(ContextTest, NumericalCheckValues) {
  TuningContext ctx;
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "0", 1);
  EXPECT_FALSE(ctx.numerical_check().enabled);
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "1", 1);
  EXPECT_EQ(ctx.numerical_check(), (NumericalCheck{true, std::nullopt}));
  ::setenv("TUNEKIT_NUMERICAL_CHECK", "1e-3_2e-2", 1);
  EXPECT_EQ(ctx.numerical_check(), (NumericalCheck{true, Tolerance{1e-3, 2e-2}}));
  for (const char* bad : {"abc", "1e-3", "0_1", "-1_1", "1_2_3", "true", "_1", "inf_1"}) {
    ::setenv("TUNEKIT_NUMERICAL_CHECK", bad, 1);
    auto r = ctx.try_numerical_check();
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.status().message().find("TUNEKIT_NUMERICAL_CHECK"), std::string::npos);
    EXPECT_NE(r.status().message().find(bad), std::string::npos);
    EXPECT_THROW((void)ctx.numerical_check(), Error);
    EXPECT_FALSE(ctx.tuning_settings().has_value());
  }
  ::unsetenv("TUNEKIT_NUMERICAL_CHECK");
  ctx.set_numerical_check_tolerances(true, 1e-2, 1e-3);
  EXPECT_EQ(ctx.numerical_check(), (NumericalCheck{true, Tolerance{1e-2, 1e-3}}));
  ctx.enable_numerical_check(false);
  EXPECT_FALSE(ctx.is_numerical_check_enabled());
  ctx.use_default_tolerances();
  EXPECT_EQ(ctx.numerical_check(), (NumericalCheck{true, std::nullopt}));
  EXPECT_THROW(ctx.set_numerical_check_tolerances(true, 0.0, 1e-5), Error);
  EXPECT_THROW(ctx.set_numerical_check_tolerances(true, 1e-5, -1.0), Error);
}

TEST_F(ContextTest, LibrarySwitches) {
  EXPECT_EQ(library_env_name("blis"), "TUNEKIT_BLIS_ENABLED");
  EXPECT_EQ(library_env_name("onednn"), "TUNEKIT_ONEDNN_ENABLED");
  EXPECT_EQ(library_env_name("my-lib.2"), "TUNEKIT_MY_LIB_2_ENABLED");
  TuningContext ctx;
  ctx.enable_library("eigen", false);
  EXPECT_FALSE(ctx.is_library_enabled("eigen"));
  EXPECT_TRUE(ctx.is_library_enabled("blis"));
  ::setenv("TUNEKIT_BLIS_ENABLED", "0", 1);
  ::setenv("TUNEKIT_EIGEN_ENABLED", "1", 1);
  EXPECT_FALSE(ctx.is_library_enabled("blis"));
  EXPECT_TRUE(ctx.is_library_enabled("eigen"));  // environment wins
  ::setenv("TUNEKIT_BLIS_ENABLED", "sometimes", 1);
  auto r = ctx.try_is_library_enabled("blis");
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.status().message().find("TUNEKIT_BLIS_ENABLED"), std::string::npos);
  EXPECT_THROW((void)ctx.is_library_enabled("blis"), Error);
}

TEST_F(ContextTest, DeviceOrdinalInsertion) {
  EXPECT_EQ(insert_device_ordinal("tunableop_results.csv", 0), "tunableop_results0.csv");
  EXPECT_EQ(insert_device_ordinal("res_%d_x.csv", 0), "res_0_x.csv");
  EXPECT_EQ(insert_device_ordinal("results", 1), "results1");
  EXPECT_EQ(insert_device_ordinal("a.b.csv", 2), "a.b2.csv");
  EXPECT_EQ(insert_device_ordinal("out.d/results", 3), "out.d/results3");
  EXPECT_EQ(insert_device_ordinal_before_extension("tunekit_untuned.csv", 0),
            "tunekit_untuned0.csv");
  EXPECT_EQ(insert_device_ordinal_before_extension("un_%d.csv", 1), "un_%d1.csv");
  EXPECT_EQ(insert_device_ordinal_before_extension("untuned", 2), "untuned2");

  TuningContext ctx;
  ctx.set_device_ordinal(3);
  EXPECT_EQ(ctx.filename(), "tunekit_results3.csv");
  EXPECT_EQ(ctx.untuned_filename(), "tunekit_untuned3.csv");
  ctx.set_filename("mine.csv");
  EXPECT_EQ(ctx.filename(), "mine.csv");  // no insertion unless asked
  ctx.set_filename("mine.csv", true);
  EXPECT_EQ(ctx.filename(), "mine3.csv");
  ctx.set_untuned_filename("u.csv", true);
  EXPECT_EQ(ctx.untuned_filename(), "u3.csv");
  ::setenv("TUNEKIT_FILENAME", "res_%d_x.csv", 1);
  ASSERT_TRUE(ctx.reload_environment().is_ok());
  EXPECT_EQ(ctx.filename(), "res_3_x.csv");
}

TEST_F(ContextTest, BuiltinValidatorsAndThreads) {
  TuningContext ctx;
  ctx.set_threads(5);
  const auto validators = ctx.get_validators();
  ASSERT_EQ(validators.size(), 4u);
  EXPECT_EQ(validators[0].first, "TUNEKIT_VERSION");
  EXPECT_EQ(validators[1].first, "CPU_MODEL");
  EXPECT_EQ(validators[2].first, "CPU_ISA");
  EXPECT_EQ(validators[3], (ValidatorEntry{"THREADS", "5"}));
  ctx.set_threads(0);
  EXPECT_EQ(ctx.threads(), hw::cpu().usable_cores);
  EXPECT_EQ(ctx.register_validator("bad key", [] { return "x"; }).code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(ctx.register_validator("OPENBLAS_VERSION", [] { return "0.3.21, pthread"; }).is_ok());
  EXPECT_EQ(ctx.get_validators().back(), (ValidatorEntry{"OPENBLAS_VERSION", "0.3.21; pthread"}));
  EXPECT_FALSE(ctx.validators().unregister_validator("TUNEKIT_VERSION"));
}

TEST_F(ContextTest, CpuValidatorsNameTheCpuTheResultsAreMeasuredOn) {
  // A planned-for CPU (TUNEKIT_CPU_FIXTURE, ScopedCpuOverride) changes the candidates offered,
  // not the machine the timings come from.
  hw::CpuInfo other = hw::host_cpu();
  other.model = "Another CPU";
  other.isa = "baseline";
  hw::ScopedCpuOverride planned(other);
  TuningContext ctx;
  const auto validators = ctx.get_validators();
  ASSERT_GE(validators.size(), 3u);
  EXPECT_EQ(validators[1], (ValidatorEntry{"CPU_MODEL", hw::host_cpu().model}));
  EXPECT_EQ(validators[2], (ValidatorEntry{"CPU_ISA", hw::host_cpu().isa}));
}

TEST_F(ContextTest, VerboseSetterValidatesLevel) {
  TuningContext ctx;
  ctx.set_verbose(3);
  EXPECT_EQ(log::level(), 3);
  EXPECT_THROW(ctx.set_verbose(4), Error);
  ctx.set_verbose(0);
}

TEST_F(ContextTest, ProcessContextIsASingleton) { EXPECT_EQ(&tuning_context(), &tuning_context()); }

TEST(Tolerance, PerDtypeDefaultsScaleWithAccumulationLength) {
  EXPECT_EQ(dtype_tolerance("double"), (Tolerance{1e-10, 1e-10}));
  EXPECT_EQ(dtype_tolerance("float"), (Tolerance{1e-4, 1e-4}));
  EXPECT_EQ(dtype_tolerance("BFloat16_float"), (Tolerance{1e-2, 1e-2}));
  // A bf16 C adds its rounding (2^-8 relative) to rtol.
  EXPECT_EQ(dtype_tolerance("BFloat16"), (Tolerance{1e-2, 1e-2 + 1.0 / 256}));
  EXPECT_EQ(dtype_tolerance("tf32"), (Tolerance{1e-3, 1e-3}));
  EXPECT_EQ(dtype_tolerance("something"), (Tolerance{1e-5, 1e-5}));
  EXPECT_EQ(dtype_tolerance("float", 512), (Tolerance{1e-4, 1e-4}));
  EXPECT_DOUBLE_EQ(dtype_tolerance("float", 4096).atol, 4e-4);
}

}  // namespace
}  // namespace tunekit
