// History runs: entries appended and read, whole runs compressed.
#include "history_run.h"

#include <lz4.h>

#include "helper_thread.h"
#include "varint.h"

namespace spool {

void AppendHistoryEntry(std::string* run, std::string_view key, uint64_t written, std::string_view row) {
  PutVarint(run, key.size());
  run->append(key);
  PutVarint(run, VarintLength(written) + row.size());  // the value: a row's, as StateRowValue writes it
  PutVarint(run, written);
  run->append(row);
}

std::string SealHistoryRun(std::string run) {
  if (run.size() < kCompressedRunMinBytes || run.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return run;
  std::string sealed(1, kCompressedRunTag);
  PutVarint(&sealed, run.size());
  const size_t header = sealed.size();
  const int bound = LZ4_compressBound(static_cast<int>(run.size()));
  sealed.resize(header + static_cast<size_t>(bound));
  const int stored = LZ4_compress_default(run.data(), sealed.data() + header, static_cast<int>(run.size()), bound);
  // Kept as it is unless it shrinks by an eighth: a read then skips the copy.
  if (stored <= 0 || header + static_cast<size_t>(stored) > run.size() - run.size() / 8) return run;
  sealed.resize(header + static_cast<size_t>(stored));
  return sealed;
}

namespace {

// The bytes a compressed run (past its tag) says it holds, and its LZ4 block.
Status ParseCompressedRun(std::string_view stored, uint64_t* raw_bytes, std::string_view* block) {
  stored.remove_prefix(1);
  // LZ4 expands a byte to at most 255.
  if (!GetVarint(&stored, raw_bytes) || *raw_bytes > static_cast<uint64_t>(LZ4_MAX_INPUT_SIZE) ||
      *raw_bytes > 255 * stored.size()) {
    return Status::Corruption("compressed history run has a bad length");
  }
  *block = stored;
  return Status::OK();
}

bool IsCompressed(std::string_view stored) { return !stored.empty() && stored[0] == kCompressedRunTag; }

}  // namespace

Status OpenedRuns::Open(std::vector<std::string_view>* runs) {
  // Where each compressed run's bytes go in the one buffer.
  struct Job {
    size_t run;
    std::string_view block;
    size_t offset, bytes;
  };
  std::vector<Job> jobs;
  size_t total = 0;
  for (size_t i = 0; i < runs->size(); ++i) {
    if (!IsCompressed((*runs)[i])) continue;
    uint64_t raw_bytes = 0;
    std::string_view block;
    SPOOL_RETURN_IF_ERROR(ParseCompressedRun((*runs)[i], &raw_bytes, &block));
    jobs.push_back(Job{i, block, total, raw_bytes});
    total += raw_bytes;
  }
  if (jobs.empty()) return Status::OK();
  bytes_.reset(new char[total]);  // not zeroed: every byte is decompressed into
  std::vector<char> failed(jobs.size(), 0);
  // A second core halves a big read's decompression (W5's read as of v50:
  // 7 MB, about 1.5 ms on one core here).
  OnThreads(jobs.size(), total >= kTwoThreadBytes ? 2 : 1, "spool-runs", [&](size_t j) {
    const Job& job = jobs[j];
    const int got = LZ4_decompress_safe(job.block.data(), bytes_.get() + job.offset, static_cast<int>(job.block.size()),
                                        static_cast<int>(job.bytes));
    failed[j] = got < 0 || static_cast<size_t>(got) != job.bytes;
  });
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (failed[j]) {
      return Status::Corruption("compressed history run does not decompress to its " + std::to_string(jobs[j].bytes) +
                                " bytes");
    }
    (*runs)[jobs[j].run] = std::string_view(bytes_.get() + jobs[j].offset, jobs[j].bytes);
  }
  return Status::OK();
}

Status NextHistoryEntry(std::string_view* run, std::string_view* key, std::string_view* value) {
  uint64_t key_bytes = 0, value_bytes = 0;
  if (!GetVarint(run, &key_bytes) || key_bytes > run->size()) return Status::Corruption("history run is truncated");
  *key = run->substr(0, key_bytes);
  run->remove_prefix(key_bytes);
  if (!GetVarint(run, &value_bytes) || value_bytes > run->size()) return Status::Corruption("history run is truncated");
  *value = run->substr(0, value_bytes);
  run->remove_prefix(value_bytes);
  return Status::OK();
}

}  // namespace spool
