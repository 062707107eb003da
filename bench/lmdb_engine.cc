// LMDB as an engine: a write transaction of puts per commit, in LMDB's
// default durable mode (mdb_txn_commit syncs data and meta pages). LMDB has
// no log: it writes its B+tree copy-on-write.
#include <lmdb.h>

#include "engine.h"

namespace spool::bench {
namespace {

// Address space reserved for the map; the file grows only as pages are used.
constexpr size_t kMapBytes = 16ull << 30;

Status FromMdb(int rc, std::string_view what) {
  if (rc == MDB_SUCCESS) return Status::OK();
  const std::string msg = std::string(what) + ": " + mdb_strerror(rc);
  if (rc == MDB_NOTFOUND) return Status::NotFound(msg);
  if (rc == MDB_CORRUPTED) return Status::Corruption(msg);
  if (rc == MDB_MAP_FULL) return Status::NoSpace(msg);
  return Status::IOError(msg);
}

MDB_val ToVal(std::string_view bytes) { return MDB_val{bytes.size(), const_cast<char*>(bytes.data())}; }

class LmdbEngine final : public Engine {
 public:
  ~LmdbEngine() override { (void)Close(); }

  std::string_view name() const override { return kLmdb; }
  std::string_view log_file_suffix() const override { return {}; }

  Status Open(const std::string& dir) override {
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_create(&env_), "mdb_env_create"));
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_set_mapsize(env_, kMapBytes), "mdb_env_set_mapsize"));
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_open(env_, dir.c_str(), 0, 0644), "mdb_env_open " + dir));
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin"));
    const int rc = mdb_dbi_open(txn, nullptr, 0, &dbi_);
    if (rc != MDB_SUCCESS) {
      mdb_txn_abort(txn);
      return FromMdb(rc, "mdb_dbi_open");
    }
    return FromMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }

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
    const bool same = rc == MDB_SUCCESS && std::string_view(static_cast<const char*>(value.mv_data),
                                                            value.mv_size) == last.value;
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
