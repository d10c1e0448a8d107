// Finding and reading Chart.js for the HTML report (include/tunekit/report/chart_library.hpp).
#include "tunekit/report/chart_library.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace tunekit::report {

std::string chart_library_path() {
  if (const char* env = std::getenv("TUNEKIT_CHARTJS"); env != nullptr && *env != '\0') return env;
#ifdef TUNEKIT_CHARTJS_PATH
  if (std::ifstream(TUNEKIT_CHARTJS_PATH).good()) return TUNEKIT_CHARTJS_PATH;
#endif
  return "/usr/share/javascript/chart.js/chart.min.js";
}

Expected<std::string> chart_library_source() {
  const std::string path = chart_library_path();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  std::string js = text.str();
  if (!in || js.find("Chart") == std::string::npos) {
    return Status(StatusCode::kNotFound,
                  fmt::format("the report needs Chart.js: install Debian's libjs-chart.js "
                              "(apt-get install libjs-chart.js) or set TUNEKIT_CHARTJS to "
                              "chart.min.js (looked for '{}')",
                              path));
  }
  for (std::size_t at = js.find("</script"); at != std::string::npos;
       at = js.find("</script", at + 2)) {
    js.replace(at, 2, "<\\/");
  }
  return js;
}

}  // namespace tunekit::report
