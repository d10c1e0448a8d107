// TunableOp results CSV: line grammar, parsing with file:line errors, time formatting, and
// crash-safe appends (one write() per line on an O_APPEND descriptor under an advisory flock,
// undone when cut short) and rewrites (a new file renamed over the old one).
#pragma once

#include <compare>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// One tuned result: `<op_sig>,<params_sig>,<solution>,<time_ms>[,<extra>]`.
struct ResultLine {
  std::string op_signature;      ///< e.g. "GemmTunableOp_float_NT"
  std::string params_signature;  ///< e.g. "nt_4096_4096_64_ld_4096_4096_4096"
  std::string solution;          ///< candidate name, byte for byte (e.g. "Default")
  double time_ms = 0.0;          ///< mean per-call time of the solution (0 for 3-field lines)
  std::string extra;             ///< fields after the 4th, verbatim (e.g. "BLAS_PARAMS: - {...}")
  friend bool operator==(const ResultLine&, const ResultLine&) = default;
};

/// A validator entry `Validator,<KEY>,<VALUE>`.
using ValidatorEntry = std::pair<std::string, std::string>;

/// Content of a parsed results file.
struct ResultsFileContent {
  std::vector<ValidatorEntry> validators;  ///< in file order
  std::vector<ResultLine> results;         ///< in file order, duplicates removed (first wins)
  std::vector<std::string> duplicates;     ///< "file:line: duplicate <op>,<params> ignored" notes
  std::vector<std::string> warnings;       ///< "file:line: ignoring the incomplete last line ..."
  std::size_t first_result_line = 0;       ///< line number of the first result line (0: none)
};

/// Formats a time as default C++ ostream output (6 significant digits, shortest form, "C"
/// locale): 0.0240676, 1.262, 1e-05, inf. Source: PyTorch TunableOp results files.
std::string format_time_ms(double time_ms);

/// `Validator,<key>,<value>` (no newline).
std::string format_validator_line(std::string_view key, std::string_view value);

/// `<op>,<params>,<solution>,<time>[,<extra>]` (no newline).
std::string format_result_line(const ResultLine& line);

/// The header block (validator lines, each ending in '\n').
std::string format_header(const std::vector<ValidatorEntry>& validators);

/// Splits on ',' without quoting (TunableOp fields never contain commas except BLAS_PARAMS,
/// which callers keep as `extra`), except inside the square brackets of the third field (the
/// solution): a template solution's configuration, "native_f32[mr=16,nr=6,...]", is one field.
/// A '[' without its ']' splits like any other text (the line then fails to parse).
std::vector<std::string_view> split_fields(std::string_view line);

/// Parses results-file text. A leading UTF-8 byte order mark is dropped, empty lines are
/// skipped, a trailing '\r' is dropped (CRLF files), `Validator` lines need >= 3 fields, result
/// lines 3 fields (time 0) or >= 4 (fields after the 4th are kept verbatim as `extra`). Duplicate
/// (op, params) results: the first wins and the later one is listed in `duplicates`. A validator
/// key given twice with different values is an error. A last line without its '\n' was not
/// completely written (tunekit ends every line it writes, in the same write): it is never a
/// result or validator, even when it parses ("...,libxsmm,0.00" cut from "0.00123"), and is
/// listed in `warnings` naming its line.
/// Errors: kParseError "<file>:<line>: could not parse line '...'" (or a bad time field, or
/// "binary content": see find_binary_byte()).
Expected<ResultsFileContent> parse_results(std::string_view text, std::string_view file_name);

/// Part of the message for a 2-field `<op>,<params>` line where a result was expected (a line of
/// an untuned file); commands add advice that fits them.
inline constexpr std::string_view kUntunedLineNote =
    "this looks like a line of an untuned file (problems to tune, not results)";

