// Kernel spec parsing: the top-level fields, the source and the arguments; the sections that
// configure measurement and search are read in spec_sections.cpp.
#include "tunekit/kernel/kernel_spec.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "spec_fields.hpp"
#include "spec_sections.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/json.hpp"
#include "tunekit/measure/kernel_build.hpp"
#include "tunekit/space/expression.hpp"
#include "tunekit/space/space_spec.hpp"

namespace tunekit {

namespace kernel_detail {

std::string resolve_path(const std::string& directory, const std::string& path) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || directory.empty()) return p.lexically_normal().string();
  return (std::filesystem::path(directory) / p).lexically_normal().string();
}

Expected<std::string> read_source(const SpecFields& f, const std::string& path,
                                  std::string_view field) {
  auto fd = files::open_regular(path, O_RDONLY, "kernel source");
  if (!fd) return f.wrap(field, fd.status());
  auto text = files::read_all(fd->get(), path, "kernel source");
  if (!text) return f.wrap(field, text.status());
  return text;
}

}  // namespace kernel_detail

namespace {

using kernel_detail::Json;

/// Copies of every array a run holds in host memory at once: the pristine arguments, the
/// scratch outputs and the reference of a KernelSession (src/measure/kernel_session.cpp), plus
/// the launch buffers of the C/C++ backend (OpenCL and CUDA keep theirs on the device).
constexpr int kArrayCopies = 4;

/// The machine's physical memory in bytes; 0 where the system does not say.
double physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0.0;
}

/// `bytes` as "20.0 GB" (10^9 bytes).
std::string gigabytes(double bytes) { return fmt::format("{:.1f} GB", bytes / 1e9); }
using kernel_detail::ScalarValues;
using kernel_detail::SpecFields;

/// Reads one spec; members are filled section by section.
class SpecParser {
 public:
  SpecParser(const Json& root, const std::string& file, const std::string& directory)
      : root_(root), f_(file) {
    spec_.file = file;
    spec_.directory = directory;
  }

  Expected<KernelSpec> parse() {
    TUNEKIT_RETURN_IF_ERROR(
        f_.only_keys(root_,
                     {"name", "description", "language", "source", "entry", "flags", "arguments",
                      "space", "launch", "flop", "verify", "timing", "build", "isolation",
                      "strategy", "strategy_settings", "budget", "log", "seed"},
                     ""));
    TUNEKIT_RETURN_IF_ERROR(read_source());
    TUNEKIT_RETURN_IF_ERROR(read_seed());
    TUNEKIT_RETURN_IF_ERROR(read_arguments());
    TUNEKIT_RETURN_IF_ERROR(read_space());
    TUNEKIT_RETURN_IF_ERROR(read_flop());
    kernel_detail::SectionReader sections(root_, f_, spec_, scalars_);
    TUNEKIT_RETURN_IF_ERROR(sections.read_all());
    return std::move(spec_);
  }

 private:
  /// The required member `key` of the root.
  Expected<const Json*> required(const char* key) const {
    if (!root_.contains(key)) return f_.bad(key, "missing (required)");
    return &root_[key];
  }

  Status read_source() {
    KernelSource& s = spec_.source;
    auto name = required("name");
    if (!name) return name.status();
    auto name_text = f_.string(**name, "name");
    if (!name_text) return name_text.status();
    if (name_text->empty()) return f_.bad("name", "must not be empty");
    s.name = *name_text;
    if (root_.contains("language")) {
      auto text = f_.string(root_["language"], "language");
      if (!text) return text.status();
      auto language = kernel_language_from_string(*text);
      if (!language) return f_.wrap("language", language.status());
      s.language = *language;
    }
    auto path = required("source");
    if (!path) return path.status();
    auto path_text = f_.string(**path, "source");
    if (!path_text) return path_text.status();
    s.path = kernel_detail::resolve_path(spec_.directory, *path_text);
    auto text = kernel_detail::read_source(f_, s.path, "source");
    if (!text) return text.status();
    s.text = std::move(*text);
    s.entry = s.name;
    if (root_.contains("entry")) {
      auto entry = f_.string(root_["entry"], "entry");
      if (!entry) return entry.status();
      s.entry = *entry;
    }
    if (root_.contains("flags")) {
      auto flags = f_.strings(root_["flags"], "flags");
      if (!flags) return flags.status();
      s.flags = std::move(*flags);
    }
    return Status::ok();
  }

