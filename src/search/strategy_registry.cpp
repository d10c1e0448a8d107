// make_strategy: the registry of built-in strategies and the parsing of their JSON settings.
// Unknown names and unknown settings keys are errors that list what is accepted.
#include <fmt/format.h>

#include "tunekit/search/auto_strategy.hpp"
#include "tunekit/search/strategies.hpp"

namespace tunekit {

namespace {

Status check_keys(std::string_view strategy, const nlohmann::json& settings, std::initializer_list<std::string_view> keys) {
  if (!settings.is_object()) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: settings must be a JSON object", strategy));
  }
  for (const auto& [k, v] : settings.items()) {
    bool known = false;
    for (auto key : keys) known = known || key == k;
    if (!known) {
      std::string list;
      for (auto key : keys) list += (list.empty() ? "" : ", ") + std::string(key);
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("{}: unknown setting '{}' (accepted: {})", strategy, k, list.empty() ? "none" : list));
    }
  }
  return Status::ok();
}

template <class T>
void read(const nlohmann::json& s, const char* key, T& out) {
  if (s.contains(key)) out = s.at(key).get<T>();
}

}  // namespace

std::vector<std::string> strategy_names() {
  return {"auto", "grid", "random", "ga", "sa", "xgb", "xgb-rank", "xgb-rank-binary"};
}

Expected<std::unique_ptr<SearchStrategy>> make_strategy(std::string_view name, const nlohmann::json& settings) {
  try {
    if (name == "grid" || name == "random") {
      TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"begin", "end"}));
      std::uint64_t begin = settings.value("begin", std::uint64_t{0});
      std::optional<std::uint64_t> end;
      if (settings.contains("end")) end = settings.at("end").get<std::uint64_t>();
      if (name == "grid") return std::unique_ptr<SearchStrategy>(std::make_unique<GridSearchStrategy>(begin, end));
      return std::unique_ptr<SearchStrategy>(std::make_unique<RandomSearchStrategy>(begin, end));
    }
    if (name == "ga") {
      TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"pop_size", "elite_num", "mutation_prob"}));
      GeneticSettings g;
      read(settings, "pop_size", g.pop_size);
      read(settings, "elite_num", g.elite_num);
      read(settings, "mutation_prob", g.mutation_prob);
      if (g.pop_size < 2) return Status(StatusCode::kInvalidArgument, "ga: pop_size must be >= 2");
      return std::unique_ptr<SearchStrategy>(std::make_unique<GeneticStrategy>(g));
    }
    if (name == "sa") {
      TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"t_start", "t_min", "alpha", "iterations_per_step", "neighbour"}));
      AnnealingSettings a;
      read(settings, "t_start", a.t_start);
      read(settings, "t_min", a.t_min);
      read(settings, "alpha", a.alpha);
      read(settings, "iterations_per_step", a.iterations_per_step);
      read(settings, "neighbour", a.neighbour);
      return std::unique_ptr<SearchStrategy>(std::make_unique<SimulatedAnnealingStrategy>(a));
    }
    if (name == "xgb" || name == "xgb-rank" || name == "xgb-rank-binary") {
      TUNEKIT_RETURN_IF_ERROR(check_keys(name, settings, {"plan_size", "loss", "diversity_filter_ratio", "num_threads",
                                                          "sa_iterations", "min_seed_records", "max_rounds"}));
      ModelBasedSettings m;
      m.model.loss = name == "xgb" ? "reg" : std::string(name.substr(4));
      read(settings, "loss", m.model.loss);
      read(settings, "plan_size", m.plan_size);
      read(settings, "num_threads", m.model.num_threads);
      read(settings, "max_rounds", m.model.max_rounds);
      read(settings, "sa_iterations", m.annealing.n_iter);
      read(settings, "min_seed_records", m.min_seed_records);
      if (settings.contains("diversity_filter_ratio") && !settings.at("diversity_filter_ratio").is_null()) {
        m.diversity_filter_ratio = settings.at("diversity_filter_ratio").get<double>();
      }
      return std::unique_ptr<SearchStrategy>(std::make_unique<ModelBasedStrategy>(m));
    }
    if (name == "auto") {
      auto s = AutoSettings::from_json(settings);
      if (!s) return s.status();
      return std::unique_ptr<SearchStrategy>(std::make_unique<AutoStrategy>(*s));
    }
  } catch (const nlohmann::json::exception& e) {
    return Status(StatusCode::kInvalidArgument, fmt::format("{}: bad setting: {}", name, e.what()));
  }
  std::string list;
  for (const auto& n : strategy_names()) list += (list.empty() ? "" : ", ") + n;
  return Status(StatusCode::kNotFound, fmt::format("unknown search strategy '{}' (known: {})", name, list));
}

}  // namespace tunekit
