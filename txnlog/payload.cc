#include "payload.h"

#include <zstd.h>

#include <cstdint>

#include "log_entry_generated.h"
#include "log_format.h"

namespace spool {
namespace {

// zstd level 1: about 380 MB/s on row data here; level 3 compressed worse
// on ~170 KiB batches (BENCHMARKS.md).
constexpr int kCompressionLevel = 1;

struct ZstdContexts {
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  ~ZstdContexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

ZstdContexts& Contexts() {
  thread_local ZstdContexts contexts;
  return contexts;
}

void MaybeCompress(uint64_t compress_min_bytes, std::string* payload, uint8_t* flags) {
  if (compress_min_bytes == 0 || payload->size() < compress_min_bytes) return;
  std::string compressed(ZSTD_compressBound(payload->size()), '\0');
  size_t n = ZSTD_compressCCtx(Contexts().compress, compressed.data(), compressed.size(), payload->data(),
                               payload->size(), kCompressionLevel);
  if (ZSTD_isError(n) || n > payload->size() - payload->size() / 8) return;
  compressed.resize(n);
  payload->swap(compressed);
  *flags |= logfmt::kFlagCompressed;
}

}  // namespace

Status EncodePayload(const LogWrite& write, uint64_t compress_min_bytes, std::string* payload, uint8_t* flags) {
  *flags = 0;
  if (write.operation.size() + write.body.size() > logfmt::kMaxPayloadBytes) {
    return Status::InvalidArgument("commit of " + std::to_string(write.body.size()) +
                                   " bytes exceeds the record limit of " +
                                   std::to_string(logfmt::kMaxPayloadBytes) + " bytes");
  }
  flatbuffers::FlatBufferBuilder fbb(write.operation.size() + write.body.size() + 64);
  auto operation = fbb.CreateString(write.operation.data(), write.operation.size());
  auto body = fbb.CreateVector(reinterpret_cast<const uint8_t*>(write.body.data()), write.body.size());
  fbb.Finish(fb::CreateLogEntry(fbb, operation, body), fb::LogEntryIdentifier());
  payload->assign(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
  MaybeCompress(compress_min_bytes, payload, flags);
  if (payload->size() > logfmt::kMaxPayloadBytes) {
    return Status::InvalidArgument("encoded commit exceeds the record limit of " +
                                   std::to_string(logfmt::kMaxPayloadBytes) + " bytes");
  }
  return Status::OK();
}

Status DecodePayload(std::string_view payload, uint8_t flags, LogEntry* entry) {
  std::string decompressed;
  if ((flags & logfmt::kFlagCompressed) != 0) {
    unsigned long long size = ZSTD_getFrameContentSize(payload.data(), payload.size());
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > logfmt::kMaxPayloadBytes) {
      return Status::Corruption("compressed payload has no valid frame size");
    }
    decompressed.resize(static_cast<size_t>(size));
    size_t n = ZSTD_decompressDCtx(Contexts().decompress, decompressed.data(), decompressed.size(), payload.data(),
                                   payload.size());
    if (ZSTD_isError(n) || n != size) return Status::Corruption("compressed payload does not decompress");
    payload = decompressed;
  }
  // Records keep payloads aligned; bytes from elsewhere may not be.
  std::string aligned;
  if (reinterpret_cast<uintptr_t>(payload.data()) % logfmt::kRecordAlignment != 0) {
    aligned.assign(payload);
    payload = aligned;
  }
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  flatbuffers::Verifier verifier(bytes, payload.size());
  if (!fb::VerifyLogEntryBuffer(verifier)) return Status::Corruption("payload fails FlatBuffers verification");
  const fb::LogEntry* root = fb::GetLogEntry(bytes);
  entry->operation = root->operation() ? root->operation()->str() : std::string();
  if (root->body()) {
    entry->body.assign(reinterpret_cast<const char*>(root->body()->data()), root->body()->size());
  } else {
    entry->body.clear();
  }
  return Status::OK();
}

}  // namespace spool
