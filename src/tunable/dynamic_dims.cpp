// Dynamic-dims mask parsing and the per-thread guard stack.
// See include/tunekit/tunable/dynamic_dims.hpp.
#include "tunekit/tunable/dynamic_dims.hpp"

#include <cctype>
#include <utility>

#include "tunekit/core/env.hpp"

namespace tunekit {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Expected<DynamicDimsMask> parse_dynamic_dims(std::string_view text) {
  const std::string t = lower(text);
  if (t.find_first_not_of(" \t") == std::string::npos || t == "none") return DynamicDimsMask{0};
  if (auto number = env::parse_int(t)) {
    if (*number < 0 || *number > kAllDynamicDims) {
      return Status(StatusCode::kInvalidArgument,
                    "dynamic dims: mask " + std::string(text) + " is out of range 0..15");
    }
    return static_cast<DynamicDimsMask>(*number);
  }
  DynamicDimsMask mask = 0;
  std::size_t i = 0;
  while (i < t.size()) {
    const char c = t[i];
    if (c == ',' || c == '|' || c == '+' || c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (t.compare(i, 5, "batch") == 0) {
      mask |= kDynamicBatch;
      i += 5;
      continue;
    }
    switch (c) {
      case 'm':
        mask |= kDynamicM;
        break;
      case 'n':
        mask |= kDynamicN;
        break;
      case 'k':
        mask |= kDynamicK;
        break;
      case 'b':
        mask |= kDynamicBatch;
        break;
      default:
        return Status(StatusCode::kInvalidArgument,
                      "dynamic dims: expected letters of M, N, K, B (e.g. 'M' or 'M,N') or a mask "
                      "0..15, got '" +
                          std::string(text) + "'");
    }
    ++i;
  }
  return mask;
}

std::string dynamic_dims_to_string(DynamicDimsMask mask) {
  if (mask == 0) return "none";
  std::string out;
  for (const auto& [bit, name] : {std::pair{kDynamicM, "M"}, std::pair{kDynamicN, "N"},
                                  std::pair{kDynamicK, "K"}, std::pair{kDynamicBatch, "B"}}) {
    if ((mask & bit) == 0) continue;
    if (!out.empty()) out.push_back('|');
    out += name;
  }
  return out;
}

DynamicDimsGuard::DynamicDimsGuard(DynamicDimsMask mask) noexcept
    : previous_(detail::t_dynamic_dims) {
  detail::live_dynamic_dims_guards.fetch_add(1, std::memory_order_relaxed);
  detail::t_dynamic_dims =
      ThreadDynamicDims{true, static_cast<DynamicDimsMask>(mask & kAllDynamicDims)};
}

DynamicDimsGuard::~DynamicDimsGuard() {
  detail::t_dynamic_dims = previous_;
  detail::live_dynamic_dims_guards.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace tunekit
