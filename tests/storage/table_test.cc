// Versioned tables through the Store API: commits, reads, time travel,
// history, the change data feed, restore, checkpoints, snapshots, vacuum.
#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>

#include "gated_sync_env.h"
#include "history_run.h"
#include "spool/testing/fault_env.h"
#include "table_fixture.h"

namespace spool {
namespace {

// `bytes` letters that LZ4 cannot shrink (a history run of them is stored
// as it is), different for each seed.
std::string Incompressible(size_t bytes, uint64_t seed) {
  std::string text(bytes, 'a');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (char& c : text) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<char>('a' + x % 26);
  }
  return text;
}

TEST_F(TableTest, UpsertsAndDeletesReadBackInKeyOrder) {
  CreateUsers();
  Transaction txn;
  txn.Write(users_, User(3, "c"));
  txn.Write(users_, User(1, "a"));
  txn.Write(users_, User(2, "b"));
  Commit(txn);
  Transaction update;
  update.Write(users_, User(2, "B"));
  update.Delete(users_, Row{int64_t{3}});
  update.Delete(users_, Row{int64_t{99}});  // missing: not an error
  Commit(update);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "a"), User(2, "B")}));
  Row row;
  bool found = false;
  ASSERT_TRUE(store_->Get(users_, Row{int64_t{2}}, &row, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(row, User(2, "B"));
  ASSERT_TRUE(store_->Get(users_, Row{int64_t{3}}, &row, &found).ok());
  EXPECT_FALSE(found);
}

TEST_F(TableTest, ScanHandsOutRowsInPlaceWithEmptyStringsApartFromNulls) {
  CreateUsers();
  Transaction first;
  first.Write(users_, Row{int64_t{1}, std::monostate{}});
  first.Write(users_, User(2, ""));
  first.Write(users_, User(3, "c"));
  const uint64_t before = Commit(first).version;
  Transaction second;
  second.Write(users_, User(1, "a"));
  second.Write(users_, Row{int64_t{2}, std::monostate{}});
  Commit(second);
  // (id, null?, name) as Scan shows them, at each version.
  using Seen = std::vector<std::tuple<int64_t, bool, std::string>>;
  const auto scan = [&](ReadOptions options) {
    Seen seen;
    Status s = store_->Scan(users_, options, [&](const RowView& row) {
      seen.emplace_back(row.Int64(0), row.IsNull(1), std::string(row.IsNull(1) ? "" : row.Chars(1)));
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return seen;
  };
  ReadOptions at;
  at.version = before;
  EXPECT_EQ(scan(at), (Seen{{1, true, ""}, {2, false, ""}, {3, false, "c"}}));
  EXPECT_EQ(scan({}), (Seen{{1, false, "a"}, {2, true, ""}, {3, false, "c"}}));
}

TEST_F(TableTest, KeyRangeScanIsHalfOpen) {
  CreateUsers();
  Transaction txn;
  for (int64_t i = 1; i <= 10; ++i) txn.Write(users_, User(i, std::to_string(i)));
  Commit(txn);
  ReadOptions range;
  range.start_key = Row{int64_t{3}};
  range.end_key = Row{int64_t{6}};
  EXPECT_EQ(ReadAll(users_, range), (std::vector<Row>{User(3, "3"), User(4, "4"), User(5, "5")}));
}

// Bounds that exclude the start or include the end cover every key that
// starts with their values: a prefix "a" is not "ab", nor "a" followed by
// an escaped zero byte. The same now and as of an older version.
TEST_F(TableTest, ExclusiveStartAndInclusiveEndCoverWholePrefixes) {
  const TableId pairs = Id("main.default.pairs");
  Schema schema;
  ASSERT_TRUE(
      Schema::Make({{"region", ColumnType::kString, false}, {"n", ColumnType::kInt64, false}}, {"region", "n"}, &schema)
          .ok());
  Transaction create("CREATE TABLE");
  create.CreateTable(pairs, TableKind::kStreamingTable, schema);
  Commit(create);
  const auto pair = [](std::string region, int64_t n) { return Row{std::move(region), n}; };
  Transaction txn;
  for (const Row& row : {pair("a", 1), pair("a", 2), pair("a", 3), pair(std::string("a\0", 2), 1), pair("ab", 1),
                         pair("b", 1), pair("b", 2)}) {
    txn.Write(pairs, row);
  }
  const uint64_t written = Commit(txn).version;
  Transaction later;
  later.Delete(pairs, pair("a", 2));
  later.Write(pairs, pair("c", 1));
  Commit(later);

  const auto read = [&](std::optional<Row> start, bool exclusive, std::optional<Row> end, bool inclusive,
                        std::optional<uint64_t> version) {
    ReadOptions options;
    options.start_key = std::move(start);
    options.start_exclusive = exclusive;
    options.end_key = std::move(end);
    options.end_inclusive = inclusive;
    options.version = version;
    return ReadAll(pairs, options);
  };
  const Row a = Row{std::string("a")};
  EXPECT_EQ(read(a, true, std::nullopt, false, written),
            (std::vector<Row>{pair(std::string("a\0", 2), 1), pair("ab", 1), pair("b", 1), pair("b", 2)}));
  EXPECT_EQ(read(std::nullopt, false, a, true, written), (std::vector<Row>{pair("a", 1), pair("a", 2), pair("a", 3)}));
  EXPECT_EQ(read(a, false, a, true, std::nullopt), (std::vector<Row>{pair("a", 1), pair("a", 3)}));
  EXPECT_EQ(
      read(pair("a", 1), true, pair("b", 1), true, written),
      (std::vector<Row>{pair("a", 2), pair("a", 3), pair(std::string("a\0", 2), 1), pair("ab", 1), pair("b", 1)}));
  EXPECT_EQ(read(pair("a", 1), true, pair("a", 1), true, written), (std::vector<Row>{}));
  EXPECT_EQ(read(Row{std::string("b")}, true, std::nullopt, false, std::nullopt), (std::vector<Row>{pair("c", 1)}));
}

TEST_F(TableTest, RowThatDoesNotFitIsRefusedNamingTheColumnAndNothingIsWritten) {
  CreateUsers();
  const uint64_t before = store_->log()->Newest().version;
  Transaction txn;
  txn.Write(users_, User(1, "fine"));
  txn.Write(users_, Row{std::string("not an int"), std::string("x")});
  Status s = store_->Commit(txn);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("id"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("operation 2"), std::string::npos) << s.ToString();
  EXPECT_EQ(store_->log()->Newest().version, before);
  EXPECT_TRUE(ReadAll(users_).empty());

  Transaction unknown;
  unknown.Write(Id("main.default.nope"), User(1, "x"));
  s = store_->Commit(unknown);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("main.default.nope"), std::string::npos);
  Transaction keyless_delete;
  Transaction create("CREATE TABLE");
  create.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
  Commit(create);
  keyless_delete.Delete(events_, Row{std::string("x")});
  EXPECT_TRUE(store_->Commit(keyless_delete).IsInvalidArgument());
  EXPECT_TRUE(store_->Commit(Transaction()).IsInvalidArgument());
}

// Spool's own tables (the catalog __spool: operator state, the pipeline's
// definition) are changed by its runtime only: a commit that does not say
// it is the runtime's (Transaction::AllowSpoolTables) is refused whole, as
// is a restore, and nothing changes.
// The change feed adds _change_type, _commit_version and _commit_timestamp
// to every row: a table with a column of those names would give its feed
// two values under one name. Refused when created or altered, naming it.
TEST_F(TableTest, ColumnsNamedLikeTheChangeFeedsAreRefused) {
  CreateUsers();
  const uint64_t newest = store_->log()->Newest().version;
  for (std::string_view reserved : kChangeFeedColumns) {
    Schema schema;
    ASSERT_TRUE(Schema::Make({{"id", ColumnType::kInt64, false}, {std::string(reserved), ColumnType::kString, true}},
                             {"id"}, &schema)
                    .ok());
    Transaction create("CREATE TABLE");
    create.CreateTable(Id("main.default.feedlike"), TableKind::kStreamingTable, schema);
    Status s = store_->Commit(create);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("'" + std::string(reserved) + "' is reserved"), std::string::npos) << s.ToString();
    Transaction alter("ADD COLUMNS");
    alter.AddColumn(users_, Column{std::string(reserved), ColumnType::kString, true});
    s = store_->Commit(alter);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("main.default.users"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(store_->log()->Newest().version, newest);
  TableInfo table;
  EXPECT_TRUE(store_->GetTable(Id("main.default.feedlike"), &table).IsNotFound());
  ASSERT_TRUE(store_->GetTable(users_, &table).ok());
  EXPECT_EQ(table.schema.columns().size(), 2u);
}

TEST_F(TableTest, SpoolsOwnTablesRefuseChangesByHand) {
  const TableId state = Id("__spool.state.revenue__state0_aggregate");
  Transaction create("SETUP TABLES");
  create.AllowSpoolTables();
  create.CreateTable(state, TableKind::kInternalState, UsersSchema());
  create.Write(state, User(1, "total"));
  Commit(create);
  const uint64_t before = store_->log()->Newest().version;
  std::vector<Transaction> by_hand(5);
  by_hand[0].Write(state, User(1, "wrong"));
  by_hand[1].Delete(state, Row{int64_t{1}});
  by_hand[2].DropTable(state);
  by_hand[3].SetProperties(state, {{"comment", "mine"}});
  by_hand[4].CreateTable(Id("__spool.mine.t"), TableKind::kStreamingTable, UsersSchema());
  for (Transaction& txn : by_hand) {
    const Status s = store_->Commit(txn);
    EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
    EXPECT_NE(s.ToString().find("is Spool's own"), std::string::npos) << s.ToString();
  }
  const Status restored = store_->Restore(state, before);
  EXPECT_TRUE(restored.IsInvalidArgument()) << restored.ToString();
  EXPECT_EQ(store_->log()->Newest().version, before);
  EXPECT_EQ(ReadAll(state), (std::vector<Row>{User(1, "total")}));
}

TEST_F(TableTest, MultiTableCommitIsOneVersion) {
  Transaction txn("CREATE TABLE");
  txn.CreateTable(users_, TableKind::kStreamingTable, UsersSchema());
  txn.CreateTable(events_, TableKind::kMaterializedView, EventsSchema());
  txn.Write(users_, User(1, "a"));
  txn.Write(events_, Row{std::string("hello")});
  txn.SetCheckpoint("flow1", std::string("offset=7"));
  const CommitResult r = Commit(txn);
  EXPECT_EQ(r.version, 1u);
  EXPECT_EQ(ReadAll(users_).size(), 1u);
  EXPECT_EQ(ReadAll(events_), (std::vector<Row>{Row{std::string("hello")}}));
  std::string checkpoint;
  bool found = false;
  ASSERT_TRUE(store_->GetCheckpoint("flow1", &checkpoint, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(checkpoint, "offset=7");
  EXPECT_EQ(store_->ListTables().size(), 2u);
}

TEST_F(TableTest, TimeTravelByVersionAndTimestamp) {
  CreateUsers();  // v1
  std::vector<uint64_t> stamps;
  for (int i = 0; i < 5; ++i) {  // v2..v6
    Transaction txn;
    txn.Write(users_, User(i % 2, "v" + std::to_string(i)));
    if (i == 3) txn.Delete(users_, Row{int64_t{0}});
    stamps.push_back(Commit(txn).timestamp_us);
  }
  ReadOptions at;
  at.version = 2;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(0, "v0")}));
  at.version = 4;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(0, "v2"), User(1, "v1")}));
  at.version = 5;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(1, "v3")}));
  ReadOptions by_time;
  by_time.timestamp_us = stamps[2] + 1;  // between v4 and v5
  uint64_t version_read = 0;
  std::vector<Row> rows;
  ASSERT_TRUE(store_
                  ->Read(
                      users_, by_time,
                      [&](const Row& r) {
                        rows.push_back(r);
                        return true;
                      },
                      nullptr, &version_read)
                  .ok());
  EXPECT_EQ(version_read, 4u);
  EXPECT_EQ(rows, (std::vector<Row>{User(0, "v2"), User(1, "v1")}));
  // The same after the state is applied to LMDB and the store reopened.
  Reopen();
  at.version = 4;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(0, "v2"), User(1, "v1")}));

  Status s;
  at.version = 99;
  ReadAll(users_, at, &s);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("versions 1 ("), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find(") to 6 ("), std::string::npos) << s.ToString();
}

