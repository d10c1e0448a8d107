// `tunekit report`: one self-contained HTML page of what the tuning database (or results files
// and tuning logs) holds: tuned problems, searches, comparisons, machines (docs/report.md).
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "tunekit/records/db_layers.hpp"
#include "tunekit/report/report.hpp"

namespace tunekit::cli {
namespace {

struct ReportArgs {
  report::ReportSources sources;
  std::string output = "tunekit_report.html";
};

void run_report(ReportArgs args) {
  report::ReportSources& s = args.sources;
  if (s.databases.empty() && s.results_files.empty() && s.logs.empty()) {
    const std::string user = default_user_db_path();
    if (user.empty()) {
      throw CommandFailure{kExitFailure,
                           "no source: TUNEKIT_DB is off; name --db, --results or --log"};
    }
    s.databases.push_back(user);
  }
  const Status distinct = report::check_output_is_not_an_input(s, args.output);
  if (!distinct.is_ok()) throw CommandFailure{kExitFailure, distinct.message()};
  auto data = report::collect_report(s);
  if (!data) throw CommandFailure{kExitFailure, data.status().message()};
  const Status written = report::write_report(*data, args.output);
  if (!written.is_ok()) throw CommandFailure{kExitFailure, written.message()};
  std::printf("report: %s (%zu op group(s), %zu search(es), %zu comparison run(s))\n",
              args.output.c_str(), (*data)["ops"].size(), (*data)["searches"].size(),
              (*data)["comparisons"].size());
}

}  // namespace
}  // namespace tunekit::cli

void register_report_command(CLI::App& app) {
  using namespace tunekit::cli;
  auto args = std::make_shared<ReportArgs>();
  CLI::App* c = app.add_subcommand(
      "report", "write one self-contained HTML page of tuned problems, searches and comparisons");
  c->add_option("-o,--output", args->output,
                "the HTML file to write (default tunekit_report.html)");
  c->add_option("--db", args->sources.databases,
                "tuning database(s) to read (default: the user database when no source is named)")
      ->check(CLI::ExistingFile);
  c->add_option("--results", args->sources.results_files, "TunableOp results CSV file(s)")
      ->check(CLI::ExistingFile);
  c->add_option("--log", args->sources.logs, "AutoTVM JSON-lines tuning log(s)")
      ->check(CLI::ExistingFile);
  c->add_option("--title", args->sources.title, "the page's title");
  c->callback([args] { run_report(*args); });
}
