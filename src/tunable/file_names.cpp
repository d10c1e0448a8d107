// Results and untuned file names. See include/tunekit/tunable/file_names.hpp.
#include "tunekit/tunable/file_names.hpp"

namespace tunekit {
namespace {

std::size_t base_name_start(std::string_view name) {
  const std::size_t slash = name.rfind('/');
  return slash == std::string_view::npos ? 0 : slash + 1;
}

std::string insert_before_last_dot(std::string_view name, std::string_view ordinal) {
  const std::size_t base = base_name_start(name);
  const std::size_t dot = name.rfind('.');
  std::string out(name);
  if (dot == std::string_view::npos || dot < base) return out.append(ordinal);
  out.insert(dot, ordinal);
  return out;
}

}  // namespace

std::string insert_at_ordinal(std::string_view name, std::string_view text) {
  if (const std::size_t pct = name.find("%d"); pct != std::string_view::npos) {
    std::string out(name);
    out.replace(pct, 2, text);
    return out;
  }
  return insert_before_last_dot(name, text);
}

std::string insert_device_ordinal(std::string_view name, int device) {
  return insert_at_ordinal(name, std::to_string(device));
}

std::string insert_device_ordinal_before_extension(std::string_view name, int device) {
  return insert_before_last_dot(name, std::to_string(device));
}

}  // namespace tunekit
