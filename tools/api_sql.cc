// POST /api/2.0/sql/statements: a statement run over the store, answered
// in the shape of the reference vendor's SQL Statement Execution API
// (docs/sql.md, "Over HTTP"):
//
//   {"statement": "SELECT …", "wait_timeout": "30s", "row_limit": 100}
//   → {"statement_id": "…", "status": {"state": "SUCCEEDED"},
//      "manifest": {"format": "JSON_ARRAY", "schema": {"column_count": 2,
//                   "columns": [{"name": "id", "type_name": "LONG",
//                                "type_text": "LONG", "position": 0}, …]},
//                   "total_row_count": 2, "truncated": false},
//      "result": {"row_count": 2, "data_array": [["1", "a"], …]}}
//
// The statement runs within the request, for at most wait_timeout (default
// 60 s); values come as strings (null as null), as the reference's
// JSON_ARRAY format gives them. An answer holds at most row_limit rows and
// kMaxResultBytes of values; past either it is cut, with "truncated": true.
#include <string>
#include <vector>

#include "api_responses.h"
#include "row_format.h"
#include "spool/sql/sql.h"
#include "spool/stream/pipeline.h"

namespace spool::cli {
namespace {

constexpr uint64_t kDefaultTimeoutMs = 60'000;
constexpr uint64_t kMaxTimeoutMs = 3'600'000;
constexpr size_t kMaxResultBytes = 16u << 20;

// The reference's type name for a column SQLite declares as `declared`, or
// (an expression, which declares none) for the first value it holds.
std::string TypeName(const std::string& declared, const Value* first) {
  if (declared == "INTEGER") return "LONG";
  if (declared == "REAL") return "DOUBLE";
  if (declared == "TEXT") return "STRING";
  if (declared == "BOOLEAN" || declared == "TIMESTAMP") return declared;
  if (declared == "BLOB") return "BINARY";
  if (first != nullptr) {
    if (std::holds_alternative<int64_t>(*first)) return "LONG";
    if (std::holds_alternative<double>(*first)) return "DOUBLE";
    if (std::holds_alternative<Bytes>(*first)) return "BINARY";
  }
  return "STRING";
}

// "30s", "5 s", "0s" (the default) as milliseconds.
Status ParseWaitTimeout(const ApiJson& value, uint64_t* ms) {
  if (!value.is_string()) return Status::InvalidArgument("wait_timeout must be a string such as \"30s\"");
  std::string text = value.get<std::string>();
  if (text.ends_with("s")) text.pop_back();
  while (!text.empty() && text.back() == ' ') text.pop_back();
  if (text.empty() || text.size() > 7 || text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument("wait_timeout must be a number of seconds such as \"30s\", not \"" +
                                   value.get<std::string>() + "\"");
  }
  const uint64_t seconds = std::stoull(text);
  *ms = seconds == 0 ? kDefaultTimeoutMs : seconds * 1000;
  if (*ms > kMaxTimeoutMs) return Status::InvalidArgument("wait_timeout is at most 3600s");
  return Status::OK();
}

// The request's fields: the statement, its options, its row limit (0:
// none). Errors: InvalidArgument naming the field.
Status ParseRequest(const std::string& body, std::string* statement, sql::QueryOptions* options, uint64_t* row_limit) {
  const ApiJson request = ApiJson::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!request.is_object()) return Status::InvalidArgument("the body must be a JSON object");
  for (const auto& [key, value] : request.items()) {
    if (key != "statement" && key != "wait_timeout" && key != "row_limit" && key != "warehouse_id" && key != "format" &&
        key != "disposition") {
      return Status::InvalidArgument("unknown field '" + key +
                                     "' (this endpoint takes statement, wait_timeout, row_limit, format, disposition)");
    }
  }
  if (!request.contains("statement") || !request["statement"].is_string()) {
    return Status::InvalidArgument("statement is required: the SQL to run, as a string");
  }
  *statement = request["statement"].get<std::string>();
  if (request.contains("format") && request["format"] != "JSON_ARRAY") {
    return Status::InvalidArgument("format: only JSON_ARRAY is served");
  }
  if (request.contains("disposition") && request["disposition"] != "INLINE") {
    return Status::InvalidArgument("disposition: only INLINE is served");
  }
  options->timeout_ms = kDefaultTimeoutMs;
  if (request.contains("wait_timeout"))
    SPOOL_RETURN_IF_ERROR(ParseWaitTimeout(request["wait_timeout"], &options->timeout_ms));
  *row_limit = 0;
  if (request.contains("row_limit")) {
    if (!request["row_limit"].is_number_unsigned() || request["row_limit"].get<uint64_t>() == 0) {
      return Status::InvalidArgument("row_limit must be a whole number of at least 1");
    }
    *row_limit = request["row_limit"].get<uint64_t>();
  }
  return Status::OK();
}

// The last statement's rows (a body may hold several statements), as the
// reference's JSON_ARRAY gives them, cut at the row limit and the byte
// bound.
class Collector {
 public:
  explicit Collector(uint64_t row_limit) : row_limit_(row_limit) {
    handler_.on_columns = [this](const std::vector<sql::ResultColumn>& c) {
      columns_ = c;
      data_ = ApiJson::array();
      firsts_.assign(c.size(), Value());
      bytes_ = 0;
      truncated_ = false;
    };
    handler_.on_row = [this](const Row& row) { return Add(row); };
  }
  const sql::ResultHandler& handler() const { return handler_; }

