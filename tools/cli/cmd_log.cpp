// `tunekit log best|merge|show`: tuning log utilities (AutoTVM JSON-lines records).
// pick-best, merge logs, print a table.
#include "commands.hpp"

void register_log_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("log", "Tuning log utilities: best, merge, show");
  cmd->callback([] {
    throw tunekit::cli::CommandFailure{tunekit::cli::kExitFailure, "log: not available in this build"};
  });
}
