// Links against an installed tunekit and prints its version: proves the package config works.
#include <cstdio>
#include <cstring>

#include "tunekit/core/status.hpp"
#include "tunekit/core/version.hpp"

int main() {
  const tunekit::Status s(tunekit::StatusCode::kNotFound, "probe");
  if (s.is_ok() || std::strlen(tunekit::version()) == 0) return 1;
  std::printf("tunekit %s\n", tunekit::version());
  return 0;
}