TEST_F(TableTest, ChangesMadeOutOfKeyOrderTravelBackInKeyOrder) {
  // A commit's replaced rows go to the history index sorted by key; these
  // keys share their first 16 bytes and more, so the sort must look past
  // them, and one key is shorter than the others.
  const TableId names = CreateNames();
  std::vector<std::string> keys = {"customer/with/a/long/prefix"};
  for (int i = 0; i < 40; ++i) keys.push_back("customer/with/a/long/prefix/" + std::to_string(i * 37 % 41));
  Transaction first;
  for (const std::string& k : keys) first.Write(names, Row{k, int64_t{1}});
  const uint64_t v1 = Commit(first).version;
  Transaction second;  // every row again, in reverse order of the first
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) second.Write(names, Row{*it, int64_t{2}});
  Commit(second);
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Row> expected;
  for (const std::string& k : sorted) expected.push_back(Row{k, int64_t{1}});
  ReadOptions at;
  at.version = v1;
  EXPECT_EQ(ReadAll(names, at), expected);
  Reopen();  // and from LMDB
  EXPECT_EQ(ReadAll(names, at), expected);
}

// A read as of a version merges the history runs of every commit after it.
// These keys agree in the eight bytes after the prefix they all share (the
// merge sorts by those first), one is a prefix of others, and each key is
// changed in several runs: every version reads back as it was.
TEST_F(TableTest, KeysAlikeInTheirFirstBytesTravelBackThroughManyRuns) {
  const TableId names = CreateNames();
  std::vector<std::string> keys;
  for (const char* group : {"k/AAAAAAAA", "k/AAAAAAAB", "k/BBBBBBBB"}) {
    keys.push_back(group);
    for (int i = 0; i < 6; ++i) keys.push_back(std::string(group) + "/" + std::to_string(i * 5 % 7));
  }
  std::map<uint64_t, std::map<std::string, int64_t>> at_version;
  std::map<std::string, int64_t> model;
  for (int64_t c = 1; c <= 12; ++c) {
    Transaction w;
    for (size_t i = 0; i < keys.size(); ++i) {
      const uint64_t pick = (i * 7 + static_cast<uint64_t>(c) * 3) % 5;
      if (pick == 0 && model.count(keys[i]) != 0) {
        w.Delete(names, Row{keys[i]});
        model.erase(keys[i]);
      } else if (pick < 3) {
        w.Write(names, Row{keys[i], c});
        model[keys[i]] = c;
      }
    }
    at_version[Commit(w).version] = model;
  }
  for (bool reopened : {false, true}) {
    for (const auto& [v, rows] : at_version) {
      std::vector<Row> expected;
      for (const auto& [k, n] : rows) expected.push_back(Row{k, n});
      ReadOptions at;
      at.version = v;
      EXPECT_EQ(ReadAll(names, at), expected) << "version " << v << (reopened ? " after a reopen" : "");
      // A key range, its bounds inside the groups: the runs' entries
      // outside it skipped at either end.
      const std::string start = "k/AAAAAAAA/3", end = "k/BBBBBBBB/2";
      expected.clear();
      for (const auto& [k, n] : rows) {
        if (k >= start && k < end) expected.push_back(Row{k, n});
      }
      at.start_key = Row{start};
      at.end_key = Row{end};
      EXPECT_EQ(ReadAll(names, at), expected) << "version " << v << ", a key range";
    }
    Reopen();  // and from LMDB
  }
}

