// Thread counts for every GEMM library, library namespaces (dlmopen with an environment of their
// own) and the settle step between libraries. See include/tunekit/ops/threading.hpp.
#include "tunekit/ops/threading.hpp"

#include <cblas.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <string_view>
#include <thread>

#include "ops/gemm_internal.hpp"
#include "ops/namespace_open.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"

extern "C" char** environ;  // NOLINT: POSIX

namespace tunekit::ops {
namespace {

std::atomic<int> g_threads{0};  // 0 until the first use applies the default
std::atomic<long> g_last_runtime{-1};
std::once_flag g_default_once;

int usable_cores() { return std::max(1, hw::cpu().usable_cores); }

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<detail::LibraryNamespace*>& registry() {
  static auto* namespaces = new std::vector<detail::LibraryNamespace*>();  // never destroyed
  return *namespaces;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int set_num_threads(int n) {
  const int usable = usable_cores();
  int applied = n <= 0 ? usable : std::min(n, usable);
  if (n > usable) {
    log::info(1, "ops: {} threads requested, clamped to the {} usable cores", n, usable);
  }
  g_threads.store(applied, std::memory_order_release);
  openblas_set_num_threads(applied);
  omp_set_num_threads(applied);
  detail::set_eigen_threads(applied);
  detail::sync_all_namespaces();
  return applied;
}

int num_threads() noexcept {
  int n = g_threads.load(std::memory_order_acquire);
  if (n == 0) {
    std::call_once(g_default_once, [] {
      if (g_threads.load(std::memory_order_acquire) == 0) (void)set_num_threads(0);
    });
    n = g_threads.load(std::memory_order_acquire);
  }
  return n;
}

std::chrono::microseconds settle_threads(std::chrono::milliseconds max_wait) {
  using Clock = std::chrono::steady_clock;
  constexpr auto kSlice = std::chrono::microseconds(500);
  constexpr double kQuietFraction = 0.25;  // of one core over a slice
  const auto start = Clock::now();
  const auto deadline = start + max_wait;
  while (true) {
    const double cpu0 = process_cpu_seconds();
    const auto t0 = Clock::now();
    std::this_thread::sleep_for(kSlice);
    const double busy = process_cpu_seconds() - cpu0;
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    if (busy < kQuietFraction * wall || Clock::now() >= deadline) break;
  }
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - start);
}

namespace detail {

void note_runtime(long runtime) noexcept {
  if (g_last_runtime.load(std::memory_order_relaxed) != runtime) {
    g_last_runtime.store(runtime, std::memory_order_relaxed);
  }
}

long last_runtime() noexcept { return g_last_runtime.load(std::memory_order_relaxed); }

std::vector<std::string> environment_with(const std::vector<std::string>& overrides) {
  auto name_of = [](std::string_view entry) { return entry.substr(0, entry.find('=')); };
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const bool replaced = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const auto& o) { return name_of(o) == name_of(entry); });
    if (!replaced) env.emplace_back(entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

void sync_main_threads() noexcept {
  const int n = num_threads();
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

Expected<LibraryNamespace*> LibraryNamespace::load(const std::string& path,
                                                   const std::vector<std::string>& overrides,
                                                   ThreadSetter set_threads) {
  if (TUNEKIT_OPS_ASAN) {
    return Status(StatusCode::kUnsupported,
                  fmt::format("{}: library namespaces (dlmopen) do not work under "
                              "AddressSanitizer",
                              path));
  }
  std::string key = path;
  for (const std::string& o : overrides) key += "\n" + o;
  std::lock_guard lock(registry_mutex());
  for (LibraryNamespace* loaded : registry()) {
    if (loaded->key_ == key) return loaded;  // one copy per (library, settings) per process
  }
  auto ns = std::unique_ptr<LibraryNamespace>(new LibraryNamespace());
  ns->key_ = std::move(key);
  const bool user_spin =
      std::getenv("GOMP_SPINCOUNT") != nullptr || std::getenv("OMP_WAIT_POLICY") != nullptr;
  std::vector<std::string> settings = overrides;
  if (!user_spin) settings.push_back(fmt::format("GOMP_SPINCOUNT={}", kNamespaceGompSpinCount));
  ns->env_strings_ = environment_with(settings);
  for (std::string& s : ns->env_strings_) ns->env_.push_back(s.data());
  ns->env_.push_back(nullptr);

  // The new namespace's libc takes `environ` as its environment when it initialises inside
  // dlmopen and keeps pointing at ns->env_ afterwards; the process environment is restored at
  // once and never modified.
  char** saved = environ;
  environ = ns->env_.data();
  void* handle = dlmopen_with_own_keys(path.c_str(), ns->keys_);
  environ = saved;
  if (handle == nullptr) {
    const char* error = dlerror();
    return Status(StatusCode::kUnsupported,
                  fmt::format("cannot load {} into a new namespace: {}", path,
                              error != nullptr ? error : "unknown dlmopen error"));
  }
  ns->handle_ = handle;
  Lmid_t lmid = LM_ID_BASE;
  if (dlinfo(handle, RTLD_DI_LMID, &lmid) == 0) ns->namespace_id_ = lmid;
  ns->set_threads_ = std::move(set_threads);
  ns->omp_get_max_threads_ = reinterpret_cast<int (*)()>(dlsym(handle, "omp_get_max_threads"));
  ns->omp_set_num_threads_ = reinterpret_cast<void (*)(int)>(dlsym(handle, "omp_set_num_threads"));
  if (ns->omp_get_max_threads_ == nullptr || ns->omp_set_num_threads_ == nullptr) {
    ns->omp_get_max_threads_ = nullptr;
    ns->omp_set_num_threads_ = nullptr;
  }
  LibraryNamespace* raw = ns.release();  // lives as long as the process
  registry().push_back(raw);
  log::info(2, "ops: loaded {} into namespace {}", path, raw->namespace_id_);
  return raw;
}

void* LibraryNamespace::symbol(const char* name) const noexcept { return dlsym(handle_, name); }

void LibraryNamespace::sync_threads() noexcept {
  // Before anything of the namespace runs on this thread (see own_key_blocks).
  thread_local std::vector<const LibraryNamespace*> owned;
  if (!keys_.empty() && std::find(owned.begin(), owned.end(), this) == owned.end()) {
    own_key_blocks(keys_);
    owned.push_back(this);
  }
  const int n = num_threads();
  if (applied_threads_.load(std::memory_order_acquire) != n) {
    std::lock_guard lock(set_mutex_);
    if (applied_threads_.load(std::memory_order_acquire) != n) {
      if (set_threads_) set_threads_(handle_, n);
      applied_threads_.store(n, std::memory_order_release);
    }
  }
  if (omp_get_max_threads_ != nullptr && omp_get_max_threads_() != n) omp_set_num_threads_(n);
}

void sync_all_namespaces() noexcept {
  std::lock_guard lock(registry_mutex());
  for (LibraryNamespace* ns : registry()) ns->sync_threads();
}

}  // namespace detail
}  // namespace tunekit::ops
