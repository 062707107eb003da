// spool_micro_bench: the CPU cost of Spool's hot paths, measured with Google
// Benchmark through Spool's own code (nothing here re-implements what it
// measures). Every benchmark checks what it computed and reports an error
// (SkipWithError) instead of a figure when the result is wrong, so a broken
// build cannot print a good number. Figures are items/s (rows, upserts,
// events) or bytes/s; --benchmark_format=json gives a report.
//
//   micro_bench.cc          the log (txnlog): the record checksum (XXH3-64,
//                           raw and as logfmt::Hash64 seeds it); zstd level
//                           1, raw and through the payload codec
//                           (EncodePayload / DecodePayload); one commit of 1
//                           and of 1,000 rows encoded as Store::Commit
//                           writes it (EncodeCommit, EncodePayload,
//                           logfmt::AppendRecord) and decoded as replay
//                           reads it (logfmt::DecodeRecord, DecodePayload,
//                           DecodeCommit), and the log's share alone.
//   micro_storage_bench.cc  the state (storage): 1,000 upserts on a table of
//                           10,000 keys staged (DeltaFromCommit,
//                           StateOverlay::Add), and committed whole
//                           (Store::Commit, the log in memory, no fsync).
//   micro_stream_bench.cc   the pipeline runtime (stream): a filter and a
//                           CASE WHEN projection over 1,000 rows
//                           (Expression), 1,000 of W4's event messages
//                           parsed (RecordParser), and one micro-batch step of the
//                           filter + select, grouped aggregate and dedup
//                           operators (CompileStep, Operator::Process).
//
// docs/benchmarks.md says how to run them; the ctest bench_micro_smoke runs
// each briefly and fails on any error.
#include "micro_bench.h"

#include <xxhash.h>
#include <zstd.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <benchmark/benchmark.h>

#include "commit_codec.h"  // storage internals: the commit record
#include "log_format.h"    // txnlog internals: record framing and checksum
#include "payload.h"       // txnlog internals: the payload codec
#include "records.h"
#include "row_codec.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr int kZstdLevel = 1;  // payload.cc's
constexpr size_t kZstdBatchBytes = 170 << 10;
constexpr char kOperation[] = "WRITE";

// The log's default threshold (LogOptions::compress_min_bytes): payloads
// from 4 KiB on are compressed.
uint64_t CompressMinBytes() {
  static const uint64_t bytes = LogOptions().compress_min_bytes;
  return bytes;
}

// --- The record checksum and compression.

