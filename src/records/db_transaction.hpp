// TuningDb::in_transaction: one BEGIN IMMEDIATE ... COMMIT around a write, rolled back when it
// fails (internal to the tuning database's source files).
#pragma once

#include <fmt/format.h>

#include "tunekit/records/tuning_db.hpp"

namespace tunekit {

template <class Fn>
auto TuningDb::in_transaction(Fn&& fn) -> decltype(fn()) {
  if (read_only_) {
    return Status(StatusCode::kIoError,
                  fmt::format("tuning database '{}' is read-only (a system database)", path_));
  }
  TUNEKIT_RETURN_IF_ERROR(exec("BEGIN IMMEDIATE"));
  auto result = fn();
  if (!result) {
    (void)exec("ROLLBACK");
    return result;
  }
  if (Status s = exec("COMMIT"); !s.is_ok()) {
    (void)exec("ROLLBACK");
    return s;
  }
  return result;
}

}  // namespace tunekit
