#include "records.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cstring>

#include <fmt/format.h>

#include "units.h"

namespace spool::bench {
namespace {

constexpr std::array<std::string_view, 6> kRegions = {"eu-west-1",  "us-east-2", "ap-south-1",
                                                      "eu-north-1", "us-west-1", "sa-east-1"};
constexpr std::array<std::string_view, 4> kStatuses = {"SETTLED", "PENDING", "REFUNDED", "DECLINED"};
// At most 96 bytes; a random tag fills the rest of the 100.
constexpr char kValueFormat[] = "id={:010d}|user=u{:06d}|cents={:08d}|ts={}|region={}|status={}|";

}  // namespace

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void MakeKey(uint32_t stream, uint64_t index, char* out) {
  const auto result = fmt::format_to_n(out, kKeyBytes, "{:02x}{:014d}", stream & 0xffu, index);
  assert(result.size == kKeyBytes);
  (void)result;
}

void MakeValue(uint32_t stream, uint64_t index, char* out) {
  const uint64_t r = Mix((static_cast<uint64_t>(stream) << 48) ^ index);
  const uint64_t s = Mix(r);
  const auto result =
      fmt::format_to_n(out, kValueBytes, kValueFormat, index % 10'000'000'000ull, r % 1'000'000,
                       (r >> 20) % 100'000'000, static_cast<uint64_t>(kEpochUs) + index * 997 + (s % 997),
                       kRegions[s % kRegions.size()], kStatuses[(s >> 8) % kStatuses.size()]);
  // Pad with a random tag so the row has some entropy at its end too.
  size_t n = std::min(result.size, kValueBytes);
  uint64_t tag = Mix(s);
  for (; n < kValueBytes; ++n, tag = (tag >> 5) | (tag << 59)) out[n] = static_cast<char>('a' + tag % 26);
}

RecordSet::RecordSet(uint32_t stream, uint64_t first, size_t count) : bytes_(count * kRecordBytes, '\0') {
  records_.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    char* p = bytes_.data() + i * kRecordBytes;
    MakeKey(stream, first + i, p);
    MakeValue(stream, first + i, p + kKeyBytes);
    records_.push_back(Record{std::string_view(p, kKeyBytes), std::string_view(p + kKeyBytes, kValueBytes)});
  }
}

std::span<const Record> RecordSet::Slice(size_t begin, size_t count) const {
  begin = std::min(begin, records_.size());
  return std::span<const Record>(records_).subspan(begin, std::min(count, records_.size() - begin));
}

std::string MakeRows(size_t bytes) {
  RecordSet rows(0, 0, bytes / kRecordBytes + 1);
  return std::string(rows.bytes().substr(0, bytes));
}

}  // namespace spool::bench
