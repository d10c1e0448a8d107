// Keys of the kernel artefact cache: SHA-256 over everything that decides a build's output
// (language, source text, flags, definitions, target, compiler and its version).
#pragma once

#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// Collects the fields of a build and hashes them. Each field is added as `name`, its length
/// and its bytes, so that no two different field lists give the same input to the hash.
class CacheKey {
 public:
  /// Adds one named field; order matters.
  CacheKey& add(std::string_view name, std::string_view value);
  /// 64 lowercase hex digits: SHA-256 (OpenSSL EVP) of the fields added so far.
  /// Errors: kInternal when OpenSSL cannot compute SHA-256 (e.g. a provider is missing).
  Expected<std::string> hex() const;

 private:
  std::string input_;
};

/// 64 lowercase hex digits of SHA-256(`data`) through OpenSSL EVP.
/// Errors: kInternal naming OpenSSL's reason when the digest fails.
Expected<std::string> sha256_hex(std::string_view data);

}  // namespace tunekit
