// Loading of Kernel Tuner cache / T4 files into ReplayData (zlib for .gz, simdjson's DOM parser for
// the text; from_json takes the same path), and SimulatedRunner.
// See include/tunekit/measure/simulated_runner.hpp.
#include "tunekit/measure/simulated_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <simdjson.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "tunekit/core/json.hpp"

namespace tunekit {

namespace {

namespace dom = simdjson::dom;
using OJson = nlohmann::ordered_json;

Status parse_error(const std::string& source, std::string_view what) {
  return Status(StatusCode::kParseError, fmt::format("{}: {}", source, what));
}

/// `st` with its message prefixed by "source: " (ok stays ok).
Status prefixed(const std::string& source, const Status& st) {
  return st ? st : Status(st.code(), fmt::format("{}: {}", source, st.message()));
}

/// Bytes of a replay file followed by simdjson's padding (the parser reads up to
/// SIMDJSON_PADDING bytes past the end, without using them).
class PaddedText {
 public:
  explicit PaddedText(std::size_t capacity)
      : capacity_(capacity), data_(new char[capacity + simdjson::SIMDJSON_PADDING]) {
    set_size(0);
  }
  char* data() noexcept { return data_.get(); }
  const char* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }
  /// Sets the size (at most capacity()); the padding after it is zeroed.
  void set_size(std::size_t size) noexcept {
    size_ = size;
    std::memset(data_.get() + size_, 0, simdjson::SIMDJSON_PADDING);
  }
  /// Grows the capacity to `capacity`, keeping the bytes.
  void grow(std::size_t capacity) {
    std::unique_ptr<char[]> bigger(new char[capacity + simdjson::SIMDJSON_PADDING]);
    std::memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = capacity;
    set_size(size_);
  }

