// Versions across rewinds: a version names the same data forever (whether
// the current history holds it or a rewind cut it to the archive), and a
// table kept up to date only from the change feed ends equal to the table,
// from whatever version its reader had read last — one a later rewind cut
// included. Random writes, truncations (a full refresh's), restores and
// rewinds, checked after every step.
#include <map>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "table_fixture.h"

namespace spool {
namespace {

// Both tables' rows: users (keyed) by id, events (keyless) as a multiset.
struct Content {
  std::map<int64_t, std::string> users;
  std::multiset<std::string> events;
  bool operator==(const Content&) const = default;
};

std::string Describe(const Content& c) {
  std::string out = "users {";
  for (const auto& [id, name] : c.users) out += " " + std::to_string(id) + ":" + name;
  out += " } events {";
  for (const std::string& e : c.events) out += " " + e;
  return out + " }";
}

void PrintTo(const Content& c, std::ostream* out) { *out << Describe(c); }

class VersionFeedTest : public TableTest, public ::testing::WithParamInterface<uint64_t> {
 protected:
  void SetUp() override {
    TableTest::SetUp();
    Transaction txn("CREATE TABLE");
    txn.CreateTable(users_, TableKind::kStreamingTable, UsersSchema());
    txn.CreateTable(events_, TableKind::kStreamingTable, EventsSchema());
    Committed(Commit(txn).version);
  }

  Content ReadContent(std::optional<uint64_t> version) {
    ReadOptions at;
    at.version = version;
    Content content;
    for (const Row& row : ReadAll(users_, at)) content.users[std::get<int64_t>(row[0])] = std::get<std::string>(row[1]);
    for (const Row& row : ReadAll(events_, at)) content.events.insert(std::get<std::string>(row[0]));
    return content;
  }

  // A new version on the history: what it names, from now on.
  void Committed(uint64_t version) {
    named_[version] = ReadContent(std::nullopt);
    history_.push_back(version);
  }

