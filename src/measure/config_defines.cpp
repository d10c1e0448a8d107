// The preprocessor definitions (-D NAME=value) a configuration becomes, and the check that
// every parameter name can be one. See include/tunekit/measure/kernel_build.hpp.
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/measure/kernel_build.hpp"

namespace tunekit {
namespace {

using Defines = std::vector<std::pair<std::string, std::string>>;

/// Macro body of one JSON scalar: integers in decimal, booleans 1/0, strings as written.
std::string scalar_text(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "1" : "0";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_null()) return "";
  return value.dump();
}

/// Split sizes with the outer -1 replaced by ceil(length / product of the other sizes).
std::vector<std::string> split_texts(const Knob& knob, const nlohmann::json& sizes) {
  std::vector<std::string> out;
  const auto length = knob.definition.value("length", std::int64_t{0});
  std::int64_t inner = 1;
  for (std::size_t i = 1; i < sizes.size(); ++i) inner *= sizes[i].get<std::int64_t>();
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const auto size = sizes[i].get<std::int64_t>();
    if (i == 0 && size < 0 && length > 0 && inner > 0) {
      out.push_back(std::to_string((length + inner - 1) / inner));
    } else {
      out.push_back(std::to_string(size));
    }
  }
  return out;
}

/// NAME_0.. for a split, reorder or annotate entity.
void add_indexed(Defines& out, const Knob& knob, const nlohmann::json& entity) {
  if (knob.kind == KnobKind::kSplit) {
    const auto texts = split_texts(knob, entity);
    for (std::size_t i = 0; i < texts.size(); ++i) {
      out.emplace_back(fmt::format("{}_{}", knob.name, i), texts[i]);
    }
    return;
  }
  for (std::size_t i = 0; i < entity.size(); ++i) {
    out.emplace_back(fmt::format("{}_{}", knob.name, i), scalar_text(entity[i]));
  }
}

}  // namespace

Defines config_defines(const Config& config) {
  Defines out;
  const ConfigSpace* space = config.space();
  if (space == nullptr) return out;
  for (std::size_t k = 0; k < config.knobs().size(); ++k) {
    const Knob& knob = space->knob(k);
    const nlohmann::json& entity = knob.entities[config.knobs()[k]];
    if (knob.kind == KnobKind::kOther || !entity.is_array()) {
      out.emplace_back(knob.name, scalar_text(entity));
    } else {
      add_indexed(out, knob, entity);
    }
  }
  return out;
}

bool is_c_identifier(std::string_view name) noexcept {
  if (name.empty()) return false;
  const auto alpha = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  if (!alpha(name.front())) return false;
  for (char c : name) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

Status check_define_names(const ConfigSpace& space) {
  for (const Knob& knob : space.knobs()) {
    if (!is_c_identifier(knob.name)) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("parameter '{}' is not a C identifier, so it cannot be a "
                                "preprocessor definition",
                                knob.name));
    }
  }
  return Status::ok();
}

}  // namespace tunekit
