// Compressor: zstd compression of commit payloads that uses a second core.
// An input of at least kSplitBytes is cut in two halves compressed at once,
// the second on the compressor's worker thread, the first on the caller's;
// the output is then two zstd frames back to back (DecompressFrames reads
// any number). A single committer's compression takes about half as long,
// and compression runs on the committer's thread, in series with its sync.
// Thread-safe: a caller that finds the worker busy compresses alone.
// Internal to txnlog.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "spool/txnlog/status.h"

namespace spool {

class Compressor {
 public:
  static constexpr uint64_t kSplitBytes = 64ull << 10;
  // zstd level 1: about 380-590 MB/s on row data here; level 3 compressed
  // worse on ~170 KiB batches (BENCHMARKS.md).
  static constexpr int kLevel = 1;

  Compressor();
  ~Compressor();
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  // Compresses `input` into `*out`. Returns false if zstd fails.
  bool Compress(std::string_view input, std::string* out);

 private:
  void WorkerLoop();

  std::mutex mu_;
  std::condition_variable cv_;
  bool claimed_ = false;  // a caller owns the worker
  bool has_job_ = false;
  bool job_done_ = false;
  bool stop_ = false;
  std::string_view job_input_;
  std::string job_output_;
  bool job_ok_ = false;
  std::thread worker_;
};

// Compresses `input` as one zstd frame on the calling thread.
bool CompressFrame(std::string_view input, std::string* out);

// Decompresses one or more zstd frames back to back. Errors: Corruption.
Status DecompressFrames(std::string_view input, uint64_t max_bytes, std::string* out);

}  // namespace spool
