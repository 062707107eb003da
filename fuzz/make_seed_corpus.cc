// Writes the seed corpora of the fuzz targets (committed under
// fuzz/corpus/): real segment files, records, payloads and META from the
// fixture log, and damage programs for recovery; commit records, catalog
// entries, snapshot files and row images of the storage layer; JSON lines
// and CSV for the record parser. Run it only to regenerate them:
// `spool_make_seed_corpus fuzz/corpus [TARGET...]` (TARGET: record_decoder,
// log_recovery, commit_decoder, snapshot_decoder, row_decoder, records,
// segment_header, log_directory, event_decoder; all by default). Deterministic: the same build writes the same bytes.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commit_codec.h"
#include "commit_generated.h"
#include "event_codec.h"
#include "log_fixture.h"
#include "log_format.h"
#include "row_codec.h"
#include "snapshot_file.h"
#include "spool/txnlog/log.h"
#include "state_store.h"

namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "spool_make_seed_corpus: %s\n", what.c_str());
  std::exit(1);
}

std::string Op(uint8_t op, uint8_t file, uint32_t arg) {
  std::string bytes{static_cast<char>(op), static_cast<char>(file)};
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(arg >> (8 * i)));
  return bytes;
}

void WriteLogSeeds(const std::string& root, bool record_decoder, bool log_recovery) {
  spool::MemEnv env;
  std::map<uint64_t, std::string> bodies;
  spool::fuzz::BuildFixtureLog(&env, &bodies);
  std::vector<std::string> names;
  (void)env.ListDir(spool::fuzz::kFixtureDir, &names);
  int n = 0;
  if (record_decoder) {
    for (const std::string& name : names) {
      std::string bytes;
      if (!spool::ReadFileToString(&env, spool::JoinPath(spool::fuzz::kFixtureDir, name), &bytes).ok()) continue;
      const std::string prefix = root + "/record_decoder/" + name;
      Write(prefix + ".segment", std::string(1, '\0') + bytes);
      if (bytes.size() > 96) Write(prefix + ".record", std::string(1, '\1') + bytes.substr(96, 400));
      if (name == "META") Write(prefix + ".meta", std::string(1, '\3') + bytes);
      ++n;
    }
    Write(root + "/record_decoder/payload-empty", std::string(1, '\2'));
    std::printf("record_decoder: seeds from %d fixture files\n", n);
  }
  if (!log_recovery) return;
  // Damage programs: one of each kind, and a few combinations.
  const std::vector<std::string> programs = {
      "",
      Op(0, 0, 5000),
      Op(0, 2, 4000),
      Op(1, 0, 300),
      Op(1, 1, 70000),
      Op(2, 1, 0),
      Op(3, 0, 3),
      Op(4, 0, 1),
      Op(5, 2, 200),
      Op(0, 3, 90) + Op(1, 0, 12345),
      Op(2, 0, 0) + Op(2, 0, 0),
      Op(5, 1, 96) + Op(0, 2, 1000) + Op(3, 1, 7),
  };
  for (size_t i = 0; i < programs.size(); ++i) Write(root + "/log_recovery/damage-" + std::to_string(i), programs[i]);
  std::printf("log_recovery: %zu damage programs\n", programs.size());
}

// The fixture's segment headers and META, for segment_header_fuzzer.
void WriteSegmentHeaderSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const auto& [name, bytes] : spool::fuzz::GetFixtureFiles().files) {
    if (name == "META") {
      Write(dir + "/META", std::string(1, '\1') + bytes);
    } else {
      Write(dir + "/" + name, std::string(1, '\0') + bytes.substr(0, spool::logfmt::kSegmentHeaderBytes));
    }
    ++n;
  }
  std::printf("segment_header: %d seeds\n", n);
}

// The fixture's directory whole, and with a few damages, for
// log_directory_fuzzer (its custom mutator does the rest).
void WriteLogDirectorySeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  const std::map<std::string, std::string>& whole = spool::fuzz::GetFixtureFiles().files;
  Write(dir + "/whole", spool::fuzz::SerializeDirectory(whole));
  auto damaged = [&](const std::string& name, auto damage) {
    std::map<std::string, std::string> files = whole;
    damage(files);
    Write(dir + "/" + name, spool::fuzz::SerializeDirectory(files));
  };
  damaged("last-segment-torn", [](auto& f) {
    auto& b = f.rbegin()->second;
    b.resize(b.size() - 37);
  });
  damaged("first-segment-missing", [](auto& f) { f.erase(f.begin()); });
  damaged("garbage-tail", [](auto& f) {
    auto& b = f.rbegin()->second;
    for (int i = 0; i < 512; ++i) b.push_back(static_cast<char>(i * 131 + 7));
  });
  damaged("meta-missing", [](auto& f) { f.erase("META"); });
  std::printf("log_directory: 5 seeds\n");
}

// Events of every level, with and without origin and details, for
// event_decoder_fuzzer.
void WriteEventSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  spool::Event e;
  e.id = "0f0e0d0c-0b0a-4908-8706-050403020100";
  e.origin = {"pipeline-1", "update-7", "orders", "main.shop.orders"};
  e.event_type = "flow_progress";
  e.message = "Flow orders wrote 120 rows.";
  e.details_json = R"({"flow_progress":{"metrics":{"num_output_rows":120}}})";
  const spool::EventLevel levels[] = {spool::EventLevel::kInfo, spool::EventLevel::kWarn, spool::EventLevel::kError,
                                      spool::EventLevel::kMetrics};
  int n = 0;
  for (spool::EventLevel level : levels) {
    e.level = level;
    Write(dir + "/event-" + std::to_string(n++), spool::EncodeEvent(e));
  }
  Write(dir + "/event-bare", spool::EncodeEvent(spool::Event{}));
  std::printf("event_decoder: %d seeds\n", n + 1);
}

