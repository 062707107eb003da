#include "versioned_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

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

Status SplitKey(std::string_view versioned_key, std::string_view* key, uint64_t* version) {
  if (versioned_key.size() < kVersionBytes) return Status::Corruption("an entry's key is shorter than a version");
  *key = versioned_key.substr(0, versioned_key.size() - kVersionBytes);
  *version = 0;
  for (char c : versioned_key.substr(key->size())) *version = *version << 8 | static_cast<uint8_t>(c);
  return Status::OK();
}

Status AsOfFolder::Add(std::string_view versioned_key, std::string_view value) {
  std::string_view key;
  uint64_t version = 0;
  SPOOL_RETURN_IF_ERROR(SplitKey(versioned_key, &key, &version));
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
Status VersionedPeer::ReadAsOf(uint64_t version, const RowVisitor& visit) {
  versioned::AsOfFolder folder(version, visit);
  SPOOL_RETURN_IF_ERROR(
      ScanEntries([&](std::string_view key, std::string_view value) { return folder.Add(key, value); }));
  folder.Finish();
  return Status::OK();
}

Status VersionedPeer::ReadLatest(const RowVisitor& visit) {
  return ReadAsOf(std::numeric_limits<uint64_t>::max(), visit);
}

Status VersionedPeer::MarkRewindPoint(const std::string& point_dir) {
  SPOOL_RETURN_IF_ERROR(TakeSnapshot(point_dir));
  point_dir_ = point_dir;
  return Status::OK();
}

Status VersionedPeer::ScanChanges(uint64_t from, uint64_t to, const ChangeVisitor& visit) {
  return ScanEntries([&](std::string_view versioned_key, std::string_view value) {
    std::string_view key;
    uint64_t version = 0;
    SPOOL_RETURN_IF_ERROR(versioned::SplitKey(versioned_key, &key, &version));
    if (version > from && version <= to) visit(version, key, value);
    return Status::OK();
  });
}

Status VersionedPeer::RestoreAsNewVersion(uint64_t version, uint64_t new_version) {
  // One scan: for each key, its value as of `version` and its latest; the
  // rows whose two differ are written back as they were.
  std::string bytes;  // the rows to write, key and value back to back
  struct Span {
    size_t offset, key_size, value_size;
  };
  std::vector<Span> spans;
  std::string key, at_version, latest;
  bool have_key = false, have_at_version = false;
  auto finish_key = [&] {
    if (!have_key || !have_at_version || at_version == latest) return;
    spans.push_back(Span{bytes.size(), key.size(), at_version.size()});
    bytes += key;
    bytes += at_version;
  };
  const Status scanned = ScanEntries([&](std::string_view versioned_key, std::string_view value) {
    std::string_view k;
    uint64_t v = 0;
    SPOOL_RETURN_IF_ERROR(versioned::SplitKey(versioned_key, &k, &v));
    if (!have_key || k != key) {
      finish_key();
      key.assign(k);
      have_key = true;
      have_at_version = false;
    }
    if (v <= version) {
      at_version.assign(value);
      have_at_version = true;
    }
    latest.assign(value);
    return Status::OK();
  });
  SPOOL_RETURN_IF_ERROR(scanned);
  finish_key();
  // A key with no entry at or before `version` would need a delete; W5's
  // table has every row from the load on.
  std::vector<Record> rows;
  rows.reserve(spans.size());
  for (const Span& span : spans) {
    rows.push_back(Record{std::string_view(bytes).substr(span.offset, span.key_size),
                          std::string_view(bytes).substr(span.offset + span.key_size, span.value_size)});
  }
  return Commit(new_version, rows);
}

Status VersionedPeer::Vacuum(uint64_t floor) {
  // A key's entries ascend by version: every one before its newest at or
  // before the floor is needed by no read as of the floor or later.
  std::vector<std::string> doomed;
  std::string key, newest_at_floor;  // newest_at_floor: the versioned key of that entry
  std::vector<std::string> older;    // the key's entries at or before the floor, but the newest
  auto finish_key = [&] {
    for (std::string& entry : older) doomed.push_back(std::move(entry));
    older.clear();
    newest_at_floor.clear();
  };
  const Status scanned = ScanEntries([&](std::string_view versioned_key, std::string_view) {
    std::string_view k;
    uint64_t v = 0;
    SPOOL_RETURN_IF_ERROR(versioned::SplitKey(versioned_key, &k, &v));
    if (k != key) {
      finish_key();
      key.assign(k);
    }
    if (v <= floor) {
      if (!newest_at_floor.empty()) older.push_back(std::move(newest_at_floor));
      newest_at_floor.assign(versioned_key);
    }
    return Status::OK();
  });
  SPOOL_RETURN_IF_ERROR(scanned);
  finish_key();
  SPOOL_RETURN_IF_ERROR(DeleteEntries(doomed));
  return Compact();
}

}  // namespace spool::bench
