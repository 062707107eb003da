#include "spool/stream/expression.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <optional>
#include <vector>

namespace spool {

enum class Op {
  kLiteral,
  kColumn,
  kNegate,
  kNot,
  kAnd,
  kOr,
  kCompare,
  kArithmetic,
  kConcat,
  kIsNull,
  kIsNotNull,
  kCase,
  kCoalesce,
  kLower,
  kUpper,
  kLength,
  kAbs,
  kRound,
  kDateTrunc,
  kCast
};

struct Expression::Node {
  Op op = Op::kLiteral;
  size_t pos = 1;                  // the column of `text` it starts at
  std::optional<ColumnType> type;  // none: the NULL literal
  bool nullable = false;
  Value literal;       // kLiteral
  size_t column = 0;   // kColumn
  std::string symbol;  // kCompare, kArithmetic: the operator
  int64_t unit = 0;    // kRound: digits; kDateTrunc: micros
  std::vector<std::unique_ptr<Node>> args;
};

namespace {

using Node = Expression::Node;
using NodePtr = std::unique_ptr<Node>;

Status ErrorAt(size_t pos, std::string_view what) {
  return Status::InvalidArgument("at column " + std::to_string(pos) + ": " + std::string(what));
}

bool IsNumeric(std::optional<ColumnType> t) { return t == ColumnType::kInt64 || t == ColumnType::kDouble; }

std::string TypeName(std::optional<ColumnType> t) { return t ? std::string(ColumnTypeName(*t)) : "null"; }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ---------------------------------------------------------------------------
// Tokens

enum class Tok { kEnd, kNumber, kString, kName, kQuotedName, kSymbol };

struct Token {
  Tok kind = Tok::kEnd;
  std::string text;  // the name, the string's contents, the number or symbol as written
  size_t pos = 1;
};

constexpr size_t kMaxTokens = 4096;

Status Tokenize(std::string_view in, std::vector<Token>* tokens) {
  size_t i = 0;
  while (true) {
    while (i < in.size() && std::isspace(static_cast<unsigned char>(in[i]))) ++i;
    Token t;
    t.pos = i + 1;
    if (i == in.size()) {
      tokens->push_back(t);
      return Status::OK();
    }
    const char c = in[i];
    const auto digit = [&](size_t at) { return at < in.size() && std::isdigit(static_cast<unsigned char>(in[at])); };
    if (digit(i) || (c == '.' && digit(i + 1))) {
      size_t j = i;
      while (j < in.size() && (std::isalnum(static_cast<unsigned char>(in[j])) || in[j] == '.' ||
                               ((in[j] == '+' || in[j] == '-') && (in[j - 1] == 'e' || in[j - 1] == 'E')))) {
        ++j;
      }
      t.kind = Tok::kNumber;
      t.text = std::string(in.substr(i, j - i));
      i = j;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < in.size() && (std::isalnum(static_cast<unsigned char>(in[j])) || in[j] == '_')) ++j;
      t.kind = Tok::kName;
      t.text = std::string(in.substr(i, j - i));
      i = j;
    } else if (c == '\'' || c == '`') {
      t.kind = c == '\'' ? Tok::kString : Tok::kQuotedName;
      size_t j = i + 1;
      while (true) {
        if (j >= in.size()) {
          return ErrorAt(t.pos, c == '\'' ? "the string is not closed" : "the quoted name is not closed");
        }
        if (in[j] == c) {
          if (j + 1 < in.size() && in[j + 1] == c) {
            t.text.push_back(c);
            j += 2;
            continue;
          }
          break;
        }
        t.text.push_back(in[j++]);
      }
      i = j + 1;
    } else {
      static constexpr std::string_view kTwo[] = {"<=", ">=", "<>", "!=", "==", "||"};
      t.kind = Tok::kSymbol;
      const std::string_view rest = in.substr(i);
      const auto two =
          std::find_if(std::begin(kTwo), std::end(kTwo), [&](std::string_view s) { return rest.starts_with(s); });
      if (two != std::end(kTwo)) {
        t.text = std::string(*two);
      } else if (std::string_view("=<>+-*/%(),").find(c) != std::string_view::npos) {
        t.text = std::string(1, c);
      } else {
        return ErrorAt(t.pos, "unexpected character '" + std::string(1, c) + "'");
      }
      i += t.text.size();
    }
    // Long chains (a + b + …) nest their nodes as deep as they are long.
    if (tokens->size() == kMaxTokens) return ErrorAt(t.pos, "longer than " + std::to_string(kMaxTokens) + " tokens");
    tokens->push_back(std::move(t));
  }
}

// ---------------------------------------------------------------------------
// Parsing and type checking

class Parser {
 public:
  Parser(std::vector<Token> tokens, const Schema& schema) : tokens_(std::move(tokens)), schema_(schema) {}

  Status ParseAll(NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(ParseOr(out));
    if (Peek().kind != Tok::kEnd) return ErrorAt(Peek().pos, "unexpected " + Describe(Peek()));
    return Status::OK();
  }

