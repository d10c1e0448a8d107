// `tunekit results show FILE` prints a results file as a table (and whether its validators match
// this machine); `tunekit candidates` lists the GEMM candidates and the libraries they run.
#include <algorithm>
#include <cstdio>

#include "commands.hpp"
#include "table.hpp"
#include "tunekit/core/hardware.hpp"
#include "tunekit/ops/gemm.hpp"
#include "tunekit/ops/gemm_plan.hpp"
#include "tunekit/ops/native_gemm.hpp"
#include "tunekit/ops/threading.hpp"
#include "tuning_setup.hpp"

namespace tunekit::cli {
namespace {

void show(const std::string& path, int threads) {
  auto content = read_results_file(path);
  if (threads > 0) tuning_context().set_threads(threads);
  tuning_context().set_threads(ops::set_num_threads(tuning_context().threads()));
  if (!content) {
    const std::string why = content.status().message();
    const bool untuned = why.find(kUntunedLineNote) != std::string::npos;
    throw CommandFailure{
        kExitFailure, why + (untuned ? "; tune its problems with 'tunekit tune-file " + path + "'"
                                     : std::string())};
  }
  prepare_gemm_context(tuning_context());  // this machine's threads and validators
  std::printf("%s: %zu validator(s), %zu result(s)\n", path.c_str(), content->validators.size(),
              content->results.size());
  Status v = tuning_context().validators().validate(content->validators, path);
  if (v.is_ok()) {
    std::printf("validators: match this machine with %d thread(s)\n\n", tuning_context().threads());
  } else {
    // Only the first line of the loader's message: its advice is about tuning into the file.
    std::string first = v.message().substr(0, v.message().find(" (the file was written under"));
    std::printf(
        "validators: do not match this machine with %d thread(s) (--threads sets the count "
        "to compare with): %s\n\n",
        tuning_context().threads(), first.c_str());
  }
  Table table({"op", "params", "solution", "ms", "GFLOP/s"}, {false, false, false, true, true});
  std::vector<std::string> unknown;  // "<solution>: <why>", once each
  for (const auto& r : content->results) {
    auto p = ops::GemmParams::from_signature(r.op_signature, r.params_signature);
    const std::string rate = p ? format_number(gflops(p->flops(), r.time_ms)) : "-";
    const Status known = gemm_op().solution_status(r.solution, p ? &*p : nullptr);
    // Parse errors already start with the quoted name; other reasons get it in front.
    const bool named = known.message().find(r.solution) != std::string::npos;
    const std::string why =
        r.params_signature + ": " + (named ? known.message() : r.solution + ": " + known.message());
    if (!known.is_ok() && std::find(unknown.begin(), unknown.end(), why) == unknown.end()) {
      unknown.push_back(why);
    }
    table.add_row({r.op_signature, r.params_signature,
                   known.is_ok() ? r.solution : r.solution + " (unknown here: Default runs)",
                   format_number(r.time_ms), rate});
  }
  std::fputs(table.render().c_str(), stdout);
  for (const auto& u : unknown) std::printf("unknown solution on %s\n", u.c_str());
  for (const auto& d : content->duplicates) std::printf("note: %s\n", d.c_str());
  for (const auto& w : content->warnings) std::printf("note: %s\n", w.c_str());
}

// The CPU the list is planned for and the core the linked OpenBLAS (Default) runs.
void print_cpu_facts() {
  const hw::CpuInfo& c = hw::cpu();
  const std::string level(hw::x86_level_name(c.x86_level()));
  const std::string from = c.source == "/proc/cpuinfo" ? "" : " (from " + c.source + ")";
  std::printf("CPU: %s, %s, %s%s\n", c.describe().c_str(), level.c_str(), c.isa.c_str(),
              from.c_str());
  std::printf("Default's OpenBLAS core: %s\n", ops::openblas_core_name().c_str());
  const std::string amx = ops::native_amx_refusal();
  std::printf("native_f32 on AMX tiles (32x32, bf16): %s\n\n",
              amx.empty() ? "offered" : ("not offered: " + amx).c_str());
}

void list_candidates() {
  print_cpu_facts();
  auto list = ops::make_gemm_candidates();
  Table table({"#", "candidate", "library", "runs", "loaded from"},
              {true, false, false, false, false});
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto* g = dynamic_cast<ops::GemmCandidate*>(list[i].get());
    std::string runs = "-", file = "-";
    if (g != nullptr) {
      auto b = g->binding();
      if (b) {
        runs = b->symbol + (b->detail.empty() ? "" : " (" + b->detail + ")");
        file = b->file +
               (b->namespace_id != 0 ? " [namespace " + std::to_string(b->namespace_id) + "]" : "");
      } else {
        runs = b.status().to_string();
      }
    }
    table.add_row(
        {std::to_string(i), list[i]->name(), std::string(list[i]->library()), runs, file});
  }
  std::fputs(table.render().c_str(), stdout);
  const ops::GemmPlan plan = ops::plan_gemm_candidates(hw::cpu(), ops::this_build());
  if (!plan.absent.empty()) std::printf("\nNot offered here:\n");
  for (const ops::AbsentGemmCandidate& a : plan.absent) {
    std::printf("  %s: %s\n", a.name.c_str(), a.reason.c_str());
  }
}

}  // namespace
}  // namespace tunekit::cli

void register_results_commands(CLI::App& app) {
  using namespace tunekit::cli;
  CLI::App* results = app.add_subcommand("results", "inspect results files");
  results->require_subcommand(1);
  auto path = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  CLI::App* s = results->add_subcommand("show", "print a results file as a table");
  s->add_option("file", *path, "results CSV")->required()->check(CLI::ExistingFile);
  s->add_option("--threads", *threads,
                "thread count to validate against (default: TUNEKIT_THREADS or all cores)");
  s->callback([path, threads] { show(*path, *threads); });
  CLI::App* c = app.add_subcommand("candidates", "list the GEMM candidates of this machine");
  c->callback([] { list_candidates(); });
}
