// The bytes of the log: segment headers, record headers, the META file and
// the limits that bound them. docs/log_format.md has the grammar; this header
// is what the writer, the reader and recovery share. Internal to txnlog.
#pragma once

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::logfmt {

static_assert(std::endian::native == std::endian::little, "the log format is little-endian");

// --- Limits (TigerBeetle style: every quantity has a bound).
inline constexpr uint64_t kSegmentHeaderBytes = 96;
inline constexpr uint64_t kRecordHeaderBytes = 40;
inline constexpr uint64_t kMetaBytes = 48;
inline constexpr uint64_t kMetaBytesWithoutEpoch = 40;  // written before META had an epoch; still read
// The largest payload one commit may carry (after compression).
inline constexpr uint64_t kMaxPayloadBytes = 64ull << 20;
// A group commit stops taking members past this many bytes or records.
inline constexpr uint64_t kMaxGroupBytes = 8ull << 20;
inline constexpr uint64_t kMaxGroupRecords = 4096;
// Appends waiting for their turn; more callers block until there is room.
inline constexpr uint64_t kMaxQueuedAppends = 8192;
inline constexpr uint64_t kMinSegmentBytes = 64ull << 10;
inline constexpr uint64_t kMaxSegmentBytes = 1ull << 30;
// Sparse index: one entry per this many bytes of records.
inline constexpr uint64_t kIndexIntervalBytes = 4096;

// Records start at multiples of this (their payloads are padded with
// zeros), so a FlatBuffers payload read in place is aligned.
inline constexpr uint64_t kRecordAlignment = 8;

static_assert(kMaxGroupRecords <= UINT16_MAX + 1ull, "group_index is a u16");
static_assert(kRecordHeaderBytes % kRecordAlignment == 0 && kSegmentHeaderBytes % kRecordAlignment == 0);
static_assert(kMaxPayloadBytes <= UINT32_MAX, "payload_length is a u32");
static_assert(kRecordHeaderBytes + kMaxPayloadBytes <= kMaxSegmentBytes, "one record fits a segment");
static_assert(kMaxGroupBytes <= kMaxSegmentBytes, "a group fits a segment");
static_assert(kSegmentHeaderBytes < kMinSegmentBytes);
static_assert(kMaxGroupRecords <= kMaxQueuedAppends);

// --- Record header.
enum class RecordType : uint8_t { kCommit = 1 };
// The payload is one or more zstd frames, concatenated (payload.h).
inline constexpr uint8_t kFlagCompressed = 1u << 0;
// Set on every record of a group written after the previous group was
// durable (the sync modes). Recovery uses it to tell a torn tail from
// corruption: a valid record of such a later group proves that everything
// before it had been synced.
inline constexpr uint8_t kFlagAfterSync = 1u << 1;
inline constexpr uint8_t kKnownFlags = kFlagCompressed | kFlagAfterSync;

struct RecordHeader {
  uint64_t checksum = 0;
  uint32_t payload_length = 0;
  RecordType type = RecordType::kCommit;
  uint8_t flags = 0;
  uint16_t group_index = 0;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t timestamp_us = 0;

  uint64_t group_first_version() const { return version - group_index; }
};

// The bytes a record with `payload_length` bytes of payload takes.
constexpr uint64_t RecordBytes(uint64_t payload_length) {
  return kRecordHeaderBytes + (payload_length + kRecordAlignment - 1) / kRecordAlignment * kRecordAlignment;
}

// Appends the header, with its checksum computed over the header fields and
// `payload` under `store_id`, then the payload and its zero padding, to
// `*out`.
void AppendRecord(uint64_t store_id, RecordHeader header, std::string_view payload, std::string* out);

// Why bytes at an offset are not the record expected there.
enum class RecordCheck : uint8_t { kValid, kShort, kBadLength, kBadChecksum, kBadType, kUnexpected };
std::string_view RecordCheckName(RecordCheck check);

// Decodes the header at the start of `bytes`; checks the length against
// `bytes` and the checksum over header and payload. Sets `*header` when the
// fields could be read (even if the record is invalid).
RecordCheck DecodeRecord(uint64_t store_id, std::string_view bytes, RecordHeader* header);

// --- Segment header.
inline constexpr uint64_t kSegmentMagic = 0x4745534c4f4f5053ull;  // "SPOOLSEG"
inline constexpr uint32_t kFormatVersion = 1;

struct SegmentHeader {
  uint64_t store_id = 0;
  uint64_t number = 0;
  uint64_t epoch = 0;
  uint64_t first_version = 0;
  uint64_t prev_number = 0;  // 0: no predecessor
  uint64_t prev_epoch = 0;
  uint64_t prev_last_version = 0;
  uint64_t prev_end_offset = 0;
  uint64_t prev_last_timestamp_us = 0;
};

std::string EncodeSegmentHeader(const SegmentHeader& header);
// Errors: Corruption saying which field is wrong.
Status DecodeSegmentHeader(std::string_view bytes, SegmentHeader* header);

// --- META: the store id and the oldest retained segment.
inline constexpr uint64_t kMetaMagic = 0x54454d4c4f4f5053ull;  // "SPOOLMET"

struct Meta {
  uint64_t store_id = 0;
  uint64_t floor_segment = 1;
  // The epoch of the newest truncation that completed (0: none known). No
  // segment of it left on opening means the log's newest segments are lost:
  // reading on would bring back the commits it cut.
  uint64_t epoch = 0;
};

std::string EncodeMeta(const Meta& meta);
Status DecodeMeta(std::string_view bytes, Meta* meta);

// --- File names.
inline constexpr std::string_view kMetaFileName = "META";
inline constexpr std::string_view kLockFileName = "LOCK";
// What a clean close leaves in CLOSED (EncodeClosedClean), and what an
// open writes over it: only the first says the tail is durable.
inline constexpr std::string_view kClosedFileName = "CLOSED";
inline constexpr std::string_view kClosedOpen = "opened      \n";
// "closed clean <epoch> <version>\n" and a checksum line: every record up
// to that position, the newest at the close, synced.
std::string EncodeClosedClean(uint64_t epoch, uint64_t version);
// Whether `bytes` are a clean close's CLOSED, and its newest position
// (`*epoch` and `*version` 0 for "closed clean\n" alone, which a close
// wrote before the position was kept).
bool DecodeClosedClean(std::string_view bytes, uint64_t* epoch, uint64_t* version);
inline constexpr std::string_view kSegmentSuffix = ".seg";
inline constexpr std::string_view kTempSuffix = ".tmp";

// "000000000042.seg"
std::string SegmentFileName(uint64_t number);
// True and `*number` for a segment file name; false for anything else.
bool ParseSegmentFileName(std::string_view name, uint64_t* number);

// Little-endian fixed-width helpers.
void PutFixed64(std::string* out, uint64_t value);
void PutFixed32(std::string* out, uint32_t value);
uint64_t LoadFixed64(const char* p);
uint32_t LoadFixed32(const char* p);

uint64_t Hash64(std::string_view bytes, uint64_t seed);

}  // namespace spool::logfmt
