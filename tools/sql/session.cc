// A SQL session: an in-memory SQLite connection whose tables are the
// store's (table_vtabs.cc), with the table-valued functions of
// meta_vtabs.cc and the time functions of functions.cc; statements are
// translated from Spark SQL first (translate.cc), run with a deadline, and
// kept from writing anything but the session's own scratch tables.
#include <sqlite3.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "spool/sql/sql.h"
#include "spool/storage/store.h"
#include "sql_internal.h"

namespace spool::sql {

Status Context::StopStatus() const {
  if (interrupted.load()) return Status::Aborted("the statement was interrupted");
  const std::string seconds = std::to_string(timeout_ms / 1000) +
                              (timeout_ms % 1000 == 0 ? "" : "." + std::to_string(1000 + timeout_ms % 1000).substr(1));
  return Status::Aborted("the statement ran past its timeout of " + seconds + " s");
}

int VtabError(Context* context, sqlite3_vtab* vtab, const Status& s) {
  context->error = s;
  sqlite3_free(vtab->zErrMsg);
  vtab->zErrMsg = sqlite3_mprintf("%s", std::string(s.message()).c_str());
  return SQLITE_ERROR;
}

namespace {

// The pragmas a statement may run: those that only read.
bool ReadOnlyPragma(std::string_view name) {
  static constexpr std::string_view kAllowed[] = {"table_info",     "table_xinfo", "table_list",    "function_list",
                                                  "module_list",    "pragma_list", "database_list", "collation_list",
                                                  "index_list",     "index_info",  "index_xinfo",   "foreign_key_list",
                                                  "compile_options"};
  for (std::string_view allowed : kAllowed) {
    if (sqlite3_strnicmp(allowed.data(), name.data(), static_cast<int>(name.size())) == 0 &&
        allowed.size() == name.size()) {
      return true;
    }
  }
  return false;
}

class SessionImpl final : public Session {
 public:
  ~SessionImpl() override {
    if (db_ != nullptr) sqlite3_close_v2(db_);
  }

  Status Init(Store* store) {
    // SQLite's memory statistics take a global mutex on every allocation;
    // nothing here reads them. Only possible before SQLite's first use in
    // the process: in a process that used it already, the call is refused
    // and changes nothing.
    static std::once_flag no_memory_statistics;
    std::call_once(no_memory_statistics, [] { (void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); });
    if (sqlite3_open_v2(":memory:", &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr) !=
        SQLITE_OK) {
      return Status::Failed(std::string("SQLite could not open a connection: ") + sqlite3_errmsg(db_));
    }
    // No file of the machine is reachable from a statement.
    sqlite3_db_config(db_, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
    sqlite3_db_config(db_, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_limit(db_, SQLITE_LIMIT_ATTACHED, 0);
    SPOOL_RETURN_IF_ERROR(RegisterTableModules(db_, &context_));
    SPOOL_RETURN_IF_ERROR(RegisterMetaModules(db_, &context_));
    SPOOL_RETURN_IF_ERROR(RegisterFunctions(db_, &context_));
    sqlite3_set_authorizer(db_, Authorize, this);
    sqlite3_progress_handler(
        db_, 1000, [](void* context) { return static_cast<Context*>(context)->Stopped() ? 1 : 0; }, &context_);
    return Reset(store);
  }

  Status Execute(std::string_view text, const QueryOptions& options, const ResultHandler& results) override {
    std::string translated;
    std::vector<std::string> declare;
    SPOOL_RETURN_IF_ERROR(TranslateSpark(text, table_names_, &translated, &declare));
    for (const std::string& name : declare) SPOOL_RETURN_IF_ERROR(DeclareOnDemand(name));
    context_.interrupted = false;
    context_.timeout_ms = options.timeout_ms;
    context_.deadline = options.timeout_ms == 0
                            ? std::chrono::steady_clock::time_point::max()
                            : std::chrono::steady_clock::now() + std::chrono::milliseconds(options.timeout_ms);
    context_.now_us = static_cast<int64_t>(context_.store->options().env->NowMicros());
    const char* rest = translated.c_str();
    for (int number = 1; *rest != '\0'; ++number) {
      sqlite3_stmt* statement = nullptr;
      context_.error = Status::OK();
      denied_.clear();
      const char* tail = nullptr;
      int rc = sqlite3_prepare_v2(db_, rest, -1, &statement, &tail);
      if (rc != SQLITE_OK) return SqlError(rc, number);
      rest = tail;
      if (statement == nullptr) continue;  // only a comment or spaces
      bool stop = false;
      rc = Run(statement, results, &stop);
      sqlite3_finalize(statement);
      if (rc != SQLITE_DONE && rc != SQLITE_ROW) return SqlError(rc, number);
      if (stop) break;
      if (context_.Stopped()) return context_.StopStatus();
    }
    return Status::OK();
  }

  void Interrupt() override {
    context_.interrupted = true;
    sqlite3_interrupt(db_);
  }

  Status Reset(Store* store) override {
    context_.store = store;
    declaring_ = true;
    Status s = Redeclare();
    declaring_ = false;
    return s;
  }

  std::vector<std::string> TableNames() override {
    std::vector<std::string> names = table_names_;
    // Scratch tables and views the session made.
    sqlite3_stmt* statement = nullptr;
    if (sqlite3_prepare_v2(db_,
                           "SELECT name FROM sqlite_temp_schema WHERE type IN ('table', 'view') AND name NOT LIKE "
                           "'table_changes:%' AND name NOT LIKE 'table_at:%' UNION ALL SELECT name FROM sqlite_schema "
                           "WHERE type IN ('table', 'view') "
                           "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY 1",
                           -1, &statement, nullptr) == SQLITE_OK) {
      while (sqlite3_step(statement) == SQLITE_ROW) {
        names.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(statement, 0)));
      }
    }
    sqlite3_finalize(statement);
    for (const MetaTableColumns& meta : MetaTables()) names.push_back(meta.name + "()");
    return names;
  }

