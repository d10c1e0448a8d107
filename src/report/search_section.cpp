// The report's searches: per (format, target, task, workload) of the stored trials, the best
// time so far against trials and tuning time, the distribution of times, knob importance, the
// two most important knobs against each other, and the failed configurations with reasons.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>
#include <vector>

#include "report/report_internal.hpp"
#include "tunekit/measure/measure_types.hpp"
#include "tunekit/report/knob_importance.hpp"

namespace tunekit::report::detail {
namespace {

using nlohmann::json;

/// One trial as the charts need it.
struct TrialPoint {
  std::vector<std::pair<std::string, std::string>> knobs;  ///< name, value text
  double cost_ms = NAN;                                    ///< NaN: failed
  double timestamp_s = NAN;  ///< when it was measured (AutoTVM's result[3]); NaN unknown
  int error_no = 0;
  std::string reason;  ///< failure message from the log line, when it has one
  std::string config;
};

/// Knob values of a stored configuration: AutoTVM's {"e": [[name, kind, value], ...]} (or
/// "entity"), or Kernel Tuner's {name: value}.
std::vector<std::pair<std::string, std::string>> knobs_of(const json& config) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!config.is_object()) return out;
  const json* e = config.contains("e") ? &config["e"]
                                       : (config.contains("entity") ? &config["entity"] : nullptr);
  if (e != nullptr && e->is_array()) {
    for (const json& k : *e) {
      if (k.is_array() && k.size() == 3 && k[0].is_string()) {
        out.emplace_back(k[0].get<std::string>(), k[2].dump());
      }
    }
    return out;
  }
  for (const auto& [name, value] : config.items()) out.emplace_back(name, value.dump());
  return out;
}

TrialPoint point_of(const DbTrial& t) {
  TrialPoint p;
  p.config = t.config;
  p.knobs = knobs_of(json::parse(t.config, nullptr, false));
  p.cost_ms = std::isfinite(t.cost_s) ? t.cost_s * 1e3 : NAN;
  p.error_no = t.error_no;
  const json line = json::parse(t.line, nullptr, false);
  const json* r = nullptr;
  if (line.is_object()) {
    if (line.contains("r")) r = &line["r"];
    if (line.contains("result")) r = &line["result"];
  }
  if (r != nullptr && r->is_array() && r->size() >= 4 && (*r)[3].is_number()) {
    p.timestamp_s = (*r)[3].get<double>();
  }
  if (r != nullptr && r->is_array() && !r->empty() && (*r)[0].is_array() && !(*r)[0].empty() &&
      (*r)[0][0].is_string()) {
    p.reason = (*r)[0][0].get<std::string>();
  }
  for (const char* key : {"error", "error_msg"}) {  // Kernel Tuner's; tunekit's own trials'
    if (line.is_object() && line.contains(key) && line[key].is_string()) {
      p.reason = line[key].get<std::string>();
    }
  }
  return p;
}

/// Best time so far after each trial, and against seconds since the first trial.
void add_convergence(const std::vector<TrialPoint>& trials, json& s) {
  json by_trial = json::array(), by_time = json::array();
  double best = INFINITY;
  double t0 = INFINITY;
  for (const TrialPoint& p : trials) t0 = std::min(t0, p.timestamp_s);
  for (std::size_t i = 0; i < trials.size(); ++i) {
    if (trials[i].cost_ms < best) best = trials[i].cost_ms;
    if (!std::isfinite(best)) continue;
    by_trial.push_back({i + 1, best});
    if (std::isfinite(trials[i].timestamp_s)) {
      by_time.push_back({trials[i].timestamp_s - t0, best});
    }
  }
  s["best_by_trial"] = std::move(by_trial);
  s["best_by_time"] = std::move(by_time);
}

/// Histogram of the measured times over 20 log-spaced bins.
json histogram(const std::vector<TrialPoint>& trials) {
  std::vector<double> v;
  for (const TrialPoint& p : trials) {
    if (p.cost_ms > 0) v.push_back(p.cost_ms);
  }
  json h = {{"edges_ms", json::array()}, {"counts", json::array()}};
  if (v.empty()) return h;
  const auto [lo_it, hi_it] = std::minmax_element(v.begin(), v.end());
  const double lo = std::log(*lo_it), hi = std::log(*hi_it) + 1e-9;
  constexpr int kBins = 20;
  std::vector<int> counts(kBins, 0);
  for (double x : v) {
    const int b = static_cast<int>((std::log(x) - lo) / (hi - lo) * kBins);
    ++counts[std::clamp(b, 0, kBins - 1)];
  }
  for (int b = 0; b <= kBins; ++b) h["edges_ms"].push_back(std::exp(lo + (hi - lo) * b / kBins));
  h["counts"] = counts;
  return h;
}

/// A knob value (JSON text) as a person reads it: a string without its quotes, else as written.
std::string shown_value(const std::string& text) {
  const json v = json::parse(text, nullptr, false);
  return v.is_string() ? v.get<std::string>() : text;
}

