// Offline tuning over workers: reports and their wire form, patterns, shares, gathering.
// See include/tunekit/distributed/offline.hpp.
#include "tunekit/distributed/offline.hpp"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <utility>

#include "tunekit/core/env.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/tunable/context.hpp"

namespace tunekit::distributed {
namespace {

// --- wire form: records of tab-separated fields; '\\', '\t', '\n', '\r' escaped -------------

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        out.push_back(c);
    }
  }
  return out;
}

std::string unescape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out.push_back(text[i]);
      continue;
    }
    const char c = text[++i];
    out.push_back(c == 't' ? '\t' : c == 'n' ? '\n' : c == 'r' ? '\r' : c);
  }
  return out;
}

std::string number(double v) { return fmt::format("{:.17g}", v); }

void record(std::string& out, std::initializer_list<std::string> fields) {
  bool first = true;
  for (const std::string& f : fields) {
    if (!first) out.push_back('\t');
    out += escape(f);
    first = false;
  }
  out.push_back('\n');
}

std::vector<std::string> split_record(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  for (;;) {
    const std::size_t tab = line.find('\t', start);
    fields.push_back(
        unescape(line.substr(start, tab == std::string_view::npos ? line.npos : tab - start)));
    if (tab == std::string_view::npos) return fields;
    start = tab + 1;
  }
}

Status wire_error(std::size_t line_no, const std::string& what) {
  return Status(StatusCode::kParseError, fmt::format("worker report line {}: {}", line_no, what));
}

// Equal validator sets (order does not matter: upstream writes them in hash-map order).
bool same_validators(const std::vector<ValidatorEntry>& a, const std::vector<ValidatorEntry>& b) {
  return a.size() == b.size() && std::is_permutation(a.begin(), a.end(), b.begin());
}

bool by_key(const ResultLine& a, const ResultLine& b) {
  return std::tie(a.op_signature, a.params_signature) <
         std::tie(b.op_signature, b.params_signature);
}

}  // namespace

std::string encode(const WorkerReport& report) {
  std::string out;
  record(out, {"R", std::to_string(report.rank), report.host, std::to_string(report.threads)});
  record(out,
         {"S", std::to_string(static_cast<int>(report.status.code())), report.status.message()});
  for (const auto& [key, value] : report.validators) record(out, {"V", key, value});
  for (const ResultLine& r : report.results) {
    record(out, {"L", r.op_signature, r.params_signature, r.solution, number(r.time_ms), r.extra});
  }
  for (const ProblemOutcome& o : report.outcomes) {
    record(out,
           {"O", o.op_signature, o.params_signature, std::to_string(static_cast<int>(o.kind)),
            o.winner, number(o.time_ms), number(o.default_ms), o.runner_up, number(o.runner_up_ms),
            number(o.flops), o.note, std::to_string(o.rank), o.saved ? "1" : "0"});
  }
  record(out, {"E"});
  return out;
}

Expected<WorkerReport> decode_report(std::string_view text) {
  WorkerReport report;
  bool seen_header = false, seen_end = false;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::vector<std::string> f = split_record(line);
    const std::string& tag = f[0];
    auto need = [&](std::size_t n) { return f.size() == n; };
    if (tag == "R" && need(4)) {
      const auto rank = env::parse_int(f[1]);
      const auto threads = env::parse_int(f[3]);
      if (!rank || !threads) return wire_error(line_no, "bad rank record");
      report.rank = static_cast<int>(*rank);
      report.host = f[2];
      report.threads = static_cast<int>(*threads);
      seen_header = true;
    } else if (tag == "S" && need(3)) {
      const auto code = env::parse_int(f[1]);
      if (!code || *code < 0 || *code > static_cast<int>(StatusCode::kInternal)) {
        return wire_error(line_no, "bad status record");
      }
      report.status = *code == 0 ? Status::ok() : Status(static_cast<StatusCode>(*code), f[2]);
    } else if (tag == "V" && need(3)) {
      report.validators.emplace_back(f[1], f[2]);
    } else if (tag == "L" && need(6)) {
      const auto t = env::parse_double(f[4]);
      if (!t) return wire_error(line_no, "bad result time");
      report.results.push_back(ResultLine{f[1], f[2], f[3], *t, f[5]});
    } else if (tag == "O" && need(13)) {
      ProblemOutcome o;
      o.op_signature = f[1];
      o.params_signature = f[2];
      const auto kind = env::parse_int(f[3]);
      const auto t = env::parse_double(f[5]), d = env::parse_double(f[6]),
                 r = env::parse_double(f[8]), fl = env::parse_double(f[9]);
      const auto rank = env::parse_int(f[11]);
      if (!kind || *kind < 0 || *kind > 2 || !t || !d || !r || !fl || !rank) {
        return wire_error(line_no, "bad outcome record");
      }
      o.kind = static_cast<ProblemOutcome::Kind>(*kind);
      o.winner = f[4];
      o.time_ms = *t;
      o.default_ms = *d;
      o.runner_up = f[7];
      o.runner_up_ms = *r;
      o.flops = *fl;
      o.note = f[10];
      o.rank = static_cast<int>(*rank);
      o.saved = f[12] != "0";
      report.outcomes.push_back(std::move(o));
    } else if (tag == "E" && need(1)) {
      seen_end = true;
    } else {
      return wire_error(line_no, "unknown record '" + std::string(line.substr(0, 40)) + "'");
    }
  }
  if (!seen_header || !seen_end) {
    return Status(StatusCode::kParseError,
                  "worker report is incomplete (the worker stopped early)");
  }
  return report;
}

