// Sections of the report's data, one builder per file (problems, searches, comparisons,
// environments), joined by report.cpp.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tunekit/core/status.hpp"
#include "tunekit/records/tuning_db.hpp"

namespace tunekit::report::detail {

/// Per environment and op: every tuned problem with its winner, times, speed-ups and every
/// candidate's time (problem_section.cpp).
Expected<nlohmann::json> problem_sections(const TuningDb& db, const std::string& source);

/// Per (format, target, task, workload): the search's convergence, time distribution, knob
/// importance, two-knob view and failures (search_section.cpp).
Expected<nlohmann::json> search_sections(const TuningDb& db, const std::string& source);

/// `tunekit compare` runs and PyTorch benchmark runs stored in the database
/// (comparison_section.cpp).
Expected<nlohmann::json> comparison_sections(const TuningDb& db, const std::string& source);

/// Every environment: id, CPU model, threads, tunekit version, library versions.
Expected<nlohmann::json> environment_sections(const TuningDb& db, const std::string& source);

/// NaN and infinities as JSON null (the page's script skips them).
nlohmann::json number_or_null(double value);

}  // namespace tunekit::report::detail
