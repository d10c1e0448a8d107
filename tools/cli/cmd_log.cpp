// `tunekit log best|merge|show`: tuning log utilities over AutoTVM JSON-lines records:
// pick the best records, merge logs (output replaced under the log's lock), print a table.
#include <fmt/format.h>
#include <sys/stat.h>

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

[[noreturn]] void fail(const tunekit::Status& st) {
  throw CommandFailure{tunekit::cli::kExitFailure, st.message()};
}

std::vector<Record> load_one(const std::string& path, bool strict) {
  tunekit::LoadOptions lo;
  lo.strict = strict;
  auto r = tunekit::load_records(path, lo);
  if (!r) fail(r.status());
  return std::move(*r);
}

std::vector<Record> concat(std::vector<std::vector<Record>>& parts) {
  std::vector<Record> all;
  for (auto& p : parts)
    all.insert(all.end(), std::make_move_iterator(p.begin()), std::make_move_iterator(p.end()));
  return all;
}

std::string compact_config(const Record& r) {
  std::string out;
  for (const auto& item : r.entity()) {
    if (!item.is_array() || item.size() != 3 || !item[0].is_string()) continue;
    if (!out.empty()) out += ',';
    out += item[0].get<std::string>() + "=" +
           (item[2].is_string() ? item[2].get<std::string>() : item[2].dump());
  }
  return out;
}

/// `s` cut to `width` (>= 1) characters, ending in "..." when cut and there is room for it.
std::string shorten(const std::string& s, std::size_t width) {
  if (s.size() <= width) return s;
  if (width < 4) return s.substr(0, width);
  return s.substr(0, width - 3) + "...";
}

struct LogArgs {
  std::vector<std::string> inputs;
  std::string out;
  std::size_t top = 0;  // 0: all (--top takes N >= 1)
  std::string workload;
  bool errors = true;
  bool strict = false;
  bool dedupe = false;
  bool in_place = false;
  std::size_t width = 60;
};

/// For each input, whether it is the output file itself (same device and inode, so "./a.log",
/// "a.log" and a hard link all match). Refuses such an input without --in-place: the output is
/// replaced, so the input would be lost but for what the command keeps of it.
std::vector<bool> inputs_that_are_output(const LogArgs& a, std::string_view command) {
  std::vector<bool> is_out(a.inputs.size(), false);
  struct stat out {};
  if (::stat(a.out.c_str(), &out) != 0) return is_out;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    struct stat in {};
    if (a.inputs[i] == "-" || ::stat(a.inputs[i].c_str(), &in) != 0) continue;
    if (in.st_dev != out.st_dev || in.st_ino != out.st_ino) continue;
    if (!a.in_place) {
      throw CommandFailure{
          tunekit::cli::kExitUsage,
          fmt::format("log {}: the output '{}' is also the input '{}'; replacing it would "
                      "lose records. Write to another file, or pass --in-place to replace "
                      "it under its lock",
                      command, a.out, a.inputs[i])};
    }
    is_out[i] = true;
  }
  return is_out;
}

void show(const LogArgs& a) {
  std::vector<std::vector<Record>> parts;
  for (const auto& p : a.inputs) parts.push_back(load_one(p, a.strict));
  const std::vector<Record> records = concat(parts);
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
    std::stable_sort(rows.begin(), rows.end(), [](const Record* x, const Record* y) {
      return x->mean_cost_s() < y->mean_cost_s();
    });
    if (rows.size() > a.top) rows.resize(a.top);
  }
  fmt::print("{:>5}  {:<24} {:<24} {:>12}  {:<20} {}\n", "#", "target", "task", "mean ms", "result",
             "config");
  std::size_t n = 0;
  for (const Record* r : rows) {
    const std::string cost = r->ok() ? fmt::format("{:.6f}", r->mean_cost_s() * 1e3) : "-";
    fmt::print("{:>5}  {:<24} {:<24} {:>12}  {:<20} {}\n", ++n, shorten(r->target, 24),
               shorten(r->task_name, 24), cost, tunekit::to_string(r->error_no),
               shorten(compact_config(*r), a.width));
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

/// Reads the inputs (the output's slots from the locked output), lets `make` build the new
/// content, and replaces the output, all under the output's lock.
template <class Make>
std::size_t rewrite_output(const LogArgs& a, std::string_view command, bool read_existing_output,
                           Make make) {
  if (a.out == "-") {
    throw CommandFailure{tunekit::cli::kExitUsage,
                         fmt::format("log {}: -o - is not a file (the output is written under a "
                                     "lock and replaced atomically); name a file, and print it "
                                     "with `tunekit log show`",
                                     command)};
  }
  const std::vector<bool> is_out = inputs_that_are_output(a, command);
  // Inputs first (a bad input leaves the output untouched), then the output under its lock.
  std::vector<std::vector<Record>> parts(a.inputs.size());
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (!is_out[i]) parts[i] = load_one(a.inputs[i], a.strict);
  }
  auto lock = tunekit::LockedLog::acquire(a.out);
  if (!lock) fail(lock.status());
  const bool output_is_input = std::find(is_out.begin(), is_out.end(), true) != is_out.end();
  std::vector<Record> existing;
  if (read_existing_output || output_is_input) {
    tunekit::LoadOptions lo;
    lo.strict = a.strict;
    auto current = lock->load(lo);
    if (!current) fail(current.status());
    existing = std::move(*current);
  }
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    if (is_out[i]) parts[i] = existing;
  }
  // `log best` merges an existing output first (upstream pick_best), unless it is an input.
  if (read_existing_output && !output_is_input) parts.insert(parts.begin(), std::move(existing));
  std::vector<Record> records = concat(parts);
  const std::size_t read = records.size();
  const std::vector<Record> out = make(std::move(records));
  if (auto st = lock->replace(out); !st) fail(st);
  return read;
}

