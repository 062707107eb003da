#include "spool/storage/store.h"

#include <gtest/gtest.h>

#include "spool/testing/mem_env.h"
#include "temp_dir.h"

namespace spool {
namespace {

class StoreTest : public ::testing::Test {
 protected:
  StoreOptions Options(bool create = true) {
    StoreOptions options;
    options.env = &env_;
    options.create_if_missing = create;
    options.state_dir = state_.Sub("state");
    return options;
  }
  MemEnv env_;
  TempDir state_;
};

TEST_F(StoreTest, OpenCreatesTheLayoutAndKeepsWhatWasCommitted) {
  std::unique_ptr<Store> store;
  ASSERT_TRUE(Store::Open(Options(), "/s", &store).ok());
  EXPECT_TRUE(env_.FileExists("/s/STORE"));
  EXPECT_TRUE(env_.FileExists("/s/log/META"));
  EXPECT_TRUE(env_.FileExists("/s/events/META"));
  Schema schema;
  ASSERT_TRUE(Schema::Make({{"x", ColumnType::kInt64, true}}, {}, &schema).ok());
  TableId id;
  ASSERT_TRUE(TableId::Parse("a.b.c", &id).ok());
  Transaction txn("CREATE TABLE");
  txn.CreateTable(id, TableKind::kStreamingTable, schema);
  ASSERT_TRUE(store->Commit(txn).ok());
  Event event;
  event.event_type = "create_update";
  ASSERT_TRUE(store->events()->Append(&event).ok());
  store.reset();
  ASSERT_TRUE(Store::Open(Options(false), "/s", &store).ok());
  EXPECT_EQ(store->log()->Newest().version, 1u);
  EXPECT_EQ(store->ListTables().size(), 1u);
  std::vector<Event> events;
  ASSERT_TRUE(store->events()->Query(EventQuery{}, &events).ok());
  EXPECT_EQ(events.size(), 1u);
}

TEST_F(StoreTest, SecondOpenerGetsAClearBusyError) {
  std::unique_ptr<Store> first;
  ASSERT_TRUE(Store::Open(Options(), "/s", &first).ok());
  std::unique_ptr<Store> second;
  Status s = Store::Open(Options(), "/s", &second);
  EXPECT_TRUE(s.IsBusy()) << s.ToString();
  EXPECT_NE(s.message().find("is open in another process or handle"), std::string::npos);
  first.reset();
  EXPECT_TRUE(Store::Open(Options(), "/s", &second).ok());
}

TEST_F(StoreTest, MissingStoreIsNotFoundWithoutCreate) {
  std::unique_ptr<Store> store;
  EXPECT_TRUE(Store::Open(Options(false), "/nowhere", &store).IsNotFound());
  EXPECT_FALSE(env_.FileExists("/nowhere"));
}

TEST_F(StoreTest, CreationInterruptedBeforeTheMarkerIsRedone) {
  ASSERT_TRUE(env_.CreateDir("/s").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env_.OpenFile("/s/STORE.tmp", OpenMode::kTruncate, &file).ok());
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), "/s", &store);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(env_.FileExists("/s/STORE"));
}

TEST_F(StoreTest, ForeignDirectoryIsRefusedAndLeftAlone) {
  ASSERT_TRUE(env_.CreateDir("/home").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env_.OpenFile("/home/notes.txt", OpenMode::kTruncate, &file).ok());
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), "/home", &store);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  std::vector<std::string> names;
  ASSERT_TRUE(env_.ListDir("/home", &names).ok());
  EXPECT_EQ(names, std::vector<std::string>{"notes.txt"});
}

// Reserve makes room for the operations to come: adding them moves none
// of those before (a micro-batch's thousands of row writes would otherwise
// regrow the list a dozen times), and keeps their order.
TEST(TransactionTest, ReserveMakesRoomForTheOperationsToCome) {
  TableId id;
  ASSERT_TRUE(TableId::Parse("main.default.t", &id).ok());
  Transaction txn("WRITE");
  txn.Write(id, Row{int64_t{0}});
  txn.Reserve(1'000);
  const Transaction::Op* first = txn.ops().data();
  for (int64_t i = 1; i <= 1'000; ++i) txn.Write(id, Row{i});
  EXPECT_EQ(txn.ops().data(), first);
  ASSERT_EQ(txn.ops().size(), 1'001u);
  for (size_t i = 0; i < txn.ops().size(); ++i) {
    EXPECT_EQ(std::get<Transaction::WriteOp>(txn.ops()[i]).row, Row{static_cast<int64_t>(i)});
  }
  // Small reservations one after another still grow the list geometrically.
  Transaction small("WRITE");
  const Transaction::Op* home = nullptr;
  int moves = 0;
  for (int64_t i = 0; i < 1'000; ++i) {
    small.Reserve(1);
    small.Write(id, Row{i});
    moves += small.ops().data() != home;
    home = small.ops().data();
  }
  EXPECT_LE(moves, 11);  // one per doubling up to 1,024
}

// A transaction names each table once: Table() gives one reference per
// name, and its operations refer to their table by it, in the order made.
TEST(TransactionTest, NamesEachTableOnceAndItsOperationsByReference) {
  TableId a, b;
  ASSERT_TRUE(TableId::Parse("main.default.a", &a).ok());
  ASSERT_TRUE(TableId::Parse("main.other.a", &b).ok());  // same table name, another schema
  Transaction txn("WRITE");
  const Transaction::TableRef ra = txn.Table(a);
  txn.Write(b, Row{int64_t{1}});
  txn.Write(ra, Row{int64_t{2}});
  txn.Delete(a, Row{int64_t{3}});
  txn.Truncate(b);
  EXPECT_EQ(txn.Table(a), ra);
  EXPECT_EQ(txn.tables(), (std::vector<TableId>{a, b}));
  const Transaction::TableRef rb = txn.Table(b);
  EXPECT_NE(rb, ra);
  EXPECT_EQ(txn.table(ra), a);
  EXPECT_EQ(txn.table(rb), b);
  ASSERT_EQ(txn.ops().size(), 4u);
  EXPECT_EQ(std::get<Transaction::WriteOp>(txn.ops()[0]).table, rb);
  EXPECT_EQ(std::get<Transaction::WriteOp>(txn.ops()[1]).table, ra);
  EXPECT_EQ(std::get<Transaction::DeleteOp>(txn.ops()[2]).table, ra);
  EXPECT_EQ(std::get<Transaction::TruncateOp>(txn.ops()[3]).table, rb);
}

}  // namespace
}  // namespace spool
