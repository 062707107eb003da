// The events of the stream workloads (W4 and the end-to-end run), the same
// bytes for every engine: event `offset` is a JSON object of about 100 bytes
//
//   {"key":4821,"amount":377,"at":1700000000001000,"note":"order 0000000042 from customer 4821 shipped"}
//
// with a key drawn uniformly from `keys` keys (kStreamKeys unless a
// workload asks for another key space: W4's keys series) and an amount from
// [kMinAmount, kMaxAmount] (about 10% of amounts are <= 0, which the
// end-to-end run's filter drops). Both are a hash of the offset, so a model
// of what any prefix of the stream sums to is cheap to rebuild. With the
// default key space every function below gives what it always gave.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spool/storage/schema.h"

namespace spool::bench {

inline constexpr uint64_t kStreamKeys = 10'000;
inline constexpr int64_t kMinAmount = -99;
inline constexpr int64_t kMaxAmount = 900;

struct StreamEvent {
  int64_t key = 0;
  int64_t amount = 0;
};

// A key's aggregate: how many events it had and the sum of their amounts.
struct KeyTotals {
  int64_t count = 0;
  int64_t sum = 0;
  friend bool operator==(const KeyTotals&, const KeyTotals&) = default;
};

StreamEvent EventAt(uint64_t offset, uint64_t keys = kStreamKeys);
// The message value of event `offset`, into `out` (replaced).
void EventMessage(uint64_t offset, std::string* out, uint64_t keys = kStreamKeys);
// The messages of events [first, first + count).
std::vector<std::string> EventMessages(uint64_t first, uint64_t count, uint64_t keys = kStreamKeys);
// The columns of a message, as Spool's topic source declares them.
std::vector<Column> EventColumns();
// The peers' parser: key and amount out of a message, by their field names
// (the other fields are skipped unread). False when either is missing.
bool ParseEventMessage(std::string_view message, StreamEvent* event);

// Per-key totals (indexed by key) of events [0, events), of all of them or
// only of those with amount > 0.
std::vector<KeyTotals> ModelTotals(uint64_t events, bool positive_only, uint64_t keys = kStreamKeys);
// Distinct keys among events [first, first + count): the output rows of a
// step that reads them (one upsert per key touched).
uint64_t DistinctKeys(uint64_t first, uint64_t count, uint64_t keys = kStreamKeys);

// Checks the per-key totals an engine's output table holds against the
// model: the same keys with the same count and sum, so the counts add up
// to the events read, each exactly once. Throws BenchError naming `engine`
// and the first difference.
void CheckTotals(std::string_view engine, const std::vector<KeyTotals>& got, const std::vector<KeyTotals>& expected);

}  // namespace spool::bench
