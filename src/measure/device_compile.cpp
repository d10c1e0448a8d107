// Shared helpers of the device compilers: define options and the first lines of a log.
#include "tunekit/measure/device_compile.hpp"

#include <fcntl.h>

#include <sstream>

#include "tunekit/core/file_io.hpp"

namespace tunekit {

std::vector<std::string> define_options(
    std::span<const std::pair<std::string, std::string>> defines) {
  std::vector<std::string> options;
  options.reserve(defines.size());
  for (const auto& [name, value] : defines) options.push_back("-D" + name + "=" + value);
  return options;
}

std::string first_log_lines(const std::string& log, int max_lines) {
  std::istringstream in(log);
  std::string line;
  std::string joined;
  int taken = 0;
  while (taken < max_lines && std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (!joined.empty()) joined += "; ";
    joined += line;
    ++taken;
  }
  return joined;
}

Expected<std::string> read_artifact(const std::string& path) {
  auto fd = files::open_regular(path, O_RDONLY, "kernel artefact");
  if (!fd) return fd.status();
  return files::read_all(fd->get(), path, "kernel artefact");
}

}  // namespace tunekit
