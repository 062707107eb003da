// `spool table create | alter | drop | list DIR …` and `spool write DIR TABLE`.
//
// Each command that changes something is one commit: CREATE TABLE,
// ADD COLUMNS / SET TBLPROPERTIES / UNSET TBLPROPERTIES (ALTER TABLE when
// mixed), DROP TABLE, WRITE, DELETE. Everything a user gives is checked
// before the commit, so a mistake changes nothing.
#include <fstream>
#include <iostream>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_format.h"
#include "commands.h"
#include "json_text.h"
#include "spool/storage/store.h"
#include "spool/stream/records.h"

namespace spool::cli {
namespace {

using ordered_json = nlohmann::ordered_json;

// "NAME:TYPE[:not_null]". Errors: InvalidArgument.
Status ParseColumnSpec(std::string_view spec, Column* column) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return Status::InvalidArgument("column '" + std::string(spec) + "' must be NAME:TYPE[:not_null]");
  }
  std::string_view type = spec.substr(colon + 1);
  column->nullable = true;
  if (const size_t flag = type.find(':'); flag != std::string_view::npos) {
    if (type.substr(flag + 1) != "not_null") {
      return Status::InvalidArgument("column '" + std::string(spec) + "': the only flag after the type is not_null");
    }
    column->nullable = false;
    type = type.substr(0, flag);
  }
  column->name = std::string(spec.substr(0, colon));
  return ParseColumnType(type, &column->type).WithContext("column '" + column->name + "'");
}

// "K=V" with a non-empty key and value. Errors: InvalidArgument.
Status ParseProperty(std::string_view text, std::pair<std::string, std::string>* property) {
  const size_t eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument("property '" + std::string(text) +
                                   "' must be KEY=VALUE with both non-empty (--unset-property KEY removes one)");
  }
  *property = {std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
  return Status::OK();
}

Status ParseProperties(const std::vector<std::string>& texts, std::map<std::string, std::string>* properties) {
  for (const std::string& text : texts) {
    std::pair<std::string, std::string> property;
    SPOOL_RETURN_IF_ERROR(ParseProperty(text, &property));
    (*properties)[property.first] = property.second;
  }
  return Status::OK();
}

ordered_json ColumnJson(const Column& c) {
  return ordered_json{{"name", c.name}, {"type", ColumnTypeName(c.type)}, {"nullable", c.nullable}};
}

std::vector<std::string> KeyNames(const Schema& schema) {
  std::vector<std::string> names;
  for (size_t index : schema.key_columns()) names.push_back(schema.columns()[index].name);
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& name : names) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// Commits `txn` and prints `what` with the version it got.
int CommitAndReport(Store* store, const Transaction& txn, std::string_view what) {
  CommitResult result;
  Status s = store->Commit(txn, &result);
  if (!s.ok()) return ReportError(WithHint(s, "nothing was changed"));
  std::cout << fmt::format("{} at version {}\n", what, result.version);
  return kExitOk;
}

// ---------------------------------------------------------------------------
// table create

struct CreateArgs {
  std::string dir;
  std::string table;
  std::vector<std::string> columns;
  std::vector<std::string> key;
  std::string kind = "streaming_table";
  std::vector<std::string> properties;
};

// The table a create command describes. Key columns are NOT NULL whether
// or not the spec says so. Errors: InvalidArgument.
Status BuildCreate(const CreateArgs& args, TableId* id, TableKind* kind, Schema* schema,
                   std::map<std::string, std::string>* properties) {
  SPOOL_RETURN_IF_ERROR(TableId::Parse(args.table, id));
  SPOOL_RETURN_IF_ERROR(ParseTableKind(args.kind, kind));
  if (args.columns.empty()) return Status::InvalidArgument("a table needs at least one --column NAME:TYPE");
  std::vector<Column> columns;
  for (const std::string& spec : args.columns) {
    Column column;
    SPOOL_RETURN_IF_ERROR(ParseColumnSpec(spec, &column));
    if (std::find(args.key.begin(), args.key.end(), column.name) != args.key.end()) column.nullable = false;
    columns.push_back(std::move(column));
  }
  SPOOL_RETURN_IF_ERROR(Schema::Make(std::move(columns), args.key, schema));
  return ParseProperties(args.properties, properties);
}

int RunCreate(const CreateArgs& args) {
  TableId id;
  TableKind kind;
  Schema schema;
  std::map<std::string, std::string> properties;
  Status s = BuildCreate(args, &id, &kind, &schema, &properties);
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(args.dir, &store);
  if (!s.ok()) return ReportError(s);
  ordered_json parameters{{"kind", TableKindName(kind)}, {"primaryKey", KeyNames(schema)}, {"properties", properties}};
  Transaction txn("CREATE TABLE", JsonText(parameters));
  txn.CreateTable(id, kind, schema, properties);
  return CommitAndReport(store.get(), txn, "created " + id.ToString());
}

