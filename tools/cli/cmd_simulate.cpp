// `tunekit simulate`: replays search strategies on brute-forced tuning data and prints, per
// strategy, the mean fraction of optimum after N evaluations and the methodology score.
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "commands.hpp"
#include "progress.hpp"
#include "tunekit/core/json.hpp"
#include "tunekit/search/replay.hpp"
#include "tunekit/search/strategy.hpp"

namespace {

struct SimulateArgs {
  std::vector<std::string> data;
  std::vector<std::string> strategies{"auto"};
  std::string budgets = "200";
  std::size_t runs = 50;
  std::uint64_t seed = 0;
  unsigned threads = 0;
  std::string settings = "{}";
  double percentile = 0.95;
  std::string format = "table";
  std::string score_budget = "time";
  bool no_score = false;
  bool traces = false;
};

std::vector<std::size_t> parse_budgets(const std::string& text) {
  std::vector<std::size_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    try {
      // Digits only: std::stoull alone would take "-5" as 2^64 - 5.
      if (item.empty() || item.size() > 12 ||
          !std::all_of(item.begin(), item.end(), [](char c) { return c >= '0' && c <= '9'; }))
        throw std::invalid_argument(item);
      const auto v = std::stoull(item);
      if (v == 0) throw std::invalid_argument(item);
      out.push_back(static_cast<std::size_t>(v));
    } catch (const std::exception&) {
      throw tunekit::cli::CommandFailure{
          tunekit::cli::kExitUsage,
          fmt::format("simulate: --budget expects positive integers, got '{}'", text)};
    }
  }
  if (out.empty())
    throw tunekit::cli::CommandFailure{tunekit::cli::kExitUsage, "simulate: empty --budget"};
  // Ascending, each once (the columns of the report).
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Fails unless `path` can be opened for reading and is a regular file (not a directory, nor a
// FIFO or device that could block the run), so that every --data file is checked before the
// first one is replayed. O_NONBLOCK: opening a FIFO without a writer must not wait for one.
void check_data_file(const std::string& path) {
  using tunekit::cli::CommandFailure;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("simulate: --data '{}': {}", path, std::strerror(errno))};
  }
  struct stat st {};
  const bool known = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (known && S_ISDIR(st.st_mode)) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("simulate: --data '{}' is a directory", path)};
  }
  if (!known || !S_ISREG(st.st_mode)) {
    throw CommandFailure{tunekit::cli::kExitFailure,
                         fmt::format("simulate: --data '{}' is not a regular file", path)};
  }
}

