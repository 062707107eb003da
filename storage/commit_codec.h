// The commit record: what one table commit writes to the log, and its
// encoding (FlatBuffers, commit.fbs). Internal to storage.
//
// Every decoder here takes bytes that came from disk: it runs the
// FlatBuffers verifier, then checks every field Spool relies on (kinds in
// range, identifiers and schemas valid, each change carrying exactly the
// images its kind needs) and returns Corruption naming what is wrong.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/table.h"

namespace spool {

enum class RowChangeKind : uint8_t { kInsert = 1, kUpdate, kDelete };

struct RowChangeRecord {
  RowChangeKind kind = RowChangeKind::kInsert;
  std::string key;           // empty for a keyless insert: the row id is derived
  std::string pre;           // update, delete
  std::string post;          // insert, update
  uint64_t pre_version = 0;  // update, delete: the version that wrote `pre`
};

struct TableChangeSet {
  uint64_t uid = 0;
  std::vector<RowChangeRecord> changes;
};

enum class DdlKind : uint8_t { kCreate = 1, kAlter, kDrop };

struct DdlRecord {
  DdlKind kind = DdlKind::kCreate;
  std::optional<TableInfo> before;  // alter, drop
  std::optional<TableInfo> after;   // create, alter
};

struct CheckpointRecord {
  std::string flow;
  std::optional<std::string> before;
  std::optional<std::string> after;
};

struct CommitRecord {
  std::string parameters_json = "{}";
  std::string update_id;
  uint64_t execution_time_us = 0;
  Metrics metrics;
  std::vector<DdlRecord> ddl;
  std::vector<TableChangeSet> tables;
  std::vector<CheckpointRecord> checkpoints;
};

std::string EncodeCommit(const CommitRecord& commit);
// With `only_table`, the row changes of other tables are skipped (still
// verified). Errors: Corruption naming the field that does not verify.
Status DecodeCommit(std::string_view body, CommitRecord* commit, std::optional<uint64_t> only_table = std::nullopt);

// A catalog entry: a TableDef buffer of its own.
std::string EncodeTableInfo(const TableInfo& table);
Status DecodeTableInfo(std::string_view bytes, TableInfo* table);

// The row id of the `index`-th row a keyless table gained in commit
// `version`: big-endian, so row ids sort in commit order.
std::string KeylessRowId(uint64_t version, uint32_t index);

}  // namespace spool
