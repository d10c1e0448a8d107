// TunableOp results CSV parsing, formatting and locked appends.
// See include/tunekit/tunable/results_file.hpp.
#include "tunekit/tunable/results_file.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <locale>
#include <sstream>
#include <unordered_set>

#include "tunekit/core/env.hpp"
#include "tunekit/core/file_io.hpp"
#include "tunekit/core/log.hpp"

namespace tunekit {
namespace {

Status io_error(const std::string& what, const std::string& path) {
  return Status(StatusCode::kIoError, what + " '" + path + "': " + std::strerror(errno));
}

constexpr std::string_view kWhat = "results file";

// files::open_regular, naming a directory as tunekit's results-file messages always have.
Expected<files::Fd> open_results_file(const std::string& path, int flags) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    return Status(StatusCode::kIoError, "results file '" + path + "' is a directory");
  }
  return files::open_regular(path, flags, kWhat);
}

// An exclusive flock on the regular file at `path`. When the file was replaced (write_file_locked
// renames a new file over it) or removed while we waited, the lock is taken again on the file now
// at the path, so no line goes to a file that is no longer there.
Expected<files::Fd> lock_exclusive(const std::string& path, int flags) {
  for (;;) {
    auto file = open_results_file(path, flags);
    if (!file) return file.status();
    int rc = 0;
    do {
      rc = ::flock(file->get(), LOCK_EX);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) return io_error("cannot lock results file", path);
    struct stat held {
    }, now{};
    if (::fstat(file->get(), &held) != 0) return io_error("cannot stat results file", path);
    if (::stat(path.c_str(), &now) == 0 && now.st_dev == held.st_dev && now.st_ino == held.st_ino) {
      return file;
    }
  }
}

Status parse_error(std::string_view file, std::size_t line_no, const std::string& what) {
  return Status(StatusCode::kParseError,
                std::string(file) + ":" + std::to_string(line_no) + ": " + what);
}

}  // namespace

std::string format_time_ms(double time_ms) {
  std::ostringstream out;
  out.imbue(std::locale::classic());
  out << time_ms;
  return out.str();
}

std::string format_validator_line(std::string_view key, std::string_view value) {
  std::string s = "Validator,";
  s.append(key);
  s.push_back(',');
  s.append(value);
  return s;
}

std::string format_result_line(const ResultLine& line) {
  std::string s;
  s.reserve(line.op_signature.size() + line.params_signature.size() + line.solution.size() +
            line.extra.size() + 24);
  s.append(line.op_signature).push_back(',');
  s.append(line.params_signature).push_back(',');
  s.append(line.solution).push_back(',');
  s.append(format_time_ms(line.time_ms));
  if (!line.extra.empty()) s.append(",").append(line.extra);
  return s;
}

std::string format_header(const std::vector<ValidatorEntry>& validators) {
  std::string s;
  for (const auto& [key, value] : validators)
    s.append(format_validator_line(key, value)).push_back('\n');
  return s;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  for (;;) {
    std::size_t comma = line.find(',', start);
    // The solution (third field) may carry a bracketed configuration with commas,
    // "native_f32[mr=16,nr=6,...]": its commas do not split when the bracket closes.
    if (fields.size() == 2 && comma != std::string_view::npos) {
      const std::size_t open = line.find('[', start);
      if (open < comma) {
        const std::size_t close = line.find(']', open);
        if (close != std::string_view::npos) comma = line.find(',', close);
      }
    }
    if (comma == std::string_view::npos) {
      fields.push_back(line.substr(start));
      return fields;
    }
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

std::optional<std::size_t> find_binary_byte(std::string_view text) noexcept {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\r' && (i + 1 == text.size() || text[i + 1] == '\n')) continue;  // CRLF
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) return i;
  }
  return std::nullopt;
}