TEST_F(TableTest, SeveralChangesOfOneKeyInOneCommitTravelAsTheirSum) {
  CreateUsers();
  Transaction first;
  first.Write(users_, User(1, "a"));
  first.Write(users_, User(2, "b"));
  const uint64_t before = Commit(first).version;
  Transaction churn;
  churn.Write(users_, User(1, "a2"));  // updated, then deleted
  churn.Delete(users_, Row{int64_t{1}});
  churn.Delete(users_, Row{int64_t{2}});  // deleted, then back
  churn.Write(users_, User(2, "b3"));
  churn.Write(users_, User(3, "c"));  // inserted, then deleted
  churn.Delete(users_, Row{int64_t{3}});
  const uint64_t after = Commit(churn).version;
  Transaction later;
  later.Write(users_, User(4, "d"));
  Commit(later);
  for (bool reopened : {false, true}) {
    ReadOptions at;
    at.version = before;
    EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(1, "a"), User(2, "b")})) << reopened;
    at.version = after;
    EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(2, "b3")})) << reopened;
    Reopen();
  }
}

TEST_F(TableTest, TimeTravelOrdersKeysChangedInDifferentCommits) {
  // String keys sharing no prefix and of uneven lengths, each changed in a
  // commit of its own: the read as of the first version merges their
  // history runs and must keep key order.
  const TableId fruit = Id("main.default.fruit");
  Schema schema;
  ASSERT_TRUE(
      Schema::Make({{"name", ColumnType::kString, false}, {"n", ColumnType::kInt64, true}}, {"name"}, &schema).ok());
  Transaction create("CREATE TABLE");
  create.CreateTable(fruit, TableKind::kStreamingTable, schema);
  Commit(create);
  const std::vector<std::string> names = {"apple", "b", "banana", "cherry", "kiwi", "zucchini-long-name", "zz"};
  Transaction load;
  for (const std::string& name : names) load.Write(fruit, Row{name, int64_t{0}});
  const uint64_t loaded = Commit(load).version;
  for (size_t i = names.size(); i-- > 0;) {  // newest commits change the smallest keys
    Transaction change;
    change.Write(fruit, Row{names[i], static_cast<int64_t>(i + 1)});
    Commit(change);
  }
  std::vector<Row> expected;
  for (const std::string& name : names) expected.push_back(Row{name, int64_t{0}});
  ReadOptions at;
  at.version = loaded;
  EXPECT_EQ(ReadAll(fruit, at), expected);
  at.version = loaded + 3;  // the three largest keys changed
  for (size_t i = names.size() - 3; i < names.size(); ++i) expected[i] = Row{names[i], static_cast<int64_t>(i + 1)};
  EXPECT_EQ(ReadAll(fruit, at), expected);
}

TEST_F(TableTest, AddColumnKeepsOldRowsAndOldVersionsKeepTheOldSchema) {
  CreateUsers();
  Transaction w;
  w.Write(users_, User(1, "a"));
  Commit(w);  // v2
  Transaction alter("ALTER TABLE");
  alter.AddColumn(users_, Column{"age", ColumnType::kInt64, true});
  Commit(alter);  // v3
  Transaction w2;
  w2.Write(users_, Row{int64_t{2}, std::string("b"), int64_t{30}});
  Commit(w2);  // v4
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{Row{int64_t{1}, std::string("a"), std::monostate{}},
                                               Row{int64_t{2}, std::string("b"), int64_t{30}}}));
  ReadOptions at;
  at.version = 2;
  TableInfo then;
  std::vector<Row> rows;
  ASSERT_TRUE(store_
                  ->Read(
                      users_, at,
                      [&](const Row& r) {
                        rows.push_back(r);
                        return true;
                      },
                      &then)
                  .ok());
  EXPECT_EQ(then.schema.columns().size(), 2u);
  EXPECT_EQ(rows, (std::vector<Row>{User(1, "a")}));

  Transaction bad("ALTER TABLE");
  bad.AddColumn(users_, Column{"must", ColumnType::kInt64, false});
  Status s = store_->Commit(bad);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("nullable"), std::string::npos);
}

TEST_F(TableTest, RowsAfterAnAlterInTheSameTransactionMeetTheNewColumns) {
  // Commit reads its rows' keys a few operations ahead; a row read ahead of
  // an ALTER in the same transaction is checked again against the table as
  // the ALTER leaves it.
  CreateUsers();
  Transaction stale;
  stale.Write(users_, User(1, "a"));
  stale.AddColumn(users_, Column{"age", ColumnType::kInt64, true});
  stale.Write(users_, User(2, "b"));  // the old width
  Status s = store_->Commit(stale);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("operation 3 of 3"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("row has 2 values but the table has 3 columns"), std::string::npos) << s.ToString();
  EXPECT_TRUE(ReadAll(users_).empty());

  Transaction fresh;
  fresh.Write(users_, User(1, "a"));
  fresh.AddColumn(users_, Column{"age", ColumnType::kInt64, true});
  fresh.Write(users_, Row{int64_t{2}, std::string("b"), int64_t{30}});
  fresh.Write(users_, Row{int64_t{1}, std::string("c"), int64_t{40}});  // over the first row
  Commit(fresh);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{Row{int64_t{1}, std::string("c"), int64_t{40}},
                                               Row{int64_t{2}, std::string("b"), int64_t{30}}}));
}

TEST_F(TableTest, DroppedAndRecreatedTableTravelsToTheOldOne) {
  CreateUsers();
  Transaction w;
  w.Write(users_, User(1, "old"));
  Commit(w);  // v2
  Transaction drop("DROP TABLE");
  drop.DropTable(users_);
  Commit(drop);  // v3
  Status s;
  ReadAll(users_, {}, &s);
  EXPECT_TRUE(s.IsNotFound());
  CreateUsers();  // v4
  Transaction w2;
  w2.Write(users_, User(2, "new"));
  Commit(w2);  // v5
  ReadOptions at;
  at.version = 2;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(1, "old")}));
  at.version = 3;
  ReadAll(users_, at, &s);
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(2, "new")}));
  // Restoring the new table to a version of the old one is refused.
  EXPECT_TRUE(store_->Restore(users_, 2).IsInvalidArgument());
}

// Within one transaction, a table dropped and created again is the new
// table for the operations after: rows written before the drop go with
// the old one, and a write after the drop but before the create is refused.
TEST_F(TableTest, ATableDroppedAndCreatedAgainInOneTransactionIsTheNewOneAfter) {
  CreateUsers();
  Transaction w;
  w.Write(users_, User(1, "old"));
  Commit(w);
  Transaction again("REPLACE TABLE");
  again.Write(users_, User(2, "gone with the old table"));
  again.DropTable(users_);
  again.CreateTable(users_, TableKind::kStreamingTable, UsersSchema());
  again.Write(users_, User(3, "new"));
  Commit(again);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(3, "new")}));

  Transaction refused("REPLACE TABLE");
  refused.DropTable(users_);
  refused.Write(users_, User(4, "no table"));
  refused.CreateTable(users_, TableKind::kStreamingTable, UsersSchema());
  const Status s = store_->Commit(refused);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("does not exist"), std::string::npos) << s.ToString();
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(3, "new")}));
}

// A table reference is good for the transaction that gave it: a write by
// another's is refused with a clear error, and changes nothing.
TEST_F(TableTest, AWriteByAnotherTransactionsTableReferenceIsRefused) {
  CreateUsers();
  Transaction other;
  other.Table(Id("main.default.elsewhere"));
  const Transaction::TableRef foreign = other.Table(users_);  // index 1
  Transaction txn;
  txn.Write(users_, User(1, "kept out"));
  txn.Write(foreign, User(2, "foreign"));
  const Status s = store_->Commit(txn);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("table reference"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("operation 2 of 2"), std::string::npos) << s.ToString();
  EXPECT_TRUE(ReadAll(users_).empty());
}

