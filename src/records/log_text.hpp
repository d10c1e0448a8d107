// Reading a tuning log's whole text from a descriptor, shared by load_records (plain reads,
// standard input) and the locked readers of record_store.cpp.
#pragma once

#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// The whole content of `fd`: from offset 0 (pread, so a descriptor read before is read again
/// from the start), or from where it stands when it cannot seek (a pipe or terminal).
/// Errors: kIoError "cannot read tuning log '<path>': <reason>".
Expected<std::string> read_log_text(int fd, const std::string& path);

}  // namespace tunekit