 private:
  const Token& Peek() const { return tokens_[next_]; }
  const Token& Take() { return tokens_[next_ < tokens_.size() - 1 ? next_++ : next_]; }
  bool IsKeyword(std::string_view word) const { return Peek().kind == Tok::kName && Lower(Peek().text) == word; }
  bool IsSymbol(std::string_view symbol) const { return Peek().kind == Tok::kSymbol && Peek().text == symbol; }
  static std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::kEnd:
        return "end of expression";
      case Tok::kString:
        return "string '" + t.text + "'";
      default:
        return "'" + t.text + "'";
    }
  }
  Status Expect(std::string_view symbol) {
    if (!IsSymbol(symbol)) {
      return ErrorAt(Peek().pos, "expected '" + std::string(symbol) + "', found " + Describe(Peek()));
    }
    Take();
    return Status::OK();
  }
  Status ExpectKeyword(std::string_view word) {
    if (!IsKeyword(word)) return ErrorAt(Peek().pos, "expected " + std::string(word) + ", found " + Describe(Peek()));
    Take();
    return Status::OK();
  }

  static NodePtr Make(Op op, size_t pos, std::optional<ColumnType> type, bool nullable) {
    auto node = std::make_unique<Node>();
    node->op = op;
    node->pos = pos;
    node->type = type;
    node->nullable = nullable;
    return node;
  }
  // `node` over (*left, right), in place of *left.
  static void Adopt(NodePtr node, NodePtr* left, NodePtr right) {
    node->args.push_back(std::move(*left));
    node->args.push_back(std::move(right));
    *left = std::move(node);
  }
  static bool AnyNullable(const std::vector<NodePtr>& args) {
    return std::any_of(args.begin(), args.end(), [](const NodePtr& a) { return a->nullable; });
  }
  static Status NeedBool(const Node& n, std::string_view where) {
    if (n.type && n.type != ColumnType::kBool) {
      return ErrorAt(n.pos, std::string(where) + " needs a bool, not " + TypeName(n.type));
    }
    return Status::OK();
  }

  // Recursion is bounded, so that no text can exhaust the stack of the
  // parser or of evaluation.
  static constexpr int kMaxDepth = 200;
  class Nested {
   public:
    explicit Nested(Parser* parser) : parser_(parser) { ++parser_->depth_; }
    ~Nested() { --parser_->depth_; }
    Status Check() const {
      if (parser_->depth_ <= kMaxDepth) return Status::OK();
      return ErrorAt(parser_->Peek().pos, "nested more than " + std::to_string(kMaxDepth) + " deep");
    }

   private:
    Parser* parser_;
  };

  Status ParseOr(NodePtr* out) {
    const Nested nested(this);
    SPOOL_RETURN_IF_ERROR(nested.Check());
    SPOOL_RETURN_IF_ERROR(ParseAnd(out));
    while (IsKeyword("or")) {
      const size_t pos = Take().pos;
      NodePtr right;
      SPOOL_RETURN_IF_ERROR(ParseAnd(&right));
      SPOOL_RETURN_IF_ERROR(Logical(Op::kOr, pos, out, std::move(right)));
    }
    return Status::OK();
  }

  Status ParseAnd(NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(ParseNot(out));
    while (IsKeyword("and")) {
      const size_t pos = Take().pos;
      NodePtr right;
      SPOOL_RETURN_IF_ERROR(ParseNot(&right));
      SPOOL_RETURN_IF_ERROR(Logical(Op::kAnd, pos, out, std::move(right)));
    }
    return Status::OK();
  }

  Status Logical(Op op, size_t pos, NodePtr* left, NodePtr right) {
    const char* name = op == Op::kAnd ? "AND" : "OR";
    SPOOL_RETURN_IF_ERROR(NeedBool(**left, name));
    SPOOL_RETURN_IF_ERROR(NeedBool(*right, name));
    const bool nullable = (*left)->nullable || right->nullable;
    Adopt(Make(op, pos, ColumnType::kBool, nullable), left, std::move(right));
    return Status::OK();
  }

  Status ParseNot(NodePtr* out) {
    if (!IsKeyword("not")) return ParseCompare(out);
    const Nested nested(this);
    SPOOL_RETURN_IF_ERROR(nested.Check());
    const size_t pos = Take().pos;
    NodePtr operand;
    SPOOL_RETURN_IF_ERROR(ParseNot(&operand));
    SPOOL_RETURN_IF_ERROR(NeedBool(*operand, "NOT"));
    *out = Make(Op::kNot, pos, ColumnType::kBool, operand->nullable);
    (*out)->args.push_back(std::move(operand));
    return Status::OK();
  }

  Status ParseCompare(NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(ParseSum(out));
    if (IsKeyword("is")) {
      const size_t pos = Take().pos;
      const bool negated = IsKeyword("not");
      if (negated) Take();
      SPOOL_RETURN_IF_ERROR(ExpectKeyword("null"));
      NodePtr node = Make(negated ? Op::kIsNotNull : Op::kIsNull, pos, ColumnType::kBool, false);
      node->args.push_back(std::move(*out));
      *out = std::move(node);
      return Status::OK();
    }
    static constexpr std::string_view kComparisons[] = {"=", "==", "!=", "<>", "<", "<=", ">", ">="};
    if (Peek().kind != Tok::kSymbol ||
        std::find(std::begin(kComparisons), std::end(kComparisons), Peek().text) == std::end(kComparisons)) {
      return Status::OK();
    }
    const Token op = Take();
    NodePtr right;
    SPOOL_RETURN_IF_ERROR(ParseSum(&right));
    const auto lt = (*out)->type, rt = right->type;
    const bool comparable = !lt || !rt || lt == rt || (IsNumeric(lt) && IsNumeric(rt));
    if (!comparable) return ErrorAt(op.pos, "cannot compare " + TypeName(lt) + " with " + TypeName(rt));
    NodePtr node = Make(Op::kCompare, op.pos, ColumnType::kBool, (*out)->nullable || right->nullable);
    node->symbol = op.text == "==" ? "=" : op.text == "<>" ? "!=" : op.text;
    Adopt(std::move(node), out, std::move(right));
    return Status::OK();
  }

  Status ParseSum(NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(ParseProduct(out));
    while (IsSymbol("+") || IsSymbol("-") || IsSymbol("||")) {
      const Token op = Take();
      NodePtr right;
      SPOOL_RETURN_IF_ERROR(ParseProduct(&right));
      SPOOL_RETURN_IF_ERROR(Binary(op, out, std::move(right)));
    }
    return Status::OK();
  }

  Status ParseProduct(NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(ParseUnary(out));
    while (IsSymbol("*") || IsSymbol("/") || IsSymbol("%")) {
      const Token op = Take();
      NodePtr right;
      SPOOL_RETURN_IF_ERROR(ParseUnary(&right));
      SPOOL_RETURN_IF_ERROR(Binary(op, out, std::move(right)));
    }
    return Status::OK();
  }

  Status Binary(const Token& op, NodePtr* left, NodePtr right) {
    const auto lt = (*left)->type, rt = right->type;
    std::optional<ColumnType> type;
    if (op.text == "||") {
      for (const auto t : {lt, rt}) {
        if (t && t != ColumnType::kString) return ErrorAt(op.pos, "|| joins strings, not " + TypeName(t));
      }
      type = ColumnType::kString;
    } else {
      for (const auto t : {lt, rt}) {
        if (t && !IsNumeric(t)) return ErrorAt(op.pos, "'" + op.text + "' needs numbers, not " + TypeName(t));
      }
      const bool doubles = op.text == "/" || lt == ColumnType::kDouble || rt == ColumnType::kDouble;
      type = doubles ? ColumnType::kDouble : ColumnType::kInt64;
    }
    NodePtr node =
        Make(op.text == "||" ? Op::kConcat : Op::kArithmetic, op.pos, type, (*left)->nullable || right->nullable);
    node->symbol = op.text;
    Adopt(std::move(node), left, std::move(right));
    return Status::OK();
  }

  Status ParseUnary(NodePtr* out) {
    if (!IsSymbol("-")) return ParsePrimary(out);
    const Nested nested(this);
    SPOOL_RETURN_IF_ERROR(nested.Check());
    const size_t pos = Take().pos;
    NodePtr operand;
    SPOOL_RETURN_IF_ERROR(ParseUnary(&operand));
    if (operand->type && !IsNumeric(operand->type)) {
      return ErrorAt(pos, "'-' needs a number, not " + TypeName(operand->type));
    }
    *out = Make(Op::kNegate, pos, operand->type ? operand->type : ColumnType::kInt64, operand->nullable);
    (*out)->args.push_back(std::move(operand));
    return Status::OK();
  }

  Status ParsePrimary(NodePtr* out) {
    const Token t = Peek();
    switch (t.kind) {
      case Tok::kEnd:
        return ErrorAt(t.pos, "expected a value, found end of expression");
      case Tok::kNumber:
        Take();
        return Number(t, out);
      case Tok::kString:
        Take();
        *out = Make(Op::kLiteral, t.pos, ColumnType::kString, false);
        (*out)->literal = t.text;
        return Status::OK();
      case Tok::kQuotedName:
        Take();
        return ColumnRef(t, out);
      case Tok::kSymbol:
        if (t.text != "(") return ErrorAt(t.pos, "expected a value, found " + Describe(t));
        Take();
        SPOOL_RETURN_IF_ERROR(ParseOr(out));
        return Expect(")");
      case Tok::kName:
        break;
    }
    const std::string word = Lower(t.text);
    Take();
    if (word == "true" || word == "false") {
      *out = Make(Op::kLiteral, t.pos, ColumnType::kBool, false);
      (*out)->literal = word == "true";
      return Status::OK();
    }
    if (word == "null") {
      *out = Make(Op::kLiteral, t.pos, std::nullopt, true);
      return Status::OK();
    }
    if (word == "timestamp" && Peek().kind == Tok::kString) {
      const Token text = Take();
      int64_t micros = 0;
      if (!ParseDateTimeUtc(text.text, &micros)) {
        return ErrorAt(text.pos, "timestamp '" + text.text + "' must be 'yyyy-MM-dd HH:mm:ss[.ffffff]'");
      }
      *out = Make(Op::kLiteral, t.pos, ColumnType::kTimestamp, false);
      (*out)->literal = Timestamp{micros};
      return Status::OK();
    }
    if (word == "case") return Case(t.pos, out);
    if (word == "cast" && IsSymbol("(")) return Cast(t.pos, out);
    if (IsSymbol("(")) return Call(t, word, out);
    return ColumnRef(t, out);
  }

  Status Number(const Token& t, NodePtr* out) {
    const char* begin = t.text.data();
    const char* end = begin + t.text.size();
    const bool real = t.text.find_first_of(".eE") != std::string::npos;
    if (!real) {
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(begin, end, v);
      if (ec == std::errc::result_out_of_range) return ErrorAt(t.pos, "integer " + t.text + " does not fit in int64");
      if (ec == std::errc() && ptr == end) {
        *out = Make(Op::kLiteral, t.pos, ColumnType::kInt64, false);
        (*out)->literal = v;
        return Status::OK();
      }
    } else {
      double v = 0;
      auto [ptr, ec] = std::from_chars(begin, end, v);
      if (ec == std::errc() && ptr == end && std::isfinite(v)) {
        *out = Make(Op::kLiteral, t.pos, ColumnType::kDouble, false);
        (*out)->literal = v;
        return Status::OK();
      }
    }
    return ErrorAt(t.pos, "malformed number '" + t.text + "'");
  }

  Status ColumnRef(const Token& t, NodePtr* out) {
    const std::optional<size_t> index = schema_.FindColumn(t.text);
    if (!index) return ErrorAt(t.pos, "unknown column '" + t.text + "'");
    const Column& column = schema_.columns()[*index];
    *out = Make(Op::kColumn, t.pos, column.type, column.nullable);
    (*out)->column = *index;
    return Status::OK();
  }

  // The type a list of branches shares: numbers mix to double, NULL fits any.
  static Status Common(const std::vector<const Node*>& nodes, std::string_view what, std::optional<ColumnType>* type) {
    for (const Node* n : nodes) {
      if (!n->type) continue;
      if (!*type || *type == n->type) {
        *type = n->type;
      } else if (IsNumeric(*type) && IsNumeric(n->type)) {
        *type = ColumnType::kDouble;
      } else {
        return ErrorAt(n->pos, std::string(what) + " mixes " + TypeName(*type) + " and " + TypeName(n->type));
      }
    }
    return Status::OK();
  }

  Status Case(size_t pos, NodePtr* out) {
    NodePtr node = Make(Op::kCase, pos, std::nullopt, false);
    std::vector<const Node*> results;
    while (IsKeyword("when")) {
      Take();
      NodePtr when, then;
      SPOOL_RETURN_IF_ERROR(ParseOr(&when));
      SPOOL_RETURN_IF_ERROR(NeedBool(*when, "WHEN"));
      SPOOL_RETURN_IF_ERROR(ExpectKeyword("then"));
      SPOOL_RETURN_IF_ERROR(ParseOr(&then));
      results.push_back(then.get());
      node->args.push_back(std::move(when));
      node->args.push_back(std::move(then));
    }
    if (node->args.empty()) return ErrorAt(Peek().pos, "CASE needs WHEN, found " + Describe(Peek()));
    bool has_else = false;
    if (IsKeyword("else")) {
      Take();
      NodePtr otherwise;
      SPOOL_RETURN_IF_ERROR(ParseOr(&otherwise));
      results.push_back(otherwise.get());
      node->args.push_back(std::move(otherwise));
      has_else = true;
    }
    SPOOL_RETURN_IF_ERROR(ExpectKeyword("end"));
    SPOOL_RETURN_IF_ERROR(Common(results, "CASE", &node->type));
    node->nullable =
        !has_else || std::any_of(results.begin(), results.end(), [](const Node* n) { return n->nullable; });
    *out = std::move(node);
    return Status::OK();
  }

  Status Cast(size_t pos, NodePtr* out) {
    SPOOL_RETURN_IF_ERROR(Expect("("));
    NodePtr operand;
    SPOOL_RETURN_IF_ERROR(ParseOr(&operand));
    SPOOL_RETURN_IF_ERROR(ExpectKeyword("as"));
    const Token name = Take();
    ColumnType to = ColumnType::kString;
    if (name.kind != Tok::kName || !ParseColumnType(Lower(name.text), &to).ok()) {
      return ErrorAt(name.pos,
                     "expected a type (int64, double, string, bool, timestamp, bytes), found " + Describe(name));
    }
    SPOOL_RETURN_IF_ERROR(Expect(")"));
    const auto from = operand->type;
    const bool allowed =
        !from || from == to || to == ColumnType::kString || (to == ColumnType::kBytes && from == ColumnType::kString) ||
        (from == ColumnType::kString && to != ColumnType::kBytes) ||
        (IsNumeric(from) && (IsNumeric(to) || to == ColumnType::kBool)) ||
        (from == ColumnType::kBool && IsNumeric(to)) || (from == ColumnType::kInt64 && to == ColumnType::kTimestamp) ||
        (from == ColumnType::kTimestamp && to == ColumnType::kInt64);
    if (!allowed) return ErrorAt(pos, "cannot cast " + TypeName(from) + " to " + TypeName(to));
    *out = Make(Op::kCast, pos, to, operand->nullable);
    (*out)->args.push_back(std::move(operand));
    return Status::OK();
  }

  // A function call being typed: the function's token and name, and its
  // arguments.
  struct FunctionCall {
    const Token& token;
    const std::string& name;
    std::vector<NodePtr> args;

    // It takes `lo` to `hi` arguments.
    Status Arity(size_t lo, size_t hi) const {
      if (args.size() < lo || args.size() > hi) {
        return ErrorAt(token.pos,
                       name + " takes " +
                           (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi)) +
                           " argument(s), not " + std::to_string(args.size()));
      }
      return Status::OK();
    }
    // Argument `i` is of a type `ok` takes (`kind`), or of none (NULL).
    template <typename Ok>
    Status Need(size_t i, Ok ok, std::string_view kind) const {
      if (args[i]->type && !ok(*args[i]->type)) {
        return ErrorAt(args[i]->pos, name + " needs " + std::string(kind) + ", not " + TypeName(args[i]->type));
      }
      return Status::OK();
    }
  };

  Status Call(const Token& t, const std::string& name, NodePtr* out) {
    FunctionCall call{t, name, {}};
    SPOOL_RETURN_IF_ERROR(Arguments(&call.args));
    NodePtr node;
    SPOOL_RETURN_IF_ERROR(TypeCall(call, &node));
    node->args = std::move(call.args);
    *out = std::move(node);
    return Status::OK();
  }

  // A call's arguments, from its "(" through its ")".
  Status Arguments(std::vector<NodePtr>* args) {
    Take();  // (
    if (!IsSymbol(")")) {
      while (true) {
        NodePtr arg;
        SPOOL_RETURN_IF_ERROR(ParseOr(&arg));
        args->push_back(std::move(arg));
        if (!IsSymbol(",")) break;
        Take();
      }
    }
    return Expect(")");
  }

  // The call's node, its type and nullability checked and inferred; the
  // arguments left in `call` are its operands.
  static Status TypeCall(FunctionCall& call, NodePtr* node) {
    const std::string& name = call.name;
    const size_t pos = call.token.pos;
    const std::vector<NodePtr>& args = call.args;
    if (name == "coalesce") {
      SPOOL_RETURN_IF_ERROR(call.Arity(1, 64));
      std::vector<const Node*> all;
      all.reserve(args.size());
      for (const NodePtr& a : args) all.push_back(a.get());
      *node = Make(Op::kCoalesce, pos, std::nullopt,
                   std::all_of(args.begin(), args.end(), [](const NodePtr& a) { return a->nullable; }));
      return Common(all, "coalesce", &(*node)->type);
    }
    if (name == "lower" || name == "upper") {
      SPOOL_RETURN_IF_ERROR(call.Arity(1, 1));
      SPOOL_RETURN_IF_ERROR(call.Need(
          0, [](ColumnType c) { return c == ColumnType::kString; }, "a string"));
      *node = Make(name == "lower" ? Op::kLower : Op::kUpper, pos, ColumnType::kString, AnyNullable(args));
      return Status::OK();
    }
    if (name == "length") {
      SPOOL_RETURN_IF_ERROR(call.Arity(1, 1));
      const auto bytes = [](ColumnType c) { return c == ColumnType::kString || c == ColumnType::kBytes; };
      SPOOL_RETURN_IF_ERROR(call.Need(0, bytes, "a string or bytes"));
      *node = Make(Op::kLength, pos, ColumnType::kInt64, AnyNullable(args));
      return Status::OK();
    }
    if (name == "abs") {
      SPOOL_RETURN_IF_ERROR(call.Arity(1, 1));
      SPOOL_RETURN_IF_ERROR(call.Need(
          0, [](ColumnType c) { return IsNumeric(c); }, "a number"));
      *node = Make(Op::kAbs, pos, args[0]->type ? args[0]->type : ColumnType::kInt64, AnyNullable(args));
      return Status::OK();
    }
    if (name == "round") return TypeRound(call, node);
    if (name == "date_trunc") return TypeDateTrunc(call, node);
    return ErrorAt(pos, "unknown function '" + call.token.text + "'");
  }

  // round(x[, digits]): the digits, an integer literal within -18..18,
  // become the node's unit.
  static Status TypeRound(FunctionCall& call, NodePtr* node) {
    std::vector<NodePtr>& args = call.args;
    SPOOL_RETURN_IF_ERROR(call.Arity(1, 2));
    SPOOL_RETURN_IF_ERROR(call.Need(
        0, [](ColumnType c) { return IsNumeric(c); }, "a number"));
    int64_t digits = 0;
    if (args.size() == 2) {
      const Node& d = *args[1];
      const bool negative = d.op == Op::kNegate;
      const Node& literal = negative ? *d.args[0] : d;
      if (literal.op != Op::kLiteral || literal.type != ColumnType::kInt64) {
        return ErrorAt(d.pos, "round's digits must be an integer literal");
      }
      digits = std::get<int64_t>(literal.literal) * (negative ? -1 : 1);
      if (digits < -18 || digits > 18) return ErrorAt(d.pos, "round's digits must be within -18..18");
      args.pop_back();
    }
    *node = Make(Op::kRound, call.token.pos, args[0]->type ? args[0]->type : ColumnType::kInt64, AnyNullable(args));
    (*node)->unit = digits;
    return Status::OK();
  }

  // date_trunc(unit, t): the unit, 'second', 'minute', 'hour' or 'day',
  // becomes the node's unit (in microseconds).
  static Status TypeDateTrunc(FunctionCall& call, NodePtr* node) {
    std::vector<NodePtr>& args = call.args;
    SPOOL_RETURN_IF_ERROR(call.Arity(2, 2));
    const Node& unit = *args[0];
    static constexpr std::pair<std::string_view, int64_t> kUnits[] = {
        {"second", 1'000'000}, {"minute", 60'000'000}, {"hour", 3'600'000'000}, {"day", 86'400'000'000}};
    const std::string* text = unit.op == Op::kLiteral ? std::get_if<std::string>(&unit.literal) : nullptr;
    const auto found = text == nullptr ? std::end(kUnits)
                                       : std::find_if(std::begin(kUnits), std::end(kUnits),
                                                      [&](const auto& u) { return u.first == Lower(*text); });
    if (found == std::end(kUnits)) {
      return ErrorAt(unit.pos, "date_trunc's unit must be 'second', 'minute', 'hour' or 'day'");
    }
    SPOOL_RETURN_IF_ERROR(call.Need(
        1, [](ColumnType c) { return c == ColumnType::kTimestamp; }, "a timestamp"));
    args.erase(args.begin());
    *node = Make(Op::kDateTrunc, call.token.pos, ColumnType::kTimestamp, AnyNullable(args));
    (*node)->unit = found->second;
    return Status::OK();
  }

  std::vector<Token> tokens_;
  size_t next_ = 0;
  int depth_ = 0;
  const Schema& schema_;
};