std::vector<WorkerReport> decode_job_reports(const std::vector<offline::JobOutput>& outputs) {
  std::vector<WorkerReport> reports;
  for (std::size_t job = 0; job < outputs.size(); ++job) {
    Expected<WorkerReport> decoded =
        outputs[job].status.is_ok() ? decode_report(outputs[job].data) : outputs[job].status;
    WorkerReport report = decoded ? std::move(*decoded) : WorkerReport{};
    if (!decoded) report.status = decoded.status();
    report.rank = static_cast<int>(job);
    reports.push_back(std::move(report));
  }
  return reports;
}

std::string encode_problems(const std::vector<ProblemRef>& problems) {
  std::string out;
  for (const ProblemRef& p : problems) out += p.op_signature + "," + p.params_signature + "\n";
  return out;
}

Expected<std::vector<ProblemRef>> decode_problems(std::string_view text) {
  std::vector<ProblemRef> problems;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (line.empty()) continue;
    const std::size_t comma = line.find(',');
    if (comma == std::string_view::npos || comma == 0 || comma + 1 == line.size()) {
      return Status(StatusCode::kParseError,
                    fmt::format("problem list line {}: expected <op>,<params>", line_no));
    }
    problems.push_back({std::string(line.substr(0, comma)), std::string(line.substr(comma + 1))});
  }
  return problems;
}

std::vector<std::size_t> round_robin_share(std::size_t count, int ranks, int rank) {
  std::vector<std::size_t> share;
  if (ranks <= 0 || rank < 0 || rank >= ranks) return share;
  for (std::size_t i = static_cast<std::size_t>(rank); i < count;
       i += static_cast<std::size_t>(ranks)) {
    share.push_back(i);
  }
  return share;
}

std::string worker_results_name(std::string_view base, int rank) {
  return insert_device_ordinal(base, rank);
}

std::string full_results_name(std::string_view base, int index) {
  return insert_at_ordinal(base, "_full" + std::to_string(index));
}