  Status Schema(std::string_view name, std::string* text) override {
    text->clear();
    for (const TableInfo& table : tables_) {
      if (!name.empty() && table.id.ToString() != name) continue;
      *text += "CREATE TABLE \"" + table.id.ToString() + "\" (";
      const auto& columns = table.schema.columns();
      for (size_t i = 0; i < columns.size(); ++i) {
        *text += (i == 0 ? "" : ", ") + columns[i].name + " " + std::string(ColumnTypeName(columns[i].type)) +
                 (columns[i].nullable ? "" : " NOT NULL");
      }
      if (table.schema.has_key()) {
        *text += ", PRIMARY KEY (";
        for (size_t k = 0; k < table.schema.key_columns().size(); ++k) {
          *text += (k == 0 ? "" : ", ") + columns[table.schema.key_columns()[k]].name;
        }
        *text += ")";
      }
      *text += ");\n";
    }
    for (const MetaTableColumns& meta : MetaTables()) {
      if (name.empty() || meta.name == name || meta.name + "()" == name) {
        *text += "CREATE TABLE " + meta.name + " (" + meta.columns + ");  -- " + meta.name + "(" + meta.args + ")\n";
      }
    }
    if (text->empty()) return Status::NotFound("no table " + std::string(name) + " (.tables lists them)");
    return Status::OK();
  }

 private:
  // One statement's rows to `results`.
  int Run(sqlite3_stmt* statement, const ResultHandler& results, bool* stop) {
    const int columns = sqlite3_column_count(statement);
    if (columns > 0 && results.on_columns) {
      std::vector<ResultColumn> header;
      for (int i = 0; i < columns; ++i) {
        const char* type = sqlite3_column_decltype(statement, i);
        header.push_back({sqlite3_column_name(statement, i), type == nullptr ? "" : type});
      }
      results.on_columns(header);
    }
    Row row(static_cast<size_t>(columns));
    int rc = SQLITE_OK;
    while ((rc = sqlite3_step(statement)) == SQLITE_ROW) {
      for (int i = 0; i < columns; ++i) {
        Value& value = row[static_cast<size_t>(i)];
        switch (sqlite3_column_type(statement, i)) {
          case SQLITE_INTEGER:
            value = static_cast<int64_t>(sqlite3_column_int64(statement, i));
            break;
          case SQLITE_FLOAT:
            value = sqlite3_column_double(statement, i);
            break;
          case SQLITE_TEXT: {
            // Into the string the row held before, when it held one: its
            // buffer is reused.
            const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(statement, i));
            const auto bytes = static_cast<size_t>(sqlite3_column_bytes(statement, i));
            if (auto* held = std::get_if<std::string>(&value)) held->assign(text, bytes);
            else value = std::string(text, bytes);
            break;
          }
          case SQLITE_BLOB: {
            const auto* data = static_cast<const char*>(sqlite3_column_blob(statement, i));
            value = Bytes{
                std::string(data == nullptr ? "" : data, static_cast<size_t>(sqlite3_column_bytes(statement, i)))};
            break;
          }
          default:
            value = std::monostate{};
        }
      }
      if (results.on_row && !results.on_row(row)) {
        *stop = true;
        break;
      }
    }
    return rc;
  }