 private:
  std::size_t size_ = 0, capacity_;
  std::unique_ptr<char[]> data_;
};

/// The whole file, read in one piece when its size is known.
Expected<PaddedText> read_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return Status(StatusCode::kIoError,
                  fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  struct stat st {};
  const bool sized = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  // One byte more than the size, so that the end of file is seen without growing.
  PaddedText text(sized ? static_cast<std::size_t>(st.st_size) + 1 : std::size_t{1} << 16);
  for (;;) {
    if (text.size() == text.capacity()) text.grow(2 * text.capacity());
    const ssize_t n = ::read(fd, text.data() + text.size(), text.capacity() - text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const std::string why = std::strerror(errno);
      ::close(fd);
      return Status(StatusCode::kIoError, fmt::format("{}: cannot read: {}", path, why));
    }
    if (n == 0) break;
    text.set_size(text.size() + static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

bool is_gzip(const PaddedText& text) {
  return text.size() >= 2 && static_cast<unsigned char>(text.data()[0]) == 0x1f &&
         static_cast<unsigned char>(text.data()[1]) == 0x8b;
}

/// Decompresses a gzip file (concatenated members too; bytes after the last member are ignored,
/// as gzread does) into a buffer sized once from the size the gzip trailer records.
Expected<PaddedText> gunzip(const PaddedText& gz, const std::string& path) {
  const auto* in = reinterpret_cast<const unsigned char*>(gz.data());
  std::size_t in_left = gz.size();
  // ISIZE, the last member's size mod 2^32 (little-endian). Deflate expands at most ~1032:1,
  // which bounds what a corrupt trailer can make us allocate. The spare byte lets inflate end
  // the stream without asking for more room.
  std::size_t isize = 0;
  if (in_left >= 4) {
    for (std::size_t b = 0; b < 4; ++b) isize |= std::size_t{in[in_left - 4 + b]} << (8 * b);
  }
  PaddedText out(std::min<std::size_t>(isize, 1032 * in_left) + 1);

  z_stream strm{};
  if (inflateInit2(&strm, 15 + 16) != Z_OK) {
    return Status(StatusCode::kIoError,
                  fmt::format("{}: cannot decompress: zlib could not start", path));
  }
  const char* error = nullptr;
  for (;;) {
    if (out.size() == out.capacity()) out.grow(2 * out.capacity());
    const auto avail_in = static_cast<uInt>(std::min<std::size_t>(in_left, UINT_MAX));
    const auto avail_out =
        static_cast<uInt>(std::min<std::size_t>(out.capacity() - out.size(), UINT_MAX));
    strm.next_in = const_cast<Bytef*>(in);
    strm.avail_in = avail_in;
    strm.next_out = reinterpret_cast<Bytef*>(out.data() + out.size());
    strm.avail_out = avail_out;
    const int ret = inflate(&strm, Z_NO_FLUSH);
    const std::size_t consumed = avail_in - strm.avail_in, produced = avail_out - strm.avail_out;
    in += consumed;
    in_left -= consumed;
    out.set_size(out.size() + produced);
    if (ret == Z_STREAM_END) {
      if (in_left < 2 || in[0] != 0x1f || in[1] != 0x8b) break;
      inflateReset(&strm);  // another member follows
    } else if (ret == Z_OK || ret == Z_BUF_ERROR) {
      if (strm.avail_out == 0) continue;  // more room needed
      if (in_left == 0) {
        error = "unexpected end of file";
        break;
      }
      if (consumed + produced == 0) {  // zlib always progresses here; never spin
        error = "compressed data error";
        break;
      }
    } else {
      error = ret == Z_MEM_ERROR    ? "out of memory"
              : strm.msg != nullptr ? strm.msg
                                    : "compressed data error";
      break;
    }
  }
  inflateEnd(&strm);
  if (error != nullptr) {
    return Status(StatusCode::kIoError, fmt::format("{}: cannot decompress: {}", path, error));
  }
  return out;
}

const char* type_name(dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY:
      return "array";
    case dom::element_type::OBJECT:
      return "object";
    case dom::element_type::STRING:
      return "string";
    case dom::element_type::BOOL:
      return "boolean";
    case dom::element_type::NULL_VALUE:
      return "null";
    default:
      return "number";
  }
}

/// The value of a number (integers converted as nlohmann's get<double> does), or nullopt.
std::optional<double> number_of(dom::element e) {
  double v = 0.0;
  if (e.get_double().get(v) != simdjson::SUCCESS) return std::nullopt;
  return v;
}

/// `e` as a T that it is known to be (T{} otherwise).
template <class T>
T as(dom::element e) {
  T v{};
  if (e.get<T>().get(v) != simdjson::SUCCESS) return T{};
  return v;
}

std::optional<std::string_view> string_of(dom::element e) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
  return s;
}

/// `e` as nlohmann's parser builds it (J = json or ordered_json): integers >= 0 unsigned, the
/// last of repeated object keys.
template <class J>
J json_of(dom::element e) {
  switch (e.type()) {
    case dom::element_type::ARRAY: {
      J a = J::array();
      for (dom::element x : as<dom::array>(e)) a.push_back(json_of<J>(x));
      return a;
    }
    case dom::element_type::OBJECT: {
      J o = J::object();
      for (dom::key_value_pair f : as<dom::object>(e)) o[std::string(f.key)] = json_of<J>(f.value);
      return o;
    }
    case dom::element_type::INT64: {
      const auto v = as<std::int64_t>(e);
      return v >= 0 ? J(static_cast<std::uint64_t>(v)) : J(v);
    }
    case dom::element_type::UINT64:
      return J(as<std::uint64_t>(e));
    case dom::element_type::DOUBLE:
      return J(as<double>(e));
    case dom::element_type::STRING:
      return J(std::string(as<std::string_view>(e)));
    case dom::element_type::BOOL:
      return J(as<bool>(e));
    case dom::element_type::NULL_VALUE:
      return J(nullptr);
  }
  return J();
}

/// A JSON value reduced to what nlohmann's operator== looks at; arrays and objects are kOther
/// (compared through json_of).
struct Scalar {
  enum class Kind : std::uint8_t { kUnsigned, kInteger, kFloat, kString, kBool, kNull, kOther };
  Kind kind = Kind::kOther;
  std::uint64_t u = 0;
  std::int64_t i = 0;
  double f = 0.0;
  bool b = false;
  std::string_view s;

  static Scalar of(dom::element e) {
    Scalar v;
    switch (e.type()) {
      case dom::element_type::INT64: {
        const auto x = as<std::int64_t>(e);
        if (x >= 0) {
          v.kind = Kind::kUnsigned;
          v.u = static_cast<std::uint64_t>(x);
        } else {
          v.kind = Kind::kInteger;
          v.i = x;
        }
        break;
      }
      case dom::element_type::UINT64:
        v.kind = Kind::kUnsigned;
        v.u = as<std::uint64_t>(e);
        break;
      case dom::element_type::DOUBLE:
        v.kind = Kind::kFloat;
        v.f = as<double>(e);
        break;
      case dom::element_type::STRING:
        v.kind = Kind::kString;
        v.s = as<std::string_view>(e);
        break;
      case dom::element_type::BOOL:
        v.kind = Kind::kBool;
        v.b = as<bool>(e);
        break;
      case dom::element_type::NULL_VALUE:
        v.kind = Kind::kNull;
        break;
      default:
        break;
    }
    return v;
  }
  bool is_number() const noexcept { return kind <= Kind::kFloat; }
  double as_double() const noexcept {
    return kind == Kind::kUnsigned  ? static_cast<double>(u)
           : kind == Kind::kInteger ? static_cast<double>(i)
                                    : f;
  }

  /// nlohmann's operator== for two scalars (numbers of different kinds compare by value).
  friend bool operator==(const Scalar& a, const Scalar& b) noexcept {
    if (a.kind == b.kind) {
      switch (a.kind) {
        case Kind::kUnsigned:
          return a.u == b.u;
        case Kind::kInteger:
          return a.i == b.i;
        case Kind::kFloat:
          return a.f == b.f;
        case Kind::kString:
          return a.s == b.s;
        case Kind::kBool:
          return a.b == b.b;
        case Kind::kNull:
          return true;
        case Kind::kOther:
          return false;  // compared by the caller
      }
    }
    if (a.kind == Kind::kFloat && b.is_number()) return a.f == b.as_double();
    if (b.kind == Kind::kFloat && a.is_number()) return a.as_double() == b.f;
    if (a.kind == Kind::kUnsigned && b.kind == Kind::kInteger) {
      return static_cast<std::int64_t>(a.u) == b.i;
    }
    if (a.kind == Kind::kInteger && b.kind == Kind::kUnsigned) {
      return a.i == static_cast<std::int64_t>(b.u);
    }
    return false;
  }
};

/// One parameter's values in order; a value's position is found as nlohmann's == finds it
/// (16 == 16.0).
class ValueList {
 public:
  std::size_t size() const noexcept { return items_.size(); }
  void push_back(dom::element v) { items_.push_back({v, Scalar::of(v)}); }
  /// Position of `v`, or size() when absent.
  std::size_t find(dom::element v) const {
    const Scalar key = Scalar::of(v);
    if (key.kind != Scalar::Kind::kOther) {
      for (std::size_t i = 0; i < items_.size(); ++i) {
        if (items_[i].key == key) return i;
      }
      return items_.size();
    }
    const OJson j = json_of<OJson>(v);
    for (std::size_t i = 0; i < items_.size(); ++i) {
      if (items_[i].key.kind == Scalar::Kind::kOther && json_of<OJson>(items_[i].value) == j) {
        return i;
      }
    }
    return items_.size();
  }
  /// Sorts ascending when every value is a number (T4 lists).
  void sort_if_numeric() {
    if (!std::all_of(items_.begin(), items_.end(),
                     [](const Item& x) { return x.key.is_number(); })) {
      return;
    }
    std::sort(items_.begin(), items_.end(),
              [](const Item& a, const Item& b) { return a.key.as_double() < b.key.as_double(); });
  }
  std::vector<nlohmann::json> plain() const {
    std::vector<nlohmann::json> out;
    out.reserve(items_.size());
    for (const Item& x : items_) out.push_back(json_of<nlohmann::json>(x.value));
    return out;
  }

 private:
  struct Item {
    dom::element value;
    Scalar key;
  };
  std::vector<Item> items_;
};

/// Finds a fixed set of fields in many objects whose keys mostly come in the same order (the
/// records of a replay file): the name found at each field position is remembered, so a record
/// costs about one key comparison per field. A repeated key counts with its last value, and a
/// name given twice finds the same field, as with nlohmann's parser.
class FieldMatcher {
 public:
  explicit FieldMatcher(std::vector<std::string> names)
      : names_(std::move(names)),
        first_(names_.size()),
        values_(names_.size()),
        found_(names_.size()) {
    for (std::size_t n = 0; n < names_.size(); ++n) {
      first_[n] = static_cast<std::size_t>(std::find(names_.begin(), names_.end(), names_[n]) -
                                           names_.begin());
    }
  }
  /// Reads the fields of `obj`; then has(n) / at(n) tell the field called names[n].
  void match(dom::object obj) {
    std::fill(found_.begin(), found_.end(), 0);
    std::size_t pos = 0;
    for (dom::key_value_pair field : obj) {
      if (pos == seen_key_.size()) {
        seen_key_.emplace_back();
        seen_slot_.push_back(kUnseen);
      }
      int slot = seen_slot_[pos];
      if (slot == kUnseen || seen_key_[pos] != field.key) {
        slot = slot_of(field.key);
        seen_key_[pos].assign(field.key);
        seen_slot_[pos] = slot;
      }
      if (slot >= 0) {
        values_[static_cast<std::size_t>(slot)] = field.value;
        found_[static_cast<std::size_t>(slot)] = 1;
      }
      ++pos;
    }
    for (std::size_t n = 0; n < names_.size(); ++n) {
      if (first_[n] != n) {
        values_[n] = values_[first_[n]];
        found_[n] = found_[first_[n]];
      }
    }
  }
  bool has(std::size_t n) const noexcept { return found_[n] != 0; }
  dom::element at(std::size_t n) const noexcept { return values_[n]; }

 private:
  static constexpr int kUnseen = -2;  // -1: a field that is none of the names
  int slot_of(std::string_view key) const {
    for (std::size_t n = 0; n < names_.size(); ++n) {
      if (first_[n] == n && names_[n] == key) return static_cast<int>(n);
    }
    return -1;
  }

  std::vector<std::string> names_;
  std::vector<std::size_t> first_;  // index of the first name equal to names_[n]
  std::vector<dom::element> values_;
  std::vector<char> found_;
  std::vector<std::string> seen_key_;  // per field position: the key last seen there
  std::vector<int> seen_slot_;         // and its slot
};

/// One failure name a replay format records, and the error it stands for.
struct FailureName {
  std::string_view name;
  MeasureErrorNo error;
};

/// The failures a Kernel Tuner cache records instead of a time (its ErrorConfig names; the cache
/// schema's enum).
constexpr FailureName kKernelTunerFailures[] = {
    {"InvalidConfig", MeasureErrorNo::kInstantiationError},
    {"CompilationFailedConfig", MeasureErrorNo::kCompileDevice},
    {"RuntimeFailedConfig", MeasureErrorNo::kRuntimeDevice},
};

/// The T4 `invalidity` values other than "correct" (the T4 results schema's enum).
constexpr FailureName kT4Failures[] = {
    {"compile", MeasureErrorNo::kCompileDevice},
    {"runtime", MeasureErrorNo::kRuntimeDevice},
    {"constraints", MeasureErrorNo::kInstantiationError},
    {"timeout", MeasureErrorNo::kRunTimeout},
    {"correctness", MeasureErrorNo::kWrongAnswer},
};

/// The error `s` names in `table`, or nullopt for any other string.
std::optional<MeasureErrorNo> failure_named(std::span<const FailureName> table,
                                            std::string_view s) {
  for (const auto& f : table) {
    if (f.name == s) return f.error;
  }
  return std::nullopt;
}

/// The names of `table`, comma-separated, for error messages.
std::string failure_names(std::span<const FailureName> table) {
  std::string out;
  for (const auto& f : table) out += (out.empty() ? "" : ", ") + std::string(f.name);
  return out;
}

/// True for a recorded objective: a normal (finite, not subnormal) number of milliseconds > 0.
/// A subnormal time such as 1e-320 would make ratios to it infinite.
bool is_recorded_time(double ms) noexcept { return std::isnormal(ms) && ms > 0.0; }

/// A time charged to the simulated clock (compile_time and the like) at field `n` of `m`: 0
/// when absent, else a finite number >= 0; nullopt for anything else.
std::optional<double> charge_of(const FieldMatcher& m, std::size_t n) {
  if (!m.has(n)) return 0.0;
  const auto v = number_of(m.at(n));
  if (!v || !std::isfinite(*v) || *v < 0.0) return std::nullopt;
  return v;
}

std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

/// The top-level fields a replay file is read from (the last of a repeated key).
struct TopLevel {
  std::optional<dom::element> kernel_name, device_name, tune_params_keys, tune_params, cache,
      results, objective;
};

/// Reads an optional string field ("kernel_name") into `out`.
Status read_string(const std::optional<dom::element>& field, const char* name,
                   const std::string& source, std::string* out) {
  if (!field) return Status::ok();
  const auto s = string_of(*field);
  if (!s) {
    return parse_error(source, fmt::format("'{}' is a {}, not a string", name, type_name(*field)));
  }
  out->assign(*s);
  return Status::ok();
}

}  // namespace

/// Builds ReplayData from simdjson's DOM of a file (both formats share the entry code below).
struct ReplayData::Builder {
  static Expected<ReplayData> build(const PaddedText& text, const std::string& source);
  static Status kernel_tuner(const TopLevel& top, const std::string& source, ReplayData& d);
  static Status t4(const TopLevel& top, const std::string& source, ReplayData& d);
};

Expected<ReplayData> ReplayData::Builder::build(const PaddedText& text, const std::string& source) {
  // The same nesting limit as every other JSON tunekit reads (simdjson alone allows 1024 levels).
  TUNEKIT_RETURN_IF_ERROR(
      prefixed(source, check_json_text(std::string_view(text.data(), text.size()))));
  dom::parser parser;
  dom::element root;
  if (auto err = parser.parse(text.data(), text.size(), /*realloc_if_needed=*/false).get(root)) {
    return parse_error(source, fmt::format("not valid JSON: {}", simdjson::error_message(err)));
  }
  TopLevel top;
  dom::object doc;
  if (root.get_object().get(doc) == simdjson::SUCCESS) {
    for (dom::key_value_pair f : doc) {
      if (f.key == "kernel_name") {
        top.kernel_name = f.value;
      } else if (f.key == "device_name") {
        top.device_name = f.value;
      } else if (f.key == "tune_params_keys") {
        top.tune_params_keys = f.value;
      } else if (f.key == "tune_params") {
        top.tune_params = f.value;
      } else if (f.key == "cache") {
        top.cache = f.value;
      } else if (f.key == "results") {
        top.results = f.value;
      } else if (f.key == "objective") {
        top.objective = f.value;
      }
    }
  }
  if (top.cache && !top.cache->is_object()) return parse_error(source, "'cache' is not an object");
  if (top.results && !top.results->is_array()) {
    return parse_error(source, "'results' is not an array");
  }
  ReplayData d;
  d.source_ = source;
  if (top.cache && top.tune_params) {
    TUNEKIT_RETURN_IF_ERROR(kernel_tuner(top, source, d));
  } else if (top.results) {
    TUNEKIT_RETURN_IF_ERROR(t4(top, source, d));
  } else {
    return parse_error(
        source, "neither a Kernel Tuner cache file (tune_params, cache) nor a T4 file (results)");
  }
  TUNEKIT_RETURN_IF_ERROR(d.finish());
  return d;
}

Status ReplayData::Builder::kernel_tuner(const TopLevel& top, const std::string& source,
                                         ReplayData& d) {
  d.format_ = "kernel_tuner";
  TUNEKIT_RETURN_IF_ERROR(read_string(top.kernel_name, "kernel_name", source, &d.kernel_name_));
  TUNEKIT_RETURN_IF_ERROR(read_string(top.device_name, "device_name", source, &d.device_name_));
  // Replay minimises each record's 'time'; a cache tuned for another objective (GFLOP/s, higher
  // is better) would be replayed against the wrong optimum.
  std::string objective = "time";
  TUNEKIT_RETURN_IF_ERROR(read_string(top.objective, "objective", source, &objective));
  if (objective != "time") {
    return parse_error(source, fmt::format("'objective' is \"{}\"; replay supports caches tuned "
                                           "for \"time\" only",
                                           objective));
  }
  dom::object tp;
  if (top.tune_params->get_object().get(tp) != simdjson::SUCCESS) {
    return parse_error(source, "'tune_params' is not an object");
  }
  // name -> value list in file order (a repeated name keeps its place and takes the last list).
  std::vector<std::pair<std::string_view, dom::element>> tp_lists;
  for (dom::key_value_pair f : tp) {
    auto it = std::find_if(tp_lists.begin(), tp_lists.end(),
                           [&](const auto& l) { return l.first == f.key; });
    if (it != tp_lists.end()) {
      it->second = f.value;
    } else {
      tp_lists.emplace_back(f.key, f.value);
    }
  }
  if (top.tune_params_keys) {
    dom::array keys;
    if (top.tune_params_keys->get_array().get(keys) != simdjson::SUCCESS) {
      return parse_error(source, "'tune_params_keys' is not an array of strings");
    }
    for (dom::element k : keys) {
      const auto name = string_of(k);
      if (!name) return parse_error(source, "'tune_params_keys' is not an array of strings");
      d.names_.emplace_back(*name);
    }
  } else {
    for (const auto& [name, list] : tp_lists) d.names_.emplace_back(name);
  }
  const std::size_t np = d.names_.size();
  if (np == 0) {
    return parse_error(source, top.tune_params_keys ? "'tune_params_keys' names no parameter"
                                                    : "'tune_params' has no parameter");
  }
  std::vector<ValueList> lists(np);
  for (std::size_t p = 0; p < np; ++p) {
    auto it = std::find_if(tp_lists.begin(), tp_lists.end(),
                           [&](const auto& l) { return l.first == d.names_[p]; });
    dom::array values;
    if (it == tp_lists.end() || it->second.get_array().get(values) != simdjson::SUCCESS ||
        values.size() == 0) {
      return parse_error(source, "tune_params has no value list for '" + d.names_[p] + "'");
    }
    for (dom::element v : values) {
      if (lists[p].find(v) != lists[p].size()) {
        return parse_error(source, fmt::format("tune_params '{}' lists the value {} twice",
                                               d.names_[p], json_of<OJson>(v).dump()));
      }
      lists[p].push_back(v);
    }
    d.values_.push_back(lists[p].plain());
  }

  // Fields of a record: the parameters, then these.
  enum : std::size_t { kTime, kCompile, kVerification, kBenchmark, kFramework, kStrategy };
  static constexpr const char* kFields[] = {"time",           "compile_time",   "verification_time",
                                            "benchmark_time", "framework_time", "strategy_time"};
  std::vector<std::string> fields = d.names_;
  for (const char* f : kFields) fields.emplace_back(f);
  FieldMatcher rec(std::move(fields));
  const auto cache = as<dom::object>(*top.cache);
  d.entries_.reserve(cache.size());
  for (dom::key_value_pair entry : cache) {
    const std::string_view key = entry.key;
    dom::object record;
    if (entry.value.get_object().get(record) != simdjson::SUCCESS) {
      return parse_error(source, fmt::format("cache entry '{}' is not an object", key));
    }
    rec.match(record);
    ReplayEntry e;
    e.knobs.resize(np);
    for (std::size_t p = 0; p < np; ++p) {
      if (!rec.has(p)) {
        return parse_error(source, fmt::format("cache entry '{}' has no '{}'", key, d.names_[p]));
      }
      const std::size_t pos = lists[p].find(rec.at(p));
      if (pos == lists[p].size()) {
        return parse_error(source, fmt::format("cache entry '{}': {}={} is not in tune_params", key,
                                               d.names_[p], json_of<OJson>(rec.at(p)).dump()));
      }
      e.knobs[p] = static_cast<std::uint32_t>(pos);
    }
    if (!rec.has(np + kTime)) {
      return parse_error(source, fmt::format("cache entry '{}' has no 'time'", key));
    }
    const dom::element t = rec.at(np + kTime);
    if (const auto time = number_of(t)) {
      if (*time >= 1e20) {  // the failure sentinel of older files
        e.error_no = MeasureErrorNo::kRuntimeDevice;
        e.failure = "RuntimeFailedConfig";
      } else if (is_recorded_time(*time)) {
        e.time_ms = *time;
      } else {
        return parse_error(source, fmt::format("cache entry '{}': 'time' is {}; a recorded time is "
                                               "a normal finite number of milliseconds > 0",
                                               key, json_of<OJson>(t).dump()));
      }
    } else if (const auto failure = string_of(t)) {
      const auto code = failure_named(kKernelTunerFailures, *failure);
      if (!code) {
        return parse_error(source, fmt::format("cache entry '{}': 'time' is {}, neither a number "
                                               "nor a failure Kernel Tuner writes ({})",
                                               key, json_of<OJson>(t).dump(),
                                               failure_names(kKernelTunerFailures)));
      }
      e.failure = *failure;
      e.error_no = *code;
    } else {
      return parse_error(
          source, fmt::format("cache entry '{}': 'time' is neither a number nor a string", key));
    }
    double* const charges[] = {&e.compile_ms, &e.verification_ms, &e.benchmark_ms, &e.framework_ms,
                               &e.strategy_ms};
    for (std::size_t f = kCompile; f <= kStrategy; ++f) {
      const auto ms = charge_of(rec, np + f);
      if (!ms) {
        return parse_error(source,
                           fmt::format("cache entry '{}': '{}' is {}; a recorded time is a "
                                       "finite number of milliseconds >= 0",
                                       key, kFields[f], json_of<OJson>(rec.at(np + f)).dump()));
      }
      *charges[f - kCompile] = *ms;
    }
    d.entries_.push_back(std::move(e));
  }
  return Status::ok();
}

Status ReplayData::Builder::t4(const TopLevel& top, const std::string& source, ReplayData& d) {
  d.format_ = "t4";
  const auto results = as<dom::array>(*top.results);
  if (results.size() == 0) return parse_error(source, "T4 file has no results");
  enum : std::size_t { kConfiguration, kTimes, kInvalidity, kMeasurements };
  struct Result {
    dom::object configuration;
    std::optional<dom::element> times, invalidity, measurements;
  };
  std::vector<Result> rs;
  rs.reserve(results.size());
  FieldMatcher result_fields({"configuration", "times", "invalidity", "measurements"});
  for (dom::element r : results) {
    const auto no_configuration = [&] {
      return parse_error(source,
                         fmt::format("T4 result {} has no configuration object", rs.size()));
    };
    dom::object obj;
    if (r.get_object().get(obj) != simdjson::SUCCESS) return no_configuration();
    result_fields.match(obj);
    Result x;
    if (!result_fields.has(kConfiguration) ||
        result_fields.at(kConfiguration).get_object().get(x.configuration) != simdjson::SUCCESS) {
      return no_configuration();
    }
    if (result_fields.has(kTimes)) x.times = result_fields.at(kTimes);
    if (result_fields.has(kInvalidity)) x.invalidity = result_fields.at(kInvalidity);
    if (result_fields.has(kMeasurements)) x.measurements = result_fields.at(kMeasurements);
    rs.push_back(x);
  }

  // Parameters in order of first appearance (every result must name them all); each one's
  // values are those seen, numbers ascending.
  for (const Result& r : rs) {
    for (dom::key_value_pair f : r.configuration) {
      if (std::find(d.names_.begin(), d.names_.end(), f.key) == d.names_.end()) {
        d.names_.emplace_back(f.key);
      }
    }
  }
  const std::size_t np = d.names_.size();
  if (np == 0) return parse_error(source, "T4 results name no parameter");
  FieldMatcher cfg(d.names_);
  std::vector<ValueList> lists(np);
  std::vector<dom::element> values(rs.size() * np);  // result i, parameter p at i * np + p
  for (std::size_t i = 0; i < rs.size(); ++i) {
    cfg.match(rs[i].configuration);
    for (std::size_t p = 0; p < np; ++p) {
      if (!cfg.has(p)) {
        return parse_error(source, fmt::format("T4 result {} has no parameter '{}' (other results "
                                               "have it)",
                                               i, d.names_[p]));
      }
      values[i * np + p] = cfg.at(p);
      if (lists[p].find(cfg.at(p)) == lists[p].size()) lists[p].push_back(cfg.at(p));
    }
  }
  for (auto& list : lists) {
    list.sort_if_numeric();
    d.values_.push_back(list.plain());
  }

  enum : std::size_t { kCompilation, kFramework, kSearch, kValidation, kRuntimes };
  FieldMatcher time_fields(
      {"compilation", "framework", "search_algorithm", "validation", "runtimes"});
  d.entries_.reserve(rs.size());
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Result& r = rs[i];
    ReplayEntry e;
    e.knobs.resize(np);
    for (std::size_t p = 0; p < np; ++p) {
      e.knobs[p] = static_cast<std::uint32_t>(lists[p].find(values[i * np + p]));
    }
    if (!r.times) return parse_error(source, fmt::format("T4 result {} has no times", i));
    dom::object times;
    if (r.times->get_object().get(times) != simdjson::SUCCESS) {
      return parse_error(source, fmt::format("T4 result {}: 'times' is a {}, not an object", i,
                                             type_name(*r.times)));
    }
    time_fields.match(times);
    static constexpr const char* kTimeNames[] = {"compilation", "framework", "search_algorithm",
                                                 "validation"};
    double* const charges[] = {&e.compile_ms, &e.framework_ms, &e.strategy_ms, &e.verification_ms};
    for (std::size_t f = kCompilation; f <= kValidation; ++f) {
      const auto ms = charge_of(time_fields, f);
      if (!ms) {
        return parse_error(source,
                           fmt::format("T4 result {}: times.{} is {}; a recorded time is "
                                       "a finite number of milliseconds >= 0",
                                       i, kTimeNames[f], json_of<OJson>(time_fields.at(f)).dump()));
      }
      *charges[f] = *ms;
    }
    // times.runtimes: a list of numbers; absent or null for a configuration that did not run.
    dom::array runtimes;
    const bool has_runtimes = time_fields.has(kRuntimes) && !time_fields.at(kRuntimes).is_null();
    if (has_runtimes && time_fields.at(kRuntimes).get_array().get(runtimes) != simdjson::SUCCESS) {
      return parse_error(source, fmt::format("T4 result {}: times.runtimes is a {}, not a list", i,
                                             type_name(time_fields.at(kRuntimes))));
    }
    if (has_runtimes) {
      for (dom::element x : runtimes) {
        const auto v = number_of(x);
        if (!v) {
          return parse_error(source, fmt::format("T4 result {}: a runtime is a {}, not a number", i,
                                                 type_name(x)));
        }
        if (!std::isfinite(*v) || *v < 0.0) {
          return parse_error(source, fmt::format("T4 result {}: a runtime is {}; a recorded time "
                                                 "is a finite number of milliseconds >= 0",
                                                 i, json_of<OJson>(x).dump()));
        }
        e.benchmark_ms += *v;
      }
    }
    std::string_view invalidity = "correct";
    if (r.invalidity) {
      const auto s = string_of(*r.invalidity);
      if (!s) {
        return parse_error(source, fmt::format("T4 result {}: 'invalidity' is a {}, not a string",
                                               i, type_name(*r.invalidity)));
      }
      invalidity = *s;
    }
    // The value of the last measurement named "time".
    std::optional<dom::element> value;
    dom::array measurements;
    if (r.measurements && r.measurements->get_array().get(measurements) == simdjson::SUCCESS) {
      for (dom::element m : measurements) {
        dom::object mo;
        if (m.get_object().get(mo) != simdjson::SUCCESS) {
          return parse_error(
              source,
              fmt::format("T4 result {}: a measurement is a {}, not an object", i, type_name(m)));
        }
        std::optional<dom::element> name, v;
        for (dom::key_value_pair f : mo) {
          if (f.key == "name") {
            name = f.value;
          } else if (f.key == "value") {
            v = f.value;
          }
        }
        if (name && !string_of(*name)) {
          return parse_error(
              source, fmt::format("T4 result {}: a measurement name is a {}, not a string", i,
                                  type_name(*name)));
        }
        if (name && *string_of(*name) == "time") value = v;
      }
    }
    const std::optional<double> time = value ? number_of(*value) : std::nullopt;
    const std::optional<std::string_view> failure = value ? string_of(*value) : std::nullopt;
    if (invalidity != "correct") {
      const auto code = failure_named(kT4Failures, invalidity);
      if (!code) {
        return parse_error(
            source, fmt::format("T4 result {}: 'invalidity' is \"{}\", not one of correct, {}", i,
                                invalidity, failure_names(kT4Failures)));
      }
      e.failure = failure ? *failure : invalidity;
      e.error_no = *code;
    } else if (time && *time >= 1e20) {  // the failure sentinel of older files
      e.failure = "RuntimeFailedConfig";
      e.error_no = MeasureErrorNo::kRuntimeDevice;
    } else if (time) {
      if (!is_recorded_time(*time)) {
        return parse_error(
            source, fmt::format("T4 result {}: the time measurement is {}; a "
                                "recorded time is a normal finite number of milliseconds > 0",
                                i, json_of<OJson>(*value).dump()));
      }
      e.time_ms = *time;
    } else if (const auto code =
                   failure ? failure_named(kKernelTunerFailures, *failure) : std::nullopt) {
      e.failure = *failure;
      e.error_no = *code;
    } else {
      return parse_error(
          source, fmt::format("T4 result {} is \"correct\" but its time measurement is {}, neither "
                              "a number nor a failure Kernel Tuner writes ({})",
                              i, value ? json_of<OJson>(*value).dump() : std::string("missing"),
                              failure_names(kKernelTunerFailures)));
    }
    d.entries_.push_back(std::move(e));
  }
  return Status::ok();
}

