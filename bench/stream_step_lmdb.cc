// LMDB as a W4 peer (stream_step_engine.h): the stepkv entries in the main
// database; a step is one write transaction (a cursor over its events,
// mdb_get of each key's state, mdb_put of state, outputs and offset),
// committed in LMDB's default durable mode (data and meta pages synced).
#include <lmdb.h>

#include "engine.h"
#include "lmdb_env.h"
#include "stream_step_engine.h"

namespace spool::bench {
namespace {

using lmdb::FromMdb;
using lmdb::ToVal;
using lmdb::ToView;

class LmdbStepStore final : public PeerStepStore {
 public:
  ~LmdbStepStore() override { (void)Close(); }

  std::string_view name() const override { return kLmdb; }

  Status Open(const std::string& dir) override { return lmdb::OpenEnv(dir, &env_, &dbi_); }

  Status AppendEvents(uint64_t first_offset, std::span<const std::string> messages) override {
    SPOOL_RETURN_IF_ERROR(Begin());
    for (size_t i = 0; i < messages.size(); ++i) {
      SPOOL_RETURN_IF_ERROR(Put(stepkv::EventKey(first_offset + i), messages[i]));
    }
    return Commit();
  }

  Status Begin() override { return FromMdb(mdb_txn_begin(env_, nullptr, 0, &txn_), "mdb_txn_begin"); }

  Status ReadEvents(uint64_t from, uint64_t count,
                    const std::function<void(std::string_view message)>& visit) override {
    MDB_cursor* cursor = nullptr;
    SPOOL_RETURN_IF_ERROR(Failing(mdb_cursor_open(txn_, dbi_, &cursor), "mdb_cursor_open"));
    const std::string first = stepkv::EventKey(from);
    MDB_val key = ToVal(first);
    MDB_val value{0, nullptr};
    int rc = mdb_cursor_get(cursor, &key, &value, MDB_SET_KEY);
    for (uint64_t offset = from; rc == MDB_SUCCESS && offset < from + count; ++offset) {
      if (ToView(key) != stepkv::EventKey(offset)) break;
      visit(ToView(value));
      rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT);
    }
    mdb_cursor_close(cursor);
    return Failing(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "event scan");
  }

  Status GetTotals(Totals table, int64_t key, KeyTotals* totals, bool* found) override {
    const std::string entry_key = stepkv::TotalsKey(table, key);
    MDB_val k = ToVal(entry_key);
    MDB_val v{0, nullptr};
    const int rc = mdb_get(txn_, dbi_, &k, &v);
    *found = rc == MDB_SUCCESS;
    if (rc == MDB_NOTFOUND) return Status::OK();
    SPOOL_RETURN_IF_ERROR(Failing(rc, "mdb_get"));
    return stepkv::DecodeTotals(ToView(v), totals);
  }

  Status PutTotals(Totals table, int64_t key, const KeyTotals& totals) override {
    return Put(stepkv::TotalsKey(table, key), stepkv::EncodeTotals(totals));
  }

  Status PutOffset(uint64_t next_offset) override { return Put(stepkv::kOffsetKey, stepkv::EncodeOffset(next_offset)); }

  Status Commit() override {
    const int rc = mdb_txn_commit(txn_);
    txn_ = nullptr;
    return FromMdb(rc, "mdb_txn_commit");
  }

  Status ReadOffset(uint64_t* next_offset) override {
    *next_offset = 0;
    return ReadOnly([&]() -> Status {
      MDB_val k = ToVal(stepkv::kOffsetKey);
      MDB_val v{0, nullptr};
      const int rc = mdb_get(txn_, dbi_, &k, &v);
      if (rc == MDB_NOTFOUND) return Status::OK();
      SPOOL_RETURN_IF_ERROR(FromMdb(rc, "mdb_get"));
      return stepkv::DecodeOffset(ToView(v), next_offset);
    });
  }

  Status ReadOutput(const std::function<void(int64_t key, const KeyTotals& totals)>& visit) override {
    return ReadOnly([&]() -> Status {
      MDB_cursor* cursor = nullptr;
      SPOOL_RETURN_IF_ERROR(FromMdb(mdb_cursor_open(txn_, dbi_, &cursor), "mdb_cursor_open"));
      const std::string first = stepkv::OutputKey(0);
      const std::string end = stepkv::OutputEnd();
      MDB_val k = ToVal(first);
      MDB_val v{0, nullptr};
      Status s;
      int rc = mdb_cursor_get(cursor, &k, &v, MDB_SET_RANGE);
      for (; rc == MDB_SUCCESS && s.ok() && ToView(k) < end; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
        int64_t key = 0;
        KeyTotals totals;
        s = stepkv::DecodeOutputKey(ToView(k), &key);
        if (s.ok()) s = stepkv::DecodeTotals(ToView(v), &totals);
        if (s.ok()) visit(key, totals);
      }
      mdb_cursor_close(cursor);
      SPOOL_RETURN_IF_ERROR(s);
      return FromMdb(rc == MDB_NOTFOUND ? MDB_SUCCESS : rc, "output scan");
    });
  }

  Status Close() override {
    Abort();
    if (env_ != nullptr) mdb_env_close(env_);
    env_ = nullptr;
    return Status::OK();
  }

 private:
  Status Put(std::string_view key, std::string_view value) {
    MDB_val k = ToVal(key);
    MDB_val v = ToVal(value);
    return Failing(mdb_put(txn_, dbi_, &k, &v, 0), "mdb_put");
  }

  // FromMdb, aborting the write transaction when `rc` is an error.
  Status Failing(int rc, std::string_view what) {
    if (rc != MDB_SUCCESS) Abort();
    return FromMdb(rc, what);
  }

  void Abort() {
    if (txn_ != nullptr) mdb_txn_abort(txn_);
    txn_ = nullptr;
  }

  // Runs `read` in a read-only transaction.
  template <typename Read>
  Status ReadOnly(Read read) {
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn_), "mdb_txn_begin"));
    const Status s = read();
    Abort();
    return s;
  }

  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  MDB_txn* txn_ = nullptr;
};

}  // namespace

std::unique_ptr<PeerStepStore> NewLmdbStepStore() { return std::make_unique<LmdbStepStore>(); }

}  // namespace spool::bench
