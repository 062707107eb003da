#include "payload.h"

#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>

#include "helper_thread.h"
#include "log_entry_generated.h"
#include "log_format.h"

namespace spool {
namespace {

// zstd level 1: about 380 MB/s on row data here; level 3 compressed worse
// on ~170 KiB batches (docs/benchmarks.md).
constexpr int kCompressionLevel = 1;
// From this size a payload is compressed as two frames, one on each core.
// Each half is then at least 32 KiB, where a frame of its own costs the
// ratio little; a smaller payload would spend more on the hand-off than the
// second core saves.
constexpr size_t kSplitMinBytes = 64 << 10;

// A thread's zstd contexts, and the buffer its payloads decompress into
// (DecompressBuffer), kept from one payload to the next.
struct ZstdContexts {
  static constexpr size_t kKeptBytes = 1 << 20;
  ZSTD_CCtx* compress = ZSTD_createCCtx();
  ZSTD_DCtx* decompress = ZSTD_createDCtx();
  std::unique_ptr<char[]> decompressed;  // kKeptBytes, made on first use
  ~ZstdContexts() {
    ZSTD_freeCCtx(compress);
    ZSTD_freeDCtx(decompress);
  }
};

ZstdContexts& Contexts() {
  thread_local ZstdContexts contexts;
  return contexts;
}

// Compresses `src` as one frame onto the end of `*out`. Returns false when
// zstd fails.
bool CompressFrame(ZSTD_CCtx* cctx, std::string_view src, std::string* out) {
  const size_t at = out->size();
  out->resize(at + ZSTD_compressBound(src.size()));
  const size_t n =
      ZSTD_compressCCtx(cctx, out->data() + at, out->size() - at, src.data(), src.size(), kCompressionLevel);
  if (ZSTD_isError(n)) return false;
  out->resize(at + n);
  return true;
}

// The second core for big payloads: a helper thread that compresses the
// back half of a payload while the committer compresses the front half.
// It takes one job at a time; a committer that finds it busy (another
// committer has it) compresses the whole payload itself.
class HalfCompressor {
 public:
  // Made on first use and never destroyed: its thread waits for jobs until
  // the process ends.
  static HalfCompressor& Get() {
    static HalfCompressor* compressor = new HalfCompressor;
    return *compressor;
  }

  // Compresses `src` as two frames appended to `*out` (the front half by the
  // caller, the back half by the helper). Returns false when zstd fails, or
  // when the helper is busy, with `*out` unchanged.
  bool Compress(std::string_view src, std::string* out) {
    if (::getpid() != pid_) return false;  // a forked child: the helper stayed in the parent
    std::unique_lock claim(claim_mu_, std::try_to_lock);
    if (!claim.owns_lock()) return false;
    const size_t half = src.size() / 2;
    back_.clear();  // its capacity, reused
    const uint64_t ticket =
        helper_.Start([this, back = src.substr(half)] { back_ok_ = CompressFrame(Contexts().compress, back, &back_); });
    const size_t at = out->size();
    bool ok = CompressFrame(Contexts().compress, src.substr(0, half), out);
    // The halves end within tens of microseconds of each other, about what
    // waking a sleeping committer would cost.
    helper_.WaitFor(ticket, kSpinBeforeSleepUs);
    ok = ok && back_ok_;
    if (ok) out->append(back_);
    else out->resize(at);
    return ok;
  }

 private:
  HalfCompressor() : pid_(::getpid()) {}

  static constexpr uint64_t kSpinBeforeSleepUs = 200;

