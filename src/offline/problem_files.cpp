// Problem files of offline tuning: TunableOp untuned/results files read into parsed GemmParams,
// and the file arguments (paths or patterns) that name them. See
// include/tunekit/offline/problem_files.hpp.
#include "tunekit/offline/problem_files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "tunekit/core/file_io.hpp"
#include "tunekit/tunable/results_file.hpp"

namespace tunekit::offline {

using ops::DType;
using ops::GemmParams;

namespace {

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

Expected<DType> parse_dtype(const std::string& name) {
  if (name == "float" || name == "f32" || name == "fp32") return DType::kFloat;
  if (name == "double" || name == "f64" || name == "fp64") return DType::kDouble;
  if (name == "bf16" || name == "bfloat16" || name == "BFloat16") return DType::kBFloat16;
  if (name == "bf16_float" || name == "bfloat16_float" || name == "BFloat16_float") {
    return DType::kBFloat16Float;
  }
  return Status(StatusCode::kInvalidArgument,
                "unknown dtype '" + name + "' (expected float, double, bf16 or bf16_float)");
}

Status read_gemm_problems(const std::string& path, GemmProblemSet& set,
                          const DType* dtype_override) {
  auto file = files::open_regular(path, O_RDONLY, "problem file");
  if (!file) return file.status();
  auto read = files::read_all(file->get(), path, "problem file");
  if (!read) return read.status();
  const std::string text(strip_byte_order_mark(*read));
  if (auto at = find_binary_byte(text)) {
    const auto line_no =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(*at), '\n');
    return Status(
        StatusCode::kParseError,
        fmt::format("{}:{}: binary content (control byte 0x{:02x} at offset {}): not a TunableOp "
                    "CSV file",
                    path, line_no, static_cast<unsigned char>(text[*at]), *at));
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& p : set.problems) seen.emplace(p.op_signature, p.params_signature);
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const auto c1 = line.find(',');
    const std::string op = line.substr(0, c1);
    if (op == "Validator") continue;
    const std::string where = path + ":" + std::to_string(number);
    if (c1 == std::string::npos) {
      set.skipped.push_back({path, number, op, "",
                             Status(StatusCode::kParseError,
                                    where + ": expected '<op signature>,<params signature>'")});
      continue;
    }
    const auto c2 = line.find(',', c1 + 1);
    const std::string params =
        line.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
    if (is_wildcard_signature(params)) {
      set.skipped.push_back(
          {path, number, op, params,
           Status(StatusCode::kUnsupported, where + ": " + op + "," + params +
                                                " is a wildcard or bucket entry (a pattern), not a "
                                                "problem")});
      continue;
    }
    auto parsed = GemmParams::from_signature(op, params);
    if (!parsed) {
      Status s = parsed.status();
      set.skipped.push_back(
          {path, number, op, params, Status(s.code(), where + ": " + s.message())});
      continue;
    }
    GemmParams p = *parsed;
    std::string op_sig = op;
    if (dtype_override != nullptr && *dtype_override != p.dtype) {
      p.dtype = *dtype_override;
      op_sig = p.op_signature();
    }
    if (!seen.emplace(op_sig, params).second) {
      ++set.duplicates;
      continue;
    }
    set.problems.push_back({path, number, op_sig, params, p});
  }
  return Status::ok();
}

Expected<std::vector<std::string>> expand_file_patterns(const std::vector<std::string>& args) {
  std::vector<std::string> files;
  std::set<std::string> seen;
  for (const std::string& arg : args) {
    if (is_regular_file(arg) || !has_glob_chars(arg)) {
      if (!is_regular_file(arg)) {
        struct stat st {};
        if (::stat(arg.c_str(), &st) != 0) {
          return Status(StatusCode::kNotFound, "cannot read '" + arg + "': no such file");
        }
        return Status(StatusCode::kIoError, "cannot read '" + arg + "': it is " +
                                                std::string(files::kind_of(st.st_mode)) +
                                                ", not a regular file");
      }
      if (seen.insert(arg).second) files.push_back(arg);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(arg.c_str(), 0, nullptr, &g);
    std::vector<std::string> matches;
    if (rc == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        if (is_regular_file(g.gl_pathv[i])) matches.emplace_back(g.gl_pathv[i]);
      }
    }
    ::globfree(&g);
    if (matches.empty()) {
      return Status(StatusCode::kNotFound, "no file matches '" + arg + "'");
    }
    std::sort(matches.begin(), matches.end());
    for (std::string& m : matches) {
      if (seen.insert(m).second) files.push_back(std::move(m));
    }
  }
  return files;
}

}  // namespace tunekit::offline
