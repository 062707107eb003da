// Fuzz target: the decoders of a segment's header and of the log's META
// file, the first bytes recovery trusts. Input: one byte selecting the
// decoder, then the bytes. Any input must decode or give Corruption, never
// crash; and what decodes must survive a round trip (encoded again and
// decoded, every field is the same), so no field is read but not checked.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "log_format.h"

namespace {

bool Same(const spool::logfmt::SegmentHeader& a, const spool::logfmt::SegmentHeader& b) {
  return a.store_id == b.store_id && a.number == b.number && a.epoch == b.epoch && a.first_version == b.first_version &&
         a.prev_number == b.prev_number && a.prev_epoch == b.prev_epoch && a.prev_last_version == b.prev_last_version &&
         a.prev_end_offset == b.prev_end_offset && a.prev_last_timestamp_us == b.prev_last_timestamp_us;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    spool::logfmt::SegmentHeader header;
    if (!spool::logfmt::DecodeSegmentHeader(bytes, &header).ok()) return 0;
    spool::logfmt::SegmentHeader again;
    if (!spool::logfmt::DecodeSegmentHeader(spool::logfmt::EncodeSegmentHeader(header), &again).ok() ||
        !Same(header, again)) {
      std::abort();
    }
  } else {
    spool::logfmt::Meta meta;
    if (!spool::logfmt::DecodeMeta(bytes, &meta).ok()) return 0;
    spool::logfmt::Meta again;
    if (!spool::logfmt::DecodeMeta(spool::logfmt::EncodeMeta(meta), &again).ok() || again.store_id != meta.store_id ||
        again.floor_segment != meta.floor_segment) {
      std::abort();
    }
  }
  return 0;
}
