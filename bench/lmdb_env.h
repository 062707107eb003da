// What the LMDB engines share (lmdb_engine.cc, versioned_lmdb.cc,
// stream_step_lmdb.cc): opening an environment, errors as Status and byte
// views in and out of MDB_val.
#pragma once

#include <lmdb.h>

#include <cstddef>
#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::bench::lmdb {

// OK for MDB_SUCCESS; otherwise "<what>: <mdb_strerror>" as NotFound,
// Corruption, NoSpace (map full) or IOError.
inline Status FromMdb(int rc, std::string_view what) {
  if (rc == MDB_SUCCESS) return Status::OK();
  const std::string msg = std::string(what) + ": " + mdb_strerror(rc);
  if (rc == MDB_NOTFOUND) return Status::NotFound(msg);
  if (rc == MDB_CORRUPTED) return Status::Corruption(msg);
  if (rc == MDB_MAP_FULL) return Status::NoSpace(msg);
  return Status::IOError(msg);
}

// LMDB does not write through an input MDB_val: the cast is safe.
inline MDB_val ToVal(std::string_view bytes) { return MDB_val{bytes.size(), const_cast<char*>(bytes.data())}; }
inline std::string_view ToView(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

// Opens (creating) the environment in `dir` (an existing directory) with a
// 16-GiB map, in LMDB's default durable mode, and its main database.
// `*env` is set even when this fails: mdb_env_close it.
Status OpenEnv(const std::string& dir, MDB_env** env, MDB_dbi* dbi);

}  // namespace spool::bench::lmdb