TEST_F(TableTest, ChangeFeedCarriesPreimagesFromTheFirstCommit) {
  Transaction create("CREATE TABLE AS SELECT");
  create.CreateTable(users_, TableKind::kStreamingTable, UsersSchema());
  create.Write(users_, User(1, "a"));
  const uint64_t v1 = Commit(create).version;
  Transaction update;
  update.Write(users_, User(1, "A"));
  update.Write(users_, User(2, "b"));
  Commit(update);
  Transaction del;
  del.Delete(users_, Row{int64_t{2}});
  Commit(del);
  const std::vector<ChangeRow> feed = Feed(users_, v1);
  ASSERT_EQ(feed.size(), 5u);
  EXPECT_EQ(feed[0].change_type, ChangeType::kInsert);
  EXPECT_EQ(feed[0].commit_version, 1u);
  EXPECT_EQ(feed[1].change_type, ChangeType::kUpdatePreimage);
  EXPECT_EQ(feed[1].row, User(1, "a"));
  EXPECT_EQ(feed[2].change_type, ChangeType::kUpdatePostimage);
  EXPECT_EQ(feed[2].row, User(1, "A"));
  EXPECT_EQ(feed[3].change_type, ChangeType::kInsert);
  EXPECT_EQ(feed[4].change_type, ChangeType::kDelete);
  EXPECT_EQ(feed[4].row, User(2, "b"));
  EXPECT_EQ(feed[4].commit_version, 3u);
  EXPECT_EQ(Feed(users_, 2, 2).size(), 3u);
  EXPECT_TRUE(store_->Changes(users_, 3, 2, [](const ChangeRow&) { return true; }).IsInvalidArgument());
  EXPECT_TRUE(store_->Changes(users_, 1, 9, [](const ChangeRow&) { return true; }).IsInvalidArgument());
}

TEST_F(TableTest, HistoryListsEveryCommitOfTheTableNewestFirst) {
  CreateUsers();
  Transaction other("CREATE TABLE");
  other.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
  Commit(other);
  Transaction w("WRITE", R"({"mode":"Append"})");
  w.SetUpdateId("update-1");
  w.Write(users_, User(1, "a"));
  w.Write(users_, User(2, "b"));
  Commit(w);
  Transaction w2;
  w2.Write(users_, User(1, "x"));
  w2.Delete(users_, Row{int64_t{2}});
  Commit(w2);
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(users_, &history).ok());
  ASSERT_EQ(history.size(), 3u);  // not the other table's commit
  EXPECT_EQ(history[0].version, 4u);
  EXPECT_EQ(history[0].metrics.at("numUpdatedRows"), 1);
  EXPECT_EQ(history[0].metrics.at("numDeletedRows"), 1);
  EXPECT_EQ(history[1].operation, "WRITE");
  EXPECT_EQ(history[1].parameters_json, R"({"mode":"Append"})");
  EXPECT_EQ(history[1].update_id, "update-1");
  EXPECT_EQ(history[1].metrics.at("numOutputRows"), 2);
  EXPECT_EQ(history[2].operation, "CREATE TABLE");
  ASSERT_TRUE(store_->History(users_, &history, 1).ok());
  EXPECT_EQ(history.size(), 1u);
}

TEST_F(TableTest, RestoreWritesTheDifferenceAsOneCommit) {
  CreateUsers();
  Transaction w;
  w.Write(users_, User(1, "a"));
  w.Write(users_, User(2, "b"));
  Commit(w);  // v2
  Transaction bad;
  bad.Write(users_, User(1, "BAD"));
  bad.Write(users_, User(3, "BAD"));
  bad.Delete(users_, Row{int64_t{2}});
  Commit(bad);  // v3
  CommitResult r;
  ASSERT_TRUE(store_->Restore(users_, 2, &r).ok());
  EXPECT_EQ(r.version, 4u);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "a"), User(2, "b")}));
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(users_, &history, 1).ok());
  EXPECT_EQ(history[0].operation, "RESTORE");
  EXPECT_EQ(history[0].metrics.at("numRestoredRows"), 2);
  EXPECT_EQ(history[0].metrics.at("numRemovedRows"), 1);
  // The feed shows what the restore did to the rows.
  const std::vector<ChangeRow> feed = Feed(users_, 4, 4);
  ASSERT_EQ(feed.size(), 4u);  // update 1 (pre+post), delete 3, insert 2
}

TEST_F(TableTest, KeylessTablesAppendTruncateAndRestore) {
  Transaction create("CREATE TABLE");
  create.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
  Commit(create);
  for (int i = 0; i < 3; ++i) {
    Transaction w;
    w.Write(events_, Row{std::string("e") + std::to_string(i)});
    w.Write(events_, Row{std::monostate{}});
    Commit(w);
  }
  EXPECT_EQ(ReadAll(events_).size(), 6u);
  EXPECT_EQ(ReadAll(events_)[0], Row{std::string("e0")});
  Transaction truncate("FULL REFRESH");
  truncate.Truncate(events_);
  Commit(truncate);  // v5
  EXPECT_TRUE(ReadAll(events_).empty());
  EXPECT_EQ(Feed(events_, 5, 5).size(), 6u);
  ASSERT_TRUE(store_->Restore(events_, 3).ok());
  EXPECT_EQ(ReadAll(events_), (std::vector<Row>{Row{std::string("e0")}, Row{std::monostate{}}, Row{std::string("e1")},
                                                Row{std::monostate{}}}));
}

TEST_F(TableTest, StateIsRebuiltFromTheLogWhenLmdbIsDeleted) {
  CreateUsers();
  for (int i = 0; i < 10; ++i) {
    Transaction w;
    w.Write(users_, User(i, "n" + std::to_string(i)));
    Commit(w);
  }
  store_.reset();
  std::filesystem::remove_all(state_.Sub("state"));
  Open();
  EXPECT_EQ(ReadAll(users_).size(), 10u);
  EXPECT_EQ(store_->ListTables().size(), 1u);
}

TEST_F(TableTest, SnapshotRebuildsStateAfterVacuumDroppedTheLogPrefix) {
  CreateUsers();
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  env_.SetNowMicros(env_.NowMicros() + kHour);
  for (int i = 0; i < 300; ++i) {
    Transaction w;
    w.Write(users_, User(i % 50, std::string(1000, static_cast<char>('a' + i % 26))));
    Commit(w);
  }
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  VacuumOptions vacuum;
  vacuum.retain_us = kHour;
  VacuumReport report;
  EXPECT_TRUE(store_->Vacuum(vacuum, &report).IsInvalidArgument());  // below the safety minimum
  vacuum.force = true;
  vacuum.dry_run = true;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_GT(report.log_segments, 0u);
  EXPECT_TRUE(report.snapshot_taken);
  const uint64_t oldest_before = store_->log()->Oldest().version;
  EXPECT_EQ(oldest_before, 1u);  // a dry run deletes nothing
  vacuum.dry_run = false;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_GT(store_->log()->Oldest().version, 1u);
  std::vector<SnapshotInfo> snapshots;
  ASSERT_TRUE(store_->ListSnapshots(&snapshots).ok());
  ASSERT_EQ(snapshots.size(), 1u);
  const std::vector<Row> expected = ReadAll(users_);
  store_.reset();
  std::filesystem::remove_all(state_.Sub("state"));
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  EXPECT_EQ(ReadAll(users_), expected);
  // Versions before the floor are gone, with an error naming the range.
  ReadOptions at;
  at.version = 2;
  Status s;
  ReadAll(users_, at, &s);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("are"), std::string::npos);
}

// PINS keeps what rewind points need from vacuum: a truncated or changed
// file is damage, reported naming the file and the way out, never a store
// that silently has fewer pins.
TEST_F(TableTest, ADamagedPinsFileIsReportedNotReadAsFewerPins) {
  CreateUsersAndWrite(3);
  ASSERT_TRUE(store_->AddPin("a", 2).ok());
  ASSERT_TRUE(store_->AddPin("b", 3).ok());
  store_.reset();
  std::string pins;
  ASSERT_TRUE(ReadFileToString(&env_, "/s/PINS", &pins).ok());
  auto write = [&](const std::string& bytes) {
    std::unique_ptr<File> file;
    ASSERT_TRUE(env_.OpenFile("/s/PINS", OpenMode::kTruncate, &file).ok());
    ASSERT_TRUE(file->Write(0, bytes).ok());
  };
  for (const std::string& damaged :
       {pins.substr(0, pins.size() - 4),  // cut at the end of the first pin's line
        pins.substr(0, pins.find('\n') + 1), std::string(pins).replace(pins.size() - 2, 1, "7")}) {
    write(damaged);
    std::unique_ptr<Store> store;
    Status s = Store::Open(Options(), "/s", &store);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.ToString().find("/s/PINS is damaged"), std::string::npos) << s.ToString();
    EXPECT_NE(s.ToString().find("Delete it"), std::string::npos) << s.ToString();
  }
  // What stores before the checksum wrote still reads, and is rewritten with it.
  write("a 2\nb 3\n");
  Open();
  EXPECT_EQ(store_->Pins(), (std::vector<std::pair<std::string, uint64_t>>{{"a", 2}, {"b", 3}}));
  ASSERT_TRUE(store_->RemovePin("b").ok());
  Reopen();
  EXPECT_EQ(store_->Pins(), (std::vector<std::pair<std::string, uint64_t>>{{"a", 2}}));
  ASSERT_TRUE(ReadFileToString(&env_, "/s/PINS", &pins).ok());
  EXPECT_TRUE(pins.starts_with("spool pins 1 1 ")) << pins;
}

