// SQL over a store (docs/sql.md, docs/benchmarks.md "SQL"): what the
// virtual tables cost against the store read without SQL and against
// SQLite reading a table of its own, and what a reader costs a writer.
//
// The table: kSqlRows rows (id int64 key, name string, qty int64, price
// double), loaded in commits of kSqlLoadRows rows, then kSqlUpdates
// commits each updating a random 1% of the rows. Measured, in order:
//   scan     every row as CSV, three ways: Store::Read through the CLI's
//            CSV printer (what `spool read --format csv` does, "spool-read"),
//            `SELECT *` through spool::sql into the same printer
//            ("spool-sql"); and an aggregate over every column
//            (`SELECT count(*), sum(qty), sum(length(name)), sum(price)`)
//            through spool::sql ("spool-sql") and over the same rows in a
//            plain SQLite table ("sqlite");
//   point    kSqlPoints lookups of random keys as of the version after
//            the load (every update commit after it): Store::Read with the
//            key as its range ("spool-api"), and `SELECT * … VERSION AS OF
//            v WHERE id = k`, each a statement of its own ("spool-sql");
//   changes  `SELECT count(*), sum(qty), max(_commit_version) FROM
//            table_changes(t, first)` over the load and the updates;
//   writer   W1's and W2's one-row durable commits on the store (1 and
//            kW2Threads writers, kSqlWriterCommits in all, not scaled), alone and
//            with a reader process scanning the table with SQL all the
//            while (opened read-only, again after each scan).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "config.h"
#include "results.h"
#include "targets.h"

namespace spool::bench {

inline constexpr char kSql[] = "sql";

// Sizes at --scale 1.
inline constexpr uint64_t kSqlRows = 1'000'000;
inline constexpr uint64_t kSqlLoadRows = 100'000;
inline constexpr uint64_t kSqlUpdates = 20;
inline constexpr uint64_t kSqlPoints = 20;
inline constexpr uint64_t kSqlWriterCommits = 4'000;

// Rows of the SQL table (its "engines").
inline constexpr char kSpoolRead[] = "spool-read";
inline constexpr char kSpoolSql[] = "spool-sql";
inline constexpr char kSpoolApi[] = "spool-api";
inline constexpr char kPlainSqlite[] = "sqlite";

namespace metric {
inline constexpr char kCsvRowsPerS[] = "csv_rows_per_s";
inline constexpr char kAggregateRowsPerS[] = "aggregate_rows_per_s";
inline constexpr char kPointUs[] = "point_as_of_us";
inline constexpr char kChangeFeedRowsPerS[] = "table_changes_rows_per_s";
inline constexpr char kW1Alone[] = "w1_commits_per_s_alone";
inline constexpr char kW1Beside[] = "w1_commits_per_s_beside_reader";
inline constexpr char kW2Alone[] = "w2_commits_per_s_alone";
inline constexpr char kW2Beside[] = "w2_commits_per_s_beside_reader";
inline constexpr char kReaderScans[] = "reader_scans";
}  // namespace metric

void RunSql(const BenchConfig& config, int rep, Results* results);
void PrintSql(const BenchConfig& config, const Results& results, std::ostream& out);
// The targets of docs/benchmarks.md for it.
void CheckSqlTargets(const Results& results, std::vector<TargetCheck>* checks);

// The reader process of the writer figures: scans the store in `dir` with
// SQL until the file `stop` exists, then prints "scans N". Exit code 0.
int RunSqlReader(const std::string& dir, const std::string& stop);

}  // namespace spool::bench