  const pid_t pid_;      // the process the helper thread runs in
  std::mutex claim_mu_;  // held by the committer using the helper
  std::string back_;     // the back half's frame
  bool back_ok_ = false;
  HelperThread helper_{"spool-compress"};
};

// The decompressed size of `payload`: one or more zstd frames, each with
// its content size. Errors: Corruption.
Status DecompressedSize(std::string_view payload, size_t* size) {
  uint64_t total = 0;
  while (!payload.empty()) {
    const unsigned long long content = ZSTD_getFrameContentSize(payload.data(), payload.size());
    const size_t frame = ZSTD_findFrameCompressedSize(payload.data(), payload.size());
    if (content == ZSTD_CONTENTSIZE_ERROR || content == ZSTD_CONTENTSIZE_UNKNOWN || ZSTD_isError(frame)) {
      return Status::Corruption("compressed payload has no valid frame size");
    }
    total += content;
    if (total > logfmt::kMaxPayloadBytes) return Status::Corruption("compressed payload has no valid frame size");
    payload.remove_prefix(frame);
  }
  *size = static_cast<size_t>(total);
  return Status::OK();
}

// Room for `size` decompressed bytes, aligned for FlatBuffers: the calling
// thread's kept buffer (a reader decodes record after record: no
// allocation, no zero-filling, its pages already mapped), or for a payload
// above kKeptBytes a block of its own in `*own`. Valid until the thread's
// next call.
char* DecompressBuffer(size_t size, std::unique_ptr<char[]>* own) {
  static_assert(__STDCPP_DEFAULT_NEW_ALIGNMENT__ % logfmt::kRecordAlignment == 0);
  std::unique_ptr<char[]>& kept = Contexts().decompressed;
  std::unique_ptr<char[]>& buffer = size > ZstdContexts::kKeptBytes ? *own : kept;
  if (buffer == nullptr) buffer.reset(new char[std::max(size, ZstdContexts::kKeptBytes)]);
  return buffer.get();
}

}  // namespace

Status WrapPayload(const LogWrite& write, flatbuffers::DetachedBuffer* entry) {
  if (write.operation.size() + write.body.size() > logfmt::kMaxPayloadBytes) {
    return Status::InvalidArgument("commit of " + std::to_string(write.body.size()) +
                                   " bytes exceeds the record limit of " + std::to_string(logfmt::kMaxPayloadBytes) +
                                   " bytes");
  }
  flatbuffers::FlatBufferBuilder fbb(write.operation.size() + write.body.size() + 64);
  auto operation = fbb.CreateString(write.operation.data(), write.operation.size());
  auto body = fbb.CreateVector(reinterpret_cast<const uint8_t*>(write.body.data()), write.body.size());
  fbb.Finish(fb::CreateLogEntry(fbb, operation, body), fb::LogEntryIdentifier());
  if (fbb.GetSize() > logfmt::kMaxPayloadBytes) {
    return Status::InvalidArgument("encoded commit exceeds the record limit of " +
                                   std::to_string(logfmt::kMaxPayloadBytes) + " bytes");
  }
  *entry = fbb.Release();
  return Status::OK();
}

void CompressPayload(std::string_view entry, uint64_t compress_min_bytes, bool split_big, std::string* payload,
                     uint8_t* flags) {
  payload->clear();
  *flags = 0;
  // Compressed when that saves at least an eighth.
  if (compress_min_bytes != 0 && entry.size() >= compress_min_bytes) {
    const bool split = split_big && entry.size() >= kSplitMinBytes && HalfCompressor::Get().Compress(entry, payload);
    const bool compressed = split || CompressFrame(Contexts().compress, entry, payload);
    if (compressed && payload->size() <= entry.size() - entry.size() / 8) {
      *flags |= logfmt::kFlagCompressed;
      return;
    }
  }
  payload->assign(entry);
}

Status EncodePayload(const LogWrite& write, uint64_t compress_min_bytes, std::string* payload, uint8_t* flags) {
  flatbuffers::DetachedBuffer entry;
  SPOOL_RETURN_IF_ERROR(WrapPayload(write, &entry));
  CompressPayload(EntryBytes(entry), compress_min_bytes, /*split_big=*/true, payload, flags);
  return Status::OK();
}

Status DecodePayload(std::string_view payload, uint8_t flags, LogEntry* entry) {
  std::unique_ptr<char[]> own;  // a payload too big for the thread's buffer
  if ((flags & logfmt::kFlagCompressed) != 0) {
    size_t size = 0;
    SPOOL_RETURN_IF_ERROR(DecompressedSize(payload, &size));
    char* out = DecompressBuffer(size, &own);
    size_t n = ZSTD_decompressDCtx(Contexts().decompress, out, size, payload.data(), payload.size());
    if (ZSTD_isError(n) || n != size) return Status::Corruption("compressed payload does not decompress");
    payload = std::string_view(out, size);
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