// ---------------------------------------------------------------------------
// Evaluation

double AsDouble(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

// -1, 0 or 1. REQUIRES: both non-null and comparable.
int Compare(const Value& a, const Value& b) {
  if (std::holds_alternative<double>(a) || std::holds_alternative<double>(b)) {
    const double x = AsDouble(a), y = AsDouble(b);
    return x < y ? -1 : (y < x ? 1 : 0);
  }
  return a < b ? -1 : (b < a ? 1 : 0);
}

std::string FormatValue(const Value& v) {
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&v)) {
    char text[32];
    auto [end, ec] = std::to_chars(text, text + sizeof(text), *d);
    return ec == std::errc() ? std::string(text, end) : std::string();
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* t = std::get_if<Timestamp>(&v)) return FormatTimestampMicros(t->micros);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  return std::get<Bytes>(v).data;
}

Status Eval(const Node& n, const Row& row, Value* out);

Status CastValue(const Node& n, const Value& v, Value* out) {
  const ColumnType to = *n.type;
  const auto fail = [&] { return ErrorAt(n.pos, "cannot cast '" + FormatValue(v) + "' to " + TypeName(to)); };
  switch (to) {
    case ColumnType::kString:
      *out = FormatValue(v);
      return Status::OK();
    case ColumnType::kBytes:
      *out = Bytes{FormatValue(v)};
      return Status::OK();
    case ColumnType::kInt64:
      if (const auto* d = std::get_if<double>(&v)) {
        if (!std::isfinite(*d) || *d >= 9223372036854775808.0 || *d < -9223372036854775808.0) return fail();
        *out = static_cast<int64_t>(*d);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        int64_t i = 0;
        auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), i);
        if (ec != std::errc() || ptr != s->data() + s->size()) return fail();
        *out = i;
      } else if (const auto* b = std::get_if<bool>(&v)) {
        *out = int64_t{*b};
      } else if (const auto* t = std::get_if<Timestamp>(&v)) {
        *out = t->micros;
      } else {
        *out = v;
      }
      return Status::OK();
    case ColumnType::kDouble:
      if (const auto* s = std::get_if<std::string>(&v)) {
        double d = 0;
        auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), d);
        if (ec != std::errc() || ptr != s->data() + s->size()) return fail();
        *out = d;
      } else if (const auto* b = std::get_if<bool>(&v)) {
        *out = *b ? 1.0 : 0.0;
      } else {
        *out = AsDouble(v);
      }
      return Status::OK();
    case ColumnType::kBool:
      if (const auto* s = std::get_if<std::string>(&v)) {
        const std::string word = Lower(*s);
        if (word != "true" && word != "false") return fail();
        *out = word == "true";
      } else if (std::holds_alternative<bool>(v)) {
        *out = v;
      } else {
        *out = AsDouble(v) != 0;
      }
      return Status::OK();
    case ColumnType::kTimestamp:
      if (const auto* s = std::get_if<std::string>(&v)) {
        int64_t micros = 0;
        if (!ParseDateTimeUtc(*s, &micros)) return fail();
        *out = Timestamp{micros};
      } else if (const auto* i = std::get_if<int64_t>(&v)) {
        *out = Timestamp{*i};
      } else {
        *out = v;
      }
      return Status::OK();
  }
  return fail();
}

