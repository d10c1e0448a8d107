// A plain-text table for CLI output: columns sized to their widest cell, numbers right-aligned.
// Used by tune-file, gemm, results show and compare.
#pragma once

#include <string>
#include <vector>

namespace tunekit::cli {

class Table {
 public:
  /// `right_aligned[i]`: column i holds numbers.
  Table(std::vector<std::string> header, std::vector<bool> right_aligned);
  void add_row(std::vector<std::string> cells);
  /// The header, a rule and every row, each line ending in '\n'.
  std::string render() const;

 private:
  std::vector<std::string> header_;
  std::vector<bool> right_;
  std::vector<std::vector<std::string>> rows_;
};

/// "1.23" style: 3 significant digits below 10, otherwise fixed with 1 decimal.
std::string format_number(double value);

}  // namespace tunekit::cli
