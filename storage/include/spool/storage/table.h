// Tables, transactions and what reads return (docs/design.md).
//
// A Transaction collects changes to any number of tables, DDL and flow
// checkpoints; Store::Commit writes it as one log record at one version, all
// or nothing. Nothing is checked or written until Commit, which refuses the
// whole transaction (changing nothing) when any part does not fit.
//
// Thread-safety: plain values. A Transaction is used by one thread.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "spool/storage/schema.h"

namespace spool {

std::string_view TableKindName(TableKind kind);  // "streaming_table", "materialized_view", "internal_state"
// Errors: InvalidArgument.
Status ParseTableKind(std::string_view name, TableKind* kind);

// A table as the catalog holds it.
struct TableInfo {
  TableId id;
  // Unique in the store: (creating version << 12) | its index among the
  // tables that commit created. A table dropped and created again under the
  // same name is another table with another uid.
  uint64_t uid = 0;
  static constexpr int kUidIndexBits = 12;
  uint64_t created_version() const { return uid >> kUidIndexBits; }
  TableKind kind = TableKind::kStreamingTable;
  Schema schema;
  std::map<std::string, std::string> properties;
  friend bool operator==(const TableInfo&, const TableInfo&) = default;
};

// Operation metrics: Delta's operationMetrics (numOutputRows, …).
using Metrics = std::map<std::string, int64_t>;

class Transaction {
 public:
  // `operation` names the commit in history: "WRITE", "CREATE TABLE",
  // "STREAMING UPDATE", … `parameters_json` is a JSON object.
  explicit Transaction(std::string operation = "WRITE", std::string parameters_json = "{}")
      : operation_(std::move(operation)), parameters_json_(std::move(parameters_json)) {}

  void SetOperation(std::string operation, std::string parameters_json = "{}") {
    operation_ = std::move(operation);
    parameters_json_ = std::move(parameters_json);
  }
  // The update (pipeline run) that produced this commit.
  void SetUpdateId(std::string update_id) { update_id_ = std::move(update_id); }
  // Lets this transaction change Spool's own tables (TableId::IsSpools):
  // only the pipeline runtime sets it. Changed by hand, operator state would
  // make a pipeline compute wrong results, so Commit refuses it otherwise.
  void AllowSpoolTables() { allow_spool_tables_ = true; }
  bool allows_spool_tables() const { return allow_spool_tables_; }
  // A metric recorded with the commit beside the ones Commit computes.
  void AddMetric(std::string name, int64_t value) { metrics_[std::move(name)] = value; }

  // A table this transaction names. Its operations name their table by
  // reference, so that a transaction of many rows holds each name once; a
  // writer of many rows takes the reference once and writes by it.
  // Table() gives the same reference for the same name. A reference is
  // good for the transaction that gave it (Commit refuses another's).
  struct TableRef {
    uint32_t index = 0;
    friend bool operator==(TableRef, TableRef) = default;
  };
  TableRef Table(const TableId& id);
  const TableId& table(TableRef ref) const { return tables_[ref.index]; }
  const std::vector<TableId>& tables() const { return tables_; }

  void CreateTable(const TableId& id, TableKind kind, Schema schema,
                   std::map<std::string, std::string> properties = {}) {
    ops_.emplace_back(std::in_place_type<CreateOp>,
                      CreateOp{Table(id), kind, std::move(schema), std::move(properties)});
  }
  // Adds a nullable column at the end; rows written before read it as null.
  void AddColumn(const TableId& id, Column column) {
    ops_.emplace_back(std::in_place_type<AddColumnOp>, AddColumnOp{Table(id), std::move(column)});
  }
  // Sets properties; an empty value removes one (a property is never the
  // empty string).
  void SetProperties(const TableId& id, std::map<std::string, std::string> properties) {
    ops_.emplace_back(std::in_place_type<SetPropertiesOp>, SetPropertiesOp{Table(id), std::move(properties)});
  }
  void DropTable(const TableId& id) { ops_.emplace_back(std::in_place_type<DropOp>, DropOp{Table(id)}); }

  // Keyless table: appends the row. Keyed table: inserts it, or replaces
  // the row with the same key (upsert).
  void Write(TableRef table, Row row) {
    ops_.emplace_back(std::in_place_type<WriteOp>, WriteOp{table, std::move(row)});
  }
  void Write(const TableId& id, Row row) { Write(Table(id), std::move(row)); }
  // Keyed tables only: deletes the row whose key columns equal `key` (the
  // key's values in key order). Deleting a missing key is not an error.
  void Delete(TableRef table, Row key) {
    ops_.emplace_back(std::in_place_type<DeleteOp>, DeleteOp{table, std::move(key)});
  }
  void Delete(const TableId& id, Row key) { Delete(Table(id), std::move(key)); }
  // Deletes every row (a full refresh's first step). The change feed shows
  // each deleted row.
  void Truncate(const TableId& id) { ops_.emplace_back(std::in_place_type<TruncateOp>, TruncateOp{Table(id)}); }

