// libFuzzer target: the TunableOp results/untuned CSV readers. Any input must give content or one
// error naming file:line, never a crash; what parses must survive a write-and-read round trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "tunekit/tunable/results_file.hpp"

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tunekit;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = parse_results(text, "fuzz.csv");
  if (!parsed) {
    require(parsed.status().code() == StatusCode::kParseError);
    require(parsed.status().message().starts_with("fuzz.csv:"));
    return 0;
  }
  // Written back and read again, the same validators and results (times to 6 digits).
  std::string again = format_header(parsed->validators);
  for (const ResultLine& r : parsed->results) {
    require(is_complete_result_line(format_result_line(r)));
    again.append(format_result_line(r)).push_back('\n');
  }
  auto reparsed = parse_results(again, "again.csv");
  require(reparsed.has_value());
  require(reparsed->validators == parsed->validators);
  require(reparsed->results.size() == parsed->results.size());
  require(reparsed->warnings.empty());
  for (std::size_t i = 0; i < parsed->results.size(); ++i) {
    const ResultLine& a = parsed->results[i];
    const ResultLine& b = reparsed->results[i];
    require(a.op_signature == b.op_signature && a.params_signature == b.params_signature &&
            a.solution == b.solution && a.extra == b.extra);
  }
  // Wildcard matching of every params signature against every other never misbehaves, and a
  // signature matches itself unless it is a pattern.
  for (const ResultLine& p : parsed->results) {
    for (const ResultLine& s : parsed->results)
      (void)wildcard_match(p.params_signature, s.params_signature);
    if (!is_wildcard_signature(p.params_signature)) {
      require(wildcard_match(p.params_signature, p.params_signature));
    }
    (void)wildcard_specificity(p.params_signature);
  }
  return 0;
}