// ---- The fixed bad-segment corpus ---------------------------------------
//
// Small base logs, damages done to them, and for each the outcome a strict
// open must give (CASES), stated here from the format's rules — not
// recorded from what the code happens to do:
//   - a torn last record (cut at any byte of its header or payload) is a
//     torn write: dropped, the rest reads;
//   - a record whose payload is whole but whose zero padding was cut is
//     whole: kept;
//   - a bit flipped in the last record's header makes it fail its checksum,
//     which recovery cannot tell from a torn write: dropped;
//   - a bit flipped in an earlier record's header, with synced records after
//     it, is corruption;
//   - a bit flipped anywhere in a segment header is corruption (magic and
//     checksum cover all of it);
//   - zeros or garbage after the last record (a preallocated or torn tail)
//     are not records: everything reads;
//   - a missing, duplicated, swapped or foreign segment in the middle is
//     corruption; a missing newest segment is not detectable by the log
//     alone (nothing names it): the log reads as it was before that segment;
//   - records of a cut epoch left past a truncation point in the kept
//     segment are never read: the new epoch's commits read instead.

using Files = std::map<std::string, std::string>;
using Entries = std::map<uint64_t, std::pair<uint64_t, std::string>>;

// Deterministic bytes zstd cannot shrink.
std::string Noise(uint64_t seed, size_t n) {
  std::string out;
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  while (out.size() < n) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    out.push_back(static_cast<char>(x));
  }
  return out;
}

// A log in a MemEnv written by `write`, its files read back (but LOCK).
Files WriteLog(const std::function<void(spool::Log*, Entries*)>& write, Entries* entries,
               uint64_t store_id = spool::fuzz::kFixtureStoreId) {
  spool::MemEnv env;
  spool::LogOptions options;
  options.env = &env;
  options.new_store_id = store_id;
  options.segment_size_bytes = 64 << 10;
  options.preallocate_bytes = 0;
  {
    std::unique_ptr<spool::Log> log;
    if (!spool::Log::Open(options, spool::fuzz::kFixtureDir, &log).ok()) Die("open the bad-segment base log");
    write(log.get(), entries);
  }
  Files files;
  std::vector<std::string> names;
  (void)env.ListDir(spool::fuzz::kFixtureDir, &names);
  for (const std::string& name : names) {
    std::string bytes;
    if (name != "LOCK" && spool::ReadFileToString(&env, spool::JoinPath(spool::fuzz::kFixtureDir, name), &bytes).ok()) {
      files[name] = bytes;
    }
  }
  return files;
}

void Append(spool::Log* log, const std::string& body, Entries* entries) {
  spool::LogCommit commit;
  if (!log->Append(spool::LogWrite{"WRITE", body}, &commit).ok()) Die("append to the bad-segment base log");
  (*entries)[commit.position.version] = {commit.position.epoch, body};
}

void WriteBadSegmentCorpus(const std::string& dir) {
  std::filesystem::create_directories(dir);
  std::string cases_text =
      "# The fixed bad-segment corpus (the README's crash-safety section): each case is a base log directory (a .dir "
      "file,\n"
      "# serialized as log_directory_fuzzer reads it), the damage done to it, and the outcome a strict\n"
      "# open and read must give. Written by `spool_make_seed_corpus fuzz/corpus bad_segments` from the\n"
      "# rules in fuzz/make_seed_corpus.cc; replayed in CI by bad_segment_replay.\n"
      "# NAME BASE [OP ARGS]... => OUTCOME\n";
  int cases = 0;
  auto add = [&](const std::string& name, const std::string& base, const std::string& ops, const std::string& outcome) {
    cases_text += name + " " + base + (ops.empty() ? "" : " " + ops) + " => " + outcome + "\n";
    ++cases;
  };
  using spool::fuzz::OkOutcome;
  // The base: 25,000-byte records, two to a segment (the third segment
  // holds v5 and v6), then three small records in the third, each synced.
  Entries all;
  const Files base = WriteLog(
      [](spool::Log* log, Entries* e) {
        for (uint64_t i = 1; i <= 6; ++i) Append(log, Noise(i, 25000), e);
        for (uint64_t i = 7; i <= 9; ++i)
          Append(log, "small record " + std::to_string(i) + " " + std::string(60, 'x'), e);
      },
      &all);
  const std::string s1 = spool::logfmt::SegmentFileName(1), s2 = spool::logfmt::SegmentFileName(2),
                    s3 = spool::logfmt::SegmentFileName(3), s4 = spool::logfmt::SegmentFileName(4);
  if (base.count(s3) == 0 || base.count(s4) != 0) Die("the base log is not three segments");
  Write(dir + "/base.dir", spool::fuzz::SerializeDirectory(base));
  spool::logfmt::SegmentHeader newest_header;
  if (!spool::logfmt::DecodeSegmentHeader(base.at(s3), &newest_header).ok()) Die("decode the newest segment's header");
  Entries but_last = all, before_newest = all;  // before_newest: what the first two segments hold
  but_last.erase(9);
  before_newest.erase(before_newest.lower_bound(newest_header.first_version), before_newest.end());
  add("intact", "base", "", OkOutcome(all));

  // The records of the newest segment; the last two are v8 and v9.
  const std::string& active = base.at(s3);
  std::vector<std::pair<uint64_t, uint64_t>> records;  // start, bytes without padding
  for (uint64_t at = spool::logfmt::kSegmentHeaderBytes; at < active.size();) {
    uint32_t payload_length;
    std::memcpy(&payload_length, active.data() + at + 8, 4);
    records.emplace_back(at, spool::logfmt::kRecordHeaderBytes + payload_length);
    at += spool::logfmt::RecordBytes(payload_length);
  }
  if (records.size() != 5 ||
      records.back().first + spool::logfmt::RecordBytes(records.back().second - 40) != active.size()) {
    Die("the newest segment is not five records");
  }
  const auto [last, last_unpadded] = records[4];
  const uint64_t before_last = records[3].first;
  for (uint64_t cut = 0; last + cut < active.size(); ++cut) {
    add("last-record-cut-at-" + std::to_string(cut), "base", "cut " + s3 + " " + std::to_string(last + cut),
        OkOutcome(cut < last_unpadded ? but_last : all));
  }
  auto flip = [](const std::string& file, uint64_t offset) {
    return "flip " + file + " " + std::to_string(offset) + " " + std::to_string(offset % 8);
  };
  for (uint64_t byte = 0; byte < spool::logfmt::kRecordHeaderBytes; ++byte) {
    add("last-record-header-flip-" + std::to_string(byte), "base", flip(s3, last + byte), OkOutcome(but_last));
    add("earlier-record-header-flip-" + std::to_string(byte), "base", flip(s3, before_last + byte), "corruption");
  }
  for (uint64_t byte = 0; byte < spool::logfmt::kSegmentHeaderBytes; ++byte) {
    add("newest-segment-header-flip-" + std::to_string(byte), "base", flip(s3, byte), "corruption");
    add("middle-segment-header-flip-" + std::to_string(byte), "base", flip(s2, byte), "corruption");
  }
  add("zeroed-tail", "base", "zeros " + s3 + " 4096", OkOutcome(all));
  add("preallocated-tail", "base", "zeros " + s3 + " " + std::to_string((1 << 20) - active.size()), OkOutcome(all));
  add("garbage-tail", "base", "garbage " + s3 + " 4096 99", OkOutcome(all));
  add("garbage-then-zeros", "base", "garbage " + s3 + " 700 7 zeros " + s3 + " 8192", OkOutcome(all));
  add("middle-segment-missing", "base", "remove " + s2, "corruption");
  add("oldest-segment-missing", "base", "remove " + s1, "corruption");
  add("newest-segment-missing", "base", "remove " + s3, OkOutcome(before_newest));
  add("meta-missing", "base", "remove META", "corruption");
  add("segment-duplicated-as-next", "base", "copy " + s2 + " " + s4, "corruption");
  add("newest-duplicated-as-next", "base", "copy " + s3 + " " + s4, "corruption");
  add("segments-swapped", "base", "swap " + s1 + " " + s2, "corruption");
  {
    // The newest segment of another store (its id seeds every checksum).
    Entries other;
    const Files foreign = WriteLog(
        [](spool::Log* log, Entries* e) {
          for (uint64_t i = 1; i <= 9; ++i) Append(log, i <= 6 ? Noise(100 + i, 25000) : "foreign", e);
        },
        &other, spool::fuzz::kFixtureStoreId + 1);
    Write(dir + "/foreign.dir", spool::fuzz::SerializeDirectory({{s3, foreign.at(s3)}}));
    add("foreign-segment-as-next", "base", "take foreign " + s3 + " " + s4, "corruption");
    add("foreign-segment-in-place", "base", "take foreign " + s3 + " " + s3, "corruption");
  }
  {
    // Stale records past a truncation: v1..v5 in one segment, cut after
    // v3, then v4 and v5 again in the new epoch; the kept segment still
    // holds the old v4 and v5 past the cut. (The archive is not part of
    // the directory: the log reads without it.)
    Entries truncated;
    const Files f = WriteLog(
        [](spool::Log* log, Entries* e) {
          for (uint64_t i = 1; i <= 5; ++i) Append(log, "epoch one, version " + std::to_string(i), e);
          if (!log->TruncateAfter(3, /*discard_suffix=*/false, nullptr).ok()) Die("truncate the bad-segment log");
          e->erase(e->upper_bound(3), e->end());
          for (uint64_t i = 4; i <= 5; ++i) Append(log, "epoch two, version " + std::to_string(i), e);
        },
        &truncated);
    Write(dir + "/truncated.dir", spool::fuzz::SerializeDirectory(f));
    add("stale-records-past-a-truncation", "truncated", "", OkOutcome(truncated));
    add("truncated-newest-epoch-segment-missing", "truncated", "remove " + s2, "corruption");
  }
  Write(dir + "/CASES", cases_text);
  std::printf("bad_segments: %d cases\n", cases);
}

