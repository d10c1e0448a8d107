// The report's HTML page: styles, the data as JSON, Chart.js and the page's script, all inlined
// so that opening the file makes no request (include/tunekit/report/report.hpp).
#include <fmt/format.h>

#include "tunekit/report/chart_library.hpp"
#include "tunekit/report/report.hpp"

namespace tunekit::report {
namespace {

// src/report/page_script.js, made a string literal by src/CMakeLists.txt.
constexpr const char* kPageScript =
#include "tunekit_page_script.inc"
    ;

// Readable from 1280 px wide: one column of sections, charts two by two.
constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; background: #fafafa; color: #222; }
#app { max-width: 1240px; margin: 0 auto; padding: 16px 20px 40px; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 28px 0 6px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 4px; }
.meta { color: #666; margin-top: 0; }
.scroll { overflow-x: auto; max-height: 420px; overflow-y: auto; }
table { border-collapse: collapse; font-size: 12px; width: 100%; background: #fff; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: left; white-space: nowrap; }
td.wrap { white-space: normal; overflow-wrap: anywhere; min-width: 240px; }
th { background: #f0f0f0; position: sticky; top: 0; }
.grid { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 16px; }
.grid.wide { grid-template-columns: 1fr; }
figure.chart { margin: 12px 0 0; background: #fff; border: 1px solid #e4e4e4; padding: 8px; }
figcaption { font-weight: 600; font-size: 13px; margin-bottom: 4px; }
.canvas { position: relative; height: 340px; }
.canvas.tall { height: 440px; }
.nodata { color: #888; font-style: italic; margin: 24px 8px; }
)css";

/// The data as a JSON script element's text: every '<', '>' and '&' written as a \u escape, so
/// no name ("</script>", "<!--<script>") can end the element or hide the page's scripts. Outside
/// strings, JSON has none of the three.
std::string embedded_json(const nlohmann::json& data) {
  const std::string text = data.dump();
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string escape_html(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

}  // namespace

Expected<std::string> render_report_html(const nlohmann::json& data) {
  auto chart_js = chart_library_source();
  if (!chart_js) return chart_js.status();
  const std::string title = data.value("title", std::string("tunekit report"));
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      // Nothing may leave the page: every fetch, image, font and frame is refused.
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<div id=\"app\"></div>\n"
      "<script type=\"application/json\" id=\"tunekit-data\">{}</script>\n"
      "<script>/* Chart.js (MIT), from {} */\n{}</script>\n<script>\n{}</script>\n"
      "</body>\n</html>\n",
      escape_html(title), kStyle, embedded_json(data), chart_library_path(), *chart_js,
      kPageScript);
}

}  // namespace tunekit::report
