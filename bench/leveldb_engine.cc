// LevelDB as an engine: a WriteBatch of puts per commit, written with
// WriteOptions::sync (the log is fsync'ed before the write returns).
#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>

#include "engine.h"
#include "leveldb_util.h"

namespace spool::bench {
namespace {

// W7 only: LevelDB clips write_buffer_size to 1 GiB; the largest memtable
// keeps the most of what was written in the log.
constexpr size_t kLargestMemtableBytes = 1ull << 30;

class LevelDbEngine final : public Engine {
 public:
  explicit LevelDbEngine(const EngineOptions& options) : options_(options) {}

  std::string_view name() const override { return kLevelDb; }
  std::string_view log_file_suffix() const override { return ".log"; }

  Status Open(const std::string& dir) override {
    leveldb::Options options;
    options.create_if_missing = true;
    if (options_.hold_whole_log) options.write_buffer_size = kLargestMemtableBytes;
    leveldb::DB* db = nullptr;
    SPOOL_RETURN_IF_ERROR(FromLevel(leveldb::DB::Open(options, dir, &db), "leveldb open " + dir));
    db_.reset(db);
    return Status::OK();
  }

  Status Commit(std::span<const Record> records) override {
    leveldb::WriteBatch batch;
    for (const Record& r : records) batch.Put(LevelSlice(r.key), LevelSlice(r.value));
    leveldb::WriteOptions write_options;
    write_options.sync = true;
    return FromLevel(db_->Write(write_options, &batch), "leveldb write");
  }

  Status ReadBack(const Record& last) override {
    std::string value;
    SPOOL_RETURN_IF_ERROR(FromLevel(db_->Get(leveldb::ReadOptions(), LevelSlice(last.key), &value), "leveldb get"));
    if (value != last.value) return Status::Corruption("leveldb returned another value");
    return Status::OK();
  }

  Status Close() override {
    db_.reset();
    return Status::OK();
  }

 private:
  const EngineOptions options_;
  std::unique_ptr<leveldb::DB> db_;
};

}  // namespace

std::unique_ptr<Engine> NewLevelDbEngine(const EngineOptions& options) {
  return std::make_unique<LevelDbEngine>(options);
}

}  // namespace spool::bench