// ---------------------------------------------------------------------------
// table alter

struct AlterArgs {
  std::string dir;
  std::string table;
  std::vector<std::string> add_columns;
  std::vector<std::string> set_properties;
  std::vector<std::string> unset_properties;
};

// Fills `txn` with the changes, named as Delta's history names them.
Status BuildAlter(const AlterArgs& args, const TableInfo& table, Transaction* txn) {
  ordered_json parameters = ordered_json::object();
  std::vector<std::string> operations;
  if (!args.add_columns.empty()) {
    operations.push_back("ADD COLUMNS");
    parameters["columns"] = ordered_json::array();
    for (const std::string& spec : args.add_columns) {
      Column column;
      SPOOL_RETURN_IF_ERROR(ParseColumnSpec(spec, &column));
      parameters["columns"].push_back(ColumnJson(column));
      txn->AddColumn(table.id, std::move(column));
    }
  }
  std::map<std::string, std::string> changes;
  if (!args.set_properties.empty()) {
    operations.push_back("SET TBLPROPERTIES");
    SPOOL_RETURN_IF_ERROR(ParseProperties(args.set_properties, &changes));
    parameters["properties"] = changes;
  }
  if (!args.unset_properties.empty()) {
    operations.push_back("UNSET TBLPROPERTIES");
    for (const std::string& key : args.unset_properties) {
      if (changes.count(key) != 0) return Status::InvalidArgument("property '" + key + "' is both set and unset");
      if (table.properties.count(key) == 0) {
        return Status::InvalidArgument("table " + table.id.ToString() + " has no property '" + key + "'");
      }
      changes[key] = "";  // an empty value removes it
    }
    parameters["removedProperties"] = args.unset_properties;
  }
  if (operations.empty()) {
    return Status::InvalidArgument("nothing to alter: give --add-column, --set-property or --unset-property");
  }
  if (!changes.empty()) txn->SetProperties(table.id, std::move(changes));
  txn->SetOperation(operations.size() == 1 ? operations[0] : "ALTER TABLE", JsonText(parameters));
  return Status::OK();
}

int RunAlter(const AlterArgs& args) {
  TableId id;
  Status s = TableId::Parse(args.table, &id);
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(args.dir, &store);
  TableInfo table;
  if (s.ok()) s = store->GetTable(id, &table);
  Transaction txn;
  if (s.ok()) s = BuildAlter(args, table, &txn);
  if (!s.ok()) return ReportError(s);
  return CommitAndReport(store.get(), txn, "altered " + id.ToString() + " (" + txn.operation() + ")");
}

// ---------------------------------------------------------------------------
// table drop, table list

int RunDrop(const std::string& dir, const std::string& name) {
  TableId id;
  Status s = TableId::Parse(name, &id);
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(dir, &store);
  TableInfo table;
  if (s.ok()) s = store->GetTable(id, &table);
  if (!s.ok()) return ReportError(s);
  Transaction txn("DROP TABLE");
  txn.DropTable(id);
  return CommitAndReport(store.get(), txn, "dropped " + id.ToString());
}

ordered_json TableJson(const TableInfo& t) {
  ordered_json columns = ordered_json::array();
  for (const Column& c : t.schema.columns()) columns.push_back(ColumnJson(c));
  return ordered_json{{"name", t.id.ToString()},    {"kind", TableKindName(t.kind)},
                      {"columns", columns},         {"key", KeyNames(t.schema)},
                      {"properties", t.properties}, {"created_version", t.created_version()}};
}

int RunList(const std::string& dir, bool as_json) {
  std::unique_ptr<Store> store;
  Status s = OpenStore(dir, &store, StoreAccess::kRead);
  if (!s.ok()) return ReportError(s);
  const std::vector<TableInfo> tables = store->ListTables();
  if (as_json) {
    ordered_json out = ordered_json::array();
    for (const TableInfo& t : tables) out.push_back(TableJson(t));
    std::cout << JsonText(out, 2) << "\n";
    return kExitOk;
  }
  Table table({"table", "kind", "columns", "key", "properties", "created"});
  for (const TableInfo& t : tables) {
    std::string columns, properties;
    for (const Column& c : t.schema.columns()) {
      columns += fmt::format("{}{} {}{}", columns.empty() ? "" : ", ", c.name, ColumnTypeName(c.type),
                             c.nullable ? "" : " not null");
    }
    for (const auto& [k, v] : t.properties) properties += fmt::format("{}{}={}", properties.empty() ? "" : ", ", k, v);
    table.AddRow({t.id.ToString(), std::string(TableKindName(t.kind)), columns, JoinNames(KeyNames(t.schema)),
                  properties, std::to_string(t.created_version())});
  }
  std::cout << table.ToString();
  return kExitOk;
}

