// What the store's source files share. Internal to storage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "commit_codec.h"
#include "spool/storage/store.h"
#include "spool/txnlog/log.h"
#include "state_store.h"

namespace spool {

// "D" version(be64): the DDL of one commit (a CommitRecord holding only
// ddl), which time travel undoes to find a table's definition at an older
// version.
inline constexpr std::string_view kStateDdlPrefix = "D";
std::string StateDdlKey(uint64_t version);

// The state changes a committed record makes: the one function both the
// commit path and replay use.
StateDelta DeltaFromCommit(const CommitRecord& record, const LogEntry& entry, uint64_t store_id);

// A consistent picture of one table, taken under commit_mu_: the current
// rows (a view) at version `newest`, and the table as of `version`.
struct Store::Capture {
  TableInfo table;       // as of `version`
  uint64_t version = 0;
  uint64_t newest = 0;   // the version the view shows
  std::string prefix;    // the table's row prefix
  std::unique_ptr<StateView> view;
  // Taken with the view: vacuum keeps the log from `version` while it lives.
  std::unique_ptr<VersionPin> pin;
};

}  // namespace spool
