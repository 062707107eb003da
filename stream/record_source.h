// What the sources of records share (internal to stream/): files, a topic
// and message logs (message_source.cc) parse records of declared columns
// and keep a numeric offset in their flow's checkpoint.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flow_parts.h"
#include "parse_whole.h"
#include "spool/stream/records.h"

namespace spool::stream_internal {

// A source's offset as its flow's checkpoint holds it: decimal digits, or
// empty (nothing read yet: 0). Stored data, so checked, never thrown over.
inline Status ParseOffset(const std::string& offset, std::string_view source, uint64_t* value) {
  *value = 0;
  if (offset.empty()) return Status::OK();
  if (!ParseWhole(offset, value)) {
    return Status::Corruption(std::string(source) + ": the checkpoint's offset '" + offset + "' is not a number");
  }
  return Status::OK();
}

inline constexpr std::string_view kRescueColumn = "_rescued_data";

// A source of records (files, a topic, a message log): their schema, and the parser that
// reads them, leaving NULL the columns its flow does not read.
class RecordSource : public Source {
 public:
  const Schema& schema() const override { return schema_; }

  // The rescue column is kept, read or not (RecordOptions::leave_null).
  Status LeaveNull(const std::vector<bool>& columns) override {
    options_.leave_null = columns;
    const std::optional<size_t> rescue = schema_.FindColumn(options_.rescue_column);
    if (options_.bad_records == BadRecordPolicy::kRescue && rescue) options_.leave_null[*rescue] = false;
    return RecordParser::Make(schema_, options_, &parser_);
  }

 protected:
  // `name`: the records' source in errors and rescued data.
  Status InitRecords(const SourceSpec& spec, std::string name, const std::string& place) {
    SPOOL_RETURN_IF_ERROR(RecordSchema(spec, place, &schema_));
    options_.format = spec.format == FileFormat::kCsv ? RecordFormat::kCsv : RecordFormat::kJsonLines;
    options_.bad_records = spec.bad_records == BadRecords::kRescue ? BadRecordPolicy::kRescue : BadRecordPolicy::kFail;
    options_.rescue_column = std::string(kRescueColumn);
    options_.source_name = std::move(name);
    return RecordParser::Make(schema_, options_, &parser_);
  }

  Schema schema_;
  RecordOptions options_;
  std::unique_ptr<const RecordParser> parser_;  // of schema_ and options_
};

}  // namespace spool::stream_internal
