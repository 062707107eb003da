// The Spark SQL constructs of the reference documents' queries, rewritten
// into SQLite's (docs/sql.md, "Spark SQL"). The text is split into tokens
// — so that nothing inside a string, a quoted name or a comment is ever
// rewritten — and each construct is a small rewrite of the token list:
//
//   DESCRIBE HISTORY a.b.c             SELECT * FROM history('a.b.c')
//   table_changes('a.b.c', 1)          "table_changes:a.b.c"(1)
//   table_at('a.b.c', 5)               "a.b.c"(5)
//   table_at('a.b.gone', 5)            "table_at:a.b.gone@5"(5)   (dropped since)
//   a.b.c VERSION AS OF 5              "a.b.c"(5)       (TIMESTAMP AS OF too)
//   a.b.c (a store's table, unquoted)  "a.b.c"
//   `name`                             "name"
//   details:a.b[0]                     json_extract(details, '$.a.b[0]')
//   x - INTERVAL 7 DAYS                spool_timestamp_add(x, -(7), 'DAYS')
//   current_timestamp(), now()         spool_now()
//   current_date()                     spool_current_date()
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "spool/sql/sql.h"
#include "spool/storage/schema.h"
#include "sql_internal.h"

namespace spool::sql {
namespace {

enum class Kind : uint8_t { kSpace, kWord, kQuoted, kString, kNumber, kPunct };

struct Token {
  Kind kind;
  std::string text;
  size_t offset = 0;  // in the original text, for errors
};

bool IsWordStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

bool Equals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// "line 2, column 7" of `offset` in `text`.
std::string Where(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

std::string QuoteName(std::string_view name) { return QuoteSql(name, '"'); }
std::string QuoteString(std::string_view text) { return QuoteSql(text, '\''); }

// The text of a quoted token ('…', "…" or `…`) without its quotes.
std::string Unquote(std::string_view token) {
  std::string text;
  const char quote = token.front();
  for (size_t i = 1; i + 1 < token.size(); ++i) {
    text += token[i];
    if (token[i] == quote) ++i;  // a doubled quote stands for one
  }
  return text;
}

class Translator {
 public:
  Translator(std::string_view text, const std::vector<std::string>& tables) : text_(text), tables_(tables) {}

  Status Run(std::string* out, std::vector<std::string>* declare) {
    SPOOL_RETURN_IF_ERROR(Tokenize());
    SPOOL_RETURN_IF_ERROR(RewriteTables());
    SPOOL_RETURN_IF_ERROR(RewriteJsonPaths());
    SPOOL_RETURN_IF_ERROR(RewriteIntervals());
    out->clear();
    for (const Token& t : tokens_) *out += t.text;
    *declare = std::move(declare_);
    return Status::OK();
  }

 private:
  Status Error(size_t offset, std::string_view what) const {
    return Status::InvalidArgument(std::string(what) + " (at " + Where(text_, offset) + ")");
  }

  // Past the quoted string or name starting at `*i`, whose quote doubled
  // stands for itself.
  Status SkipQuoted(size_t* i) const {
    const size_t start = *i;
    const char quote = text_[start];
    for (size_t at = start + 1; at < text_.size(); ++at) {
      if (text_[at] != quote) continue;
      if (at + 1 < text_.size() && text_[at + 1] == quote) {
        ++at;
        continue;
      }
      *i = at + 1;
      return Status::OK();
    }
    return Error(start, quote == '\'' ? "a string that is not closed with '"
                                      : "a name that is not closed with " + std::string(1, quote));
  }

  Status Tokenize() {
    size_t i = 0;
    while (i < text_.size()) {
      const size_t start = i;
      const char c = text_[i];
      Kind kind = Kind::kPunct;
      if (std::isspace(static_cast<unsigned char>(c))) {
        while (i < text_.size() && std::isspace(static_cast<unsigned char>(text_[i]))) ++i;
        kind = Kind::kSpace;
      } else if (text_.substr(i, 2) == "--") {
        i = std::min(text_.find('\n', i), text_.size());
        tokens_.push_back({Kind::kSpace, " ", start});
        continue;
      } else if (text_.substr(i, 2) == "/*") {
        const size_t end = text_.find("*/", i + 2);
        if (end == std::string_view::npos) return Error(start, "a comment that is not closed with */");
        i = end + 2;
        tokens_.push_back({Kind::kSpace, " ", start});
        continue;
      } else if (c == '\'' || c == '"' || c == '`') {
        SPOOL_RETURN_IF_ERROR(SkipQuoted(&i));
        kind = c == '\'' ? Kind::kString : Kind::kQuoted;
        if (c == '`') {  // Spark's quoted names are SQLite's "…"
          tokens_.push_back({Kind::kQuoted, QuoteName(Unquote(text_.substr(start, i - start))), start});
          continue;
        }
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '.' && i + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i + 1])) &&
                  !PreviousIsName())) {
        while (i < text_.size() &&
               (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '.' ||
                ((text_[i] == '+' || text_[i] == '-') && (text_[i - 1] == 'e' || text_[i - 1] == 'E')))) {
          ++i;
        }
        kind = Kind::kNumber;
      } else if (IsWordStart(c)) {
        while (i < text_.size() && IsWordChar(text_[i])) ++i;
        kind = Kind::kWord;
      } else {
        static constexpr std::string_view kTwo[] = {"<=", ">=", "<>", "!=", "==", "||", "::", "->", "<<", ">>"};
        const bool two = std::any_of(std::begin(kTwo), std::end(kTwo),
                                     [&](std::string_view op) { return text_.substr(i, 2) == op; });
        i += two ? 2 : 1;
      }
      tokens_.push_back({kind, std::string(text_.substr(start, i - start)), start});
    }
    return Status::OK();
  }

  // Whether the last token is a name (so that ".5" after it is a dot and a
  // number, not the number 0.5).
  bool PreviousIsName() const {
    return !tokens_.empty() && (tokens_.back().kind == Kind::kWord || tokens_.back().kind == Kind::kQuoted);
  }

  // The index of the next token after `i` that is not a space (size() at
  // the end), and the one before (npos at the start).
  size_t Next(size_t i) const {
    for (++i; i < tokens_.size() && tokens_[i].kind == Kind::kSpace;) ++i;
    return i;
  }
  size_t Prev(size_t i) const {
    while (i-- > 0) {
      if (tokens_[i].kind != Kind::kSpace) return i;
    }
    return std::string::npos;
  }
  bool Is(size_t i, std::string_view text) const { return i < tokens_.size() && Equals(tokens_[i].text, text); }
  bool IsWord(size_t i, std::string_view word) const {
    return i < tokens_.size() && tokens_[i].kind == Kind::kWord && Equals(tokens_[i].text, word);
  }

  // Replaces tokens [from, to) by one token of `text`.
  void Replace(size_t from, size_t to, std::string text) {
    const size_t offset = tokens_[from].offset;
    tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(from),
                  tokens_.begin() + static_cast<std::ptrdiff_t>(to));
    tokens_.insert(tokens_.begin() + static_cast<std::ptrdiff_t>(from), Token{Kind::kQuoted, std::move(text), offset});
  }

  // The store's table `name` names: exactly, else ignoring case when one
  // table alone matches. Empty when none.
  std::string FindTable(std::string_view name) const {
    std::string found;
    for (const std::string& table : tables_) {
      if (table == name) return table;
      if (Equals(table, name)) found = found.empty() ? table : "\x01";
    }
    return found == "\x01" ? std::string() : found;
  }

  // A dotted name at `i` (word or quoted parts: a.b.c, `a`.b.c, "a.b.c"),
  // as text and the index after it.
  bool DottedName(size_t i, std::string* name, size_t* end) const {
    if (i >= tokens_.size() || (tokens_[i].kind != Kind::kWord && tokens_[i].kind != Kind::kQuoted)) return false;
    name->clear();
    while (true) {
      const Token& t = tokens_[i];
      *name += t.kind == Kind::kQuoted ? Unquote(t.text) : t.text;
      if (i + 2 < tokens_.size() && tokens_[i + 1].text == "." &&
          (tokens_[i + 2].kind == Kind::kWord || tokens_[i + 2].kind == Kind::kQuoted)) {
        *name += '.';
        i += 2;
        continue;
      }
      *end = i + 1;
      return true;
    }
  }

  Status RewriteTables() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (tokens_[i].kind == Kind::kPunct && tokens_[i].text == "::") {
        return Error(tokens_[i].offset, "the Spark cast x::type is not understood: write CAST(x AS type)");
      }
      if ((tokens_[i].kind != Kind::kWord && tokens_[i].kind != Kind::kQuoted) || IsQualified(i)) continue;
      const bool table = RewriteThreePartName(i);
      if (!unknown_table_.first.empty()) {
        return Error(unknown_table_.second, "the store has no table " + unknown_table_.first);
      }
      const Token& t = tokens_[i];
      if (table || t.kind == Kind::kQuoted) {
        SPOOL_RETURN_IF_ERROR(RewriteAsOf(i));
      } else if (Equals(t.text, "DESCRIBE") || (Equals(t.text, "DESC") && IsWord(Next(i), "HISTORY"))) {
        SPOOL_RETURN_IF_ERROR(RewriteDescribe(i));
      } else if (Equals(t.text, "table_changes") && Is(Next(i), "(")) {
        SPOOL_RETURN_IF_ERROR(RewriteFunctionTable(i, /*changes=*/true));
      } else if (Equals(t.text, "table_at") && Is(Next(i), "(")) {
        SPOOL_RETURN_IF_ERROR(RewriteFunctionTable(i, /*changes=*/false));
      } else if (Equals(t.text, "current_timestamp") || Equals(t.text, "now")) {
        RewriteNiladic(i, "spool_now()", /*parens_optional=*/Equals(t.text, "current_timestamp"));
      } else if (Equals(t.text, "current_date")) {
        RewriteNiladic(i, "spool_current_date()", /*parens_optional=*/true);
      }
    }
    return Status::OK();
  }

  // A part of a dotted name: a word, or a quoted name without a dot (one
  // with dots is a whole table's name already).
  bool IsNamePart(size_t i) const {
    return i < tokens_.size() && (tokens_[i].kind == Kind::kWord ||
                                  (tokens_[i].kind == Kind::kQuoted && tokens_[i].text.find('.') == std::string::npos));
  }
  std::string PartText(size_t i) const {
    return tokens_[i].kind == Kind::kQuoted ? Unquote(tokens_[i].text) : tokens_[i].text;
  }

  // a.b.c (each part a word or quoted, no spaces between) naming one of the
  // store's tables → "a.b.c"; in "a.b.c.col", the table's column.
  bool RewriteThreePartName(size_t i) {
    if (!(IsNamePart(i) && Is(i + 1, ".") && IsNamePart(i + 2) && Is(i + 3, ".") && IsNamePart(i + 4))) return false;
    const std::string name = PartText(i) + "." + PartText(i + 2) + "." + PartText(i + 4);
    std::string table = FindTable(name);
    if (table.empty()) table = PastTableAsOf(name, i + 5);
    if (table.empty()) {
      // SQLite's schema.table.column starts with main or temp; anything else
      // can only have meant a table.
      if (!Equals(PartText(i), "main") && !Equals(PartText(i), "temp")) unknown_table_ = {name, tokens_[i].offset};
      return false;
    }
    Replace(i, i + 5, QuoteName(table));
    return true;
  }

  // Whether the word at `i` follows a '.' (a qualified name's later part).
  bool IsQualified(size_t i) const { return i > 0 && tokens_[i - 1].text == "."; }

  // current_timestamp() → spool_now(); the parentheses may be left out
  // where SQL lets them (current_timestamp, current_date).
  void RewriteNiladic(size_t i, std::string_view call, bool parens_optional) {
    const size_t open = Next(i);
    if (Is(open, "(") && Is(Next(open), ")")) {
      Replace(i, Next(open) + 1, std::string(call));
    } else if (parens_optional) {
      Replace(i, i + 1, std::string(call));
    }
  }

  Status RewriteDescribe(size_t i) {
    const size_t what = Next(i);
    if (!IsWord(what, "HISTORY")) {
      return Error(tokens_[i].offset,
                   "DESCRIBE is understood only as DESCRIBE HISTORY catalog.schema.table (for a table's "
                   "columns, use the shell's .schema or PRAGMA table_info)");
    }
    std::string name;
    size_t end = 0;
    const size_t at = Next(what);
    if (at < tokens_.size() && tokens_[at].kind == Kind::kString) {
      name = Unquote(tokens_[at].text);
      end = at + 1;
    } else if (!DottedName(at, &name, &end)) {
      return Error(tokens_[what].offset, "DESCRIBE HISTORY needs a table name (catalog.schema.table)");
    }
    Replace(i, end, "SELECT * FROM history(" + QuoteString(name) + ")");
    return Status::OK();
  }

  // table_changes('a.b.c', …) and table_at('a.b.c', …): the table's own
  // virtual table, called with the arguments after the name.
  Status RewriteFunctionTable(size_t i, bool changes) {
    const std::string function = tokens_[i].text;
    const size_t open = Next(i);
    const size_t arg = Next(open);
    if (arg >= tokens_.size() || tokens_[arg].kind != Kind::kString) {
      return Error(tokens_[i].offset, function + "() takes the table's name as a string first: " + function +
                                          "('catalog.schema.table', " + (changes ? "from_version)" : "version)"));
    }
    const std::string name = Unquote(tokens_[arg].text);
    std::string table = FindTable(name);
    size_t after = Next(arg);
    if (table.empty() && !changes && Is(after, ",")) {
      // A table dropped since: its virtual table as of the version named.
      const size_t value = Next(after);
      if (value < tokens_.size() && Is(Next(value), ")")) table = PastTable(name, tokens_[value]);
    }
    if (table.empty()) {
      return Error(tokens_[arg].offset,
                   function + "(): the store has no table " + name +
                       (changes ? "" : " (one dropped since is read as of a number or a quoted time)"));
    }
    if (Is(after, ",")) {
      after = Next(after);  // the comma goes; the next argument becomes the first
    } else if (!Is(after, ")") || !changes) {
      return Error(tokens_[i].offset, function + "() needs " +
                                          (changes ? "a table name and a first version (or timestamp)"
                                                   : "a table name and a version (or timestamp)"));
    }
    if (changes) table = Declare(std::string(kChangesTablePrefix) + table);
    // The name's token and the comma go; "(" stays before the arguments.
    tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(open + 1),
                  tokens_.begin() + static_cast<std::ptrdiff_t>(after));
    Replace(i, i + 1, QuoteName(table));
    return Status::OK();
  }

  // `name` among the virtual tables the session declares for the text.
  std::string Declare(std::string name) {
    if (std::find(declare_.begin(), declare_.end(), name) == declare_.end()) declare_.push_back(name);
    return name;
  }

  // The virtual table of `name` as of the version or time `value` (a
  // whole number or a quoted time): a table the store no longer has. Empty
  // when `name` is no table's name or `value` is neither.
  std::string PastTable(const std::string& name, const Token& value) {
    TableId id;
    if (!TableId::Parse(name, &id).ok()) return {};
    std::string at;
    int64_t micros = 0;
    if (value.kind == Kind::kNumber && value.text.find_first_not_of("0123456789") == std::string::npos) {
      at = value.text;
    } else if (value.kind == Kind::kString && ParseSqlTimestamp(Unquote(value.text), &micros)) {
      at = Unquote(value.text);
    } else {
      return {};
    }
    return Declare(std::string(kPastTablePrefix) + name + "@" + at);
  }

  // A table dropped since, named at `i` and read VERSION or TIMESTAMP AS OF
  // a literal after `end`: its past table's name; empty otherwise.
  std::string PastTableAsOf(const std::string& name, size_t end) {
    const size_t kind = Next(end - 1), as = Next(kind), of = Next(as), value = Next(of);
    if ((!IsWord(kind, "VERSION") && !IsWord(kind, "TIMESTAMP")) || !IsWord(as, "AS") || !IsWord(of, "OF") ||
        value >= tokens_.size()) {
      return {};
    }
    return PastTable(name, tokens_[value]);
  }

  // "a.b.c" VERSION AS OF 5 / TIMESTAMP AS OF '…' → "a.b.c"(5): the
  // table's own virtual table called with the version or time.
  Status RewriteAsOf(size_t i) {
    const size_t kind = Next(i);
    if (!IsWord(kind, "VERSION") && !IsWord(kind, "TIMESTAMP")) return Status::OK();
    const size_t as = Next(kind), of = Next(as);
    if (!IsWord(as, "AS") || !IsWord(of, "OF")) return Status::OK();
    const size_t value = Next(of);
    if (value >= tokens_.size() || (tokens_[value].kind != Kind::kNumber && tokens_[value].kind != Kind::kString)) {
      return Error(tokens_[kind].offset, tokens_[kind].text + " AS OF needs a number or a quoted time after it");
    }
    if (IsWord(kind, "VERSION") != (tokens_[value].kind == Kind::kNumber)) {
      return Error(tokens_[value].offset, IsWord(kind, "VERSION") ? "VERSION AS OF needs a version number"
                                                                  : "TIMESTAMP AS OF needs a quoted time");
    }
    const std::string arg = tokens_[value].text;
    tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(i + 1),
                  tokens_.begin() + static_cast<std::ptrdiff_t>(value + 1));
    tokens_[i].text += "(" + arg + ")";
    return Status::OK();
  }

  // Words after which ':' starts a parameter (:name), not a JSON path.
  static bool IsKeyword(std::string_view word) {
    static constexpr std::string_view kKeywords[] = {
        "SELECT", "WHERE", "AND",   "OR",     "NOT",  "ON",     "WHEN",     "THEN", "ELSE",   "BY",
        "HAVING", "SET",   "LIMIT", "OFFSET", "IN",   "IS",     "LIKE",     "CASE", "VALUES", "BETWEEN",
        "AS",     "FROM",  "JOIN",  "RETURN", "GLOB", "ESCAPE", "DISTINCT", "ALL",  "USING",  "WITH"};
    return std::any_of(std::begin(kKeywords), std::end(kKeywords),
                       [&](std::string_view keyword) { return Equals(keyword, word); });
  }

  // column:path → json_extract(column, '$.path'), the path being names
  // joined by '.' and [n] or ['key'] subscripts.
  Status RewriteJsonPaths() {
    for (size_t i = 1; i < tokens_.size(); ++i) {
      if (tokens_[i].text != ":" || tokens_[i].kind != Kind::kPunct) continue;
      const Token& before = tokens_[i - 1];
      const bool name_before = (before.kind == Kind::kWord && !IsKeyword(before.text)) || before.kind == Kind::kQuoted;
      if (!name_before || i + 1 >= tokens_.size()) continue;
      const Token& first = tokens_[i + 1];
      if (first.kind != Kind::kWord && first.kind != Kind::kQuoted && first.text != "[") continue;
      // The column: the dotted name ending before ':'.
      size_t start = i - 1;
      while (start >= 2 && tokens_[start - 1].text == "." &&
             (tokens_[start - 2].kind == Kind::kWord || tokens_[start - 2].kind == Kind::kQuoted)) {
        start -= 2;
      }
      if (start > 0 && tokens_[start - 1].text == ".") {
        return Error(tokens_[i].offset, "a JSON path after ':' on something that is not a column's name");
      }
      std::string column;
      for (size_t k = start; k < i; ++k) column += tokens_[k].text;
      std::string path = "$";
      size_t k = i + 1;
      bool expect_name = true;
      while (k < tokens_.size()) {
        const Token& t = tokens_[k];
        if (expect_name && (t.kind == Kind::kWord || t.kind == Kind::kQuoted)) {
          const std::string key = t.kind == Kind::kQuoted ? Unquote(t.text) : t.text;
          const bool plain = std::all_of(key.begin(), key.end(), IsWordChar) && !key.empty();
          path += plain ? "." + key : ".\"" + key + "\"";
          expect_name = false;
          ++k;
        } else if (t.text == "[" && k + 2 < tokens_.size() && tokens_[k + 2].text == "]" &&
                   (tokens_[k + 1].kind == Kind::kNumber || tokens_[k + 1].kind == Kind::kString)) {
          const Token& index = tokens_[k + 1];
          path += index.kind == Kind::kNumber ? "[" + index.text + "]" : ".\"" + Unquote(index.text) + "\"";
          expect_name = false;
          k += 3;
        } else if (!expect_name && t.text == "." && k + 1 < tokens_.size() &&
                   (tokens_[k + 1].kind == Kind::kWord || tokens_[k + 1].kind == Kind::kQuoted)) {
          expect_name = true;
          ++k;
        } else {
          break;
        }
      }
      if (expect_name) return Error(tokens_[i].offset, "a JSON path after ':' that names nothing");
      if (path.find('\'') != std::string::npos) {
        return Error(tokens_[i].offset, "a JSON path with a quote (') in a key");
      }
      const size_t offset = tokens_[start].offset;
      tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(start),
                    tokens_.begin() + static_cast<std::ptrdiff_t>(k));
      tokens_.insert(tokens_.begin() + static_cast<std::ptrdiff_t>(start),
                     Token{Kind::kQuoted, "json_extract(" + column + ", '" + path + "')", offset});
      i = start;
    }
    return Status::OK();
  }

  // Whether the token at `i` may be part of an additive expression's left
  // operand (what `x - INTERVAL …` subtracts from).
  bool InOperand(const Token& t) const {
    switch (t.kind) {
      case Kind::kQuoted:
      case Kind::kString:
      case Kind::kNumber:
        return true;
      case Kind::kWord:
        return !IsKeyword(t.text) && !Equals(t.text, "INTERVAL");
      case Kind::kPunct: {
        static constexpr std::string_view kOperators[] = {".", "+", "-", "*", "/", "%", "||"};
        return std::find(std::begin(kOperators), std::end(kOperators), t.text) != std::end(kOperators);
      }
      case Kind::kSpace:
        return true;
    }
    return false;
  }

  // x ± INTERVAL n UNIT → spool_timestamp_add(x, ±(n), 'UNIT'), x being
  // the additive expression before the operator (its tokens back to a
  // comparison, a keyword, a comma or an unmatched parenthesis).
  Status RewriteIntervals() {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      if (!IsWord(i, "INTERVAL")) continue;
      const size_t op = Prev(i);
      const auto misuse = [&] {
        return Error(tokens_[i].offset,
                     "INTERVAL is understood only as timestamp + INTERVAL n UNIT or timestamp - INTERVAL n UNIT, "
                     "UNIT being DAY(S), HOUR(S), MINUTE(S), SECOND(S) or WEEK(S)");
      };
      if (op == std::string::npos || (tokens_[op].text != "+" && tokens_[op].text != "-")) return misuse();
      const size_t amount = Next(i), unit = Next(amount);
      if (amount >= tokens_.size() || unit >= tokens_.size()) return misuse();
      std::string n = tokens_[amount].text;
      if (tokens_[amount].kind == Kind::kString) n = Unquote(n);
      if (n.empty() ||
          !std::all_of(n.begin(), n.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
          n.size() > 12) {
        return misuse();
      }
      std::string unit_name = tokens_[unit].text;
      std::transform(unit_name.begin(), unit_name.end(), unit_name.begin(),
                     [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
      if (!unit_name.empty() && unit_name.back() == 'S') unit_name.pop_back();
      static constexpr std::string_view kUnits[] = {"WEEK", "DAY", "HOUR", "MINUTE", "SECOND"};
      if (tokens_[unit].kind != Kind::kWord ||
          std::find(std::begin(kUnits), std::end(kUnits), unit_name) == std::end(kUnits)) {
        return misuse();
      }
      // The left operand: back over operands, operators and balanced
      // parentheses.
      size_t start = op;
      int depth = 0;
      while (start > 0) {
        const Token& t = tokens_[start - 1];
        if (t.text == ")") {
          ++depth;
        } else if (t.text == "(") {
          if (depth == 0) break;
          --depth;
        } else if (depth == 0 && !InOperand(t)) {
          break;
        }
        --start;
      }
      // A name's ':' or '.' right before it would make the rewritten call
      // part of something else (a JSON path, a qualified name).
      if (start > 0 && (tokens_[start - 1].text == ":" || tokens_[start - 1].text == ".")) return misuse();
      while (start < op && tokens_[start].kind == Kind::kSpace) ++start;
      std::string left;
      for (size_t k = start; k < op; ++k) left += tokens_[k].text;
      left.erase(left.find_last_not_of(" \t\r\n") + 1);
      if (left.empty()) return misuse();
      const std::string sign = tokens_[op].text == "-" ? "-" : "";
      const size_t offset = tokens_[start].offset;
      tokens_.erase(tokens_.begin() + static_cast<std::ptrdiff_t>(start),
                    tokens_.begin() + static_cast<std::ptrdiff_t>(unit + 1));
      tokens_.insert(
          tokens_.begin() + static_cast<std::ptrdiff_t>(start),
          Token{Kind::kQuoted, "spool_timestamp_add(" + left + ", " + sign + n + ", '" + unit_name + "')", offset});
      i = start;
    }
    return Status::OK();
  }

  std::string_view text_;
  const std::vector<std::string>& tables_;
  std::vector<Token> tokens_;
  std::vector<std::string> declare_;              // the virtual tables the session declares for the text
  std::pair<std::string, size_t> unknown_table_;  // a three-part name no table has, and where
};

}  // namespace

std::string QuoteSql(std::string_view text, char quote) {
  std::string quoted(1, quote);
  for (char c : text) {
    if (c == quote) quoted += quote;  // doubled, it stands for itself
    quoted += c;
  }
  return quoted + quote;
}

Status TranslateSpark(std::string_view text, const std::vector<std::string>& tables, std::string* sqlite,
                      std::vector<std::string>* declare) {
  return Translator(text, tables).Run(sqlite, declare);
}

}  // namespace spool::sql
