// A test fixture for the tunable layer: a fresh TuningContext with no TUNEKIT_* variables, a
// results file in a temporary folder, small budgets, no rotating buffers, and virtual time
// (fake candidates advance testing::g_virtual_ns instead of spinning).
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "fake_op.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit::testing {

/// ctx_ measures in virtual time with a 2 ms / 10-call budget per candidate and writes its
/// results to dir_/results0.csv; TearDown restores the environment, real time and the log.
class VirtualTimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    clear_tunekit_env();
    ctx_ = std::make_unique<TuningContext>();
    ctx_->set_filename(dir_.file("results0.csv"));
    ctx_->set_rotating_buffer_size(0);
    ctx_->set_max_tuning_duration_ms(2);
    ctx_->set_max_tuning_iterations(10);
    g_virtual_time = true;
    ctx_->hooks().set_clock(&virtual_now_ns);
  }
  void TearDown() override {
    g_virtual_time = false;
    clear_tunekit_env();
    (void)log::set_sink("err");
    log::set_level(0);
  }

  TempDir dir_;
  std::unique_ptr<TuningContext> ctx_;
};

}  // namespace tunekit::testing
