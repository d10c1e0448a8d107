// AutoTVM v0.2 record encoding/decoding, log loading, resumption checks and target parsing.
// See include/tunekit/records/record.hpp.
#include "tunekit/records/record.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "records/log_text.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/json.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/core/version.hpp"

namespace tunekit {

namespace {

constexpr double kErrorCost = 1e9;  // upstream's placeholder cost of failed records

std::atomic<bool> g_warned_v01{false};

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

Status bad(const std::string& what) { return Status(StatusCode::kParseError, what); }

/// The value of a JSON integer >= 0 (signed or unsigned storage); nullopt for anything else.
std::optional<std::uint64_t> non_negative_integer(const nlohmann::ordered_json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0)
    return static_cast<std::uint64_t>(v.get<std::int64_t>());
  return std::nullopt;
}

}  // namespace

double Record::mean_cost_s() const noexcept {
  if (!ok()) return std::numeric_limits<double>::infinity();
  return std::accumulate(costs_s.begin(), costs_s.end(), 0.0) / static_cast<double>(costs_s.size());
}

std::uint64_t Record::config_index() const {
  auto it = config.find("index");
  return it != config.end() ? non_negative_integer(*it).value_or(0) : 0;
}

const nlohmann::ordered_json& Record::entity() const {
  static const nlohmann::ordered_json empty = nlohmann::ordered_json::array();
  auto it = config.find("entity");
  return it != config.end() ? *it : empty;
}

std::string Record::workload_key() const {
  return encode_python_json(nlohmann::ordered_json::array({task_name, args}));
}

std::string Record::measure_key() const {
  return encode_python_json(
      nlohmann::ordered_json::array({target, task_name, args, kwargs, entity()}));
}

Record make_record(const MeasureInput& input, const MeasureResult& result) {
  Record r;
  r.target = input.task->target;
  r.task_name = input.task->name;
  r.args = nlohmann::ordered_json::parse(input.task->args.dump());
  r.config = nlohmann::ordered_json::parse(input.config.to_json().dump());
  // Keep upstream's key order: index, code_hash, entity.
  nlohmann::ordered_json cfg = nlohmann::ordered_json::object();
  cfg["index"] = r.config["index"];
  cfg["code_hash"] = r.config["code_hash"];
  cfg["entity"] = r.config["entity"];
  r.config = std::move(cfg);
  r.error_no = result.error_no;
  if (result.ok()) r.costs_s = result.costs_s;
  r.all_cost_s = result.all_cost_s;
  r.build_cost_s = result.build_cost_s;
  r.timestamp_s = result.timestamp_s;
  r.tvm_version = std::string("tunekit-") + version();
  if (input.task->space) r.space_hash = input.task->space->hash();
  return r;
}

std::string encode_python_json(const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::array: {
      std::string out = "[";
      bool first = true;
      for (const auto& x : v) {
        if (!first) out += ", ";
        first = false;
        out += encode_python_json(x);
      }
      return out + "]";
    }
    case nlohmann::ordered_json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, x] : v.items()) {
        if (!first) out += ", ";
        first = false;
        out += nlohmann::ordered_json(k).dump(-1, ' ', true);
        out += ": ";
        out += encode_python_json(x);
      }
      return out + "}";
    }
    case nlohmann::ordered_json::value_t::number_float: {
      const double d = v.get<double>();
      if (std::isnan(d)) return "NaN";
      if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
      return v.dump();
    }
    default:
      return v.dump(-1, ' ', true);
  }
}

