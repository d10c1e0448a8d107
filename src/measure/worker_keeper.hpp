// The keeper of a kernel worker: the process the runner spawns forks the worker and stays
// above it, so that the worker's parent is not the tuning process and whatever the kernels
// leave behind ends with the worker.
#pragma once

namespace tunekit::measure {

/// Splits the worker program in two. The child returns from this call and goes on as the
/// worker: a child subreaper with every signal unblocked, killed (SIGKILL) when the keeper
/// ends. The parent, the keeper, never returns: a child subreaper too, deaf to every signal but
/// SIGTERM from its own parent (the runner: "end the worker now", answered by SIGKILL to the
/// worker) and SIGKILL, it holds no descriptor of the runner's socket; once the worker has
/// ended it kills and reaps every process left below it (end_children) and exits as the
/// worker did (the same exit status, or the same signal, without a core file).
/// When the fork fails the call returns in the only process, which then works unkept.
void split_off_keeper();

}  // namespace tunekit::measure