  Status read_seed() {
    if (!root_.contains("seed")) return Status::ok();
    const Json& v = root_["seed"];
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      return f_.bad("seed", fmt::format("{} is not a whole number >= 0", v.dump()));
    }
    spec_.seed = v.get<std::uint64_t>();
    spec_.problem.seed = spec_.seed;
    return Status::ok();
  }

  Status read_arguments() {
    auto list = required("arguments");
    if (!list) return list.status();
    if (!(*list)->is_array() || (*list)->empty()) {
      return f_.bad("arguments", "expected a non-empty list of arguments");
    }
    // Scalars first, so that any size may name any scalar argument.
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
      KernelArgument arg;
      TUNEKIT_RETURN_IF_ERROR(
          read_argument_head((**list)[i], fmt::format("arguments[{}]", i), arg));
      spec_.problem.arguments.push_back(std::move(arg));
    }
    for (std::size_t i = 0; i < (*list)->size(); ++i) {
      TUNEKIT_RETURN_IF_ERROR(read_array_size((**list)[i], fmt::format("arguments[{}]", i),
                                              spec_.problem.arguments[i]));
    }
    if (Status files = check_fill_files(spec_.problem); !files.is_ok()) {
      return f_.wrap("arguments", files);
    }
    return check_memory();
  }

  /// Refuses arrays whose kArrayCopies copies exceed the machine's memory (a run would end in
  /// an out-of-memory kill): "arguments: the arrays need 80.0 GB (4 copies of 20.0 GB: x 10.0
  /// GB, y 10.0 GB), more than this machine's 23.5 GB of memory".
  Status check_memory() const {
    double bytes = 0.0;
    std::string each;
    for (const KernelArgument& arg : spec_.problem.arguments) {
      if (arg.is_scalar) continue;
      const double b = static_cast<double>(arg.size) * static_cast<double>(dtype_bytes(arg.dtype));
      bytes += b;
      each += fmt::format("{}{} {}", each.empty() ? "" : ", ", arg.name, gigabytes(b));
    }
    const double memory = physical_memory_bytes();
    if (memory <= 0.0 || kArrayCopies * bytes <= memory) return Status::ok();
    return f_.bad("arguments", fmt::format("the arrays need {} ({} copies of {}: {}), more than "
                                           "this machine's {} of memory",
                                           gigabytes(kArrayCopies * bytes), kArrayCopies,
                                           gigabytes(bytes), each, gigabytes(memory)));
  }

  /// Name, dtype, scalar value or array fill and output flag of one argument.
  Status read_argument_head(const Json& a, const std::string& where, KernelArgument& arg) {
    TUNEKIT_RETURN_IF_ERROR(
        f_.only_keys(a, {"name", "dtype", "value", "size", "fill", "output"}, where));
    if (!a.contains("name")) return f_.bad(where + ".name", "missing (required)");
    auto name = f_.string(a["name"], where + ".name");
    if (!name) return name.status();
    if (name->empty()) return f_.bad(where + ".name", "must not be empty");
    for (const KernelArgument& other : spec_.problem.arguments) {
      if (other.name == *name) return f_.bad(where + ".name", "'" + *name + "' is named twice");
    }
    arg.name = *name;
    if (!a.contains("dtype")) return f_.bad(where + ".dtype", "missing (required)");
    auto dtype_text = f_.string(a["dtype"], where + ".dtype");
    if (!dtype_text) return dtype_text.status();
    auto dtype = arg_dtype_from_string(*dtype_text);
    if (!dtype) return f_.wrap(where + ".dtype", dtype.status());
    arg.dtype = *dtype;
    const bool has_value = a.contains("value");
    if (has_value == a.contains("size")) {
      return f_.bad(where, "give \"value\" (a scalar) or \"size\" (an array), not both or neither");
    }
    if (has_value) return read_scalar(a, where, arg);
    return read_array_head(a, where, arg);
  }

  Status read_scalar(const Json& a, const std::string& where, KernelArgument& arg) {
    if (a.contains("fill") || a.contains("output")) {
      return f_.bad(where, "\"fill\" and \"output\" are for arrays (with \"size\"), not scalars");
    }
    auto value = f_.number(a["value"], where + ".value", -std::numeric_limits<double>::max());
    if (!value) return value.status();
    const bool integral = arg.dtype == ArgDtype::kInt32 || arg.dtype == ArgDtype::kInt64;
    if (integral && *value != std::floor(*value)) {
      return f_.bad(where + ".value", fmt::format("{} is not a whole number (dtype {})",
                                                  a["value"].dump(), to_string(arg.dtype)));
    }
    if (arg.dtype == ArgDtype::kInt32 && std::fabs(*value) > 2147483647.0) {
      return f_.bad(where + ".value", a["value"].dump() + " does not fit int32");
    }
    arg.is_scalar = true;
    arg.scalar_value = *value;
    scalars_.emplace(arg.name, *value);
    scalar_fields_.emplace(arg.name, where + ".value");
    return Status::ok();
  }

  Status read_array_head(const Json& a, const std::string& where, KernelArgument& arg) {
    if (a.contains("output")) {
      auto output = f_.boolean(a["output"], where + ".output");
      if (!output) return output.status();
      arg.is_output = *output;
    }
    if (a.contains("fill")) {
      auto fill = read_fill(a["fill"], where + ".fill");
      if (!fill) return fill.status();
      arg.fill = *fill;
    } else if (arg.is_output) {
      arg.fill.kind = FillKind::kZeros;
    }
    return Status::ok();
  }

  Expected<ArgFill> read_fill(const Json& v, const std::string& field) const {
    if (v.is_number()) {
      auto x = f_.number(v, field, -std::numeric_limits<double>::max());
      if (!x) return x.status();
      return ArgFill{FillKind::kConstant, *x, {}};
    }
    if (v.is_object()) return read_file_fill(v, field);
    auto text = f_.string(v, field);
    if (!text) return text.status();
    if (*text == "random") return ArgFill{FillKind::kRandom, 0.0, {}};
    if (*text == "zeros") return ArgFill{FillKind::kZeros, 0.0, {}};
    if (*text == "ones") return ArgFill{FillKind::kOnes, 0.0, {}};
    if (*text == "index") return ArgFill{FillKind::kIndex, 0.0, {}};
    return f_.bad(field, fmt::format("unknown fill '{}' (accepted: \"random\", \"zeros\", "
                                     "\"ones\", \"index\", a number or {{\"file\": PATH}})",
                                     *text));
  }

  /// {"file": "x.bin"}: the array's data, raw, resolved against the spec's directory.
  Expected<ArgFill> read_file_fill(const Json& v, const std::string& field) const {
    TUNEKIT_RETURN_IF_ERROR(f_.only_keys(v, {"file"}, field));
    if (!v.contains("file")) return f_.bad(field + ".file", "missing (required)");
    auto path = f_.string(v["file"], field + ".file");
    if (!path) return path.status();
    ArgFill fill{FillKind::kFile, 0.0, {}};
    fill.path = kernel_detail::resolve_path(spec_.directory, *path);
    return fill;
  }

  Status read_array_size(const Json& a, const std::string& where, KernelArgument& arg) {
    if (arg.is_scalar) return Status::ok();
    const std::string field = where + ".size";
    auto size = f_.scalar_expression(a["size"], field, scalars_);
    if (!size) return size.status();
    if (*size < 1 || *size != std::floor(*size)) return bad_size(a["size"], field, *size);
    if (*size > 9.007199254740992e15) {
      return f_.bad(field, fmt::format("{:.0f} elements: too large (at most 2^53)", *size));
    }
    arg.size = static_cast<std::size_t>(*size);
    return Status::ok();
  }

  /// True when the expression `text` is `name` alone (spaces aside).
  static bool is_just(std::string_view text, std::string_view name) {
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return false;
    const auto last = text.find_last_not_of(" \t");
    return text.substr(first, last - first + 1) == name;
  }

  /// A size that is no whole number >= 1. When it comes from scalar arguments that are
  /// negative, or is one scalar argument itself, the error names their values first (what is
  /// wrong is there): "arguments[0].value: n = -5 gives arguments[1].size 'n' = -5 elements:
  /// expected a whole number >= 1"; otherwise it names the size.
  Status bad_size(const Json& size, const std::string& field, double elements) const {
    const std::string why = fmt::format("{} elements: expected a whole number >= 1", elements);
    const std::string text = size.is_string() ? size.get<std::string>() : "";
    auto expr = Expression::parse(text);
    if (!expr) return f_.bad(field, why);
    std::string fields, values;
    std::size_t blamed = 0;
    for (const std::string& name : expr->variables()) {
      const double value = scalars_.at(name);
      if (value >= 0 && !is_just(text, name)) continue;
      fields += (fields.empty() ? "" : ", ") + scalar_fields_.at(name);
      values += fmt::format("{}{} = {}", values.empty() ? "" : ", ", name, value);
      ++blamed;
    }
    if (blamed == 0) return f_.bad(field, why);
    return f_.bad(fields, fmt::format("{} {} {} '{}' = {}", values, blamed == 1 ? "gives" : "give",
                                      field, text, why));
  }

  Status read_space() {
    auto space = required("space");
    if (!space) return space.status();
    if (!(*space)->is_object()) return f_.bad("space", "expected an object");
    Json copy = **space;
    if (copy.contains("params")) {
      if (copy.contains("parameters") || copy.contains("tune_params")) {
        return f_.bad("space", "give one of \"params\", \"parameters\" or \"tune_params\"");
      }
      // "params" is the name of "parameters"; keep the parameter order.
      Json renamed = Json::object();
      for (auto& [key, value] : copy.items()) renamed[key == "params" ? "parameters" : key] = value;
      copy = std::move(renamed);
    }
    auto built = space_from_spec(copy);
    if (!built) return f_.wrap("space", Status(built.status().code(), strip_space_prefix(built)));
    // Parameters become -D definitions: refuse a name that cannot be one before any build.
    if (Status names = check_define_names(*built); !names.is_ok()) return f_.wrap("space", names);
    spec_.space = std::make_shared<const ConfigSpace>(std::move(*built));
    return Status::ok();
  }

  /// space_from_spec's message without its "space spec: " prefix (the field says it).
  static std::string strip_space_prefix(const Expected<ConfigSpace>& e) {
    std::string m = e.status().message();
    constexpr std::string_view kPrefix = "space spec: ";
    if (m.starts_with(kPrefix)) m.erase(0, kPrefix.size());
    return m;
  }

  Status read_flop() {
    if (!root_.contains("flop")) return Status::ok();
    auto flop = f_.scalar_expression(root_["flop"], "flop", scalars_);
    if (!flop) return flop.status();
    if (*flop < 0) return f_.bad("flop", fmt::format("{} is negative", *flop));
    spec_.flop = *flop;
    return Status::ok();
  }

  const Json& root_;
  SpecFields f_;
  KernelSpec spec_;
  ScalarValues scalars_;
  /// The field of each scalar argument's value ("arguments[0].value"), by name.
  std::map<std::string, std::string, std::less<>> scalar_fields_;
};

}  // namespace

Expected<KernelSpec> parse_kernel_spec(std::string_view text, const std::string& file,
                                       const std::string& directory) {
  const SpecFields f(file);
  auto root = parse_json<Json>(text);
  if (!root) return f.bad("", root.status().message(), StatusCode::kParseError);
  try {
    return SpecParser(*root, file, directory).parse();
  } catch (const nlohmann::json::exception& e) {
    return f.bad("", json_error_message(e), StatusCode::kParseError);
  }
}

Expected<KernelSpec> load_kernel_spec(const std::string& path) {
  auto fd = files::open_regular(path, O_RDONLY, "kernel spec");
  if (!fd) return fd.status();
  auto text = files::read_all(fd->get(), path, "kernel spec");
  if (!text) return text.status();
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return parse_kernel_spec(*text, path, directory.empty() ? "." : directory);
}

Expected<Isolation> isolation_from_string(std::string_view text) {
  if (text == "process") return Isolation::kProcess;
  if (text == "worker") return Isolation::kWorker;
  if (text == "in-process") return Isolation::kInProcess;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown isolation '{}' (accepted: \"process\", \"worker\", "
                            "\"in-process\")",
                            text));
}

}  // namespace tunekit
