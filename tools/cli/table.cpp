// Plain-text table rendering and number formatting for the CLI.
// See tools/cli/table.hpp.
#include "table.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace tunekit::cli {

Table::Table(std::vector<std::string> header, std::vector<bool> right_aligned)
    : header_(std::move(header)), right_(std::move(right_aligned)) {
  right_.resize(header_.size(), false);
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::render() const {
  std::vector<std::size_t> width(header_.size());
  for (std::size_t i = 0; i < header_.size(); ++i) width[i] = header_[i].size();
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i) out += "  ";
      out += right_[i] ? fmt::format("{:>{}}", cells[i], width[i])
                       : fmt::format("{:<{}}", cells[i], width[i]);
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::size_t total = 0;
  for (std::size_t w : width) total += w;
  out += std::string(total + 2 * (width.empty() ? 0 : width.size() - 1), '-') + "\n";
  for (const auto& row : rows_) out += line(row);
  return out;
}

std::string format_number(double value) {
  if (std::isnan(value)) return "-";
  if (std::isinf(value)) return "inf";
  const double a = std::fabs(value);
  if (a >= 100) return fmt::format("{:.1f}", value);
  if (a >= 10) return fmt::format("{:.2f}", value);
  if (a >= 0.01) return fmt::format("{:.3f}", value);
  return fmt::format("{:.3g}", value);
}

}  // namespace tunekit::cli
