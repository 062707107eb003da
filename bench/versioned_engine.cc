#include "versioned_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "engine.h"

namespace spool::bench {

std::unique_ptr<VersionedEngine> MakeVersionedEngine(std::string_view engine) {
  if (engine == kSpool) return NewSpoolTableEngine();
  if (engine == kRocksDb) return NewVersionedRocksDb();
  if (engine == kLmdb) return NewVersionedLmdb();
  if (engine == kSqlite) return NewVersionedSqlite();
  if (engine == kLevelDb) return NewVersionedLevelDb();
  return nullptr;
}

namespace versioned {

void EncodeKey(std::string_view key, uint64_t version, std::string* out) {
  out->assign(key);
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>((version >> shift) & 0xff));
}

Status AsOfFolder::Add(std::string_view versioned_key, std::string_view value) {
  if (versioned_key.size() < kVersionBytes) return Status::Corruption("an entry's key is shorter than a version");
  const std::string_view key = versioned_key.substr(0, versioned_key.size() - kVersionBytes);
  uint64_t version = 0;
  for (char c : versioned_key.substr(key.size())) version = version << 8 | static_cast<uint8_t>(c);
  if (!have_key_ || key != key_) {
    if (have_row_) visit_(key_, row_);
    key_.assign(key);
    have_key_ = true;
    have_row_ = false;
  }
  // A key's entries ascend by version: the last one at or before version_ wins.
  if (version <= version_) {
    row_.assign(value);
    have_row_ = true;
  }
  return Status::OK();
}

void AsOfFolder::Finish() {
  if (have_row_) visit_(key_, row_);
  have_key_ = have_row_ = false;
}

Status SyncPath(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("open " + path + ": " + std::strerror(errno));
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  return synced ? Status::OK() : Status::IOError("fsync " + path + ": " + std::strerror(err));
}

Status CopyFileDurably(const std::string& from, const std::string& to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec) return Status::IOError("copy " + from + " to " + to + ": " + ec.message());
  const int fd = ::open(to.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("open " + to + ": " + std::strerror(errno));
  const bool synced = ::fdatasync(fd) == 0;
  const int err = errno;
  ::close(fd);
  return synced ? Status::OK() : Status::IOError("fdatasync " + to + ": " + std::strerror(err));
}

}  // namespace versioned
}  // namespace spool::bench
