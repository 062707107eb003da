// A randomized campaign over the reference documents' story, told again
// and again in random order: orders arrive, updates run, a bad deployment
// (a definition change that doubles the amounts) goes out, the pipeline is
// rewound — whole, by point or by timestamp, or orders and what is
// downstream of it — and the fix deployed and replayed; full refreshes and
// refreshes of selected tables in between. Two oracles, after every step:
//
//   - a shop that never had the bad deployment, given the same orders: when
//     this shop runs the good definition, has no bad data left and has read
//     all its input, every table equals that shop's;
//   - readers of the change feed: one kept from the feed alone after every
//     step, and readers that stopped at earlier versions (some of which a
//     rewind later cut) and catch up from there; each ends equal to the
//     table.
//
// SPOOL_CAMPAIGN_STEPS sets the length (CI runs the default; the figures in
// docs/rewind.md come from longer runs).
#include <cstdlib>
#include <map>
#include <random>
#include <set>

#include "conformance.h"

namespace spool::conformance {
namespace {

using Rows = std::multiset<std::string>;  // a table's rows as text

// A reader of one table's change feed: the rows it holds and the last
// version it read.
struct Reader {
  Rows rows;
  uint64_t at = 0;
};

class CampaignTest : public ConformanceTest {
 protected:
  void SetUp() override {
    shop_ = MakeShop("shop");
    reference_ = MakeShop("reference");
    const char* steps = std::getenv("SPOOL_CAMPAIGN_STEPS");
    if (steps != nullptr) steps_ = std::strtoull(steps, nullptr, 10);
  }

  static TableId Id(const std::string& table) {
    TableId id;
    EXPECT_TRUE(TableId::Parse(table, &id).ok()) << table;
    return id;
  }

  // Applies the feed after `reader->at` to its rows; every pre-image must be
  // a row it holds.
  void CatchUp(const std::string& table, Reader* reader) {
    const uint64_t newest = shop_->Newest();
    if (reader->at >= newest) return;
    const Status s = shop_->store()->Changes(Id(table), reader->at + 1, 0, [&](const ChangeRow& c) {
      const std::string row = RowText(c.row);
      if (c.change_type == ChangeType::kInsert || c.change_type == ChangeType::kUpdatePostimage) {
        reader->rows.insert(row);
        return true;
      }
      auto it = reader->rows.find(row);
      EXPECT_NE(it, reader->rows.end()) << table << ": the feed takes away " << row << " at version "
                                        << c.commit_version << ", which the reader does not hold";
      if (it != reader->rows.end()) reader->rows.erase(it);
      return true;
    });
    ASSERT_TRUE(s.ok()) << table << " from " << reader->at + 1 << ": " << s.ToString();
    reader->at = newest;
  }

  Rows Table(const std::string& table) {
    const std::vector<std::string> rows = shop_->Rows(table);
    return Rows(rows.begin(), rows.end());
  }

  void ExpectReadersEqualTheTables(std::mt19937_64& rng) {
    for (const std::string& table : ShopTables()) {
      const Rows now = Table(table);
      ASSERT_NO_FATAL_FAILURE(CatchUp(table, &followers_[table]));
      EXPECT_EQ(followers_[table].rows, now) << table << ": the reader that follows the feed";
      // A reader that stopped earlier (perhaps at a version a rewind has
      // cut since) catches up.
      std::vector<Reader>& stopped = stopped_[table];
      if (!stopped.empty()) {
        Reader reader = stopped[rng() % stopped.size()];
        const uint64_t from = reader.at;
        ASSERT_NO_FATAL_FAILURE(CatchUp(table, &reader));
        EXPECT_EQ(reader.rows, now) << table << ": a reader that had stopped at version " << from;
      }
      if (rng() % 3 == 0) stopped.push_back(followers_[table]);
    }
  }

  void Produce(int64_t count) {
    shop_->Produce(next_order_, count);
    reference_->Produce(next_order_, count);
    next_order_ += count;
  }

