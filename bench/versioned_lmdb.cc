// LMDB with key‖version entries (versioned_engine.h): a write transaction
// of puts per commit, default (durable) flags. The rewind point is a copy
// made by mdb_env_copy2 (a consistent copy while the store stays open),
// synced (a snapshot too); a rewind closes the environment, copies the file
// back over data.mdb, syncs it and reopens. A vacuum's deletes are one write
// transaction; the pages go to LMDB's free list (the file does not shrink).
#include <lmdb.h>

#include <filesystem>

#include "engine.h"
#include "lmdb_env.h"
#include "stopwatch.h"
#include "versioned_engine.h"

namespace spool::bench {
namespace {

constexpr char kDataFile[] = "/data.mdb";

using lmdb::FromMdb;
using lmdb::ToVal;
using lmdb::ToView;

class VersionedLmdb final : public VersionedPeer {
 public:
  ~VersionedLmdb() override { (void)Close(); }

  std::string_view name() const override { return kLmdb; }

  Status Open(const std::string& dir) override {
    dir_ = dir;
    return lmdb::OpenEnv(dir, &env_, &dbi_);
  }

  Status Commit(uint64_t version, std::span<const Record> rows) override {
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin"));
    std::string encoded;
    for (const Record& r : rows) {
      versioned::EncodeKey(r.key, version, &encoded);
      MDB_val key = ToVal(encoded);
      MDB_val value = ToVal(r.value);
      const int rc = mdb_put(txn, dbi_, &key, &value, 0);
      if (rc != MDB_SUCCESS) {
        mdb_txn_abort(txn);
        return FromMdb(rc, "mdb_put");
      }
    }
    return FromMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }

  Status TakeSnapshot(const std::string& snapshot_dir) override {
    std::error_code ec;
    std::filesystem::create_directories(snapshot_dir, ec);
    if (ec) return Status::IOError("create " + snapshot_dir + ": " + ec.message());
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_copy2(env_, snapshot_dir.c_str(), 0), "mdb_env_copy2 " + snapshot_dir));
    SPOOL_RETURN_IF_ERROR(versioned::SyncPath(snapshot_dir + kDataFile));
    return versioned::SyncPath(snapshot_dir);
  }

  Status Rewind(RewindTimes* times) override {
    const std::string dir = dir_;
    Stopwatch watch;
    SPOOL_RETURN_IF_ERROR(Close());
    times->close_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(versioned::CopyFileDurably(point_dir() + kDataFile, dir + kDataFile));
    times->restore_s = watch.Seconds();
    watch.Restart();
    SPOOL_RETURN_IF_ERROR(Open(dir));
    times->open_s = watch.Seconds();
    return Status::OK();
  }

  Status Close() override {
    if (env_ != nullptr) mdb_env_close(env_);
    env_ = nullptr;
    return Status::OK();
  }

 protected:
  Status ScanEntries(const EntryVisitor& visit) override {
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, MDB_RDONLY, &txn), "mdb_txn_begin"));
    MDB_cursor* cursor = nullptr;
    int rc = mdb_cursor_open(txn, dbi_, &cursor);
    Status s = FromMdb(rc, "mdb_cursor_open");
    if (s.ok()) {
      MDB_val key{0, nullptr}, value{0, nullptr};
      for (rc = mdb_cursor_get(cursor, &key, &value, MDB_FIRST); rc == MDB_SUCCESS && s.ok();
           rc = mdb_cursor_get(cursor, &key, &value, MDB_NEXT)) {
        s = visit(ToView(key), ToView(value));
      }
      if (s.ok() && rc != MDB_NOTFOUND) s = FromMdb(rc, "mdb_cursor_get");
      mdb_cursor_close(cursor);
    }
    mdb_txn_abort(txn);
    return s;
  }

  Status DeleteEntries(std::span<const std::string> versioned_keys) override {
    MDB_txn* txn = nullptr;
    SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(env_, nullptr, 0, &txn), "mdb_txn_begin"));
    for (const std::string& encoded : versioned_keys) {
      MDB_val key = ToVal(encoded);
      const int rc = mdb_del(txn, dbi_, &key, nullptr);
      if (rc != MDB_SUCCESS) {
        mdb_txn_abort(txn);
        return FromMdb(rc, "mdb_del");
      }
    }
    return FromMdb(mdb_txn_commit(txn), "mdb_txn_commit");
  }

 private:
  std::string dir_;
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
};

}  // namespace

std::unique_ptr<VersionedEngine> NewVersionedLmdb() { return std::make_unique<VersionedLmdb>(); }

}  // namespace spool::bench
