#include "disk_limits.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "check.h"
#include "payload.h"
#include "records.h"
#include "stats.h"
#include "stopwatch.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
constexpr size_t kDirectAlignment = 4096;
static_assert(kChunkBytes % kBlockBytes == 0 && kChunkBytes % kDirectAlignment == 0);

// An open file descriptor, closed and unlinked on destruction.
class ScratchFile {
 public:
  ScratchFile(const std::string& path, int extra_flags) : path_(path) {
    fd_ = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC | extra_flags, 0644);
  }
  ~ScratchFile() {
    if (fd_ >= 0) ::close(fd_);
    ::unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  int fd() const { return fd_; }
  bool is_open() const { return fd_ >= 0; }

 private:
  std::string path_;
  int fd_ = -1;
};

// A buffer aligned for O_DIRECT, filled with rows.
struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
std::unique_ptr<char, FreeDeleter> AlignedRows(size_t bytes) {
  std::unique_ptr<char, FreeDeleter> buffer(static_cast<char*>(std::aligned_alloc(kDirectAlignment, bytes)));
  if (buffer == nullptr) throw BenchError("aligned_alloc failed");
  const std::string rows = MakeRows(bytes);
  std::memcpy(buffer.get(), rows.data(), bytes);
  return buffer;
}

bool WriteAt(int fd, const char* data, size_t n, uint64_t offset) {
  return ::pwrite(fd, data, n, static_cast<off_t>(offset)) == static_cast<ssize_t>(n);
}

// Times `blocks` write + fdatasync pairs at block offsets 0, 1, 2, ...
SyncRate TimeSyncedBlocks(const ScratchFile& file, uint64_t blocks) {
  const std::string block = MakeRows(kBlockBytes);
  std::vector<double> latencies_us;
  latencies_us.reserve(blocks);
  Stopwatch total;
  for (uint64_t i = 0; i < blocks; ++i) {
    Stopwatch one;
    ExpectSys(WriteAt(file.fd(), block.data(), block.size(), i * kBlockBytes), "pwrite");
    ExpectSys(::fdatasync(file.fd()) == 0, "fdatasync");
    latencies_us.push_back(one.Micros());
  }
  const double seconds = total.Seconds();
  const double p50_us = Percentile(latencies_us, 0.5);
  return SyncRate{static_cast<double>(blocks) / seconds, p50_us, Percentile(std::move(latencies_us), 0.99)};
}

}  // namespace

SyncRate AppendSyncRate(const std::string& path, uint64_t blocks) {
  ScratchFile file(path, 0);
  ExpectSys(file.is_open(), "open " + path);
  return TimeSyncedBlocks(file, blocks);
}

SyncRate OverwriteSyncRate(const std::string& path, uint64_t blocks) {
  ScratchFile file(path, 0);
  ExpectSys(file.is_open(), "open " + path);
  const std::string zeros(kChunkBytes, '\0');
  const uint64_t bytes = blocks * kBlockBytes;
  for (uint64_t offset = 0; offset < bytes; offset += kChunkBytes) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunkBytes, bytes - offset));
    ExpectSys(WriteAt(file.fd(), zeros.data(), n, offset), "pwrite zeros");
  }
  ExpectSys(::fsync(file.fd()) == 0, "fsync");
  return TimeSyncedBlocks(file, blocks);
}

double SequentialWriteMBPerS(const std::string& path, uint64_t bytes, bool direct) {
  ScratchFile file(path, direct ? O_DIRECT : 0);
  if (!file.is_open() && direct && errno == EINVAL) return std::numeric_limits<double>::quiet_NaN();
  ExpectSys(file.is_open(), "open " + path);
  const auto buffer = AlignedRows(kChunkBytes);
  const uint64_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
  Stopwatch watch;
  for (uint64_t i = 0; i < chunks; ++i) {
    if (!WriteAt(file.fd(), buffer.get(), kChunkBytes, i * kChunkBytes)) {
      if (direct && errno == EINVAL) return std::numeric_limits<double>::quiet_NaN();
      ExpectSys(false, "pwrite");
    }
  }
  ExpectSys(::fdatasync(file.fd()) == 0, "fdatasync");
  return static_cast<double>(chunks * kChunkBytes) / kBytesPerMB / watch.Seconds();
}

double SyncedBatchesMBPerS(const std::string& path, uint64_t bytes, uint64_t batch_bytes) {
  ScratchFile file(path, 0);
  ExpectSys(file.is_open(), "open " + path);
  const std::string batch = MakeRows(batch_bytes);
  const uint64_t batches = (bytes + batch_bytes - 1) / batch_bytes;
  Stopwatch watch;
  for (uint64_t i = 0; i < batches; ++i) {
    ExpectSys(WriteAt(file.fd(), batch.data(), batch.size(), i * batch_bytes), "pwrite");
    ExpectSys(::fdatasync(file.fd()) == 0, "fdatasync");
  }
  return static_cast<double>(batches * batch_bytes) / kBytesPerMB / watch.Seconds();
}

double EncodedBatchesMBPerS(const std::string& path, std::string_view rows, uint64_t batch_bytes) {
  ScratchFile file(path, 0);
  ExpectSys(file.is_open(), "open " + path);
  const std::string zeros(kChunkBytes, '\0');
  const uint64_t compress_min_bytes = LogOptions{}.compress_min_bytes;
  std::string payload;
  uint64_t end = 0, zeroed = 0;
  Stopwatch watch;
  for (size_t at = 0; at < rows.size(); at += batch_bytes) {
    uint8_t flags = 0;
    Expect(EncodePayload(LogWrite{"WRITE", rows.substr(at, batch_bytes)}, compress_min_bytes, &payload, &flags),
           "encoding a batch");
    if (end + payload.size() > zeroed) {
      ExpectSys(WriteAt(file.fd(), zeros.data(), zeros.size(), zeroed), "pwrite zeros");
      zeroed += zeros.size();
    }
    ExpectSys(WriteAt(file.fd(), payload.data(), payload.size(), end), "pwrite");
    ExpectSys(::fdatasync(file.fd()) == 0, "fdatasync");
    end += payload.size();
  }
  return static_cast<double>(rows.size()) / kBytesPerMB / watch.Seconds();
}

}  // namespace spool::bench
