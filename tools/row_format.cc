// Value printing for the spool CLI (formats in spool/stream/records.h) and
// RowPrinter.
#include "row_format.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "invariant.h"
#include "json_format.h"
#include "json_text.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string DoubleText(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", d);
}

// Control characters as escapes, so a value keeps to one table cell.
std::string CellText(const Value& value) {
  std::string text = ValueText(value);
  if (std::none_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) return text;
  std::string out;
  for (char c : text) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out.push_back(c);
  }
  return out;
}

std::string CsvQuote(std::string_view text, bool force) {
  if (!force && text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  return out + "\"";
}

}  // namespace

std::string ValueText(const Value& value) {
  switch (value.index()) {
    case 0:
      return "NULL";
    case 1:
      return std::to_string(std::get<int64_t>(value));
    case 2:
      return DoubleText(std::get<double>(value));
    case 3:
      return std::get<std::string>(value);
    case 4:
      return std::get<bool>(value) ? "true" : "false";
    case 5:
      return FormatTimestampMicros(std::get<Timestamp>(value).micros);
    default:
      return EncodeBase64(std::get<Bytes>(value).data);
  }
}

// ---------------------------------------------------------------------------
// RowPrinter

RowPrinter::RowPrinter(OutputFormat format, std::vector<std::string> columns, std::ostream* out)
    : format_(format), columns_(columns.size()), out_(out) {
  switch (format_) {
    case OutputFormat::kTable:
      table_ = std::make_unique<Table>(std::move(columns));
      break;
    case OutputFormat::kJsonLines:
      names_ = std::move(columns);
      break;
    case OutputFormat::kCsv: {
      std::string header;
      for (size_t i = 0; i < columns.size(); ++i) header += (i == 0 ? "" : ",") + CsvQuote(columns[i], false);
      *out_ << header << "\n";
      break;
    }
  }
}

RowPrinter::~RowPrinter() = default;

void RowPrinter::Add(const Row& values) {
  SPOOL_CHECK(values.size() == columns_, "a printed row has the header's columns");
  ++rows_;
  switch (format_) {
    case OutputFormat::kTable: {
      std::vector<std::string> cells;
      for (const Value& v : values) cells.push_back(CellText(v));
      table_->AddRow(std::move(cells));
      return;
    }
    case OutputFormat::kJsonLines: {
      ordered_json object = ordered_json::object();
      for (size_t i = 0; i < values.size() && i < names_.size(); ++i) object[names_[i]] = ValueJson(values[i]);
      *out_ << JsonText(object) << "\n";
      return;
    }
    case OutputFormat::kCsv: {
      std::string line;
      for (size_t i = 0; i < values.size(); ++i) {
        if (i > 0) line.push_back(',');
        if (!IsNull(values[i])) {
          const std::string text = ValueText(values[i]);
          line += CsvQuote(text, text.empty());
        }
      }
      *out_ << line << "\n";
      return;
    }
  }
}

void RowPrinter::Finish() {
  if (table_ != nullptr) *out_ << table_->ToString();
  out_->flush();
}

}  // namespace spool::cli
