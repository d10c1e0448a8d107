// Unit tests of the parts a TuningContext composes: ContextSettings, TuningStore and TuningHooks
// each on its own, and the context wiring them (setting changes reach the store's verdicts).
#include <gtest/gtest.h>

#include <cstdlib>

#include "fake_op.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit {
namespace {

class ContextPartsTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::clear_tunekit_env(); }
  void TearDown() override { testing::clear_tunekit_env(); }
};

TEST_F(ContextPartsTest, SettingsStandAloneTellTheirListeners) {
  ContextSettings settings;
  int changed = 0, started = 0;
  settings.set_listeners({[&] { ++changed; }, [&] { ++started; }});
  settings.enable_tuning(false);
  EXPECT_FALSE(settings.is_tuning_enabled());
  EXPECT_EQ(changed, 1);
  settings.enable_record_untuned(true);
  EXPECT_EQ(started, 1);
  ::setenv("TUNEKIT_MAX_TUNING_ITERATIONS", "11", 1);
  ASSERT_TRUE(settings.reload_environment().is_ok());
  EXPECT_EQ(settings.max_tuning_iterations(), 11);
  ASSERT_TRUE(settings.reset().is_ok());
  EXPECT_TRUE(settings.is_tuning_enabled());
  EXPECT_FALSE(settings.is_record_untuned_enabled());
}

TEST_F(ContextPartsTest, StoreNamesItsFilesFromTheSettings) {
  ContextSettings settings;
  settings.set_device_ordinal(3);
  TuningStore store(settings);
  EXPECT_EQ(store.filename(), "tunekit_results3.csv");
  EXPECT_EQ(store.untuned_filename(), "tunekit_untuned3.csv");
  store.pin_filename("flag.csv");
  EXPECT_EQ(store.filename(), "flag.csv");
  store.reset();
  EXPECT_EQ(store.filename(), "tunekit_results3.csv");
  EXPECT_TRUE(store.validators().contains("THREADS"));
}

TEST_F(ContextPartsTest, HooksMeasureContentionOnlyUnderTheSteadyClockUnlessGivenASource) {
  TuningHooks hooks;
  EXPECT_EQ(hooks.clock(), &now_ns);
  EXPECT_EQ(hooks.cpu_wait(), &measure::read_cpu_wait);
  hooks.set_clock(&testing::virtual_now_ns);
  EXPECT_EQ(hooks.cpu_wait(), nullptr);
  hooks.set_cpu_wait_source(&testing::virtual_cpu_wait);
  EXPECT_EQ(hooks.cpu_wait(), &testing::virtual_cpu_wait);
  hooks.reset();
  EXPECT_EQ(hooks.clock(), &now_ns);
}

TEST_F(ContextPartsTest, TheContextSnapshotTakesSettingsAndHooks) {
  TuningContext ctx;
  ctx.settings().set_max_tuning_iterations(9);
  ctx.hooks().set_clock(&testing::virtual_now_ns);
  bool settled = false;
  ctx.hooks().set_settle_hook([&] { settled = true; });
  auto s = ctx.tuning_settings();
  ASSERT_TRUE(s.has_value()) << s.status().to_string();
  EXPECT_EQ(s->max_tuning_iterations, 9);
  EXPECT_EQ(s->clock, &testing::virtual_now_ns);
  ASSERT_TRUE(s->settle);
  s->settle();
  EXPECT_TRUE(settled);
}

}  // namespace
}  // namespace tunekit
