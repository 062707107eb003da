// `spool sql DIR [QUERY]`: SQL over a store (docs/sql.md), read-only, so
// that it runs beside `spool serve` or a continuous update. With a query,
// runs it; without one, runs the statements and dot commands read from
// standard input — a shell with a prompt, line editing and history when
// that is a terminal.
#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <editline/readline.h>

#include "cli_format.h"
#include "commands.h"
#include "row_format.h"
#include "spool/sql/sql.h"
#include "spool/storage/store.h"

namespace spool::cli {
namespace {

struct SqlArgs {
  std::string dir;
  std::string query;
  std::string format = "table";
  double timeout_s = 60;
};

// The session a Ctrl-C interrupts, while a statement runs.
std::atomic<sql::Session*> running{nullptr};

extern "C" void OnInterrupt(int) {
  if (sql::Session* session = running.load()) session->Interrupt();
}

bool ParseFormat(std::string_view name, OutputFormat* format) {
  if (name == "table") *format = OutputFormat::kTable;
  else if (name == "csv") *format = OutputFormat::kCsv;
  else if (name == "json") *format = OutputFormat::kJsonLines;
  else return false;
  return true;
}

// A session over the store, reopened (read-only) before each statement of a
// shell, so that each sees the writer's last durable commit then.
class SqlShell {
 public:
  SqlShell(std::string dir, OutputFormat format, uint64_t timeout_ms)
      : dir_(std::move(dir)), format_(format), timeout_ms_(timeout_ms) {}

  Status Open() {
    SPOOL_RETURN_IF_ERROR(OpenStore(dir_, &store_, StoreAccess::kRead));
    return sql::Session::Open(store_.get(), &session_);
  }

  // Opens the store again, for the commits since.
  Status Refresh() {
    store_.reset();  // first: a process holds one handle of a store
    SPOOL_RETURN_IF_ERROR(OpenStore(dir_, &store_, StoreAccess::kRead));
    return session_->Reset(store_.get());
  }

  // Runs `text`, printing each statement's rows as they come (a table's
  // once its statement ends).
  Status Run(const std::string& text) {
    std::unique_ptr<RowPrinter> printer;
    sql::ResultHandler results;
    results.on_columns = [&](const std::vector<sql::ResultColumn>& columns) {
      if (printer) printer->Finish();
      std::vector<std::string> names;
      names.reserve(columns.size());
      for (const sql::ResultColumn& c : columns) names.push_back(c.name);
      printer = std::make_unique<RowPrinter>(format_, std::move(names), &std::cout);
    };
    results.on_row = [&](const Row& row) {
      printer->Add(row);
      return true;
    };
    running = session_.get();
    auto previous = std::signal(SIGINT, OnInterrupt);
    Status s = session_->Execute(text, sql::QueryOptions{timeout_ms_}, results);
    std::signal(SIGINT, previous);
    running = nullptr;
    if (printer) printer->Finish();
    std::cout.flush();
    return s;
  }

  // A line starting with '.': the shell's own commands. Sets *quit.
  Status DotCommand(const std::string& line, bool* quit) {
    std::istringstream words(line);
    std::string command, argument;
    words >> command >> argument;
    if (command == ".quit" || command == ".exit") {
      *quit = true;
    } else if (command == ".tables") {
      SPOOL_RETURN_IF_ERROR(Refresh());
      for (const std::string& name : session_->TableNames()) std::cout << name << "\n";
    } else if (command == ".schema") {
      SPOOL_RETURN_IF_ERROR(Refresh());
      std::string text;
      SPOOL_RETURN_IF_ERROR(session_->Schema(argument, &text));
      std::cout << text;
    } else if (command == ".mode") {
      if (!ParseFormat(argument, &format_)) {
        return Status::InvalidArgument(".mode takes table, csv or json, not '" + argument + "'");
      }
    } else if (command == ".timeout") {
      char* end = nullptr;
      const double seconds = std::strtod(argument.c_str(), &end);
      if (argument.empty() || *end != '\0' || !(seconds >= 0 && seconds < 1e9)) {
        return Status::InvalidArgument(".timeout takes seconds (0: none), not '" + argument + "'");
      }
      timeout_ms_ = static_cast<uint64_t>(seconds * 1000);
    } else if (command == ".help") {
      std::cout << ".tables            the tables and table-valued functions\n"
                   ".schema [NAME]     their columns\n"
                   ".mode table|csv|json\n"
                   ".timeout SECONDS   stop statements that run longer (0: never)\n"
                   ".quit              leave (or Ctrl-D)\n"
                   "Statements end with ';'. Ctrl-C stops the one running.\n";
    } else {
      return Status::InvalidArgument("unknown command " + command + " (.help lists them)");
    }
    return Status::OK();
  }

