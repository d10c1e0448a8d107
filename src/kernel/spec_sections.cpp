// Kernel spec sections configuring measurement and search (launch, verify, timing, build,
// isolation, strategy, budget, log), each checked field by field.
#include "spec_sections.hpp"

#include <fmt/format.h>

#include <limits>

#include "tunekit/search/strategy.hpp"

namespace tunekit::kernel_detail {

namespace {

constexpr std::int64_t kMaxCount = 1'000'000'000;

/// Calls `read(value, field)` for `object[key]` when present.
template <class Read>
Status optional_field(const Json& object, const char* key, const std::string& where, Read read) {
  if (!object.contains(key)) return Status::ok();
  return read(object[key], where.empty() ? std::string(key) : where + "." + key);
}

/// Stores a getter's value in `out` (converted) or returns its error.
template <class Out, class Value>
Status store(Expected<Value> value, Out& out) {
  if (!value) return value.status();
  out = static_cast<Out>(*value);
  return Status::ok();
}

}  // namespace

Status SectionReader::read_all() {
  TUNEKIT_RETURN_IF_ERROR(read_launch());
  TUNEKIT_RETURN_IF_ERROR(read_verify());
  TUNEKIT_RETURN_IF_ERROR(read_timing());
  TUNEKIT_RETURN_IF_ERROR(read_build());
  TUNEKIT_RETURN_IF_ERROR(read_isolation());
  TUNEKIT_RETURN_IF_ERROR(read_strategy());
  TUNEKIT_RETURN_IF_ERROR(read_budget());
  return read_log();
}

Status SectionReader::read_launch() {
  if (!root_.contains("launch")) return Status::ok();
  const Json& launch = root_["launch"];
  TUNEKIT_RETURN_IF_ERROR(f_.only_keys(launch, {"global", "local"}, "launch"));
  std::vector<std::string> known;
  for (const auto& [name, value] : scalars_) known.push_back(name);
  for (const Knob& k : spec_.space->knobs()) known.push_back(k.name);
  auto read_dims = [&](const char* key, std::vector<std::string>& out) -> Status {
    if (!launch.contains(key)) return Status::ok();
    const std::string field = std::string("launch.") + key;
    const Json& dims = launch[key];
    if (!dims.is_array() || dims.empty() || dims.size() > 3) {
      return f_.bad(field, "expected a list of 1 to 3 sizes");
    }
    for (std::size_t i = 0; i < dims.size(); ++i) {
      const std::string at = fmt::format("{}[{}]", field, i);
      if (!dims[i].is_string() && !dims[i].is_number()) {
        return f_.bad(
            at, fmt::format("expected a number or an expression, got {}", json_kind(dims[i])));
      }
      std::string text = dims[i].is_string() ? dims[i].get<std::string>() : dims[i].dump();
      TUNEKIT_RETURN_IF_ERROR(f_.check_names(text, at, known));
      out.push_back(std::move(text));
    }
    return Status::ok();
  };
  TUNEKIT_RETURN_IF_ERROR(read_dims("global", spec_.source.launch.global));
  TUNEKIT_RETURN_IF_ERROR(read_dims("local", spec_.source.launch.local));
  const LaunchGeometry& g = spec_.source.launch;
  if (!g.local.empty() && g.local.size() != g.global.size()) {
    return f_.bad("launch.local", fmt::format("{} dimension(s), but launch.global has {}",
                                              g.local.size(), g.global.size()));
  }
  return Status::ok();
}

Status SectionReader::read_verify() {
  if (!root_.contains("verify")) return Status::ok();
  const Json& v = root_["verify"];
  TUNEKIT_RETURN_IF_ERROR(f_.only_keys(v, {"atol", "rtol", "reference", "function"}, "verify"));
  VerifyRule& rule = spec_.verify;
  TUNEKIT_RETURN_IF_ERROR(optional_field(v, "atol", "verify", [&](const Json& x, auto field) {
    return store(f_.number(x, field, 0.0), rule.atol);
  }));
  TUNEKIT_RETURN_IF_ERROR(optional_field(v, "rtol", "verify", [&](const Json& x, auto field) {
    return store(f_.number(x, field, 0.0), rule.rtol);
  }));
  if (v.contains("function")) TUNEKIT_RETURN_IF_ERROR(read_verify_function(v["function"]));
  if (v.contains("reference")) return read_reference(v["reference"]);
  return Status::ok();
}

Status SectionReader::read_reference(const Json& ref) {
  VerifyRule& rule = spec_.verify;
  if (ref.is_string()) {
    const std::string text = ref.get<std::string>();
    if (text == "first") {
      rule.reference = VerifyRule::Reference::kFirstValid;
    } else if (text == "none") {
      rule.reference = VerifyRule::Reference::kNone;
    } else {
      return f_.bad("verify.reference",
                    fmt::format("unknown reference '{}' (accepted: \"first\", \"none\", "
                                "{{\"params\": {{...}}}} or {{\"source\": ..., \"entry\": ...}})",
                                text));
    }
    return Status::ok();
  }
  if (!ref.is_object()) {
    return f_.bad("verify.reference",
                  fmt::format("expected a string or an object, got {}", json_kind(ref)));
  }
  if (ref.contains("params")) {
    TUNEKIT_RETURN_IF_ERROR(f_.only_keys(ref, {"params"}, "verify.reference"));
    return read_reference_params(ref["params"]);
  }
  return read_reference_kernel(ref);
}

Status SectionReader::read_reference_params(const Json& params) {
  const std::string field = "verify.reference.params";
  if (!params.is_object()) return f_.bad(field, "expected an object {\"parameter\": value}");
  nlohmann::json entity = nlohmann::json::array();
  for (const Knob& k : spec_.space->knobs()) {
    if (!params.contains(k.name)) return f_.bad(field, "parameter '" + k.name + "' is missing");
    entity.push_back({k.name, "ot", nlohmann::json::parse(params[k.name].dump())});
  }
  for (const auto& [name, value] : params.items()) {
    if (!spec_.space->find_knob(name)) {
      return f_.bad(field, "'" + name + "' is not a parameter of the space");
    }
  }
  auto config = spec_.space->from_entity_json(entity);
  if (!config) return f_.wrap(field, config.status());
  spec_.verify.reference = VerifyRule::Reference::kConfig;
  spec_.verify.reference_params = nlohmann::json::parse(params.dump());
  return Status::ok();
}

Status SectionReader::read_reference_kernel(const Json& ref) {
  if (!ref.contains("source")) {
    return f_.bad("verify.reference", "give \"params\" or \"source\" (with \"entry\")");
  }
  KernelSource& r = spec_.verify.reference_source;
  r.name = spec_.source.name + ".reference";
  r.language = spec_.source.language;
  r.flags = spec_.source.flags;
  r.entry = spec_.source.entry;
  TUNEKIT_RETURN_IF_ERROR(read_side_source(ref, "verify.reference", r));
  spec_.verify.reference = VerifyRule::Reference::kKernel;
  return Status::ok();
}

Status SectionReader::read_verify_function(const Json& fn) {
  const std::string where = "verify.function";
  if (!fn.is_object() || !fn.contains("source") || !fn.contains("entry")) {
    return f_.bad(where, "expected {\"source\": \"check.cpp\", \"entry\": \"check\"}");
  }
  KernelSource& f = spec_.verify.function;
  f.name = spec_.source.name + ".verify";
  f.language = KernelLanguage::kCpp;  // runs on the host whatever the kernel's language
  f.flags = {"-O2"};
  return read_side_source(fn, where, f);
}

Status SectionReader::read_side_source(const Json& obj, const std::string& where,
                                       KernelSource& out) {
  TUNEKIT_RETURN_IF_ERROR(f_.only_keys(obj, {"source", "entry", "flags"}, where));
  auto path = f_.string(obj["source"], where + ".source");
  if (!path) return path.status();
  out.path = resolve_path(spec_.directory, *path);
  auto text = read_source(f_, out.path, where + ".source");
  if (!text) return text.status();
  out.text = std::move(*text);
  TUNEKIT_RETURN_IF_ERROR(optional_field(obj, "entry", where, [&](const Json& x, auto field) {
    return store(f_.string(x, field), out.entry);
  }));
  return optional_field(obj, "flags", where, [&](const Json& x, auto field) {
    auto flags = f_.strings(x, field);
    if (!flags) return flags.status();
    out.flags = std::move(*flags);
    return Status::ok();
  });
}

Status SectionReader::read_timing() {
  if (!root_.contains("timing")) return Status::ok();
  const Json& t = root_["timing"];
  TUNEKIT_RETURN_IF_ERROR(f_.only_keys(
      t, {"number", "repeat", "min_repeat_ms", "warmup", "cooldown", "flush_cache", "timeout"},
      "timing"));
  KernelTiming& out = spec_.timing;
  auto count = [&](const char* key, std::int64_t min, int& slot) {
    return optional_field(t, key, "timing", [&](const Json& x, auto field) {
      return store(f_.integer(x, field, min, kMaxCount), slot);
    });
  };
  auto seconds = [&](const char* key, double min, double& slot) {
    return optional_field(t, key, "timing", [&](const Json& x, auto field) {
      return store(f_.number(x, field, min), slot);
    });
  };
  TUNEKIT_RETURN_IF_ERROR(count("number", 1, out.number));
  TUNEKIT_RETURN_IF_ERROR(count("repeat", 1, out.repeat));
  TUNEKIT_RETURN_IF_ERROR(count("warmup", 0, out.warmup));
  TUNEKIT_RETURN_IF_ERROR(seconds("min_repeat_ms", 0.0, out.min_repeat_ms));
  TUNEKIT_RETURN_IF_ERROR(seconds("cooldown", 0.0, out.cooldown_s));
  TUNEKIT_RETURN_IF_ERROR(seconds("timeout", 1e-3, out.timeout_s));
  return optional_field(t, "flush_cache", "timing", [&](const Json& x, auto field) {
    return store(f_.boolean(x, field), out.flush_cache);
  });
}

Status SectionReader::read_build() {
  if (!root_.contains("build")) return Status::ok();
  const Json& b = root_["build"];
  TUNEKIT_RETURN_IF_ERROR(
      f_.only_keys(b, {"timeout", "n_parallel", "march", "compiler", "cache_dir"}, "build"));
  BuildOptions& out = spec_.build;
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "timeout", "build", [&](const Json& x, auto field) {
    return store(f_.number(x, field, 1e-3), out.timeout_s);
  }));
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "n_parallel", "build", [&](const Json& x, auto field) {
    return store(f_.integer(x, field, 0, 4096), out.n_parallel);
  }));
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "march", "build", [&](const Json& x, auto field) {
    return store(f_.string(x, field), out.march);
  }));
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "compiler", "build", [&](const Json& x, auto field) {
    return store(f_.string(x, field), out.compiler);
  }));
  return optional_field(b, "cache_dir", "build", [&](const Json& x, auto field) -> Status {
    auto dir = f_.string(x, field);
    if (!dir) return dir.status();
    out.cache_dir = resolve_path(spec_.directory, *dir);
    return Status::ok();
  });
}

