// RocksDB and LevelDB as W4 peers (stream_step_engine.h): one keyspace with
// the stepkv entries; a step reads its events with an iterator from their
// first offset, reads each key's state with Get, and writes state, outputs
// and the offset in one WriteBatch with WriteOptions::sync (the log is
// synced before Write returns). Default options otherwise, as in W1–W3.
// Their APIs are alike enough for one template over the two.
#include <memory>

#include <leveldb/db.h>
#include <leveldb/options.h>
#include <leveldb/write_batch.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "engine.h"
#include "engine_status.h"
#include "stream_step_engine.h"

namespace spool::bench {
namespace {

struct RocksDbApi {
  using DB = rocksdb::DB;
  using Options = rocksdb::Options;
  using ReadOptions = rocksdb::ReadOptions;
  using WriteOptions = rocksdb::WriteOptions;
  using WriteBatch = rocksdb::WriteBatch;
  using Iterator = rocksdb::Iterator;
  using Slice = rocksdb::Slice;
  static constexpr std::string_view kName = kRocksDb;
  static Status Put(WriteBatch& batch, const Slice& key, const Slice& value) {
    return FromEngineStatus(batch.Put(key, value), "rocksdb batch put");
  }
  static Status Close(DB* db) { return FromEngineStatus(db->Close(), "rocksdb close"); }
};

struct LevelDbApi {
  using DB = leveldb::DB;
  using Options = leveldb::Options;
  using ReadOptions = leveldb::ReadOptions;
  using WriteOptions = leveldb::WriteOptions;
  using WriteBatch = leveldb::WriteBatch;
  using Iterator = leveldb::Iterator;
  using Slice = leveldb::Slice;
  static constexpr std::string_view kName = kLevelDb;
  static Status Put(WriteBatch& batch, const Slice& key, const Slice& value) {
    batch.Put(key, value);
    return Status::OK();
  }
  static Status Close(DB*) { return Status::OK(); }
};

template <typename Api>
class LsmStepStore final : public PeerStepStore {
 public:
  using Slice = typename Api::Slice;

  ~LsmStepStore() override { (void)Close(); }

  std::string_view name() const override { return Api::kName; }

  Status Open(const std::string& dir) override {
    typename Api::Options options;
    options.create_if_missing = true;
    typename Api::DB* db = nullptr;
    SPOOL_RETURN_IF_ERROR(Check(Api::DB::Open(options, dir, &db), "open " + dir));
    db_.reset(db);
    return Status::OK();
  }

  Status AppendEvents(uint64_t first_offset, std::span<const std::string> messages) override {
    SPOOL_RETURN_IF_ERROR(Begin());
    for (size_t i = 0; i < messages.size(); ++i) {
      SPOOL_RETURN_IF_ERROR(Api::Put(batch_, ToSlice(stepkv::EventKey(first_offset + i)), ToSlice(messages[i])));
    }
    return Commit();
  }

  Status Begin() override {
    batch_.Clear();
    return Status::OK();
  }

  Status ReadEvents(uint64_t from, uint64_t count,
                    const std::function<void(std::string_view message)>& visit) override {
    std::unique_ptr<typename Api::Iterator> it(db_->NewIterator(typename Api::ReadOptions()));
    uint64_t offset = from;
    for (it->Seek(ToSlice(stepkv::EventKey(from))); it->Valid() && offset < from + count; it->Next(), ++offset) {
      if (ToView(it->key()) != stepkv::EventKey(offset)) break;
      visit(ToView(it->value()));
    }
    return Check(it->status(), "event scan");
  }

  Status GetTotals(Totals table, int64_t key, KeyTotals* totals, bool* found) override {
    std::string value;
    const Status s =
        Check(db_->Get(typename Api::ReadOptions(), ToSlice(stepkv::TotalsKey(table, key)), &value), "get");
    *found = s.ok();
    if (s.IsNotFound()) return Status::OK();
    SPOOL_RETURN_IF_ERROR(s);
    return stepkv::DecodeTotals(value, totals);
  }

  Status PutTotals(Totals table, int64_t key, const KeyTotals& totals) override {
    return Api::Put(batch_, ToSlice(stepkv::TotalsKey(table, key)), ToSlice(stepkv::EncodeTotals(totals)));
  }

  Status PutOffset(uint64_t next_offset) override {
    return Api::Put(batch_, ToSlice(stepkv::kOffsetKey), ToSlice(stepkv::EncodeOffset(next_offset)));
  }

  Status Commit() override {
    typename Api::WriteOptions options;
    options.sync = true;
    return Check(db_->Write(options, &batch_), "write");
  }

  Status ReadOffset(uint64_t* next_offset) override {
    std::string value;
    const Status s = Check(db_->Get(typename Api::ReadOptions(), ToSlice(stepkv::kOffsetKey), &value), "get");
    *next_offset = 0;
    if (s.IsNotFound()) return Status::OK();
    SPOOL_RETURN_IF_ERROR(s);
    return stepkv::DecodeOffset(value, next_offset);
  }

  Status ReadOutput(const std::function<void(int64_t key, const KeyTotals& totals)>& visit) override {
    std::unique_ptr<typename Api::Iterator> it(db_->NewIterator(typename Api::ReadOptions()));
    const std::string end = stepkv::OutputEnd();
    for (it->Seek(ToSlice(stepkv::OutputKey(0))); it->Valid() && ToView(it->key()) < end; it->Next()) {
      int64_t key = 0;
      KeyTotals totals;
      SPOOL_RETURN_IF_ERROR(stepkv::DecodeOutputKey(ToView(it->key()), &key));
      SPOOL_RETURN_IF_ERROR(stepkv::DecodeTotals(ToView(it->value()), &totals));
      visit(key, totals);
    }
    return Check(it->status(), "output scan");
  }

  Status Close() override {
    if (db_ == nullptr) return Status::OK();
    const Status s = Api::Close(db_.get());
    db_.reset();
    return s;
  }

 private:
  template <typename EngineStatus>
  static Status Check(const EngineStatus& s, std::string_view what) {
    return FromEngineStatus(s, std::string(Api::kName) + " " + std::string(what));
  }
  static Slice ToSlice(std::string_view bytes) { return Slice(bytes.data(), bytes.size()); }
  static std::string_view ToView(const Slice& s) { return std::string_view(s.data(), s.size()); }

  std::unique_ptr<typename Api::DB> db_;
  typename Api::WriteBatch batch_;
};

}  // namespace

std::unique_ptr<PeerStepStore> NewRocksDbStepStore() { return std::make_unique<LsmStepStore<RocksDbApi>>(); }
std::unique_ptr<PeerStepStore> NewLevelDbStepStore() { return std::make_unique<LsmStepStore<LevelDbApi>>(); }

}  // namespace spool::bench
