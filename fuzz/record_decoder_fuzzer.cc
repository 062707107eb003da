// Fuzz target: the decoders of bytes read from a segment file — the segment
// header, record framing and checksums, and commit payloads (zstd and the
// FlatBuffers verifier). Input: one byte selecting the decoder, then bytes.
// Any input must give a clean result or a Status, never a crash, a hang or
// undefined behaviour.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "log_format.h"
#include "payload.h"
#include "record_scanner.h"
#include "spool/testing/mem_env.h"

namespace {

constexpr uint64_t kStoreId = 0xf022f022ull;

void FuzzSegment(std::string_view bytes) {
  spool::logfmt::SegmentHeader header;
  const bool have_header = spool::logfmt::DecodeSegmentHeader(bytes, &header).ok();
  spool::MemEnv env;
  std::unique_ptr<spool::File> file;
  if (!env.OpenFile("/segment", spool::OpenMode::kTruncate, &file).ok()) return;
  if (!file->Write(0, bytes).ok()) return;
  const uint64_t epoch = have_header ? header.epoch : 1;
  const uint64_t first = have_header ? header.first_version : 1;
  spool::RecordScanner scanner(file.get(), kStoreId, epoch, spool::logfmt::kSegmentHeaderBytes, bytes.size(), first);
  spool::logfmt::RecordHeader record;
  std::string_view payload;
  spool::LogEntry entry;
  while (scanner.Next(&record, &payload)) (void)spool::DecodePayload(payload, record.flags, &entry);
  if (scanner.offset() < bytes.size()) {
    (void)spool::IsTornTail(bytes.substr(scanner.offset()), kStoreId, epoch, scanner.next_version());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzSegment(bytes);
      break;
    case 1: {
      spool::logfmt::RecordHeader header;
      (void)spool::logfmt::DecodeRecord(kStoreId, bytes, &header);
      break;
    }
    case 2: {
      spool::LogEntry entry;
      (void)spool::DecodePayload(bytes, spool::logfmt::kFlagCompressed, &entry);
      (void)spool::DecodePayload(bytes, 0, &entry);
      break;
    }
    case 3: {
      spool::logfmt::Meta meta;
      (void)spool::logfmt::DecodeMeta(bytes, &meta);
      break;
    }
  }
  return 0;
}
