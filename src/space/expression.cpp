// Tokenizer, recursive-descent parser and tree-walking evaluator of restriction expressions.
// See include/tunekit/space/expression.hpp for the grammar and semantics.
#include "tunekit/space/expression.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <utility>

namespace tunekit {

namespace {

enum class Op : std::uint8_t {
  kNumber,
  kString,
  kVariable,
  kOr,
  kAnd,
  kNot,
  kCompare,  // chained: operands in args, operators in cmp_ops
  kIn,
  kNotIn,  // args[0] in (args[1..])
  kBitOr,
  kBitXor,
  kBitAnd,
  kShl,
  kShr,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kFloorDiv,
  kMod,
  kPow,
  kNeg,
  kPos,
  kInvert,
  kCall,
};

enum class Cmp : std::uint8_t { kLt, kLe, kGt, kGe, kEq, kNe };

enum class Fn : std::uint8_t {
  kMin,
  kMax,
  kAbs,
  kInt,
  kFloat,
  kRound,
  kFloor,
  kCeil,
  kSqrt,
  kLog,
  kLog2,
  kPow
};

/// The callable functions by name (the parser's lookup and the type checker's messages).
constexpr std::pair<std::string_view, Fn> kFunctions[] = {
    {"min", Fn::kMin},     {"max", Fn::kMax},     {"abs", Fn::kAbs},     {"int", Fn::kInt},
    {"float", Fn::kFloat}, {"round", Fn::kRound}, {"floor", Fn::kFloor}, {"ceil", Fn::kCeil},
    {"sqrt", Fn::kSqrt},   {"log", Fn::kLog},     {"log2", Fn::kLog2},   {"pow", Fn::kPow}};

struct Node {
  Op op = Op::kNumber;
  double number = 0.0;
  std::size_t slot = 0;  // kVariable: slot, kString: index into strings
  int a = -1, b = -1;    // operands of unary / binary nodes
  Fn fn = Fn::kMin;
  std::vector<int> args;  // kCompare, kIn, kCall
  std::vector<Cmp> cmp_ops;
  std::size_t column = 0;  // of the operator, function name or literal, for messages
};

// The parser recurses once per nesting level and the evaluator once per tree level; both are
// bounded so that no input exhausts the stack.
constexpr int kMaxNesting = 200;     // parentheses, brackets, calls, `not` and unary operators
constexpr int kMaxTreeDepth = 1000;  // operators on the longest path, chains included

enum class Tok : std::uint8_t {
  kEnd,
  kNumber,
  kString,
  kName,
  kOp,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kComma
};

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;
  double number = 0.0;
  std::size_t column = 0;
};

}  // namespace

struct Expression::Impl {
  std::string text;
  std::vector<std::string> variables;
  std::vector<std::string> strings;
  std::vector<Node> nodes;
  int root = -1;
};

namespace {

class Parser {
 public:
  explicit Parser(Expression::Impl& impl) : impl_(impl) {}

  Status run() {
    TUNEKIT_RETURN_IF_ERROR(tokenize());
    auto root = parse_or();
    if (!root) return root.status();
    if (peek().kind != Tok::kEnd) return error("unexpected '" + peek().text + "'", peek().column);
    if (too_deep_) {
      return error(
          fmt::format("more than {} operators on one path of the expression", kMaxTreeDepth),
          too_deep_column_);
    }
    impl_.root = *root;
    return Status::ok();
  }

 private:
  Status error(const std::string& what, std::size_t column) const {
    return Status(StatusCode::kParseError,
                  fmt::format("expression '{}': {} at column {}", impl_.text, what, column + 1));
  }