// A dry run writes nothing, so that it also answers on a full disk: not
// even the staged state goes to LMDB.
TEST_F(TableTest, AVacuumDryRunWritesNothing) {
  StoreOptions options = Options();
  options.state_batch_commits = 1000;
  options.state_background_apply = false;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  CreateUsers();
  for (int i = 0; i < 3; ++i) {
    Transaction txn("WRITE");
    txn.Write(users_, User(i, "u"));
    Commit(txn);
  }
  const uint64_t batches = store_->Stats().state_batches;
  VacuumOptions vacuum = ForcedVacuum();
  vacuum.dry_run = true;
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_EQ(store_->Stats().state_batches, batches);
  vacuum.dry_run = false;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_GT(store_->Stats().state_batches, batches);  // a real one makes the state durable first
}

// One flipped bit in the newest log record looks like a torn write, which
// recovery would cut. The state had applied that commit, so it had been
// acknowledged: opening fails naming it, and the log is left as it is.
TEST_F(TableTest, ADamagedNewestCommitThatTheStateAppliedIsCorruptionNotALoss) {
  CreateUsersAndWrite(3);
  ASSERT_TRUE(store_->FlushState().ok());
  std::string path, intact, damaged;
  const Status s = CloseDamagingTheNewestRecord(&path, &intact, &damaged);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("version 4 of epoch 1 is damaged or missing"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("the store's state had applied them"), std::string::npos) << s.ToString();
  std::string after;
  ASSERT_TRUE(ReadFileToString(&env_, path, &after).ok());
  EXPECT_EQ(after, damaged);
}

// A close leaves a few commits staged for the next open to replay rather
// than apply them to the state; the log's clean close vouches for them
// instead: one damaged is Corruption too, and an intact store reopens with
// every commit.
TEST_F(TableTest, ACommitTheCloseLeftToReplayIsVouchedForByTheCleanClose) {
  CreateUsersAndWrite(3);
  ASSERT_TRUE(store_->FlushState().ok());
  const uint64_t batches = store_->Stats().state_batches;
  Transaction w;
  w.Write(users_, User(100, "left to the replay"));
  Commit(w);
  EXPECT_EQ(store_->Stats().state_batches, batches);
  std::string path, intact, damaged;
  const Status s = CloseDamagingTheNewestRecord(&path, &intact, &damaged);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("version 5 of epoch 1 is damaged or missing"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("the log's last clean close had synced them"), std::string::npos) << s.ToString();

  ASSERT_TRUE(WriteFileAtomically(&env_, path, intact).ok());
  ASSERT_NO_FATAL_FAILURE(Reopen(Options()));
  EXPECT_EQ(ReadAll(users_),
            (std::vector<Row>{User(0, "u0"), User(1, "u1"), User(2, "u2"), User(100, "left to the replay")}));
}

TEST_F(TableTest, VacuumKeepsWhatPinsAndLiveReadersNeed) {
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;  // about 55 commits a segment
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  env_.SetNowMicros(env_.NowMicros() + kHour);
  CreateUsers();
  for (int i = 0; i < 300; ++i) {
    Transaction w;
    w.Write(users_, User(i, std::string(1000, 'x')));
    Commit(w);
  }
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  ASSERT_TRUE(store_->AddPin("rewind-point-1", 150).ok());
  const VacuumOptions vacuum = ForcedVacuum();
  VacuumReport report;
  {
    std::unique_ptr<VersionPin> reader = store_->PinVersion(100);
    Status s = store_->Vacuum(vacuum, &report);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(report.held_by, "a live reader");
    EXPECT_EQ(report.floor_version, 100u);
    EXPECT_LE(store_->log()->Oldest().version, 100u);
    EXPECT_GT(store_->log()->Oldest().version, 1u);
  }
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_EQ(report.held_by, "pin rewind-point-1");
  EXPECT_LE(store_->log()->Oldest().version, 150u);
  EXPECT_GT(store_->log()->Oldest().version, 100u);
  ReadOptions at;
  at.version = 150;
  EXPECT_EQ(ReadAll(users_, at).size(), 149u);
  // Pins survive a reopen.
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  EXPECT_EQ(store_->Pins().size(), 1u);
  ASSERT_TRUE(store_->RemovePin("rewind-point-1").ok());
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_GT(store_->log()->Oldest().version, 150u);
  EXPECT_EQ(ReadAll(users_).size(), 300u);
  // A pin cannot bring back what vacuum removed: refused, nothing pinned.
  Status s = store_->AddPin("too-late", 150);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find("oldest version the log keeps"), std::string::npos) << s.ToString();
  EXPECT_TRUE(store_->Pins().empty());
}

TEST_F(TableTest, VacuumDropsIndexEntriesNoRetainedVersionReads) {
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  env_.SetNowMicros(env_.NowMicros() + kHour);
  CreateUsers();
  for (int i = 0; i < 300; ++i) {  // 50 keys, each updated or deleted every 50 versions
    Transaction w;
    if (i % 7 == 3) w.Delete(users_, Row{int64_t{i % 50}});
    else w.Write(users_, User(i % 50, std::to_string(i) + std::string(1000, 'x')));
    Commit(w);
  }
  std::map<uint64_t, std::vector<Row>> before;
  for (uint64_t v = 1; v <= store_->log()->Newest().version; ++v) {
    ReadOptions at;
    at.version = v;
    before[v] = ReadAll(users_, at);
  }
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  ASSERT_TRUE(store_->AddPin("rewind-point", 200).ok());
  const VacuumOptions vacuum = ForcedVacuum();
  VacuumReport report;
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  const uint64_t oldest = store_->log()->Oldest().version;
  ASSERT_GT(oldest, 50u);  // a whole round of updates went, so their entries can
  EXPECT_GT(report.history_runs, 0u);
  for (bool reopened : {false, true}) {
    for (uint64_t v = oldest; v <= store_->log()->Newest().version; ++v) {
      ReadOptions at;
      at.version = v;
      EXPECT_EQ(ReadAll(users_, at), before[v]) << "version " << v << (reopened ? " after a reopen" : "");
    }
    ASSERT_NO_FATAL_FAILURE(Reopen(options));
  }
  ASSERT_TRUE(store_->Vacuum(vacuum, &report).ok());
  EXPECT_EQ(report.history_runs, 0u);  // nothing more until the floor moves
}

