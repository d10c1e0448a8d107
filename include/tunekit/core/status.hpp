// Status codes, Status, Expected<T> and the Error exception of tunekit.
// Failures inside tuning are values (Status / Expected); the public facade throws Error on misuse.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace tunekit {

/// Outcome classes shared by candidates, runners, file readers and the CLI.
/// Numbering is stable (it is written into logs); never reorder.
enum class StatusCode : std::uint8_t {
  kOk = 0,
  kUnsupported,        ///< candidate/config not applicable to this problem (not an error)
  kInvalidArgument,    ///< malformed user input (value, shape, setting)
  kParseError,         ///< malformed file content; message names file:line
  kValidatorMismatch,  ///< results file written under another environment
  kIoError,            ///< open/read/write/lock failure
  kNotFound,           ///< unknown name (solution, candidate, task)
  kWrongResult,        ///< numerical check failed
  kRuntimeError,       ///< candidate or kernel failed while running
  kCompileError,       ///< builder failed
  kTimeout,            ///< exceeded its time budget
  kInternal,           ///< a tunekit bug
};

/// Human-readable, stable name of a status code ("ok", "unsupported", ...).
std::string_view to_string(StatusCode code) noexcept;

/// A status code plus a message. Cheap to copy when ok (empty message).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return {}; }
  bool is_ok() const noexcept { return code_ == StatusCode::kOk; }
  explicit operator bool() const noexcept { return is_ok(); }
  StatusCode code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  /// "<code>: <message>" or "ok".
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// Exception thrown by the public facade (tunekit::gemm, TuningContext setters) on misuse.
class Error : public std::runtime_error {
 public:
  explicit Error(Status status)
      : std::runtime_error(status.message()), status_(std::move(status)) {}
  Error(StatusCode code, const std::string& message) : Error(Status(code, message)) {}
  StatusCode code() const noexcept { return status_.code(); }
  const Status& status() const noexcept { return status_; }

 private:
  Status status_;
};

/// Either a value or a non-ok Status. `value()` throws Error when it holds a status.
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Expected(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    if (std::get<Status>(v_).is_ok()) {
      v_ = Status(StatusCode::kInternal, "Expected constructed from an ok Status");
    }
  }

  bool has_value() const noexcept { return std::holds_alternative<T>(v_); }
  explicit operator bool() const noexcept { return has_value(); }
  T& value() & {
    throw_if_error();
    return std::get<T>(v_);
  }
  const T& value() const& {
    throw_if_error();
    return std::get<T>(v_);
  }
  T&& value() && {
    throw_if_error();
    return std::get<T>(std::move(v_));
  }
  T& operator*() & { return std::get<T>(v_); }
  const T& operator*() const& { return std::get<T>(v_); }
  T* operator->() { return &std::get<T>(v_); }
  const T* operator->() const { return &std::get<T>(v_); }
  /// The error; Status::ok() when a value is held.
  Status status() const { return has_value() ? Status::ok() : std::get<Status>(v_); }

 private:
  void throw_if_error() const {
    if (!has_value()) throw Error(std::get<Status>(v_));
  }
  std::variant<T, Status> v_;
};

/// Aborts with file:line on a violated internal invariant. Never used for user input.
[[noreturn]] void check_failed(const char* expr, const char* file, int line);

}  // namespace tunekit

#define TUNEKIT_CHECK(cond) \
  ((cond) ? static_cast<void>(0) : ::tunekit::check_failed(#cond, __FILE__, __LINE__))

#define TUNEKIT_RETURN_IF_ERROR(expr)           \
  do {                                          \
    ::tunekit::Status tk_status_ = (expr);      \
    if (!tk_status_.is_ok()) return tk_status_; \
  } while (0)
