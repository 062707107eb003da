// What a store knows besides its tables' rows, as table-valued functions
// (docs/sql.md, "Functions"): history('a.b.c') with DESCRIBE HISTORY's
// columns, event_log(['<pipeline-id>']), rewind_points(), snapshots(),
// archive() and flows([version]). Each reads its listing whole when a
// statement starts reading it: they grow with commits, events and points,
// not with the size of a table.
#include <sqlite3.h>

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "spool/rewind/rewind_points.h"
#include "spool/storage/store.h"
#include "spool/stream/pipeline.h"
#include "sql_internal.h"
#include "vtab_module.h"

namespace spool::sql {
// Named apart: a unity build compiles the two modules' files as one.
namespace meta_vtab {
namespace {

using json = nlohmann::json;

Value Text(std::string text) { return Value(std::move(text)); }
Value Time(uint64_t micros) { return Text(FormatTimestampMicros(static_cast<int64_t>(micros))); }
Value Int(uint64_t n) { return Value(static_cast<int64_t>(n)); }
Value OrNull(const std::string& text) { return text.empty() ? Value() : Text(text); }

// The arguments a call gave (null where it gave none).
struct Args {
  sqlite3_value* values[1] = {nullptr};
  bool Has(size_t i) const { return values[i] != nullptr && sqlite3_value_type(values[i]) != SQLITE_NULL; }
  std::string TextOf(size_t i) const {
    return Has(i) ? std::string(reinterpret_cast<const char*>(sqlite3_value_text(values[i])),
                                static_cast<size_t>(sqlite3_value_bytes(values[i])))
                  : std::string();
  }
};

Status History(Context* context, const Args& args, std::vector<Row>* rows) {
  if (!args.Has(0)) return Status::InvalidArgument("history() needs a table: history('catalog.schema.table')");
  TableId id;
  SPOOL_RETURN_IF_ERROR(TableId::Parse(args.TextOf(0), &id).WithContext("history()"));
  std::vector<HistoryEntry> history;
  SPOOL_RETURN_IF_ERROR(context->store->History(id, &history));
  for (const HistoryEntry& h : history) {
    rows->push_back({Int(h.version), Time(h.timestamp_us), Text(h.operation), Text(h.parameters_json),
                     Text(json(h.metrics).dump()), OrNull(h.update_id)});
  }
  return Status::OK();
}

Status EventLogRows(Context* context, const Args& args, std::vector<Row>* rows) {
  EventQuery query;
  if (args.Has(0)) {
    query.pipeline_id = args.TextOf(0);
    std::string id;
    Status s = GetPipelineDefinition(context->store, nullptr, &id);
    if (s.IsNotFound() || (s.ok() && id != *query.pipeline_id)) {
      return Status::NotFound("event_log(): this store's pipeline is not " + *query.pipeline_id +
                              (s.ok() ? " (its id is " + id + ")" : " (the store has no pipeline)"));
    }
    SPOOL_RETURN_IF_ERROR(s);
  }
  std::vector<Event> events;
  SPOOL_RETURN_IF_ERROR(context->store->events()->Query(query, &events));
  for (Event& e : events) {
    const json origin = {{"pipeline_id", e.origin.pipeline_id},
                         {"update_id", e.origin.update_id},
                         {"flow_name", e.origin.flow_name},
                         {"dataset_name", e.origin.dataset_name}};
    rows->push_back({Text(std::move(e.id)), Int(e.sequence), Time(e.timestamp_us),
                     Text(std::string(EventLevelName(e.level))), Text(std::move(e.event_type)),
                     Text(std::move(e.message)), Text(std::move(e.details_json)), Text(origin.dump())});
  }
  return Status::OK();
}

Status RewindPoints(Context* context, const Args&, std::vector<Row>* rows) {
  std::vector<RewindPoint> points;
  SPOOL_RETURN_IF_ERROR(ListRewindPoints(context->store, 0, &points));
  for (const RewindPoint& p : points) {
    json datasets = json::array();
    for (const RewindPointDataset& d : p.datasets) {
      datasets.push_back({{"identifier", d.identifier}, {"table_version", d.table_version}});
    }
    rows->push_back({Text(p.id), Time(p.timestamp_us), Time(p.recorded_us), Text(p.message), Int(p.dry_run ? 1 : 0),
                     Int(p.position.epoch), Int(p.position.version),
                     Text(std::string(PointUseName(RewindPointUse(context->store, p)))), OrNull(p.update_id),
                     Text(datasets.dump())});
  }
  return Status::OK();
}

Status Snapshots(Context* context, const Args&, std::vector<Row>* rows) {
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(context->store->ListSnapshots(&snapshots));
  for (const SnapshotInfo& s : snapshots) {
    rows->push_back(
        {Text(s.file_name), Int(s.epoch), Int(s.version), Time(s.timestamp_us), Int(s.bytes), Int(s.entries)});
  }
  return Status::OK();
}

Status Archive(Context* context, const Args&, std::vector<Row>* rows) {
  std::vector<Store::ArchivedCut> cuts;
  SPOOL_RETURN_IF_ERROR(context->store->ListArchivedCuts(&cuts));
  for (const Store::ArchivedCut& c : cuts) {
    rows->push_back({Text(c.dir), Int(c.new_epoch), Int(c.point), Int(c.first_version), Int(c.last_version),
                     Time(c.first_timestamp_us), Time(c.last_timestamp_us), Int(c.commits), Int(c.complete ? 1 : 0)});
  }
  return Status::OK();
}

// Bytes as text when they are UTF-8 (a JSON checkpoint), else a blob.
Value TextOrBlob(std::string bytes) { return IsUtf8(bytes) ? Text(std::move(bytes)) : Value(Bytes{std::move(bytes)}); }

Status Flows(Context* context, const Args& args, std::vector<Row>* rows) {
  PipelineSpec spec;
  Status s = GetPipelineDefinition(context->store, &spec);
  if (s.IsNotFound()) return Status::NotFound("flows(): the store has no pipeline (spool pipeline set defines one)");
  SPOOL_RETURN_IF_ERROR(s);
  std::optional<uint64_t> version;
  if (args.Has(0)) {
    if (sqlite3_value_type(args.values[0]) != SQLITE_INTEGER || sqlite3_value_int64(args.values[0]) < 0) {
      return Status::InvalidArgument("flows(): the version must be a whole number, not '" + args.TextOf(0) + "'");
    }
    version = static_cast<uint64_t>(sqlite3_value_int64(args.values[0]));
  }
  for (const FlowSpec& f : spec.flows) {
    std::string data;
    bool found = false;
    SPOOL_RETURN_IF_ERROR(version ? context->store->GetCheckpointAt(f.name, *version, &data, &found)
                                  : context->store->GetCheckpoint(f.name, &data, &found));
    rows->push_back({Text(f.name), Text(std::string(SourceKindName(f.source.kind))), Text(SourceLocation(f.source)),
                     Text(f.target), Int(f.steps.size()), Int(f.once ? 1 : 0),
                     found ? TextOrBlob(std::move(data)) : Value()});
  }
  return Status::OK();
}

struct MetaTable {
  const char* name;
  const char* columns;  // the visible ones
  size_t visible;
  // The arguments, hidden columns of these names (empty: none).
  const char* args;
  Status (*fill)(Context*, const Args&, std::vector<Row>*);