Status Arithmetic(const Node& n, const Value& a, const Value& b, Value* out) {
  const char op = n.symbol[0];
  if (n.type == ColumnType::kInt64) {
    const int64_t x = std::get<int64_t>(a), y = std::get<int64_t>(b);
    int64_t r = 0;
    bool overflow = false;
    switch (op) {
      case '+':
        overflow = __builtin_add_overflow(x, y, &r);
        break;
      case '-':
        overflow = __builtin_sub_overflow(x, y, &r);
        break;
      case '*':
        overflow = __builtin_mul_overflow(x, y, &r);
        break;
      default:  // %
        if (y == 0) return ErrorAt(n.pos, "division by zero");
        r = y == -1 ? 0 : x % y;
    }
    if (overflow) {
      return ErrorAt(n.pos, "int64 overflow in " + std::to_string(x) + " " + n.symbol + " " + std::to_string(y));
    }
    *out = r;
    return Status::OK();
  }
  const double x = AsDouble(a), y = AsDouble(b);
  if ((op == '/' || op == '%') && y == 0) return ErrorAt(n.pos, "division by zero");
  switch (op) {
    case '+':
      *out = x + y;
      break;
    case '-':
      *out = x - y;
      break;
    case '*':
      *out = x * y;
      break;
    case '/':
      *out = x / y;
      break;
    default:
      *out = std::fmod(x, y);
  }
  return Status::OK();
}

