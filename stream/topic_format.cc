// Record bodies and the TOPIC file; the grammar is in docs/topic_format.md.
#include "topic_format.h"

#include <bit>
#include <cstring>

#include "parse_whole.h"
#include "spool/txnlog/checksum.h"

namespace spool::topicfmt {
namespace {

static_assert(std::endian::native == std::endian::little, "topic records are little-endian");

// Version 2 ends with a checksum line; version 1 (topics made before it)
// has none and is still read.
constexpr std::string_view kConfigMagic = "spool-topic 2";
constexpr std::string_view kConfigMagicV1 = "spool-topic 1";

template <typename T>
void PutFixed(std::string* out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out->append(bytes, sizeof(T));
}

// Takes a T from the front of `*in`; false when too few bytes are left.
template <typename T>
bool GetFixed(std::string_view* in, T* value) {
  if (in->size() < sizeof(T)) return false;
  std::memcpy(value, in->data(), sizeof(T));
  in->remove_prefix(sizeof(T));
  return true;
}

// Takes `length` bytes from the front of `*in`.
bool GetBytes(std::string_view* in, uint32_t length, std::string_view* bytes) {
  if (in->size() < length) return false;
  *bytes = in->substr(0, length);
  in->remove_prefix(length);
  return true;
}

Status BadMessage(uint64_t offset, std::string_view what, size_t left) {
  return Status::Corruption("message at offset " + std::to_string(offset) + ": " + std::string(what) + " (" +
                            std::to_string(left) + " bytes left)");
}

// Takes the line "NAME VALUE\n" from the front of `*text`.
bool GetSetting(std::string_view* text, std::string_view name, uint64_t* value) {
  const size_t end = text->find('\n');
  if (end == std::string_view::npos) return false;
  std::string_view line = text->substr(0, end);
  text->remove_prefix(end + 1);
  if (!line.starts_with(name) || line.size() <= name.size() + 1 || line[name.size()] != ' ') return false;
  line.remove_prefix(name.size() + 1);
  return ParseWhole(line, value);
}

}  // namespace

uint64_t MessagesBytes(std::span<const TopicWrite> batch) {
  uint64_t bytes = 0;
  for (const TopicWrite& m : batch) bytes += kMessageHeaderBytes + m.key.size() + m.value.size();
  return bytes;
}

void PutRecordHeader(const RecordHeader& header, std::string* body) {
  body->push_back(static_cast<char>(kRecordFormat));
  PutFixed(body, header.base_offset);
  PutFixed(body, header.count);
}

void PutMessages(std::span<const TopicWrite> batch, std::string* body) {
  for (const TopicWrite& m : batch) {
    PutFixed(body, static_cast<uint32_t>(m.key.size()));
    PutFixed(body, static_cast<uint32_t>(m.value.size()));
    body->append(m.key);
    body->append(m.value);
  }
}

Status ParseRecordHeader(std::string_view body, RecordHeader* header) {
  uint8_t format = 0;
  if (!GetFixed(&body, &format) || !GetFixed(&body, &header->base_offset) || !GetFixed(&body, &header->count)) {
    return Status::Corruption("record body of " + std::to_string(body.size()) + " bytes is shorter than its header");
  }
  if (format != kRecordFormat) return Status::Corruption("unknown record format " + std::to_string(format));
  if (header->count == 0 || header->count > kMaxTopicBatchMessages) {
    return Status::Corruption("record claims " + std::to_string(header->count) + " messages (1 to " +
                              std::to_string(kMaxTopicBatchMessages) + " allowed)");
  }
  if (header->base_offset > UINT64_MAX - header->count) {
    return Status::Corruption("record base offset " + std::to_string(header->base_offset) + " overflows");
  }
  return Status::OK();
}

Status DecodeRecord(std::string_view body, RecordHeader* header, std::vector<MessageView>* messages) {
  SPOOL_RETURN_IF_ERROR(ParseRecordHeader(body, header));
  body.remove_prefix(kRecordHeaderBytes);
  // Every message takes at least its header: a count the body cannot hold is
  // refused before anything is reserved for it.
  if (header->count > body.size() / kMessageHeaderBytes) {
    return BadMessage(header->base_offset, std::to_string(header->count) + " messages cannot fit", body.size());
  }
  messages->clear();
  messages->reserve(header->count);
  for (uint64_t offset = header->base_offset; offset < header->base_offset + header->count; ++offset) {
    uint32_t key_length = 0;
    uint32_t value_length = 0;
    MessageView m;
    if (!GetFixed(&body, &key_length) || !GetFixed(&body, &value_length)) {
      return BadMessage(offset, "truncated lengths", body.size());
    }
    if (!GetBytes(&body, key_length, &m.key)) {
      return BadMessage(offset, "key of " + std::to_string(key_length) + " bytes", body.size());
    }
    if (!GetBytes(&body, value_length, &m.value)) {
      return BadMessage(offset, "value of " + std::to_string(value_length) + " bytes", body.size());
    }
    messages->push_back(m);
  }
  if (!body.empty()) {
    return Status::Corruption(std::to_string(body.size()) + " bytes after the last message, offset " +
                              std::to_string(header->base_offset + header->count - 1));
  }
  return Status::OK();
}

std::string EncodeConfig(const TopicConfig& config) {
  return WithChecksumLine(std::string(kConfigMagic) + "\nretention_age_us " + std::to_string(config.retention.age_us) +
                          "\nretention_bytes " + std::to_string(config.retention.bytes) + "\nsegment_size_bytes " +
                          std::to_string(config.segment_size_bytes) + "\n");
}

Status ParseConfig(std::string_view text, TopicConfig* config) {
  if (text.starts_with(std::string(kConfigMagic) + "\n")) {
    SPOOL_RETURN_IF_ERROR(StripChecksumLine(text, &text));
  } else if (!text.starts_with(std::string(kConfigMagicV1) + "\n")) {
    return Status::Corruption("line 1 is not '" + std::string(kConfigMagic) + "'");
  }
  text.remove_prefix(kConfigMagic.size() + 1);
  if (!GetSetting(&text, "retention_age_us", &config->retention.age_us)) {
    return Status::Corruption("line 2 is not 'retention_age_us N'");
  }
  if (!GetSetting(&text, "retention_bytes", &config->retention.bytes)) {
    return Status::Corruption("line 3 is not 'retention_bytes N'");
  }
  if (!GetSetting(&text, "segment_size_bytes", &config->segment_size_bytes)) {
    return Status::Corruption("line 4 is not 'segment_size_bytes N'");
  }
  if (!text.empty()) return Status::Corruption("unexpected text after line 4");
  Status s = CheckConfig(*config);
  return s.ok() ? s : Status::Corruption(s.message());
}

Status CheckConfig(const TopicConfig& config) {
  if (config.segment_size_bytes < kMinTopicSegmentBytes || config.segment_size_bytes > kMaxTopicSegmentBytes) {
    return Status::InvalidArgument("segment size " + std::to_string(config.segment_size_bytes) + " must be between " +
                                   std::to_string(kMinTopicSegmentBytes) + " and " +
                                   std::to_string(kMaxTopicSegmentBytes) + " bytes");
  }
  return Status::OK();
}

}  // namespace spool::topicfmt
