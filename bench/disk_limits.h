// The disk's limits, measured with raw system calls: what a log could reach
// on this machine at best (docs/benchmarks.md, "Also measure the machine's
// limits"). Each function creates, uses and removes one file at `path`;
// failures throw BenchError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spool::bench {

inline constexpr uint64_t kBlockBytes = 4096;

struct SyncRate {
  double per_s = 0;   // write + fdatasync pairs per second
  double p50_us = 0;  // median time of one pair
  double p99_us = 0;
};

// 4-KiB pwrite at the end of a growing file, then fdatasync, `blocks` times:
// every sync must also make the new file size durable.
SyncRate AppendSyncRate(const std::string& path, uint64_t blocks);
// The same over blocks already written (zeros) and synced: the sync carries
// data only, as in a log with preallocated or recycled segments.
SyncRate OverwriteSyncRate(const std::string& path, uint64_t blocks);
// Writes `bytes` sequentially in 1-MiB pwrites and fdatasyncs once at the
// end; MB/s (1 MB = 10^6 bytes) over the whole. `direct`: O_DIRECT with
// aligned buffers. Returns NaN when the file system refuses O_DIRECT.
double SequentialWriteMBPerS(const std::string& path, uint64_t bytes, bool direct);
// Writes `bytes` sequentially in pwrites of `batch_bytes` at the end of a
// growing file, each followed by fdatasync: the most a writer making each
// batch durable before the next can do with the batch's bytes as they are.
// MB/s over the whole.
double SyncedBatchesMBPerS(const std::string& path, uint64_t bytes, uint64_t batch_bytes);
// The batches of `rows` (`batch_bytes` each) encoded as Spool's log encodes
// a commit's payload (its codec: zstd, a big payload's halves on two
// cores), each written at the end of the file and fdatasynced, the file's
// size kept a megabyte ahead with zeros as the log's preallocation does:
// the most a log compressing as Spool's does can reach, with no record
// framing, checksum, index or queue. MB/s of `rows` over the whole.
double EncodedBatchesMBPerS(const std::string& path, std::string_view rows, uint64_t batch_bytes);

}  // namespace spool::bench