  size_t Args() const { return *args == '\0' ? 0 : 1; }
  // The columns as CREATE TABLE declares them.
  std::string Declaration() const {
    return std::string(columns) + (Args() == 0 ? "" : ", " + std::string(args) + " HIDDEN");
  }
};

constexpr MetaTable kTables[] = {
    {"history",
     "version INTEGER, timestamp TIMESTAMP, operation TEXT, operationParameters TEXT, operationMetrics TEXT, "
     "updateId TEXT",
     6, "table_name", History},
    {"event_log",
     "id TEXT, sequence INTEGER, timestamp TIMESTAMP, level TEXT, event_type TEXT, message TEXT, details TEXT, "
     "origin TEXT",
     8, "pipeline_id", EventLogRows},
    {"rewind_points",
     "rewind_point_id TEXT, timestamp TIMESTAMP, recorded_at TIMESTAMP, message TEXT, dry_run BOOLEAN, epoch INTEGER, "
     "version INTEGER, use TEXT, update_id TEXT, datasets TEXT",
     10, "", RewindPoints},
    {"snapshots", "file_name TEXT, epoch INTEGER, version INTEGER, timestamp TIMESTAMP, bytes INTEGER, entries INTEGER",
     6, "", Snapshots},
    {"archive",
     "dir TEXT, epoch INTEGER, point INTEGER, first_version INTEGER, last_version INTEGER, first_timestamp TIMESTAMP, "
     "last_timestamp TIMESTAMP, commits INTEGER, complete BOOLEAN",
     9, "", Archive},
    {"flows", "flow TEXT, source_kind TEXT, source TEXT, target TEXT, steps INTEGER, once BOOLEAN, checkpoint", 7,
     "as_of_version", Flows},
};

struct MetaVtab : sqlite3_vtab {
  Context* context = nullptr;
  const MetaTable* table = nullptr;
};

struct MetaCursor : sqlite3_vtab_cursor {
  Args args;
  std::vector<Row> rows;
  size_t row = 0;

