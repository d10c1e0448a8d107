// `tunekit log best|merge|show`: tuning log utilities over AutoTVM JSON-lines records:
// pick the best records, merge logs, print a table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "commands.hpp"
#include "tunekit/records/record_store.hpp"

namespace {

using tunekit::Record;
using tunekit::cli::CommandFailure;

std::vector<Record> load_all(const std::vector<std::string>& paths, bool strict) {
  std::vector<Record> all;
  for (const auto& p : paths) {
    tunekit::LoadOptions lo;
    lo.strict = strict;
    auto r = tunekit::load_records(p, lo);
    if (!r) throw CommandFailure{tunekit::cli::kExitFailure, r.status().message()};
    all.insert(all.end(), std::make_move_iterator(r->begin()), std::make_move_iterator(r->end()));
  }
  return all;
}

std::string compact_config(const Record& r) {
  std::string out;
  for (const auto& item : r.entity()) {
    if (!item.is_array() || item.size() != 3) continue;
    if (!out.empty()) out += ',';
    out += item[0].get<std::string>() + "=" + (item[2].is_string() ? item[2].get<std::string>() : item[2].dump());
  }
  return out;
}

std::string shorten(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  return s.substr(0, width - 3) + "...";
}

struct LogArgs {
  std::vector<std::string> inputs;
  std::string out;
  std::size_t top = 0;
  std::string workload;
  bool errors = true;
  bool strict = false;
  bool dedupe = false;
  std::size_t width = 60;
};

void show(const LogArgs& a) {
  auto records = load_all(a.inputs, a.strict);
  std::vector<const Record*> rows;
  for (const auto& r : records) {
    if (!a.workload.empty() && r.workload_key().find(a.workload) == std::string::npos &&
        r.task_name.find(a.workload) == std::string::npos) {
      continue;
    }
    if (!a.errors && !r.ok()) continue;
    rows.push_back(&r);
  }
  if (a.top > 0) {
    std::stable_sort(rows.begin(), rows.end(), [](const Record* x, const Record* y) { return x->mean_cost_s() < y->mean_cost_s(); });
    if (rows.size() > a.top) rows.resize(a.top);
  }
  fmt::print("{:>5}  {:<24} {:<24} {:>12}  {:<20} {}\n", "#", "target", "task", "mean ms", "result", "config");
  std::size_t n = 0;
  for (const Record* r : rows) {
    const std::string cost = r->ok() ? fmt::format("{:.6f}", r->mean_cost_s() * 1e3) : "-";
    fmt::print("{:>5}  {:<24} {:<24} {:>12}  {:<20} {}\n", ++n, shorten(r->target, 24), shorten(r->task_name, 24), cost,
               tunekit::to_string(r->error_no), shorten(compact_config(*r), a.width));
  }
  std::size_t ok = 0;
  std::unordered_set<std::string> workloads;
  for (const auto& r : records) {
    ok += r.ok();
    workloads.insert(r.workload_key());
  }
  fmt::print("{} records ({} successful, {} failed), {} workloads; {} shown\n", records.size(), ok,
             records.size() - ok, workloads.size(), rows.size());
}

void best(const LogArgs& a) {
  std::vector<std::string> inputs;
  // Upstream pick_best merges an existing output first.
  if (FILE* f = std::fopen(a.out.c_str(), "r")) {
    std::fclose(f);
    if (std::find(a.inputs.begin(), a.inputs.end(), a.out) == a.inputs.end()) inputs.push_back(a.out);
  }
  inputs.insert(inputs.end(), a.inputs.begin(), a.inputs.end());
  auto records = load_all(inputs, a.strict);
  auto chosen = tunekit::pick_best(records);
  if (auto st = tunekit::write_records(a.out, chosen); !st) throw CommandFailure{tunekit::cli::kExitFailure, st.message()};
  fmt::print("{}: {} best records from {} records\n", a.out, chosen.size(), records.size());
}

void merge(const LogArgs& a) {
  auto records = load_all(a.inputs, a.strict);
  std::vector<Record> out;
  std::unordered_set<std::string> seen;
  for (auto& r : records) {
    if (a.dedupe && !seen.insert(tunekit::encode_record(r)).second) continue;
    out.push_back(std::move(r));
  }
  if (auto st = tunekit::write_records(a.out, out); !st) throw CommandFailure{tunekit::cli::kExitFailure, st.message()};
  fmt::print("{}: {} records from {} files\n", a.out, out.size(), a.inputs.size());
}

}  // namespace

void register_log_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("log", "Tuning logs (AutoTVM JSON lines): best, merge, show");
  cmd->require_subcommand(1);

  auto sa = std::make_shared<LogArgs>();
  auto* show_cmd = cmd->add_subcommand("show", "Print the records of tuning logs as a table");
  show_cmd->add_option("logs", sa->inputs, "Log files ('-' = stdin)")->required();
  show_cmd->add_option("--top", sa->top, "Only the N best records (by mean cost)");
  show_cmd->add_option("--workload", sa->workload, "Only records whose task or workload contains this text");
  show_cmd->add_flag("!--no-errors", sa->errors, "Hide failed records");
  show_cmd->add_option("--width", sa->width, "Width of the config column (default 60)");
  show_cmd->add_flag("--strict", sa->strict, "Fail on the first malformed line instead of skipping it");
  show_cmd->callback([sa] { show(*sa); });

  auto ba = std::make_shared<LogArgs>();
  auto* best_cmd = cmd->add_subcommand("best", "Keep the best record per workload and target model/key (pick_best)");
  best_cmd->add_option("logs", ba->inputs, "Log files")->required();
  best_cmd->add_option("--out,-o", ba->out, "Output log (merged first when it exists)")->required();
  best_cmd->add_flag("--strict", ba->strict, "Fail on the first malformed line instead of skipping it");
  best_cmd->callback([ba] { best(*ba); });

  auto ma = std::make_shared<LogArgs>();
  auto* merge_cmd = cmd->add_subcommand("merge", "Concatenate logs into one (skipping malformed and v0.1 lines)");
  merge_cmd->add_option("logs", ma->inputs, "Log files")->required();
  merge_cmd->add_option("--out,-o", ma->out, "Output log (replaced atomically)")->required();
  merge_cmd->add_flag("--dedupe", ma->dedupe, "Drop records identical to an earlier one");
  merge_cmd->add_flag("--strict", ma->strict, "Fail on the first malformed line instead of skipping it");
  merge_cmd->callback([ma] { merge(*ma); });
}