void best(const LogArgs& a) {
  std::size_t chosen = 0;
  const std::size_t read = rewrite_output(a, "best", true, [&](std::vector<Record> records) {
    auto kept = tunekit::pick_best(records);
    chosen = kept.size();
    return kept;
  });
  fmt::print("{}: {} best records from {} records\n", a.out, chosen, read);
}

void merge(const LogArgs& a) {
  std::size_t written = 0;
  rewrite_output(a, "merge", false, [&](std::vector<Record> records) {
    std::vector<Record> out;
    std::unordered_set<std::string> seen;
    for (auto& r : records) {
      if (a.dedupe && !seen.insert(tunekit::encode_record(r)).second) continue;
      out.push_back(std::move(r));
    }
    written = out.size();
    return out;
  });
  fmt::print("{}: {} records from {} files\n", a.out, written, a.inputs.size());
}

}  // namespace

void register_log_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("log", "Tuning logs (AutoTVM JSON lines): best, merge, show");
  cmd->require_subcommand(1);

  auto sa = std::make_shared<LogArgs>();
  auto* show_cmd = cmd->add_subcommand("show", "Print the records of tuning logs as a table");
  show_cmd->add_option("logs", sa->inputs, "Log files ('-' = stdin)")->required();
  show_cmd
      ->add_option("--top", sa->top, "Only the N best records (by mean cost; N >= 1; default all)")
      ->check(tunekit::cli::positive_integer());
  show_cmd->add_option("--workload", sa->workload,
                       "Only records whose task or workload contains this text");
  show_cmd->add_flag("!--no-errors", sa->errors, "Hide failed records");
  show_cmd->add_option("--width", sa->width, "Width of the config column (>= 1; default 60)")
      ->check(tunekit::cli::positive_integer());
  show_cmd->add_flag("--strict", sa->strict,
                     "Fail on the first malformed line instead of skipping it");
  show_cmd->callback([sa] { show(*sa); });

  const char* in_place_help =
      "Allow -o to be one of the inputs: it is read and replaced under its lock";
  auto ba = std::make_shared<LogArgs>();
  auto* best_cmd = cmd->add_subcommand(
      "best", "Keep the best record per workload and target model/key (pick_best)");
  best_cmd->add_option("logs", ba->inputs, "Log files ('-' = stdin)")->required();
  best_cmd
      ->add_option("--out,-o", ba->out,
                   "Output log (an existing one is merged first, under its lock)")
      ->required();
  best_cmd->add_flag("--in-place", ba->in_place, in_place_help);
  best_cmd->add_flag("--strict", ba->strict,
                     "Fail on the first malformed line instead of skipping it");
  best_cmd->callback([ba] { best(*ba); });

  auto ma = std::make_shared<LogArgs>();
  auto* merge_cmd =
      cmd->add_subcommand("merge", "Concatenate logs into one (skipping malformed and v0.1 lines)");
  merge_cmd->add_option("logs", ma->inputs, "Log files ('-' = stdin)")->required();
  merge_cmd->add_option("--out,-o", ma->out, "Output log (replaced atomically, under its lock)")
      ->required();
  merge_cmd->add_flag("--in-place", ma->in_place, in_place_help);
  merge_cmd->add_flag("--dedupe", ma->dedupe, "Drop records identical to an earlier one");
  merge_cmd->add_flag("--strict", ma->strict,
                      "Fail on the first malformed line instead of skipping it");
  merge_cmd->callback([ma] { merge(*ma); });
}