std::string encode_record(const Record& r) {
  nlohmann::ordered_json costs = nlohmann::ordered_json::array();
  if (r.error_no != MeasureErrorNo::kNoError || r.costs_s.empty()) {
    costs.push_back(kErrorCost);
  } else {
    for (double c : r.costs_s) costs.push_back(c);
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["input"] = nlohmann::ordered_json::array({r.target, r.task_name, r.args, r.kwargs});
  j["config"] = r.config;
  j["result"] = nlohmann::ordered_json::array(
      {costs, static_cast<int>(r.error_no), r.all_cost_s, r.timestamp_s});
  j["version"] = 0.2;
  j["tvm_version"] = r.tvm_version;
  if (!r.space_hash.empty()) j["space_hash"] = r.space_hash;
  if (r.build_cost_s > 0.0) j["build_cost"] = r.build_cost_s;
  return encode_python_json(j);
}

namespace {

using Decoded = std::pair<LineKind, Record>;

/// The checks of decode_record_line; may throw nlohmann::json exceptions, which the caller turns
/// into a kParseError.
Expected<Decoded> decode_line(std::string_view t) {
  auto parsed = parse_json<nlohmann::ordered_json>(t);  // depth-limited: later dumps recurse
  if (!parsed) return bad(parsed.status().message());
  nlohmann::ordered_json j = std::move(*parsed);
  if (!j.is_object()) return bad("a record must be a JSON object");
  if (j.contains("v") || j.contains("i")) return Decoded{LineKind::kLegacy, Record{}};
  if (!j.contains("input") || !j.contains("config") || !j.contains("result")) {
    return bad("missing \"input\", \"config\" or \"result\"");
  }
  // Upstream's reader does not look at "version": a row without it reads as v0.2.
  if (j.contains("version") && !(j["version"].is_number() && j["version"].get<double>() == 0.2)) {
    return bad("unsupported record version " + j["version"].dump());
  }
  const auto& in = j["input"];
  const auto& res = j["result"];
  if (!in.is_array() || in.size() < 3 || in.size() > 4 || !in[0].is_string() ||
      !in[1].is_string()) {
    return bad("\"input\" must be [target, task name, args, kwargs]");
  }
  if (!res.is_array() || res.size() != 4 || !res[0].is_array() || !res[1].is_number_integer()) {
    return bad("\"result\" must be [costs, error_no, all_cost, timestamp]");
  }
  Record r;
  r.target = in[0].get<std::string>();
  r.task_name = in[1].get<std::string>();
  r.args = in[2];
  if (in.size() > 3) r.kwargs = in[3];
  r.config = j["config"];
  if (!r.config.is_object() || !r.config.contains("entity") || !r.config["entity"].is_array()) {
    return bad("\"config\" must hold an \"entity\" list");
  }
  for (const auto& item : r.config["entity"]) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_string() || !item[1].is_string()) {
      return bad("each \"entity\" item must be [knob name, tag, payload] with string name and tag");
    }
  }
  // JSON integers only: -7, 1.5, 1e30 and 2^64+5 (read as a float) are not config indices.
  if (!r.config.contains("index")) return bad("\"config\" has no \"index\"");
  if (!non_negative_integer(r.config["index"])) {
    return bad("config index " + r.config["index"].dump() + " is not an integer in [0, 2^64)");
  }
  // error_no: 0 is success; any other code is a failure (codes above 8 read as UNKNOWN_ERROR,
  // without wrapping around to 0).
  const auto code = non_negative_integer(res[1]);
  if (!code) return bad("error_no " + res[1].dump() + " is negative");
  r.error_no =
      *code > 8 ? MeasureErrorNo::kUnknownError : measure_error_from_int(static_cast<int>(*code));
  if (r.error_no == MeasureErrorNo::kNoError) {
    for (const auto& c : res[0]) {
      if (!c.is_number()) return bad("a cost is not a number");
      const double v = c.get<double>();
      if (!std::isfinite(v) || v <= 0) {
        return bad(fmt::format(
            "cost {} of a successful record (error_no 0) is not a finite number > 0", c.dump()));
      }
      r.costs_s.push_back(v);
    }
    if (r.costs_s.empty()) return bad("a successful record has no cost");
  }
  r.all_cost_s = res[2].is_number() ? res[2].get<double>() : 0.0;
  r.timestamp_s = res[3].is_number() ? res[3].get<double>() : 0.0;
  if (j.contains("tvm_version") && !j["tvm_version"].is_string())
    return bad("\"tvm_version\" is not a string");
  if (j.contains("space_hash") && !j["space_hash"].is_string())
    return bad("\"space_hash\" is not a string");
  if (j.contains("build_cost") && !j["build_cost"].is_number())
    return bad("\"build_cost\" is not a number");
  r.tvm_version = j.value("tvm_version", std::string());
  r.space_hash = j.value("space_hash", std::string());
  r.build_cost_s = j.value("build_cost", 0.0);
  return Decoded{LineKind::kRecord, std::move(r)};
}