/// The distinct values of a knob (JSON texts) in axis order, as shown: by number when every one
/// is a number ("16" < "112" < "128"), else by text.
json axis_values(std::vector<std::string> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::vector<std::pair<double, std::string>> numbers;
  for (const std::string& v : values) {
    const json parsed = json::parse(v, nullptr, false);
    if (!parsed.is_number()) break;
    numbers.emplace_back(parsed.get<double>(), v);
  }
  json out = json::array();
  if (numbers.size() == values.size()) {
    std::stable_sort(numbers.begin(), numbers.end(),
                     [](const auto& l, const auto& r) { return l.first < r.first; });
    for (const auto& [number, text] : numbers) out.push_back(text);
    return out;
  }
  std::vector<std::string> shown;
  for (const std::string& v : values) shown.push_back(shown_value(v));
  std::sort(shown.begin(), shown.end());
  shown.erase(std::unique(shown.begin(), shown.end()), shown.end());
  for (std::string& v : shown) out.push_back(std::move(v));
  return out;
}

/// Knob importance, and the best time per pair of values of the two most important knobs.
void add_knob_views(const std::vector<TrialPoint>& trials, json& s) {
  std::vector<std::string> names;
  for (const TrialPoint& p : trials) {
    if (!p.knobs.empty()) {
      for (const auto& [n, v] : p.knobs) names.push_back(n);
      break;
    }
  }
  std::vector<KnobSample> samples;
  for (const TrialPoint& p : trials) {
    KnobSample ks{{}, p.cost_ms / 1e3};
    for (const auto& [n, v] : p.knobs) ks.values.push_back(v);
    samples.push_back(std::move(ks));
  }
  const auto importance = knob_importance(names, samples);
  json imp = json::array();
  for (const KnobImportance& k : importance) {
    imp.push_back({{"knob", k.knob}, {"share", k.share}, {"values", k.values}});
  }
  s["importance"] = std::move(imp);
  if (importance.size() < 2 || importance[1].values < 2) return;
  const auto index = [&](const std::string& n) {
    return static_cast<std::size_t>(std::find(names.begin(), names.end(), n) - names.begin());
  };
  const std::size_t a = index(importance[0].knob), b = index(importance[1].knob);
  std::map<std::pair<std::string, std::string>, double> best;
  for (const KnobSample& k : samples) {
    if (k.values.size() != names.size() || !(k.cost_s > 0)) continue;
    auto [it, added] = best.try_emplace({k.values[a], k.values[b]}, k.cost_s * 1e3);
    if (!added) it->second = std::min(it->second, k.cost_s * 1e3);
  }
  std::vector<std::string> xs, ys;
  for (const auto& [key, ms] : best) {
    xs.push_back(key.first);
    ys.push_back(key.second);
  }
  json cells = json::array();
  for (const auto& [key, ms] : best) {
    cells.push_back({shown_value(key.first), shown_value(key.second), ms});
  }
  s["two_knobs"] = {{"x", names[a]},
                    {"y", names[b]},
                    {"x_values", axis_values(std::move(xs))},
                    {"y_values", axis_values(std::move(ys))},
                    {"cells", std::move(cells)}};
}

/// The problem of a tunable op's template search: its workload is [task, [op signature, params
/// signature]] (TemplateSearch); "" for other workloads.
std::string problem_of(const std::string& workload) {
  const json w = json::parse(workload, nullptr, false);
  if (!w.is_array() || w.size() != 2 || !w[1].is_array() || w[1].size() != 2) return "";
  const json& args = w[1];
  if (!args[0].is_string() || !args[1].is_string()) return "";
  return args[0].get<std::string>() + "," + args[1].get<std::string>();
}

json failures(const std::vector<TrialPoint>& trials) {
  json out = json::array();
  for (const TrialPoint& p : trials) {
    if (std::isfinite(p.cost_ms)) continue;
    const std::string code(to_string(measure_error_from_int(p.error_no)));
    out.push_back({{"config", p.config}, {"error", code}, {"reason", p.reason}});
  }
  return out;
}

}  // namespace

Expected<json> search_sections(const TuningDb& db, const std::string& source) {
  auto trials = db.trials();
  if (!trials) return trials.status();
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<TrialPoint>> groups;
  std::vector<Key> order;
  for (const DbTrial& t : *trials) {
    Key key{t.format, t.target, t.task, t.workload};
    if (!groups.contains(key)) order.push_back(key);
    groups[key].push_back(point_of(t));
  }
  json out = json::array();
  for (const Key& key : order) {
    const auto& points = groups[key];
    const auto ok = std::count_if(points.begin(), points.end(),
                                  [](const TrialPoint& p) { return std::isfinite(p.cost_ms); });
    json s = {{"source", source},
              {"format", std::get<0>(key)},
              {"target", std::get<1>(key)},
              {"task", std::get<2>(key)},
              {"workload", std::get<3>(key)},
              {"problem", problem_of(std::get<3>(key))},
              {"trials", points.size()},
              {"failed", points.size() - static_cast<std::size_t>(ok)}};
    add_convergence(points, s);
    s["histogram"] = histogram(points);
    add_knob_views(points, s);
    s["failures"] = failures(points);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace tunekit::report::detail