  Status tokenize() {
    const std::string& s = impl_.text;
    std::size_t i = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
        continue;
      }
      Token t;
      t.column = i;
      if (std::isdigit(static_cast<unsigned char>(c)) ||
          (c == '.' && i + 1 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
        const char* begin = s.c_str() + i;
        char* end = nullptr;
        double v = 0;
        if (c == '0' && i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
          v = static_cast<double>(std::strtoull(begin, &end, 16));
        } else {
          v = std::strtod(begin, &end);
        }
        if (end == begin) return error("bad number", i);
        t.kind = Tok::kNumber;
        t.number = v;
        t.text.assign(begin, static_cast<std::size_t>(end - begin));
        i += static_cast<std::size_t>(end - begin);
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        std::size_t j = i;
        while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
        t.kind = Tok::kName;
        t.text = s.substr(i, j - i);
        i = j;
      } else if (c == '\'' || c == '"') {
        std::size_t j = i + 1;
        while (j < s.size() && s[j] != c) ++j;
        if (j >= s.size()) return error("unterminated string", i);
        t.kind = Tok::kString;
        t.text = s.substr(i + 1, j - i - 1);
        i = j + 1;
      } else if (c == '(') {
        t.kind = Tok::kLParen;
        t.text = "(";
        ++i;
      } else if (c == ')') {
        t.kind = Tok::kRParen;
        t.text = ")";
        ++i;
      } else if (c == '[') {
        t.kind = Tok::kLBracket;
        t.text = "[";
        ++i;
      } else if (c == ']') {
        t.kind = Tok::kRBracket;
        t.text = "]";
        ++i;
      } else if (c == ',') {
        t.kind = Tok::kComma;
        t.text = ",";
        ++i;
      } else {
        static constexpr std::string_view kTwo[] = {
            "**", "//", "<=", ">=", "==", "!=", "&&", "||", "<<", ">>"};
        t.kind = Tok::kOp;
        for (auto op : kTwo) {
          if (s.compare(i, 2, op) == 0) {
            t.text = std::string(op);
            break;
          }
        }
        if (t.text.empty()) {
          if (std::string_view("+-*/%<>!&|^~").find(c) == std::string_view::npos) {
            return error(fmt::format("unexpected character '{}'", c), i);
          }
          t.text = std::string(1, c);
        }
        i += t.text.size();
      }
      tokens_.push_back(std::move(t));
    }
    Token end;
    end.kind = Tok::kEnd;
    end.text = "end of expression";
    end.column = s.size();
    tokens_.push_back(std::move(end));
    return Status::ok();
  }

  const Token& peek(std::size_t ahead = 0) const {
    return tokens_[std::min(pos_ + ahead, tokens_.size() - 1)];
  }
  bool is_op(std::string_view op, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::kOp && t.text == op;
  }
  bool is_name(std::string_view name, std::size_t ahead = 0) const {
    const Token& t = peek(ahead);
    return t.kind == Tok::kName && t.text == name;
  }

  int add(Node n) {
    int depth = 0;
    for (int child : n.args) depth = std::max(depth, depth_[static_cast<std::size_t>(child)]);
    for (int child : {n.a, n.b}) {
      if (child >= 0) depth = std::max(depth, depth_[static_cast<std::size_t>(child)]);
    }
    depth_.push_back(depth + 1);
    if (depth + 1 > kMaxTreeDepth && !too_deep_) {
      too_deep_ = true;
      too_deep_column_ = n.column;
    }
    impl_.nodes.push_back(std::move(n));
    return static_cast<int>(impl_.nodes.size() - 1);
  }
  int binary(Op op, int a, int b, std::size_t column) {
    Node n;
    n.op = op;
    n.a = a;
    n.b = b;
    n.column = column;
    return add(std::move(n));
  }

  /// Enters one nesting level at `column`; each successful enter() is paired with a leave().
  Status enter(std::size_t column) {
    if (++nesting_ > kMaxNesting) {
      return error(fmt::format("nested deeper than {} levels", kMaxNesting), column);
    }
    return Status::ok();
  }
  void leave() noexcept { --nesting_; }

  Expected<int> parse_or() {
    auto lhs = parse_and();
    if (!lhs) return lhs;
    int node = *lhs;
    while (is_name("or") || is_op("||")) {
      const std::size_t column = peek().column;
      ++pos_;
      auto rhs = parse_and();
      if (!rhs) return rhs;
      node = binary(Op::kOr, node, *rhs, column);
    }
    return node;
  }

  Expected<int> parse_and() {
    auto lhs = parse_not();
    if (!lhs) return lhs;
    int node = *lhs;
    while (is_name("and") || is_op("&&")) {
      const std::size_t column = peek().column;
      ++pos_;
      auto rhs = parse_not();
      if (!rhs) return rhs;
      node = binary(Op::kAnd, node, *rhs, column);
    }
    return node;
  }

