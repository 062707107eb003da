#include "cpu_limits.h"

#include <xxhash.h>
#include <zstd.h>

#include <cstdint>
#include <memory>

#include "check.h"
#include "stopwatch.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr int kZstdLevel = 1;

// Calls `op` until `seconds` have passed; returns MB/s of `bytes_per_op`.
template <typename Op>
double RepeatFor(double seconds, size_t bytes_per_op, Op op) {
  uint64_t ops = 0;
  Stopwatch watch;
  do {
    op();
    ++ops;
  } while (watch.Seconds() < seconds);
  return static_cast<double>(ops) * static_cast<double>(bytes_per_op) / kBytesPerMB / watch.Seconds();
}

}  // namespace

double Xxh3MBPerS(const std::string& data, double seconds) {
  volatile uint64_t sink = 0;
  return RepeatFor(seconds, data.size(), [&] { sink = sink + XXH3_64bits(data.data(), data.size()); });
}

ZstdRates Zstd1Rates(const std::string& batch, double seconds) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (!cctx || !dctx) throw BenchError("zstd contexts");
  std::string compressed(ZSTD_compressBound(batch.size()), '\0');
  size_t compressed_bytes = 0;
  ZstdRates rates;
  rates.compress_mb_per_s = RepeatFor(seconds, batch.size(), [&] {
    compressed_bytes =
        ZSTD_compressCCtx(cctx.get(), compressed.data(), compressed.size(), batch.data(), batch.size(), kZstdLevel);
    if (ZSTD_isError(compressed_bytes)) throw BenchError("ZSTD_compressCCtx failed");
  });
  std::string restored(batch.size(), '\0');
  rates.decompress_mb_per_s = RepeatFor(seconds, batch.size(), [&] {
    const size_t n =
        ZSTD_decompressDCtx(dctx.get(), restored.data(), restored.size(), compressed.data(), compressed_bytes);
    if (ZSTD_isError(n) || n != batch.size()) throw BenchError("ZSTD_decompressDCtx failed");
  });
  if (restored != batch) throw BenchError("zstd round trip changed the bytes");
  rates.ratio = static_cast<double>(batch.size()) / static_cast<double>(compressed_bytes);
  return rates;
}

}  // namespace spool::bench
