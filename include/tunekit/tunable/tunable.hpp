// Umbrella header of the tunable layer: TuningContext, TunableOp, find_fastest, results files.
// Include this (or the individual headers) to define and dispatch tunable operators.
#pragma once

#include "tunekit/tunable/candidate.hpp"
#include "tunekit/tunable/context.hpp"
#include "tunekit/tunable/find_fastest.hpp"
#include "tunekit/tunable/params_traits.hpp"
#include "tunekit/tunable/report.hpp"
#include "tunekit/tunable/result_table.hpp"
#include "tunekit/tunable/results_file.hpp"
#include "tunekit/tunable/results_manager.hpp"
#include "tunekit/tunable/tolerance.hpp"
#include "tunekit/tunable/tunable_op.hpp"
#include "tunekit/tunable/untuned.hpp"
#include "tunekit/tunable/validators.hpp"