// ---- Storage seeds ----------------------------------------------------------

using spool::Bytes;
using spool::Column;
using spool::ColumnType;
using spool::CommitRecord;
using spool::DdlKind;
using spool::DdlRecord;
using spool::Row;
using spool::RowChangeKind;
using spool::RowChangeRecord;
using spool::Schema;
using spool::TableChangeSet;
using spool::TableInfo;
using spool::TableKind;
using spool::Timestamp;
using spool::Value;

constexpr uint64_t kSnapshotStoreId = 0x5707e5707eull;  // snapshot_decoder_fuzzer's store id

// splitmix64: deterministic bytes for the incompressible seeds.
struct Random {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::string Bytes(size_t n) {
    std::string out;
    while (out.size() < n) out.push_back(static_cast<char>(Next() & 0xff));
    return out;
  }
};

void Must(const spool::Status& s, const char* what) {
  if (!s.ok()) Die(std::string(what) + ": " + s.ToString());
}

TableInfo MakeTable(const std::string& name, uint64_t uid, TableKind kind, std::vector<Column> columns,
                    std::vector<std::string> key, std::map<std::string, std::string> properties = {}) {
  TableInfo t;
  Must(spool::TableId::Parse(name, &t.id), "table id");
  t.uid = uid;
  t.kind = kind;
  Must(Schema::Make(std::move(columns), key, &t.schema), "schema");
  t.properties = std::move(properties);
  return t;
}

// Version 7 created `orders` (keyed) and `events` (keyless).
TableInfo Orders() {
  return MakeTable("main.sales.orders", 7ull << 12 | 0, TableKind::kStreamingTable,
                   {{"id", ColumnType::kInt64, false},
                    {"customer", ColumnType::kString, false},
                    {"amount", ColumnType::kDouble, true},
                    {"paid", ColumnType::kBool, true},
                    {"at", ColumnType::kTimestamp, true},
                    {"note", ColumnType::kBytes, true}},
                   {"id"}, {{"comment", "orders by id"}, {"owner", "sales"}});
}

TableInfo Events() {
  return MakeTable("main.raw.events", 7ull << 12 | 1, TableKind::kStreamingTable,
                   {{"ts", ColumnType::kTimestamp, false}, {"payload", ColumnType::kString, true}}, {});
}

// Composite key, as a materialized view might have.
TableInfo Totals() {
  return MakeTable("main.sales.totals", 9ull << 12 | 0, TableKind::kMaterializedView,
                   {{"region", ColumnType::kString, false},
                    {"day", ColumnType::kTimestamp, false},
                    {"total", ColumnType::kDouble, false},
                    {"big", ColumnType::kBool, false}},
                   {"region", "day"}, {{"pipeline.refresh", "auto"}});
}

TableInfo State() {
  return MakeTable("sys.flow_state.agg_1", 9ull << 12 | 1, TableKind::kInternalState,
                   {{"k", ColumnType::kBytes, false}, {"v", ColumnType::kBytes, true}}, {"k"});
}

