// _tunekit.autotvm.Space: the C++ ConfigSpace behind a template's `cfg` (python/tunekit/space.py).
// Definitions and payloads cross as JSON text, so Python sees exactly what the logs hold.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "autotvm.hpp"
#include "errors.hpp"
#include "json_argument.hpp"
#include "tunekit/measure/kernel_build.hpp"

namespace nb = nanobind;

namespace tunekit::python {
namespace {

using Sizes = std::vector<std::int64_t>;

/// The split sizes `filter` keeps among the entities `options` enumerate (the filter is a Python
/// callable on the size list, called here, under the GIL, once per entity).
std::set<Sizes> kept_splits(std::int64_t length, const SplitOptions& options,
                            const nb::callable& filter) {
  auto all = enumerate_split(length, options);
  if (!all) raise(all.status());
  std::set<Sizes> kept;
  for (const Sizes& sizes : *all) {
    if (nb::cast<bool>(filter(nb::cast(sizes)))) kept.insert(sizes);
  }
  return kept;
}

void define_split(SpaceHandle& h, const std::string& name, std::int64_t length,
                  const std::string& policy, int num_outputs, std::int64_t max_factor,
                  std::optional<bool> no_tail, std::optional<std::vector<Sizes>> candidates,
                  nb::object filter, const std::string& filter_name) {
  SplitOptions options;
  options.policy = policy;
  options.num_outputs = num_outputs;
  options.max_factor = max_factor;
  options.no_tail = no_tail;
  if (candidates) options.candidates = std::move(*candidates);
  if (!filter.is_none()) {
    // Keep no Python object inside the space: it is used without the GIL while tuning.
    auto kept = std::make_shared<const std::set<Sizes>>(
        kept_splits(length, options, nb::borrow<nb::callable>(filter)));
    options.filter = [kept](std::span<const std::int64_t> s) {
      return kept->count(Sizes(s.begin(), s.end())) > 0;
    };
    options.filter_name = filter_name;
  }
  check(h.space->define_split(name, length, options));
}

void define_reorder(SpaceHandle& h, const std::string& name, int num_axes,
                    const std::string& policy, std::optional<std::pair<int, int>> interval,
                    std::optional<std::vector<std::vector<int>>> candidates) {
  ReorderOptions options;
  options.policy = policy;
  if (interval) options.interval = *interval;
  if (candidates) options.candidates = std::move(*candidates);
  check(h.space->define_reorder(name, num_axes, options));
}

void define_annotate(SpaceHandle& h, const std::string& name, int num_axes,
                     const std::string& policy, int num_anchor) {
  AnnotateOptions options;
  options.policy = policy;
  options.num_anchor = num_anchor;
  check(h.space->define_annotate(name, num_axes, options));
}

void define_knob(SpaceHandle& h, const std::string& name, const std::string& values_json) {
  nlohmann::json values = parse_json(values_json, "knob values");
  if (!values.is_array()) raise_value_error("define_knob: the candidates must be a list");
  check(h.space->define_knob(name, std::vector<nlohmann::json>(values.begin(), values.end())));
}

const Knob& knob_named(const SpaceHandle& h, const std::string& name) {
  auto k = h.space->find_knob(name);
  if (!k) raise(Status(StatusCode::kNotFound, "no knob named '" + name + "' in the space"));
  return h.space->knob(*k);
}

/// The valid config at `index` (an error naming the index when it is not one).
Config valid_config(const SpaceHandle& h, std::uint64_t index) {
  auto config = h.space->get(index);
  if (!config) raise(config.status());
  return *config;
}

std::uint64_t index_of_entity(const SpaceHandle& h, const std::string& entity_json) {
  auto config = h.space->from_entity_json(parse_json(entity_json, "config entity"));
  if (!config) raise(config.status());
  if (!h.space->is_valid(config->index())) {
    raise(Status(StatusCode::kInvalidArgument,
                 "config " + config->to_string() + " violates a constraint of the space"));
  }
  return config->index();
}

std::vector<std::string> knob_field(const SpaceHandle& h, bool tags) {
  std::vector<std::string> out;
  for (const Knob& k : h.space->knobs()) out.emplace_back(tags ? knob_tag(k.kind) : k.name);
  return out;
}

void bind_space_definitions(nb::class_<SpaceHandle>& c) {
  c.def("define_split", &define_split, nb::arg("name"), nb::arg("length"), nb::arg("policy"),
        nb::arg("num_outputs"), nb::arg("max_factor"), nb::arg("no_tail").none(),
        nb::arg("candidates").none(), nb::arg("filter").none(), nb::arg("filter_name"));
  c.def("define_reorder", &define_reorder, nb::arg("name"), nb::arg("num_axes"), nb::arg("policy"),
        nb::arg("interval").none(), nb::arg("candidates").none());
  c.def("define_annotate", &define_annotate);
  c.def("define_knob", &define_knob);
  c.def("add_restriction", [](SpaceHandle& h, const std::string& expression) {
    check(h.space->add_restriction(expression));
  });
}

void bind_space_queries(nb::class_<SpaceHandle>& c) {
  c.def("knob_names", [](const SpaceHandle& h) { return knob_field(h, false); });
  c.def("knob_tags", [](const SpaceHandle& h) { return knob_field(h, true); });
  c.def("entities", [](const SpaceHandle& h, const std::string& name) {
    return nlohmann::json(knob_named(h, name).entities).dump();
  });
  c.def_prop_ro("range_length", [](const SpaceHandle& h) { return h.space->range_length(); });
  c.def("valid_count", [](const SpaceHandle& h) { return h.space->valid_count(); });
  c.def("is_valid", [](const SpaceHandle& h, std::uint64_t i) { return h.space->is_valid(i); });
  c.def("first_valid", [](const SpaceHandle& h) -> std::optional<std::uint64_t> {
    if (h.space->is_valid(0)) return 0;
    return h.space->get_next_index(0);
  });
  c.def("config_json",
        [](const SpaceHandle& h, std::uint64_t i) { return valid_config(h, i).to_json().dump(); });
  c.def("config_string",
        [](const SpaceHandle& h, std::uint64_t i) { return valid_config(h, i).to_string(); });
  c.def("index_of_entity", &index_of_entity);
  c.def("defines",
        [](const SpaceHandle& h, std::uint64_t i) { return config_defines(valid_config(h, i)); });
  c.def("check_define_names", [](const SpaceHandle& h) { check(check_define_names(*h.space)); });
  c.def("hash", [](const SpaceHandle& h) { return h.space->hash(); });
}

}  // namespace

void bind_space(nb::module_& m) {
  nb::class_<SpaceHandle> c(m, "Space",
                            "A config space (C++ ConfigSpace); tunekit.ConfigSpace wraps it.");
  c.def(nb::init<>());
  bind_space_definitions(c);
  bind_space_queries(c);
}

}  // namespace tunekit::python
