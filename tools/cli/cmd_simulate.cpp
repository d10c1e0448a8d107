// `tunekit simulate`: replays search strategies on brute-forced tuning data.
// Prints fraction of optimum and the methodology score per strategy.
#include "commands.hpp"

void register_simulate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("simulate", "Replay search strategies on brute-forced tuning data");
  cmd->callback([] {
    throw tunekit::cli::CommandFailure{tunekit::cli::kExitFailure, "simulate: not available in this build"};
  });
}