namespace {

// Parses one non-blank line (CR already dropped) into `content`. `seen` dedups results.
Status parse_one_line(std::string_view line, std::string_view file_name, std::size_t line_no,
                      ResultsFileContent& content, std::unordered_set<std::string>& seen,
                      std::size_t& fields_out) {
  const auto fields = split_fields(line);
  fields_out = fields.size();
  const std::string shown = std::string(line.substr(0, 200));
  if (fields[0] == "Validator") {
    if (fields.size() < 3 || fields[1].empty()) {
      return parse_error(
          file_name, line_no,
          "could not parse validator line '" + shown + "' (expected Validator,<KEY>,<VALUE>)");
    }
    const std::string key(fields[1]);
    const std::string value(fields[2]);
    bool duplicate = false;
    for (const auto& [k, v] : content.validators) {
      if (k != key) continue;
      if (v != value) {
        return parse_error(file_name, line_no,
                           "validator " + key + " given twice with different values ('" + v +
                               "' and '" + value + "')");
      }
      duplicate = true;
    }
    if (!duplicate) content.validators.emplace_back(key, value);
    return Status::ok();
  }
  if (fields.size() < 3 || fields[0].empty() || fields[1].empty() || fields[2].empty()) {
    std::string hint;
    if (fields.size() == 2 && fields[0].find("TunableOp_") != std::string_view::npos) {
      hint = "; " + std::string(kUntunedLineNote);
    }
    return parse_error(file_name, line_no,
                       "could not parse line '" + shown +
                           "' (expected <op_signature>,<params_signature>,<solution>,<time_ms>)" +
                           hint);
  }
  ResultLine r;
  r.op_signature = std::string(fields[0]);
  r.params_signature = std::string(fields[1]);
  r.solution = std::string(fields[2]);
  if (fields.size() >= 4) {
    const auto time = env::parse_double(std::string(fields[3]));
    if (!time || !std::isfinite(*time) || *time < 0.0) {
      const bool unclosed = fields[2].find('[') != std::string_view::npos &&
                            fields[2].find(']') == std::string_view::npos;
      return parse_error(file_name, line_no,
                         "could not parse time '" + std::string(fields[3]) + "' in line '" + shown +
                             "' (expected a finite non-negative number of milliseconds" +
                             (unclosed ? "; the solution's '[' is never closed" : "") + ")");
    }
    r.time_ms = *time;
    if (fields.size() > 4) {
      const std::size_t extra_at = static_cast<std::size_t>(fields[4].data() - line.data());
      r.extra = std::string(line.substr(extra_at));
    }
  }
  if (content.first_result_line == 0) content.first_result_line = line_no;
  std::string dedup_key = r.op_signature + ',' + r.params_signature;
  if (!seen.insert(dedup_key).second) {
    content.duplicates.push_back(std::string(file_name) + ":" + std::to_string(line_no) +
                                 ": duplicate result " + dedup_key + " -> " + r.solution +
                                 " ignored (the first one wins)");
    return Status::ok();
  }
  content.results.push_back(std::move(r));
  return Status::ok();
}

}  // namespace

std::string_view strip_byte_order_mark(std::string_view text) noexcept {
  constexpr std::string_view kBom = "\xEF\xBB\xBF";
  while (text.starts_with(kBom)) text.remove_prefix(kBom.size());
  return text;
}

Expected<ResultsFileContent> parse_results(std::string_view text, std::string_view file_name) {
  ResultsFileContent content;
  text = strip_byte_order_mark(text);
  if (auto at = find_binary_byte(text)) {
    const std::size_t line_no =
        1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + *at, '\n'));
    char byte[8];
    std::snprintf(byte, sizeof(byte), "0x%02x", static_cast<unsigned char>(text[*at]));
    return parse_error(file_name, line_no,
                       std::string("binary content (control byte ") + byte + " at offset " +
                           std::to_string(*at) + "): not a TunableOp CSV file");
  }
  std::unordered_set<std::string> seen;
  std::size_t line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    const bool terminated = end != std::string_view::npos;
    if (!terminated) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = strip_byte_order_mark(line);  // files joined with `cat` keep each one's mark
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (!terminated) {
      // tunekit writes every line whole, ending in '\n' (one write(), undone when cut short), so
      // a last line without its end was not completely written (a killed writer, a full disk):
      // it may parse ("...,libxsmm,0.00" of "0.00123") but is never a result.
      content.warnings.push_back(std::string(file_name) + ":" + std::to_string(line_no) +
                                 ": ignoring the incomplete last line '" +
                                 std::string(line.substr(0, 200)) +
                                 "' (no line end: an interrupted write)");
      break;
    }
    std::size_t fields = 0;
    TUNEKIT_RETURN_IF_ERROR(parse_one_line(line, file_name, line_no, content, seen, fields));
  }
  return content;
}