  Expected<int> parse_not() {
    if (is_name("not") || is_op("!")) {
      const std::size_t column = peek().column;
      TUNEKIT_RETURN_IF_ERROR(enter(column));
      ++pos_;
      auto operand = parse_not();
      if (!operand) return operand;
      leave();
      return binary(Op::kNot, *operand, -1, column);
    }
    return parse_comparison();
  }

  std::optional<Cmp> comparison_op() const {
    const Token& t = peek();
    if (t.kind != Tok::kOp) return std::nullopt;
    if (t.text == "<") return Cmp::kLt;
    if (t.text == "<=") return Cmp::kLe;
    if (t.text == ">") return Cmp::kGt;
    if (t.text == ">=") return Cmp::kGe;
    if (t.text == "==") return Cmp::kEq;
    if (t.text == "!=") return Cmp::kNe;
    return std::nullopt;
  }

  Expected<int> parse_comparison() {
    auto first = parse_bitor();
    if (!first) return first;
    if (is_name("in") || (is_name("not") && is_name("in", 1))) {
      const bool negate = is_name("not");
      const std::size_t column = peek().column;
      pos_ += negate ? 2 : 1;
      const Token& open = peek();
      Tok close = Tok::kRParen;
      if (open.kind == Tok::kLParen)
        close = Tok::kRParen;
      else if (open.kind == Tok::kLBracket)
        close = Tok::kRBracket;
      else
        return error("'in' needs a tuple or list literal", open.column);
      TUNEKIT_RETURN_IF_ERROR(enter(open.column));
      ++pos_;
      Node n;
      n.op = negate ? Op::kNotIn : Op::kIn;
      n.column = column;
      n.args.push_back(*first);
      while (peek().kind != close) {
        auto item = parse_bitor();
        if (!item) return item;
        n.args.push_back(*item);
        if (peek().kind == Tok::kComma) {
          ++pos_;
          continue;
        }
        if (peek().kind != close) return error("expected ',' or closing bracket", peek().column);
      }
      ++pos_;
      leave();
      return add(std::move(n));
    }
    auto op = comparison_op();
    if (!op) return first;
    Node n;
    n.op = Op::kCompare;
    n.column = peek().column;
    n.args.push_back(*first);
    while (op) {
      ++pos_;
      auto rhs = parse_bitor();
      if (!rhs) return rhs;
      n.cmp_ops.push_back(*op);
      n.args.push_back(*rhs);
      op = comparison_op();
    }
    return add(std::move(n));
  }

  template <class Next>
  Expected<int> parse_left(std::initializer_list<std::pair<std::string_view, Op>> ops, Next next) {
    auto lhs = (this->*next)();
    if (!lhs) return lhs;
    int node = *lhs;
    for (;;) {
      std::optional<Op> found;
      for (const auto& [text, op] : ops) {
        if (is_op(text)) {
          found = op;
          break;
        }
      }
      if (!found) return node;
      const std::size_t column = peek().column;
      ++pos_;
      auto rhs = (this->*next)();
      if (!rhs) return rhs;
      node = binary(*found, node, *rhs, column);
    }
  }

  Expected<int> parse_bitor() { return parse_left({{"|", Op::kBitOr}}, &Parser::parse_bitxor); }
  Expected<int> parse_bitxor() { return parse_left({{"^", Op::kBitXor}}, &Parser::parse_bitand); }
  Expected<int> parse_bitand() { return parse_left({{"&", Op::kBitAnd}}, &Parser::parse_shift); }
  Expected<int> parse_shift() {
    return parse_left({{"<<", Op::kShl}, {">>", Op::kShr}}, &Parser::parse_arith);
  }
  Expected<int> parse_arith() {
    return parse_left({{"+", Op::kAdd}, {"-", Op::kSub}}, &Parser::parse_term);
  }
  Expected<int> parse_term() {
    return parse_left({{"*", Op::kMul}, {"//", Op::kFloorDiv}, {"/", Op::kDiv}, {"%", Op::kMod}},
                      &Parser::parse_unary);
  }