/// `text` without the UTF-8 byte order marks (EF BB BF) it starts with, which editors may write
/// (the results reader also drops them at the start of every line: files joined with `cat`).
std::string_view strip_byte_order_mark(std::string_view text) noexcept;

/// Offset of the first byte that cannot occur in a text CSV file (control characters other than
/// tab and LF, a CR not ending a line, DEL), or nullopt.
std::optional<std::size_t> find_binary_byte(std::string_view text) noexcept;

/// True when `line` (without its '\n') is a whole results-file line: a validator line, or a
/// result line with its time field.
bool is_complete_result_line(std::string_view line);

/// Reads and parses a results file. Only a regular file is read (a device, FIFO or directory is
/// refused before it is opened, so /dev/zero is never read without end), at most 1 GiB.
/// Errors: kNotFound when the file does not exist; kIoError "results file '<path>' is not a
/// regular file (a character device)", or when it cannot be read; parse errors as
/// parse_results.
Expected<ResultsFileContent> read_results_file(const std::string& path);

/// Appends `line` + '\n' to `path` while holding an exclusive flock on it (taken again when the
/// file was replaced meanwhile), with one write() on an O_APPEND descriptor, so concurrent
/// processes never interleave or drop lines. When the file is missing, empty or blank
/// (whitespace only), `header` is written first in the same write(). Otherwise
/// `check_existing(content)` (if given) is called with its current content under the lock and
/// nothing is written unless it returns ok. A last line without its '\n' (a write cut short) is
/// removed first, with a warning naming file:line, so no line is glued to it. All or nothing: a
/// write cut short (a full disk, a file size limit) is undone by truncating the file back.
/// Only a regular file is appended to.
/// Errors: kIoError naming the file on open/lock/write failure (then the file is as before),
/// or when it is not a regular file; check_existing's status.
Status append_line_locked(
    const std::string& path, std::string_view header, std::string_view line,
    const std::function<Status(std::string_view existing)>& check_existing = {});

/// Replaces the content of `path` crash-safely: `content` goes to a temporary file beside it
/// (through symbolic links), which is flushed and renamed over it while the file's lock is held;
/// appenders waiting on the lock then append to the new file. A failed write (a full disk)
/// leaves the old file as it was.
/// Errors: kIoError naming the file.
Status write_file_locked(const std::string& path, std::string_view content);

/// Matches a params signature against a pattern token by token ('_'-separated). A pattern token
/// matches when it equals the signature token, is '*' (any one token), or is a range
/// `[lo-hi]` / `[lo-]` (tunekit's bucket syntax: a decimal token with lo <= value <= hi, or
/// value >= lo). Source: PyTorch TunableOp wildcard fallback (V26) for '*'; ranges are tunekit's
/// (docs/offline.md).
bool wildcard_match(std::string_view pattern, std::string_view signature) noexcept;

/// True when a params signature has a '*' or range token (it is a pattern, not a problem).
bool is_wildcard_signature(std::string_view signature) noexcept;

/// How general a wildcard pattern is: (number of '*' tokens, number of range tokens). Smaller
/// compares as more specific.
struct WildcardSpecificity {
  int stars = 0;   ///< '*' tokens
  int ranges = 0;  ///< '[lo-hi]' tokens
  friend auto operator<=>(const WildcardSpecificity&, const WildcardSpecificity&) = default;
};
/// Counts the '*' and range tokens of `pattern`.
WildcardSpecificity wildcard_specificity(std::string_view pattern) noexcept;

/// A range token `[lo-hi]` (hi < 0 for an open range `[lo-]`).
struct RangeToken {
  long long lo = 0;
  long long hi = -1;
};
/// Parses a range token; nullopt when `token` is not one (lo and hi decimal, lo <= hi).
std::optional<RangeToken> parse_range_token(std::string_view token) noexcept;
/// Formats `[lo-hi]`, or `[lo-]` when hi < 0.
std::string format_range_token(long long lo, long long hi);

}  // namespace tunekit