bool is_gzip(std::string_view text) {
  return text.size() >= 2 && static_cast<unsigned char>(text[0]) == 0x1f &&
         static_cast<unsigned char>(text[1]) == 0x8b;
}

}  // namespace

Expected<std::pair<LineKind, Record>> decode_record_line(std::string_view line) {
  const std::string_view t = trim(line);
  if (t.empty() || t.front() == '#') return Decoded{LineKind::kSkipped, Record{}};
  try {
    return decode_line(t);
  } catch (const nlohmann::json::exception& e) {  // a wrong type deep in the record
    return bad(json_error_message(e));
  } catch (const std::exception& e) {  // out of memory
    return bad(e.what());
  }
}

Expected<std::vector<Record>> parse_records(std::string_view text, const std::string& source,
                                            const LoadOptions& options) {
  if (is_gzip(text)) {
    return Status(
        StatusCode::kParseError,
        fmt::format("{}: gzip-compressed; tuning logs are plain JSON lines (decompress it first, "
                    "e.g. gunzip -k '{}')",
                    source, source));
  }
  std::vector<Record> out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (nl == std::string_view::npos && !trim(line).empty()) {
      // Every record is written whole, ending in '\n' (one write(), undone when cut short): a
      // last line without its end was not completely written (a killed writer, a full disk).
      log::warn(
          fmt::format("{}:{}: ignoring the incomplete last line (no line end: an "
                      "interrupted write)",
                      source, line_no));
      break;
    }
    auto d = decode_record_line(line);
    if (!d) {
      const std::string msg = fmt::format("{}:{}: {}", source, line_no, d.status().message());
      if (options.strict) return Status(StatusCode::kParseError, msg);
      log::warn(msg + " (line skipped)");
      continue;
    }
    if (d->first == LineKind::kLegacy) {
      if (!g_warned_v01.exchange(true))
        log::warn("AutoTVM log version 0.1 is no longer supported.");
      continue;
    }
    if (d->first == LineKind::kRecord) out.push_back(std::move(d->second));
  }
  return out;
}

namespace {

constexpr std::size_t kMaxLogLineBytes = std::size_t{16} << 20;

// A pipe or terminal (standard input): read to its end, refusing a line longer than 16 MiB
// (a record is a few hundred bytes; /dev/zero would otherwise fill memory) or more than 1 GiB.
Expected<std::string> read_stream(int fd, const std::string& path) {
  std::string text;
  std::size_t line_start = 0, lines = 1;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status(StatusCode::kIoError,
                    fmt::format("cannot read tuning log '{}': {}", path, std::strerror(errno)));
    }
    if (n == 0) return text;
    const std::string_view chunk(buf, static_cast<std::size_t>(n));
    if (const std::size_t nl = chunk.rfind('\n'); nl != std::string_view::npos) {
      line_start = text.size() + nl + 1;
      lines += static_cast<std::size_t>(std::count(chunk.begin(), chunk.end(), '\n'));
    }
    text.append(chunk);
    if (text.size() - line_start > kMaxLogLineBytes || text.size() > files::kMaxTextFileBytes) {
      return Status(
          StatusCode::kIoError,
          fmt::format("tuning log '{}': line {} is longer than {} MiB, or the log longer "
                      "than {} MiB: not a tuning log",
                      path, lines, kMaxLogLineBytes >> 20, files::kMaxTextFileBytes >> 20));
    }
  }
}

}  // namespace

