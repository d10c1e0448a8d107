// A small evaluator for restriction expressions over tuning parameters, in Python syntax.
// Used by JSON space specs and replay data, e.g. "block_size_x*block_size_y<=1024".
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/core/status.hpp"

namespace tunekit {

/// The value of a parameter or sub-expression: a number (booleans are 0/1) or a string.
/// A string value views storage owned by the space (entity payloads) or by the Expression
/// (literals); it stays valid as long as both live.
struct ExprValue {
  enum class Kind : std::uint8_t { kNumber, kString };
  Kind kind = Kind::kNumber;
  double number = 0.0;
  std::string_view text;

  /// A number.
  static ExprValue of(double x) noexcept { return ExprValue{Kind::kNumber, x, {}}; }
  /// A string viewing `s` (not copied).
  static ExprValue of(std::string_view s) noexcept { return ExprValue{Kind::kString, 0.0, s}; }
  /// True for a number (booleans are numbers).
  bool is_number() const noexcept { return kind == Kind::kNumber; }
  /// Python truthiness: non-zero number, non-empty string.
  bool truthy() const noexcept { return is_number() ? number != 0.0 : !text.empty(); }
};

/// What a variable of an expression can hold, for Expression::check_types.
enum class ExprType : std::uint8_t { kNumber, kString, kAny };

/// A parsed expression with Python semantics for the subset Kernel Tuner restrictions use.
///
/// Grammar (lowest precedence first):
///   `or`/`||`, `and`/`&&`, `not`/`!`, comparisons `< <= > >= == !=` (chained as in Python:
///   `32 <= a*b <= 1024`), `in` / `not in` with a tuple or list literal, `|`, `^`, `&`,
///   `<< >>`, `+ -`, `* / // %`, unary `- + ~`, `**` (right associative), then atoms:
///   numbers (`16`, `1.5e3`, `0x10`), strings (`'a'`, `"a"`), `True`/`False`, names, calls of
///   `min max abs int float round floor ceil sqrt log log2 pow`, parentheses.
/// Semantics: `/` is true division, `//` floors, `%` takes the sign of the divisor, bitwise
///   operators act on integers; numbers are doubles (exact for integers below 2^53).
/// Errors:  parse errors are kParseError naming the column; evaluation errors (division by zero,
///   arithmetic on strings, a slot out of range) are kInvalidArgument.
/// Limits:  at most 200 nested parentheses, brackets, calls, `not`s and unary operators, and at
///   most 1000 operators on one path of the tree (a chain `a+b+...` counts each `+`), so that
///   neither parsing nor evaluation can exhaust the stack.
/// Cost:    a tree walk over a flat node array, no allocation per evaluation.
class Expression {
 public:
  /// Parses `text`. Variables are numbered in order of first appearance (see variables()).
  /// Errors: kParseError "expression '<text>': <what> at column <c>", also for input nested
  /// beyond the limits above.
  static Expected<Expression> parse(std::string_view text);

  /// The source text.
  const std::string& text() const noexcept;
  /// Variable names, in slot order.
  const std::vector<std::string>& variables() const noexcept;

  /// Reports an operation that fails whatever the values of variables of these types:
  /// arithmetic, bitwise or unary operators or a function call on a string, or an ordering
  /// comparison (`< <= > >=`) between a number and a string. Evaluation would fail there for
  /// every point, so a restriction containing one rejects every point that reaches it.
  /// `types[i]` is the type of variables()[i]; kAny, or no entry, assumes nothing.
  /// Errors: kInvalidArgument "expression '<text>': <what> at column <c>".
  Status check_types(std::span<const ExprType> types) const;

  /// Evaluates with `slots[i]` as the value of variables()[i].
  Expected<ExprValue> evaluate(std::span<const ExprValue> slots) const;
  /// Evaluates as a restriction: the truthiness of the result; false on any evaluation error
  /// (Kernel Tuner rejects a configuration whose restriction raises).
  bool test(std::span<const ExprValue> slots) const noexcept;

  /// Parsed form (opaque).
  struct Impl;

 private:
  explicit Expression(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace tunekit