// The history before the floor answers no retained read: vacuum drops it
// and, with most of the state's file then free pages, compacts the file
// (LMDB never shortens it), freeing the space. Every retained version
// reads as before, the floor included, before and after a reopen; the
// versions below the floor that the log still holds read from the log.
TEST_F(TableTest, VacuumDropsTheHistoryBelowTheFloorAndCompactsTheState) {
  StoreOptions options = Options();
  options.state_batch_commits = 8;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  env_.SetNowMicros(env_.NowMicros() + kHour);
  CreateUsers();
  for (int i = 0; i < 100; ++i) {  // each commit rewrites the same 40 users: a 40 KB history run each
    Transaction w;
    for (int u = 0; u < 40; ++u) w.Write(users_, User(u, Incompressible(1000, static_cast<uint64_t>(100 * i + u))));
    Commit(w);
  }
  const uint64_t newest = store_->log()->Newest().version;
  const uint64_t floor = newest - 10;
  std::map<uint64_t, std::vector<Row>> before;
  for (uint64_t v = 2; v <= newest; ++v) {
    ReadOptions at;
    at.version = v;
    before[v] = ReadAll(users_, at);
  }
  env_.SetNowMicros(env_.NowMicros() + 1000 * kHour);
  ASSERT_TRUE(store_->AddPin("rewind-point", floor).ok());
  auto state_bytes = [&] {
    uint64_t bytes = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(state_.Sub("state"))) {
      if (entry.is_regular_file()) bytes += entry.file_size();
    }
    return bytes;
  };
  const uint64_t bytes_before = state_bytes();
  VacuumReport report;
  Status s = store_->Vacuum(ForcedVacuum(), &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(report.floor_version, floor);
  EXPECT_EQ(report.history_runs, floor - 2);  // the updates' runs at versions 3 .. floor
  EXPECT_TRUE(report.state_compacted);
  EXPECT_LT(report.state_bytes_after * 4, report.state_bytes_before);
  // The retired file is gone when Vacuum returns.
  EXPECT_LT(state_bytes() * 4, bytes_before);
  for (bool reopened : {false, true}) {
    for (uint64_t v = 2; v <= newest; ++v) {
      ReadOptions at;
      at.version = v;
      EXPECT_EQ(ReadAll(users_, at), before[v]) << "version " << v << (reopened ? " after a reopen" : "");
    }
    ASSERT_NO_FATAL_FAILURE(Reopen(options));
  }
  // It takes commits on, and a second vacuum finds nothing more to drop.
  Transaction w;
  w.Write(users_, User(1, "after"));
  Commit(w);
  ASSERT_TRUE(store_->Vacuum(ForcedVacuum(), &report).ok());
  EXPECT_EQ(report.history_runs, 0u);
  EXPECT_FALSE(report.state_compacted);
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  EXPECT_EQ(ReadAll(users_).size(), 40u);
}

// A history run is stored LZ4-compressed when that saves an eighth, and
// read back whole: as-of reads through 40 KB runs of rows that compress
// well are right, before and after a reopen, and the state holds a fraction
// of the runs' 4 MB.
TEST_F(TableTest, HistoryRunsAreStoredCompressedAndReadBack) {
  StoreOptions options = Options();
  options.state_batch_commits = 8;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  CreateUsers();
  for (int i = 0; i < 100; ++i) {
    Transaction w;
    for (int u = 0; u < 40; ++u) {
      w.Write(users_, User(u, std::to_string(i) + std::string(1000, static_cast<char>('a' + u % 26))));
    }
    Commit(w);
  }
  const uint64_t newest = store_->log()->Newest().version;
  std::map<uint64_t, std::vector<Row>> before;
  for (uint64_t v = 2; v <= newest; v += 7) {
    ReadOptions at;
    at.version = v;
    before[v] = ReadAll(users_, at);
    ASSERT_EQ(before[v].size(), 40u);
  }
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  for (const auto& [v, rows] : before) {
    ReadOptions at;
    at.version = v;
    EXPECT_EQ(ReadAll(users_, at), rows) << "version " << v;
  }
  uint64_t state_bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(state_.Sub("state"))) {
    if (entry.is_regular_file()) state_bytes += entry.file_size();
  }
  EXPECT_LT(state_bytes, 1u << 20);
}

TEST(HistoryRunTest, ASmallOrIncompressibleRunIsKeptAsItIsAndADamagedOneIsRefused) {
  const auto run_of = [](int rows, const std::function<std::string(int)>& row) {
    std::string run;
    for (int i = 0; i < rows; ++i) AppendHistoryEntry(&run, "key" + std::to_string(1000 + i), 7, row(i));
    return run;
  };
  const std::string small = run_of(10, [](int) { return std::string(100, 'x'); });
  const std::string noise = run_of(20, [](int i) { return Incompressible(1000, static_cast<uint64_t>(i)); });
  const std::string run = run_of(20, [](int) { return std::string(1000, 'x'); });
  EXPECT_TRUE(SealHistoryRun(small) == small);
  EXPECT_TRUE(SealHistoryRun(noise) == noise);
  const std::string sealed = SealHistoryRun(run);
  ASSERT_LT(sealed.size(), run.size() / 8);
  EXPECT_EQ(sealed[0], kCompressedRunTag);
  // Opened together: the plain ones read in place, the compressed one whole.
  std::vector<std::string_view> runs{small, sealed, noise, sealed};
  RunMemory memory;
  OpenedRuns opened(&memory);
  ASSERT_TRUE(opened.Open(&runs).ok());
  EXPECT_EQ(runs[0].data(), small.data());
  EXPECT_EQ(runs[2].data(), noise.data());
  EXPECT_TRUE(runs[1] == run && runs[3] == run);
  EXPECT_EQ(opened.shared_prefix(), 5u);  // key1000 … key1019
  // Past a megabyte, on two threads: each run in its own place.
  std::vector<std::string_view> many(64, sealed);
  OpenedRuns big(&memory);
  ASSERT_TRUE(big.Open(&many).ok());
  for (std::string_view one : many) EXPECT_TRUE(one == run);
  // Cut short, claiming more bytes than it holds, or none: refused, not
  // read past.
  for (const std::string& damaged : {sealed.substr(0, sealed.size() - 5), sealed.substr(0, 2),
                                     std::string(1, kCompressedRunTag) + "\xff\xff\xff\xff\x0f" + sealed.substr(4),
                                     std::string(1, kCompressedRunTag) + std::string(1, '\0') + sealed.substr(4)}) {
    std::vector<std::string_view> one{small, damaged};
    OpenedRuns again(&memory);
    EXPECT_TRUE(again.Open(&one).IsCorruption());
    EXPECT_EQ(one[1].data(), damaged.data());  // left as it was
  }
  // A plain run cut short, or with its keys out of order or twice (the
  // merge of a read relies on each run being sorted): refused.
  std::string backwards, twice;
  AppendHistoryEntry(&backwards, "b", 7, "x");
  AppendHistoryEntry(&backwards, "a", 7, "x");
  AppendHistoryEntry(&twice, "a", 7, "x");
  AppendHistoryEntry(&twice, "a", 8, "y");
  for (const std::string& damaged : {small.substr(0, small.size() - 1), backwards, twice}) {
    std::vector<std::string_view> one{damaged, sealed};
    OpenedRuns again(&memory);
    EXPECT_TRUE(again.Open(&one).IsCorruption());
    EXPECT_EQ(one[1].data(), sealed.data());  // the runs left as they were
  }
}

// Reads reuse the memory their runs decompress into: the kept buffer when
// it is big enough, a fresh one (then kept, being larger) when not, and a
// second one while the first is taken.
TEST(HistoryRunTest, ReadsReuseTheMemoryTheirRunsDecompressInto) {
  RunMemory memory;
  std::unique_ptr<RunBuffer> first, second;
  ASSERT_TRUE(memory.Take(100'000, &first).ok());
  ASSERT_GE(first->size(), 100'000u);
  ASSERT_TRUE(memory.Take(100, &second).ok());
  EXPECT_NE(first->data(), second->data());  // the first is taken
  const char* kept = first->data();
  memory.Give(std::move(first));
  memory.Give(std::move(second));  // smaller: not kept
  ASSERT_TRUE(memory.Take(100, &first).ok());
  EXPECT_EQ(first->data(), kept);
  memory.Give(std::move(first));
  ASSERT_TRUE(memory.Take(10'000'000, &second).ok());
  EXPECT_NE(second->data(), kept);
  const char* larger = second->data();
  memory.Give(std::move(second));
  ASSERT_TRUE(memory.Take(5'000'000, &first).ok());
  EXPECT_EQ(first->data(), larger);
}

TEST_F(TableTest, InlineApplyMatchesBackgroundApply) {
  background_ = false;
  batch_commits_ = 3;
  Reopen();
  CreateUsers();
  for (int i = 0; i < 10; ++i) {
    Transaction w;
    w.Write(users_, User(i % 4, std::to_string(i)));
    Commit(w);
  }
  EXPECT_GE(store_->Stats().state_batches, 3u);
  EXPECT_EQ(ReadAll(users_).size(), 4u);
  ReadOptions at;
  at.version = 3;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(0, "0"), User(1, "1")}));
}

