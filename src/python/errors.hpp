// Python exceptions for tunekit statuses: TunekitError and one subclass per kind of failure,
// each also a subclass of the built-in exception a Python user would catch (ValueError, ...).
#pragma once

#include <stdexcept>
#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::python {

/// A status on its way to Python: thrown by the bindings, translated into the exception class of
/// its code with the status message as the (one-line) text.
class StatusError : public std::runtime_error {
 public:
  explicit StatusError(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  const Status& status() const noexcept { return status_; }

 private:
  Status status_;
};

/// A wrong argument type or dtype: raised as tunekit.DTypeError (a TypeError).
class DTypeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Throws StatusError(status) (never returns).
[[noreturn]] void raise(Status status);
/// Throws StatusError(kInvalidArgument, message): tunekit.InvalidArgumentError, a ValueError.
[[noreturn]] void raise_value_error(std::string message);
/// Throws DTypeError(message).
[[noreturn]] void raise_type_error(std::string message);
/// Throws when `status` is not ok.
inline void check(Status status) {
  if (!status.is_ok()) [[unlikely]] {
    raise(std::move(status));
  }
}

}  // namespace tunekit::python