  Status SqlError(int rc, int number) {
    const std::string where = "SQL statement " + std::to_string(number) + ": ";
    if (!context_.error.ok()) {
      Status s = context_.error;
      context_.error = Status::OK();
      return s.WithContext(where.substr(0, where.size() - 2));
    }
    if ((rc & 0xff) == SQLITE_INTERRUPT) return context_.StopStatus();
    std::string message = sqlite3_errmsg(db_);
    if ((rc & 0xff) == SQLITE_AUTH && !denied_.empty()) message = denied_;
    if (message.find("may not be modified") != std::string::npos) {
      message += " (SQL reads a store; its tables change only through commits: spool write, a pipeline update)";
    }
    if ((rc & 0xff) == SQLITE_NOMEM) return Status::Failed(where + "out of memory");
    return Status::InvalidArgument(where + message);
  }

  static int Authorize(void* self, int action, const char* arg1, const char* arg2, const char*, const char*) {
    auto* session = static_cast<SessionImpl*>(self);
    if (session->declaring_) return SQLITE_OK;
    const auto deny = [&](std::string why) {
      session->denied_ = std::move(why);
      return SQLITE_DENY;
    };
    switch (action) {
      case SQLITE_ATTACH:
      case SQLITE_DETACH:
        return deny("ATTACH and DETACH are not allowed: a SQL session reads its store and nothing else");
      case SQLITE_CREATE_VTABLE:
      case SQLITE_DROP_VTABLE:
        return deny("the store's tables are declared by the session, not by statements");
      case SQLITE_ALTER_TABLE:
        if (arg2 != nullptr && session->declared_.count(arg2) != 0) return deny("the store's tables cannot be altered");
        return SQLITE_OK;
      case SQLITE_PRAGMA:
        if (arg1 != nullptr && ReadOnlyPragma(arg1)) return SQLITE_OK;
        return deny(std::string("PRAGMA ") + (arg1 == nullptr ? "" : arg1) +
                    " is not allowed (those that only read are)");
      case SQLITE_FUNCTION:
        if (arg2 != nullptr && sqlite3_stricmp(arg2, "load_extension") == 0)
          return deny("load_extension is not allowed");
        return SQLITE_OK;
      default:
        return SQLITE_OK;
    }
  }

  // Drops what the last store declared and declares the new store's tables.
  Status Redeclare() {
    for (const std::string& name : declared_) {
      SPOOL_RETURN_IF_ERROR(Exec("DROP TABLE IF EXISTS " + QuoteSql(name, '"')));
    }
    declared_.clear();
    tables_ = context_.store->ListTables();
    table_names_.clear();
    for (const TableInfo& table : tables_) {
      const std::string name = table.id.ToString();
      SPOOL_RETURN_IF_ERROR(Exec("CREATE VIRTUAL TABLE " + QuoteSql(name, '"') + " USING spool_table"));
      declared_.insert(name);
      table_names_.push_back(name);
    }
    return Status::OK();
  }

  // A virtual table a statement names (a change feed, a table dropped
  // since as of a version: sql_internal.h), in the temp schema.
  Status DeclareOnDemand(const std::string& name) {
    if (declared_.count(name) != 0) return Status::OK();
    declaring_ = true;
    context_.error = Status::OK();
    Status s = Exec("CREATE VIRTUAL TABLE temp." + QuoteSql(name, '"') + " USING spool_table");
    declaring_ = false;
    if (s.ok()) declared_.insert(name);
    // The store's own error (NotFound: no such table then), when it gave one.
    return s.ok() || context_.error.ok() ? s : context_.error;
  }

  Status Exec(const std::string& statement) {
    char* error = nullptr;
    if (sqlite3_exec(db_, statement.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
      Status s = Status::Failed(statement + ": " + (error == nullptr ? "" : error));
      sqlite3_free(error);
      return s;
    }
    return Status::OK();
  }

  sqlite3* db_ = nullptr;
  Context context_;
  bool declaring_ = false;
  std::string denied_;  // why the authorizer refused the statement
  std::vector<TableInfo> tables_;
  std::vector<std::string> table_names_;
  std::set<std::string, std::less<>> declared_;  // virtual tables made for the store
};

}  // namespace

Status Session::Open(Store* store, std::unique_ptr<Session>* session) {
  auto impl = std::make_unique<SessionImpl>();
  SPOOL_RETURN_IF_ERROR(impl->Init(store));
  *session = std::move(impl);
  return Status::OK();
}

Status Query(Store* store, std::string_view text, const QueryOptions& options, const ResultHandler& results) {
  std::unique_ptr<Session> session;
  SPOOL_RETURN_IF_ERROR(Session::Open(store, &session));
  return session->Execute(text, options, results);
}

}  // namespace spool::sql
