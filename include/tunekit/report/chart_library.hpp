// The plotting library bundled into the HTML report: Chart.js, read from where Debian's
// libjs-chart.js installs it (or TUNEKIT_CHARTJS), so the page needs no network.
#pragma once

#include <string>

#include "tunekit/core/status.hpp"

namespace tunekit::report {

/// The path of Chart.js's minified UMD build: TUNEKIT_CHARTJS when set, else the file CMake
/// found at configure time, else /usr/share/javascript/chart.js/chart.min.js (libjs-chart.js).
std::string chart_library_path();

/// The text of Chart.js, ready to be inlined in a <script> element ("</script" is escaped).
/// Errors: kNotFound with one line naming what to install: "the report needs Chart.js: install
/// Debian's libjs-chart.js (apt-get install libjs-chart.js) or set TUNEKIT_CHARTJS to
/// chart.min.js (looked for '<path>')".
Expected<std::string> chart_library_source();

}  // namespace tunekit::report
