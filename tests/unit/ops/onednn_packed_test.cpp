// Tests of onednn_matmul[packed_b], the oneDNN matmul with weights reordered into oneDNN's
// blocked layout on every call (not in the default list: measured no faster; docs/candidates.md).
#include <gtest/gtest.h>

#include <cstring>

#include "ops/gemm_internal.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::ops {
namespace {

TEST(OnednnPackedWeights, StaysCorrectWhenTheWeightsChange) {
  set_num_threads(1);
  auto packed = detail::make_onednn_matmul(detail::OnednnWeights::kPackedPerCall);
  auto plain = detail::make_onednn_matmul(detail::OnednnWeights::kPlain);
  EXPECT_EQ(packed->name(), "onednn_matmul[packed_b]");
  for (DType dtype : {DType::kFloat, DType::kBFloat16Float, DType::kBFloat16}) {
    for (const char* sig : {"tn_96_16_64_ld_64_64_96", "nn_33_7_19_ld_40_19_35"}) {
      const std::string op = std::string("GemmTunableOp_") + std::string(dtype_name(dtype)) +
                             (sig[0] == 't' ? "_TN" : "_NN");
      auto shape = GemmParams::from_signature(op, sig);
      ASSERT_TRUE(shape) << shape.status().to_string();
      auto ws = GemmWorkspace::create(*shape, 2, /*random_fill=*/true, 11);
      ASSERT_TRUE(ws);
      GemmParams p = (*ws)->bind(0);
      GemmParams q = (*ws)->bind(1);
      ASSERT_TRUE(packed->prepare(p));
      ASSERT_TRUE(plain->prepare(q));
      // A bf16 C may round a sum a float rounding apart to the neighbouring bf16 value.
      const Tolerance t = dtype == DType::kBFloat16 ? p.default_tolerance() : Tolerance{1e-5, 1e-5};
      for (int round = 0; round < 2; ++round) {
        ASSERT_TRUE(packed->run(p));
        ASSERT_TRUE(plain->run(q));
        EXPECT_TRUE(compare_gemm_output(p, q.c, p.c, t.atol, t.rtol)) << op << " " << sig;
        // New weights (A) in both copies: flip the sign of every third element (the sign bit is
        // in the last byte, little endian). Packed weights kept from the old A would differ.
        const std::size_t elem = element_bytes(dtype);
        auto* bytes = static_cast<unsigned char*>(const_cast<void*>(p.a));
        for (std::size_t i = elem - 1; i < p.a_bytes(); i += 3 * elem) bytes[i] ^= 0x80;
        std::memcpy(const_cast<void*>(q.a), p.a, p.a_bytes());
      }
    }
  }
  set_num_threads(0);
}

}  // namespace
}  // namespace tunekit::ops