bool is_complete_result_line(std::string_view line) {
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  ResultsFileContent content;
  std::unordered_set<std::string> seen;
  std::size_t fields = 0;
  if (!parse_one_line(line, "", 0, content, seen, fields).is_ok()) return false;
  return line.starts_with("Validator,") || fields >= 4;
}

Expected<ResultsFileContent> read_results_file(const std::string& path) {
  auto file = open_results_file(path, O_RDONLY);
  if (!file) {
    if (file.status().code() == StatusCode::kNotFound) {
      return Status(StatusCode::kNotFound, "results file '" + path + "' does not exist");
    }
    return file.status();
  }
  auto text = files::read_all(file->get(), path, kWhat);
  if (!text) return text.status();
  return parse_results(*text, path);
}

namespace {

// Removes the last line of `existing` (the file's content, under the lock) when it lacks its
// '\n': it was not completely written, and a line appended after it would be glued to it.
Status remove_incomplete_last_line(int fd, const std::string& path, std::string& existing) {
  if (existing.empty() || existing.back() == '\n') return Status::ok();
  const std::size_t nl = existing.rfind('\n');
  const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
  const std::string_view fragment = std::string_view(existing).substr(start);
  int rc = 0;
  do {
    rc = ::ftruncate(fd, static_cast<off_t>(start));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) return io_error("cannot truncate results file", path);
  if (fragment.find_first_not_of(" \t\r") != std::string_view::npos) {
    const auto line_no =
        1 +
        std::count(existing.begin(), existing.begin() + static_cast<std::ptrdiff_t>(start), '\n');
    log::warn(path + ":" + std::to_string(line_no) + ": removed the incomplete last line '" +
              std::string(fragment.substr(0, 200)) + "' (no line end: an interrupted write)");
  }
  existing.resize(start);
  return Status::ok();
}

}  // namespace

Status append_line_locked(const std::string& path, std::string_view header, std::string_view line,
                          const std::function<Status(std::string_view existing)>& check_existing) {
  auto file = lock_exclusive(path, O_RDWR | O_CREAT | O_APPEND);
  if (!file) return file.status();
  const int fd = file->get();
  struct stat st {};
  if (::fstat(fd, &st) != 0) return io_error("cannot stat results file", path);
  char last = '\n';
  if (st.st_size > 0 && ::pread(fd, &last, 1, st.st_size - 1) != 1) {
    return io_error("cannot read results file", path);
  }
  // The whole content is read only when it is checked, may be blank, or ends in a torn line.
  std::optional<std::string> existing;
  if (st.st_size > 0 && (check_existing || st.st_size <= 64 || last != '\n')) {
    auto content = files::read_all(fd, path, kWhat);
    if (!content) return content.status();
    existing = std::move(*content);
    TUNEKIT_RETURN_IF_ERROR(remove_incomplete_last_line(fd, path, *existing));
  }
  const off_t size = existing ? static_cast<off_t>(existing->size()) : st.st_size;
  const bool blank =
      size == 0 || (existing && existing->find_first_not_of(" \t\r\n") == std::string::npos);
  if (!blank && check_existing) TUNEKIT_RETURN_IF_ERROR(check_existing(*existing));
  std::string buffer;
  buffer.reserve(header.size() + line.size() + 1);
  if (blank) buffer.append(header);
  buffer.append(line);
  buffer.push_back('\n');
  return files::append_all_or_nothing(fd, size, buffer, path, kWhat);
}

namespace {

// The file a path names, through any symbolic links (so replacing it keeps the links).
std::string resolved(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path target = std::filesystem::canonical(path, ec);
  return ec ? path : target.string();
}

}  // namespace