GatherSummary gather_reports(std::vector<WorkerReport> reports,
                             const std::vector<ProblemRef>& problems, int ranks) {
  GatherSummary summary;
  std::sort(reports.begin(), reports.end(),
            [](const WorkerReport& a, const WorkerReport& b) { return a.rank < b.rank; });
  for (const WorkerReport& r : reports) {
    if (r.status.is_ok() && !r.validators.empty()) {
      summary.validators = r.validators;
      summary.reference_rank = r.rank;
      break;
    }
  }
  const auto describe_difference = [&summary](const WorkerReport& r) {
    std::map<std::string, std::string> mine(summary.validators.begin(), summary.validators.end());
    std::map<std::string, std::string> theirs(r.validators.begin(), r.validators.end());
    for (const auto& [k, v] : mine) {
      auto it = theirs.find(k);
      if (it == theirs.end()) return fmt::format("it has no {}", k);
      if (it->second != v)
        return fmt::format("{} is '{}', rank {} has '{}'", k, it->second, summary.reference_rank,
                           v);
    }
    for (const auto& [k, v] : theirs) {
      if (mine.count(k) == 0) return fmt::format("it has an extra validator {}", k);
    }
    return std::string("they differ");
  };

  // Outcomes by problem, in problem-list order.
  std::map<std::pair<std::string, std::string>, ProblemOutcome> by_problem;
  std::set<std::pair<std::string, std::string>> merged;
  std::vector<bool> reported(static_cast<std::size_t>(std::max(ranks, 0)), false);
  for (WorkerReport& r : reports) {
    if (r.rank >= 0 && r.rank < ranks) reported[static_cast<std::size_t>(r.rank)] = true;
    const bool failed = !r.status.is_ok();
    // Results of a failed worker still count when its environment is known and agrees: each
    // was complete when it was written.
    const bool mismatched = summary.reference_rank >= 0 && !r.validators.empty() &&
                            !same_validators(r.validators, summary.validators);
    const std::string who =
        fmt::format("rank {}{}", r.rank, r.host.empty() ? "" : " (" + r.host + ")");
    if (failed) {
      summary.failed_ranks.push_back(r.rank);
      summary.messages.push_back(who + ": failed: " + r.status.message());
    }
    if (mismatched) {
      summary.mismatched_ranks.push_back(r.rank);
      summary.messages.push_back(fmt::format(
          "{}: validators differ from rank {}'s ({}); its {} result(s) are kept apart in its own "
          "results file and not merged",
          who, summary.reference_rank, describe_difference(r), r.results.size()));
    }
    for (ProblemOutcome& o : r.outcomes) {
      if (mismatched && o.kind != ProblemOutcome::Kind::kFailed) {
        o.note += " (kept apart: validators differ)";
      }
      by_problem[{o.op_signature, o.params_signature}] = std::move(o);
    }
    if (mismatched || r.validators.empty()) continue;
    summary.merged_ranks.push_back(r.rank);
    for (ResultLine& line : r.results) {
      if (merged.emplace(line.op_signature, line.params_signature).second) {
        summary.results.push_back(std::move(line));
      }
    }
  }
  for (int rank = 0; rank < ranks; ++rank) {
    if (!reported[static_cast<std::size_t>(rank)]) {
      summary.failed_ranks.push_back(rank);
      summary.messages.push_back(fmt::format("rank {}: sent no report", rank));
    }
  }
  std::sort(summary.failed_ranks.begin(), summary.failed_ranks.end());
  for (std::size_t i = 0; i < problems.size(); ++i) {
    const ProblemRef& p = problems[i];
    auto it = by_problem.find({p.op_signature, p.params_signature});
    if (it != by_problem.end()) {
      summary.outcomes.push_back(it->second);
      continue;
    }
    ProblemOutcome lost;
    lost.op_signature = p.op_signature;
    lost.params_signature = p.params_signature;
    lost.kind = ProblemOutcome::Kind::kFailed;
    lost.rank = ranks > 0 ? static_cast<int>(i % static_cast<std::size_t>(ranks)) : 0;
    const WorkerReport* owner = nullptr;
    for (const WorkerReport& r : reports) {
      if (r.rank == lost.rank) owner = &r;
    }
    lost.note = owner != nullptr && !owner->status.is_ok()
                    ? "not tuned: rank " + std::to_string(lost.rank) + " failed"
                    : "not tuned: rank " + std::to_string(lost.rank) + " reported nothing for it";
    summary.outcomes.push_back(std::move(lost));
  }
  return summary;
}

Status write_full_files(std::string_view base, int copies, const GatherSummary& summary,
                        std::vector<std::string>* written) {
  if (summary.reference_rank < 0) {
    return Status(StatusCode::kInvalidArgument,
                  "no worker reported its environment; nothing to gather");
  }
  const std::string full0 = full_results_name(base, 0);
  std::vector<ResultLine> kept;
  auto existing = read_results_file(full0);
  if (existing) {
    if (!existing->validators.empty() || !existing->results.empty()) {
      if (!same_validators(existing->validators, summary.validators)) {
        return Status(StatusCode::kValidatorMismatch,
                      "refusing to overwrite '" + full0 +
                          "': its validators differ from the workers' (it was written under "
                          "another environment); move it away and gather again");
      }
      kept = std::move(existing->results);
    }
  } else if (existing.status().code() != StatusCode::kNotFound) {
    return existing.status();
  }
  std::set<std::pair<std::string, std::string>> present;
  for (const ResultLine& r : kept) present.emplace(r.op_signature, r.params_signature);
  std::vector<ResultLine> added;
  for (const ResultLine& r : summary.results) {
    if (present.emplace(r.op_signature, r.params_signature).second) added.push_back(r);
  }
  std::sort(kept.begin(), kept.end(), by_key);
  std::sort(added.begin(), added.end(), by_key);
  std::string content = format_header(summary.validators);
  for (const ResultLine& r : kept) content.append(format_result_line(r)).push_back('\n');
  for (const ResultLine& r : added) content.append(format_result_line(r)).push_back('\n');
  for (int i = 0; i < std::max(copies, 1); ++i) {
    // Written to a temporary name and renamed (write_file_locked): a reader never sees a
    // half-written file, and a crash or a full disk leaves the previous file whole.
    const std::string name = full_results_name(base, i);
    TUNEKIT_RETURN_IF_ERROR(write_file_locked(name, content));
    if (written != nullptr) written->push_back(name);
  }
  return Status::ok();
}

}  // namespace tunekit::distributed
