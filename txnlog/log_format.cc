#include "log_format.h"

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "invariant.h"
#include "spool/txnlog/checksum.h"

namespace spool::logfmt {

void PutFixed64(std::string* out, uint64_t value) {
  char buf[8];
  std::memcpy(buf, &value, 8);
  out->append(buf, 8);
}

void PutFixed32(std::string* out, uint32_t value) {
  char buf[4];
  std::memcpy(buf, &value, 4);
  out->append(buf, 4);
}

uint64_t LoadFixed64(const char* p) {
  uint64_t value;
  std::memcpy(&value, p, 8);
  return value;
}

uint32_t LoadFixed32(const char* p) {
  uint32_t value;
  std::memcpy(&value, p, 4);
  return value;
}

uint64_t Hash64(std::string_view bytes, uint64_t seed) {
  return XXH3_64bits_withSeed(bytes.data(), bytes.size(), seed);
}

// Record: checksum u64 | payload_length u32 | type u8 | flags u8 |
// group_index u16 | epoch u64 | version u64 | timestamp_us u64 | payload |
// zero padding to a multiple of kRecordAlignment (not checksummed).
void AppendRecord(uint64_t store_id, RecordHeader header, std::string_view payload, std::string* out) {
  SPOOL_CHECK(payload.size() <= kMaxPayloadBytes, "Append refuses a payload over kMaxPayloadBytes");
  SPOOL_CHECK(header.epoch > 0 && header.version > 0, "epochs and versions start at 1");
  const size_t start = out->size();
  PutFixed64(out, 0);  // checksum, patched below
  PutFixed32(out, static_cast<uint32_t>(payload.size()));
  out->push_back(static_cast<char>(header.type));
  out->push_back(static_cast<char>(header.flags));
  out->push_back(static_cast<char>(header.group_index & 0xff));
  out->push_back(static_cast<char>(header.group_index >> 8));
  PutFixed64(out, header.epoch);
  PutFixed64(out, header.version);
  PutFixed64(out, header.timestamp_us);
  out->append(payload);
  std::string_view covered(out->data() + start + 8, out->size() - start - 8);
  const uint64_t checksum = Hash64(covered, store_id);
  std::memcpy(out->data() + start, &checksum, 8);
  out->resize(start + RecordBytes(payload.size()), '\0');
}

std::string_view RecordCheckName(RecordCheck check) {
  switch (check) {
    case RecordCheck::kValid:
      return "valid";
    case RecordCheck::kShort:
      return "record runs past the end of the data";
    case RecordCheck::kBadLength:
      return "record length out of bounds";
    case RecordCheck::kBadChecksum:
      return "checksum mismatch";
    case RecordCheck::kBadType:
      return "unknown record type or flags";
    case RecordCheck::kUnexpected:
      return "record out of sequence (epoch or version)";
  }
  return "unknown";
}

RecordCheck DecodeRecord(uint64_t store_id, std::string_view bytes, RecordHeader* header) {
  if (bytes.size() < kRecordHeaderBytes) return RecordCheck::kShort;
  const char* p = bytes.data();
  header->checksum = LoadFixed64(p);
  header->payload_length = LoadFixed32(p + 8);
  header->type = static_cast<RecordType>(static_cast<uint8_t>(p[12]));
  header->flags = static_cast<uint8_t>(p[13]);
  header->group_index = static_cast<uint16_t>(static_cast<uint8_t>(p[14]) | (static_cast<uint8_t>(p[15]) << 8));
  header->epoch = LoadFixed64(p + 16);
  header->version = LoadFixed64(p + 24);
  header->timestamp_us = LoadFixed64(p + 32);
  if (header->payload_length > kMaxPayloadBytes) return RecordCheck::kBadLength;
  if (bytes.size() < RecordBytes(header->payload_length)) return RecordCheck::kShort;
  std::string_view covered = bytes.substr(8, kRecordHeaderBytes - 8 + header->payload_length);
  if (Hash64(covered, store_id) != header->checksum) return RecordCheck::kBadChecksum;
  // Checked after the checksum: a valid checksum over an unknown type is a
  // newer format, not a torn write.
  if (header->type != RecordType::kCommit || (header->flags & ~kKnownFlags) != 0) return RecordCheck::kBadType;
  return RecordCheck::kValid;
}

// Segment header: magic u64 | format_version u32 | header_bytes u32 |
// store_id u64 | number u64 | epoch u64 | first_version u64 |
// prev_number u64 | prev_epoch u64 | prev_last_version u64 |
// prev_end_offset u64 | prev_last_timestamp_us u64 | checksum u64 (XXH3 of all before).
std::string EncodeSegmentHeader(const SegmentHeader& h) {
  std::string out;
  out.reserve(kSegmentHeaderBytes);
  PutFixed64(&out, kSegmentMagic);
  PutFixed32(&out, kFormatVersion);
  PutFixed32(&out, static_cast<uint32_t>(kSegmentHeaderBytes));
  for (uint64_t field : {h.store_id, h.number, h.epoch, h.first_version, h.prev_number, h.prev_epoch,
                         h.prev_last_version, h.prev_end_offset, h.prev_last_timestamp_us}) {
    PutFixed64(&out, field);
  }
  PutFixed64(&out, Hash64(out, 0));
  SPOOL_CHECK(out.size() == kSegmentHeaderBytes, "a segment header is kSegmentHeaderBytes");
  return out;
}

Status DecodeSegmentHeader(std::string_view bytes, SegmentHeader* h) {
  if (bytes.size() < kSegmentHeaderBytes) return Status::Corruption("segment header is truncated");
  const char* p = bytes.data();
  if (LoadFixed64(p) != kSegmentMagic) return Status::Corruption("not a segment file (bad magic)");
  if (Hash64(bytes.substr(0, kSegmentHeaderBytes - 8), 0) != LoadFixed64(p + kSegmentHeaderBytes - 8)) {
    return Status::Corruption("segment header checksum mismatch");
  }
  if (LoadFixed32(p + 8) != kFormatVersion) return Status::Corruption("unsupported segment format version");
  if (LoadFixed32(p + 12) != kSegmentHeaderBytes) return Status::Corruption("unexpected segment header size");
  uint64_t* fields[] = {&h->store_id,          &h->number,          &h->epoch,
                        &h->first_version,     &h->prev_number,     &h->prev_epoch,
                        &h->prev_last_version, &h->prev_end_offset, &h->prev_last_timestamp_us};
  const char* field = p + 16;
  for (uint64_t* f : fields) {
    *f = LoadFixed64(field);
    field += 8;
  }
  if (h->epoch == 0 || h->first_version == 0 || h->number == 0) {
    return Status::Corruption("segment header has a zero epoch, version or number");
  }
  return Status::OK();
}

// META: magic u64 | format_version u32 | meta_bytes u32 | store_id u64 |
// floor_segment u64 | checksum u64.
std::string EncodeMeta(const Meta& meta) {
  std::string out;
  PutFixed64(&out, kMetaMagic);
  PutFixed32(&out, kFormatVersion);
  PutFixed32(&out, static_cast<uint32_t>(kMetaBytes));
  PutFixed64(&out, meta.store_id);
  PutFixed64(&out, meta.floor_segment);
  PutFixed64(&out, meta.epoch);
  PutFixed64(&out, Hash64(out, 0));
  SPOOL_CHECK(out.size() == kMetaBytes, "the log's meta is kMetaBytes");
  return out;
}

Status DecodeMeta(std::string_view bytes, Meta* meta) {
  const uint64_t size = bytes.size();
  if (size != kMetaBytes && size != kMetaBytesWithoutEpoch) return Status::Corruption("META has the wrong size");
  const char* p = bytes.data();
  if (LoadFixed64(p) != kMetaMagic) return Status::Corruption("META has a bad magic number");
  if (Hash64(bytes.substr(0, size - 8), 0) != LoadFixed64(p + size - 8)) {
    return Status::Corruption("META checksum mismatch");
  }
  if (LoadFixed32(p + 8) != kFormatVersion) return Status::Corruption("META has an unsupported format version");
  if (LoadFixed32(p + 12) != size) return Status::Corruption("META's size field disagrees with its size");
  meta->store_id = LoadFixed64(p + 16);
  meta->floor_segment = LoadFixed64(p + 24);
  meta->epoch = size == kMetaBytes ? LoadFixed64(p + 32) : 0;
  if (meta->floor_segment == 0) return Status::Corruption("META names segment 0 as the oldest");
  return Status::OK();
}

namespace {
constexpr std::string_view kClosedCleanWords = "closed clean";
}  // namespace

std::string EncodeClosedClean(uint64_t epoch, uint64_t version) {
  return WithChecksumLine(std::string(kClosedCleanWords) + " " + std::to_string(epoch) + " " + std::to_string(version) +
                          "\n");
}

bool DecodeClosedClean(std::string_view bytes, uint64_t* epoch, uint64_t* version) {
  *epoch = 0;
  *version = 0;
  if (!bytes.starts_with(kClosedCleanWords)) return false;
  const std::string_view rest = bytes.substr(kClosedCleanWords.size());
  if (rest == "\n") return true;  // written before the position was kept
  // The position read back, then written again: only the very bytes
  // EncodeClosedClean makes of it (its checksum line with them) count.
  uint64_t e = 0, v = 0;
  if (std::sscanf(std::string(rest).c_str(), " %" SCNu64 " %" SCNu64, &e, &v) != 2 ||
      bytes != EncodeClosedClean(e, v)) {
    return false;
  }
  *epoch = e;
  *version = v;
  return true;
}

std::string SegmentFileName(uint64_t number) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%012llu", static_cast<unsigned long long>(number));
  return std::string(buf) + std::string(kSegmentSuffix);
}

bool ParseSegmentFileName(std::string_view name, uint64_t* number) {
  if (name.size() != 12 + kSegmentSuffix.size() || !name.ends_with(kSegmentSuffix)) return false;
  uint64_t value = 0;
  for (char c : name.substr(0, 12)) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value == 0) return false;
  *number = value;
  return true;
}

}  // namespace spool::logfmt