  void Update(const std::string& body = "{}") {
    ASSERT_EQ(shop_->Run(body), "COMPLETED") << body;
    if (bad_) dirty_ = true;  // what the bad definition made is in the tables
  }

  void DeployBad() {
    point_ = shop_->RecordPeriodicPoint();
    shop_->Tick(30);
    between_ = shop_->Timestamp();  // after the last good commit, before the first bad one
    shop_->Tick(30);
    ShopSpecOptions bad = shop_->spec_options();
    bad.amount_expr = "amount * 2";
    shop_->Deploy(bad);
    bad_ = true;
  }

  // Back to before the bad deployment, then the fix.
  void RewindAndFix(std::mt19937_64& rng) {
    const uint64_t how = rng() % 3;
    std::string body;
    if (how == 0) body = R"({"rewind_spec": {"rewind_point_id": ")" + point_.id + R"("}})";
    if (how == 1) body = R"({"rewind_spec": {"rewind_timestamp": ")" + between_ + R"("}})";
    if (how == 2) body = Shop::RewindBody("rewind_point_id", point_.id, "main.shop.orders");
    ASSERT_EQ(shop_->Run(body), "COMPLETED") << body;
    ++rewinds_;
    DeployFix(*shop_);
    bad_ = false;
    dirty_ = false;
  }

  // The good definition, no bad data, everything read: like the reference.
  void ExpectLikeTheReference() {
    if (bad_ || dirty_) return;
    ASSERT_EQ(shop_->Run(), "COMPLETED");
    ASSERT_EQ(reference_->Run(), "COMPLETED");
    EXPECT_EQ(DifferingTables(*shop_, *reference_), "");
    ++compared_;
  }

  void Step(std::mt19937_64& rng) {
    const uint64_t roll = rng() % 100;
    if (roll < 30) {
      Produce(1 + static_cast<int64_t>(rng() % 6));
    } else if (roll < 55) {
      Update();
    } else if (roll < 62) {
      Update(R"({"refresh_selection": ["main.shop.orders"]})");
    } else if (roll < 70 && !bad_) {
      DeployBad();
    } else if (roll < 85 && bad_) {
      RewindAndFix(rng);
    } else if (roll < 90 && !bad_) {
      Update(R"({"full_refresh": true})");
    } else {
      ExpectLikeTheReference();
    }
  }

  std::unique_ptr<Shop> shop_, reference_;
  uint64_t steps_ = 250;
  int64_t next_order_ = 1;
  bool bad_ = false;    // the bad definition is deployed
  bool dirty_ = false;  // and has run: the tables hold what it made
  RewindPoint point_;   // before the bad deployment
  std::string between_;
  std::map<std::string, Reader> followers_;
  std::map<std::string, std::vector<Reader>> stopped_;
  uint64_t rewinds_ = 0, compared_ = 0;
};

TEST_F(CampaignTest, RewindReplayRefreshAndDefinitionChangesEqualTheStoreThatNeverHadTheBadDeploymentAndTheFeed) {
  std::mt19937_64 rng(20261204);
  for (uint64_t step = 0; step < steps_ && !HasFailure(); ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    ASSERT_NO_FATAL_FAILURE(Step(rng));
    ASSERT_NO_FATAL_FAILURE(ExpectReadersEqualTheTables(rng));
  }
  if (bad_) {
    ASSERT_NO_FATAL_FAILURE(RewindAndFix(rng));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectLikeTheReference());
  ASSERT_NO_FATAL_FAILURE(ExpectReadersEqualTheTables(rng));
  std::printf(
      "[campaign] %llu steps: %llu rewinds, %llu comparisons with the store that never had the bug, "
      "version %llu\n",
      static_cast<unsigned long long>(steps_), static_cast<unsigned long long>(rewinds_),
      static_cast<unsigned long long>(compared_), static_cast<unsigned long long>(shop_->Newest()));
  EXPECT_GT(rewinds_, 0u);
  EXPECT_GT(compared_, 1u);
}

}  // namespace
}  // namespace spool::conformance
