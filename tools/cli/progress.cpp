// Progress of a long command: the terminal line with elapsed and estimated remaining time, and
// the plain per-unit lines of logs and pipes (tools/cli/progress.hpp).
#include "progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "tunekit/core/clock.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit::cli {

ProgressMode detect_progress_mode() {
  return ::isatty(STDOUT_FILENO) && ::isatty(STDERR_FILENO) ? ProgressMode::kTerminal
                                                            : ProgressMode::kPlain;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 60) return fmt::format("{:.1f} s", seconds);
  const auto whole = static_cast<long long>(std::llround(seconds));
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, (whole % 3600) / 60);
}

Progress::Progress(std::size_t total, ProgressMode mode, std::FILE* out)
    : total_(total),
      mode_(total == 0 ? ProgressMode::kOff : mode),
      out_(out != nullptr ? out : (mode_ == ProgressMode::kTerminal ? stderr : stdout)),
      start_ns_(now_ns()) {
  if (mode_ == ProgressMode::kTerminal) log::set_line_clearer(&Progress::clear_for_log, this);
}

Progress::~Progress() {
  if (mode_ == ProgressMode::kTerminal) log::set_line_clearer(nullptr, nullptr);
  done();
}

void Progress::clear_for_log(void* self) {
  auto* p = static_cast<Progress*>(self);
  if (!p->line_open_.exchange(false)) return;
  std::fprintf(p->out_, "\r\033[K");
  std::fflush(p->out_);
}

double Progress::elapsed_s() const { return elapsed_ms(start_ns_, now_ns()) / 1000.0; }

void Progress::begin(std::size_t index, const std::string& label) {
  if (mode_ == ProgressMode::kTerminal) draw(std::min(index, total_), label);
}

void Progress::finished(std::size_t index, const std::string& label, const std::string& outcome) {
  finished_ = std::min(total_, std::max(finished_, index + 1));
  if (mode_ == ProgressMode::kTerminal) {
    draw(finished_, label);
  } else if (mode_ == ProgressMode::kPlain) {
    std::fprintf(out_, "[%zu/%zu] %s: %s (elapsed %s)\n", index + 1, total_, label.c_str(),
                 outcome.c_str(), format_duration(elapsed_s()).c_str());
    std::fflush(out_);
  }
}

void Progress::draw(std::size_t done_units, const std::string& label) {
  constexpr std::size_t kWidth = 24;
  std::string bar(done_units * kWidth / total_, '#');
  bar.resize(kWidth, '.');
  const double elapsed = elapsed_s();
  const std::string left = finished_ == 0
                               ? std::string("estimating")
                               : "~" +
                                     format_duration(elapsed / static_cast<double>(finished_) *
                                                     static_cast<double>(total_ - finished_)) +
                                     " left";
  std::fprintf(out_, "\r\033[K[%s] %zu/%zu  %s elapsed, %s  %s", bar.c_str(), done_units, total_,
               format_duration(elapsed).c_str(), left.c_str(), label.c_str());
  std::fflush(out_);
  line_open_ = true;
}

void Progress::done() {
  if (!line_open_.exchange(false)) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
}

}  // namespace tunekit::cli