Expected<std::string> read_log_text(int fd, const std::string& path) {
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    return files::read_all(fd, path, "tuning log");
  }
  return read_stream(fd, path);
}

Expected<std::vector<Record>> load_records(const std::string& path, const LoadOptions& options) {
  if (path == "-") {
    auto text = read_log_text(STDIN_FILENO, path);
    if (!text) return text.status();
    return parse_records(*text, path, options);
  }
  auto file = files::open_regular(path, O_RDONLY, "tuning log");
  if (!file) return file.status();
  auto text = read_log_text(file->get(), path);
  if (!text) return text.status();
  return parse_records(*text, path, options);
}

Status check_resumable(std::span<const Record> records, const ConfigSpace& space,
                       const std::string& source) {
  const std::string mine = space.hash();
  std::size_t foreign = 0;
  std::string other;
  for (const auto& r : records) {
    if (!r.space_hash.empty() && r.space_hash != mine) {
      ++foreign;
      other = r.space_hash;
    }
  }
  if (foreign == 0) return Status::ok();
  return Status(
      StatusCode::kInvalidArgument,
      fmt::format("{}: {} record(s) were written for another definition of the config space "
                  "(space hash {}, this space {}); refusing to resume from them. Tune with the "
                  "space they were made for, or start a new log.",
                  source, foreign, other, mine));
}

std::vector<Trial> records_to_trials(std::span<const Record> records,
                                     const std::shared_ptr<const Task>& task) {
  std::vector<Trial> out;
  if (!task || !task->space) return out;
  const std::string key = encode_python_json(nlohmann::ordered_json::array(
      {task->name, nlohmann::ordered_json::parse(task->args.dump())}));
  for (const auto& r : records) {
    if (r.workload_key() != key) continue;
    auto c = task->space->from_entity_json(nlohmann::json::parse(r.entity().dump()));
    if (!c) continue;
    Trial t;
    t.config = std::move(*c);
    t.result.error_no = r.error_no;
    t.result.costs_s = r.costs_s;
    t.result.all_cost_s = r.all_cost_s;
    t.result.timestamp_s = r.timestamp_s;
    if (t.result.ok()) {
      const double mean = t.result.mean_cost_s();
      t.score = mean > 0 ? (task->flop > 0 ? task->flop / mean : 1.0 / mean) : 0.0;
    }
    out.push_back(std::move(t));
  }
  return out;
}

Target parse_target(std::string_view text) {
  Target t;
  t.text = std::string(text);
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t j = i;
    while (j < text.size() && text[j] != ' ') ++j;
    if (j > i) words.emplace_back(text.substr(i, j - i));
    i = j;
  }
  if (words.empty()) return t;
  t.kind = words[0];
  std::vector<std::string> explicit_keys;
  std::string device;
  for (std::size_t w = 1; w < words.size(); ++w) {
    const std::string& opt = words[w];
    const auto eq = opt.find('=');
    if (opt.rfind("-", 0) != 0 || eq == std::string::npos) continue;
    const std::string name = opt.substr(1, eq - 1);
    const std::string value = opt.substr(eq + 1);
    if (name == "model")
      t.model = value;
    else if (name == "device")
      device = value;
    else if (name == "keys") {
      std::size_t s = 0;
      while (s <= value.size()) {
        const auto c = std::min(value.find(',', s), value.size());
        if (c > s) explicit_keys.push_back(value.substr(s, c - s));
        s = c + 1;
      }
    }
  }
  auto add = [&](const std::string& k) {
    if (!k.empty() && std::find(t.keys.begin(), t.keys.end(), k) == t.keys.end())
      t.keys.push_back(k);
  };
  for (const auto& k : explicit_keys) add(k);
  add(device);
  if (t.kind == "llvm" || t.kind == "c") {
    add("cpu");
  } else if (t.kind == "cuda" || t.kind == "rocm" || t.kind == "opencl" || t.kind == "vulkan" ||
             t.kind == "metal") {
    add(t.kind);
    add("gpu");
  } else {
    add(t.kind);
  }
  return t;
}

}  // namespace tunekit
