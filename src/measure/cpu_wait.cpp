#include "tunekit/measure/cpu_wait.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace tunekit::measure {
namespace {

// Reads a small /proc file into buf (NUL-terminated); false on any error.
bool read_small(const char* path, char* buf, std::size_t size) noexcept {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, size - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// schedstat is "<run time ns> <run delay ns> <time slices>".
bool thread_times(const char* tid, std::int64_t& run, std::int64_t& delay) noexcept {
  char path[300];  // d_name is at most 255 bytes
  std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", tid);
  char buf[128];
  if (!read_small(path, buf, sizeof buf)) return false;
  char* end = nullptr;
  run = std::strtoll(buf, &end, 10);
  delay = std::strtoll(end, nullptr, 10);
  return true;
}

bool process_times(CpuWait& w) noexcept {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return false;
  bool any = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::int64_t run = 0, delay = 0;
    if (thread_times(e->d_name, run, delay)) {  // a thread may end meanwhile: skip it
      w.run_ns += run;
      w.run_delay_ns += delay;
      any = true;
    }
  }
  ::closedir(dir);
  return any;
}

}  // namespace

CpuWait read_cpu_wait() noexcept {
  CpuWait w;
  w.available = process_times(w);
  return w;
}

double contention(const CpuWait& before, const CpuWait& after) noexcept {
  if (!before.available || !after.available) return 0.0;
  // Threads that ended between the readings make the sums shrink: count no loss then.
  const auto delay =
      static_cast<double>(std::max<std::int64_t>(0, after.run_delay_ns - before.run_delay_ns));
  const auto run = static_cast<double>(std::max<std::int64_t>(0, after.run_ns - before.run_ns));
  return delay + run > 0.0 ? std::clamp(delay / (delay + run), 0.0, 1.0) : 0.0;
}

}  // namespace tunekit::measure
