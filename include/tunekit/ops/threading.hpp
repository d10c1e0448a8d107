// One thread count for every GEMM library (OpenBLAS, BLIS copies, oneDNN, Eigen), and a settle
// step that lets idle OpenMP workers of one runtime stop spinning before another is timed.
#pragma once

#include <chrono>

namespace tunekit::ops {

/// Sets the number of threads every GEMM library uses: openblas_set_num_threads and
/// omp_set_num_threads (OpenBLAS, oneDNN and Eigen share the process's libgomp),
/// Eigen::setNbThreads, and bli_thread_set_num_threads / openblas_set_num_threads inside every
/// library copy loaded into its own link-map namespace (BLIS sub-architectures, OpenBLAS core
/// types). Candidates re-apply the count on the calling thread before each call, so it holds
/// for threads created later too (libgomp's thread count is a per-thread setting).
/// `n` <= 0 selects the default, all usable cores (hw::cpu().usable_cores); more than the usable
/// cores is clamped to them (oversubscription makes Eigen and BLIS 2-100x slower,
/// measured on the Intel Xeon). Returns the count applied. Thread-safe.
int set_num_threads(int n);

/// The thread count the libraries run with (set_num_threads, default all usable cores).
int num_threads() noexcept;

/// Waits until no thread of the process burns CPU while the caller sleeps (idle OpenMP workers
/// of the last library spin for ~5-8 ms after each parallel region and slow the next library's
/// threads by up to 35x on 2 cores; see docs/candidates.md), polling CPU time in 0.5 ms slices
/// and stopping at the first slice with less than a quarter of a core busy, or after
/// `max_wait`. Returns the time waited. A candidate's prepare() calls it when the last GEMM ran
/// in another OpenMP runtime (another library copy); a tuner may also call it between
/// candidates.
std::chrono::microseconds settle_threads(
    std::chrono::milliseconds max_wait = std::chrono::milliseconds(20));

/// GOMP_SPINCOUNT given to the OpenMP runtime of each library copy loaded into its own
/// namespace, unless the process environment sets GOMP_SPINCOUNT or OMP_WAIT_POLICY (then those
/// are inherited). 10000 spins last about 0.5 ms here instead of libgomp's default ~5-8 ms, so a
/// BLIS pool stops competing with the next library quickly; back-to-back calls of the same
/// library (gaps of microseconds) still find their workers awake.
/// Source: measured on the project machine, docs/candidates.md, "Thread-pool interference".
inline constexpr long kNamespaceGompSpinCount = 10000;

}  // namespace tunekit::ops
