#include "lmdb_env.h"

namespace spool::bench::lmdb {
namespace {

// Address space reserved for the map; the file grows only as pages are used.
constexpr size_t kMapBytes = 16ull << 30;

}  // namespace

Status OpenEnv(const std::string& dir, MDB_env** env, MDB_dbi* dbi) {
  SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_create(env), "mdb_env_create"));
  SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_set_mapsize(*env, kMapBytes), "mdb_env_set_mapsize"));
  SPOOL_RETURN_IF_ERROR(FromMdb(mdb_env_open(*env, dir.c_str(), 0, 0644), "mdb_env_open " + dir));
  MDB_txn* txn = nullptr;
  SPOOL_RETURN_IF_ERROR(FromMdb(mdb_txn_begin(*env, nullptr, 0, &txn), "mdb_txn_begin"));
  const int rc = mdb_dbi_open(txn, nullptr, 0, dbi);
  if (rc != MDB_SUCCESS) {
    mdb_txn_abort(txn);
    return FromMdb(rc, "mdb_dbi_open");
  }
  return FromMdb(mdb_txn_commit(txn), "mdb_txn_commit");
}

}  // namespace spool::bench::lmdb
