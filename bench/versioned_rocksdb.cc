// RocksDB with key‖version entries (versioned_engine.h): a WriteBatch of
// puts per commit with WriteOptions::sync, default options otherwise; the
// rewind point (and a snapshot) is a Checkpoint (memtable flushed, table
// files hard-linked) and a rewind opens the checkpoint directory; a vacuum's
// deletes are one synced WriteBatch, then a full CompactRange.
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "engine.h"
#include "rocksdb_util.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

class VersionedRocksDb final : public VersionedPeer {
 public:
  ~VersionedRocksDb() override { (void)Close(); }

  std::string_view name() const override { return kRocksDb; }

  Status Open(const std::string& dir) override {
    rocksdb::Options options;
    options.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    SPOOL_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(options, dir, &db), "rocksdb open " + dir));
    db_.reset(db);
    return Status::OK();
  }

  Status Commit(uint64_t version, std::span<const Record> rows) override {
    rocksdb::WriteBatch batch;
    std::string key;
    for (const Record& r : rows) {
      versioned::EncodeKey(r.key, version, &key);
      SPOOL_RETURN_IF_ERROR(FromRocks(batch.Put(RocksSlice(key), RocksSlice(r.value)), "rocksdb batch put"));
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    return FromRocks(db_->Write(write_options, &batch), "rocksdb write");
  }

  Status TakeSnapshot(const std::string& snapshot_dir) override {
    rocksdb::Checkpoint* checkpoint = nullptr;
    SPOOL_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &checkpoint), "rocksdb checkpoint"));
    std::unique_ptr<rocksdb::Checkpoint> owned(checkpoint);
    return FromRocks(owned->CreateCheckpoint(snapshot_dir), "rocksdb create checkpoint " + snapshot_dir);
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
    if (db_ == nullptr) return Status::OK();
    Status s = FromRocks(db_->Close(), "rocksdb close");
    db_.reset();
    return s;
  }

 protected:
  Status ScanEntries(const EntryVisitor& visit) override {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
    for (it->SeekToFirst(); it->Valid(); it->Next())
      SPOOL_RETURN_IF_ERROR(visit(RocksView(it->key()), RocksView(it->value())));
    return FromRocks(it->status(), "rocksdb scan");
  }

  Status DeleteEntries(std::span<const std::string> versioned_keys) override {
    rocksdb::WriteBatch batch;
    for (const std::string& key : versioned_keys) {
      SPOOL_RETURN_IF_ERROR(FromRocks(batch.Delete(RocksSlice(key)), "rocksdb batch delete"));
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    return FromRocks(db_->Write(write_options, &batch), "rocksdb write");
  }

  Status Compact() override {
    return FromRocks(db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr), "rocksdb compact");
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<VersionedEngine> NewVersionedRocksDb() { return std::make_unique<VersionedRocksDb>(); }

}  // namespace spool::bench
