// What the store's source files share. Internal to storage.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "commit_codec.h"
#include "history_run.h"
#include "spool/txnlog/log.h"
#include "state_store.h"
#include "store_impl.h"
#include "varint.h"

namespace spool {

// Files of a store directory.
inline constexpr std::string_view kStoreLockName = "LOCK";
inline constexpr std::string_view kMarkerName = "STORE";
inline constexpr std::string_view kMarker = "spool-store 1\n";
inline constexpr std::string_view kStorePinsName = "PINS";

// Parses the PINS file at `path` (its text): name -> pinned version.
// Errors: Corruption, saying what is wrong and the way out.
Status ParsePins(const std::string& path, std::string_view text, std::map<std::string, uint64_t>* pins);

// "D" version(be64): the DDL of one commit (a CommitRecord holding only
// ddl), which time travel undoes to find a table's definition at an older
// version.
inline constexpr std::string_view kStateDdlPrefix = "D";
std::string StateDdlKey(uint64_t version);

// "L" uid(be64): the version of the table's last commit (rows or
// definition), be64: what a whole-store rewind checks to find the tables a
// cut would take changes from, without reading the log.
inline constexpr std::string_view kStateLastChangePrefix = "L";
std::string StateLastChangeKey(uint64_t uid);

// A row in the state store ("r"): varint(the version that wrote it) row.
std::string StateRowValue(uint64_t written, std::string_view row);
// Errors: Corruption (no version in front).
inline Status SplitStateRow(std::string_view value, uint64_t* written, std::string_view* row) {
  if (!GetVarint(&value, written)) return Status::Corruption("state row without the version that wrote it");
  *row = value;
  return Status::OK();
}
// The row of a state row value, its version dropped.
inline Status StateRowBytes(std::string_view value, std::string_view* row) {
  uint64_t written = 0;
  return SplitStateRow(value, &written, row);
}

// The history index ("h"): for each commit and table, one entry holding
// the rows the commit changed or deleted, as they were before it — a run
// (history_run.h). Keyed (table, the commit's version), so a commit adds
// one LMDB value, versions append, and a read after a version reads its
// runs whole, in order.
std::string StateHistoryKey(uint64_t uid, uint64_t version);
inline constexpr size_t kStateHistoryKeyBytes = 1 + 8 + 8;  // "h" uid version
// The history runs of a commit at `version` (one Put per table whose rows
// it replaced), appended to `*delta`.
void AddHistoryRuns(const CommitRecord& record, uint64_t version, StateDelta* delta);

// The state changes a committed record makes: the one function both the
// commit path and replay use. The commit path passes its builder's
// `staged` changes (the rows and checkpoints the record sets, as state keys
// and values), which are moved into the delta instead of derived again,
// and, for a big commit, its `history` runs (AddHistoryRuns, made while the
// commit was written), moved too; replay derives both from the record.
StateDelta DeltaFromCommit(const CommitRecord& record, const LogEntry& entry, uint64_t store_id,
                           StagedChanges* staged = nullptr, StateDelta* history = nullptr);

// A consistent picture of one table, taken under commit_mu_: the current
// rows (a view) at version `newest`, and the table as of `version`.
struct StoreImpl::Capture {
  TableInfo table;  // as of `version`
  uint64_t version = 0;
  uint64_t newest = 0;  // the version the view shows
  std::string prefix;   // the table's row prefix
  std::unique_ptr<StateView> view;
  // When `version` < `newest` and the history index covers it: the table's
  // index entries, taken with the view.
  std::unique_ptr<StateView> history;
  // Taken with the view: vacuum keeps the log from `version` while it lives.
  std::unique_ptr<VersionPin> pin;
};

}  // namespace spool
