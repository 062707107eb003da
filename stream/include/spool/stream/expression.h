// Expressions for filters and projections (docs/design.md): a small SQL-like
// language over the columns of one row.
//
//   expr     := or
//   or       := and (OR and)*
//   and      := not (AND not)*
//   not      := NOT not | compare
//   compare  := sum [(= | != | <> | < | <= | > | >=) sum | IS [NOT] NULL]
//   sum      := product ((+ | - | ||) product)*
//   product  := unary ((* | / | %) unary)*
//   unary    := - unary | primary
//   primary  := literal | column | function '(' [expr (, expr)*] ')'
//             | CAST '(' expr AS type ')' | CASE (WHEN expr THEN expr)+ [ELSE expr] END
//             | '(' expr ')'
//   literal  := 42 | 4.2 | 4e2 | 'text' ('' inside for a quote) | TRUE | FALSE
//             | NULL | TIMESTAMP 'yyyy-MM-dd HH:mm:ss[.ffffff]'
//   column   := name | `any name` (`` inside for a backquote)
//   function := coalesce | lower | upper | length | abs | round | date_trunc
//
// Keywords, type and function names are case-insensitive; column names are
// not. Types are checked when parsed, as in Spark SQL: int64 and double mix
// (to double), `/` divides to a double, `%` keeps int64, `||` joins strings,
// comparisons need comparable types, AND / OR / NOT use three-valued logic,
// and any other operation with a NULL operand is NULL. Division by zero,
// int64 overflow and a cast that does not fit are evaluation errors naming
// the expression's column: an update fails rather than write a wrong value.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/schema.h"
#include "spool/txnlog/status.h"

namespace spool {

class Expression {
 public:
  // Parses `text` over rows of `input` and checks its types. Errors:
  // InvalidArgument "at column N: …" (N counts characters of `text` from 1)
  // naming what is wrong: an unknown column or function, an operand of the
  // wrong type, a malformed literal, an unexpected or missing token.
  static Status Parse(std::string_view text, const Schema& input, Expression* expression);

  Expression();
  ~Expression();
  Expression(Expression&&) noexcept;
  Expression& operator=(Expression&&) noexcept;

  // The type of the value when it is not NULL (kBool for a bare NULL).
  ColumnType type() const;
  // Whether it can evaluate to NULL.
  bool nullable() const;
  const std::string& text() const { return text_; }
  // The input column it reads, when it is a bare column reference (a caller
  // evaluating it per row may then read the row's value in place).
  std::optional<size_t> column() const;
  // Sets (*columns)[i] for each input column i it reads; `columns` has a
  // flag for every input column.
  void MarkColumnsRead(std::vector<bool>* columns) const;

  // Evaluates over `row`, a row of the input schema. Errors: InvalidArgument
  // "at column N: …" (division by zero, int64 overflow, a failed cast).
  Status Evaluate(const Row& row, Value* value) const;
  // For a filter: whether `row` passes (NULL does not). Errors: as Evaluate;
  // InvalidArgument when the expression is not boolean.
  Status Matches(const Row& row, bool* matches) const;

  struct Node;

 private:
  std::string text_;
  std::unique_ptr<Node> root_;
};

}  // namespace spool
