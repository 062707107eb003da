// Commit payloads: the FlatBuffers LogEntry table (log_entry.fbs), zstd-
// compressed when that pays: as one frame, or (for a committer waiting for
// it) from 64 KiB as two frames, the halves compressed on two cores at
// once. A decoder reads the frames as one stream. Internal to txnlog.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flatbuffers/flatbuffers.h"
#include "spool/txnlog/log.h"

namespace spool {

// A payload is made in two steps, which may run on different threads:
// WrapPayload encodes `write` as the LogEntry table, and CompressPayload
// makes the record's payload of that entry. Errors: InvalidArgument when
// the entry exceeds logfmt::kMaxPayloadBytes (the payload, compressed or
// copied, is never larger than its entry).
Status WrapPayload(const LogWrite& write, flatbuffers::DetachedBuffer* entry);
inline std::string_view EntryBytes(const flatbuffers::DetachedBuffer& entry) {
  return {reinterpret_cast<const char*>(entry.data()), entry.size()};
}
// `*payload` (replaced): `entry` compressed, with logfmt::kFlagCompressed in
// `*flags`, when that saves at least an eighth; otherwise a copy, *flags 0.
// `split_big`: a big entry may be compressed as two frames on two cores, for
// a caller waiting for it; a thread working for others compresses alone
// (handing half over costs CPU that only a waiting caller gets back).
void CompressPayload(std::string_view entry, uint64_t compress_min_bytes, bool split_big, std::string* payload,
                     uint8_t* flags);
// Both steps at once.
Status EncodePayload(const LogWrite& write, uint64_t compress_min_bytes, std::string* payload, uint8_t* flags);

// Decompresses (when flagged) and verifies `payload`, filling the operation
// and body of `*entry`. Errors: Corruption saying what is wrong.
Status DecodePayload(std::string_view payload, uint8_t flags, LogEntry* entry);

}  // namespace spool
