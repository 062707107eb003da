// CPU limits on row data: hashing (XXH3, Spool's checksum) and zstd level 1
// (Spool's compression). Each runs for about `seconds`.
#pragma once

#include <string>

namespace spool::bench {

// 170 KiB: the batch size docs/benchmarks.md quotes zstd figures for.
inline constexpr size_t kZstdBatchBytes = 170 << 10;

double Xxh3MBPerS(const std::string& data, double seconds);

struct ZstdRates {
  double compress_mb_per_s = 0;
  double decompress_mb_per_s = 0;
  double ratio = 0;  // input bytes / compressed bytes
};
// Compresses `batch` again and again, then decompresses it; MB/s of input.
ZstdRates Zstd1Rates(const std::string& batch, double seconds);

}  // namespace spool::bench
