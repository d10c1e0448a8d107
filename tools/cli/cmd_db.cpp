// `tunekit db show|import|export|merge|prune`: the tuning database (docs/database.md).
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <map>

#include "commands.hpp"
#include "db_common.hpp"
#include "table.hpp"
#include "tunekit/records/db_trials.hpp"
#include "tunekit/tunable/results_db.hpp"

namespace tunekit::cli {
namespace {

struct DbArgs {
  std::string db;
  bool system = false;
  std::vector<std::string> files;
  std::string format = "auto";
  std::string output;
  long long environment = -1;
  DbResultQuery query;
};

void add_db_option(CLI::App* cmd, DbArgs& a) {
  cmd->add_option("--db", a.db,
                  "database file (default: TUNEKIT_DB, else $XDG_DATA_HOME/tunekit/tunekit.db)");
}

void run_import(DbArgs& a) {
  auto db = open_database(a.db, false, TuningDb::Access::kReadWrite);
  for (const std::string& file : a.files) {
    const std::string format = a.format == "auto" ? detect_format(file) : a.format;
    Expected<std::size_t> added =
        Status(StatusCode::kInvalidArgument,
               "--format: '" + format + "' is not tunableop, autotvm or kernel_tuner");
    if (format == "tunableop") added = import_results_file(*db, file);
    if (format == "autotvm") added = import_autotvm_log(*db, file);
    if (format == "kernel_tuner") added = import_kernel_tuner_cache(*db, file);
    if (!added) throw CommandFailure{kExitFailure, added.status().message()};
    std::printf("%s (%s): %zu new %s\n", file.c_str(), format.c_str(), *added,
                format == "tunableop" ? "result(s)" : "trial(s)");
  }
  std::printf("database: %s\n", db->path().c_str());
}

void run_export(DbArgs& a) {
  auto db = open_database(a.db, a.system, TuningDb::Access::kReadOnly);
  Expected<std::string> text = Status(StatusCode::kInvalidArgument,
                                      "--format: '" + a.format + "' is not tunableop or autotvm");
  if (a.format == "autotvm") text = export_autotvm_log(*db);
  if (a.format == "tunableop")
    text = export_results_file(*db, choose_environment(*db, a.environment));
  if (!text) throw CommandFailure{kExitFailure, text.status().message()};
  write_output(a.output, *text);
}

void run_merge(DbArgs& a) {
  auto db = open_database(a.db, false, TuningDb::Access::kReadWrite);
  for (const std::string& file : a.files) {
    auto other = TuningDb::open(file, TuningDb::Access::kReadOnly);
    if (!other) throw CommandFailure{kExitFailure, other.status().message()};
    auto added = db->merge_from(**other);
    if (!added) throw CommandFailure{kExitFailure, added.status().message()};
    std::printf("%s: %zu new result(s), %zu new trial(s), %zu new comparison row(s)\n",
                file.c_str(), added->results, added->trials, added->comparisons);
  }
  std::printf("database: %s\n", db->path().c_str());
}

void run_prune(DbArgs& a) {
  auto db = open_database(a.db, false, TuningDb::Access::kReadWrite);
  auto removed = db->prune();
  if (!removed) throw CommandFailure{kExitFailure, removed.status().message()};
  std::printf(
      "%s: removed %zu result(s), %zu trial(s) and %zu comparison row(s); kept the best per "
      "problem and per workload, and each problem's latest comparison\n",
      db->path().c_str(), removed->results, removed->trials, removed->comparisons);
}

void run_show(DbArgs& a) {
  auto db = open_database(a.db, a.system, TuningDb::Access::kReadOnly);
  if (a.environment >= 0) a.query.environment = a.environment;
  print_results(*db, a.query);
  print_trials(*db);
}

}  // namespace
}  // namespace tunekit::cli

void register_db_command(CLI::App& app) {
  using namespace tunekit::cli;
  auto* db = app.add_subcommand("db", "the tuning database: show, import, export, merge, prune");
  db->require_subcommand(1);
  auto args = std::make_shared<DbArgs>();
  auto guarded = [](void (*fn)(DbArgs&), std::shared_ptr<DbArgs> a) { return [fn, a] { fn(*a); }; };

  auto* show = db->add_subcommand("show", "a table per op: winners, times and speed-ups");
  add_db_option(show, *args);
  show->add_flag("--system", args->system, "show the system database instead");
  show->add_option("--op", args->query.op_signature, "only this op signature");
  show->add_option("--problem", args->query.params_signature, "only this params signature");
  show->add_option("--machine", args->query.machine, "only hosts or CPU models containing this");
  show->add_option("--environment", args->environment, "only this environment id");
  show->callback(guarded(&run_show, args));

  auto* import = db->add_subcommand(
      "import", "import TunableOp CSV files, AutoTVM JSON-lines logs, Kernel Tuner caches");
  add_db_option(import, *args);
  import->add_option("files", args->files, "files to import")->required();
  import->add_option("--format", args->format, "auto (default), tunableop, autotvm, kernel_tuner");
  import->callback(guarded(&run_import, args));

  auto* exp = db->add_subcommand("export", "write a TunableOp results file or an AutoTVM log");
  add_db_option(exp, *args);
  exp->add_flag("--system", args->system, "export from the system database");
  exp->add_option("--format", args->format, "tunableop or autotvm")->required();
  exp->add_option("--environment", args->environment,
                  "environment id (tunableop; needed when the database holds several)");
  exp->add_option("-o,--output", args->output, "output file (default: standard output)");
  exp->callback(guarded(&run_export, args));

  auto* merge = db->add_subcommand("merge", "merge databases of other machines or ranks");
  add_db_option(merge, *args);
  merge->add_option("sources", args->files, "databases to merge in")->required();
  merge->callback(guarded(&run_merge, args));

  auto* prune = db->add_subcommand(
      "prune",
      "keep only the best entry per problem and workload, the latest comparison per problem");
  add_db_option(prune, *args);
  prune->callback(guarded(&run_prune, args));
}