void BM_Xxh3_64(benchmark::State& state) {
  const std::string data = MakeRows(static_cast<size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(XXH3_64bits(data.data(), data.size()));
  SetBytes(state, data.size());
}
BENCHMARK(BM_Xxh3_64)->Arg(4 << 10)->Arg(1 << 20);

// The checksum as every record and segment header computes it: XXH3-64
// seeded with the store id.
void BM_LogHash64(benchmark::State& state) {
  const std::string data = MakeRows(static_cast<size_t>(state.range(0)));
  uint64_t hash = 0;
  for (auto _ : state) {
    hash = logfmt::Hash64(data, kStoreId);
    benchmark::DoNotOptimize(hash);
  }
  if (hash != XXH3_64bits_withSeed(data.data(), data.size(), kStoreId) || hash == logfmt::Hash64(data, kStoreId + 1)) {
    state.SkipWithError("logfmt::Hash64 is not XXH3-64 seeded with the store id");
  }
  SetBytes(state, data.size());
}
BENCHMARK(BM_LogHash64)->Arg(4 << 10)->Arg(1 << 20);

void BM_Zstd1Compress(benchmark::State& state) {
  const std::string batch = MakeRows(kZstdBatchBytes);
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  std::string out(ZSTD_compressBound(batch.size()), '\0');
  size_t n = 0;
  for (auto _ : state) {
    n = ZSTD_compressCCtx(cctx.get(), out.data(), out.size(), batch.data(), batch.size(), kZstdLevel);
    benchmark::DoNotOptimize(n);
  }
  if (ZSTD_isError(n) || n == 0 || n >= batch.size()) {
    state.SkipWithError("ZSTD_compressCCtx failed or did not compress");
    return;
  }
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

// txnlog's payload codec on the same batch: the LogEntry FlatBuffer, then
// zstd level 1 (payload.cc's wrapper, with its thread-local contexts).
void BM_LogPayloadZstd1Encode(benchmark::State& state) {
  const std::string batch = MakeRows(kZstdBatchBytes);
  std::string payload;
  uint8_t flags = 0;
  for (auto _ : state) {
    if (!Ok(state, EncodePayload(LogWrite{kOperation, batch}, CompressMinBytes(), &payload, &flags), "EncodePayload")) {
      return;
    }
    benchmark::DoNotOptimize(payload.data());
  }
  if ((flags & logfmt::kFlagCompressed) == 0 || payload.size() >= batch.size()) {
    state.SkipWithError("EncodePayload did not compress the batch");
    return;
  }
  SetBytes(state, batch.size());
  state.counters["ratio"] = static_cast<double>(batch.size()) / static_cast<double>(payload.size());
}
BENCHMARK(BM_LogPayloadZstd1Encode);

void BM_LogPayloadZstd1Decode(benchmark::State& state) {
  const std::string batch = MakeRows(kZstdBatchBytes);
  std::string payload;
  uint8_t flags = 0;
  if (!Ok(state, EncodePayload(LogWrite{kOperation, batch}, CompressMinBytes(), &payload, &flags), "EncodePayload")) {
    return;
  }
  LogEntry entry;
  for (auto _ : state) {
    if (!Ok(state, DecodePayload(payload, flags, &entry), "DecodePayload")) return;
    benchmark::DoNotOptimize(entry.body.data());
  }
  if ((flags & logfmt::kFlagCompressed) == 0 || entry.operation != kOperation || entry.body != batch) {
    state.SkipWithError("the payload round trip did not give the batch back");
    return;
  }
  SetBytes(state, batch.size());
}
BENCHMARK(BM_LogPayloadZstd1Decode);

// --- One commit: N new rows of a keyed table of payments.

constexpr std::array<std::string_view, 4> kRegions = {"eu-west-1", "us-east-2", "ap-south-1", "sa-east-1"};
constexpr std::array<std::string_view, 4> kStatuses = {"SETTLED", "PENDING", "REFUNDED", "DECLINED"};

Status PaymentSchema(Schema* schema) {
  return Schema::Make({{"id", ColumnType::kInt64, false},
                       {"user", ColumnType::kString, true},
                       {"cents", ColumnType::kInt64, true},
                       {"at", ColumnType::kTimestamp, true},
                       {"region", ColumnType::kString, true},
                       {"status", ColumnType::kString, true}},
                      {"id"}, schema);
}

Row PaymentRow(uint64_t id) {
  const uint64_t r = Mix(id);
  return Row{static_cast<int64_t>(id),
             "u" + std::to_string(r % 1'000'000),
             static_cast<int64_t>((r >> 20) % 100'000'000),
             Timestamp{kEpochUs + static_cast<int64_t>(id * 997 + r % 997)},
             std::string(kRegions[(r >> 8) % kRegions.size()]),
             std::string(kStatuses[(r >> 12) % kStatuses.size()])};
}

// The rows, and the commit record Store::Commit builds of their insertion.
struct Commit {
  Schema schema;
  std::vector<Row> rows;
  CommitRecord record;
  size_t row_bytes = 0;  // keys and rows, encoded
};

Status MakeCommit(size_t rows, Commit* commit) {
  SPOOL_RETURN_IF_ERROR(PaymentSchema(&commit->schema));
  TableChangeSet set{kTableUid, {}};
  for (uint64_t i = 0; i < rows; ++i) {
    commit->rows.push_back(PaymentRow(i));
    RowChangeRecord change;
    change.kind = RowChangeKind::kInsert;
    EncodeKey(commit->schema, commit->rows.back(), &change.key);
    EncodeRow(commit->schema, commit->rows.back(), &change.post);
    commit->row_bytes += change.key.size() + change.post.size();
    set.changes.push_back(std::move(change));
  }
  commit->record.execution_time_us = 120;
  commit->record.tables.push_back(std::move(set));
  return Status::OK();
}

// The commit's payload framed as the log writes it (one record of a group).
void AppendLogRecord(std::string_view payload, uint8_t flags, std::string* out) {
  logfmt::RecordHeader header;
  header.flags = flags;
  header.epoch = 1;
  header.version = 42;
  header.timestamp_us = static_cast<uint64_t>(kEpochUs);
  out->clear();
  logfmt::AppendRecord(kStoreId, header, payload, out);
}

Status EncodeLogRecord(std::string_view body, std::string* payload, std::string* out) {
  uint8_t flags = 0;
  SPOOL_RETURN_IF_ERROR(EncodePayload(LogWrite{kOperation, body}, CompressMinBytes(), payload, &flags));
  AppendLogRecord(*payload, flags, out);
  return Status::OK();
}

Status DecodeLogRecord(std::string_view bytes, LogEntry* entry) {
  logfmt::RecordHeader header;
  const logfmt::RecordCheck check = logfmt::DecodeRecord(kStoreId, bytes, &header);
  if (check != logfmt::RecordCheck::kValid) return Status::Corruption(logfmt::RecordCheckName(check));
  SPOOL_RETURN_IF_ERROR(
      DecodePayload(bytes.substr(logfmt::kRecordHeaderBytes, header.payload_length), header.flags, entry));
  if (entry->operation != kOperation) return Status::Corruption("the record's operation changed");
  return Status::OK();
}

Status DecodeCommitRecord(std::string_view bytes, LogEntry* entry, CommitRecord* record) {
  SPOOL_RETURN_IF_ERROR(DecodeLogRecord(bytes, entry));
  return DecodeCommit(entry->body, record);
}

// Whether `decoded` holds `commit`'s rows: the same changes, and each row
// decoding to the row written.
Status CheckRows(const Commit& commit, const CommitRecord& decoded) {
  if (decoded.tables.size() != 1 || decoded.tables[0].uid != kTableUid) {
    return Status::Corruption("the decoded commit lost its table");
  }
  const std::vector<RowChangeRecord>& changes = decoded.tables[0].changes;
  const std::vector<RowChangeRecord>& written = commit.record.tables[0].changes;
  if (changes.size() != written.size()) return Status::Corruption("the decoded commit has another number of rows");
  Row row;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (changes[i].kind != written[i].kind || changes[i].key != written[i].key || changes[i].post != written[i].post) {
      return Status::Corruption("row change " + std::to_string(i) + " differs after the round trip");
    }
    SPOOL_RETURN_IF_ERROR(DecodeRow(commit.schema, changes[i].post, &row));
    if (row != commit.rows[i]) return Status::Corruption("row " + std::to_string(i) + " differs after the round trip");
  }
  return Status::OK();
}

void ReportCommit(benchmark::State& state, const Commit& commit, size_t record_bytes) {
  SetItems(state, commit.rows.size());
  SetBytes(state, commit.row_bytes);
  state.counters["record_bytes"] = static_cast<double>(record_bytes);
}

// EncodeCommit, EncodePayload (zstd from 4 KiB) and logfmt::AppendRecord:
// the CPU of Store::Commit's log write, before the write itself.
void BM_CommitRecordEncode(benchmark::State& state) {
  Commit commit;
  if (!Ok(state, MakeCommit(static_cast<size_t>(state.range(0)), &commit), "MakeCommit")) return;
  std::string payload, record;
  for (auto _ : state) {
    const std::string body = EncodeCommit(commit.record);
    if (!Ok(state, EncodeLogRecord(body, &payload, &record), "EncodeLogRecord")) return;
    benchmark::DoNotOptimize(record.data());
  }
  LogEntry entry;
  CommitRecord decoded;
  if (!Ok(state, DecodeCommitRecord(record, &entry, &decoded), "decoding the encoded record")) return;
  if (!Ok(state, CheckRows(commit, decoded), "round trip")) return;
  ReportCommit(state, commit, record.size());
}
BENCHMARK(BM_CommitRecordEncode)->Arg(1)->Arg(1000);

// logfmt::DecodeRecord (checksum), DecodePayload (zstd, FlatBuffers
// verifier) and DecodeCommit (verifier, field checks): what replay and the
// change feed do per commit read.
void BM_CommitRecordDecode(benchmark::State& state) {
  Commit commit;
  if (!Ok(state, MakeCommit(static_cast<size_t>(state.range(0)), &commit), "MakeCommit")) return;
  std::string payload, record;
  if (!Ok(state, EncodeLogRecord(EncodeCommit(commit.record), &payload, &record), "EncodeLogRecord")) return;
  LogEntry entry;
  CommitRecord decoded;
  for (auto _ : state) {
    if (!Ok(state, DecodeCommitRecord(record, &entry, &decoded), "DecodeCommitRecord")) return;
    benchmark::DoNotOptimize(decoded.tables.data());
  }
  if (!Ok(state, CheckRows(commit, decoded), "round trip")) return;
  ReportCommit(state, commit, record.size());
}
BENCHMARK(BM_CommitRecordDecode)->Arg(1)->Arg(1000);

// The log's share of the two above: the same commit body (EncodeCommit's,
// made once) through EncodePayload and AppendRecord, and back.
void BM_LogRecordEncode(benchmark::State& state) {
  Commit commit;
  if (!Ok(state, MakeCommit(static_cast<size_t>(state.range(0)), &commit), "MakeCommit")) return;
  const std::string body = EncodeCommit(commit.record);
  std::string payload, record;
  for (auto _ : state) {
    if (!Ok(state, EncodeLogRecord(body, &payload, &record), "EncodeLogRecord")) return;
    benchmark::DoNotOptimize(record.data());
  }
  LogEntry entry;
  if (!Ok(state, DecodeLogRecord(record, &entry), "decoding the encoded record")) return;
  if (entry.body != body) {
    state.SkipWithError("the log record round trip changed the commit body");
    return;
  }
  ReportCommit(state, commit, record.size());
}
BENCHMARK(BM_LogRecordEncode)->Arg(1)->Arg(1000);

void BM_LogRecordDecode(benchmark::State& state) {
  Commit commit;
  if (!Ok(state, MakeCommit(static_cast<size_t>(state.range(0)), &commit), "MakeCommit")) return;
  const std::string body = EncodeCommit(commit.record);
  std::string payload, record;
  if (!Ok(state, EncodeLogRecord(body, &payload, &record), "EncodeLogRecord")) return;
  LogEntry entry;
  for (auto _ : state) {
    if (!Ok(state, DecodeLogRecord(record, &entry), "DecodeLogRecord")) return;
    benchmark::DoNotOptimize(entry.body.data());
  }
  if (entry.body != body) {
    state.SkipWithError("the log record round trip changed the commit body");
    return;
  }
  ReportCommit(state, commit, record.size());
}
BENCHMARK(BM_LogRecordDecode)->Arg(1)->Arg(1000);

}  // namespace
}  // namespace spool::bench

BENCHMARK_MAIN();
