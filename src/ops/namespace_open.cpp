// Library namespaces whose C library uses pthread keys of their own.
// See src/ops/namespace_open.hpp.
#include "ops/namespace_open.hpp"

#include <dlfcn.h>

#include <algorithm>

namespace tunekit::ops::detail {
namespace {

/// Keys set aside for one namespace.
constexpr std::size_t kKeysPerNamespace = 6;

using KeyCreate = int (*)(pthread_key_t*, void (*)(void*));
using KeyDelete = int (*)(pthread_key_t);

/// Takes `count` keys from the main C library for good (it never hands them out again); empty
/// when it has not that many left.
std::vector<pthread_key_t> take_main_keys(std::size_t count) {
  std::vector<pthread_key_t> keys;
  for (std::size_t i = 0; i < count; ++i) {
    pthread_key_t key;
    if (pthread_key_create(&key, nullptr) != 0) break;
    keys.push_back(key);
  }
  if (keys.size() != count) {
    for (pthread_key_t k : keys) pthread_key_delete(k);
    keys.clear();
  }
  return keys;
}

/// Makes `keys` the next keys the namespace's C library `libc` hands out: every lower key is
/// taken there, the chosen ones are given back.
bool steer_namespace_keys(void* libc, const std::vector<pthread_key_t>& keys) {
  auto create = reinterpret_cast<KeyCreate>(dlsym(libc, "pthread_key_create"));
  auto remove = reinterpret_cast<KeyDelete>(dlsym(libc, "pthread_key_delete"));
  if (create == nullptr || remove == nullptr) return false;
  const pthread_key_t last = *std::max_element(keys.begin(), keys.end());
  pthread_key_t key = 0;
  do {
    if (create(&key, nullptr) != 0) return false;
  } while (key < last);
  for (pthread_key_t k : keys) remove(k);
  return true;
}

}  // namespace

void* dlmopen_with_own_keys(const char* path, std::vector<pthread_key_t>& keys) {
  keys = take_main_keys(kKeysPerNamespace);
  void* libc = keys.empty() ? nullptr : dlmopen(LM_ID_NEWLM, "libc.so.6", RTLD_NOW | RTLD_LOCAL);
  Lmid_t lmid = LM_ID_NEWLM;
  if (libc != nullptr && steer_namespace_keys(libc, keys)) {
    dlinfo(libc, RTLD_DI_LMID, &lmid);
    own_key_blocks(keys);  // the library's constructors run on this thread
  } else {
    keys.clear();
  }
  // Without its own keys the library goes into a namespace of its own as plain dlmopen does.
  return dlmopen(lmid, path, RTLD_NOW | RTLD_LOCAL);  // the namespace's libc stays with it
}

void own_key_blocks(const std::vector<pthread_key_t>& keys) noexcept {
  static int marker = 0;
  for (pthread_key_t key : keys) {
    pthread_setspecific(key, &marker);  // allocates the key's block with the main malloc
    pthread_setspecific(key, nullptr);  // and leaves the slot empty for the namespace
  }
}

}  // namespace tunekit::ops::detail