TEST_F(TableTest, StringsWithNulBytesSurviveTheLogAndAReopen) {
  const std::string nul("a\0b", 3);
  Transaction txn("CREATE TABLE", "{\"note\":\"x\"}");
  txn.CreateTable(users_, TableKind::kStreamingTable, UsersSchema(), {{"p", nul}});
  txn.AddMetric(std::string("m\0x", 3), 1);
  txn.AddMetric("m", 2);
  txn.Write(users_, User(1, nul));
  Commit(txn);
  Reopen();
  TableInfo table;
  ASSERT_TRUE(store_->GetTable(users_, &table).ok());
  EXPECT_EQ(table.properties.at("p"), nul);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, nul)}));
  std::vector<HistoryEntry> history;
  ASSERT_TRUE(store_->History(users_, &history).ok());
  ASSERT_EQ(history.size(), 1u);
  EXPECT_EQ(history[0].metrics.at(std::string("m\0x", 3)), 1);
  EXPECT_EQ(history[0].metrics.at("m"), 2);
}

TEST_F(TableTest, ReadersDuringCommitsAndBatchHandOffsSeeWholeCommits) {
  // Batches written by the committer, so that there are many hand-offs
  // (a background applier merges what queues while it writes).
  background_ = false;
  Reopen();
  CreateUsers();
  std::atomic<bool> done{false};
  std::atomic<int> torn{0};
  std::atomic<int> reads{0};
  // Commit i writes key i and key 1000 + i together: every read must see
  // both or neither, and a prefix of the commits.
  std::thread reader([&] {
    while (!done.load()) {
      std::set<int64_t> keys;
      Status s = store_->Read(users_, {}, [&](const Row& row) {
        keys.insert(std::get<int64_t>(row[0]));
        return true;
      });
      if (!s.ok()) ++torn;
      const int64_t n = static_cast<int64_t>(keys.size() / 2);
      for (int64_t i = 0; i < n; ++i) {
        if (keys.count(i) == 0 || keys.count(1000 + i) == 0) {
          ++torn;
          break;
        }
      }
      if (keys.size() % 2 != 0) ++torn;
      ++reads;
    }
  });
  for (int64_t i = 0; i < 300; ++i) {
    Transaction txn;
    txn.Write(users_, User(i, "a"));
    txn.Write(users_, User(1000 + i, "b"));
    Commit(txn);
  }
  done = true;
  reader.join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(reads.load(), 0);
  EXPECT_GE(store_->Stats().state_batches, 10u);
  EXPECT_EQ(ReadAll(users_).size(), 600u);
}

// With the store closed: flips a byte in the first block of snapshot
// `file_name`, and deletes the LMDB state, so that opening rebuilds it.
void DamageSnapshotAndLoseTheState(MemEnv* env, const std::string& state_dir, const std::string& file_name) {
  const std::string path = "/s/snapshots/" + file_name;
  std::string bytes;
  ASSERT_TRUE(ReadFileToString(env, path, &bytes).ok());
  bytes[100] = static_cast<char>(bytes[100] ^ 0x40);
  ASSERT_TRUE(WriteFileAtomically(env, path, bytes).ok());
  std::filesystem::remove_all(state_dir);
}

TEST_F(TableTest, DamagedSnapshotIsRefusedNamingTheFileAndAnOlderOneServes) {
  CreateUsers();
  Transaction w;
  w.Write(users_, User(1, "a"));
  Commit(w);
  SnapshotInfo first, second;
  ASSERT_TRUE(store_->TakeSnapshot(&first).ok());
  Transaction w2;
  w2.Write(users_, User(2, "b"));
  Commit(w2);
  ASSERT_TRUE(store_->TakeSnapshot(&second).ok());
  store_.reset();
  // Flip a byte in the newest snapshot's first block, then lose the state.
  ASSERT_NO_FATAL_FAILURE(DamageSnapshotAndLoseTheState(&env_, state_.Sub("state"), second.file_name));
  Open();
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "a"), User(2, "b")}));
  // Not silently: a WARN event names the damaged snapshot.
  EventQuery query;
  query.event_type = "snapshot_damaged";
  std::vector<Event> events;
  ASSERT_TRUE(store_->events()->Query(query, &events).ok());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, EventLevel::kWarn);
  EXPECT_NE(events[0].message.find(second.file_name), std::string::npos) << events[0].message;
}