Row OrderRow(int64_t id, int variant) {
  Row row{id,
          std::string("customer-") + std::to_string(id % 7),
          12.5 * static_cast<double>(id),
          variant % 2 == 0,
          Timestamp{1700000000000000 + id},
          Bytes{std::string("\x00\x01\xff", 3)}};
  if (variant % 3 == 1) row[2] = std::monostate{};
  if (variant % 3 == 2) {
    row[3] = std::monostate{};
    row[4] = std::monostate{};
    row[5] = std::monostate{};
  }
  return row;
}

std::string EncodedRow(const TableInfo& t, const Row& row) {
  Must(t.schema.Validate(row), "row");
  std::string out;
  spool::EncodeRow(t.schema, row, &out);
  return out;
}

std::string EncodedKey(const TableInfo& t, const Row& row) {
  std::string out;
  spool::EncodeKey(t.schema, row, &out);
  return out;
}

RowChangeRecord Insert(const TableInfo& t, const Row& row) {
  return {RowChangeKind::kInsert, t.schema.has_key() ? EncodedKey(t, row) : std::string(), "", EncodedRow(t, row)};
}
RowChangeRecord Update(const TableInfo& t, const Row& before, const Row& after) {
  return {RowChangeKind::kUpdate, EncodedKey(t, after), EncodedRow(t, before), EncodedRow(t, after)};
}
RowChangeRecord Delete(const TableInfo& t, const Row& before) {
  return {RowChangeKind::kDelete, EncodedKey(t, before), EncodedRow(t, before), ""};
}

CommitRecord Commit(std::string parameters, std::string update_id, uint64_t execution_us) {
  CommitRecord c;
  c.parameters_json = std::move(parameters);
  c.update_id = std::move(update_id);
  c.execution_time_us = execution_us;
  return c;
}

// A commit record of one table's changes as raw FlatBuffers, with `packed`
// as the run and, when `both`, an empty `changes` vector beside it: bytes
// EncodeCommit never writes, for the decoder's checks of the packed run.
std::string RawPackedCommit(uint64_t uid, const std::string& packed, bool both) {
  flatbuffers::FlatBufferBuilder fbb;
  auto run = fbb.CreateVector(reinterpret_cast<const uint8_t*>(packed.data()), packed.size());
  auto changes = both ? fbb.CreateVector(std::vector<flatbuffers::Offset<spool::fb::RowChange>>{}) : 0;
  std::vector<flatbuffers::Offset<spool::fb::TableChanges>> tables{
      spool::fb::CreateTableChanges(fbb, uid, changes, run)};
  auto record = spool::fb::CreateCommitRecord(fbb, fbb.CreateString("{}"), fbb.CreateString(""), 0, 0, 0,
                                              fbb.CreateVector(tables));
  fbb.Finish(record, spool::fb::CommitRecordIdentifier());
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()), fbb.GetSize());
}

