#include "stream_events.h"

#include <charconv>
#include <numeric>

#include <fmt/format.h>

#include "check.h"
#include "records.h"
#include "units.h"

namespace spool::bench {
namespace {

constexpr uint64_t kEventSeed = 0x57ea3e7e47ull;
constexpr int64_t kMicrosPerEvent = 1'000;
constexpr char kKeyField[] = "\"key\":";
constexpr char kAmountField[] = "\"amount\":";

int64_t Total(const std::vector<KeyTotals>& totals) {
  return std::accumulate(totals.begin(), totals.end(), int64_t{0},
                         [](int64_t n, const KeyTotals& t) { return n + t.count; });
}

// The integer after `field` in `message`.
bool FindInt(std::string_view message, std::string_view field, int64_t* value) {
  const size_t at = message.find(field);
  if (at == std::string_view::npos) return false;
  const char* begin = message.data() + at + field.size();
  return std::from_chars(begin, message.data() + message.size(), *value).ec == std::errc();
}

}  // namespace

StreamEvent EventAt(uint64_t offset, uint64_t keys) {
  const uint64_t h = Mix(kEventSeed ^ offset);
  const uint64_t span = static_cast<uint64_t>(kMaxAmount - kMinAmount + 1);
  return StreamEvent{static_cast<int64_t>(h % keys), kMinAmount + static_cast<int64_t>((h >> 32) % span)};
}

void EventMessage(uint64_t offset, std::string* out, uint64_t keys) {
  const StreamEvent e = EventAt(offset, keys);
  out->clear();
  fmt::format_to(std::back_inserter(*out),
                 R"({{"key":{},"amount":{},"at":{},"note":"order {:010d} from customer {} shipped"}})", e.key, e.amount,
                 kEpochUs + static_cast<int64_t>(offset) * kMicrosPerEvent, offset % 10'000'000'000ull, e.key);
}

std::vector<std::string> EventMessages(uint64_t first, uint64_t count, uint64_t keys) {
  std::vector<std::string> messages(count);
  for (uint64_t i = 0; i < count; ++i) EventMessage(first + i, &messages[i], keys);
  return messages;
}

std::vector<Column> EventColumns() {
  return {Column{"key", ColumnType::kInt64, false}, Column{"amount", ColumnType::kInt64, false},
          Column{"at", ColumnType::kTimestamp, false}, Column{"note", ColumnType::kString, false}};
}

bool ParseEventMessage(std::string_view message, StreamEvent* event) {
  return FindInt(message, kKeyField, &event->key) && FindInt(message, kAmountField, &event->amount);
}

std::vector<KeyTotals> ModelTotals(uint64_t events, bool positive_only, uint64_t keys) {
  std::vector<KeyTotals> totals(keys);
  for (uint64_t offset = 0; offset < events; ++offset) {
    const StreamEvent e = EventAt(offset, keys);
    if (positive_only && e.amount <= 0) continue;
    KeyTotals& t = totals[static_cast<size_t>(e.key)];
    ++t.count;
    t.sum += e.amount;
  }
  return totals;
}

uint64_t DistinctKeys(uint64_t first, uint64_t count, uint64_t keys) {
  std::vector<bool> seen(keys, false);
  uint64_t distinct = 0;
  for (uint64_t offset = first; offset < first + count; ++offset) {
    const auto key = static_cast<size_t>(EventAt(offset, keys).key);
    if (!seen[key]) ++distinct;
    seen[key] = true;
  }
  return distinct;
}

void CheckTotals(std::string_view engine, const std::vector<KeyTotals>& got, const std::vector<KeyTotals>& expected) {
  const int64_t events = Total(expected);
  if (Total(got) != events) {
    throw BenchError(
        fmt::format("{}: exactly-once broken: the output's per-key counts add up to {} events, {} were "
                    "read",
                    engine, Total(got), events));
  }
  for (size_t key = 0; key < expected.size(); ++key) {
    const KeyTotals have = key < got.size() ? got[key] : KeyTotals{};
    if (have == expected[key]) continue;
    throw BenchError(fmt::format("{}: key {} has count {} and sum {} in the output, {} and {} expected", engine, key,
                                 have.count, have.sum, expected[key].count, expected[key].sum));
  }
  if (got.size() > expected.size()) throw BenchError(std::string(engine) + ": the output has keys out of range");
}

}  // namespace spool::bench