  ~MetaCursor() { Reset(); }
  void Reset() {
    for (sqlite3_value*& value : args.values) {
      sqlite3_value_free(value);
      value = nullptr;
    }
    rows.clear();
    row = 0;
  }
};

struct ModuleAux {
  Context* context;
  const MetaTable* table;
};

int Connect(sqlite3* db, void* aux, int, const char* const*, sqlite3_vtab** out, char** error) {
  const auto* module = static_cast<ModuleAux*>(aux);
  const std::string declaration = "CREATE TABLE x(" + module->table->Declaration() + ")";
  if (sqlite3_declare_vtab(db, declaration.c_str()) != SQLITE_OK) {
    *error = sqlite3_mprintf("%s: %s", module->table->name, sqlite3_errmsg(db));
    return SQLITE_ERROR;
  }
  auto* vtab = new MetaVtab();
  vtab->context = module->context;
  vtab->table = module->table;
  *out = vtab;
  return SQLITE_OK;
}

int Disconnect(sqlite3_vtab* vtab) {
  delete static_cast<MetaVtab*>(vtab);
  return SQLITE_OK;
}

int BestIndex(sqlite3_vtab* base, sqlite3_index_info* info) {
  const auto* vtab = static_cast<MetaVtab*>(base);
  const int visible = static_cast<int>(vtab->table->visible);
  int next = 1, mask = 0;
  for (int c = 0; c < info->nConstraint; ++c) {
    const auto& constraint = info->aConstraint[c];
    if (constraint.iColumn < visible || constraint.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    if (!constraint.usable) return SQLITE_CONSTRAINT;
    info->aConstraintUsage[c].argvIndex = next++;
    info->aConstraintUsage[c].omit = 1;
    mask |= 1 << (constraint.iColumn - visible);  // idxNum: which arguments, in argv's order
  }
  info->idxNum = mask;
  info->estimatedCost = 1000;
  return SQLITE_OK;
}

int Filter(sqlite3_vtab_cursor* base, int mask, const char*, int argc, sqlite3_value** argv) {
  auto* cursor = static_cast<MetaCursor*>(base);
  auto* vtab = static_cast<MetaVtab*>(base->pVtab);
  cursor->Reset();
  int next = 0;
  for (size_t i = 0; i < std::size(cursor->args.values); ++i) {
    if ((mask & (1 << i)) != 0 && next < argc) cursor->args.values[i] = sqlite3_value_dup(argv[next++]);
  }
  Status s = vtab->table->fill(vtab->context, cursor->args, &cursor->rows);
  if (!s.ok()) return VtabError(vtab->context, base->pVtab, s);
  return SQLITE_OK;
}

int Next(sqlite3_vtab_cursor* base) {
  ++static_cast<MetaCursor*>(base)->row;
  return SQLITE_OK;
}

int Eof(sqlite3_vtab_cursor* base) {
  const auto* cursor = static_cast<MetaCursor*>(base);
  return cursor->row >= cursor->rows.size() ? 1 : 0;
}

int ColumnValue(sqlite3_vtab_cursor* base, sqlite3_context* result, int i) {
  const auto* cursor = static_cast<MetaCursor*>(base);
  const auto* vtab = static_cast<MetaVtab*>(base->pVtab);
  const auto column = static_cast<size_t>(i);
  if (column >= vtab->table->visible) {
    sqlite3_value* arg = cursor->args.values[column - vtab->table->visible];
    if (arg != nullptr) sqlite3_result_value(result, arg);
    return SQLITE_OK;
  }
  const Value& value = cursor->rows[cursor->row][column];
  if (const auto* n = std::get_if<int64_t>(&value)) {
    sqlite3_result_int64(result, *n);
  } else if (const auto* text = std::get_if<std::string>(&value)) {
    sqlite3_result_text(result, text->data(), static_cast<int>(text->size()), SQLITE_TRANSIENT);
  } else if (const auto* bytes = std::get_if<Bytes>(&value)) {
    sqlite3_result_blob(result, bytes->data.data(), static_cast<int>(bytes->data.size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(result);
  }
  return SQLITE_OK;
}

int Rowid(sqlite3_vtab_cursor* base, sqlite3_int64* rowid) {
  *rowid = static_cast<sqlite3_int64>(static_cast<MetaCursor*>(base)->row);
  return SQLITE_OK;
}

// Eponymous only (no xCreate): history(…) and the rest exist in every session.
const sqlite3_module kModule = ReadOnlyModule({nullptr, Connect, BestIndex, Disconnect, OpenCursor<MetaCursor>,
                                               CloseCursor<MetaCursor>, Filter, Next, Eof, ColumnValue, Rowid});

}  // namespace
}  // namespace meta_vtab

Status RegisterMetaModules(sqlite3* db, Context* context) {
  for (const meta_vtab::MetaTable& table : meta_vtab::kTables) {
    auto* aux = new meta_vtab::ModuleAux{context, &table};
    if (sqlite3_create_module_v2(db, table.name, &meta_vtab::kModule, aux,
                                 [](void* p) { delete static_cast<meta_vtab::ModuleAux*>(p); }) != SQLITE_OK) {
      return Status::Failed(std::string("SQLite refused the module ") + table.name + ": " + sqlite3_errmsg(db));
    }
  }
  return Status::OK();
}

std::vector<MetaTableColumns> MetaTables() {
  std::vector<MetaTableColumns> tables;
  for (const meta_vtab::MetaTable& table : meta_vtab::kTables) {
    tables.push_back({table.name, table.columns, table.args});
  }
  return tables;
}

}  // namespace spool::sql