// AND, OR, CASE and coalesce, which evaluate their operands only as far as
// they need to.
Status EvalLazy(const Node& n, const Row& row, Value* out) {
  switch (n.op) {
    case Op::kAnd:
    case Op::kOr: {
      // Three-valued: a decisive operand wins over NULL.
      const bool decisive = n.op == Op::kOr;
      bool saw_null = false;
      for (const NodePtr& arg : n.args) {
        Value v;
        SPOOL_RETURN_IF_ERROR(Eval(*arg, row, &v));
        if (IsNull(v)) saw_null = true;
        else if (std::get<bool>(v) == decisive) return (*out = decisive, Status::OK());
      }
      if (saw_null) *out = std::monostate{};
      else *out = !decisive;
      return Status::OK();
    }
    case Op::kCase:
      for (size_t i = 0; i + 1 < n.args.size(); i += 2) {
        Value when;
        SPOOL_RETURN_IF_ERROR(Eval(*n.args[i], row, &when));
        if (!IsNull(when) && std::get<bool>(when)) return Eval(*n.args[i + 1], row, out);
      }
      if (n.args.size() % 2 == 1) return Eval(*n.args.back(), row, out);
      *out = std::monostate{};
      return Status::OK();
    default:  // coalesce
      for (const NodePtr& arg : n.args) {
        SPOOL_RETURN_IF_ERROR(Eval(*arg, row, out));
        if (!IsNull(*out)) break;
      }
      if (!IsNull(*out) && n.type == ColumnType::kDouble) *out = AsDouble(*out);
      return Status::OK();
  }
}