void WriteCommitSeeds(const std::string& dir) {
  std::map<std::string, std::string> seeds;
  const TableInfo orders = Orders(), events = Events(), totals = Totals(), state = State();

  {  // Create a keyed table and write to it in the same commit.
    CommitRecord c = Commit(R"({"mode":"create"})", "update-0001", 1234);
    c.ddl.push_back({DdlKind::kCreate, std::nullopt, orders});
    TableChangeSet set{orders.uid, {}};
    for (int64_t id = 1; id <= 6; ++id) set.changes.push_back(Insert(orders, OrderRow(id, static_cast<int>(id))));
    c.tables.push_back(set);
    c.metrics = {{"numOutputRows", 6}, {"numInsertedRows", 6}, {"numOutputBytes", 480}};
    seeds["ddl-create-keyed"] = spool::EncodeCommit(c);
  }
  {  // Two tables created by one commit, the keyless one appended to.
    CommitRecord c = Commit("{}", "", 99);
    c.ddl.push_back({DdlKind::kCreate, std::nullopt, orders});
    c.ddl.push_back({DdlKind::kCreate, std::nullopt, events});
    TableChangeSet set{events.uid, {}};
    for (int64_t i = 0; i < 5; ++i) {
      Row row{Timestamp{1700000000000000 + i * 1000},
              i == 3 ? Row::value_type{} : Row::value_type{"event " + std::to_string(i)}};
      set.changes.push_back(Insert(events, row));
    }
    c.tables.push_back(set);
    seeds["ddl-create-two-keyless-insert"] = spool::EncodeCommit(c);
  }
  {  // Keyed changes: inserts, updates and deletes in one table.
    CommitRecord c = Commit(R"({"batch":17})", "update-0002", 5000);
    TableChangeSet set{orders.uid, {}};
    set.changes.push_back(Insert(orders, OrderRow(10, 0)));
    set.changes.push_back(Update(orders, OrderRow(1, 1), OrderRow(1, 2)));
    set.changes.push_back(Update(orders, OrderRow(2, 0), OrderRow(2, 0)));
    set.changes.push_back(Delete(orders, OrderRow(3, 2)));
    c.tables.push_back(set);
    c.metrics = {{"numUpdatedRows", 2}, {"numDeletedRows", 1}, {"numInsertedRows", 1}};
    seeds["changes-keyed-mixed"] = spool::EncodeCommit(c);
  }
  {  // Changes to several tables, composite keys, an internal state table.
    CommitRecord c = Commit(R"({"flow":"agg"})", "update-0003", 70);
    c.ddl.push_back({DdlKind::kCreate, std::nullopt, totals});
    c.ddl.push_back({DdlKind::kCreate, std::nullopt, state});
    TableChangeSet t1{totals.uid, {}}, t2{state.uid, {}}, t3{events.uid, {}};
    const Row before{std::string("eu"), Timestamp{86400000000}, 10.0, false};
    const Row after{std::string("eu"), Timestamp{86400000000}, -0.0, true};
    t1.changes.push_back(Insert(totals, {std::string("us\0x", 4), Timestamp{-1}, 1e300, false}));
    t1.changes.push_back(Update(totals, before, after));
    t2.changes.push_back(Insert(state, {Bytes{std::string(1, '\0')}, Bytes{"state"}}));
    t2.changes.push_back(Insert(state, {Bytes{""}, Row::value_type{}}));
    t3.changes.push_back(Insert(events, {Timestamp{0}, std::string(300, 'x')}));
    c.tables = {t1, t2, t3};
    seeds["changes-multi-table"] = spool::EncodeCommit(c);
  }
  {  // A table touched without row changes (a delete of a missing key, a
     // truncate of an empty table): an empty change set.
    CommitRecord c = Commit("{}", "update-0009", 2);
    c.tables.push_back({orders.uid, {}});
    c.tables.push_back({events.uid, {Insert(events, {Timestamp{9}, std::monostate{}})}});
    c.metrics = {{"numDeletedRows", 0}};
    seeds["changes-empty-set"] = spool::EncodeCommit(c);
  }
  {  // Alter: a column added; an update whose pre-image predates it.
    TableInfo after = orders;
    std::vector<Column> columns = orders.schema.columns();
    columns.push_back({"region", ColumnType::kString, true});
    Must(Schema::Make(columns, {"id"}, &after.schema), "altered schema");
    CommitRecord c = Commit("{}", "update-0004", 1);
    c.ddl.push_back({DdlKind::kAlter, orders, after});
    Row new_row = OrderRow(4, 0);
    new_row.push_back(std::string("emea"));
    c.tables.push_back({orders.uid, {Update(orders, OrderRow(4, 1), OrderRow(4, 1))}});
    c.tables.back().changes.back().post = EncodedRow(after, new_row);
    seeds["ddl-alter-add-column"] = spool::EncodeCommit(c);
  }
  {  // Alter: properties set and removed.
    TableInfo after = orders;
    after.properties.erase("owner");
    after.properties["delta.enableChangeDataFeed"] = "true";
    CommitRecord c = Commit(R"({"properties":{"owner":null}})", "", 3);
    c.ddl.push_back({DdlKind::kAlter, orders, after});
    seeds["ddl-alter-properties"] = spool::EncodeCommit(c);
  }
  {  // Drop: the table's rows go as deletes.
    CommitRecord c = Commit("{}", "update-0005", 8);
    TableChangeSet set{orders.uid, {}};
    for (int64_t id = 1; id <= 4; ++id) set.changes.push_back(Delete(orders, OrderRow(id, static_cast<int>(id))));
    c.tables.push_back(set);
    c.ddl.push_back({DdlKind::kDrop, orders, std::nullopt});
    c.ddl.push_back({DdlKind::kDrop, events, std::nullopt});
    seeds["ddl-drop"] = spool::EncodeCommit(c);
  }
  {  // Checkpoints: set, replaced, cleared, and empty data.
    CommitRecord c = Commit("{}", "update-0006", 40);
    c.checkpoints.push_back({"flow_a", std::nullopt, std::string("offset=10")});
    c.checkpoints.push_back({"flow_b", std::string("offset=10"), std::string("offset=20\0state", 16)});
    c.checkpoints.push_back({"flow_c", std::string("old"), std::nullopt});
    c.checkpoints.push_back({"flow_d", std::string(), std::string()});
    c.tables.push_back({events.uid, {Insert(events, {Timestamp{5}, std::string("with checkpoint")})}});
    seeds["checkpoints"] = spool::EncodeCommit(c);
  }
  {  // Metrics only; an empty record; the DDL history form the store keeps.
    CommitRecord c = Commit(R"({"op":"OPTIMIZE","zOrderBy":[]})", "update-0007", 1u << 31);
    c.metrics = {{"numFiles", -1}, {"executionTimeUs", INT64_MAX}, {"numRemovedBytes", INT64_MIN}};
    seeds["metrics-only"] = spool::EncodeCommit(c);
    seeds["empty"] = spool::EncodeCommit(CommitRecord{});
    CommitRecord history;
    history.ddl.push_back({DdlKind::kCreate, std::nullopt, totals});
    history.ddl.push_back({DdlKind::kAlter, orders, orders});
    seeds["ddl-history"] = spool::EncodeCommit(history);
  }
  {  // A larger commit: many keyless appends and keyed upserts.
    CommitRecord c = Commit("{}", "update-0008", 123456);
    TableChangeSet a{events.uid, {}}, b{orders.uid, {}};
    for (int64_t i = 0; i < 150; ++i) {
      a.changes.push_back(Insert(events, {Timestamp{i}, std::string(static_cast<size_t>(i % 40), 'e')}));
      b.changes.push_back(i % 2 == 0 ? Insert(orders, OrderRow(i, static_cast<int>(i)))
                                     : Update(orders, OrderRow(i, 0), OrderRow(i, static_cast<int>(i))));
    }
    c.tables = {a, b};
    seeds["changes-large"] = spool::EncodeCommit(c);
  }
  // Catalog entries, as the state store keeps them.
  seeds["table-orders"] = spool::EncodeTableInfo(orders);
  seeds["table-events"] = spool::EncodeTableInfo(events);
  seeds["table-totals"] = spool::EncodeTableInfo(totals);
  seeds["table-state"] = spool::EncodeTableInfo(state);
  // Packed runs the decoder must refuse: an update (key "k", pre_version 7,
  // pre "ab", post "cd") cut inside its post-image, a change of kind 9, an
  // update without a key, and a run beside a `changes` vector.
  const std::string update = std::string(
      "\x02\x01k\x07\x02"
      "ab"
      "\x02"
      "cd",
      10);
  seeds["damaged-packed-truncated"] = RawPackedCommit(orders.uid, update.substr(0, update.size() - 1), false);
  seeds["damaged-packed-unknown-kind"] = RawPackedCommit(orders.uid, "\x09\x01k", false);
  seeds["damaged-packed-update-without-key"] = RawPackedCommit(orders.uid,
                                                               std::string("\x02\x00\x07\x02"
                                                                           "ab"
                                                                           "\x02"
                                                                           "cd",
                                                                           9),
                                                               false);
  seeds["damaged-packed-both-encodings"] = RawPackedCommit(orders.uid, update, true);
  seeds["packed-update"] = RawPackedCommit(orders.uid, update, false);
  // Damaged copies: truncated, and a byte changed in the middle.
  const std::string keyed = seeds["changes-keyed-mixed"];
  seeds["damaged-truncated"] = keyed.substr(0, keyed.size() / 2);
  std::string flipped = seeds["ddl-create-keyed"];
  flipped[flipped.size() / 2] = static_cast<char>(flipped[flipped.size() / 2] ^ 0x10);
  seeds["damaged-bitflip"] = flipped;
  std::string kind = seeds["changes-keyed-mixed"];
  seeds["damaged-identifier"] = kind.replace(4, 4, "XXXX");

  for (const auto& [name, bytes] : seeds) {
    CommitRecord check;
    TableInfo table;
    const bool valid = spool::DecodeCommit(bytes, &check).ok() || spool::DecodeTableInfo(bytes, &table).ok();
    if (!valid && !name.starts_with("damaged-")) Die("commit seed " + name + " does not decode");
    Write(dir + "/" + name, bytes);
  }
  std::printf("commit_decoder: %zu seeds\n", seeds.size());
}

