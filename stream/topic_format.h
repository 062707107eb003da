// The bytes of a topic: the body of each log record and the TOPIC file.
// docs/topic_format.md has the grammar; this is what the topic writes and
// reads, and what its tests and fuzzers decode. Internal to stream.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "spool/stream/topic.h"

namespace spool::topicfmt {

inline constexpr std::string_view kConfigFileName = "TOPIC";
inline constexpr std::string_view kLogDirName = "log";
// The operation of every record a topic writes to its log.
inline constexpr std::string_view kProduceOperation = "PRODUCE";

inline constexpr uint8_t kRecordFormat = 1;
inline constexpr uint64_t kRecordHeaderBytes = 1 + 8 + 4;  // format, base offset, count
inline constexpr uint64_t kMessageHeaderBytes = 4 + 4;     // key length, value length
static_assert(kMaxTopicBatchBytes <= UINT32_MAX, "key and value lengths are u32");
static_assert(kMaxTopicBatchMessages <= UINT32_MAX, "count is a u32");

// The header of one record body: it holds offsets base_offset .. base_offset + count - 1.
struct RecordHeader {
  uint64_t base_offset = 0;
  uint32_t count = 0;
};

struct MessageView {
  std::string_view key;
  std::string_view value;
};

// The body bytes `batch` takes, its record header excluded.
uint64_t MessagesBytes(std::span<const TopicWrite> batch);
void PutRecordHeader(const RecordHeader& header, std::string* body);
void PutMessages(std::span<const TopicWrite> batch, std::string* body);

// Reads and checks the header of `body` (format, 1 <= count <=
// kMaxTopicBatchMessages, no offset overflow). Errors: Corruption, with a
// message naming no place (the caller adds the topic and the record).
Status ParseRecordHeader(std::string_view body, RecordHeader* header);
// Decodes a whole body: every length is checked against the bytes left, and
// the messages must fill the body exactly. `*messages` views `body`.
// Errors: Corruption naming the offset of the first bad message.
Status DecodeRecord(std::string_view body, RecordHeader* header, std::vector<MessageView>* messages);

std::string EncodeConfig(const TopicConfig& config);
// Errors: Corruption naming the line that is not what EncodeConfig writes.
Status ParseConfig(std::string_view text, TopicConfig* config);
// Errors: InvalidArgument (a segment size out of range).
Status CheckConfig(const TopicConfig& config);

}  // namespace spool::topicfmt