// round(i, digits) of an int64 with digits < 0: half away from zero, as for
// doubles.
Status RoundInt64(const Node& n, int64_t i, Value* out) {
  int64_t scale = 1;
  for (int64_t k = 0; k < -n.unit; ++k) scale *= 10;
  const int64_t half = scale / 2, rem = i % scale;
  int64_t r = i - rem;
  const bool up = rem >= half, down = -rem >= half;
  if ((up && __builtin_add_overflow(r, scale, &r)) || (down && __builtin_sub_overflow(r, scale, &r))) {
    return ErrorAt(n.pos, "int64 overflow in round(" + std::to_string(i) + ", " + std::to_string(n.unit) + ")");
  }
  *out = r;
  return Status::OK();
}

// An operator of one or two operands, evaluated already and none NULL.
Status Apply(const Node& n, const std::array<Value, 2>& args, Value* out) {
  switch (n.op) {
    case Op::kNot:
      *out = !std::get<bool>(args[0]);
      return Status::OK();
    case Op::kNegate:
      if (const auto* i = std::get_if<int64_t>(&args[0])) {
        if (*i == INT64_MIN) return ErrorAt(n.pos, "int64 overflow in -" + std::to_string(*i));
        *out = -*i;
      } else {
        *out = -std::get<double>(args[0]);
      }
      return Status::OK();
    case Op::kCompare: {
      const int c = Compare(args[0], args[1]);
      const std::string& s = n.symbol;
      *out = s == "=" ? c == 0 : s == "!=" ? c != 0 : s == "<" ? c < 0 : s == "<=" ? c <= 0 : s == ">" ? c > 0 : c >= 0;
      return Status::OK();
    }
    case Op::kArithmetic:
      return Arithmetic(n, args[0], args[1], out);
    case Op::kConcat:
      *out = std::get<std::string>(args[0]) + std::get<std::string>(args[1]);
      return Status::OK();
    case Op::kLower:
    case Op::kUpper: {
      std::string s = std::get<std::string>(args[0]);
      for (char& c : s) {
        c = static_cast<char>(n.op == Op::kLower ? std::tolower(static_cast<unsigned char>(c))
                                                 : std::toupper(static_cast<unsigned char>(c)));
      }
      *out = std::move(s);
      return Status::OK();
    }
    case Op::kLength: {
      const auto* s = std::get_if<std::string>(&args[0]);
      *out = static_cast<int64_t>(s != nullptr ? s->size() : std::get<Bytes>(args[0]).data.size());
      return Status::OK();
    }
    case Op::kAbs:
      if (const auto* i = std::get_if<int64_t>(&args[0])) {
        if (*i == INT64_MIN) return ErrorAt(n.pos, "int64 overflow in abs(" + std::to_string(*i) + ")");
        *out = *i < 0 ? -*i : *i;
      } else {
        *out = std::fabs(std::get<double>(args[0]));
      }
      return Status::OK();
    case Op::kRound: {
      if (const auto* i = std::get_if<int64_t>(&args[0])) {
        if (n.unit >= 0) return (*out = *i, Status::OK());
        return RoundInt64(n, *i, out);
      }
      const double scale = std::pow(10.0, static_cast<double>(n.unit));
      *out = std::round(std::get<double>(args[0]) * scale) / scale;
      return Status::OK();
    }
    case Op::kDateTrunc: {
      const int64_t micros = std::get<Timestamp>(args[0]).micros;
      int64_t floor = micros / n.unit * n.unit;
      if (floor > micros && __builtin_sub_overflow(floor, n.unit, &floor)) {
        return ErrorAt(n.pos, "timestamp overflow in date_trunc");
      }
      *out = Timestamp{floor};
      return Status::OK();
    }
    case Op::kCast:
      return CastValue(n, args[0], out);
    default:
      return Status::InvalidArgument("unknown expression node");
  }
}