  Expected<int> parse_unary() {
    if (is_op("-") || is_op("+") || is_op("~")) {
      const Op op = is_op("-") ? Op::kNeg : (is_op("+") ? Op::kPos : Op::kInvert);
      const std::size_t column = peek().column;
      TUNEKIT_RETURN_IF_ERROR(enter(column));
      ++pos_;
      auto operand = parse_unary();
      if (!operand) return operand;
      leave();
      return binary(op, *operand, -1, column);
    }
    return parse_power();
  }

  Expected<int> parse_power() {
    auto base = parse_atom();
    if (!base) return base;
    if (is_op("**")) {
      const std::size_t column = peek().column;
      TUNEKIT_RETURN_IF_ERROR(enter(column));
      ++pos_;
      auto exponent = parse_unary();  // right associative, binds tighter than unary on the left
      if (!exponent) return exponent;
      leave();
      return binary(Op::kPow, *base, *exponent, column);
    }
    return base;
  }

  Expected<int> parse_atom() {
    const Token t = peek();
    switch (t.kind) {
      case Tok::kNumber: {
        ++pos_;
        Node n;
        n.column = t.column;
        n.op = Op::kNumber;
        n.number = t.number;
        return add(std::move(n));
      }
      case Tok::kString: {
        ++pos_;
        Node n;
        n.column = t.column;
        n.op = Op::kString;
        n.slot = impl_.strings.size();
        impl_.strings.push_back(t.text);
        return add(std::move(n));
      }
      case Tok::kLParen: {
        TUNEKIT_RETURN_IF_ERROR(enter(t.column));
        ++pos_;
        auto inner = parse_or();
        if (!inner) return inner;
        if (peek().kind != Tok::kRParen) return error("expected ')'", peek().column);
        ++pos_;
        leave();
        return inner;
      }
      case Tok::kName: {
        ++pos_;
        if (t.text == "True" || t.text == "true" || t.text == "False" || t.text == "false") {
          Node n;
          n.op = Op::kNumber;
          n.column = t.column;
          n.number = (t.text[0] == 'T' || t.text[0] == 't') ? 1.0 : 0.0;
          return add(std::move(n));
        }
        if (peek().kind == Tok::kLParen) return parse_call(t);
        Node n;
        n.op = Op::kVariable;
        n.column = t.column;
        auto& vars = impl_.variables;
        auto it = std::find(vars.begin(), vars.end(), t.text);
        n.slot = static_cast<std::size_t>(it - vars.begin());
        if (it == vars.end()) vars.push_back(t.text);
        return add(std::move(n));
      }
      default:
        return error("unexpected '" + t.text + "'", t.column);
    }
  }

  Expected<int> parse_call(const Token& name) {
    std::optional<Fn> fn;
    for (const auto& [text, f] : kFunctions) {
      if (name.text == text) fn = f;
    }
    if (!fn) return error("unknown function '" + name.text + "'", name.column);
    TUNEKIT_RETURN_IF_ERROR(enter(name.column));
    ++pos_;  // '('
    Node n;
    n.op = Op::kCall;
    n.fn = *fn;
    n.column = name.column;
    while (peek().kind != Tok::kRParen) {
      auto arg = parse_or();
      if (!arg) return arg;
      n.args.push_back(*arg);
      if (peek().kind == Tok::kComma) {
        ++pos_;
        continue;
      }
      if (peek().kind != Tok::kRParen) return error("expected ',' or ')'", peek().column);
    }
    ++pos_;
    const std::size_t argc = n.args.size();
    const bool variadic = *fn == Fn::kMin || *fn == Fn::kMax;
    const std::size_t want = *fn == Fn::kPow ? 2 : 1;
    if ((variadic && argc == 0) || (!variadic && argc != want)) {
      return error(fmt::format("wrong number of arguments to '{}'", name.text), name.column);
    }
    leave();
    return add(std::move(n));
  }

  Expression::Impl& impl_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
  int nesting_ = 0;
  std::vector<int> depth_;  // per node: operators on its longest path, itself included
  bool too_deep_ = false;
  std::size_t too_deep_column_ = 0;
};

struct EvalError {};

class Evaluator {
 public:
  Evaluator(const Expression::Impl& impl, std::span<const ExprValue> slots)
      : impl_(impl), slots_(slots) {}

