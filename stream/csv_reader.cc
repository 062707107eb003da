// CSV splitting (RFC 4180); see csv_reader.h.
#include "csv_reader.h"

#include <algorithm>

#include "invariant.h"

namespace spool {

Status CsvReader::Next(CsvRecord* record, bool* got) {
  record->size = 0;
  record->line = line_;
  record_pos_ = pos_;
  record_line_ = line_;
  *got = pos_ < data_.size();
  while (*got) {
    if (record->size == record->fields.size()) record->fields.emplace_back();
    CsvField& field = record->fields[record->size++];
    SPOOL_RETURN_IF_ERROR(ReadField(&field));
    if (pos_ >= data_.size()) {
      record->raw = data_.substr(record_pos_);
      break;
    }
    const size_t separator = pos_;
    const char c = data_[pos_++];
    if (c == ',') continue;
    if (c == '\r' && pos_ < data_.size() && data_[pos_] == '\n') ++pos_;
    ++line_;
    record->raw = data_.substr(record_pos_, separator - record_pos_);
    break;
  }
  return Status::OK();
}

std::string_view CsvReader::SkipBadRecord() {
  const size_t end = std::min(data_.find('\n', record_pos_), data_.size());
  std::string_view line = data_.substr(record_pos_, end - record_pos_);
  if (line.ends_with('\r')) line.remove_suffix(1);
  pos_ = std::min(end + 1, data_.size());
  line_ = record_line_ + 1;
  return line;
}

// Reads a field up to (not past) its separator.
Status CsvReader::ReadField(CsvField* field) {
  field->quoted = false;
  field->escaped = false;
  if (pos_ < data_.size() && data_[pos_] == '"') return ReadQuoted(field);
  const size_t end = std::min(data_.find_first_of(",\r\n", pos_), data_.size());
  field->raw = data_.substr(pos_, end - pos_);
  pos_ = end;
  if (field->raw.find('"') != std::string_view::npos) {
    return Error(line_, "a quote inside an unquoted field (quote the whole field and double the quote)");
  }
  return Status::OK();
}

Status CsvReader::ReadQuoted(CsvField* field) {
  const uint64_t start_line = line_;
  field->quoted = true;
  const size_t begin = ++pos_;
  while (true) {
    const size_t quote = data_.find('"', pos_);
    if (quote == std::string_view::npos) {
      line_ += static_cast<uint64_t>(std::count(data_.begin() + static_cast<ptrdiff_t>(pos_), data_.end(), '\n'));
      pos_ = data_.size();
      return Error(start_line, "a quoted field is never closed");
    }
    line_ += static_cast<uint64_t>(
        std::count(data_.begin() + static_cast<ptrdiff_t>(pos_), data_.begin() + static_cast<ptrdiff_t>(quote), '\n'));
    pos_ = quote + 1;
    if (pos_ < data_.size() && data_[pos_] == '"') {
      field->escaped = true;
      ++pos_;
      continue;
    }
    break;
  }
  field->raw = data_.substr(begin, pos_ - 1 - begin);
  if (field->escaped) {
    field->unescaped.clear();
    for (size_t i = 0; i < field->raw.size(); ++i) {
      field->unescaped.push_back(field->raw[i]);
      if (field->raw[i] == '"') ++i;  // the second of a pair
    }
  }
  if (pos_ < data_.size() && data_[pos_] != ',' && data_[pos_] != '\n' && data_[pos_] != '\r') {
    return Error(line_, "text after a closing quote (a quote inside a quoted field is written \"\")");
  }
  return Status::OK();
}

Status CsvReader::Error(uint64_t line, std::string_view what) {
  SPOOL_CHECK(line >= record_line_, "a CSV error is at or after the line its record starts on");
  error_line_ = line;
  return Status::InvalidArgument(std::string("malformed CSV: ").append(what));
}

}  // namespace spool
