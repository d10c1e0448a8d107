#include "tunekit/measure/cpu_wait.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
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

// schedstat is "<run time ns> <run delay ns> <time slices>"; the second field.
bool thread_run_delay(const char* tid, std::int64_t& delay) noexcept {
  char path[300];  // d_name is at most 255 bytes
  std::snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", tid);
  char buf[128];
  if (!read_small(path, buf, sizeof buf)) return false;
  char* end = nullptr;
  (void)std::strtoll(buf, &end, 10);
  delay = std::strtoll(end, nullptr, 10);
  return true;
}

bool process_run_delay(std::int64_t& total) noexcept {
  DIR* dir = ::opendir("/proc/self/task");
  if (dir == nullptr) return false;
  total = 0;
  bool any = false;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::int64_t delay = 0;
    if (thread_run_delay(e->d_name, delay)) {  // a thread may end meanwhile: skip it
      total += delay;
      any = true;
    }
  }
  ::closedir(dir);
  return any;
}

}  // namespace

CpuWait read_cpu_wait() noexcept {
  CpuWait w;
  w.available = process_run_delay(w.run_delay_ns);
  return w;
}

double contention(const CpuWait& before, const CpuWait& after, std::int64_t wall_ns,
                  int cpus) noexcept {
  if (!before.available || !after.available || wall_ns <= 0) return 0.0;
  // Threads that ended between the readings make the run-delay sum shrink: count no loss then.
  const std::int64_t delay = std::max<std::int64_t>(0, after.run_delay_ns - before.run_delay_ns);
  const double share = static_cast<double>(delay) /
                       (static_cast<double>(wall_ns) * static_cast<double>(std::max(1, cpus)));
  return std::clamp(share, 0.0, 1.0);
}

int usable_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

}  // namespace tunekit::measure