  ExprValue eval(int index) {
    const Node& n = impl_.nodes[static_cast<std::size_t>(index)];
    switch (n.op) {
      case Op::kNumber:
        return ExprValue::of(n.number);
      case Op::kString:
        return ExprValue::of(std::string_view(impl_.strings[n.slot]));
      case Op::kVariable:
        if (n.slot >= slots_.size()) throw EvalError{};
        return slots_[n.slot];
      case Op::kOr: {
        ExprValue a = eval(n.a);
        return a.truthy() ? a : eval(n.b);
      }
      case Op::kAnd: {
        ExprValue a = eval(n.a);
        return !a.truthy() ? a : eval(n.b);
      }
      case Op::kNot:
        return ExprValue::of(eval(n.a).truthy() ? 0.0 : 1.0);
      case Op::kCompare: {
        ExprValue lhs = eval(n.args[0]);
        for (std::size_t i = 0; i < n.cmp_ops.size(); ++i) {
          ExprValue rhs = eval(n.args[i + 1]);
          if (!compare(n.cmp_ops[i], lhs, rhs)) return ExprValue::of(0.0);
          lhs = rhs;
        }
        return ExprValue::of(1.0);
      }
      case Op::kIn:
      case Op::kNotIn: {
        ExprValue x = eval(n.args[0]);
        bool found = false;
        for (std::size_t i = 1; i < n.args.size() && !found; ++i) {
          found = compare(Cmp::kEq, x, eval(n.args[i]));
        }
        return ExprValue::of((found == (n.op == Op::kIn)) ? 1.0 : 0.0);
      }
      case Op::kNeg:
        return ExprValue::of(-num(eval(n.a)));
      case Op::kPos:
        return ExprValue::of(num(eval(n.a)));
      case Op::kInvert:
        return ExprValue::of(static_cast<double>(~integer(num(eval(n.a)))));
      case Op::kCall:
        return call(n);
      default:
        break;
    }
    const double a = num(eval(n.a));
    const double b = num(eval(n.b));
    switch (n.op) {
      case Op::kAdd:
        return ExprValue::of(a + b);
      case Op::kSub:
        return ExprValue::of(a - b);
      case Op::kMul:
        return ExprValue::of(a * b);
      case Op::kDiv:
        if (b == 0.0) throw EvalError{};
        return ExprValue::of(a / b);
      case Op::kFloorDiv:
        if (b == 0.0) throw EvalError{};
        return ExprValue::of(std::floor(a / b));
      case Op::kMod: {
        if (b == 0.0) throw EvalError{};
        double r = std::fmod(a, b);
        if (r != 0.0 && ((r < 0) != (b < 0))) r += b;
        return ExprValue::of(r);
      }
      case Op::kPow:
        return ExprValue::of(power(a, b));
      case Op::kBitOr:
        return ExprValue::of(static_cast<double>(integer(a) | integer(b)));
      case Op::kBitXor:
        return ExprValue::of(static_cast<double>(integer(a) ^ integer(b)));
      case Op::kBitAnd:
        return ExprValue::of(static_cast<double>(integer(a) & integer(b)));
      case Op::kShl: {
        const std::int64_t s = integer(b);
        if (s < 0 || s > 62) throw EvalError{};
        return ExprValue::of(static_cast<double>(integer(a) * (std::int64_t{1} << s)));
      }
      case Op::kShr: {
        const std::int64_t s = integer(b);
        if (s < 0 || s > 62) throw EvalError{};
        return ExprValue::of(static_cast<double>(integer(a) >> s));
      }
      default:
        throw EvalError{};
    }
  }

