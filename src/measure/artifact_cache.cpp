// ArtifactCache: directory resolution, lookups and atomic stores of built kernels and failures.
// See include/tunekit/measure/artifact_cache.hpp.
#include "tunekit/measure/artifact_cache.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "tunekit/core/env.hpp"
#include "tunekit/core/file_io.hpp"

namespace tunekit {
namespace {

constexpr std::string_view kFailureSuffix = ".failed.txt";

Status io_error(std::string message) { return Status(StatusCode::kIoError, std::move(message)); }

bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

/// Writes all of `bytes` to the new file `path`.
Status write_new_file(const std::string& path, std::string_view bytes) {
  files::Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (fd.get() < 0) {
    return io_error(fmt::format("cannot create '{}': {}", path, std::strerror(errno)));
  }
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd.get(), bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : EIO;
      ::unlink(path.c_str());
      return io_error(fmt::format("cannot write '{}': {}", path, std::strerror(error)));
    }
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return Status::ok();
}

}  // namespace

Expected<std::string> resolve_kernel_cache_dir(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (auto dir = env::get_string("TUNEKIT_CACHE_DIR")) return *dir;
  if (auto xdg = env::get_string("XDG_CACHE_HOME")) return *xdg + "/tunekit/kernels";
  if (auto home = env::get_string("HOME")) return *home + "/.cache/tunekit/kernels";
  return Status(
      StatusCode::kInvalidArgument,
      "no kernel cache directory: set BuildOptions::cache_dir, TUNEKIT_CACHE_DIR or HOME");
}

Expected<ArtifactCache> ArtifactCache::open(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return io_error(
        fmt::format("cannot create the kernel cache directory '{}': {}", dir, ec.message()));
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    return io_error(
        fmt::format("cannot create the kernel cache directory '{}': Not a directory", dir));
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return io_error(
        fmt::format("kernel cache directory '{}' is not writable: {}", dir, std::strerror(errno)));
  }
  return ArtifactCache(dir);
}

std::string ArtifactCache::artifact_path(std::string_view key, std::string_view suffix) const {
  return fmt::format("{}/{}{}", dir_, key, suffix);
}

std::string ArtifactCache::failure_path(std::string_view key) const {
  return artifact_path(key, kFailureSuffix);
}

CacheLookup ArtifactCache::lookup(std::string_view key, std::string_view suffix) const {
  CacheLookup found;
  if (std::string path = artifact_path(key, suffix); is_regular_file(path)) {
    found.state = CacheLookup::State::kArtifact;
    found.path = std::move(path);
    return found;
  }
  std::string path = failure_path(key);
  auto fd = files::open_regular(path, O_RDONLY, "build diagnostics");
  if (!fd) return found;
  auto text = files::read_all(fd->get(), path, "build diagnostics");
  if (!text) return found;
  found.state = CacheLookup::State::kFailure;
  found.path = std::move(path);
  found.diagnostics = std::move(*text);
  return found;
}

std::string ArtifactCache::temp_path(std::string_view key, std::string_view suffix) const {
  static std::atomic<std::uint64_t> counter{0};
  return fmt::format("{}/.tmp-{}-{}-{}{}", dir_, key, ::getpid(), counter.fetch_add(1), suffix);
}

Expected<std::string> ArtifactCache::store_file(std::string_view key, std::string_view suffix,
                                                const std::string& temp_file) const {
  std::string path = artifact_path(key, suffix);
  if (::rename(temp_file.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temp_file.c_str());
    return io_error(
        fmt::format("cannot rename '{}' to '{}': {}", temp_file, path, std::strerror(error)));
  }
  return path;
}

Expected<std::string> ArtifactCache::store_bytes(std::string_view key, std::string_view suffix,
                                                 std::string_view bytes) const {
  const std::string temp = temp_path(key, suffix);
  TUNEKIT_RETURN_IF_ERROR(write_new_file(temp, bytes));
  return store_file(key, suffix, temp);
}

Status ArtifactCache::store_failure(std::string_view key, std::string_view diagnostics) const {
  auto stored = store_bytes(key, kFailureSuffix, diagnostics);
  return stored ? Status::ok() : stored.status();
}

}  // namespace tunekit
