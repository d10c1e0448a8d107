// Leveled, thread-safe logging sink.
// See include/tunekit/core/log.hpp.
#include "tunekit/core/log.hpp"

#include <algorithm>
#include <cstdio>
#include <mutex>

namespace tunekit::log {
namespace {
std::atomic<int> g_level{0};
std::mutex g_mutex;
FILE* g_sink = nullptr;  // nullptr means stderr
bool g_owned = false;
void (*g_clear)(void*) = nullptr;  // the terminal line's clearer (set_line_clearer)
void* g_clear_context = nullptr;
}  // namespace

int level() noexcept { return g_level.load(std::memory_order_relaxed); }

void set_level(int lvl) noexcept {
  g_level.store(std::clamp(lvl, 0, 3), std::memory_order_relaxed);
}

Status set_sink(const std::string& sink) {
  std::lock_guard lock(g_mutex);
  FILE* next = nullptr;
  bool owned = false;
  if (sink.empty() || sink == "err") {
    next = nullptr;
  } else if (sink == "out") {
    next = stdout;
  } else {
    next = std::fopen(sink.c_str(), "a");
    if (next == nullptr) {
      return Status(StatusCode::kIoError, "cannot open verbose log file '" + sink + "'");
    }
    owned = true;
  }
  if (g_owned && g_sink != nullptr) std::fclose(g_sink);
  g_sink = next;
  g_owned = owned;
  return Status::ok();
}

void set_line_clearer(void (*clear)(void* context), void* context) noexcept {
  std::lock_guard lock(g_mutex);
  g_clear = clear;
  g_clear_context = context;
}

static void emit(std::string_view prefix, std::string_view message) {
  std::lock_guard lock(g_mutex);
  FILE* f = g_sink ? g_sink : stderr;
  if (g_clear != nullptr && !g_owned) g_clear(g_clear_context);
  std::fprintf(f, "tunekit%.*s: %.*s\n", static_cast<int>(prefix.size()), prefix.data(),
               static_cast<int>(message.size()), message.data());
  std::fflush(f);
}

void write(int at_level, std::string_view message) {
  if (at_level <= level()) emit("", message);
}

void warn(std::string_view message) { emit(" warning", message); }

}  // namespace tunekit::log
