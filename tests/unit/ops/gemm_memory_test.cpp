// The memory guard of GEMM tuning against the measured peak: tuning a strided-batched problem
// in a child process, the guard's estimate must cover the growth of the peak resident set.
#include "tunekit/ops/gemm_memory.hpp"

#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "../child_process.hpp"
#include "tunekit/ops/gemm.hpp"

namespace tunekit::ops {
namespace {

/// A field of /proc/self/status in bytes ("VmRSS", "VmHWM"), or 0.
std::size_t status_bytes(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::string prefix = std::string(field) + ":";
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) return std::stoull(line.substr(prefix.size())) * 1024;
  }
  return 0;
}

/// Resets VmHWM to the current resident set (Linux >= 4.0).
bool reset_peak() {
  std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (f == nullptr) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

GemmParams batched(std::int64_t size, std::int64_t batch) {
  GemmParams p;
  p.kind = GemmKind::kStridedBatched;
  p.m = p.n = p.k = size;
  p.lda = p.ldb = p.ldc = size;
  p.batch = batch;
  p.stride_a = p.stride_b = p.stride_c = size * size;
  return p;
}

/// Tunes `p` the way `tunekit tune-file` does (own random operands, then TunableOp::tune).
Status tune_with_own_operands(GemmTunableOp& op, const GemmParams& p) {
  auto ws = GemmWorkspace::create(p, 1, /*random_fill=*/true, 1);
  if (!ws) return ws.status();
  return op.tune((*ws)->bind(0)).status;
}

struct Measured {
  std::size_t growth = 0;    // peak resident set minus the resident set before tuning
  std::size_t estimate = 0;  // gemm_tuning_bytes
};

// 3 operands of 64 x 64 x 512 floats (8 MiB each), the numerical check on and the default
// rotating buffer (the last-level cache): 4 or more operand sets plus the problem's own.
TEST(GemmMemory, TheGuardCountsEveryBufferATuningAllocates) {
  if (testing::kAddressSanitizer) GTEST_SKIP() << "AddressSanitizer changes the resident set";
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const int rc = testing::run_in_child([&] {
    TuningContext ctx;
    ctx.set_filename("");
    ctx.enable(true);
    ctx.enable_tuning(true);
    ctx.enable_numerical_check(true);
    ctx.set_max_tuning_duration_ms(1);
    ctx.set_max_tuning_iterations(2);
    auto all = make_gemm_candidates();
    CandidateList<GemmParams> chosen;
    for (std::size_t i = 0; i < all.size(); ++i) {
      if (i == 0 || all[i]->name() == "eigen") chosen.push_back(std::move(all[i]));
    }
    GemmTunableOp op(std::move(chosen), ctx);
    const GemmParams p = batched(64, 512);
    // The libraries' one-off allocations (thread pools, packing buffers) happen here, on one
    // operand copy; what the warm-up freed goes back to the system, so that the measured tuning
    // cannot reuse it unseen.
    ctx.set_rotating_buffer_size(0);
    if (!tune_with_own_operands(op, batched(64, 2)).is_ok()) return 1;
    ctx.set_rotating_buffer_size(-1);  // the default: the last-level cache
    ::malloc_trim(0);
    if (!reset_peak()) return 2;
    const std::size_t before = status_bytes("VmRSS");
    if (!tune_with_own_operands(op, p).is_ok()) return 3;
    auto settings = ctx.tuning_settings();
    if (!settings) return 4;
    const Measured m{status_bytes("VmHWM") - before, gemm_tuning_bytes(p, *settings, true)};
    return ::write(fds[1], &m, sizeof m) == static_cast<ssize_t>(sizeof m) ? 0 : 5;
  });
  ::close(fds[1]);
  Measured m;
  const bool got = ::read(fds[0], &m, sizeof m) == static_cast<ssize_t>(sizeof m);
  ::close(fds[0]);
  ASSERT_EQ(rc, 0) << "1, 3: tuning failed; 2: /proc/self/clear_refs is not writable";
  ASSERT_TRUE(got);
  const double mib = 1024.0 * 1024.0;
  std::printf("peak resident growth %.1f MiB, guard estimate %.1f MiB\n", m.growth / mib,
              m.estimate / mib);
  // Tolerance: the estimate covers the measured growth (less 4 MiB of page-granular noise) and
  // exceeds it by at most a quarter.
  EXPECT_GE(static_cast<double>(m.estimate), static_cast<double>(m.growth) - 4 * mib);
  EXPECT_LE(static_cast<double>(m.estimate), 1.25 * static_cast<double>(m.growth));
}

TEST(GemmMemory, AWorkspaceCountsItsCopiesAndTheInitialOutput) {
  GemmParams p = batched(8, 3);
  p.kind = GemmKind::kGemmAndBias;
  p.batch = 1;
  // A, B, C of 8 x 8 floats (256 bytes each), bias of 8 floats (32 -> 64 bytes rounded).
  EXPECT_EQ(gemm_workspace_bytes(p, 1), 256 * 3 + 64 + 256);
  EXPECT_EQ(gemm_workspace_bytes(p, 3), 3 * (256 * 3 + 64) + 256);
}

TEST(GemmMemory, CheckNamesWhatDoesNotFit) {
  const std::size_t available = available_memory_bytes();
  if (available == 0) GTEST_SKIP() << "no /proc/meminfo";
  Status s = check_memory_for(available, "the problem");
  ASSERT_FALSE(s.is_ok());
  EXPECT_NE(s.message().find("the problem needs"), std::string::npos) << s.message();
  EXPECT_TRUE(check_memory_for(1 << 20, "a small problem").is_ok());
}

}  // namespace
}  // namespace tunekit::ops
