// libFuzzer target: the GEMM signature parser (every line "<op>,<params>"), dynamic and bucket
// signatures, bucket specs and dynamic-dims masks. Parsed problems must round-trip exactly.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tunekit/offline/buckets.hpp"
#include "tunekit/ops/gemm_params.hpp"
#include "tunekit/tunable/dynamic_dims.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

void one_line(std::string_view line) {
  using namespace tunekit;
  using namespace tunekit::ops;
  using namespace tunekit::offline;
  (void)parse_dynamic_dims(line);
  if (auto buckets = parse_buckets(line)) {
    for (std::size_t i = 1; i < buckets->size(); ++i) {
      require((*buckets)[i].lo > (*buckets)[i - 1].hi && (*buckets)[i - 1].hi >= 0);
    }
  }
  const std::size_t comma = line.find(',');
  if (comma == std::string_view::npos) return;
  const std::string_view op = line.substr(0, comma);
  std::string_view params = line.substr(comma + 1);
  params = params.substr(0, params.find(','));
  auto p = GemmParams::from_signature(op, params);
  if (!p) {
    const StatusCode c = p.status().code();
    require(c == StatusCode::kParseError || c == StatusCode::kUnsupported);
    return;
  }
  require(p->validate_shape().is_ok());
  auto back = GemmParams::from_signature(p->op_signature(), p->signature());
  require(back.has_value() && back->key() == p->key());
  for (std::uint8_t mask = 0; mask <= kAllDynamicDims; ++mask) {
    const std::string dynamic = p->dynamic_signature(mask);
    require(wildcard_match(dynamic, p->signature()));
  }
  require(!p->blas_signature().empty());
  for (std::uint8_t dim : {std::uint8_t{1}, std::uint8_t{2}, std::uint8_t{4}, std::uint8_t{8}}) {
    const Bucket bucket{1, -1, 7};
    const std::string pattern = bucket_signature(*p, dim, bucket);
    if (!pattern.empty()) require(wildcard_match(pattern, p->signature()));
    if (auto resized = with_dim(*p, dim, 7)) require(resized->validate_shape().is_ok());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    one_line(line);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return 0;
}