  ApiJson Answer() {
    ApiJson columns = ApiJson::array();
    for (size_t i = 0; i < columns_.size(); ++i) {
      const std::string type = TypeName(columns_[i].declared_type, IsNull(firsts_[i]) ? nullptr : &firsts_[i]);
      columns.push_back({{"name", columns_[i].name}, {"type_name", type}, {"type_text", type}, {"position", i}});
    }
    const size_t rows = data_.size();
    return ApiJson{{"statement_id", NewUpdateId()},
                   {"status", {{"state", "SUCCEEDED"}}},
                   {"manifest",
                    {{"format", "JSON_ARRAY"},
                     {"schema", {{"column_count", columns_.size()}, {"columns", columns}}},
                     {"total_row_count", rows},
                     {"truncated", truncated_}}},
                   {"result", {{"row_count", rows}, {"data_array", std::move(data_)}}}};
  }

 private:
  bool Add(const Row& row) {
    if ((row_limit_ != 0 && data_.size() >= row_limit_) || bytes_ >= kMaxResultBytes) {
      truncated_ = true;
      return false;
    }
    ApiJson values = ApiJson::array();
    for (size_t i = 0; i < row.size(); ++i) {
      if (IsNull(row[i])) {
        values.push_back(nullptr);
        continue;
      }
      if (IsNull(firsts_[i])) firsts_[i] = row[i];  // the column's type, for an expression
      std::string text = ValueText(row[i]);
      bytes_ += text.size() + 4;
      values.push_back(std::move(text));
    }
    data_.push_back(std::move(values));
    return true;
  }

  const uint64_t row_limit_;
  sql::ResultHandler handler_;
  std::vector<sql::ResultColumn> columns_;
  ApiJson data_ = ApiJson::array();
  std::vector<Value> firsts_;  // each column's first non-null value
  size_t bytes_ = 0;
  bool truncated_ = false;
};

}  // namespace

ApiResponse SqlStatement(Store* store, const std::string& body) {
  std::string statement;
  sql::QueryOptions options;
  uint64_t row_limit = 0;
  if (Status s = ParseRequest(body, &statement, &options, &row_limit); !s.ok()) return ApiFromStatus(s);
  Collector collector(row_limit);
  const Status s = sql::Query(store, statement, options, collector.handler());
  if (!s.ok()) {
    // A statement that cannot run is the request's fault, unless the store is damaged.
    if (s.IsCorruption() || s.IsIOError()) return ApiFromStatus(s);
    return ApiError(400, "INVALID_PARAMETER_VALUE", std::string(s.message()));
  }
  return ApiOk(collector.Answer());
}

}  // namespace spool::cli