// Writes a snapshot through SnapshotWriter in a MemEnv and returns its bytes.
std::string Snapshot(const std::vector<std::pair<std::string, std::string>>& entries, uint64_t version) {
  spool::MemEnv env;
  Must(env.CreateDir("/snap"), "snapshot dir");
  const std::string path = spool::JoinPath("/snap", spool::SnapshotFileName(1, version));
  std::unique_ptr<spool::SnapshotWriter> writer;
  Must(spool::SnapshotWriter::Create(&env, path, {kSnapshotStoreId, 1, version, 1700000000000000 + version}, &writer),
       "snapshot create");
  for (const auto& [key, value] : entries) Must(writer->Add(key, value), "snapshot add");
  uint64_t bytes = 0, count = 0;
  Must(writer->Finish(&bytes, &count), "snapshot finish");
  std::string out;
  Must(spool::ReadFileToString(&env, path, &out), "snapshot read");
  return out;
}

// A state store's contents: catalog entries, rows and checkpoints, sorted.
std::vector<std::pair<std::string, std::string>> StateEntries(size_t rows, bool random_payload, uint64_t seed) {
  std::map<std::string, std::string> state;
  const TableInfo orders = Orders(), events = Events();
  state[spool::StateCatalogKey(orders.uid)] = spool::EncodeTableInfo(orders);
  state[spool::StateCatalogKey(events.uid)] = spool::EncodeTableInfo(events);
  Random random{seed};
  for (size_t i = 0; i < rows; ++i) {
    Row row = OrderRow(static_cast<int64_t>(i), static_cast<int>(i));
    if (random_payload) row[5] = Bytes{random.Bytes(200)};
    state[spool::StateRowPrefix(orders.uid) + EncodedKey(orders, row)] = EncodedRow(orders, row);
  }
  state[spool::StateCheckpointKey("flow_a")] = "offset=" + std::to_string(rows);
  return {state.begin(), state.end()};
}

// Random values under ascending keys: blocks zstd cannot shrink.
std::vector<std::pair<std::string, std::string>> RandomEntries(size_t n, size_t value_bytes, uint64_t seed) {
  Random random{seed};
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < n; ++i) {
    std::string key;
    for (int shift = 24; shift >= 0; shift -= 8) key.push_back(static_cast<char>(i >> shift));
    entries.emplace_back(key, random.Bytes(value_bytes));
  }
  return entries;
}

// The flags of each block of a snapshot file (1 = zstd).
std::vector<uint32_t> BlockFlags(const std::string& file) {
  std::vector<uint32_t> flags;
  for (size_t offset = 64; offset + 24 <= file.size() - 40;) {
    uint32_t stored = 0, flag = 0;
    std::memcpy(&stored, file.data() + offset + 4, 4);
    std::memcpy(&flag, file.data() + offset + 8, 4);
    flags.push_back(flag);
    offset += 24 + stored;
  }
  return flags;
}

std::string FlipBit(std::string bytes, size_t at, int bit) {
  bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
  return bytes;
}

void WriteSnapshotSeeds(const std::string& dir) {
  // The control byte: bit 0 recomputes the checksums, bits 1-4 stop early.
  const std::string plain(1, '\x00'), fix(1, '\x01'), stop3(1, '\x06');
  std::map<std::string, std::string> seeds;
  const std::string empty = Snapshot({}, 1);
  const std::string small = Snapshot(StateEntries(8, false, 1), 2);             // one zstd block
  const std::string random_small = Snapshot(RandomEntries(6, 300, 2), 3);       // one raw block
  const std::string several = Snapshot(StateEntries(12000, false, 3), 4);       // > 256 KiB raw, zstd
  const std::string random_several = Snapshot(RandomEntries(1000, 300, 4), 5);  // > 256 KiB raw, incompressible
  const std::string mixed = Snapshot(StateEntries(1400, true, 6), 8);           // zstd, partly random
  const std::string one_entry = Snapshot({{"", ""}}, 6);
  const std::string big_entry = Snapshot({{"k", std::string(300 << 10, 'v')}}, 7);  // one entry over the block target
  auto expect = [](const std::string& file, const std::vector<uint32_t>& flags, const char* name) {
    const std::vector<uint32_t> found = BlockFlags(file);
    if (found != flags) {
      std::string got;
      for (uint32_t f : found) got += std::to_string(f) + " ";
      Die(std::string("snapshot seed ") + name + " has other blocks than intended: flags " + got);
    }
  };
  expect(empty, {}, "empty");
  expect(small, {1}, "small");
  expect(random_small, {0}, "random_small");
  expect(several, {1, 1, 1}, "several");
  expect(random_several, {0, 0}, "random_several");
  seeds["empty"] = plain + empty;
  seeds["one-block-zstd"] = plain + small;
  seeds["one-block-raw"] = plain + random_small;
  seeds["blocks-zstd"] = plain + several;
  seeds["blocks-raw"] = plain + random_several;
  seeds["one-empty-entry"] = plain + one_entry;
  seeds["big-entry"] = plain + big_entry;
  seeds["blocks-mixed"] = plain + mixed;
  seeds["fix-one-block-zstd"] = fix + small;
  seeds["fix-one-block-raw"] = fix + random_small;
  seeds["stop-blocks-zstd"] = stop3 + several;
  seeds["stop-one-block-raw"] = stop3 + random_small;
  // Damaged: truncated, bits flipped (with and without recomputed checksums).
  seeds["damaged-truncated-header"] = plain + small.substr(0, 40);
  seeds["damaged-truncated-block"] = plain + small.substr(0, small.size() / 2);
  seeds["damaged-no-trailer"] = plain + small.substr(0, small.size() - 40);
  seeds["damaged-flip-header"] = plain + FlipBit(small, 20, 3);
  seeds["damaged-flip-block"] = plain + FlipBit(random_small, 64 + 24 + 30, 0);
  seeds["damaged-flip-trailer-count"] = plain + FlipBit(small, small.size() - 24, 0);
  seeds["fix-damaged-flip-raw-entry"] = fix + FlipBit(random_small, 64 + 24 + 2, 6);
  seeds["fix-damaged-flip-zstd"] = fix + FlipBit(small, 64 + 24 + 10, 2);
  seeds["fix-damaged-flip-block-count"] = fix + FlipBit(random_small, 64 + 12, 1);

  for (const auto& [name, bytes] : seeds) {
    spool::SnapshotHeader header;
    uint64_t count = 0;
    std::string file = bytes.substr(1);
    const bool ok = spool::ParseSnapshot(file, kSnapshotStoreId, &header, [&](std::string_view, std::string_view) {
                      ++count;
                      return true;
                    }).ok();
    if (ok == (name.find("damaged-") != std::string::npos)) Die("snapshot seed " + name + " parses unexpectedly");
    Write(dir + "/" + name, bytes);
  }
  std::printf("snapshot_decoder: %zu seeds\n", seeds.size());
}

