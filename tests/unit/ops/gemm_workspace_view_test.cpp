// A workspace made from a caller's sub-matrix view reads only the bytes the view addresses:
// operands end right before a PROT_NONE guard page, so any over-read faults.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "tunekit/ops/gemm_params.hpp"

namespace tunekit::ops {
namespace {

/// `bytes` of writable memory whose last byte is followed by an inaccessible page.
class GuardedBuffer {
 public:
  explicit GuardedBuffer(std::size_t bytes) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t data_pages = (bytes + page - 1) / page;
    total_ = (data_pages + 1) * page;
    base_ = static_cast<unsigned char*>(
        ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ::mprotect(base_ + data_pages * page, page, PROT_NONE);
    data_ = base_ + data_pages * page - bytes;
  }
  ~GuardedBuffer() { ::munmap(base_, total_); }
  float* floats() { return reinterpret_cast<float*>(data_); }

 private:
  unsigned char* base_ = nullptr;
  unsigned char* data_ = nullptr;
  std::size_t total_ = 0;
};

TEST(GemmWorkspaceViewTest, CopiesOnlyTheAddressedBytesOfPaddedViews) {
  GemmParams p;
  p.transa = 'n';
  p.transb = 't';
  p.m = 5;
  p.n = 3;
  p.k = 4;
  p.lda = 9;  // view of a taller matrix: the last column needs only m elements
  p.ldb = 7;
  p.ldc = 6;
  GuardedBuffer a((p.lda * (p.k - 1) + p.m) * sizeof(float));
  GuardedBuffer b((p.ldb * (p.k - 1) + p.n) * sizeof(float));
  GuardedBuffer c((p.ldc * (p.n - 1) + p.m) * sizeof(float));
  for (int i = 0; i < p.lda * (p.k - 1) + p.m; ++i) a.floats()[i] = static_cast<float>(i);
  std::memset(b.floats(), 0, (p.ldb * (p.k - 1) + p.n) * sizeof(float));
  std::memset(c.floats(), 0, (p.ldc * (p.n - 1) + p.m) * sizeof(float));
  p.a = a.floats();
  p.b = b.floats();
  p.c = c.floats();
  auto ws = GemmWorkspace::create(p, 2, /*random_fill=*/false);
  ASSERT_TRUE(ws.has_value()) << ws.status().to_string();
  const GemmParams copy = (*ws)->bind(1);
  const float* ca = static_cast<const float*>(copy.a);
  EXPECT_EQ(ca[p.lda * (p.k - 1) + p.m - 1], static_cast<float>(p.lda * (p.k - 1) + p.m - 1));
}

}  // namespace
}  // namespace tunekit::ops
