// spool_micro_bench: the CPU costs under one commit, with Google Benchmark —
// XXH3-64 (the record checksum), zstd level 1 (batch compression) and the
// FlatBuffers encoding of a commit payload (txnlog/log_entry.fbs, generated
// here from the schema; no txnlog internals are included).
#include <benchmark/benchmark.h>
#include <xxhash.h>
#include <zstd.h>

#include <memory>

#include "log_entry_generated.h"
#include "records.h"

namespace spool::bench {
namespace {

constexpr int kZstdLevel = 1;
constexpr size_t kZstdBatchBytes = 170 << 10;
constexpr char kOperation[] = "WRITE";

void SetBytes(benchmark::State& state, size_t bytes_per_iteration) {
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes_per_iteration));
}

void BM_Xxh3_64(benchmark::State& state) {
  const std::string data = MakeRows(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(XXH3_64bits(data.data(), data.size()));
  SetBytes(state, data.size());
}
BENCHMARK(BM_Xxh3_64)->Arg(4 << 10)->Arg(1 << 20);

void BM_Zstd1Compress(benchmark::State& state) {
  const std::string batch = MakeRows(kZstdBatchBytes);
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  std::string out(ZSTD_compressBound(batch.size()), '\0');
  size_t n = 0;
  for (auto _ : state) {
    n = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), batch.data(), batch.size(), kZstdLevel);
    benchmark::DoNotOptimize(n);
  }
  if (ZSTD_isError(n)) state.SkipWithError("ZSTD_compressCCtx failed");
  SetBytes(state, batch.size());
  state.counters["ratio"] = static_cast<double>(batch.size()) / static_cast<double>(n);
}
BENCHMARK(BM_Zstd1Compress);

void BM_Zstd1Decompress(benchmark::State& state) {
  const std::string batch = MakeRows(kZstdBatchBytes);
  std::string compressed(ZSTD_compressBound(batch.size()), '\0');
  compressed.resize(ZSTD_compress(compressed.data(), compressed.size(), batch.data(), batch.size(), kZstdLevel));
  std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)> dctx(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  std::string out(batch.size(), '\0');
  for (auto _ : state) {
    benchmark::DoNotOptimize(
        ZSTD_decompressDCtx(dctx.get(), out.data(), out.size(), compressed.data(), compressed.size()));
  }
  if (out != batch) state.SkipWithError("zstd round trip changed the bytes");
  SetBytes(state, batch.size());
}
BENCHMARK(BM_Zstd1Decompress);

// One commit payload: operation "WRITE" and a body of state.range(0)
// records (key and value bytes back to back), as Spool's log encodes it.
void BM_FlatBuffersEncodeCommit(benchmark::State& state) {
  const RecordSet records(0, 0, static_cast<size_t>(state.range(0)));
  const std::string_view body = records.bytes();
  for (auto _ : state) {
    flatbuffers::FlatBufferBuilder fbb(body.size() + 64);
    auto operation = fbb.CreateString(kOperation);
    auto bytes = fbb.CreateVector(reinterpret_cast<const uint8_t*>(body.data()), body.size());
    fbb.Finish(fb::CreateLogEntry(fbb, operation, bytes), fb::LogEntryIdentifier());
    benchmark::DoNotOptimize(fbb.GetBufferPointer());
  }
  SetBytes(state, body.size());
}
BENCHMARK(BM_FlatBuffersEncodeCommit)->Arg(1)->Arg(1000);

}  // namespace
}  // namespace spool::bench

BENCHMARK_MAIN();
