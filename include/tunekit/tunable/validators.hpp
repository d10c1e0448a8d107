// Validator registry: key -> runtime getter of this machine's value (TUNEKIT_VERSION, CPU_MODEL,
// CPU_ISA, THREADS, one key per candidate library version), and the whole-file validation rule.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit {

/// The mandatory validator key (the counterpart of PyTorch's PT_VERSION).
inline constexpr std::string_view kVersionValidator = "TUNEKIT_VERSION";

/// Keys and runtime value getters written as `Validator,<KEY>,<VALUE>` lines. A results file is
/// accepted only if its key set equals the registered set and every value equals this machine's.
/// Backends register their keys (e.g. OPENBLAS_VERSION) before the first results file is read.
/// Thread-safe.
/// Source: PyTorch TunableOp TuningResultsValidator (PT_VERSION mandatory; library versions are
/// read at run time, PR #131078 / #147363).
class ValidatorRegistry {
 public:
  /// Returns this machine's value for the key; called whenever a header is written or a file is
  /// validated (so it should be cheap; cache inside if not).
  using Getter = std::function<std::string()>;

  /// Registers (or replaces, so repeated backend initialisation is harmless) `key`.
  /// Keys are upper-case words: [A-Z0-9_]+.
  /// Errors: kInvalidArgument for an empty or malformed key or an empty getter.
  Status register_validator(std::string key, Getter getter);
  /// Removes `key`; returns false if it was not registered. TUNEKIT_VERSION cannot be removed.
  bool unregister_validator(std::string_view key);
  /// True when `key` is registered.
  bool contains(std::string_view key) const;
  /// Registered keys in registration order.
  std::vector<std::string> keys() const;
  /// (key, value) pairs in registration order, values sanitised for CSV (see sanitize_value).
  std::vector<ValidatorEntry> values() const;
  /// Removes every key, TUNEKIT_VERSION included (for owners that re-register their set).
  void clear();

  /// Checks a file's validators against this machine.
  /// Errors: kValidatorMismatch with a message naming `file`, the key, the file's value and this
  /// machine's value, e.g. "tunekit_results0.csv: validator CPU_ISA differs: file has 'avx2',
  /// this machine has 'avx2+avx512f'"; missing mandatory key:
  /// `tunekit_results0.csv: key="TUNEKIT_VERSION" is not provided for validation`; a key only
  /// in the file or only registered is a mismatch too ("Unmatched validator").
  Status validate(const std::vector<ValidatorEntry>& file_validators, std::string_view file) const;

  /// Makes a value safe for one CSV field: ',' becomes ';', CR/LF become ' ', empty becomes
  /// "unknown".
  static std::string sanitize_value(std::string value);

 private:
  struct Item {
    std::string key;
    Getter getter;
  };
  mutable std::mutex mutex_;
  std::vector<Item> items_;
};

}  // namespace tunekit
