// The kernel artefact cache: a directory of built artefacts (shared objects, program binaries,
// modules) and of failed builds' diagnostics, named by CacheKey, written atomically.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// The cache directory BuildOptions::cache_dir names: `configured` when not empty, else
/// $TUNEKIT_CACHE_DIR, else $XDG_CACHE_HOME/tunekit/kernels, else $HOME/.cache/tunekit/kernels.
/// Errors: kInvalidArgument when all of them are empty or unset.
Expected<std::string> resolve_kernel_cache_dir(const std::string& configured);

/// What the cache holds for a key.
struct CacheLookup {
  enum class State : std::uint8_t {
    kMiss,      ///< never built (or the entry was removed)
    kArtifact,  ///< built: `path` is the artefact
    kFailure,   ///< the build failed: `path` is the diagnostics file, `diagnostics` its text
  };
  State state = State::kMiss;
  std::string path;
  std::string diagnostics;
};

/// A cache directory. Entries are `<key><suffix>` (artefacts, e.g. ".so", ".clbin", ".cubin")
/// and `<key>.failed.txt` (the full diagnostics of a failed build). Every file is written under
/// a temporary name in the same directory and renamed into place, so builders in other threads
/// or processes see an entry whole or not at all; two builders of the same key both write and
/// the last rename wins (the contents are the same). Stale `.tmp-*` files of a killed builder
/// may be deleted at any time.
/// Language-neutral: the C/C++, OpenCL and CUDA builders share it.
/// Thread safety: all members are const and may be called concurrently.
class ArtifactCache {
 public:
  /// The cache in `dir`, created with its parents when missing.
  /// Errors: kIoError "cannot create the kernel cache directory '<dir>': <reason>", or
  /// "kernel cache directory '<dir>' is not writable: <reason>".
  static Expected<ArtifactCache> open(const std::string& dir);

  /// The directory.
  const std::string& dir() const noexcept { return dir_; }
  /// Where the artefact of `key` lies once stored: <dir>/<key><suffix>.
  std::string artifact_path(std::string_view key, std::string_view suffix) const;
  /// Where the diagnostics of a failed build of `key` lie: <dir>/<key>.failed.txt.
  std::string failure_path(std::string_view key) const;

  /// The artefact `<key><suffix>` when present, else the stored failure of `key`, else a miss.
  CacheLookup lookup(std::string_view key, std::string_view suffix) const;

  /// A fresh file name in the cache directory for a builder to write to before store_file:
  /// <dir>/.tmp-<key>-<pid>-<n><suffix>, unique per call in this process.
  std::string temp_path(std::string_view key, std::string_view suffix) const;
  /// Renames `temp_file` (a temp_path of this cache) into place as `<key><suffix>` and returns
  /// the final path. Errors: kIoError naming both paths and the reason (temp_file is removed).
  Expected<std::string> store_file(std::string_view key, std::string_view suffix,
                                   const std::string& temp_file) const;
  /// Writes `bytes` as `<key><suffix>` (through a temporary file) and returns the final path.
  /// Errors: kIoError naming the file and the reason.
  Expected<std::string> store_bytes(std::string_view key, std::string_view suffix,
                                    std::string_view bytes) const;
  /// Stores the full diagnostics of a failed build of `key`; a later lookup reports them
  /// instead of building again. Errors: those of store_bytes.
  Status store_failure(std::string_view key, std::string_view diagnostics) const;

 private:
  explicit ArtifactCache(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace tunekit