 private:
  static double num(const ExprValue& v) {
    if (!v.is_number()) throw EvalError{};
    return v.number;
  }
  /// Python's `**` and pow() on floats: 0 to a negative power raises ZeroDivisionError, a
  /// negative base to a fractional power gives a complex number (no comparison accepts it).
  static double power(double a, double b) {
    if (a == 0.0 && b < 0.0) throw EvalError{};
    const double r = std::pow(a, b);
    if (std::isnan(r)) throw EvalError{};
    return r;
  }
  /// int(), round(), floor() and ceil() raise on infinities and NaN in Python.
  static double finite(double x) {
    if (!std::isfinite(x)) throw EvalError{};
    return x;
  }
  static std::int64_t integer(double x) {
    if (!std::isfinite(x) || std::abs(x) > 9.0e15 || x != std::floor(x)) throw EvalError{};
    return static_cast<std::int64_t>(x);
  }
  static bool compare(Cmp op, const ExprValue& a, const ExprValue& b) {
    if (a.is_number() != b.is_number()) {
      if (op == Cmp::kEq) return false;
      if (op == Cmp::kNe) return true;
      throw EvalError{};  // Python: '<' not supported between str and int
    }
    if (a.is_number()) {
      switch (op) {
        case Cmp::kLt:
          return a.number < b.number;
        case Cmp::kLe:
          return a.number <= b.number;
        case Cmp::kGt:
          return a.number > b.number;
        case Cmp::kGe:
          return a.number >= b.number;
        case Cmp::kEq:
          return a.number == b.number;
        case Cmp::kNe:
          return a.number != b.number;
      }
    }
    const int c = a.text.compare(b.text);
    switch (op) {
      case Cmp::kLt:
        return c < 0;
      case Cmp::kLe:
        return c <= 0;
      case Cmp::kGt:
        return c > 0;
      case Cmp::kGe:
        return c >= 0;
      case Cmp::kEq:
        return c == 0;
      case Cmp::kNe:
        return c != 0;
    }
    return false;
  }

  ExprValue call(const Node& n) {
    if (n.fn == Fn::kMin || n.fn == Fn::kMax) {
      double best = num(eval(n.args[0]));
      for (std::size_t i = 1; i < n.args.size(); ++i) {
        const double v = num(eval(n.args[i]));
        best = n.fn == Fn::kMin ? std::min(best, v) : std::max(best, v);
      }
      return ExprValue::of(best);
    }
    const double x = num(eval(n.args[0]));
    switch (n.fn) {
      case Fn::kAbs:
        return ExprValue::of(std::abs(x));
      case Fn::kInt:
        return ExprValue::of(std::trunc(finite(x)));
      case Fn::kFloat:
        return ExprValue::of(x);
      case Fn::kRound:
        return ExprValue::of(std::nearbyint(finite(x)));  // half to even, as Python 3
      case Fn::kFloor:
        return ExprValue::of(std::floor(finite(x)));
      case Fn::kCeil:
        return ExprValue::of(std::ceil(finite(x)));
      case Fn::kSqrt:
        if (x < 0) throw EvalError{};
        return ExprValue::of(std::sqrt(x));
      case Fn::kLog:
        if (x <= 0) throw EvalError{};
        return ExprValue::of(std::log(x));
      case Fn::kLog2:
        if (x <= 0) throw EvalError{};
        return ExprValue::of(std::log2(x));
      case Fn::kPow:
        return ExprValue::of(power(x, num(eval(n.args[1]))));
      default:
        throw EvalError{};
    }
  }

  const Expression::Impl& impl_;
  std::span<const ExprValue> slots_;
};

std::string_view op_text(Op op) {
  switch (op) {
    case Op::kBitOr:
      return "|";
    case Op::kBitXor:
      return "^";
    case Op::kBitAnd:
      return "&";
    case Op::kShl:
      return "<<";
    case Op::kShr:
      return ">>";
    case Op::kAdd:
      return "+";
    case Op::kSub:
      return "-";
    case Op::kMul:
      return "*";
    case Op::kDiv:
      return "/";
    case Op::kFloorDiv:
      return "//";
    case Op::kMod:
      return "%";
    case Op::kPow:
      return "**";
    case Op::kNeg:
      return "unary -";
    case Op::kPos:
      return "unary +";
    case Op::kInvert:
      return "~";
    default:
      return "operator";
  }
}

std::string_view fn_text(Fn fn) {
  for (const auto& [text, f] : kFunctions) {
    if (f == fn) return text;
  }
  return "function";
}

/// Static types of the nodes of an expression, given the types of its variables; finds the
/// operations that fail for every value (see Expression::check_types).
class TypeChecker {
 public:
  TypeChecker(const Expression::Impl& impl, std::span<const ExprType> types)
      : impl_(impl), types_(types) {}

