// make_strategy: the registry of built-in strategies and the parsing of their JSON settings.
// Unknown names and unknown settings keys are errors that list what is accepted.
#include <fmt/format.h>

#include <limits>

#include "search/setting_readers.hpp"
#include "tunekit/search/auto_strategy.hpp"
#include "tunekit/search/strategies.hpp"

namespace tunekit {

namespace {

Status check_keys(std::string_view strategy, const nlohmann::json& settings,
                  std::initializer_list<std::string_view> keys) {
  if (!settings.is_object()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("{}: settings must be a JSON object", strategy));
  }
  for (const auto& [k, v] : settings.items()) {
    bool known = false;
    for (auto key : keys) known = known || key == k;
    if (!known) {
      std::string list;
      for (auto key : keys) list += (list.empty() ? "" : ", ") + std::string(key);
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("{}: unknown setting '{}' (accepted: {})", strategy,
                                setting::printable_key(k), list.empty() ? "none" : list));
    }
  }
  return Status::ok();
}

// Reads settings[key], when present, with `reader` into `out`; a bad value is an error naming
// the strategy and the key.
template <class T, class Reader>
Status read(std::string_view strategy, const nlohmann::json& settings, const char* key, T& out,
            Reader reader) {
  if (!settings.contains(key)) return Status::ok();
  try {
    out = static_cast<T>(reader(settings.at(key)));
  } catch (const setting::BadSetting& e) {
    return setting::error(strategy, key, e.what());
  }
  return Status::ok();
}

using setting::integer_in;
using setting::number_in;
using setting::Open;

constexpr std::uint64_t kMaxCount = 1000000;
// plan_size and diversity_filter_ratio: the annealing keeps plan_size * ratio candidates.
constexpr std::uint64_t kMaxPlan = 100000;
constexpr double kMaxFilterRatio = 100.0;

std::uint64_t count(const nlohmann::json& v) { return integer_in(v, 0); }
double probability(const nlohmann::json& v) { return number_in(v, 0.0, 1.0); }
double real(const nlohmann::json& v) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  return number_in(v, -kInf, kInf);
}

}  // namespace

std::vector<std::string> strategy_names() {
  return {"auto", "grid", "random", "ga", "sa", "xgb", "xgb-rank", "xgb-rank-binary"};
}

Expected<std::unique_ptr<SearchStrategy>> make_strategy(std::string_view name,
                                                        const nlohmann::json& settings) {
  // Every setting is read and range-checked here, so a bad value is reported when the strategy
  // is created (before any data is loaded), naming its key.
  if (name == "grid" || name == "random") {
    TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"begin", "end"}));
    std::uint64_t begin = 0;
    std::optional<std::uint64_t> end;
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "begin", begin, count));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "end", end, count));
    if (end && *end < begin) {
      return setting::error(
          name, "end",
          fmt::format("({}) must be >= begin ({}): the range is inclusive", *end, begin));
    }
    if (name == "grid")
      return std::unique_ptr<SearchStrategy>(std::make_unique<GridSearchStrategy>(begin, end));
    return std::unique_ptr<SearchStrategy>(std::make_unique<RandomSearchStrategy>(begin, end));
  }
  if (name == "ga") {
    TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"pop_size", "elite_num", "mutation_prob"}));
    GeneticSettings g;
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "pop_size", g.pop_size,
             [](const nlohmann::json& v) { return integer_in(v, 2, kMaxCount); }));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "elite_num", g.elite_num, count));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "mutation_prob", g.mutation_prob, probability));
    if (g.elite_num > g.pop_size) {
      return setting::error(
          name, "elite_num",
          fmt::format("({}) must be at most pop_size ({})", g.elite_num, g.pop_size));
    }
    return std::unique_ptr<SearchStrategy>(std::make_unique<GeneticStrategy>(g));
  }
  if (name == "sa") {
    TUNEKIT_RETURN_IF_ERROR(check_keys(
        name, settings, {"t_start", "t_min", "alpha", "iterations_per_step", "neighbour"}));
    AnnealingSettings a;
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "t_start", a.t_start, real));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "t_min", a.t_min, [](const nlohmann::json& v) {
      return number_in(v, 0.0, std::numeric_limits<double>::infinity(), Open::kLow);
    }));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "alpha", a.alpha, [](const nlohmann::json& v) {
      return number_in(v, 0.0, 1.0, Open::kBoth);
    }));
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "iterations_per_step", a.iterations_per_step,
             [](const nlohmann::json& v) { return integer_in(v, 1, kMaxCount); }));
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "neighbour", a.neighbour, [](const nlohmann::json& v) {
          return setting::one_of(v, {"hamming", "adjacent"});
        }));
    if (!(a.t_start > a.t_min)) {
      return setting::error(
          name, "t_start", fmt::format("({}) must be greater than t_min ({})", a.t_start, a.t_min));
    }
    return std::unique_ptr<SearchStrategy>(std::make_unique<SimulatedAnnealingStrategy>(a));
  }
  if (name == "xgb" || name == "xgb-rank" || name == "xgb-rank-binary") {
    TUNEKIT_RETURN_IF_ERROR(
        check_keys(name, settings,
                   {"plan_size", "loss", "diversity_filter_ratio", "num_threads", "sa_iterations",
                    "min_seed_records", "max_rounds"}));
    ModelBasedSettings m;
    m.model.loss = name == "xgb" ? "reg" : std::string(name.substr(4));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "loss", m.model.loss, [](const nlohmann::json& v) {
      return setting::one_of(v, {"reg", "rank", "rank-binary"});
    }));
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "plan_size", m.plan_size,
             [](const nlohmann::json& v) { return integer_in(v, 1, kMaxPlan); }));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "num_threads", m.model.num_threads,
                                 [](const nlohmann::json& v) { return integer_in(v, 1, 1024); }));
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "max_rounds", m.model.max_rounds,
             [](const nlohmann::json& v) { return integer_in(v, 1, kMaxCount); }));
    TUNEKIT_RETURN_IF_ERROR(
        read(name, settings, "sa_iterations", m.annealing.n_iter,
             [](const nlohmann::json& v) { return integer_in(v, 0, kMaxCount); }));
    TUNEKIT_RETURN_IF_ERROR(read(name, settings, "min_seed_records", m.min_seed_records, count));
    if (settings.contains("diversity_filter_ratio") &&
        !settings.at("diversity_filter_ratio").is_null()) {
      double ratio = 1.0;
      TUNEKIT_RETURN_IF_ERROR(
          read(name, settings, "diversity_filter_ratio", ratio,
               [](const nlohmann::json& v) { return number_in(v, 1.0, kMaxFilterRatio); }));
      m.diversity_filter_ratio = ratio;
    }
    return std::unique_ptr<SearchStrategy>(std::make_unique<ModelBasedStrategy>(m));
  }
  if (name == "auto") {
    auto s = AutoSettings::from_json(settings);
    if (!s) return s.status();
    return std::unique_ptr<SearchStrategy>(std::make_unique<AutoStrategy>(*s));
  }
  std::string list;
  for (const auto& n : strategy_names()) list += (list.empty() ? "" : ", ") + n;
  return Status(StatusCode::kNotFound,
                fmt::format("unknown search strategy '{}' (known: {})", name, list));
}

}  // namespace tunekit
