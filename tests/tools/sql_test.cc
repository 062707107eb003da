// SQL over a store (tools/sql): the Spark translation, the time functions,
// and the virtual tables on a real store — every type, key bounds pushed
// down giving what a full scan filters, as-of reads, the change feed and
// history equal to the Store API's, statements that would write refused,
// errors with their codes, the timeout and interrupts, early stops.
#include "spool/sql/sql.h"

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spool/storage/store.h"
#include "temp_dir.h"

namespace spool::sql {
namespace {

const std::vector<std::string> kTables = {"main.s.pairs", "main.s.other"};

std::string Translate(const std::string& text) {
  std::string out;
  std::vector<std::string> declare;
  const Status s = TranslateSpark(text, kTables, &out, &declare);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

Status TranslateError(const std::string& text) {
  std::string out;
  std::vector<std::string> declare;
  return TranslateSpark(text, kTables, &out, &declare);
}

TEST(TranslateSparkTest, RewritesEachConstructItKnows) {
  EXPECT_EQ(Translate("DESCRIBE HISTORY main.s.pairs"), "SELECT * FROM history('main.s.pairs')");
  EXPECT_EQ(Translate("SELECT max(h.version) FROM (DESCRIBE HISTORY `main`.s.pairs) h"),
            "SELECT max(h.version) FROM (SELECT * FROM history('main.s.pairs')) h");
  EXPECT_EQ(Translate("SELECT * FROM table_changes('main.s.pairs', 2, 5)"),
            "SELECT * FROM \"table_changes:main.s.pairs\"(2, 5)");
  EXPECT_EQ(Translate("SELECT * FROM table_at('main.s.pairs', '2026-09-29 08:00:00')"),
            "SELECT * FROM \"main.s.pairs\"('2026-09-29 08:00:00')");
  EXPECT_EQ(Translate("SELECT * FROM main.s.pairs VERSION AS OF 3 p"), "SELECT * FROM \"main.s.pairs\"(3) p");
  // Tables dropped since: a virtual table as of the version named.
  EXPECT_EQ(Translate("SELECT * FROM table_at('main.s.gone', 4)"), "SELECT * FROM \"table_at:main.s.gone@4\"(4)");
  EXPECT_EQ(Translate("SELECT * FROM main.s.gone TIMESTAMP AS OF '2026-09-29'"),
            "SELECT * FROM \"table_at:main.s.gone@2026-09-29\"('2026-09-29')");
  EXPECT_EQ(Translate("SELECT * FROM \"main.s.pairs\" TIMESTAMP AS OF '2026-09-29'"),
            "SELECT * FROM \"main.s.pairs\"('2026-09-29')");
  EXPECT_EQ(Translate("SELECT main.s.pairs.n FROM main.s.pairs"), "SELECT \"main.s.pairs\".n FROM \"main.s.pairs\"");
  EXPECT_EQ(Translate("SELECT main.b.c FROM b"), "SELECT main.b.c FROM b");  // SQLite's schema.table.column
  EXPECT_EQ(Translate("SELECT `odd name` FROM t"), "SELECT \"odd name\" FROM t");
  EXPECT_EQ(Translate("SELECT details:a.b[0]['c d'] FROM e"),
            "SELECT json_extract(details, '$.a.b[0].\"c d\"') FROM e");
  EXPECT_EQ(Translate("SELECT e.details:x FROM e WHERE id = :param"),
            "SELECT json_extract(e.details, '$.x') FROM e WHERE id = :param");
  EXPECT_EQ(Translate("WHERE ts > current_timestamp() - INTERVAL 7 DAYS"),
            "WHERE ts > spool_timestamp_add(spool_now(), -7, 'DAY')");
  EXPECT_EQ(Translate("SELECT (a + b) * 2 + INTERVAL '3' hour - INTERVAL 1 WEEK, now(), current_date"),
            "SELECT spool_timestamp_add(spool_timestamp_add((a + b) * 2, 3, 'HOUR'), -1, 'WEEK'), spool_now(), "
            "spool_current_date()");
  EXPECT_EQ(Translate("SELECT x FROM t ORDER BY x DESC"), "SELECT x FROM t ORDER BY x DESC");
  EXPECT_EQ(Translate("DESC HISTORY main.s.pairs"), "SELECT * FROM history('main.s.pairs')");
  EXPECT_EQ(Translate("SELECT * FROM (SELECT x FROM t ORDER BY x DESC)"),
            "SELECT * FROM (SELECT x FROM t ORDER BY x DESC)");
}

TEST(TranslateSparkTest, LeavesStringsNamesAndCommentsAlone) {
  EXPECT_EQ(Translate("SELECT 'DESCRIBE HISTORY main.s.pairs', \"a:b\", 'x - INTERVAL 7 DAYS' -- INTERVAL\n"),
            "SELECT 'DESCRIBE HISTORY main.s.pairs', \"a:b\", 'x - INTERVAL 7 DAYS'  \n");
  EXPECT_EQ(Translate("SELECT /* main.s.pairs */ 1"), "SELECT   1");
  EXPECT_EQ(Translate("SELECT 'it''s', 1.5e-3, .5, t.a"), "SELECT 'it''s', 1.5e-3, .5, t.a");
}

TEST(TranslateSparkTest, NamesTheConstructItDoesNotKnowAndWhere) {
  Status s = TranslateError("SELECT 1,\n  x::int");
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("x::type"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("line 2, column 4"), std::string::npos) << s.ToString();
  for (const char* bad :
       {"SELECT INTERVAL 7 DAYS", "SELECT ts - INTERVAL 7 FORTNIGHTS", "SELECT ts - INTERVAL x DAYS"}) {
    s = TranslateError(bad);
    EXPECT_NE(s.ToString().find("INTERVAL is understood only as"), std::string::npos) << bad << ": " << s.ToString();
  }
  s = TranslateError("DESCRIBE DETAIL main.s.pairs");
  EXPECT_NE(s.ToString().find("DESCRIBE HISTORY"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT * FROM table_changes(main.s.pairs, 1)");
  EXPECT_NE(s.ToString().find("takes the table's name as a string"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT * FROM table_at('main.s.gone', 1 + 1)");
  EXPECT_NE(s.ToString().find("no table main.s.gone (one dropped since is read as of a number"), std::string::npos)
      << s.ToString();
  s = TranslateError("SELECT * FROM table_at('main.s.pairs')");
  EXPECT_NE(s.ToString().find("a table name and a version"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT * FROM other.s.pairs");
  EXPECT_NE(s.ToString().find("the store has no table other.s.pairs"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT 'open");
  EXPECT_NE(s.ToString().find("not closed"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT d:[x FROM t");
  EXPECT_NE(s.ToString().find("JSON path"), std::string::npos) << s.ToString();
  s = TranslateError("SELECT * FROM main.s.pairs VERSION AS OF 'x'");
  EXPECT_NE(s.ToString().find("VERSION AS OF needs a version number"), std::string::npos) << s.ToString();
}

// A store with one keyed table of every type, written in three versions.
class SqlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    StoreOptions options;
    ASSERT_TRUE(Store::Open(options, dir_.Sub("store"), &store_).ok());
    Schema schema;
    ASSERT_TRUE(Schema::Make({{"region", ColumnType::kString, false},
                              {"n", ColumnType::kInt64, false},
                              {"amount", ColumnType::kDouble, true},
                              {"at", ColumnType::kTimestamp, true},
                              {"ok", ColumnType::kBool, true},
                              {"payload", ColumnType::kBytes, true}},
                             {"region", "n"}, &schema)
                    .ok());
    Transaction create("CREATE TABLE");
    create.CreateTable(pairs_, TableKind::kStreamingTable, schema);
    Commit(create);
    Transaction first;
    for (const char* region : {"a", "b", "c"}) {
      for (int64_t n = 0; n < 20; ++n) first.Write(pairs_, Pair(region, n, 1.5 * static_cast<double>(n)));
    }
    first_ = Commit(first);
    Transaction second;
    second.Write(pairs_, Pair("b", 3, -1));
    second.Delete(pairs_, Row{std::string("c"), int64_t{7}});
    second.Write(pairs_, Row{std::string("d"), int64_t{0}, std::monostate{}, std::monostate{}, std::monostate{},
                             std::monostate{}});
    second_ = Commit(second);
    ASSERT_TRUE(Session::Open(store_.get(), &session_).ok());
  }

  static Row Pair(const char* region, int64_t n, double amount) {
    return Row{std::string(region),         n, amount, Timestamp{1790671000000000 + n}, n % 2 == 0,
               Bytes{std::string("\0x", 2)}};
  }

  CommitResult Commit(const Transaction& txn) {
    CommitResult result;
    EXPECT_TRUE(store_->Commit(txn, &result).ok());
    return result;
  }

  // The rows of `query`, each value as text ("NULL" for null, a blob's
  // bytes as they are).
  std::vector<std::vector<std::string>> Rows(const std::string& query, Status* status = nullptr,
                                             const QueryOptions& options = {}) {
    std::vector<std::vector<std::string>> rows;
    ResultHandler results;
    results.on_row = [&](const Row& row) {
      std::vector<std::string> texts;
      for (const Value& v : row) {
        if (IsNull(v)) texts.emplace_back("NULL");
        else if (const auto* i = std::get_if<int64_t>(&v)) texts.push_back(std::to_string(*i));
        else if (const auto* d = std::get_if<double>(&v)) texts.push_back(std::to_string(*d));
        else if (const auto* t = std::get_if<std::string>(&v)) texts.push_back(*t);
        else texts.push_back("blob:" + std::get<Bytes>(v).data);
      }
      rows.push_back(std::move(texts));
      return true;
    };
    const Status s = session_->Execute(query, options, results);
    if (status != nullptr) *status = s;
    else EXPECT_TRUE(s.ok()) << query << ": " << s.ToString();
    return rows;
  }

  TempDir dir_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<Session> session_;
  const TableId pairs_{"main", "s", "pairs"};
  CommitResult first_, second_;
};

TEST_F(SqlTest, EveryTypeReadsInItsSqlForm) {
  std::vector<ResultColumn> columns;
  ResultHandler results;
  results.on_columns = [&](const std::vector<ResultColumn>& c) { columns = c; };
  ASSERT_TRUE(session_->Execute("SELECT * FROM \"main.s.pairs\" WHERE region = 'a' AND n = 2", {}, results).ok());
  EXPECT_EQ(columns, (std::vector<ResultColumn>{{"region", "TEXT"},
                                                {"n", "INTEGER"},
                                                {"amount", "REAL"},
                                                {"at", "TIMESTAMP"},
                                                {"ok", "BOOLEAN"},
                                                {"payload", "BLOB"}}));
  EXPECT_EQ(Rows("SELECT * FROM main.s.pairs WHERE region = 'a' AND n = 2"),
            (std::vector<std::vector<std::string>>{
                {"a", "2", "3.000000", "2026-09-29 08:36:40.000002", "1", "blob:" + std::string("\0x", 2)}}));
  EXPECT_EQ(Rows("SELECT * FROM main.s.pairs WHERE region = 'd'"),
            (std::vector<std::vector<std::string>>{{"d", "0", "NULL", "NULL", "NULL", "NULL"}}));
}

// Bounds on the key go to the read; the rows are those a full scan
// filtered by SQLite gives (`+column` keeps a constraint from the table),
// now and as of the first version, for random bounds of every kind.
TEST_F(SqlTest, KeyBoundsPushedDownGiveWhatAFullScanFilters) {
  std::mt19937 random(7);
  const char* ops[] = {"=", ">", ">=", "<", "<=", "IS"};
  const char* regions[] = {"'a'", "'b'", "'bb'", "'c'", "'d'", "2", "'2'"};
  for (int round = 0; round < 300; ++round) {
    std::string where = "region " + std::string(ops[random() % 6]) + " " + regions[random() % 7];
    if (random() % 2 == 0)
      where += " AND n " + std::string(ops[random() % 5]) + " " + std::to_string(random() % 24 - 2);
    if (random() % 3 == 0)
      where += " AND n " + std::string(ops[random() % 5]) + " " + std::to_string(random() % 24 - 2);
    const std::string table =
        random() % 2 == 0 ? "main.s.pairs" : "table_at('main.s.pairs', " + std::to_string(first_.version) + ")";
    std::string plain = where;
    for (const char* column : {"region ", "n "}) {
      for (size_t at = 0; (at = plain.find(column, at)) != std::string::npos; at += 2) {
        if (at == 0 || plain[at - 1] == ' ') plain.insert(at, "+"), ++at;
      }
    }
    const std::string select = "SELECT region, n, amount FROM " + table + " WHERE ";
    EXPECT_EQ(Rows(select + where), Rows(select + plain)) << where;
  }
  // A point lookup reads its key (the plan's arguments: both key columns).
  const auto plan = Rows("EXPLAIN QUERY PLAN SELECT * FROM main.s.pairs WHERE region = 'b' AND n = 3");
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_NE(plan[0][3].find(";=0;=1"), std::string::npos) << plan[0][3];
  // A collation other than the key's order is left to SQLite.
  EXPECT_EQ(Rows("SELECT n FROM main.s.pairs WHERE region = 'B' COLLATE NOCASE AND n = 3"),
            (std::vector<std::vector<std::string>>{{"3"}}));
}

TEST_F(SqlTest, AsOfReadsTheChangeFeedAndHistoryAreTheStores) {
  const auto count = [&](const std::string& from) { return Rows("SELECT count(*) FROM " + from)[0][0]; };
  EXPECT_EQ(count("main.s.pairs"), "60");  // 60 - c7 + d0
  EXPECT_EQ(count("table_at('main.s.pairs', " + std::to_string(first_.version) + ")"), "60");
  EXPECT_EQ(Rows("SELECT amount FROM main.s.pairs VERSION AS OF " + std::to_string(first_.version) +
                 " WHERE region = 'b' AND n = 3"),
            (std::vector<std::vector<std::string>>{{"4.500000"}}));
  const std::string at_first = FormatTimestampMicros(static_cast<int64_t>(first_.timestamp_us));
  EXPECT_EQ(Rows("SELECT amount FROM table_at('main.s.pairs', '" + at_first + "') WHERE region = 'b' AND n = 3"),
            (std::vector<std::vector<std::string>>{{"4.500000"}}));

  // The change feed of the second version, in the store's order.
  std::vector<std::vector<std::string>> expected;
  ASSERT_TRUE(store_
                  ->Changes(pairs_, second_.version, second_.version,
                            [&](const ChangeRow& c) {
                              expected.push_back(
                                  {std::get<std::string>(c.row[0]), std::to_string(std::get<int64_t>(c.row[1])),
                                   std::string(ChangeTypeName(c.change_type)), std::to_string(c.commit_version)});
                              return true;
                            })
                  .ok());
  ASSERT_EQ(expected.size(), 4u);  // b3's pre- and post-image, c7's delete, d0's insert
  const std::string v = std::to_string(second_.version);
  EXPECT_EQ(
      Rows("SELECT region, n, _change_type, _commit_version FROM table_changes('main.s.pairs', " + v + ", " + v + ")"),
      expected);
  EXPECT_EQ(Rows("SELECT count(*) FROM table_changes('main.s.pairs', 1)")[0][0], "64");

  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(pairs_, &history).ok());
  const auto rows = Rows("SELECT version, operation, timestamp FROM (DESCRIBE HISTORY main.s.pairs)");
  ASSERT_EQ(rows.size(), history.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i][0], std::to_string(history[i].version));
    EXPECT_EQ(rows[i][1], history[i].operation);
    EXPECT_EQ(rows[i][2], FormatTimestampMicros(static_cast<int64_t>(history[i].timestamp_us)));
  }
}

// A table dropped since reads as of a version or time it existed at, with
// its columns then; as of one after the drop it is not found.
TEST_F(SqlTest, ATableDroppedSinceReadsAsOfItsVersions) {
  const TableId gone{"main", "s", "gone"};
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"k", ColumnType::kInt64, false}, {"v", ColumnType::kString, true}}, {"k"}, &schema).ok());
  Transaction create("CREATE TABLE");
  create.CreateTable(gone, TableKind::kStreamingTable, schema);
  create.Write(gone, Row{int64_t{1}, std::string("one")});
  create.Write(gone, Row{int64_t{2}, std::string("two")});
  const CommitResult made = Commit(create);
  Transaction drop("DROP TABLE");
  drop.DropTable(gone);
  const CommitResult dropped = Commit(drop);
  ASSERT_TRUE(session_->Reset(store_.get()).ok());
  const std::vector<std::vector<std::string>> rows = {{"1", "one"}, {"2", "two"}};
  const std::string v = std::to_string(made.version);
  EXPECT_EQ(Rows("SELECT * FROM table_at('main.s.gone', " + v + ")"), rows);
  EXPECT_EQ(Rows("SELECT k, v FROM main.s.gone VERSION AS OF " + v + " WHERE k >= 1"), rows);
  EXPECT_EQ(Rows("SELECT v FROM main.s.gone TIMESTAMP AS OF '" +
                 FormatTimestampMicros(static_cast<int64_t>(made.timestamp_us)) + "' WHERE k = 2"),
            (std::vector<std::vector<std::string>>{{"two"}}));
  Status s;
  Rows("SELECT * FROM table_at('main.s.gone', " + std::to_string(dropped.version) + ")", &s);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.ToString().find("main.s.gone"), std::string::npos) << s.ToString();
  const std::vector<std::string> names = session_->TableNames();
  EXPECT_EQ(std::count_if(names.begin(), names.end(), [](const std::string& n) { return n.find("gone") != n.npos; }),
            0);
}

TEST_F(SqlTest, StatementsThatWouldWriteAreRefusedAndChangeNothing) {
  const uint64_t newest = store_->log()->Newest().version;
  for (const char* statement :
       {"INSERT INTO main.s.pairs (region, n) VALUES ('z', 1)", "UPDATE main.s.pairs SET amount = 0",
        "DELETE FROM main.s.pairs", "DROP TABLE main.s.pairs", "ALTER TABLE main.s.pairs RENAME TO x",
        "ATTACH 'other.db' AS other", "VACUUM INTO 'copy.db'", "PRAGMA writable_schema = 1",
        "CREATE VIRTUAL TABLE t USING spool_table", "SELECT load_extension('x')"}) {
    Status s;
    Rows(statement, &s);
    EXPECT_TRUE(s.IsInvalidArgument()) << statement << ": " << s.ToString();
  }
  EXPECT_EQ(store_->log()->Newest().version, newest);
  EXPECT_EQ(Rows("SELECT count(*) FROM main.s.pairs")[0][0], "60");
  EXPECT_FALSE(std::filesystem::exists("copy.db"));
  // Scratch tables are the session's own.
  EXPECT_EQ(Rows("CREATE TEMP TABLE mine AS SELECT region, n FROM main.s.pairs WHERE n < 2; "
                 "SELECT count(*) FROM mine")[0][0],
            "7");
  EXPECT_EQ(Rows("PRAGMA table_info(\"main.s.pairs\")").size(), 6u);
}

TEST_F(SqlTest, ErrorsKeepTheStoresCodeAndNameTheStatement) {
  Status s;
  Rows("SELECT 1; SELECT * FROM table_at('main.s.pairs', 99)", &s);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("statement 2"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("version 99 is not available"), std::string::npos) << s.ToString();
  Rows("SELECT * FROM history('main.s.gone')", &s);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  Rows("SELEC 1", &s);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("syntax error"), std::string::npos) << s.ToString();
  Rows("SELECT nope FROM main.s.pairs", &s);
  EXPECT_NE(s.ToString().find("no such column: nope"), std::string::npos) << s.ToString();
  Rows("SELECT * FROM main.s.pairs('yesterday')", &s);
  EXPECT_NE(s.ToString().find("must be a version"), std::string::npos) << s.ToString();
  Rows("SELECT date_format('2026-01-01', 'EEE')", &s);
  EXPECT_NE(s.ToString().find("pattern letter 'E'"), std::string::npos) << s.ToString();
  Rows("SELECT unix_timestamp('soon')", &s);
  EXPECT_NE(s.ToString().find("'soon' is not a timestamp"), std::string::npos) << s.ToString();
  Rows("SELECT * FROM flows()", &s);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();  // no pipeline in this store
}

TEST_F(SqlTest, SparkTimeFunctions) {
  EXPECT_EQ(Rows("SELECT unix_timestamp('2026-09-29 08:36:55.9'), from_unixtime(1790671015), "
                 "from_unixtime(1790671015.7, 'yy-M-d h:m:s a'), date_format('2026-09-29 18:06:05.123456', "
                 "'yyyy/MM/dd HH:mm:ss.SSS ''at'' a'), unix_timestamp('2026-09-29'), from_unixtime(NULL)"),
            (std::vector<std::vector<std::string>>{{"1790671015", "2026-09-29 08:36:55", "26-9-29 8:36:55 AM",
                                                    "2026/09/29 18:06:05.123 at PM", "1790640000", "NULL"}}));
}

TEST_F(SqlTest, ATimeoutAndAnInterruptStopTheStatementNotTheSession) {
  const std::string forever = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";
  Status s;
  Rows(forever, &s, QueryOptions{20});
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(s.ToString().find("timeout of 0.020 s"), std::string::npos) << s.ToString();
  // Interrupted while it hands over rows.
  ResultHandler results;
  uint64_t rows = 0;
  results.on_row = [&](const Row&) {
    if (++rows == 3) session_->Interrupt();
    return true;
  };
  s = session_->Execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c; SELECT 1", {},
                        results);
  EXPECT_TRUE(s.IsAborted()) << s.ToString();
  EXPECT_NE(s.ToString().find("interrupted"), std::string::npos) << s.ToString();
  EXPECT_EQ(rows, 3u);
  EXPECT_EQ(Rows("SELECT count(*) FROM main.s.pairs")[0][0], "60");
}

// A read streams: stopping after a few rows of a big table stops its
// read (the test would hang otherwise), and a new table is seen after Reset.
TEST_F(SqlTest, ABigReadStopsWithItsStatement) {
  Transaction big("WRITE");
  for (int64_t n = 0; n < 50000; ++n) big.Write(pairs_, Pair("e", n, 0));
  Commit(big);
  EXPECT_EQ(Rows("SELECT n FROM main.s.pairs WHERE region >= 'e' LIMIT 3"),
            (std::vector<std::vector<std::string>>{{"0"}, {"1"}, {"2"}}));
  ResultHandler results;
  int seen = 0;
  results.on_row = [&](const Row&) { return ++seen < 5; };
  ASSERT_TRUE(session_->Execute("SELECT * FROM main.s.pairs; SELECT 1", {}, results).ok());
  EXPECT_EQ(seen, 5);
  EXPECT_EQ(Rows("SELECT count(*), sum(n) FROM main.s.pairs WHERE region = 'e'"),
            (std::vector<std::vector<std::string>>{{"50000", "1249975000"}}));

  Transaction create("CREATE TABLE");
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"x", ColumnType::kInt64, false}}, {}, &schema).ok());
  create.CreateTable(TableId{"main", "s", "later"}, TableKind::kStreamingTable, schema);
  Commit(create);
  Status s;
  Rows("SELECT * FROM main.s.later", &s);
  EXPECT_FALSE(s.ok());
  ASSERT_TRUE(session_->Reset(store_.get()).ok());
  EXPECT_TRUE(Rows("SELECT * FROM main.s.later").empty());
  const std::vector<std::string> names = session_->TableNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "main.s.later"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "history()"), names.end());
}

}  // namespace
}  // namespace spool::sql