// The --strategy names in the order given, 'all' standing for every strategy, each name once.
std::vector<std::string> expand_strategies(const std::vector<std::string>& names) {
  std::vector<std::string> out;
  for (const auto& name : names) {
    const std::vector<std::string> these =
        name == "all" ? tunekit::strategy_names() : std::vector<std::string>{name};
    for (const auto& n : these) {
      if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
  }
  return out;
}

void run_simulate(const SimulateArgs& args) {
  using tunekit::cli::CommandFailure;
  const auto budgets = parse_budgets(args.budgets);
  const std::size_t max_budget = *std::max_element(budgets.begin(), budgets.end());
  auto parsed_settings =
      tunekit::parse_json<nlohmann::json>(args.settings, tunekit::DuplicateKeys::kRefuse);
  if (!parsed_settings) {
    throw CommandFailure{tunekit::cli::kExitUsage, fmt::format("simulate: --settings: {}",
                                                               parsed_settings.status().message())};
  }
  nlohmann::json settings = std::move(*parsed_settings);
  if (!(args.percentile > 0.0 && args.percentile < 1.0))
    throw CommandFailure{tunekit::cli::kExitUsage, "simulate: --percentile must be in (0, 1)"};
  const std::vector<std::string> strategies = expand_strategies(args.strategies);
  if (strategies.size() > 1 && !settings.empty()) {
    throw CommandFailure{tunekit::cli::kExitUsage,
                         "simulate: --settings applies to one --strategy only"};
  }
  // Unknown strategies, bad settings and unreadable data files are reported before any data is
  // loaded or printed.
  for (const auto& name : strategies) {
    auto probe = tunekit::make_strategy(name, settings);
    if (!probe) throw CommandFailure{tunekit::cli::kExitUsage, probe.status().message()};
  }
  for (const auto& path : args.data) check_data_file(path);
  const unsigned threads =
      args.threads ? args.threads : std::max(1u, std::thread::hardware_concurrency());
  tunekit::MethodologySettings ms;
  ms.cutoff_percentile = args.percentile;
  if (args.score_budget == "evaluations")
    ms.axis = tunekit::MethodologySettings::Axis::kEvaluations;
  const bool by_evaluations = ms.axis == tunekit::MethodologySettings::Axis::kEvaluations;
  const bool markdown = args.format == "markdown";
  const bool json = args.format == "json";
  nlohmann::json report = nlohmann::json::array();

  // Every file is loaded and checked (contents, and settings that do not fit its space, such as
  // a grid range past its last index) before the first table starts: a bad second file fails
  // the command without printing the first one's results.
  struct Loaded {
    std::shared_ptr<const tunekit::ReplayData> data;
    double load_s = 0.0;
  };
  std::vector<Loaded> files;
  for (const auto& path : args.data) {
    const auto load_start = std::chrono::steady_clock::now();
    auto loaded = tunekit::ReplayData::load(path);
    if (!loaded) throw CommandFailure{tunekit::cli::kExitFailure, loaded.status().message()};
    const double load_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - load_start).count();
    auto data = std::make_shared<const tunekit::ReplayData>(std::move(*loaded));
    for (const auto& name : strategies) {
      auto probe = tunekit::make_strategy(name, settings);
      if (!probe) throw CommandFailure{tunekit::cli::kExitUsage, probe.status().message()};
      const auto st = (*probe)->initialize(*data->space(), args.seed);
      if (!st)
        throw CommandFailure{tunekit::cli::kExitUsage, fmt::format("{}: {}", path, st.message())};
    }
    files.push_back({std::move(data), load_s});
  }

  // On stderr in both modes: stdout is the table (or JSON) being written as the runs finish.
  tunekit::cli::Progress bar(files.size() * strategies.size(), tunekit::cli::detect_progress_mode(),
                             stderr);
  std::size_t unit = 0;
  for (std::size_t file = 0; file < files.size(); ++file) {
    const std::string& path = args.data[file];
    const auto& data = files[file].data;
    const double load_s = files[file].load_s;
    const auto budget = tunekit::methodology_budget(*data, ms);
    nlohmann::json file_report = {{"data", path},
                                  {"kernel", data->kernel_name()},
                                  {"device", data->device_name()},
                                  {"configurations", data->entries().size()},
                                  {"valid", data->valid_count()},
                                  {"optimum_ms", data->optimum_ms()},
                                  {"median_ms", data->median_ms()},
                                  {"methodology_fevals", budget.fevals},
                                  {"methodology_time_s", budget.end_s},
                                  {"methodology_start_fevals", budget.start_fevals},
                                  {"score_budget", args.score_budget},
                                  {"load_s", load_s},
                                  {"runs", args.runs},
                                  {"strategies", nlohmann::json::array()}};
    if (!json) {
      fmt::print(
          "{}{} ({} on {}): {} configurations, {} valid, optimum {:.4f} ms, median {:.4f} ms; load "
          "{:.2f} s\n",
          markdown ? "### " : "", path, data->kernel_name().empty() ? "?" : data->kernel_name(),
          data->device_name().empty() ? "?" : data->device_name(), data->entries().size(),
          data->valid_count(), data->optimum_ms(), data->median_ms(), load_s);
      fmt::print(
          "{}methodology budget (p={}): target {:.4f} ms, {} random evaluations, {:.1f} s "
          "simulated{}; {} runs\n\n",
          markdown ? "\n" : "", args.percentile, budget.target_ms, budget.fevals, budget.end_s,
          by_evaluations
              ? fmt::format("; score over evaluations {}-{}", budget.start_fevals, budget.fevals)
              : std::string(),
          args.runs);
      std::string head = markdown ? "| strategy |" : fmt::format("{:<16}", "strategy");
      std::string rule = markdown ? "|---|" : "";
      for (auto b : budgets) {
        head += markdown ? fmt::format(" FoO@{} |", b)
                         : fmt::format("{:>10}", fmt::format("FoO@{}", b));
        rule += markdown ? "---|" : "";
      }
      if (!args.no_score) {
        head += markdown ? " score |" : fmt::format("{:>10}", "score");
        rule += markdown ? "---|" : "";
      }
      head += markdown ? " s/run |" : fmt::format("{:>10}", "s/run");
      rule += markdown ? "---|" : "";
      fmt::print("{}\n", head);
      if (markdown) fmt::print("{}\n", rule);
    }
    for (const auto& s : strategies) {
      tunekit::SimulationOptions so;
      so.strategy = s;
      so.settings = settings;
      // The score needs every run to last the methodology budget, in time or in evaluations.
      so.evaluations = max_budget;
      if (!args.no_score && by_evaluations)
        so.evaluations = std::max<std::size_t>(max_budget, budget.fevals);
      so.time_s = args.no_score || by_evaluations ? 0.0 : budget.end_s;
      so.runs = args.runs;
      so.seed = args.seed;
      so.threads = threads;
      const std::string label = fmt::format("{} {}", path, s);
      bar.begin(unit, label);
      auto traces = tunekit::simulate_strategy(data, so);
      if (!traces) throw CommandFailure{tunekit::cli::kExitFailure, traces.status().message()};
      double wall = 0.0;
      for (const auto& t : *traces) wall += t.wall_s;
      wall /= static_cast<double>(std::max<std::size_t>(1, traces->size()));
      nlohmann::json row = {{"strategy", s}, {"seconds_per_run", wall}};
      std::string line = markdown ? fmt::format("| {} |", s) : fmt::format("{:<16}", s);
      for (auto b : budgets) {
        const double f = tunekit::fraction_of_optimum(*data, *traces, b);
        row["fraction_of_optimum"][std::to_string(b)] = f;
        row["fraction_of_optimum_per_run"][std::to_string(b)] =
            tunekit::fraction_of_optimum_per_run(*data, *traces, b);
        line += markdown ? fmt::format(" {:.3f} |", f) : fmt::format("{:>10.3f}", f);
      }
      if (!args.no_score) {
        const double score = tunekit::methodology_score(*data, *traces, ms);
        row["score"] = score;
        line += markdown ? fmt::format(" {:.3f} |", score) : fmt::format("{:>10.3f}", score);
      }
      line += markdown ? fmt::format(" {:.3f} |", wall) : fmt::format("{:>10.3f}", wall);
      if (args.traces) {
        // The objective of every unique evaluation of every run (null: a failure), so that
        // other tools can compute their own metrics and intervals from the same runs.
        nlohmann::json per_run = nlohmann::json::array();
        for (const auto& t : *traces) {
          nlohmann::json one = nlohmann::json::array();
          for (double v : t.time_ms)
            one.push_back(std::isnan(v) ? nlohmann::json() : nlohmann::json(v));
          per_run.push_back(std::move(one));
        }
        row["objective_ms_per_run"] = std::move(per_run);
      }
      file_report["strategies"].push_back(row);
      bar.finished(unit++, label,
                   fmt::format("{} runs, FoO@{} {:.3f}", args.runs, max_budget,
                               tunekit::fraction_of_optimum(*data, *traces, max_budget)));
      if (!json) {
        bar.done();
        fmt::print("{}\n", line);
        std::fflush(stdout);
      }
    }
    if (!json) fmt::print("\n");
    report.push_back(std::move(file_report));
  }
  if (json) fmt::print("{}\n", report.dump(2));
}

}  // namespace

