// The kernel worker's loop (the tunekit-kernel-worker program): holds the prepared session and
// runs each trial, in a forked child for fork-safe backends, reporting results as JSON lines.
#pragma once

namespace tunekit::measure {

/// Serves the runner's messages read from `in_fd` and answers on `out_fd` until end of input.
/// Messages (one JSON object a line):
///   {"op":"init","language","entry","problem","timing","verify","fork":bool,"reference":{
///    "artifact","entry","params"}?} -> {"ok":true,"fork":bool} | {"ok":false,"error":text}
///   ("fork" asks for a forked child per trial, default true; the reply says whether trials do
///   fork, which only fork-safe backends (C/C++) can)
///   {"op":"trial","artifact","params"} -> {"error_no","error","costs","captured"}
/// After every trial, and before returning, every child of the worker is killed and reaped
/// (end_children): with the worker a child subreaper (split_off_keeper), nothing a kernel
/// started outlives its trial.
/// Returns the process exit status (0 at end of input, 2 on a protocol error).
int run_kernel_worker(int in_fd, int out_fd);

}  // namespace tunekit::measure