Status write_file_locked(const std::string& path, std::string_view content) {
  // Appenders wait on the lock of the current file and move to the new one once it is renamed
  // over it (lock_exclusive); a failed write leaves the current file as it was.
  auto held = lock_exclusive(path, O_RDONLY | O_CREAT);
  if (!held) return held.status();
  const std::string target = resolved(path);
  std::string tmp = target + ".tmp.XXXXXX";
  files::Fd out(::mkostemp(tmp.data(), O_CLOEXEC));
  if (out.get() < 0) return io_error("cannot create a temporary file beside results file", path);
  const auto fail = [&tmp](Status s) {
    ::unlink(tmp.c_str());
    return s;
  };
  struct stat st {};
  if (::fstat(held->get(), &st) == 0) (void)::fchmod(out.get(), st.st_mode & 07777);
  if (Status s = files::append_all_or_nothing(out.get(), 0, content, path, kWhat); !s.is_ok()) {
    return fail(s);
  }
  if (::fsync(out.get()) != 0) return fail(io_error("cannot flush results file", path));
  // The new file is locked before it appears at the path, so the hold moves over without a gap.
  if (::flock(out.get(), LOCK_EX) != 0) return fail(io_error("cannot lock results file", path));
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    return fail(io_error("cannot replace results file", path));
  }
  return Status::ok();
}

std::optional<RangeToken> parse_range_token(std::string_view token) noexcept {
  if (token.size() < 4 || token.front() != '[' || token.back() != ']') return std::nullopt;
  const std::string_view body = token.substr(1, token.size() - 2);
  const std::size_t dash = body.find('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  auto number = [](std::string_view text, long long& out) {
    if (text.empty() || text.size() > 18) return false;
    long long v = 0;
    for (char c : text) {
      if (c < '0' || c > '9') return false;
      v = v * 10 + (c - '0');
    }
    out = v;
    return true;
  };
  RangeToken range;
  if (!number(body.substr(0, dash), range.lo)) return std::nullopt;
  const std::string_view hi = body.substr(dash + 1);
  if (hi.empty()) return range;
  if (!number(hi, range.hi) || range.hi < range.lo) return std::nullopt;
  return range;
}

std::string format_range_token(long long lo, long long hi) {
  return hi < 0 ? fmt::format("[{}-]", lo) : fmt::format("[{}-{}]", lo, hi);
}

namespace {

bool token_matches(std::string_view p_tok, std::string_view s_tok) noexcept {
  if (p_tok == "*" || p_tok == s_tok) return true;
  if (p_tok.empty() || p_tok.front() != '[') return false;
  const auto range = parse_range_token(p_tok);
  if (!range || s_tok.empty() || s_tok.size() > 18) return false;
  long long v = 0;
  for (char c : s_tok) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  return v >= range->lo && (range->hi < 0 || v <= range->hi);
}

template <class F>
void for_each_token(std::string_view text, F&& f) {
  for (;;) {
    const std::size_t end = text.find('_');
    f(text.substr(0, end));
    if (end == std::string_view::npos) return;
    text.remove_prefix(end + 1);
  }
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view signature) noexcept {
  for (;;) {
    const std::size_t p_end = pattern.find('_');
    const std::size_t s_end = signature.find('_');
    if (!token_matches(pattern.substr(0, p_end), signature.substr(0, s_end))) return false;
    if (p_end == std::string_view::npos || s_end == std::string_view::npos) {
      return p_end == std::string_view::npos && s_end == std::string_view::npos;
    }
    pattern.remove_prefix(p_end + 1);
    signature.remove_prefix(s_end + 1);
  }
}

WildcardSpecificity wildcard_specificity(std::string_view pattern) noexcept {
  WildcardSpecificity s;
  for_each_token(pattern, [&s](std::string_view tok) {
    if (tok == "*") {
      ++s.stars;
    } else if (parse_range_token(tok)) {
      ++s.ranges;
    }
  });
  return s;
}

bool is_wildcard_signature(std::string_view signature) noexcept {
  const WildcardSpecificity s = wildcard_specificity(signature);
  return s.stars > 0 || s.ranges > 0;
}

}  // namespace tunekit