  Expected<ExprType> type_of(int index) const {
    const Node& n = impl_.nodes[static_cast<std::size_t>(index)];
    switch (n.op) {
      case Op::kNumber:
        return ExprType::kNumber;
      case Op::kString:
        return ExprType::kString;
      case Op::kVariable:
        return n.slot < types_.size() ? types_[n.slot] : ExprType::kAny;
      case Op::kOr:
      case Op::kAnd: {  // the value of one operand
        auto a = type_of(n.a);
        if (!a) return a;
        auto b = type_of(n.b);
        if (!b) return b;
        return *a == *b ? *a : ExprType::kAny;
      }
      case Op::kNot: {
        auto a = type_of(n.a);
        if (!a) return a;
        return ExprType::kNumber;
      }
      case Op::kCompare: {
        std::vector<ExprType> t;
        for (int arg : n.args) {
          auto x = type_of(arg);
          if (!x) return x;
          t.push_back(*x);
        }
        for (std::size_t i = 0; i < n.cmp_ops.size(); ++i) {
          const bool ordering = n.cmp_ops[i] != Cmp::kEq && n.cmp_ops[i] != Cmp::kNe;
          const bool mixed = (t[i] == ExprType::kNumber && t[i + 1] == ExprType::kString) ||
                             (t[i] == ExprType::kString && t[i + 1] == ExprType::kNumber);
          if (ordering && mixed) {
            return error("an ordering comparison between a number and a string always fails",
                         n.column);
          }
        }
        return ExprType::kNumber;
      }
      case Op::kIn:
      case Op::kNotIn:
        for (int arg : n.args) {
          auto x = type_of(arg);
          if (!x) return x;
        }
        return ExprType::kNumber;
      case Op::kCall:
        for (int arg : n.args) {
          auto x = type_of(arg);
          if (!x) return x;
          if (*x == ExprType::kString) {
            return error(fmt::format("'{}' of {} always fails", fn_text(n.fn), operand(arg)),
                         n.column);
          }
        }
        return ExprType::kNumber;
      default:
        break;
    }
    for (int arg : {n.a, n.b}) {  // arithmetic, bitwise and unary operators
      if (arg < 0) continue;
      auto x = type_of(arg);
      if (!x) return x;
      if (*x == ExprType::kString) {
        return error(fmt::format("'{}' on {} always fails", op_text(n.op), operand(arg)), n.column);
      }
    }
    return ExprType::kNumber;
  }

 private:
  Status error(const std::string& what, std::size_t column) const {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("expression '{}': {} at column {}", impl_.text, what, column + 1));
  }
  /// "the string parameter 'mode'" for a variable, "a string" otherwise.
  std::string operand(int index) const {
    const Node& n = impl_.nodes[static_cast<std::size_t>(index)];
    if (n.op == Op::kVariable) {
      return fmt::format("the string parameter '{}'", impl_.variables[n.slot]);
    }
    return "a string";
  }

  const Expression::Impl& impl_;
  std::span<const ExprType> types_;
};

}  // namespace

Expected<Expression> Expression::parse(std::string_view text) {
  auto impl = std::make_shared<Impl>();
  impl->text = std::string(text);
  Parser parser(*impl);
  Status st = parser.run();
  if (!st) return st;
  return Expression(std::move(impl));
}

const std::string& Expression::text() const noexcept { return impl_->text; }

Status Expression::check_types(std::span<const ExprType> types) const {
  auto t = TypeChecker(*impl_, types).type_of(impl_->root);
  return t ? Status::ok() : t.status();
}

const std::vector<std::string>& Expression::variables() const noexcept { return impl_->variables; }

Expected<ExprValue> Expression::evaluate(std::span<const ExprValue> slots) const {
  if (slots.size() < impl_->variables.size()) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("expression '{}': {} variables but {} values", impl_->text,
                              impl_->variables.size(), slots.size()));
  }
  try {
    return Evaluator(*impl_, slots).eval(impl_->root);
  } catch (const EvalError&) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("expression '{}': evaluation failed (division by zero, a bad "
                              "operand type or a non-integer bitwise operand)",
                              impl_->text));
  }
}

bool Expression::test(std::span<const ExprValue> slots) const noexcept {
  if (slots.size() < impl_->variables.size()) return false;
  try {
    return Evaluator(*impl_, slots).eval(impl_->root).truthy();
  } catch (...) {
    return false;
  }
}

}  // namespace tunekit
