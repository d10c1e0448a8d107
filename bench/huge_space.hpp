// The benchmark space of the search layer: 12 knobs of 10 values (10^12 points) and a
// restriction that keeps 1.0% of them. Shared by search_space_bench and search_strategy_bench.
#pragma once

#include <string>

#include "tunekit/space/config_space.hpp"

namespace tunekit::bench {

/// 12 knobs k0..k11 of the values 0-9; valid when (k0 + 10*k1 + 3*k5 + 7*k7 + 11*k11) is
/// divisible by 100 (1.0% of the points, the "valid_fraction" counter of search_space_bench).
inline const ConfigSpace& huge_space() {
  static const ConfigSpace space = [] {
    ConfigSpace s;
    for (int k = 0; k < 12; ++k) {
      std::string name = "k";  // not "k" + to_string(k): g++ 12 warns falsely (-Wrestrict)
      name += std::to_string(k);
      (void)s.define_range(name, 0, 10);
    }
    (void)s.add_restriction("(k0 + 10*k1 + 3*k5 + 7*k7 + 11*k11) % 100 == 0");
    return s;
  }();
  return space;
}

}  // namespace tunekit::bench