// With no usable snapshot left, the error names the damaged ones rather
// than saying there is none.
TEST_F(TableTest, WhenNoSnapshotCanRebuildTheStateTheErrorNamesTheDamagedOnes) {
  StoreOptions options = Options();
  options.log.segment_size_bytes = 64 << 10;
  ASSERT_NO_FATAL_FAILURE(Reopen(options));
  CreateUsers();
  for (int i = 0; i < 400; ++i) {
    Transaction w;
    w.Write(users_, User(i, std::string(200, 'x')));
    Commit(w);
  }
  SnapshotInfo snapshot;
  ASSERT_TRUE(store_->TakeSnapshot(&snapshot).ok());
  uint64_t deleted = 0;
  ASSERT_TRUE(store_->log()->DeleteSegmentsBefore(snapshot.version, &deleted).ok());
  ASSERT_GT(deleted, 0u);
  store_.reset();
  ASSERT_NO_FATAL_FAILURE(DamageSnapshotAndLoseTheState(&env_, state_.Sub("state"), snapshot.file_name));
  std::unique_ptr<Store> store;
  Status s = Store::Open(options, "/s", &store);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("damaged snapshot " + snapshot.file_name), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace spool

namespace spool {
namespace {

TEST_F(TableTest, LastChangeBoundFollowsEachTablesCommits) {
  CreateUsers();
  Transaction create("CREATE TABLE");
  create.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
  Commit(create);
  auto bound = [&](const TableId& id) {
    TableInfo table;
    EXPECT_TRUE(store_->GetTable(id, &table).ok());
    return store_->LastChangeBound(table);
  };
  Transaction write;
  write.Write(users_, User(1, "ann"));
  const uint64_t users_changed = Commit(write).version;
  EXPECT_EQ(bound(users_), users_changed);
  EXPECT_EQ(bound(events_), 2u);  // created at version 2, untouched since
  for (int i = 0; i < 5; ++i) {
    Transaction append;
    append.Write(events_, Row{"e" + std::to_string(i)});
    Commit(append);
  }
  EXPECT_EQ(bound(users_), users_changed);
  Transaction truncate;
  truncate.Truncate(users_);
  const uint64_t truncated = Commit(truncate).version;
  EXPECT_EQ(bound(users_), truncated);
  // After a reopen, commits the state had applied are not seen one by one:
  // the bound is the version the store opened at, never below a change.
  Reopen();
  const uint64_t newest = store_->AvailableVersions().newest;
  EXPECT_GE(bound(users_), truncated);
  EXPECT_LE(bound(users_), newest);
  Transaction again;
  again.Write(users_, User(2, "bob"));
  const uint64_t changed_again = Commit(again).version;
  EXPECT_EQ(bound(users_), changed_again);
}

// Commits replacing many rows have their history runs made on the store's
// helper while they are written: time travel through them, queued behind
// one another or committed one at a time, reads what each version held,
// from the staged state and after a reopen from LMDB.
TEST_F(TableTest, BigCommitsTravelThroughTheHistoryTheirHelperMade) {
  CreateUsers();
  constexpr int64_t kUsers = 1'000;
  std::map<int64_t, std::string> model;
  Transaction load;
  for (int64_t id = 0; id < kUsers; ++id) load.Write(users_, User(id, model[id] = "v0-" + std::to_string(id)));
  std::vector<std::pair<uint64_t, std::map<int64_t, std::string>>> versions;
  versions.emplace_back(Commit(load).version, model);
  std::vector<PendingCommit> pending(4);
  for (int c = 1; c <= 6; ++c) {
    Transaction change;
    for (int64_t i = 0; i < 600; ++i) {  // overlapping the commit before
      const int64_t id = (c * 300 + i * 7) % kUsers;
      change.Write(users_, User(id, model[id] = "v" + std::to_string(c) + "-" + std::to_string(id)));
    }
    for (int64_t id = c; id < kUsers; id += 97) {
      change.Delete(users_, {id});
      model.erase(id);
    }
    if (c <= 4) {
      ASSERT_TRUE(store_->CommitAsync(change, &pending[static_cast<size_t>(c - 1)]).ok());
      versions.emplace_back(versions.back().first + 1, model);
    } else {
      versions.emplace_back(Commit(change).version, model);
    }
  }
  for (PendingCommit& p : pending) ASSERT_TRUE(store_->Wait(&p, nullptr).ok());
  for (bool reopened : {false, true}) {
    for (const auto& [version, rows] : versions) {
      std::vector<Row> expected;
      for (const auto& [id, name] : rows) expected.push_back(User(id, name));
      ReadOptions at;
      at.version = version;
      EXPECT_EQ(ReadAll(users_, at), expected) << "version " << version << (reopened ? ", reopened" : "");
    }
    Reopen();
  }
}

// CommitAsync: a commit queued behind one that is still syncing builds on
// it (its pre-images, the versions its history names), and readers see
// neither until they are durable.
TEST_F(TableTest, QueuedCommitsBuildOnEachOtherAndShowOnceDurable) {
  testing::GatedSyncEnv gated(&env_);
  ReopenOn(&gated);
  CreateUsers();
  Transaction first;
  first.Write(users_, User(1, "ann"));
  first.Write(users_, User(2, "bob"));
  const uint64_t v1 = Commit(first).version;
  gated.Close();
  Transaction second, third;
  second.Write(users_, User(1, "anna"));
  second.Delete(users_, {int64_t{2}});
  third.Write(users_, User(1, "annie"));
  third.Write(users_, User(3, "cy"));
  PendingCommit pending2, pending3;
  ASSERT_TRUE(store_->CommitAsync(second, &pending2).ok());
  ASSERT_TRUE(store_->CommitAsync(third, &pending3).ok());
  gated.WaitForBlockedSyncs(1);  // the second's sync
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "ann"), User(2, "bob")}));
  gated.Open();
  // Durable, so the log shows it, though not yet waited for: a read as of
  // it sees it.
  while (store_->log()->Newest().version < v1 + 2) std::this_thread::yield();
  ReadOptions third_version;
  third_version.version = v1 + 2;
  EXPECT_EQ(ReadAll(users_, third_version), (std::vector<Row>{User(1, "annie"), User(3, "cy")}));
  CommitResult result2, result3;
  ASSERT_TRUE(store_->Wait(&pending3, &result3).ok());
  ASSERT_TRUE(store_->Wait(&pending2, &result2).ok());
  EXPECT_EQ(result2.version, v1 + 1);
  EXPECT_EQ(result3.version, v1 + 2);
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "annie"), User(3, "cy")}));
  ReadOptions at;
  at.version = result2.version;
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(1, "anna")}));
  // The third commit's pre-image of row 1 is the queued second's row.
  std::vector<std::tuple<ChangeType, uint64_t, Row>> feed;
  for (const ChangeRow& c : Feed(users_, result2.version, result3.version))
    feed.emplace_back(c.change_type, c.commit_version, c.row);
  const std::vector<std::tuple<ChangeType, uint64_t, Row>> expected = {
      {ChangeType::kUpdatePreimage, result2.version, User(1, "ann")},
      {ChangeType::kUpdatePostimage, result2.version, User(1, "anna")},
      {ChangeType::kDelete, result2.version, User(2, "bob")},
      {ChangeType::kUpdatePreimage, result3.version, User(1, "anna")},
      {ChangeType::kUpdatePostimage, result3.version, User(1, "annie")},
      {ChangeType::kInsert, result3.version, User(3, "cy")},
  };
  EXPECT_EQ(feed, expected);
  Reopen();  // and as the log replays them
  EXPECT_EQ(ReadAll(users_, at), (std::vector<Row>{User(1, "anna")}));
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "annie"), User(3, "cy")}));
}

// A truncate within a transaction drops what the transaction looked up
// ahead of it (the writes after it were prefetched before it ran): rows
// written after it are inserts, whether their keys were there before or not.
// (Under AddressSanitizer, also that no look-up reads what the truncate's
// reads left behind.)
TEST_F(TableTest, RowsWrittenAfterATruncateInTheSameTransactionAreInserts) {
  CreateUsers();
  Transaction first;
  for (int64_t id = 1; id <= 4; ++id) first.Write(users_, User(id, "a"));
  Commit(first);
  Transaction second;
  second.Write(users_, User(2, "b"));
  second.Truncate(users_);
  for (int64_t id : {1, 5, 2}) second.Write(users_, User(id, "c"));
  const uint64_t v = Commit(second).version;
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "c"), User(2, "c"), User(5, "c")}));
  std::vector<std::pair<ChangeType, Row>> feed;
  for (const ChangeRow& c : Feed(users_, v, v)) feed.emplace_back(c.change_type, c.row);
  using C = ChangeType;
  EXPECT_EQ(feed, (std::vector<std::pair<ChangeType, Row>>{{C::kUpdatePreimage, User(2, "a")},
                                                           {C::kUpdatePostimage, User(2, "b")},
                                                           {C::kDelete, User(1, "a")},
                                                           {C::kDelete, User(2, "b")},
                                                           {C::kDelete, User(3, "a")},
                                                           {C::kDelete, User(4, "a")},
                                                           {C::kInsert, User(1, "c")},
                                                           {C::kInsert, User(5, "c")},
                                                           {C::kInsert, User(2, "c")}}));
}

// The state's LMDB map is as big as StoreOptions::state_map_bytes says: a
// state that outgrows a small one fails with NoSpace, where the default
// holds it.
TEST_F(TableTest, AStateThatOutgrowsItsMapFailsWithNoSpace) {
  CreateUsers();
  const auto fill = [&] {
    Status s;
    for (int64_t i = 0; i < 40 && s.ok(); ++i) {
      Transaction w;
      for (int64_t j = 0; j < 50; ++j) w.Write(users_, User(i * 50 + j, std::string(1000, 'x')));
      s = store_->Commit(w, nullptr);
    }
    return s.ok() ? store_->FlushState() : s;  // 2 MB of rows
  };
  StoreOptions small = Options();
  small.state_background_apply = false;
  small.state_batch_commits = 1;
  small.state_map_bytes = 1 << 20;
  ASSERT_NO_FATAL_FAILURE(Reopen(small));
  const Status s = fill();
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  store_.reset();
  std::filesystem::remove_all(state_.Sub("state"));
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_TRUE(fill().ok());
}

TEST_F(TableTest, AFailedSyncFailsTheCommitsQueuedBehindItAndShowsNone) {
  FaultEnv fault(&env_);
  testing::GatedSyncEnv gated(&fault);
  ReopenOn(&gated);
  CreateUsers();
  Transaction first;
  first.Write(users_, User(1, "ann"));
  Commit(first);
  gated.Close();
  fault.FailSyncAtCall(fault.io_calls() + 2);  // the second's log write, then its sync
  Transaction second, third;
  second.Write(users_, User(1, "anna"));
  third.Write(users_, User(2, "bob"));
  PendingCommit pending2, pending3;
  ASSERT_TRUE(store_->CommitAsync(second, &pending2).ok());
  gated.WaitForBlockedSyncs(1);
  ASSERT_TRUE(store_->CommitAsync(third, &pending3).ok());  // built on the second
  gated.Open();
  EXPECT_TRUE(store_->Wait(&pending2).IsIOError());
  EXPECT_TRUE(store_->Wait(&pending3).IsFailed());
  EXPECT_EQ(ReadAll(users_), (std::vector<Row>{User(1, "ann")}));
  EXPECT_TRUE(store_->Commit(third).IsFailed());
  store_.reset();  // closed while its Env is alive: the logs' close writes CLOSED
}

}  // namespace
}  // namespace spool