void register_simulate_command(CLI::App& app) {
  auto args = std::make_shared<SimulateArgs>();
  auto* cmd = app.add_subcommand(
      "simulate",
      "Replay search strategies on brute-forced data (Kernel Tuner cache or T4 files, .json or "
      ".json.gz): "
      "mean fraction of optimum after N evaluations and the methodology score of Willemsen et al.");
  cmd->add_option("--data", args->data, "Data file(s) to replay")->required();
  cmd->add_option("--strategy", args->strategies,
                  "Strategy name(s); 'all' stands for every strategy, a name given twice runs once "
                  "(default: auto)");
  cmd->add_option("--budget", args->budgets,
                  "Evaluations, one number or a comma list (default 200)");
  cmd->add_option("--runs", args->runs, "Runs per strategy (default 50)")
      ->check(CLI::Range(1, 1000000));
  cmd->add_option("--seed", args->seed,
                  "Seed of the first run, 0 to 2^64-1; run r uses seed+r (default 0)")
      ->check(tunekit::cli::seed_number());
  cmd->add_option("--threads", args->threads,
                  "Worker threads (default: all cores; results do not depend on it)");
  cmd->add_option("--settings", args->settings, "Strategy settings as a JSON object");
  cmd->add_option("--percentile", args->percentile, "Methodology cutoff percentile (default 0.95)");
  cmd->add_option("--score-budget", args->score_budget,
                  "What the methodology budget counts: time (simulated, the default) or "
                  "evaluations (unique configurations measured)")
      ->check(CLI::IsMember({"time", "evaluations"}));
  cmd->add_flag("--traces", args->traces,
                "With --format json: the objective (ms) of every evaluation of every run");
  cmd->add_flag("--no-score", args->no_score,
                "Skip the methodology score (runs stop after the evaluations)");
  cmd->add_option("--format", args->format, "table, markdown or json (default table)")
      ->check(CLI::IsMember({"table", "markdown", "json"}));
  cmd->callback([args] { run_simulate(*args); });
}