Status Eval(const Node& n, const Row& row, Value* out) {
  if (n.op == Op::kAnd || n.op == Op::kOr || n.op == Op::kCase || n.op == Op::kCoalesce) return EvalLazy(n, row, out);
  // Every other operator has at most two operands, evaluated up front and
  // held here without allocating.
  std::array<Value, 2> args;
  const size_t count = n.args.size();
  if (count > args.size()) return ErrorAt(n.pos, "an operator with more than two operands");  // the parser's bug
  for (size_t i = 0; i < count; ++i) SPOOL_RETURN_IF_ERROR(Eval(*n.args[i], row, &args[i]));
  switch (n.op) {
    case Op::kLiteral:
      *out = n.literal;
      return Status::OK();
    case Op::kColumn:
      *out = row[n.column];
      return Status::OK();
    case Op::kIsNull:
      *out = IsNull(args[0]);
      return Status::OK();
    case Op::kIsNotNull:
      *out = !IsNull(args[0]);
      return Status::OK();
    default:
      break;
  }
  const bool any_null = std::any_of(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(count),
                                    [](const Value& v) { return IsNull(v); });
  if (any_null) {
    *out = std::monostate{};
    return Status::OK();
  }
  return Apply(n, args, out);
}

}  // namespace

Expression::Expression() = default;
Expression::~Expression() = default;
Expression::Expression(Expression&&) noexcept = default;
Expression& Expression::operator=(Expression&&) noexcept = default;

