#include "sql_workload.h"

#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <optional>
#include <random>
#include <streambuf>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "check.h"
#include "child_process.h"
#include "commit_workloads.h"
#include "files.h"
#include "row_format.h"
#include "spool/sql/sql.h"
#include "spool/storage/store.h"
#include "sqlite_db.h"
#include "stopwatch.h"

namespace spool::bench {
namespace {

const TableId kTable{"main", "bench", "t"};
constexpr char kTableName[] = "main.bench.t";

struct Shape {
  uint64_t rows, load_rows, update_rows, points, writer_commits;
};

Shape ShapeOf(const BenchConfig& config) {
  Shape s{};
  s.rows = std::max<uint64_t>(1000, static_cast<uint64_t>(static_cast<double>(kSqlRows) * config.scale));
  s.load_rows = std::min(kSqlLoadRows, s.rows);
  s.update_rows = std::max<uint64_t>(1, s.rows / 100);
  s.points = kSqlPoints;
  s.writer_commits = kSqlWriterCommits;  // not scaled: the rate of a short run is noise
  return s;
}

Row MakeRow(uint64_t id, uint64_t generation) {
  return Row{static_cast<int64_t>(id), fmt::format("name-{:010}-{}", id, generation % 10),
             static_cast<int64_t>(id * 7 + generation),
             0.25 * static_cast<double>(id) + static_cast<double>(generation)};
}

StoreOptions Options(const BenchConfig& config, bool read_only = false) {
  StoreOptions options;
  options.state_map_bytes = config.state_map_gib << 30;
  options.read_only = read_only;
  return options;
}

// The table, loaded and updated (sql_workload.h). Returns the version after
// the load.
uint64_t Build(Store* store, const Shape& shape) {
  Schema schema;
  Expect(Schema::Make({{"id", ColumnType::kInt64, false},
                       {"name", ColumnType::kString, false},
                       {"qty", ColumnType::kInt64, false},
                       {"price", ColumnType::kDouble, false}},
                      {"id"}, &schema),
         "sql: schema");
  Transaction create("CREATE TABLE");
  create.CreateTable(kTable, TableKind::kStreamingTable, schema);
  Expect(store->Commit(create), "sql: create");
  for (uint64_t first = 0; first < shape.rows; first += shape.load_rows) {
    Transaction load;
    const Transaction::TableRef ref = load.Table(kTable);
    for (uint64_t id = first; id < std::min(shape.rows, first + shape.load_rows); ++id) load.Write(ref, MakeRow(id, 0));
    Expect(store->Commit(load), "sql: load");
  }
  const uint64_t after_load = store->log()->Newest().version;
  // Each update: the next 1% of a fixed permutation, so its keys are distinct.
  std::vector<uint64_t> order(shape.rows);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(42));
  for (uint64_t u = 0; u < kSqlUpdates; ++u) {
    Transaction update;
    const Transaction::TableRef ref = update.Table(kTable);
    for (uint64_t i = 0; i < shape.update_rows; ++i) {
      update.Write(ref, MakeRow(order[(u * shape.update_rows + i) % shape.rows], u + 1));
    }
    Expect(store->Commit(update), "sql: update");
  }
  return after_load;
}

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

const std::vector<std::string> kColumns = {"id", "name", "qty", "price"};

// Rows per second of the table read whole as CSV: by Store::Read, or by
// SQL's SELECT *.
double CsvRowsPerS(Store* store, bool sql, uint64_t rows) {
  NullBuffer buffer;
  std::ostream null(&buffer);
  cli::RowPrinter printer(cli::OutputFormat::kCsv, kColumns, &null);
  Stopwatch watch;
  if (sql) {
    sql::ResultHandler results;
    results.on_row = [&](const Row& row) {
      printer.Add(row);
      return true;
    };
    Expect(sql::Query(store, std::string("SELECT * FROM ") + kTableName, {}, results), "sql: SELECT *");
  } else {
    Expect(store->Read(kTable, {},
                       [&](const Row& row) {
                         printer.Add(row);
                         return true;
                       }),
           "sql: Store::Read");
  }
  printer.Finish();
  const double seconds = watch.Seconds();
  if (printer.rows() != rows) throw BenchError(fmt::format("sql: a scan read {} rows of {}", printer.rows(), rows));
  return static_cast<double>(rows) / seconds;
}

constexpr char kAggregate[] = "SELECT count(*), sum(qty), sum(length(name)), sum(price) FROM ";

// Runs `query`, whose first column is a count: the count, and in
// `*seconds` how long it took.
uint64_t TimedCount(Store* store, const std::string& query, double* seconds) {
  int64_t count = -1;
  sql::ResultHandler results;
  results.on_row = [&](const Row& row) {
    count = std::get<int64_t>(row[0]);
    return true;
  };
  Stopwatch watch;
  Expect(sql::Query(store, query, {}, results), "sql: " + query);
  *seconds = watch.Seconds();
  return static_cast<uint64_t>(count);
}

double SqlAggregateRowsPerS(Store* store, uint64_t rows) {
  double seconds = 0;
  const uint64_t count = TimedCount(store, std::string(kAggregate) + kTableName, &seconds);
  if (count != rows) throw BenchError("sql: the aggregate counted " + std::to_string(count));
  return static_cast<double>(rows) / seconds;
}

// The same rows in a plain SQLite table (a rowid table keyed by id), the
// aggregate over it once untimed, then timed.
double PlainSqliteRowsPerS(Store* store, const std::string& path, uint64_t rows) {
  sqlite3* db = nullptr;
  Expect(sqlite::Open(path,
                      "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"
                      "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, qty INTEGER, price REAL);",
                      &db),
         "sqlite: open");
  sqlite3_stmt* insert = nullptr;
  Expect(sqlite::Exec(db, "BEGIN"), "sqlite: begin");
  Expect(sqlite::Prepare(db, "INSERT INTO t VALUES (?, ?, ?, ?)", &insert), "sqlite: prepare");
  Expect(store->Read(kTable, {},
                     [&](const Row& row) {
                       sqlite3_bind_int64(insert, 1, std::get<int64_t>(row[0]));
                       const std::string& name = std::get<std::string>(row[1]);
                       sqlite3_bind_text(insert, 2, name.data(), static_cast<int>(name.size()), SQLITE_STATIC);
                       sqlite3_bind_int64(insert, 3, std::get<int64_t>(row[2]));
                       sqlite3_bind_double(insert, 4, std::get<double>(row[3]));
                       const bool done = sqlite3_step(insert) == SQLITE_DONE;
                       sqlite3_reset(insert);
                       return done;
                     }),
         "sqlite: load");
  sqlite::Finalize(&insert);
  Expect(sqlite::Exec(db, "COMMIT"), "sqlite: commit");
  sqlite3_stmt* aggregate = nullptr;
  Expect(sqlite::Prepare(db, (std::string(kAggregate) + "t").c_str(), &aggregate), "sqlite: prepare");
  double seconds = 0;
  for (int timed = 0; timed < 2; ++timed) {  // the first warms the cache
    Stopwatch watch;
    if (sqlite3_step(aggregate) != SQLITE_ROW || static_cast<uint64_t>(sqlite3_column_int64(aggregate, 0)) != rows) {
      throw BenchError("sqlite: the aggregate failed");
    }
    sqlite3_reset(aggregate);
    seconds = watch.Seconds();
  }
  sqlite::Finalize(&aggregate);
  Expect(sqlite::CloseConnection(&db), "sqlite: close");
  return static_cast<double>(rows) / seconds;
}

// Mean microseconds of a point lookup as of `version`: by the C++ API and by
// SQL, alternating key by key.
void PointLookups(Store* store, const Shape& shape, uint64_t version, double* api_us, double* sql_us) {
  std::unique_ptr<sql::Session> session;
  Expect(sql::Session::Open(store, &session), "sql: session");
  std::mt19937_64 random(7);
  double api = 0, sql = 0;
  for (uint64_t i = 0; i < shape.points; ++i) {
    const auto id = static_cast<int64_t>(random() % shape.rows);
    uint64_t found = 0;
    Stopwatch watch;
    ReadOptions options;
    options.version = version;
    options.start_key = Row{id};
    options.end_key = Row{id};
    options.end_inclusive = true;
    Expect(store->Read(kTable, options,
                       [&](const Row&) {
                         ++found;
                         return true;
                       }),
           "sql: point read");
    api += watch.Micros();
    watch.Restart();
    sql::ResultHandler results;
    results.on_row = [&](const Row&) {
      ++found;
      return true;
    };
    Expect(session->Execute(fmt::format("SELECT * FROM {} VERSION AS OF {} WHERE id = {}", kTableName, version, id), {},
                            results),
           "sql: point query");
    sql += watch.Micros();
    if (found != 2) throw BenchError(fmt::format("sql: key {} found {} times, not once each way", id, found));
  }
  *api_us = api / static_cast<double>(shape.points);
  *sql_us = sql / static_cast<double>(shape.points);
}

double ChangeRowsPerS(Store* store, const Shape& shape) {
  double seconds = 0;
  const uint64_t count = TimedCount(
      store, fmt::format("SELECT count(*), sum(qty), max(_commit_version) FROM table_changes('{}', 2)", kTableName),
      &seconds);
  const uint64_t expected = shape.rows + kSqlUpdates * shape.update_rows * 2;  // pre- and post-images
  if (count != expected) throw BenchError(fmt::format("sql: table_changes gave {} rows, not {}", count, expected));
  return static_cast<double>(count) / seconds;
}

// Durable one-row commits by `threads` writers, `commits` in all: commits/s.
double WriterCommitsPerS(const BenchConfig& config, const std::string& dir, const Shape& shape, uint64_t threads) {
  std::unique_ptr<Store> store;
  Expect(Store::Open(Options(config), dir, &store), "sql: writer open");
  std::atomic<uint64_t> next{0};
  std::vector<std::thread> writers;
  Stopwatch watch;
  for (uint64_t t = 0; t < threads; ++t) {
    writers.emplace_back([&] {
      for (uint64_t i; (i = next.fetch_add(1)) < shape.writer_commits;) {
        Transaction txn;
        txn.Write(kTable, MakeRow((i * 7919) % shape.rows, 100 + i));
        Expect(store->Commit(txn), "sql: writer commit");
      }
    });
  }
  for (std::thread& w : writers) w.join();
  const double seconds = watch.Seconds();
  Expect(store->FlushState(), "sql: writer flush");
  return static_cast<double>(shape.writer_commits) / seconds;
}

// The writer's commits/s beside the reader process; its scans in `*scans`.
double BesideReader(const BenchConfig& config, const std::string& dir, const Shape& shape, uint64_t threads,
                    uint64_t* scans) {
  const std::string ready = dir + "/../reader-ready", stop = dir + "/../reader-stop";
  std::filesystem::remove(ready);
  std::filesystem::remove(stop);
  ChildOutcome outcome;
  std::thread reader([&] {
    outcome = RunChild({config.self_path, "--sql-reader", dir, "--sql-reader-stop", stop}, ChildEnd::kWaitForExit);
  });
  // The reader has scanned once (bounded: a minute).
  for (int i = 0; i < 60000 && !std::filesystem::exists(ready); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const double rate = WriterCommitsPerS(config, dir, shape, threads);
  std::ofstream(stop).put('\n');
  reader.join();
  if (!outcome.report.starts_with("scans ")) throw BenchError("sql: the reader reported \"" + outcome.report + "\"");
  *scans = std::stoull(outcome.report.substr(6));
  return rate;
}

}  // namespace

int RunSqlReader(const std::string& dir, const std::string& stop) {
  uint64_t scans = 0;
  const std::string ready = std::filesystem::path(stop).parent_path() / "reader-ready";
  while (true) {
    std::unique_ptr<Store> store;  // opened for each scan, as the shell does for each statement
    StoreOptions options;
    options.read_only = true;
    Status s = Store::Open(options, dir, &store);
    if (s.ok()) s = sql::Query(store.get(), std::string(kAggregate) + kTableName, {}, {});
    if (!s.ok()) {
      std::cerr << "sql reader: " << s.ToString() << "\n";
      return 1;
    }
    if (++scans == 1) std::ofstream(ready).put('\n');
    if (std::filesystem::exists(stop)) break;
  }
  std::cout << "scans " << scans << std::endl;
  return 0;
}

void RunSql(const BenchConfig& config, int rep, Results* results) {
  const Shape shape = ShapeOf(config);
  const std::string run_dir = config.RunDir(kSql, "spool", rep);
  const std::string dir = run_dir + "/store";
  std::filesystem::create_directories(run_dir);
  uint64_t after_load = 0;
  {
    std::unique_ptr<Store> store;
    Expect(Store::Open(Options(config), dir, &store), "sql: open");
    after_load = Build(store.get(), shape);
    Expect(store->FlushState(), "sql: flush");
  }
  std::unique_ptr<Store> store;
  Expect(Store::Open(Options(config), dir, &store), "sql: reopen");
  (void)CsvRowsPerS(store.get(), false, shape.rows);  // warms the cache
  const double read_csv = CsvRowsPerS(store.get(), false, shape.rows);
  const double sql_csv = CsvRowsPerS(store.get(), true, shape.rows);
  (void)SqlAggregateRowsPerS(store.get(), shape.rows);
  const double sql_aggregate = SqlAggregateRowsPerS(store.get(), shape.rows);
  const double sqlite_aggregate = PlainSqliteRowsPerS(store.get(), run_dir + "/plain.sqlite", shape.rows);
  double api_us = 0, sql_us = 0;
  PointLookups(store.get(), shape, after_load, &api_us, &sql_us);
  const double changes = ChangeRowsPerS(store.get(), shape);
  store.reset();

  results->Add(kSql, kSpoolRead, metric::kCsvRowsPerS, read_csv);
  results->Add(kSql, kSpoolSql, metric::kCsvRowsPerS, sql_csv);
  results->Add(kSql, kSpoolSql, metric::kAggregateRowsPerS, sql_aggregate);
  results->Add(kSql, kPlainSqlite, metric::kAggregateRowsPerS, sqlite_aggregate);
  results->Add(kSql, kSpoolApi, metric::kPointUs, api_us);
  results->Add(kSql, kSpoolSql, metric::kPointUs, sql_us);
  results->Add(kSql, kSpoolSql, metric::kChangeFeedRowsPerS, changes);

  // The writers alone, then beside the reader.
  std::string line;
  for (const uint64_t threads : {uint64_t{1}, kW2Threads}) {
    const double alone = WriterCommitsPerS(config, dir, shape, threads);
    uint64_t scans = 0;
    const double beside = BesideReader(config, dir, shape, threads, &scans);
    const bool w1 = threads == 1;
    results->Add(kSql, kSpoolSql, w1 ? metric::kW1Alone : metric::kW2Alone, alone);
    results->Add(kSql, kSpoolSql, w1 ? metric::kW1Beside : metric::kW2Beside, beside);
    results->Add(kSql, kSpoolSql, metric::kReaderScans, static_cast<double>(scans));
    line += fmt::format(", {} {:.0f} commits/s alone, {:.0f} beside {} scans", w1 ? "W1" : "W2", alone, beside, scans);
  }
  std::cerr << fmt::format(
                   "sql rep {}/{}: CSV {:.0f} rows/s read, {:.0f} SQL; aggregate {:.0f} rows/s SQL, {:.0f} SQLite; "
                   "point {:.0f} µs API, {:.0f} SQL; table_changes {:.0f} rows/s{}",
                   rep, config.reps, read_csv, sql_csv, sql_aggregate, sqlite_aggregate, api_us, sql_us, changes, line)
            << "\n";
  RemoveDir(run_dir);
}

namespace {
double Median(const Results& results, const char* engine, const char* name) {
  const std::optional<Summary> s = results.Get(kSql, engine, name);
  return s ? s->median : std::nan("");
}
}  // namespace

void CheckSqlTargets(const Results& results, std::vector<TargetCheck>* checks) {
  const auto median = [&](const char* engine, const char* name) { return Median(results, engine, name); };
  checks->push_back(MakeCheck(kSql, "a full scan ≥ 0.5 × spool read --format csv", "SQL CSV ÷ Store::Read CSV",
                              median(kSpoolSql, metric::kCsvRowsPerS) / median(kSpoolRead, metric::kCsvRowsPerS), 0.5,
                              true));
  checks->push_back(MakeCheck(
      kSql, "a full scan within 2 × a plain SQLite table's", "SQL aggregate ÷ SQLite aggregate",
      median(kSpoolSql, metric::kAggregateRowsPerS) / median(kPlainSqlite, metric::kAggregateRowsPerS), 0.5, true));
  checks->push_back(MakeCheck(kSql, "a point lookup as of an old version ≤ 2 × the C++ API's", "SQL ÷ Store::Read",
                              median(kSpoolSql, metric::kPointUs) / median(kSpoolApi, metric::kPointUs), 2, false));
  checks->push_back(MakeCheck(kSql, "table_changes ≥ 1M rows/s", "million change rows/s",
                              median(kSpoolSql, metric::kChangeFeedRowsPerS) / 1e6, 1, true));
  for (const bool w1 : {true, false}) {
    checks->push_back(MakeCheck(kSql, std::string(w1 ? "W1" : "W2") + " drops ≤ 10% beside a scanning reader",
                                "commits/s beside ÷ alone",
                                median(kSpoolSql, w1 ? metric::kW1Beside : metric::kW2Beside) /
                                    median(kSpoolSql, w1 ? metric::kW1Alone : metric::kW2Alone),
                                0.9, true));
  }
}

void PrintSql(const BenchConfig& config, const Results& results, std::ostream& out) {
  if (!config.Runs(kSql)) return;
  const Shape shape = ShapeOf(config);
  const auto median = [&](const char* engine, const char* name) { return Median(results, engine, name); };
  out << fmt::format("\nSQL over a store ({} rows, {} update commits of {} after the load; docs/sql.md)\n", shape.rows,
                     kSqlUpdates, shape.update_rows);
  out << fmt::format(
      "  every row as CSV       spool read {:>12.0f} rows/s   spool sql {:>12.0f} rows/s   sql ÷ read {:.2f}\n",
      median(kSpoolRead, metric::kCsvRowsPerS), median(kSpoolSql, metric::kCsvRowsPerS),
      median(kSpoolSql, metric::kCsvRowsPerS) / median(kSpoolRead, metric::kCsvRowsPerS));
  out << fmt::format(
      "  aggregate, every col.  SQLite     {:>12.0f} rows/s   spool sql {:>12.0f} rows/s   sql ÷ SQLite {:.2f}\n",
      median(kPlainSqlite, metric::kAggregateRowsPerS), median(kSpoolSql, metric::kAggregateRowsPerS),
      median(kSpoolSql, metric::kAggregateRowsPerS) / median(kPlainSqlite, metric::kAggregateRowsPerS));
  out << fmt::format(
      "  point as of v(load)    C++ API    {:>12.0f} µs       spool sql {:>12.0f} µs       sql ÷ API {:.2f}\n",
      median(kSpoolApi, metric::kPointUs), median(kSpoolSql, metric::kPointUs),
      median(kSpoolSql, metric::kPointUs) / median(kSpoolApi, metric::kPointUs));
  out << fmt::format("  table_changes          {:.0f} rows/s\n", median(kSpoolSql, metric::kChangeFeedRowsPerS));
  for (const bool w1 : {true, false}) {
    const double alone = median(kSpoolSql, w1 ? metric::kW1Alone : metric::kW2Alone);
    const double beside = median(kSpoolSql, w1 ? metric::kW1Beside : metric::kW2Beside);
    out << fmt::format(
        "  {} on the store        alone {:>8.0f} commits/s, beside a scanning reader {:>8.0f}: {:+.1f}%\n",
        w1 ? "W1" : "W2", alone, beside, 100.0 * (beside / alone - 1));
  }
  out << "  (CSV: Store::Read or SELECT * into the CLI's CSV printer; the aggregate is count(*), sum(qty),\n"
      << "   sum(length(name)), sum(price); a point lookup is one statement each, parsed and planned; the\n"
      << "   reader is another process opening the store read-only and aggregating, again and again.)\n";
}

}  // namespace spool::bench
