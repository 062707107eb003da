// The fixture of the table tests (table_test.cc, rewind_store_test.cc): a
// store on a MemEnv with its LMDB state in a temporary directory, and two
// tables, users (keyed) and events (keyless).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "spool/storage/store.h"
#include "spool/testing/mem_env.h"
#include "temp_dir.h"

namespace spool {

inline constexpr uint64_t kHour = 3600ull * 1000000;

inline TableId Id(const std::string& text) {
  TableId id;
  EXPECT_TRUE(TableId::Parse(text, &id).ok());
  return id;
}

inline Schema UsersSchema() {
  Schema schema;
  EXPECT_TRUE(
      Schema::Make({{"id", ColumnType::kInt64, false}, {"name", ColumnType::kString, true}}, {"id"}, &schema).ok());
  return schema;
}

inline Schema EventsSchema() {
  Schema schema;
  EXPECT_TRUE(Schema::Make({{"msg", ColumnType::kString, true}}, {}, &schema).ok());
  return schema;
}

inline Row User(int64_t id, const std::string& name) { return Row{id, name}; }

class TableTest : public ::testing::Test {
 protected:
  void SetUp() override { Open(); }

  StoreOptions Options() {
    StoreOptions options;
    options.env = &env_;
    options.state_dir = state_.Sub("state");
    options.state_background_apply = background_;
    options.state_batch_commits = batch_commits_;
    options.snapshot_every_versions = 0;
    options.snapshot_every_bytes = 0;
    return options;
  }
  void Open() { ASSERT_TRUE(Store::Open(Options(), "/s", &store_).ok()); }
  void Reopen() {
    store_.reset();
    Open();
  }
  // A vacuum keeping one hour, below the safety minimum.
  static VacuumOptions ForcedVacuum() {
    VacuumOptions vacuum;
    vacuum.retain_us = kHour;
    vacuum.force = true;
    return vacuum;
  }
  // Closes the store and opens it with `options`.
  void Reopen(const StoreOptions& options) {
    store_.reset();
    Status opened = Store::Open(options, "/s", &store_);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
  }

  // Closes the store and opens it on `env` (a wrapper of env_).
  void ReopenOn(Env* env) {
    StoreOptions options = Options();
    options.env = env;
    Reopen(options);
  }

  CommitResult Commit(const Transaction& txn) {
    CommitResult result;
    Status s = store_->Commit(txn, &result);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return result;
  }

  void CreateUsers() {
    Transaction txn("CREATE TABLE");
    txn.CreateTable(users_, TableKind::kStreamingTable, UsersSchema(), {{"pipelines.reset.allowed", "true"}});
    Commit(txn);
  }
  // main.default.names: a string key "k" and an int64 "n".
  TableId CreateNames() {
    Schema schema;
    EXPECT_TRUE(
        Schema::Make({{"k", ColumnType::kString, false}, {"n", ColumnType::kInt64, false}}, {"k"}, &schema).ok());
    const TableId names = Id("main.default.names");
    Transaction create("CREATE TABLE");
    create.CreateTable(names, TableKind::kStreamingTable, schema);
    Commit(create);
    return names;
  }
  // Closes the store, flips one bit of its newest log record (past the
  // record's 8-byte alignment padding, which no checksum covers) and opens
  // it again: that open's error. The segment's path and its bytes before
  // and after go in `*path`, `*intact` and `*damaged`.
  Status CloseDamagingTheNewestRecord(std::string* path, std::string* intact, std::string* damaged) {
    const LogSegmentInfo active = store_->log()->Segments().back();
    store_.reset();
    *path = "/s/log/" + active.file_name;
    EXPECT_TRUE(ReadFileToString(&env_, *path, intact).ok());
    *damaged = *intact;
    (*damaged)[active.data_end_bytes - 12] = static_cast<char>((*damaged)[active.data_end_bytes - 12] ^ 0x10);
    EXPECT_TRUE(WriteFileAtomically(&env_, *path, *damaged).ok());
    std::unique_ptr<Store> store;
    return Store::Open(Options(), "/s", &store);
  }
  // CreateUsers, then `commits` commits (versions 2, 3, …) of a user each.
  void CreateUsersAndWrite(int commits) {
    CreateUsers();
    for (int i = 0; i < commits; ++i) {
      Transaction txn("WRITE");
      txn.Write(users_, User(i, "u" + std::to_string(i)));
      Commit(txn);
    }
  }

  std::vector<Row> ReadAll(const TableId& id, ReadOptions options = {}, Status* status = nullptr) {
    std::vector<Row> rows;
    Status s = store_->Read(id, options, [&](const Row& row) {
      rows.push_back(row);
      return true;
    });
    if (status != nullptr) *status = s;
    else EXPECT_TRUE(s.ok()) << s.ToString();
    return rows;
  }

  std::vector<ChangeRow> Feed(const TableId& id, uint64_t from, uint64_t to = 0) {
    std::vector<ChangeRow> changes;
    Status s = store_->Changes(id, from, to, [&](const ChangeRow& c) {
      changes.push_back(c);
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return changes;
  }

  MemEnv env_;
  TempDir state_;
  bool background_ = true;
  uint64_t batch_commits_ = 4;
  std::unique_ptr<Store> store_;
  TableId users_ = Id("main.default.users");
  TableId events_ = Id("main.default.events");
};

}  // namespace spool