Status Expression::Parse(std::string_view text, const Schema& input, Expression* expression) {
  std::vector<Token> tokens;
  SPOOL_RETURN_IF_ERROR(Tokenize(text, &tokens));
  NodePtr root;
  SPOOL_RETURN_IF_ERROR(Parser(std::move(tokens), input).ParseAll(&root));
  expression->text_ = std::string(text);
  expression->root_ = std::move(root);
  return Status::OK();
}

ColumnType Expression::type() const { return root_->type.value_or(ColumnType::kBool); }
bool Expression::nullable() const { return root_->nullable; }
std::optional<size_t> Expression::column() const {
  if (root_ == nullptr || root_->op != Op::kColumn) return std::nullopt;
  return root_->column;
}

namespace {

void MarkColumns(const Node& n, std::vector<bool>* columns) {
  if (n.op == Op::kColumn) (*columns)[n.column] = true;
  for (const NodePtr& arg : n.args) MarkColumns(*arg, columns);
}

}  // namespace

void Expression::MarkColumnsRead(std::vector<bool>* columns) const {
  if (root_ != nullptr) MarkColumns(*root_, columns);
}

Status Expression::Evaluate(const Row& row, Value* value) const {
  SPOOL_RETURN_IF_ERROR(Eval(*root_, row, value));
  // int64 operands of a double result (CASE, coalesce) read as doubles.
  if (!IsNull(*value) && type() == ColumnType::kDouble) *value = AsDouble(*value);
  return Status::OK();
}

Status Expression::Matches(const Row& row, bool* matches) const {
  if (type() != ColumnType::kBool) {
    return Status::InvalidArgument("a filter needs a bool expression, not " + TypeName(type()) + ": " + text_);
  }
  Value value;
  SPOOL_RETURN_IF_ERROR(Evaluate(row, &value));
  *matches = !IsNull(value) && std::get<bool>(value);
  return Status::OK();
}

}  // namespace spool
