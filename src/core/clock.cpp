// Wall-clock helper for record timestamps.
// See include/tunekit/core/clock.hpp.
#include "tunekit/core/clock.hpp"

namespace tunekit {

double unix_time_s() noexcept {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace tunekit