Status SectionReader::read_isolation() {
  return optional_field(root_, "isolation", "", [&](const Json& x, auto field) -> Status {
    auto text = f_.string(x, field);
    if (!text) return text.status();
    auto isolation = isolation_from_string(*text);
    if (!isolation) return f_.wrap(field, isolation.status());
    spec_.isolation = *isolation;
    return Status::ok();
  });
}

Status SectionReader::read_strategy() {
  TUNEKIT_RETURN_IF_ERROR(optional_field(root_, "strategy", "", [&](const Json& x, auto field) {
    return store(f_.string(x, field), spec_.strategy);
  }));
  if (root_.contains("strategy_settings")) {
    const Json& s = root_["strategy_settings"];
    if (!s.is_object()) return f_.bad("strategy_settings", "expected an object");
    spec_.strategy_settings = nlohmann::json::parse(s.dump());
  }
  // Checked now, so that a typo fails before anything is built.
  auto strategy = make_strategy(spec_.strategy, spec_.strategy_settings);
  if (!strategy) {
    return f_.wrap(root_.contains("strategy_settings") ? "strategy_settings" : "strategy",
                   strategy.status());
  }
  return Status::ok();
}

Status SectionReader::read_budget() {
  if (!root_.contains("budget")) return Status::ok();
  const Json& b = root_["budget"];
  KernelBudget& out = spec_.budget;
  if (b.is_number()) return store(f_.integer(b, "budget", 1, kMaxCount), out.trials.emplace());
  TUNEKIT_RETURN_IF_ERROR(f_.only_keys(b, {"trials", "seconds", "early_stopping"}, "budget"));
  if (b.empty()) return f_.bad("budget", "give \"trials\", \"seconds\" or \"early_stopping\"");
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "trials", "budget", [&](const Json& x, auto field) {
    return store(f_.integer(x, field, 1, kMaxCount), out.trials.emplace());
  }));
  TUNEKIT_RETURN_IF_ERROR(optional_field(b, "seconds", "budget", [&](const Json& x, auto field) {
    return store(f_.number(x, field, 1e-3), out.seconds.emplace());
  }));
  return optional_field(b, "early_stopping", "budget", [&](const Json& x, auto field) {
    return store(f_.integer(x, field, 1, kMaxCount), out.early_stopping.emplace());
  });
}

Status SectionReader::read_log() {
  std::string log = spec_.source.name + ".log.json";
  TUNEKIT_RETURN_IF_ERROR(optional_field(root_, "log", "", [&](const Json& x, auto field) {
    auto text = f_.string(x, field);
    if (!text) return text.status();
    if (text->empty()) return f_.bad(field, "must not be empty");
    log = *text;
    return Status::ok();
  }));
  spec_.log_path = resolve_path(spec_.directory, log);
  return Status::ok();
}

}  // namespace tunekit::kernel_detail
