// tunekit-kernel-worker: the process an isolated kernel runner measures configurations in.
// Messages arrive on standard input and answers leave on standard output (JSON lines).
#include <unistd.h>

#include "measure/kernel_worker.hpp"

int main() {
  // Kernels may print: what they write to standard output goes to standard error instead, so
  // that only the worker's answers reach the runner.
  const int answers = ::dup(STDOUT_FILENO);
  if (answers < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return 2;
  return tunekit::measure::run_kernel_worker(STDIN_FILENO, answers);
}
