// The tunekit command-line program: one CLI11 application with a sub-command per cmd_*.cpp file.
// Errors end with a one-line reason on stderr and a non-zero exit status.
#include <cstdio>
#include <exception>

#include "commands.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/core/version.hpp"

int main(int argc, char** argv) {
  CLI::App app{"tunekit: measure candidate implementations, keep the fastest, dispatch to it"};
  app.set_version_flag("--version", tunekit::version());
  app.require_subcommand(1);
  register_tune_commands(app);
  register_results_commands(app);
  register_compare_command(app);
  register_simulate_command(app);
  register_log_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tunekit::cli::CommandFailure& f) {
    std::fprintf(stderr, "tunekit: %s\n", f.message.c_str());
    return f.code;
  } catch (const tunekit::Error& e) {
    std::fprintf(stderr, "tunekit: %s\n", e.status().to_string().c_str());
    return tunekit::cli::kExitFailure;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tunekit: %s\n", e.what());
    return tunekit::cli::kExitFailure;
  }
  return 0;
}
