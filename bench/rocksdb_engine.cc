// RocksDB as an engine: a WriteBatch of puts per commit, written with
// WriteOptions::sync (WAL on, fdatasync before the write returns).
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "engine.h"
#include "rocksdb_util.h"

namespace spool::bench {
namespace {

// W7 only: a memtable large enough that nothing written is flushed to a
// table file, so the whole log is replayed on reopen.
constexpr uint64_t kMemtableSlackBytes = 64ull << 20;

class RocksDbEngine final : public Engine {
 public:
  explicit RocksDbEngine(const EngineOptions& options) : options_(options) {}
  ~RocksDbEngine() override { (void)Close(); }

  std::string_view name() const override { return kRocksDb; }
  std::string_view log_file_suffix() const override { return ".log"; }

  Status Open(const std::string& dir) override {
    rocksdb::Options options;
    options.create_if_missing = true;
    if (options_.hold_whole_log) {
      const uint64_t memtable = 2 * options_.log_bytes + kMemtableSlackBytes;
      options.write_buffer_size = static_cast<size_t>(memtable);
      options.max_total_wal_size = 2 * memtable;
    }
    rocksdb::DB* db = nullptr;
    SPOOL_RETURN_IF_ERROR(FromRocks(rocksdb::DB::Open(options, dir, &db), "rocksdb open " + dir));
    db_.reset(db);
    return Status::OK();
  }

  Status Commit(std::span<const Record> records) override {
    rocksdb::WriteBatch batch;
    for (const Record& r : records) {
      SPOOL_RETURN_IF_ERROR(FromRocks(batch.Put(RocksSlice(r.key), RocksSlice(r.value)), "rocksdb batch put"));
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;
    return FromRocks(db_->Write(write_options, &batch), "rocksdb write");
  }

  Status ReadBack(const Record& last) override {
    std::string value;
    SPOOL_RETURN_IF_ERROR(FromRocks(db_->Get(rocksdb::ReadOptions(), RocksSlice(last.key), &value), "rocksdb get"));
    if (value != last.value) return Status::Corruption("rocksdb returned another value");
    return Status::OK();
  }

  Status Close() override {
    if (db_ == nullptr) return Status::OK();
    Status s = FromRocks(db_->Close(), "rocksdb close");
    db_.reset();
    return s;
  }

 private:
  const EngineOptions options_;
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<Engine> NewRocksDbEngine(const EngineOptions& options) {
  return std::make_unique<RocksDbEngine>(options);
}

}  // namespace spool::bench