Expected<ReplayData> ReplayData::load(const std::string& path) {
  auto text = read_file(path);
  if (!text) return text.status();
  if (is_gzip(*text)) {
    text = gunzip(*text, path);
    if (!text) return text.status();
  }
  return Builder::build(*text, path);
}

Expected<ReplayData> ReplayData::from_json(const nlohmann::ordered_json& doc,
                                           const std::string& source) {
  // The document takes the file path: one reader for both.
  std::string json;
  try {
    json = doc.dump();
  } catch (const nlohmann::json::exception& e) {  // a string that is not UTF-8
    return parse_error(source, json_error_message(e));
  }
  PaddedText text(json.size());
  std::memcpy(text.data(), json.data(), json.size());
  text.set_size(json.size());
  return Builder::build(text, source);
}

Status ReplayData::finish() {
  if (entries_.empty()) return parse_error(source_, "no recorded configuration");
  auto space = std::make_shared<ConfigSpace>();
  for (std::size_t p = 0; p < names_.size(); ++p) {
    Status st = space->define_knob(names_[p], values_[p]);
    if (!st) return parse_error(source_, st.message());
  }
  const std::uint64_t range = space->range_length();
  if (range > (std::uint64_t{1} << 28)) {
    return parse_error(
        source_,
        fmt::format("the cartesian product has {} points; replay supports up to 2^28", range));
  }
  auto table = std::make_shared<std::vector<std::int32_t>>(range, -1);
  std::vector<std::uint64_t> keys;
  keys.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::uint64_t index = space->knobs_to_index(entries_[i].knobs);
    if ((*table)[index] >= 0) {
      std::string config;
      for (std::size_t p = 0; p < names_.size(); ++p) {
        config += fmt::format("{}{}={}", p ? ", " : "", names_[p],
                              values_[p][entries_[i].knobs[p]].dump());
      }
      return parse_error(
          source_,
          fmt::format("configuration {} is recorded twice ({} {} and {})", config,
                      format_ == "t4" ? "T4 results" : "cache entries", (*table)[index], i));
    }
    (*table)[index] = static_cast<std::int32_t>(i);
    keys.push_back(index);
  }
  std::sort(keys.begin(), keys.end());
  std::uint64_t digest = 0xcbf29ce484222325ULL;
  for (auto k : keys)
    digest = fnv1a64(std::string_view(reinterpret_cast<const char*>(&k), sizeof k), digest);
  std::vector<std::uint64_t> strides;
  std::uint64_t stride = 1;
  for (const auto& list : values_) {
    strides.push_back(stride);
    stride *= list.size();
  }
  Status st =
      space->add_constraint(fmt::format("in replay data {}@{}: {} configurations, keys {:016x}",
                                        kernel_name_, device_name_, entries_.size(), digest),
                            {}, [table, strides](const ConfigView& v) {
                              std::uint64_t index = 0;
                              const auto pos = v.positions();
                              for (std::size_t k = 0; k < strides.size(); ++k)
                                index += pos[k] * strides[k];
                              return (*table)[index] >= 0;
                            });
  if (!st) return parse_error(source_, st.message());
  table_ = table;
  space_ = std::move(space);

  std::vector<double> times;
  for (const auto& e : entries_) {
    if (e.ok()) times.push_back(e.time_ms);
  }
  valid_count_ = times.size();
  if (times.empty()) return parse_error(source_, "every recorded configuration failed");
  std::sort(times.begin(), times.end());
  optimum_ms_ = times.front();
  const std::size_t n = times.size();
  median_ms_ = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  return Status::ok();
}

const ReplayEntry* ReplayData::lookup(std::uint64_t index) const noexcept {
  if (!table_ || index >= table_->size()) return nullptr;
  const auto i = (*table_)[index];
  return i < 0 ? nullptr : &entries_[static_cast<std::size_t>(i)];
}

std::vector<MeasureResult> SimulatedRunner::run(std::span<const MeasureInput> inputs,
                                                std::span<const BuildResult> /*builds*/) {
  std::vector<MeasureResult> out;
  out.reserve(inputs.size());
  for (const auto& in : inputs) {
    MeasureResult r;
    const ReplayEntry* e = data_->lookup(in.config.index());
    if (e == nullptr) {
      r.error_no = MeasureErrorNo::kInstantiationError;
      r.error_msg = "configuration not in the replay data";
    } else {
      const double charge_s = e->total_ms() * 1e-3;
      clock_s_ += charge_s;
      ++evaluations_;
      r.all_cost_s = charge_s;
      if (e->ok()) {
        r.costs_s = {e->time_ms * 1e-3};
      } else {
        r.error_no = e->error_no;
        r.error_msg = e->failure;
      }
    }
    r.timestamp_s = clock_s_;
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tunekit
