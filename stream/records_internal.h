// The two readings of RecordParser::ParseJson, apart: for the tests and the
// fuzzer that check they agree. Internal to stream.
#pragma once

#include <optional>
#include <string_view>

#include "spool/stream/records.h"

namespace spool {

// The fast path alone: nothing when it gives the record up, else what
// ParseJson returns.
std::optional<Status> ParseFlatJsonOnly(const RecordParser& parser, std::string_view text, Row* row);
// The reference reading alone: as ParseJson.
Status ParseJsonReferenceOnly(const RecordParser& parser, std::string_view text, Row* row);

}  // namespace spool
