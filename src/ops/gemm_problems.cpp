// Reads GEMM problems from TunableOp untuned/results files for offline tuning.
// See include/tunekit/ops/gemm_problems.hpp.
#include "tunekit/ops/gemm_problems.hpp"

#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace tunekit::ops {

Expected<DType> parse_dtype(const std::string& name) {
  if (name == "float" || name == "f32" || name == "fp32") return DType::kFloat;
  if (name == "double" || name == "f64" || name == "fp64") return DType::kDouble;
  if (name == "bf16" || name == "bfloat16" || name == "BFloat16") return DType::kBFloat16;
  return Status(StatusCode::kInvalidArgument,
                "unknown dtype '" + name + "' (expected float, double or bf16)");
}

Status read_gemm_problems(const std::string& path, GemmProblemSet& set,
                          const DType* dtype_override) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kIoError, "cannot read '" + path + "'");
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  if (text.find('\0') != std::string::npos) {
    return Status(StatusCode::kParseError, path + ": not a TunableOp file (binary content)");
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
    const std::string params = line.substr(c1 + 1, c2 == std::string::npos ? std::string::npos
                                                                          : c2 - c1 - 1);
    auto parsed = GemmParams::from_signature(op, params);
    if (!parsed) {
      Status s = parsed.status();
      set.skipped.push_back({path, number, op, params, Status(s.code(), where + ": " + s.message())});
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

}  // namespace tunekit::ops
