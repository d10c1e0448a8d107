// SHA-256 keys of the kernel artefact cache through OpenSSL EVP.
// See include/tunekit/measure/cache_key.hpp.
#include "tunekit/measure/cache_key.hpp"

#include <fmt/format.h>
#include <openssl/err.h>
#include <openssl/evp.h>

namespace tunekit {

CacheKey& CacheKey::add(std::string_view name, std::string_view value) {
  input_ += fmt::format("{}:{}:", name, value.size());
  input_ += value;
  input_ += '\n';
  return *this;
}

Expected<std::string> CacheKey::hex() const { return sha256_hex(input_); }

Expected<std::string> sha256_hex(std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    char reason[256] = "unknown reason";
    if (const unsigned long code = ERR_get_error(); code != 0) {
      ERR_error_string_n(code, reason, sizeof reason);
    }
    return Status(StatusCode::kInternal, fmt::format("SHA-256 through OpenSSL failed: {}", reason));
  }
  std::string out;
  out.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) out += fmt::format("{:02x}", digest[i]);
  return out;
}

}  // namespace tunekit
