// tunekit-kernel-worker: the process an isolated kernel runner measures configurations in, below
// a keeper. Messages arrive on standard input and answers leave on standard output (JSON lines).
#include <unistd.h>

#include "measure/kernel_worker.hpp"
#include "measure/worker_keeper.hpp"

int main() {
  // The runner spawned the keeper; the worker goes on below it (src/measure/worker_keeper.hpp).
  tunekit::measure::split_off_keeper();
  // Kernels may print: what they write to standard output goes to standard error instead, so
  // that only the worker's answers reach the runner.
  const int answers = ::dup(STDOUT_FILENO);
  if (answers < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
  return tunekit::measure::run_kernel_worker(STDIN_FILENO, answers);
}
