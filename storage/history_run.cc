// History runs: entries appended and read, whole runs compressed.
#include "history_run.h"

#include <lz4.h>
#include <sys/mman.h>

#include "helper_thread.h"

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
  // Only runs of kCompressedRunMinBytes or more are compressed; LZ4
  // expands a byte to at most 255.
  if (!GetVarint(&stored, raw_bytes) || *raw_bytes == 0 || *raw_bytes > static_cast<uint64_t>(LZ4_MAX_INPUT_SIZE) ||
      *raw_bytes > 255 * stored.size()) {
    return Status::Corruption("compressed history run has a bad length");
  }
  *block = stored;
  return Status::OK();
}

bool IsCompressed(std::string_view stored) { return !stored.empty() && stored[0] == kCompressedRunTag; }

// Checks that `run` is whole entries with keys ascending; its first and
// last keys.
Status CheckRun(std::string_view run, std::string_view* first, std::string_view* last) {
  std::string_view key, value, previous;
  for (bool start = true; !run.empty(); start = false) {
    SPOOL_RETURN_IF_ERROR(NextHistoryEntry(&run, &key, &value));
    if (start) {
      *first = key;
    } else if (CompareBytes(previous, key) >= 0) {
      return Status::Corruption("history run has keys out of order");
    }
    previous = key;
  }
  *last = previous;
  return Status::OK();
}

}  // namespace

Status OpenedRuns::Open(std::vector<std::string_view>* runs) {
  // Each run's stored value, and where a compressed one's bytes go in the
  // one buffer.
  struct Job {
    std::string_view stored, block;
    bool compressed = false;
    size_t offset = 0, bytes = 0;
    std::string_view run, first, last;
    Status status;
  };
  std::vector<Job> jobs(runs->size());
  size_t total = 0, all = 0;
  for (size_t i = 0; i < runs->size(); ++i) {
    Job& job = jobs[i];
    job.stored = (*runs)[i];
    all += job.stored.size();
    if (!IsCompressed(job.stored)) continue;
    uint64_t raw_bytes = 0;
    SPOOL_RETURN_IF_ERROR(ParseCompressedRun(job.stored, &raw_bytes, &job.block));
    job.compressed = true;
    job.offset = total;
    job.bytes = raw_bytes;
    total += raw_bytes;
  }
  if (total > 0) SPOOL_RETURN_IF_ERROR(memory_->Take(total, &bytes_));  // every byte is decompressed into
  // A second core halves a big read's decompression (W5's read as of v50:
  // 7 MB, about 1.5 ms on one core here); each run is checked while its
  // bytes are fresh in the cache.
  OnThreads(jobs.size(), all >= kTwoThreadBytes ? 2 : 1, "spool-runs", [&](size_t j) {
    Job& job = jobs[j];
    job.run = job.stored;
    if (job.compressed) {
      char* to = bytes_->data() + job.offset;
      const int got =
          LZ4_decompress_safe(job.block.data(), to, static_cast<int>(job.block.size()), static_cast<int>(job.bytes));
      if (got < 0 || static_cast<size_t>(got) != job.bytes) {
        job.status = Status::Corruption("compressed history run does not decompress to its " +
                                        std::to_string(job.bytes) + " bytes");
        return;
      }
      job.run = std::string_view(to, job.bytes);
    }
    job.status = CheckRun(job.run, &job.first, &job.last);
  });
  for (const Job& job : jobs) SPOOL_RETURN_IF_ERROR(job.status);
  shared_prefix_ = 0;
  if (!jobs.empty()) {
    const std::string_view first = jobs.front().first;
    shared_prefix_ = first.size();
    for (const Job& job : jobs) {
      for (const std::string_view key : {job.first, job.last}) {
        size_t i = 0;
        while (i < shared_prefix_ && i < key.size() && key[i] == first[i]) ++i;
        shared_prefix_ = i;
      }
    }
  }
  for (size_t i = 0; i < jobs.size(); ++i) (*runs)[i] = jobs[i].run;
  return Status::OK();
}

Status RunBuffer::Map(size_t bytes, std::unique_ptr<RunBuffer>* buffer) {
  if (bytes > (size_t{1} << 62)) {
    return Status::IOError("cannot map " + std::to_string(bytes) + " bytes for history runs");
  }
  size_t size = size_t{64} << 10;
  while (size < bytes) size *= 2;
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) return Status::IOError("cannot map " + std::to_string(size) + " bytes for history runs");
  if (size >= kHugePageBytes) ::madvise(map, size, MADV_HUGEPAGE);
  buffer->reset(new RunBuffer(static_cast<char*>(map), size));
  return Status::OK();
}

RunBuffer::~RunBuffer() { ::munmap(data_, size_); }

Status RunMemory::Take(size_t bytes, std::unique_ptr<RunBuffer>* buffer) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (kept_ != nullptr && kept_->size() >= bytes) {
      *buffer = std::move(kept_);
      return Status::OK();
    }
  }
  return RunBuffer::Map(bytes, buffer);
}

void RunMemory::Give(std::unique_ptr<RunBuffer> buffer) {
  if (buffer == nullptr || buffer->size() > kKeepBytes) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (kept_ == nullptr || kept_->size() < buffer->size()) kept_.swap(buffer);
}  // the smaller one unmapped once the lock is released

OpenedRuns::~OpenedRuns() { memory_->Give(std::move(bytes_)); }

Status NextHistoryEntry(std::string_view* run, std::string_view* key, std::string_view* value) {
  return ParseHistoryEntry(run, key, value) ? Status::OK() : Status::Corruption("history run is truncated");
}

}  // namespace spool
