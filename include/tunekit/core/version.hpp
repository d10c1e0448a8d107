// tunekit's own version, written into validators and tuning logs.
// Bumped with every release that changes results or file formats.
#pragma once

namespace tunekit {

/// Semantic version string of this build, e.g. "0.1.0".
const char* version() noexcept;

}  // namespace tunekit