// A row_decoder_fuzzer input: the schema's bytes, then two images.
std::string RowSeed(const std::vector<uint8_t>& columns, const std::string& a, const std::string& b) {
  std::string out(1, static_cast<char>(columns.size() - 1));
  for (uint8_t c : columns) out.push_back(static_cast<char>(c));
  out.push_back(static_cast<char>(a.size() > 255 ? 255 : a.size()));
  return out + a + b;
}

void WriteRowSeeds(const std::string& dir) {
  // Column bytes: type 1 + (b & 7) % 6 (int64, double, string, bool,
  // timestamp, bytes), 0x08 nullable, 0x10 key.
  std::map<std::string, std::string> seeds;
  auto schema_of = [](const std::vector<uint8_t>& columns) {
    std::vector<Column> defs;
    std::vector<std::string> key;
    for (size_t i = 0; i < columns.size(); ++i) {
      const bool is_key = (columns[i] & 0x10) != 0;
      defs.push_back({"c" + std::to_string(i), static_cast<ColumnType>(1 + (columns[i] & 7) % 6),
                      !is_key && (columns[i] & 0x08) != 0});
      if (is_key) key.push_back(defs.back().name);
    }
    Schema schema;
    Must(Schema::Make(defs, key, &schema), "row seed schema");
    return schema;
  };
  auto encode = [](const Schema& schema, const Row& row) {
    Must(schema.Validate(row), "row seed");
    std::string out;
    spool::EncodeRow(schema, row, &out);
    return out;
  };
  {  // Every type, keyed on an int64.
    const std::vector<uint8_t> cols{0x10, 0x09, 0x0a, 0x0b, 0x0c, 0x0d};
    const Schema s = schema_of(cols);
    const Row a{
        int64_t{-5}, 2.5, std::string("hello"), true, Timestamp{1700000000000000}, Bytes{std::string("\0\xff", 2)}};
    const Row b{int64_t{7}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{}};
    seeds["all-types"] = RowSeed(cols, encode(s, a), encode(s, b));
  }
  {  // Composite key: string then double (-0.0, NaN), keyed on both.
    const std::vector<uint8_t> cols{0x12, 0x11, 0x08};
    const Schema s = schema_of(cols);
    seeds["key-string-double"] = RowSeed(cols, encode(s, {std::string("a\0", 2), -0.0, std::monostate{}}),
                                         encode(s, {std::string("a"), std::nan(""), int64_t{1}}));
    seeds["key-equal"] = RowSeed(cols, encode(s, {std::string("k"), 0.0, int64_t{2}}),
                                 encode(s, {std::string("k"), -0.0, std::monostate{}}));
  }
  {  // Bool and timestamp keys; bytes.
    const std::vector<uint8_t> cols{0x13, 0x14, 0x05};
    const Schema s = schema_of(cols);
    seeds["key-bool-timestamp"] = RowSeed(cols, encode(s, {false, Timestamp{INT64_MIN}, Bytes{""}}),
                                          encode(s, {true, Timestamp{INT64_MAX}, Bytes{std::string(40, 'b')}}));
  }
  {  // A keyless row written before two columns were added (fewer values).
    const std::vector<uint8_t> cols{0x02, 0x08, 0x0b};
    const std::vector<uint8_t> old_cols{0x02};
    const Schema old_schema = schema_of(old_cols);
    seeds["fewer-columns"] = RowSeed(cols, encode(old_schema, {std::string("old")}), "");
  }
  {  // Eight columns, a bitmap of more than one byte when nullable.
    const std::vector<uint8_t> cols{0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e, 0x0e};
    const Schema s = schema_of(cols);
    Row row(8, Value{});
    row[7] = int64_t{42};
    seeds["eight-columns"] = RowSeed(cols, encode(s, row), encode(s, Row(8, Value{})));
  }
  seeds["damaged-truncated"] = seeds["all-types"].substr(0, seeds["all-types"].size() - 3);
  seeds["damaged-bad-bool"] = RowSeed({0x03}, std::string("\x01\x00\x02", 3), std::string("\x02\x00", 2));
  for (const auto& [name, bytes] : seeds) Write(dir + "/" + name, bytes);
  std::printf("row_decoder: %zu seeds\n", seeds.size());
}

