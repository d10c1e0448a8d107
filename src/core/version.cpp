// tunekit's version string (set from CMake's project version).
// See include/tunekit/core/version.hpp.
#include "tunekit/core/version.hpp"

#ifndef TUNEKIT_VERSION_STRING
#define TUNEKIT_VERSION_STRING "0.0.0"
#endif

namespace tunekit {
const char* version() noexcept { return TUNEKIT_VERSION_STRING; }
}  // namespace tunekit
