// Loading of Kernel Tuner cache / T4 files (zlib for .gz) into ReplayData, and SimulatedRunner.
// See include/tunekit/measure/simulated_runner.hpp.
#include "tunekit/measure/simulated_runner.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>

namespace tunekit {

namespace {

Status parse_error(const std::string& source, const std::string& what) {
  return Status(StatusCode::kParseError, fmt::format("{}: {}", source, what));
}

Expected<std::string> read_maybe_gzip(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return Status(StatusCode::kIoError, "cannot open '" + path + "'");
  gzbuffer(f, 1 << 17);
  std::string out;
  std::vector<char> buf(1 << 20);
  for (;;) {
    const int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = 0;
      std::string msg = gzerror(f, &err);
      gzclose(f);
      return Status(StatusCode::kIoError, fmt::format("{}: cannot decompress: {}", path, msg));
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  gzclose(f);
  return out;
}

MeasureErrorNo failure_code(const std::string& s) {
  if (s == "CompilationFailedConfig" || s == "compile") return MeasureErrorNo::kCompileDevice;
  if (s == "RuntimeFailedConfig" || s == "runtime") return MeasureErrorNo::kRuntimeDevice;
  if (s == "InvalidConfig" || s == "constraints") return MeasureErrorNo::kInstantiationError;
  return MeasureErrorNo::kUnknownError;
}

double number_or_zero(const nlohmann::ordered_json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return 0.0;
  return it->get<double>();
}

std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = 0xcbf29ce484222325ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

using OJson = nlohmann::ordered_json;

/// The bulk of a replay file: Kernel Tuner cache entries (key, entry) or T4 results, in file order.
struct ReplayData::Parts {
  std::vector<std::pair<std::string, const OJson*>> cache;
  std::vector<const OJson*> results;
};

namespace {

/// Index of `v` in `list` (numbers compare by value: 16 == 16.0), or list.size().
std::size_t position_of(const std::vector<OJson>& list, const OJson& v) {
  return static_cast<std::size_t>(std::find(list.begin(), list.end(), v) - list.begin());
}

nlohmann::json to_plain(const OJson& v) { return nlohmann::json::parse(v.dump()); }

}  // namespace

Expected<ReplayData> ReplayData::load(const std::string& path) {
  auto text = read_maybe_gzip(path);
  if (!text) return text.status();
  // The cache object / results array holds tens of thousands of entries: they are taken out of
  // the document as each one completes (an ordered object's insert is linear in its size), and
  // the rest keeps its key order (parameter order of T4 configurations and tune_params).
  std::vector<std::pair<std::string, OJson>> cache;
  std::vector<OJson> results;
  std::string top_key, entry_key;
  OJson doc;
  try {
    doc = OJson::parse(
        *text, [&](int depth, OJson::parse_event_t event, OJson& parsed) {
          using E = OJson::parse_event_t;
          if (event == E::key && depth == 1) {
            top_key = parsed.get<std::string>();
          } else if (event == E::key && depth == 2 && top_key == "cache") {
            entry_key = parsed.get<std::string>();
          } else if (event == E::object_end && depth == 2 && top_key == "cache") {
            cache.emplace_back(std::move(entry_key), std::move(parsed));
            return false;
          } else if (event == E::object_end && depth == 2 && top_key == "results") {
            results.push_back(std::move(parsed));
            return false;
          }
          return true;
        });
  } catch (const nlohmann::json::parse_error& e) {
    return parse_error(path, std::string("not valid JSON: ") + e.what());
  }
  Parts parts;
  for (const auto& [k, v] : cache) parts.cache.emplace_back(k, &v);
  for (const auto& r : results) parts.results.push_back(&r);
  if (doc.is_object() && doc.contains("cache") && !doc["cache"].is_object()) {
    return parse_error(path, "'cache' is not an object");
  }
  if (doc.is_object() && doc.contains("results") && !doc["results"].is_array()) {
    return parse_error(path, "'results' is not an array");
  }
  return from_parts(doc, parts, path);
}

Expected<ReplayData> ReplayData::from_json(const nlohmann::ordered_json& doc, const std::string& source) {
  Parts parts;
  if (doc.is_object() && doc.contains("cache") && doc["cache"].is_object()) {
    for (const auto& [k, v] : doc["cache"].items()) parts.cache.emplace_back(k, &v);
  }
  if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
    for (const auto& r : doc["results"]) parts.results.push_back(&r);
  }
  return from_parts(doc, parts, source);
}

Expected<ReplayData> ReplayData::from_parts(const nlohmann::ordered_json& doc, const Parts& parts,
                                            const std::string& source) {
  ReplayData d;
  d.source_ = source;
  try {
    if (doc.is_object() && doc.contains("cache") && doc.contains("tune_params")) {
      d.format_ = "kernel_tuner";
      d.kernel_name_ = doc.value("kernel_name", std::string());
      d.device_name_ = doc.value("device_name", std::string());
      const auto& tp = doc["tune_params"];
      if (!tp.is_object()) return parse_error(source, "'tune_params' is not an object");
      if (doc.contains("tune_params_keys")) {
        for (const auto& k : doc["tune_params_keys"]) d.names_.push_back(k.get<std::string>());
      } else {
        for (const auto& [k, v] : tp.items()) d.names_.push_back(k);
      }
      std::vector<std::vector<OJson>> lists;
      for (const auto& name : d.names_) {
        if (!tp.contains(name) || !tp[name].is_array() || tp[name].empty()) {
          return parse_error(source, "tune_params has no value list for '" + name + "'");
        }
        std::vector<OJson> olist(tp[name].begin(), tp[name].end());
        std::vector<nlohmann::json> vals;
        for (const auto& v : olist) vals.push_back(to_plain(v));
        lists.push_back(std::move(olist));
        d.values_.push_back(std::move(vals));
      }
      d.entries_.reserve(parts.cache.size());
      for (const auto& [key, rec_ptr] : parts.cache) {
        const OJson& rec = *rec_ptr;
        if (!rec.is_object()) return parse_error(source, fmt::format("cache entry '{}' is not an object", key));
        ReplayEntry e;
        e.knobs.resize(d.names_.size());
        for (std::size_t p = 0; p < d.names_.size(); ++p) {
          auto it = rec.find(d.names_[p]);
          if (it == rec.end()) return parse_error(source, fmt::format("cache entry '{}' has no '{}'", key, d.names_[p]));
          const std::size_t pos = position_of(lists[p], *it);
          if (pos == lists[p].size()) {
            return parse_error(source, fmt::format("cache entry '{}': {}={} is not in tune_params", key,
                                                   d.names_[p], it->dump()));
          }
          e.knobs[p] = static_cast<std::uint32_t>(pos);
        }
        auto t = rec.find("time");
        if (t == rec.end()) return parse_error(source, fmt::format("cache entry '{}' has no 'time'", key));
        if (t->is_number() && t->get<double>() < 1e20) {
          e.time_ms = t->get<double>();
        } else if (t->is_number()) {
          e.error_no = MeasureErrorNo::kRuntimeDevice;
          e.failure = "RuntimeFailedConfig";
        } else if (t->is_string()) {
          e.failure = t->get<std::string>();
          e.error_no = failure_code(e.failure);
        } else {
          return parse_error(source, fmt::format("cache entry '{}': 'time' is neither a number nor a string", key));
        }
        e.compile_ms = number_or_zero(rec, "compile_time");
        e.verification_ms = number_or_zero(rec, "verification_time");
        e.benchmark_ms = number_or_zero(rec, "benchmark_time");
        e.framework_ms = number_or_zero(rec, "framework_time");
        e.strategy_ms = number_or_zero(rec, "strategy_time");
        d.entries_.push_back(std::move(e));
      }
    } else if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
      d.format_ = "t4";
      const auto& results = parts.results;
      if (results.empty()) return parse_error(source, "T4 file has no results");
      for (std::size_t i = 0; i < results.size(); ++i) {
        if (!results[i]->is_object() || !results[i]->contains("configuration") ||
            !(*results[i])["configuration"].is_object()) {
          return parse_error(source, fmt::format("T4 result {} has no configuration object", i));
        }
      }
      for (const auto& [k, v] : (*results[0])["configuration"].items()) d.names_.push_back(k);
      std::vector<std::vector<OJson>> lists(d.names_.size());
      for (const OJson* r : results) {
        const auto& cfg = r->at("configuration");
        for (std::size_t p = 0; p < d.names_.size(); ++p) {
          auto it = cfg.find(d.names_[p]);
          if (it == cfg.end()) return parse_error(source, "T4 result without parameter '" + d.names_[p] + "'");
          if (position_of(lists[p], *it) == lists[p].size()) lists[p].push_back(*it);
        }
      }
      for (auto& list : lists) {
        const bool numeric = std::all_of(list.begin(), list.end(), [](const auto& v) { return v.is_number(); });
        if (numeric) {
          std::sort(list.begin(), list.end(),
                    [](const auto& a, const auto& b) { return a.template get<double>() < b.template get<double>(); });
        }
        std::vector<nlohmann::json> vals;
        for (const auto& v : list) vals.push_back(to_plain(v));
        d.values_.push_back(std::move(vals));
      }
      d.entries_.reserve(results.size());
      for (const OJson* rp : results) {
        const OJson& r = *rp;
        ReplayEntry e;
        e.knobs.resize(d.names_.size());
        const auto& cfg = r.at("configuration");
        for (std::size_t p = 0; p < d.names_.size(); ++p) {
          e.knobs[p] = static_cast<std::uint32_t>(position_of(lists[p], cfg.at(d.names_[p])));
        }
        const auto& times = r.at("times");
        e.compile_ms = number_or_zero(times, "compilation");
        e.framework_ms = number_or_zero(times, "framework");
        e.strategy_ms = number_or_zero(times, "search_algorithm");
        e.verification_ms = number_or_zero(times, "validation");
        if (times.contains("runtimes") && times["runtimes"].is_array()) {
          for (const auto& x : times["runtimes"]) e.benchmark_ms += x.get<double>();
        }
        const std::string invalidity = r.value("invalidity", std::string("correct"));
        const OJson* value = nullptr;
        if (r.contains("measurements") && r["measurements"].is_array()) {
          for (const auto& m : r["measurements"]) {
            if (m.value("name", std::string()) == "time") value = &m["value"];
          }
        }
        if (invalidity == "correct" && value != nullptr && value->is_number() && value->get<double>() < 1e20) {
          e.time_ms = value->get<double>();
        } else {
          e.failure = (value != nullptr && value->is_string()) ? value->get<std::string>() : invalidity;
          e.error_no = failure_code(invalidity == "correct" ? e.failure : invalidity);
        }
        d.entries_.push_back(std::move(e));
      }
    } else {
      return parse_error(source, "neither a Kernel Tuner cache file (tune_params, cache) nor a T4 file (results)");
    }
  } catch (const nlohmann::json::exception& e) {
    return parse_error(source, e.what());
  }
  TUNEKIT_RETURN_IF_ERROR(d.finish());
  return d;
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
    return parse_error(source_, fmt::format("the cartesian product has {} points; replay supports up to 2^28", range));
  }
  auto table = std::make_shared<std::vector<std::int32_t>>(range, -1);
  std::vector<std::uint64_t> keys;
  keys.reserve(entries_.size());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    const std::uint64_t index = space->knobs_to_index(entries_[i].knobs);
    if ((*table)[index] >= 0) {
      return parse_error(source_, fmt::format("configuration {} is recorded twice", index));
    }
    (*table)[index] = static_cast<std::int32_t>(i);
    keys.push_back(index);
  }
  std::sort(keys.begin(), keys.end());
  std::uint64_t digest = 0xcbf29ce484222325ULL;
  for (auto k : keys) digest = fnv1a64(std::string_view(reinterpret_cast<const char*>(&k), sizeof k), digest);
  std::vector<std::uint64_t> strides;
  std::uint64_t stride = 1;
  for (const auto& list : values_) {
    strides.push_back(stride);
    stride *= list.size();
  }
  Status st = space->add_constraint(
      fmt::format("in replay data {}@{}: {} configurations, keys {:016x}", kernel_name_, device_name_,
                  entries_.size(), digest),
      {}, [table, strides](const ConfigView& v) {
        std::uint64_t index = 0;
        const auto pos = v.positions();
        for (std::size_t k = 0; k < strides.size(); ++k) index += pos[k] * strides[k];
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