  // Sets a flow's checkpoint (source offsets and operator state, opaque to
  // storage); an empty optional clears it.
  void SetCheckpoint(std::string flow, std::optional<std::string> data) {
    ops_.emplace_back(std::in_place_type<CheckpointOp>, CheckpointOp{std::move(flow), std::move(data)});
  }

  // Makes room for `more` operations: a caller about to add many (a
  // micro-batch's rows) spares the list its regrowth, which moves every
  // operation added before. Grows at least twofold, so that many small
  // reservations cost no more than the pushes alone.
  void Reserve(size_t more) {
    if (ops_.size() + more > ops_.capacity()) ops_.reserve(std::max(ops_.size() + more, 2 * ops_.capacity()));
  }

  bool empty() const { return ops_.empty(); }
  const std::string& operation() const { return operation_; }

  struct CreateOp {
    TableRef table;
    TableKind kind;
    Schema schema;
    std::map<std::string, std::string> properties;
  };
  struct AddColumnOp {
    TableRef table;
    Column column;
  };
  struct SetPropertiesOp {
    TableRef table;
    std::map<std::string, std::string> properties;
  };
  struct DropOp {
    TableRef table;
  };
  struct WriteOp {
    TableRef table;
    Row row;
  };
  struct DeleteOp {
    TableRef table;
    Row key;
  };
  struct TruncateOp {
    TableRef table;
  };
  struct CheckpointOp {
    std::string flow;
    std::optional<std::string> data;
  };
  using Op = std::variant<CreateOp, AddColumnOp, SetPropertiesOp, DropOp, WriteOp, DeleteOp, TruncateOp, CheckpointOp>;

  const std::vector<Op>& ops() const { return ops_; }
  const std::string& parameters_json() const { return parameters_json_; }
  const std::string& update_id() const { return update_id_; }
  const Metrics& metrics() const { return metrics_; }

 private:
  std::string operation_;
  std::string parameters_json_;
  std::string update_id_;
  bool allow_spool_tables_ = false;
  Metrics metrics_;
  std::vector<Op> ops_;
  std::vector<TableId> tables_;             // by TableRef::index
  std::map<TableId, TableRef> table_refs_;  // the index of tables_
};

// What Commit acknowledged.
struct CommitResult {
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
  // The metrics recorded with the commit (a restore's numRestoredRows and
  // numRemovedRows, and those the transaction added).
  Metrics metrics;
};

// One commit that touched a table: Delta's DESCRIBE HISTORY columns.
struct HistoryEntry {
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
  std::string operation;
  std::string parameters_json;
  // Row and byte counts of this table's changes in the commit
  // (numOutputRows, numInsertedRows, numUpdatedRows, numDeletedRows,
  // numOutputBytes), the commit's executionTimeUs, and the metrics the
  // transaction added.
  Metrics metrics;
  std::string update_id;
};

enum class ChangeType : uint8_t { kInsert = 1, kUpdatePreimage, kUpdatePostimage, kDelete };
std::string_view ChangeTypeName(ChangeType type);  // "insert", "update_preimage", "update_postimage", "delete"

// One row of the change data feed.
struct ChangeRow {
  ChangeType change_type = ChangeType::kInsert;
  uint64_t commit_version = 0;
  uint64_t commit_timestamp_us = 0;
  Row row;
};

// Which version of a table a read sees.
// A row as Store::Scan reads it, in place: each column's encoded value as a
// view of the store's memory, valid only during the visit that hands it
// over. Accessors take a column index; the typed ones require a non-null
// value of that column's type.
class RowView {
 public:
  size_t size() const { return fields_.size(); }
  bool IsNull(size_t column) const { return fields_[column].data() == nullptr; }
  int64_t Int64(size_t column) const;
  double Double(size_t column) const;
  bool Bool(size_t column) const;
  Timestamp TimestampOf(size_t column) const;
  // A string or bytes column's bytes.
  std::string_view Chars(size_t column) const { return fields_[column]; }
  // Copies the row into `*row` (reusing its strings).
  void CopyTo(Row* row) const;

 private:
  friend class RowParser;
  uint64_t Fixed64(size_t column) const;
  const Schema* schema_ = nullptr;
  std::vector<std::string_view> fields_;  // a null column: a view of no data
};

struct ReadOptions {
  std::optional<uint64_t> version;       // as of this version
  std::optional<uint64_t> timestamp_us;  // as of the latest commit at or before this time
  // Keyed tables: the rows with start_key <= key < end_key (key values in
  // key order; a prefix of the key columns is allowed). Unset: unbounded.
  std::optional<Row> start_key;
  std::optional<Row> end_key;
  // start_key < key instead: past every key that starts with start_key's
  // values (a prefix's keys are all skipped).
  bool start_exclusive = false;
  // key <= end_key instead: up to every key that starts with end_key's
  // values (a prefix's keys are all included).
  bool end_inclusive = false;
};

}  // namespace spool
