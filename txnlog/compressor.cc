#include "compressor.h"

#include <zstd.h>

namespace spool {
namespace {

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

}  // namespace

bool CompressFrame(std::string_view input, std::string* out) {
  out->resize(ZSTD_compressBound(input.size()));
  const size_t n =
      ZSTD_compressCCtx(Contexts().compress, out->data(), out->size(), input.data(), input.size(), Compressor::kLevel);
  if (ZSTD_isError(n)) return false;
  out->resize(n);
  return true;
}

Status DecompressFrames(std::string_view input, uint64_t max_bytes, std::string* out) {
  out->clear();
  while (!input.empty()) {
    const size_t frame_bytes = ZSTD_findFrameCompressedSize(input.data(), input.size());
    if (ZSTD_isError(frame_bytes)) return Status::Corruption("compressed payload has a malformed zstd frame");
    const unsigned long long size = ZSTD_getFrameContentSize(input.data(), frame_bytes);
    if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > max_bytes - out->size()) {
      return Status::Corruption("compressed payload has no valid frame size");
    }
    const size_t start = out->size();
    out->resize(start + static_cast<size_t>(size));
    const size_t n =
        ZSTD_decompressDCtx(Contexts().decompress, out->data() + start, static_cast<size_t>(size), input.data(), frame_bytes);
    if (ZSTD_isError(n) || n != size) return Status::Corruption("compressed payload does not decompress");
    input.remove_prefix(frame_bytes);
  }
  return Status::OK();
}

Compressor::Compressor() : worker_([this] { WorkerLoop(); }) {}

Compressor::~Compressor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void Compressor::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || has_job_; });
    if (stop_) return;
    has_job_ = false;
    std::string_view input = job_input_;
    lock.unlock();
    std::string output;
    const bool ok = CompressFrame(input, &output);
    lock.lock();
    job_output_ = std::move(output);
    job_ok_ = ok;
    job_done_ = true;
    cv_.notify_all();
  }
}

bool Compressor::Compress(std::string_view input, std::string* out) {
  if (input.size() < kSplitBytes) return CompressFrame(input, out);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (claimed_) return CompressFrame(input, out);  // the worker is busy: alone
    claimed_ = true;
    job_input_ = input.substr(input.size() / 2);
    job_done_ = false;
    has_job_ = true;
  }
  cv_.notify_all();
  const bool first_ok = CompressFrame(input.substr(0, input.size() / 2), out);
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return job_done_; });
  const bool ok = first_ok && job_ok_;
  if (ok) out->append(job_output_);
  claimed_ = false;
  return ok;
}

}  // namespace spool
