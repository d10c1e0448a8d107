// Applies the tuning flags to the context and libraries and builds the (filtered) GEMM op.
// See tools/cli/tuning_setup.hpp.
#include "tuning_setup.hpp"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "commands.hpp"
#include "tunekit/core/env.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/core/log.hpp"
#include "tunekit/ops/threading.hpp"

namespace tunekit::cli {

void add_tune_flags(CLI::App* cmd, TuneFlags& flags) {
  cmd->add_option("--results", flags.results,
                  "results file to read and append to; wins over TUNEKIT_FILENAME (default: that "
                  "variable with the device ordinal inserted, else tunekit_results0.csv)");
  cmd->add_option("--threads", flags.threads,
                  "threads for every library (0 or unset: all usable cores)")
      ->check(tunekit::cli::non_negative_integer());
  cmd->add_option("--max-tuning-duration-ms", flags.max_tuning_duration_ms,
                  "tuning time budget per candidate in ms (default 30; 0: no limit)")
      ->check(tunekit::cli::non_negative_integer());
  cmd->add_option("--max-tuning-iterations", flags.max_tuning_iterations,
                  "timed calls per candidate at most (default 100; 0: no limit)")
      ->check(tunekit::cli::non_negative_integer());
  cmd->add_option("--candidates", flags.candidates,
                  "comma-separated name globs of candidates to tune, e.g. 'blis*,onednn*' "
                  "(Default is always timed as the reference)");
  cmd->add_option("--verbose", flags.verbose, "log level 0-3")->check(CLI::Range(0, 3));
}

static bool matches_any(const std::string& name, const std::string& globs) {
  std::istringstream ss(globs);
  std::string g;
  while (std::getline(ss, g, ',')) {
    if (!g.empty() && ::fnmatch(g.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

namespace {

/// The settings typed on the command line: each wins over its TUNEKIT_* variable (which
/// otherwise wins over the API, as upstream), with a note at verbose >= 1 when one is set. A
/// worker's results file is its own (the ordinal inserted into the base name).
PinnedSettings flag_settings(const TuneFlags& flags, const WorkerSetup* worker) {
  PinnedSettings pinned;
  if (flags.threads > 0) pinned.threads = flags.threads;
  if (flags.max_tuning_duration_ms >= 0)
    pinned.max_tuning_duration_ms = flags.max_tuning_duration_ms;
  if (flags.max_tuning_iterations >= 0) pinned.max_tuning_iterations = flags.max_tuning_iterations;
  if (flags.verbose >= 0) pinned.verbose = flags.verbose;
  if (worker != nullptr) {
    pinned.filename = insert_device_ordinal(worker->base_results, worker->rank);
  } else if (!flags.results.empty()) {
    pinned.filename = flags.results;
  }
  const std::pair<bool, const char*> given[] = {
      {!flags.results.empty(), "TUNEKIT_FILENAME"},
      {flags.threads > 0, "TUNEKIT_THREADS"},
      {flags.max_tuning_duration_ms >= 0, "TUNEKIT_MAX_TUNING_DURATION_MS"},
      {flags.max_tuning_iterations >= 0, "TUNEKIT_MAX_TUNING_ITERATIONS"},
      {flags.verbose >= 0, "TUNEKIT_VERBOSE"},
  };
  for (const auto& [is_given, name] : given) {
    if (is_given && env::get_string(name)) {
      log::info(1, "{} is ignored: the command-line flag wins", name);
    }
  }
  return pinned;
}

/// The thread count for the libraries: --threads, else a worker's share of the host's cores
/// (unless TUNEKIT_THREADS says otherwise), else the context's; applied to every library and
/// stored back as applied.
void apply_threads(TuningContext& ctx, const TuneFlags& flags, const WorkerSetup* worker) {
  if (flags.threads <= 0 && worker != nullptr && !env::get_string("TUNEKIT_THREADS")) {
    // Workers on one host share its cores (never oversubscribed; a worker bound to a core by
    // mpirun sees one usable core and keeps it).
    ctx.set_threads(std::max(1, hw::cpu().usable_cores / std::max(1, worker->workers_on_host)));
  }
  const int applied = ops::set_num_threads(ctx.threads());
  ctx.set_threads(applied);
  if (flags.threads > 0) {
    PinnedSettings pinned;
    pinned.threads = applied;
    ctx.pin(pinned);
  }
}

std::unique_ptr<GemmTunableOp> setup(const TuneFlags& flags, const WorkerSetup* worker) {
  TuningContext& ctx = tuning_context();
  ctx.pin(flag_settings(flags, worker));
  Status env = ctx.environment_status();
  if (!env.is_ok()) throw CommandFailure{kExitFailure, env.message()};
  // Results are not written while untuned problems are recorded (docs/tunable.md): tuning here
  // would lose every winner.
  if (ctx.is_record_untuned_enabled()) {
    throw CommandFailure{kExitFailure,
                         "TUNEKIT_RECORD_UNTUNED is on: no tuned result would be saved while "
                         "untuned problems are recorded; unset it to tune"};
  }
  apply_threads(ctx, flags, worker);
  if (worker != nullptr) ctx.set_device_ordinal(worker->rank);
  ctx.enable(true);
  ctx.enable_tuning(true);

  auto all = ops::make_gemm_candidates();
  // Every library's version is a validator before the results file and the databases are read,
  // also of libraries --candidates leaves out (the environment is the machine's, not the run's).
  register_gemm_validators(ctx, all);
  ctx.hooks().set_settle_hook([] { (void)ops::settle_threads(); });
  CandidateList<ops::GemmParams> chosen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (i == 0 || flags.candidates.empty() || matches_any(all[i]->name(), flags.candidates)) {
      chosen.push_back(std::move(all[i]));
    }
  }
  if (!flags.candidates.empty() && chosen.size() == 1) {
    throw CommandFailure{kExitFailure, "--candidates '" + flags.candidates +
                                           "' matches no candidate (see 'tunekit candidates')"};
  }
  auto op = std::make_unique<GemmTunableOp>(std::move(chosen));
  const std::string file = ctx.filename();
  Status read = ctx.read_file(file);
  if (!read.is_ok() && read.code() != StatusCode::kNotFound) {
    // A file that is no results file (an untuned file, a hand-made one): say how to go on here.
    const bool not_results = read.code() == StatusCode::kParseError ||
                             read.message().find("has no validator header") != std::string::npos;
    throw CommandFailure{
        kExitFailure,
        read.message() + (not_results ? "; choose another results file (--results)" : "")};
  }
  if (worker != nullptr && !worker->also_read.empty()) {
    Status also = ctx.read_file(worker->also_read);
    if (!also.is_ok() && also.code() != StatusCode::kNotFound) log::warn(also.message());
  }
  return op;
}

}  // namespace

std::unique_ptr<GemmTunableOp> setup_tuning(const TuneFlags& flags) {
  return setup(flags, nullptr);
}

std::unique_ptr<GemmTunableOp> setup_worker_tuning(const TuneFlags& flags, const WorkerSetup& w) {
  return setup(flags, &w);
}

namespace {

/// `path` with its symbolic links followed as far as they go (a dangling link ends at the
/// missing target); at most 40 links, as the kernel.
std::filesystem::path follow_links(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  std::error_code ec;
  for (int hops = 0; hops < 40 && fs::is_symlink(p, ec); ++hops) {
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  return p;
}

}  // namespace

void check_results_writable(const std::string& path) {
  namespace fs = std::filesystem;
  const fs::path target = follow_links(path);
  const std::string shown =
      "results file '" + path + "'" +
      (target != fs::path(path) ? " (a link to '" + target.string() + "')" : std::string());
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    throw CommandFailure{kExitFailure, shown + " is a directory"};
  }
  if (::stat(target.c_str(), &st) == 0) {
    // An existing file must be a regular file this process may append to.
    auto file = files::open_regular(target.string(), O_WRONLY | O_APPEND, "results file");
    if (!file) throw CommandFailure{kExitFailure, file.status().message()};
    return;
  }
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw CommandFailure{kExitFailure, shown + ": folder '" + dir.string() + "' does not exist"};
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    throw CommandFailure{kExitFailure, shown + ": folder '" + dir.string() + "' is not writable"};
  }
}

std::string results_base_name(const TuneFlags& flags) {
  if (!flags.results.empty()) return flags.results;
  if (auto env_name = env::get_string("TUNEKIT_FILENAME")) return *env_name;
  return std::string(kDefaultResultsFilename);
}

double gflops(double flops, double ms) { return ms > 0 ? flops / (ms * 1e6) : 0.0; }

}  // namespace tunekit::cli
