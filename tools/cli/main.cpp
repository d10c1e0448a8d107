// The tunekit command-line program: one CLI11 application with a sub-command per cmd_*.cpp file.
// Errors end with a one-line reason on stderr and a non-zero exit status.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <string>

#include "commands.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/status.hpp"
#include "tunekit/core/version.hpp"

namespace {

/// libgomp reads its spin policy once, when it loads, so the program restarts itself once with
/// GOMP_SPINCOUNT=10000 (idle workers spin ~0.5 ms instead of ~5-8 ms) unless the user chose a
/// policy. Other libraries' timings then do not pay for the last library's spinning workers
/// (docs/candidates.md, "Thread-pool interference").
void ensure_short_omp_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY") ||
      std::getenv("TUNEKIT_SPIN_SET")) {
    return;
  }
  ::setenv("GOMP_SPINCOUNT", "10000", 1);
  ::setenv("TUNEKIT_SPIN_SET", "1", 1);
  ::execv("/proc/self/exe", argv);  // returns only on failure: carry on with the default policy
}

/// The first word after a command group (the program, `results`, `log`, `space`) when it is no
/// option and names none of the group's sub-commands, as a one-line error listing them ("" when
/// every word names a command). CLI11 itself would take the word for an argument: `tunekit word`
/// would say "A subcommand is required" and `tunekit word --help` would print the program's help
/// and succeed.
std::string unknown_command_error(const CLI::App& app, int argc, char** argv) {
  const CLI::App* group = &app;
  std::string path = "";
  for (int i = 1; i < argc && argv[i][0] != '-'; ++i) {
    const std::function<bool(const CLI::App*)> every;  // empty: no filter
    const std::vector<const CLI::App*> subs = group->get_subcommands(every);
    if (subs.empty()) return {};  // a command: the rest are its arguments
    const std::string word = argv[i];
    std::string names;
    const CLI::App* next = nullptr;
    for (const CLI::App* sub : subs) {
      if (sub->check_name(word)) next = sub;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (next == nullptr) {
      return "unknown command '" + path + word + "' (commands" +
             (path.empty() ? "" : " of '" + path.substr(0, path.size() - 1) + "'") + ": " + names +
             "; see --help)";
    }
    path += word + " ";
    group = next;
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  ensure_short_omp_spin(argv);
  // Past a file size limit (ulimit -f) a write fails with EFBIG instead of killing the process,
  // so an append that does not fit is undone and reported like a full disk.
  std::signal(SIGXFSZ, SIG_IGN);
  // A test fixture that cannot be read is an error of its own, not a silent fallback.
  if (const tunekit::Status fixture = tunekit::hw::cpu_fixture_status(); !fixture.is_ok()) {
    std::fprintf(stderr, "tunekit: %s\n", fixture.message().c_str());
    return tunekit::cli::kExitFailure;
  }
  CLI::App app{"tunekit: measure candidate implementations, keep the fastest, dispatch to it"};
  app.set_version_flag("--version", tunekit::version());
  app.require_subcommand(1);
  register_tune_commands(app);
  register_results_commands(app);
  register_compare_command(app);
  register_simulate_command(app);
  register_log_command(app);
  register_space_command(app);
  register_tune_kernel_command(app);
  register_db_command(app);
  register_report_command(app);
  if (const std::string unknown = unknown_command_error(app, argc, argv); !unknown.empty()) {
    std::fprintf(stderr, "tunekit: %s\n", unknown.c_str());
    return tunekit::cli::kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, like every other error of the program.
    std::fprintf(stderr, "tunekit: %s (see --help)\n", e.what());
    return tunekit::cli::kExitUsage;
  } catch (const tunekit::cli::CommandFailure& f) {
    std::fflush(stdout);  // the reason is the last line, after everything printed before it
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
