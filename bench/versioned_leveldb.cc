// LevelDB with key‖version entries (versioned_engine.h): a WriteBatch of
// puts per commit with WriteOptions::sync. LevelDB has no checkpoint call,
// so the rewind point is taken by hand while the store is closed: table
// files hard-linked, the log, MANIFEST and CURRENT copied (LevelDB never
// appends to a log or MANIFEST it recovered), all synced; a rewind opens
// that directory.
#include <filesystem>

#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "engine.h"
#include "leveldb_util.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

namespace fs = std::filesystem;

// Copies the closed store in `from` into `to` (created).
Status CopyClosedStore(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::create_directories(to, ec);
  if (ec) return Status::IOError("create " + to + ": " + ec.message());
  for (const fs::directory_entry& entry : fs::directory_iterator(from, ec)) {
    const std::string file = entry.path().filename().string();
    if (file == "LOCK" || file == "LOG" || file == "LOG.old") continue;
    const std::string target = to + "/" + file;
    if (file.ends_with(".ldb") || file.ends_with(".sst")) {
      fs::create_hard_link(entry.path(), target, ec);
      if (ec) return Status::IOError("link " + target + ": " + ec.message());
    } else {
      SPOOL_RETURN_IF_ERROR(versioned::CopyFileDurably(entry.path().string(), target));
    }
  }
  if (ec) return Status::IOError("list " + from + ": " + ec.message());
  return versioned::SyncPath(to);
}

class VersionedLevelDb final : public VersionedPeer {
 public:
  std::string_view name() const override { return kLevelDb; }

  Status Open(const std::string& dir) override {
    leveldb::Options options;
    options.create_if_missing = true;
    leveldb::DB* db = nullptr;
    SPOOL_RETURN_IF_ERROR(FromLevel(leveldb::DB::Open(options, dir, &db), "leveldb open " + dir));
    db_.reset(db);
    dir_ = dir;
    return Status::OK();
  }

  Status Commit(uint64_t version, std::span<const Record> rows) override {
    leveldb::WriteBatch batch;
    std::string key;
    for (const Record& r : rows) {
      versioned::EncodeKey(r.key, version, &key);
      batch.Put(LevelSlice(key), LevelSlice(r.value));
    }
    leveldb::WriteOptions write_options;
    write_options.sync = true;
    return FromLevel(db_->Write(write_options, &batch), "leveldb write");
  }

  Status TakeSnapshot(const std::string& snapshot_dir) override {
    const std::string dir = dir_;
    SPOOL_RETURN_IF_ERROR(Close());
    SPOOL_RETURN_IF_ERROR(CopyClosedStore(dir, snapshot_dir));
    return Open(dir);
  }

  Status Rewind(RewindTimes* times) override {
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(Close());
    times->close_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Open(point_dir()));
    times->open_s = watch.Seconds();
    return Status::OK();
  }

  Status Close() override {
    db_.reset();
    return Status::OK();
  }

 protected:
  Status ScanEntries(const EntryVisitor& visit) override {
    std::unique_ptr<leveldb::Iterator> it(db_->NewIterator(leveldb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      SPOOL_RETURN_IF_ERROR(visit(LevelView(it->key()), LevelView(it->value())));
    return FromLevel(it->status(), "leveldb scan");
  }

  Status DeleteEntries(std::span<const std::string> versioned_keys) override {
    leveldb::WriteBatch batch;
    for (const std::string& key : versioned_keys) batch.Delete(LevelSlice(key));
    leveldb::WriteOptions write_options;
    write_options.sync = true;
    return FromLevel(db_->Write(write_options, &batch), "leveldb write");
  }

  Status Compact() override {
    db_->CompactRange(nullptr, nullptr);
    return Status::OK();
  }

 private:
  std::unique_ptr<leveldb::DB> db_;
  std::string dir_;
};

}  // namespace

std::unique_ptr<VersionedEngine> NewVersionedLevelDb() { return std::make_unique<VersionedLevelDb>(); }

}  // namespace spool::bench
