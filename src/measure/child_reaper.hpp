// Ending every process below this one: a child subreaper (orphans below it become its
// children) kills and reaps its children until none is left, so nothing a kernel started
// outlives its trial, whatever process group or session it moved to.
#pragma once

#include <cstddef>

#include "tunekit/core/status.hpp"

namespace tunekit::measure {

/// Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER, no privileges needed):
/// a process below it whose parent ends becomes its child instead of init's.
/// Errors: kRuntimeError with the system's reason.
Status become_subreaper();

/// True when this process has a child, running or ended and not yet reaped.
bool has_children() noexcept;

/// Kills (SIGKILL) and reaps every child of this process, and the children the orphans of
/// those become meanwhile (this process being a subreaper), until it has none; returns how
/// many it reaped. One system call when there is no child. Children are found in /proc.
/// Gives up (and returns) after about 10 s of children that do not end.
std::size_t end_children() noexcept;

}  // namespace tunekit::measure