  // Applies the change feed of [from, newest] of both tables to `content`,
  // checking that every pre-image is the row the reader holds.
  void ApplyFeed(uint64_t from, Content* content) {
    Status s = store_->Changes(users_, from, 0, [&](const ChangeRow& c) {
      const int64_t id = std::get<int64_t>(c.row[0]);
      const std::string& name = std::get<std::string>(c.row[1]);
      switch (c.change_type) {
        case ChangeType::kInsert:
        case ChangeType::kUpdatePostimage:
          content->users[id] = name;
          break;
        case ChangeType::kUpdatePreimage:
          EXPECT_EQ(content->users[id], name) << "update pre-image of user " << id << " at " << c.commit_version;
          break;
        case ChangeType::kDelete:
          EXPECT_EQ(content->users[id], name) << "delete of user " << id << " at " << c.commit_version;
          content->users.erase(id);
          break;
      }
      return true;
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = store_->Changes(events_, from, 0, [&](const ChangeRow& c) {
      const std::string& msg = std::get<std::string>(c.row[0]);
      if (c.change_type == ChangeType::kInsert) {
        content->events.insert(msg);
      } else {
        EXPECT_EQ(c.change_type, ChangeType::kDelete);
        auto it = content->events.find(msg);
        EXPECT_NE(it, content->events.end()) << "delete of event " << msg << " at " << c.commit_version;
        if (it != content->events.end()) content->events.erase(it);
      }
      return true;
    });
    ASSERT_TRUE(s.ok()) << s.ToString();
  }

  uint64_t Newest() { return store_->log()->Newest().version; }

  // One random step.
  void Step(std::mt19937_64& rng, int step) {
    const uint64_t roll = rng() % 100;
    if (roll < 50) {
      Transaction txn("STREAMING UPDATE");
      for (uint64_t i = 0, n = 1 + rng() % 4; i < n; ++i) {
        const auto id = static_cast<int64_t>(rng() % 8);
        if (rng() % 4 == 0) txn.Delete(users_, Row{id});
        else txn.Write(users_, User(id, "s" + std::to_string(step) + "." + std::to_string(i)));
      }
      for (uint64_t i = 0, n = rng() % 3; i < n; ++i) {
        txn.Write(events_, Row{"e" + std::to_string(step) + "." + std::to_string(i)});
      }
      Committed(Commit(txn).version);
    } else if (roll < 58) {
      Transaction txn("FULL REFRESH");  // what a full refresh does to the rows
      if (rng() % 2 == 0) txn.Truncate(users_);
      else txn.Truncate(events_);
      Committed(Commit(txn).version);
    } else if (roll < 75 && history_.size() > 1) {
      // A whole-store rewind to a version of the current history.
      const uint64_t target = history_[rng() % (history_.size() - 1)];
      LogPosition head;
      ASSERT_TRUE(store_->RewindTo(target, &head).ok());
      EXPECT_EQ(ReadContent(std::nullopt), named_[target]) << "rewound to " << target;
      while (history_.back() != target) history_.pop_back();
      named_[head.version] = named_[target];
      history_.push_back(head.version);
    } else if (roll < 85) {
      // A restore of users to any version it ever had, cut ones included.
      auto it = named_.begin();
      std::advance(it, static_cast<long>(rng() % named_.size()));
      CommitResult result;
      const Status s = store_->Restore(users_, it->first, &result);
      ASSERT_TRUE(s.ok()) << "restore to " << it->first << ": " << s.ToString();
      Committed(result.version);
      EXPECT_EQ(named_[result.version].users, it->second.users) << "restored to " << it->first;
    } else if (roll < 90) {
      ASSERT_TRUE(store_->TakeSnapshot().ok());
    } else if (roll < 95) {
      ASSERT_TRUE(store_->SaveStateCopy().ok());
    } else {
      Reopen();
    }
  }

  // The checks after a step: the reader that follows the feed, and readers
  // that stopped at random earlier versions; and those versions read back.
  void Check(std::mt19937_64& rng) {
    const Content now = ReadContent(std::nullopt);
    if (follower_at_ != Newest()) {
      ASSERT_NO_FATAL_FAILURE(ApplyFeed(follower_at_ + 1, &follower_));
      follower_at_ = Newest();
    }
    EXPECT_EQ(follower_, now) << "the reader following the feed: " << Describe(follower_) << " vs " << Describe(now);
    for (int i = 0; i < 4; ++i) {
      auto it = named_.begin();
      std::advance(it, static_cast<long>(rng() % named_.size()));
      const auto& [version, content] = *it;
      EXPECT_EQ(ReadContent(version), content) << "version " << version << " reads as something else now";
      if (version == Newest()) continue;
      Content reader = content;
      ASSERT_NO_FATAL_FAILURE(ApplyFeed(version + 1, &reader));
      EXPECT_EQ(reader, now) << "a reader that stopped at version " << version << ": " << Describe(reader) << " vs "
                             << Describe(now);
    }
  }

  std::map<uint64_t, Content> named_;  // every version ever made: what it names
  std::vector<uint64_t> history_;      // the versions of the current history
  Content follower_;                   // kept only from the feed
  uint64_t follower_at_ = 0;
};

TEST_P(VersionFeedTest, VersionsNameTheSameDataForeverAndTheFeedKeepsEveryReaderEqualToTheTable) {
  std::mt19937_64 rng(GetParam());
  for (int step = 0; step < 150 && !HasFailure(); ++step) {
    ASSERT_NO_FATAL_FAILURE(Step(rng, step));
    ASSERT_NO_FATAL_FAILURE(Check(rng));
  }
  std::vector<Store::ArchivedCut> cuts;
  ASSERT_TRUE(store_->ListArchivedCuts(&cuts).ok());
  EXPECT_GT(cuts.size(), 5u);  // rewinds happened, some across earlier ones
}

INSTANTIATE_TEST_SUITE_P(Seeds, VersionFeedTest, ::testing::Values(11u, 12u, 13u));

}  // namespace
}  // namespace spool