// ---------------------------------------------------------------------------
// write

struct WriteArgs {
  std::string dir;
  std::string table;
  std::string file;    // empty or "-": stdin
  std::string format;  // empty: from the file name (.csv), else jsonl
  bool delete_keys = false;
};

int CommitRows(Store* store, const TableId& id, std::vector<Row> rows, std::string parameters) {
  const size_t count = rows.size();
  Transaction txn("WRITE", std::move(parameters));
  for (Row& row : rows) txn.Write(id, std::move(row));
  return CommitAndReport(store, txn, fmt::format("wrote {} row(s) to {}", count, id.ToString()));
}

// Deleting an absent key is no change: count the keys that match a row (the
// store is ours alone while open), and commit nothing when none does.
int CommitDeletes(Store* store, const TableId& id, const std::vector<Row>& keys, std::string parameters) {
  const size_t given = keys.size();
  std::set<Row> present;
  for (const Row& key : keys) {
    Row row;
    bool found = false;
    Status s = store->Get(id, key, &row, &found);
    if (!s.ok()) return ReportError(WithHint(s, "nothing was written"));
    if (found) present.insert(key);
  }
  if (present.empty()) {
    std::cout << fmt::format("none of the {} key(s) matches a row of {}: nothing was written\n", given, id.ToString());
    return kExitOk;
  }
  Transaction txn("DELETE", std::move(parameters));
  for (const Row& key : present) txn.Delete(id, key);
  return CommitAndReport(
      store, txn, fmt::format("deleted {} row(s) ({} key(s) given) from {}", present.size(), given, id.ToString()));
}

int RunWrite(const WriteArgs& args) {
  const bool from_stdin = args.file.empty() || args.file == "-";
  const std::string format =
      !args.format.empty() ? args.format : (!from_stdin && args.file.ends_with(".csv") ? "csv" : "jsonl");
  TableId id;
  Status s = TableId::Parse(args.table, &id);
  std::unique_ptr<Store> store;
  if (s.ok()) s = OpenStore(args.dir, &store);
  TableInfo table;
  if (s.ok()) s = store->GetTable(id, &table);
  if (s.ok() && args.delete_keys && !table.schema.has_key()) {
    s = Status::InvalidArgument("table " + id.ToString() + " has no primary key: --delete needs a keyed table");
  }
  std::ifstream file;
  if (s.ok() && !from_stdin) {
    file.open(args.file, std::ios::binary);
    if (!file) s = Status::NotFound("cannot open " + args.file);
  }
  std::vector<Row> rows;
  const std::string source = from_stdin ? "stdin" : args.file;
  if (s.ok()) {
    RecordOptions options;
    options.format = format == "csv" ? RecordFormat::kCsv : RecordFormat::kJsonLines;
    options.keys_only = args.delete_keys;
    options.source_name = source;
    s = ReadRecords(from_stdin ? std::cin : file, table.schema, options, [&rows](Row&& row, uint64_t) {
      rows.push_back(std::move(row));
      return Status::OK();
    });
  }
  if (!s.ok()) return ReportError(WithHint(s, "nothing was written"));
  if (rows.empty()) {
    std::cout << fmt::format("no records in {}: nothing was written\n", source);
    return kExitOk;
  }
  ordered_json parameters{{"mode", args.delete_keys ? "Delete" : (table.schema.has_key() ? "Upsert" : "Append")},
                          {"format", format},
                          {"source", source}};
  return args.delete_keys ? CommitDeletes(store.get(), id, rows, JsonText(parameters))
                          : CommitRows(store.get(), id, std::move(rows), JsonText(parameters));
}

