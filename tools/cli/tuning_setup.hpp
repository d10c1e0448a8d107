// Shared setup of the tuning commands (tune-file, gemm, compare): settings from flags, the
// results file, the thread count and the candidate filter.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

#include "tunekit/ops/gemm.hpp"

namespace tunekit::cli {

/// Flags shared by the tuning commands.
struct TuneFlags {
  std::string results;                    ///< --results (default: the context's file name)
  int threads = 0;                        ///< --threads (0: all usable cores)
  long long max_tuning_duration_ms = -1;  ///< -1: keep the context's value
  long long max_tuning_iterations = -1;
  std::string candidates;  ///< --candidates glob(s), comma-separated; empty: all
  std::string dtype;       ///< --dtype override
  int verbose = -1;
};

/// Adds --results, --threads, --max-tuning-duration-ms, --max-tuning-iterations, --candidates,
/// --verbose to `cmd`.
void add_tune_flags(CLI::App* cmd, TuneFlags& flags);

/// Applies the flags to tuning_context() and the libraries, loads the results file (refusing a
/// file written under another environment) and returns the tunable op to tune with: all GEMM
/// candidates, or those whose names match --candidates (Default is always kept, as the
/// reference). Throws CommandFailure with a one-line reason on bad input.
std::unique_ptr<GemmTunableOp> setup_tuning(const TuneFlags& flags);

/// How one worker of a distributed or multi-process tuning sets itself up.
struct WorkerSetup {
  int rank = 0;              ///< device ordinal: the worker's results file gets it inserted
  int workers_on_host = 1;   ///< workers sharing this host's cores
  std::string base_results;  ///< results file name before the ordinal is inserted
  std::string also_read;     ///< a further results file to load (the gathered _full0), if any
};

/// setup_tuning() for a worker: its results file is insert_device_ordinal(base, rank); its
/// thread count, unless --threads or TUNEKIT_THREADS says otherwise, is the cores in its
/// affinity mask divided by the workers on the host, at least 1 (so workers never oversubscribe
/// the host; mpirun's default binding to one core gives 1); `also_read` is loaded when it exists
/// and matches this environment (else a warning). Throws CommandFailure as setup_tuning().
std::unique_ptr<GemmTunableOp> setup_worker_tuning(const TuneFlags& flags, const WorkerSetup& w);

/// Throws CommandFailure (one line naming the file) unless results can be appended to `path`:
/// an existing file must be a regular file open for appending (not a directory, a device such as
/// /dev/full, or a FIFO); a new one needs an existing, writable folder. Symbolic links are
/// followed, so a dangling link into a missing folder is refused. Checked before any tuning,
/// so no tuned result is lost to a file that cannot take it.
void check_results_writable(const std::string& path);

/// The results file name before any ordinal: --results, else TUNEKIT_FILENAME, else
/// "tunekit_results.csv".
std::string results_base_name(const TuneFlags& flags);

/// GFLOP/s of `flops` operations taking `ms` milliseconds.
double gflops(double flops, double ms);

}  // namespace tunekit::cli
