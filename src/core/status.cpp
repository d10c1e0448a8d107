// Status helpers: code names, formatting and the invariant-check abort.
// See include/tunekit/core/status.hpp.
#include "tunekit/core/status.hpp"

#include <cstdio>
#include <cstdlib>

namespace tunekit {

std::string_view to_string(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kParseError:
      return "parse error";
    case StatusCode::kValidatorMismatch:
      return "validator mismatch";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kWrongResult:
      return "wrong result";
    case StatusCode::kRuntimeError:
      return "runtime error";
    case StatusCode::kCompileError:
      return "compile error";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (is_ok()) return "ok";
  std::string out(tunekit::to_string(code_));
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

void check_failed(const char* expr, const char* file, int line) {
  std::fprintf(stderr, "tunekit: internal check failed: %s at %s:%d\n", expr, file, line);
  std::abort();
}

}  // namespace tunekit