// Records for records_fuzzer: a flags byte (bit 0 CSV, bit 1 rescue, bit 2
// keys only) and the text, over its schemas' columns id, s, d, b, t, x.
void WriteRecordsSeeds(const std::string& dir) {
  const std::map<std::string, std::string> json = {
      {"all-types", R"({"id":1,"s":"Ada","d":2.5,"b":true,"t":"2026-01-02 03:04:05.678901","x":"eHl6"})"
                    "\n"},
      {"numbers", R"({"id":-9223372036854775808,"t":1767323045678901,"d":-1.5e300})"
                  "\n"
                  R"({"id":18446744073709551615,"t":"-1","d":"NaN"})"
                  "\n"},
      {"nulls", R"({"id":2,"t":0,"s":null,"d":null,"b":null,"x":null})"
                "\n"},
      {"blank-lines", "\r\n  \n{\"id\":3,\"t\":1}\r\n\n"},
      {"wrong-types", R"({"id":"7","t":1.5,"b":1,"s":5,"x":"a","d":"cheap"})"
                      "\n"},
      {"unknown-field", R"({"id":4,"t":2,"colour":{"r":[1,2]}})"
                        "\n"},
      {"repeated-key", R"({"id":5,"t":3,"s":1,"s":"y","id":6})"
                       "\n"},
      {"not-objects", "[1,2]\n42\n\"text\"\nnull\n"},
      {"malformed", "{\"id\":\n{\"id\":1,}\n{\"id\":1} {}\n{\"s\":\"\\ud800\"}\n"},
      {"nested", "{\"id\":1,\"t\":1,\"s\":[[[[[[[[{\"a\":[]}]]]]]]]]}\n"},
      {"escapes", R"({"id":7,"t":4,"s":"tab\tquote\"slash\\\/uni\u00e9\ud83d\ude00"})"
                  "\n"},
      {"rescue-column", R"({"id":8,"t":5,"_rescued_data":"mine","_file_path":"x"})"
                        "\n"},
  };
  const std::map<std::string, std::string> csv = {
      {"all-types", "id,s,d,b,t,x\n1,Ada,2.5,TRUE,2026-01-02 03:04:05.678901,eHl6\n-2,,NaN,false,1767323045678901,\n"},
      {"quoted", "t,id,s\n1,1,\"a, b\"\n2,2,\"say \"\"hi\"\"\"\n3,3,\"two\nlines\"\r\n4,4,\"\"\n"},
      {"blank-lines", "\r\nid,t\r\n\r\n1,1\r\n\n"},
      {"wrong-types", "id,t,b,d,x\nx,1.5,maybe,1.2.3,Zg=\n"},
      {"field-counts", "id,t\n1,1,extra\n2\n"},
      {"header-unknown", "id,t,colour,id\n1,1,red,2\n"},
      {"malformed", "id,t,s\n1,1,a\"b\n2,2,\"x\"y\n3,3,\"unclosed\n4,4,ok\n"},
      {"header-malformed", "id,\"t\n1,1\n"},
      {"nulls", "id,t,s,x\n1,1,,\n,,\"\",\"\"\n"},
  };
  int n = 0;
  for (const auto& [flags, name] : std::map<char, std::string>{{'\0', "fail"}, {'\2', "rescue"}, {'\4', "keys"}}) {
    for (const auto& [seed, text] : json) {
      Write(dir + "/jsonl-" + name + "-" + seed, std::string(1, flags) + text);
      ++n;
    }
    for (const auto& [seed, text] : csv) {
      Write(dir + "/csv-" + name + "-" + seed, std::string(1, static_cast<char>(flags | 1)) + text);
      ++n;
    }
  }
  std::printf("records: %d seeds\n", n);
}

}  // namespace

// A state written by StateStore, `commits` commits of `rows` rows each
// (later commits overwrite earlier rows, leaving free pages), with values
// of `value_bytes`; its data.mdb.
std::string StateImage(int commits, int rows, size_t value_bytes) {
  const std::string dir = (std::filesystem::temp_directory_path() / "spool-seed-state").string();
  std::filesystem::remove_all(dir);
  {
    spool::StateStoreOptions options;
    options.path = dir;
    options.background = false;
    std::unique_ptr<spool::StateStore> store;
    Must(spool::StateStore::Open(options, &store), "open a state");
    for (int c = 1; c <= commits; ++c) {
      spool::StateDelta delta;
      for (int i = 0; i < rows; ++i) {
        delta.Put(spool::StateRowKey(3, "key-" + std::to_string(i)),
                  std::string(value_bytes, static_cast<char>('a' + c)));
      }
      delta.Put(spool::StateCheckpointKey("flow"), "offsets " + std::to_string(c));
      delta.position = spool::StatePosition{0x5707e5707eull, 1, static_cast<uint64_t>(c), static_cast<uint64_t>(c)};
      Must(store->Stage(std::move(delta)), "stage");
      Must(store->Flush(), "flush");
    }
  }
  std::ifstream in(dir + "/gen-000001/data.mdb", std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string image = bytes.str();
  std::filesystem::remove_all(dir);
  return image;
}

void WriteStateImageSeeds(const std::string& dir) {
  std::filesystem::create_directories(dir);
  Write(dir + "/one_commit", StateImage(1, 3, 10));    // a leaf root
  Write(dir + "/branches", StateImage(1, 300, 40));    // branch pages over leaves
  Write(dir + "/overflow", StateImage(1, 2, 6000));    // values in overflow runs
  Write(dir + "/free_lists", StateImage(4, 120, 30));  // overwrites: free-page lists
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [TARGET...]\n", argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  std::set<std::string> targets(argv + 2, argv + argc);
  const std::set<std::string> known{"record_decoder", "log_recovery", "commit_decoder", "snapshot_decoder",
                                    "row_decoder",    "records",      "segment_header", "log_directory",
                                    "event_decoder",  "bad_segments", "state_image"};
  for (const std::string& target : targets) {
    if (known.count(target) == 0) Die("unknown target " + target);
  }
  if (targets.empty()) targets = known;
  if (targets.count("record_decoder") != 0 || targets.count("log_recovery") != 0) {
    WriteLogSeeds(root, targets.count("record_decoder") != 0, targets.count("log_recovery") != 0);
  }
  if (targets.count("commit_decoder") != 0) WriteCommitSeeds(root + "/commit_decoder");
  if (targets.count("snapshot_decoder") != 0) WriteSnapshotSeeds(root + "/snapshot_decoder");
  if (targets.count("row_decoder") != 0) WriteRowSeeds(root + "/row_decoder");
  if (targets.count("records") != 0) WriteRecordsSeeds(root + "/records");
  if (targets.count("segment_header") != 0) WriteSegmentHeaderSeeds(root + "/segment_header");
  if (targets.count("log_directory") != 0) WriteLogDirectorySeeds(root + "/log_directory");
  if (targets.count("event_decoder") != 0) WriteEventSeeds(root + "/event_decoder");
  if (targets.count("bad_segments") != 0) WriteBadSegmentCorpus(root + "/bad_segments");
  if (targets.count("state_image") != 0) WriteStateImageSeeds(root + "/state_image");
  return 0;
}
