// RocksDB's and LevelDB's statuses as Spool's: their Status classes have
// the same shape, so one template serves both (and every engine file).
#pragma once

#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::bench {

// OK, or "<what>: <s.ToString()>" as NotFound, Corruption or IOError.
template <typename EngineStatus>
Status FromEngineStatus(const EngineStatus& s, std::string_view what) {
  if (s.ok()) return Status::OK();
  const std::string msg = std::string(what) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  return Status::IOError(msg);
}

}  // namespace spool::bench
