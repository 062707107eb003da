// The staged state (StateOverlay) against a std::map model: point reads,
// reads in key order over ranges within one table's keys and across
// families, and merging, with deletes.
#include <map>
#include <random>

#include <gtest/gtest.h>

#include "state_store.h"

namespace spool {
namespace {

using Model = std::map<std::string, StateValue>;

// Keys of every family, so that ranges cross the overlay's per-table groups.
std::string RandomKey(std::mt19937_64& rng) {
  switch (rng() % 5) {
    case 0:
      return StateRowKey(rng() % 3, std::string(1 + rng() % 3, static_cast<char>('a' + rng() % 4)));
    case 1:
      return StateHistoryPrefix(rng() % 3) + std::string(1, static_cast<char>(rng() % 256));
    case 2:
      return StateCatalogKey(rng() % 3);
    case 3:
      return StateCheckpointKey(std::string(1 + rng() % 2, static_cast<char>('f' + rng() % 3)));
    default: {  // odd short keys of the other families ("r" and "h" keys always hold a table's prefix)
      char c = static_cast<char>(rng() % 256);
      if (c == 'r' || c == 'h') c = 'x';
      return std::string(1, c);
    }
  }
}

StateDelta RandomDelta(std::mt19937_64& rng, Model* model) {
  StateDelta delta;
  const int changes = static_cast<int>(rng() % 20);
  for (int i = 0; i < changes; ++i) {
    std::string key = RandomKey(rng);
    if (rng() % 4 == 0) {
      (*model)[key] = std::nullopt;
      delta.Delete(std::move(key));
    } else {
      const std::string value = "v" + std::to_string(rng() % 1000);
      (*model)[key] = value;
      delta.Put(std::move(key), value);
    }
  }
  return delta;
}

void ExpectRange(const StateOverlay& overlay, const Model& model, const std::string& begin, const std::string& end) {
  std::vector<std::pair<std::string, StateValue>> want;
  for (auto it = model.lower_bound(begin); it != model.end() && (end.empty() || it->first < end); ++it) {
    want.emplace_back(it->first, it->second);
  }
  EXPECT_EQ(overlay.Sorted(begin, end), want) << "range [" << begin << ", " << end << ")";
}

TEST(StateOverlayTest, MatchesAnOrderedMapUnderRandomCommits) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 50; ++round) {
    StateOverlay older, newer;
    Model model;
    for (int i = 0; i < 10; ++i) older.Add(RandomDelta(rng, &model));
    for (int i = 0; i < 10; ++i) newer.Add(RandomDelta(rng, &model));
    EXPECT_EQ(older.commits, 10u);
    StateOverlay merged = older;
    merged.Merge(newer);
    EXPECT_EQ(merged.commits, 20u);
    EXPECT_EQ(merged.size(), model.size());
    for (const auto& [key, value] : model) {
      const StateValue* found = merged.Find(key);
      ASSERT_NE(found, nullptr) << key;
      EXPECT_EQ(*found, value) << key;
    }
    EXPECT_EQ(merged.Find("zz-not-staged"), nullptr);
    ExpectRange(merged, model, "", "");
    for (int i = 0; i < 20; ++i) {
      std::string begin = RandomKey(rng), end = RandomKey(rng);
      if (end < begin) std::swap(begin, end);
      ExpectRange(merged, model, begin, end);
      ExpectRange(merged, model, begin, "");
    }
    // A table's rows alone, as a scan asks for them.
    const std::string prefix = StateRowPrefix(1);
    ExpectRange(merged, model, prefix, PrefixEnd(prefix));
  }
}

TEST(StateOverlayTest, ALaterChangeOfAKeyInOneCommitWins) {
  StateDelta delta;
  delta.Put(StateRowKey(1, "k"), "first");
  delta.Delete(StateRowKey(1, "k"));
  delta.Put(StateRowKey(1, "k"), "last");
  delta.Put(StateRowKey(1, "gone"), "x");
  delta.Delete(StateRowKey(1, "gone"));
  StateOverlay overlay;
  overlay.Add(std::move(delta));
  ASSERT_NE(overlay.Find(StateRowKey(1, "k")), nullptr);
  EXPECT_EQ(*overlay.Find(StateRowKey(1, "k")), "last");
  ASSERT_NE(overlay.Find(StateRowKey(1, "gone")), nullptr);
  EXPECT_FALSE(overlay.Find(StateRowKey(1, "gone"))->has_value());  // a staged delete, not "not staged"
  EXPECT_EQ(overlay.size(), 2u);
}

// A builder's staged changes: the newest value of each key is what Find
// sees, the keys keep the order first set, and moving them into a delta
// gives that delta what DeltaFromCommit would (one change per key, its
// bytes counted) and leaves nothing behind. Thousands of keys, most of them
// past std::string's inline buffer, so the index's views must survive the
// deque growing and the object being moved.
TEST(StagedChangesTest, NewestValueFoundInFirstSetOrderAndMovedWhole) {
  StagedChanges staged;
  std::vector<std::string> order;
  std::map<std::string, StateValue> model;
  for (int i = 0; i < 5000; ++i) {
    std::string key = StateRowKey(static_cast<uint64_t>(i % 3), "key-" + std::to_string(i % 2000));
    StateValue value = i % 7 == 0 ? StateValue() : StateValue("value " + std::to_string(i));
    if (model.count(key) == 0) order.push_back(key);
    model[key] = value;
    staged.Set(std::move(key), std::move(value));
  }
  StagedChanges moved = std::move(staged);
  ASSERT_EQ(moved.entries().size(), model.size());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(moved.entries()[i].first, order[i]);
    const StateValue* found = moved.Find(order[i]);
    ASSERT_NE(found, nullptr) << order[i];
    EXPECT_EQ(*found, model[order[i]]) << order[i];
  }
  EXPECT_EQ(moved.Find(StateRowKey(0, "absent")), nullptr);

  StateDelta delta;
  delta.Put("T-already-there", "x");
  moved.MoveInto(&delta);
  EXPECT_TRUE(moved.empty());
  EXPECT_EQ(moved.Find(order[0]), nullptr);
  ASSERT_EQ(delta.changes.size(), 1 + order.size());
  uint64_t bytes = std::string("T-already-there").size() + 1;
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(delta.changes[1 + i].first, order[i]);
    EXPECT_EQ(delta.changes[1 + i].second, model[order[i]]);
    bytes += order[i].size() + (model[order[i]] ? model[order[i]]->size() : 0);
  }
  EXPECT_EQ(delta.bytes, bytes);
}

}  // namespace
}  // namespace spool
