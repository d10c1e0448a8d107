// Reading a tuning log's whole text from a descriptor, shared by load_records (plain reads,
// standard input) and the locked readers of record_store.cpp.
#pragma once

#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// The whole content of `fd`: a regular file from offset 0 (pread, so a descriptor read before
/// is read again from the start), at most 1 GiB; anything else (a pipe or terminal) from where
/// it stands, refusing a line longer than 16 MiB or more than 1 GiB.
/// Errors: kIoError "cannot read tuning log '<path>': <reason>", or naming the bound exceeded.
Expected<std::string> read_log_text(int fd, const std::string& path);

}  // namespace tunekit
