// Commit payloads: the FlatBuffers LogEntry table (log_entry.fbs), zstd-
// compressed when that pays: as one frame, or from 64 KiB as two frames,
// the halves compressed on two cores at once. A decoder reads the frames
// as one stream. Internal to txnlog.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "spool/txnlog/log.h"

namespace spool {

// Encodes `write` into `*payload` and sets logfmt::kFlagCompressed in
// `*flags` when the bytes are compressed. Errors: InvalidArgument when the
// encoded payload exceeds logfmt::kMaxPayloadBytes.
Status EncodePayload(const LogWrite& write, uint64_t compress_min_bytes, std::string* payload, uint8_t* flags);

// Decompresses (when flagged) and verifies `payload`, filling the operation
// and body of `*entry`. Errors: Corruption saying what is wrong.
Status DecodePayload(std::string_view payload, uint8_t flags, LogEntry* entry);

}  // namespace spool