  // Reads statements and dot commands from standard input until its end:
  // with a prompt and history on a terminal. Returns the exit code: that of
  // the last error when the input is not a terminal, else 0.
  int Loop() {
    const bool terminal = isatty(STDIN_FILENO) == 1;
    std::string history;
    if (terminal && std::getenv("HOME") != nullptr) {
      history = std::string(std::getenv("HOME")) + "/.spool_sql_history";
      read_history(history.c_str());
      std::cout << "spool sql: " << dir_ << " (read-only). .help for help; statements end with ';'.\n";
    }
    int exit_code = kExitOk;
    std::string pending;
    while (true) {
      std::string line;
      if (terminal) {
        char* read = readline(pending.empty() ? "spool> " : "  ...> ");
        if (read == nullptr) break;
        line = read;
        std::free(read);
        if (!line.empty()) add_history(line.c_str());
      } else if (!std::getline(std::cin, line)) {
        break;
      }
      Status s;
      if (pending.empty() && line.starts_with(".")) {
        bool quit = false;
        s = DotCommand(line, &quit);
        if (quit) break;
      } else {
        pending += line + "\n";
        if (sqlite3_complete(pending.c_str()) == 0) continue;
        s = Refresh();
        if (s.ok()) s = Run(pending);
        pending.clear();
      }
      if (!s.ok()) exit_code = ReportError(s);
    }
    if (!pending.empty() && pending.find_first_not_of(" \t\r\n") != std::string::npos) {
      Status s = Refresh();
      if (s.ok()) s = Run(pending);
      if (!s.ok()) exit_code = ReportError(s);
    }
    if (!history.empty()) write_history(history.c_str());
    return terminal ? kExitOk : exit_code;
  }

 private:
  std::string dir_;
  OutputFormat format_;
  uint64_t timeout_ms_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<sql::Session> session_;
};

int RunSql(const SqlArgs& args) {
  OutputFormat format = OutputFormat::kTable;
  if (!ParseFormat(args.format, &format)) {
    return ReportError(Status::InvalidArgument("--format takes table, csv or json, not '" + args.format + "'"));
  }
  if (!(args.timeout_s >= 0 && args.timeout_s < 1e9)) {
    return ReportError(Status::InvalidArgument("--timeout takes seconds (0: none)"));
  }
  SqlShell shell(args.dir, format, static_cast<uint64_t>(args.timeout_s * 1000));
  Status s = shell.Open();
  if (!s.ok()) return ReportError(s);
  if (args.query.empty() || args.query == "-") return shell.Loop();
  s = shell.Run(args.query);
  return s.ok() ? kExitOk : ReportError(s);
}

}  // namespace

void RegisterSqlCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<SqlArgs>();
  CLI::App* sql = app.add_subcommand(
      "sql", "Query the store in SQL: its tables, history, change feed, event log (docs/sql.md); read-only");
  sql->add_option("dir", args->dir, "Store directory")->required();
  sql->add_option("query", args->query,
                  "The statements to run; without them (or -), statements and dot commands are read from standard "
                  "input, in a shell on a terminal");
  sql->add_option("--format", args->format, "table (default), csv or json (JSON lines)");
  sql->add_option("--timeout", args->timeout_s, "Stop a statement after this many seconds (default 60; 0: never)");
  sql->callback([=] { *exit_code = RunSql(*args); });
}

}  // namespace spool::cli
