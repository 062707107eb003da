// The commit record's encoding (storage/commit_codec.h): every kind of row
// change round-trips through the packed run EncodeCommit writes, records of
// the older encoding (a RowChange table per change) still decode, and a
// damaged packed run is Corruption, never a record.
#include "commit_codec.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "commit_generated.h"

namespace spool {
namespace {

RowChangeRecord Change(RowChangeKind kind, std::string key, std::string pre, std::string post, uint64_t pre_version) {
  return RowChangeRecord{kind, std::move(key), std::move(pre), std::move(post), pre_version};
}

bool Same(const RowChangeRecord& a, const RowChangeRecord& b) {
  return a.kind == b.kind && a.key == b.key && a.pre == b.pre && a.post == b.post && a.pre_version == b.pre_version;
}

// Two tables: a keyed one with an insert, an update (long images, a
// pre_version past one varint byte, NUL bytes) and a delete; a keyless one
// with two inserts; and a table the commit touched without changing a row.
CommitRecord Mixed() {
  CommitRecord c;
  c.parameters_json = R"({"mode":"mixed"})";
  c.update_id = "update-7";
  TableChangeSet keyed{(3ull << 12) | 1, {}};
  keyed.changes.push_back(Change(RowChangeKind::kInsert, "k1", "", "row one", 0));
  keyed.changes.push_back(Change(RowChangeKind::kUpdate, std::string("k\0 2", 4), std::string(300, 'p'),
                                 std::string("post\0image", 10), 1234567));
  keyed.changes.push_back(Change(RowChangeKind::kDelete, "k3", "gone", "", 9));
  TableChangeSet keyless{(3ull << 12) | 2, {}};
  keyless.changes.push_back(Change(RowChangeKind::kInsert, "", "", "first", 0));
  keyless.changes.push_back(Change(RowChangeKind::kInsert, "", "", "", 0));
  c.tables = {keyed, keyless, TableChangeSet{(3ull << 12) | 3, {}}};
  return c;
}

void ExpectSameTables(const CommitRecord& got, const CommitRecord& want) {
  ASSERT_EQ(got.tables.size(), want.tables.size());
  for (size_t t = 0; t < want.tables.size(); ++t) {
    EXPECT_EQ(got.tables[t].uid, want.tables[t].uid);
    ASSERT_EQ(got.tables[t].changes.size(), want.tables[t].changes.size()) << "table " << t;
    for (size_t i = 0; i < want.tables[t].changes.size(); ++i) {
      EXPECT_TRUE(Same(got.tables[t].changes[i], want.tables[t].changes[i])) << "table " << t << " change " << i;
    }
  }
}

// One table's changes as raw FlatBuffers: `packed` as its run and, when
// `legacy` is set, those RowChange tables as `changes` too.
std::string RawCommit(const std::string* packed, const std::vector<RowChangeRecord>* legacy) {
  flatbuffers::FlatBufferBuilder fbb;
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> run = 0;
  if (packed != nullptr) run = fbb.CreateVector(reinterpret_cast<const uint8_t*>(packed->data()), packed->size());
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::RowChange>>> changes = 0;
  if (legacy != nullptr) {
    auto bytes = [&](const std::string& s) {
      return fbb.CreateVector(reinterpret_cast<const uint8_t*>(s.data()), s.size());
    };
    std::vector<flatbuffers::Offset<fb::RowChange>> offsets;
    for (const RowChangeRecord& r : *legacy) {
      auto key = r.key.empty() ? 0 : bytes(r.key);
      auto pre = r.kind == RowChangeKind::kInsert ? 0 : bytes(r.pre);
      auto post = r.kind == RowChangeKind::kDelete ? 0 : bytes(r.post);
      offsets.push_back(fb::CreateRowChange(fbb, static_cast<uint8_t>(r.kind), key, pre, post, r.pre_version));
    }
    changes = fbb.CreateVector(offsets);
  }
  std::vector<flatbuffers::Offset<fb::TableChanges>> tables{fb::CreateTableChanges(fbb, 4097, changes, run)};
  auto record =
      fb::CreateCommitRecord(fbb, fbb.CreateString("{}"), fbb.CreateString(""), 0, 0, 0, fbb.CreateVector(tables));
  fbb.Finish(record, fb::CommitRecordIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

// The packed run EncodeCommit wrote for the first table of `c`.
std::string PackedRunOf(const CommitRecord& c) {
  const std::string body = EncodeCommit(c);
  const auto* tables = fb::GetCommitRecord(body.data())->tables();
  const fb::TableChanges* t = tables != nullptr && tables->size() != 0 ? tables->Get(0) : nullptr;
  const auto* packed = t != nullptr ? t->packed() : nullptr;
  if (packed == nullptr) {
    ADD_FAILURE() << "EncodeCommit wrote no packed run";
    return {};
  }
  EXPECT_EQ(t->changes(), nullptr) << "EncodeCommit wrote RowChange tables";
  return std::string(reinterpret_cast<const char*>(packed->data()), packed->size());
}

TEST(CommitCodecTest, EveryKindOfChangeRoundTripsThroughThePackedRun) {
  const CommitRecord c = Mixed();
  const std::string body = EncodeCommit(c);
  CommitRecord decoded;
  ASSERT_TRUE(DecodeCommit(body, &decoded).ok());
  EXPECT_EQ(decoded.parameters_json, c.parameters_json);
  EXPECT_EQ(decoded.update_id, c.update_id);
  ExpectSameTables(decoded, c);
  EXPECT_EQ(EncodeCommit(decoded), body);
  CommitRecord only;
  ASSERT_TRUE(DecodeCommit(body, &only, c.tables[1].uid).ok());
  ASSERT_EQ(only.tables.size(), 1u);
  EXPECT_EQ(only.tables[0].changes.size(), 2u);
}

// Stores written before the packed run hold RowChange tables: they read
// back as they were written, and re-encode as a packed run.
TEST(CommitCodecTest, RecordsOfRowChangeTablesStillDecode) {
  const CommitRecord c = Mixed();
  const std::string legacy = RawCommit(nullptr, &c.tables[0].changes);
  CommitRecord decoded;
  ASSERT_TRUE(DecodeCommit(legacy, &decoded).ok());
  ASSERT_EQ(decoded.tables.size(), 1u);
  ASSERT_EQ(decoded.tables[0].changes.size(), c.tables[0].changes.size());
  for (size_t i = 0; i < c.tables[0].changes.size(); ++i) {
    EXPECT_TRUE(Same(decoded.tables[0].changes[i], c.tables[0].changes[i])) << i;
  }
  EXPECT_EQ(PackedRunOf(decoded), PackedRunOf(c));
}

TEST(CommitCodecTest, ADamagedPackedRunIsCorruption) {
  const std::string run = PackedRunOf(Mixed());
  CommitRecord decoded;
  ASSERT_TRUE(DecodeCommit(RawCommit(&run, nullptr), &decoded).ok());
  // A cut inside the run leaves a change truncated, except the cuts right
  // after the first and the second of its three changes.
  size_t decodable_cuts = 0;
  for (size_t cut = 1; cut < run.size(); ++cut) {
    const std::string prefix = run.substr(0, cut);
    const Status s = DecodeCommit(RawCommit(&prefix, nullptr), &decoded);
    if (s.ok()) {
      ++decodable_cuts;
      continue;
    }
    EXPECT_TRUE(s.IsCorruption()) << cut << ": " << s.ToString();
  }
  EXPECT_EQ(decodable_cuts, 2u);

  const std::vector<std::pair<std::string, std::string>> damaged = {
      {std::string("\x09\x01k", 3), "unknown kind"},
      {std::string("\x00\x01k\x01x", 5), "unknown kind"},
      {std::string("\x02\x00\x07\x02"
                   "ab"
                   "\x02"
                   "cd",
                   9),
       "without the images or key"},
      {std::string("\x03\x00\x07\x02"
                   "ab",
                   6),
       "without the images or key"},
      {std::string("\x01\x05k", 3), "truncated"},
      {std::string("\x02\x01k\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff", 14), "truncated"},
  };
  for (const auto& [bytes, what] : damaged) {
    const Status s = DecodeCommit(RawCommit(&bytes, nullptr), &decoded);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(what), std::string::npos) << s.ToString();
  }
  const CommitRecord c = Mixed();
  const Status both = DecodeCommit(RawCommit(&run, &c.tables[0].changes), &decoded);
  EXPECT_TRUE(both.IsCorruption()) << both.ToString();
  EXPECT_NE(both.ToString().find("both encodings"), std::string::npos) << both.ToString();
}

}  // namespace
}  // namespace spool