void RegisterTableSubcommands(CLI::App& app, int* exit_code) {
  CLI::App* group = app.add_subcommand("table", "Tables of a store: create, alter, drop, list");
  group->require_subcommand(1);

  auto create_args = std::make_shared<CreateArgs>();
  CLI::App* create = group->add_subcommand("create", "Create a table (one CREATE TABLE commit)");
  create->add_option("dir", create_args->dir, "Store directory")->required();
  create->add_option("table", create_args->table, "Table: catalog.schema.table")->required();
  create
      ->add_option("--column", create_args->columns,
                   "NAME:TYPE[:not_null], TYPE one of int64 double string bool timestamp bytes")
      ->required();
  create->add_option("--key", create_args->key, "Primary key column(s), in key order (NOT NULL); none: append-only");
  create->add_option("--kind", create_args->kind, "streaming_table (default), materialized_view or internal_state");
  create->add_option("--property", create_args->properties, "KEY=VALUE table property");
  create->callback([=] { *exit_code = RunCreate(*create_args); });

  auto alter_args = std::make_shared<AlterArgs>();
  CLI::App* alter = group->add_subcommand("alter", "Add columns, set or unset properties (one commit)");
  alter->add_option("dir", alter_args->dir, "Store directory")->required();
  alter->add_option("table", alter_args->table, "Table: catalog.schema.table")->required();
  alter->add_option("--add-column", alter_args->add_columns, "NAME:TYPE: a nullable column added at the end");
  alter->add_option("--set-property", alter_args->set_properties, "KEY=VALUE");
  alter->add_option("--unset-property", alter_args->unset_properties, "KEY");
  alter->callback([=] { *exit_code = RunAlter(*alter_args); });

  auto dir = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  CLI::App* drop = group->add_subcommand("drop", "Drop a table (its rows leave as deletes in the change feed)");
  drop->add_option("dir", *dir, "Store directory")->required();
  drop->add_option("table", *name, "Table: catalog.schema.table")->required();
  drop->callback([=] { *exit_code = RunDrop(*dir, *name); });

  auto as_json = std::make_shared<bool>(false);
  CLI::App* list = group->add_subcommand("list", "Tables: kind, columns, key, properties, created version");
  list->add_option("dir", *dir, "Store directory")->required();
  list->add_flag("--json", *as_json, "JSON output");
  list->callback([=] { *exit_code = RunList(*dir, *as_json); });
}

}  // namespace

Status WithHint(const Status& s, std::string_view hint) {
  const std::string message = std::string(s.message()) + "; " + std::string(hint);
  switch (s.code()) {
    case Status::Code::kOk:
      return s;
    case Status::Code::kNotFound:
      return Status::NotFound(message);
    case Status::Code::kCorruption:
      return Status::Corruption(message);
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(message);
    case Status::Code::kIOError:
      return Status::IOError(message);
    case Status::Code::kNoSpace:
      return Status::NoSpace(message);
    case Status::Code::kFailed:
      return Status::Failed(message);
    case Status::Code::kBusy:
      return Status::Busy(message);
    case Status::Code::kAborted:
      return Status::Aborted(message);
    case Status::Code::kNotSupported:
      return Status::NotSupported(message);
    case Status::Code::kOutOfRange:
      return Status::OutOfRange(message);
  }
  return s;
}

Status OpenStore(const std::string& dir, std::unique_ptr<Store>* store, StoreAccess access) {
  StoreOptions options;
  options.create_if_missing = false;
  options.read_only = access == StoreAccess::kRead;
  Status s = Store::Open(options, dir, store);
  if (options.read_only && (s.IsAborted() || s.IsNotFound())) {
    // What only a writer can do — finish a rewind a crash interrupted,
    // rebuild a lost state — is done by opening to write, when no writer
    // is there already.
    options.read_only = false;
    Status written = Store::Open(options, dir, store);
    if (!written.IsBusy()) s = written;
  }
  if (s.IsNotFound()) return WithHint(s, "create one with `spool init " + dir + "`");
  if (s.IsBusy()) return WithHint(s, "another spool command or program is using it: try again when it is done");
  return s;
}

void RegisterTableCommands(CLI::App& app, int* exit_code) {
  RegisterTableSubcommands(app, exit_code);

  auto args = std::make_shared<WriteArgs>();
  CLI::App* write = app.add_subcommand("write", "Write rows (JSON lines or CSV) to a table as one commit");
  write->add_option("dir", args->dir, "Store directory")->required();
  write->add_option("table", args->table, "Table: catalog.schema.table")->required();
  write->add_option("--file", args->file, "Input file (none or -: stdin)");
  write->add_option("--format", args->format, "jsonl or csv (default: csv for a .csv file, else jsonl)")
      ->check(CLI::IsMember({"jsonl", "csv"}));
  write->add_flag("--delete", args->delete_keys, "Each record is a key to delete (keyed tables)");
  write->footer(
      "JSON lines: one object per line, keys = column names, an absent nullable column is null.\n"
      "CSV: a header line of column names; an empty unquoted field is null, \"\" an empty string.\n"
      "timestamp: 'yyyy-MM-dd HH:mm:ss[.ffffff]' (UTC) or integer microseconds; bytes: base64;\n"
      "double: a number, NaN, Infinity or -Infinity. Any bad record: nothing is written (exit 2).");
  write->callback([=] { *exit_code = RunWrite(*args); });
}

}  // namespace spool::cli
