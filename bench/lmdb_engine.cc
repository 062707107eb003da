// LMDB as an engine: a write transaction of puts per commit, in LMDB's
// default durable mode (mdb_txn_commit syncs data and meta pages). LMDB has
// no log: it writes its B+tree copy-on-write.
#include <lmdb.h>

#include "engine.h"
#include "lmdb_env.h"

namespace spool::bench {
namespace {

using lmdb::FromMdb;
using lmdb::ToVal;

class LmdbEngine final : public Engine {
 public:
  ~LmdbEngine() override { (void)Close(); }

  std::string_view name() const override { return kLmdb; }
  std::string_view log_file_suffix() const override { return {}; }

  Status Open(const std::string& dir) override { return lmdb::OpenEnv(dir, &env_, &dbi_); }

  Status Commit(std::span<const Record> records) override {
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin"));
    for (const Record& r : records) {
      MDB_val key = ToVal(r.key);
      MDB_val value = ToVal(r.value);
      const int rc = mdb_put(txn, dbi_, &key, &value, 0);
      if (rc != MDB_SUCCESS) {
        mdb_txn_abort(txn);
        return FromMdb(rc, "mdb_put");
      }
    }
    return FromMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }

  Status ReadBack(const Record& last) override {
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin"));
    MDB_val key = ToVal(last.key);
    MDB_val value{0, nullptr};
    const int rc = mdb_get(txn, dbi_, &key, &value);
    const bool same =
        rc == MDB_SUCCESS && std::string_view(static_cast<const char*>(value.mv_data), value.mv_size) == last.value;
    mdb_txn_abort(txn);
    SPOOL_RETURN_IF_ERROR(FromMdb(rc, "mdb_get"));
    return same ? Status::OK() : Status::Corruption("lmdb returned another value");
  }

  Status Close() override {
    if (env_ != nullptr) mdb_env_close(env_);
    env_ = nullptr;
    return Status::OK();
  }

 private:
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

}  // namespace

std::unique_ptr<Engine> NewLmdbEngine() { return std::make_unique<LmdbEngine>(); }

}  // namespace spool::bench
