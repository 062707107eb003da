// Store: reads — current and as of a version (time travel), history, the
// change data feed — and restore, which is a read and a commit.
#include <algorithm>
#include <array>
#include <cstring>

#include <nlohmann/json.hpp>

#include "row_codec.h"
#include "snapshot_file.h"
#include "store_impl.h"
#include "store_internal.h"
#include "varint.h"

namespace spool {
namespace {

std::string RangeError(uint64_t version, const VersionRange& range) {
  if (range.newest == 0) return "version " + std::to_string(version) + " is not available: the store has no commits";
  return "version " + std::to_string(version) + " is not available: versions " + std::to_string(range.oldest) + " (" +
         FormatTimestampUtc(range.oldest_timestamp_us) + ") to " + std::to_string(range.newest) + " (" +
         FormatTimestampUtc(range.newest_timestamp_us) + ") are";
}

// Whether `entry` is the RESTORE commit of a rewind that cut the log
// (Store::RewindTo), and then the version it went back to.
bool RewindPoint(const LogEntry& entry, const CommitRecord& record, uint64_t* point) {
  if (entry.operation != "RESTORE") return false;
  const nlohmann::json parameters = nlohmann::json::parse(record.parameters_json, nullptr, /*allow_exceptions=*/false);
  if (!parameters.is_object() || !parameters.contains("rewind") || !parameters.contains("version") ||
      !parameters["version"].is_number_unsigned()) {
    return false;
  }
  *point = parameters["version"].get<uint64_t>();
  return true;
}

// The encoded bounds of a read's key range (empty: open).
Status KeyRange(const TableInfo& table, const ReadOptions& options, std::string* begin, std::string* end) {
  if (!options.start_key && !options.end_key) return Status::OK();
  if (!table.schema.has_key()) {
    return Status::InvalidArgument("table " + table.id.ToString() +
                                   " has no primary key: it cannot be read by key range");
  }
  if (options.start_key) SPOOL_RETURN_IF_ERROR(EncodeKeyValues(table.schema, *options.start_key, true, begin));
  if (options.end_key) SPOOL_RETURN_IF_ERROR(EncodeKeyValues(table.schema, *options.end_key, true, end));
  // A value's encoding ends where it does (strings are terminated), so the
  // keys that start with a prefix's values are those that start with its
  // bytes; a part begins with 0x00 or 0x01, so PrefixEnd never runs out.
  if (options.start_exclusive && options.start_key) *begin = PrefixEnd(*begin);
  if (options.end_inclusive && options.end_key) *end = PrefixEnd(*end);
  return Status::OK();
}

// Whether `key` is in [begin, end), an empty bound being open.
bool InRange(std::string_view key, std::string_view begin, std::string_view end) {
  return (begin.empty() || key >= begin) && (end.empty() || key < end);
}

// The history index entries after a version, one run per commit (sorted
// by key, commits in version order), merged into key order: for each key,
// its oldest entry — the row the version saw. Views into the runs, which
// the caller keeps alive.
//
// Merged as it is walked, by a tournament of the runs (a loser tree: a
// step replays one leaf-to-root path, log2(runs) comparisons of the keys'
// eight-byte heads), so the merge holds nothing per entry. Sorting every
// entry up front instead (a radix sort of their heads) took half the time
// of a heap at W5's 50 runs of 1,000 entries, but at a million rows (50
// runs of 10,000) the arrays it filled took 165 ms of a 315 ms read,
// mostly faulting their memory in.
class IndexMerge {
 public:
  // `runs` oldest first, each checked (OpenedRuns); `shared` bytes every
  // key shares; only keys in [begin, end) are merged (InRange). To the
  // first key.
  IndexMerge(const std::vector<std::string_view>& runs, size_t shared, std::string_view begin, std::string_view end)
      : cursors_(runs.size()), shared_(shared), end_(end) {
    for (size_t i = 0; i < runs.size(); ++i) {
      Cursor& cursor = cursors_[i];
      cursor.rest = runs[i];
      do {  // to its first key in range
        Advance(&cursor);
      } while (!cursor.done && !begin.empty() && cursor.key < begin);
    }
    size_t leaves = 1;
    while (leaves < cursors_.size()) leaves *= 2;
    cursors_.resize(leaves);  // the padding: empty runs
    losers_.resize(leaves);
    winner_ = Build(1).cursor;
  }

  bool Valid() const { return !cursors_[winner_].done; }
  std::string_view key() const { return cursors_[winner_].key; }
  std::string_view value() const { return cursors_[winner_].value; }
  // To the next key.
  void Next() {
    const uint64_t head = cursors_[winner_].head;
    const std::string_view last = key();
    do {
      Advance(&cursors_[winner_]);
      Replay();
    } while (Valid() && cursors_[winner_].head == head && key() == last);  // the newer runs' entries of the key
  }

 private:
  static constexpr size_t kPrefetchBytes = 256;

  struct Cursor {
    std::string_view rest;         // the run after this entry
    std::string_view key, value;   // this entry
    uint64_t head = ~uint64_t{0};  // eight bytes of the key after the shared prefix
    bool done = true;              // past the run's last entry in range
  };

  // A cursor as the tournament plays it: its head beside its number.
  struct Player {
    uint64_t head;
    size_t cursor;
  };

  // To the cursor's next entry in range.
  void Advance(Cursor* cursor) const {
    cursor->done = cursor->rest.empty() || !ParseHistoryEntry(&cursor->rest, &cursor->key, &cursor->value) ||
                   (!end_.empty() && cursor->key >= end_);  // the runs were checked: parsed, every one
    // A done run sorts last: its head is all ones, and where another's is
    // too, Before looks at `done`.
    cursor->head = cursor->done ? ~uint64_t{0} : Head(cursor->key);
    // The runs are read side by side, too many streams for the hardware
    // to see coming (at a million rows, the merge took 1.6 × as long
    // without this).
    if (cursor->rest.size() > kPrefetchBytes) __builtin_prefetch(cursor->rest.data() + kPrefetchBytes);
  }
  Player PlayerOf(size_t cursor) const { return Player{cursors_[cursor].head, cursor}; }
  // Whether `a`'s entry comes before `b`'s: by key, then the older run's
  // first.
  bool Before(const Player& a, const Player& b) const {
    if (a.head != b.head) [[likely]] {
      return a.head < b.head;
    }
    const Cursor& x = cursors_[a.cursor];
    const Cursor& y = cursors_[b.cursor];
    if (x.done || y.done) return !x.done;
    const int order = CompareBytes(x.key, y.key);
    return order < 0 || (order == 0 && a.cursor < b.cursor);
  }
  // The winner of the subtree at `node` (leaves are nodes leaves..2·leaves-1),
  // its losers recorded.
  Player Build(size_t node) {
    const size_t leaves = cursors_.size();
    if (node >= leaves) return PlayerOf(node - leaves);
    const Player left = Build(2 * node), right = Build(2 * node + 1);
    const bool left_wins = Before(left, right);
    losers_[node] = left_wins ? right : left;
    return left_wins ? left : right;
  }
  // The winner's cursor moved: its way to the root played again, each
  // match decided without a jump where the heads differ.
  void Replay() {
    Player winner = PlayerOf(winner_);
    for (size_t node = (winner.cursor + cursors_.size()) / 2; node >= 1; node /= 2) {
      const Player loser = losers_[node];
      const bool swap = Before(loser, winner);
      losers_[node] = swap ? winner : loser;
      winner = swap ? loser : winner;
    }
    winner_ = winner.cursor;
  }
  // Eight bytes of `key` after the shared prefix, big-endian: ordered as
  // the keys are where they differ (short keys zero-padded, so equal heads
  // still need the whole keys compared).
  uint64_t Head(std::string_view key) const {
    if (key.size() >= shared_ + 8) return GetBigEndian64(key.substr(shared_));
    uint64_t head = 0;
    for (size_t i = shared_; i < shared_ + 8; ++i) {
      head = head << 8 | (i < key.size() ? static_cast<uint8_t>(key[i]) : 0);
    }
    return head;
  }

  std::vector<Cursor> cursors_;
  std::vector<Player> losers_;  // losers_[node]: who lost there (node ≥ 1)
  size_t winner_ = 0;
  size_t shared_;
  std::string_view end_;
};

}  // namespace

VersionRange StoreImpl::AvailableVersions() {
  const LogPosition oldest = log_->Oldest(), newest = log_->Newest();
  VersionRange range;
  if (newest.version == 0) return range;
  // The state just before the oldest retained commit can be rebuilt too,
  // but a read names versions whose commits it can show.
  range.oldest = oldest.version;
  range.newest = newest.version;
  LogEntry entry;
  if (log_->Read(range.oldest, &entry).ok()) range.oldest_timestamp_us = entry.timestamp_us;
  if (log_->Read(range.newest, &entry).ok()) range.newest_timestamp_us = entry.timestamp_us;
  return range;
}

uint64_t StoreImpl::CommitsAfter(uint64_t version) {
  uint64_t commits = 0;
  for (const LogSegmentInfo& segment : log_->Segments()) {  // dense within a segment
    const uint64_t first = std::max(segment.first_version, version + 1);
    if (segment.last_version >= first) commits += segment.last_version - first + 1;
  }
  return commits;
}

Status StoreImpl::ResolveVersion(const ReadOptions& options, uint64_t newest, uint64_t* version) {
  if (options.version && options.timestamp_us) {
    return Status::InvalidArgument("give a version or a timestamp, not both");
  }
  if (options.timestamp_us) {
    Status s = log_->VersionAtTime(*options.timestamp_us, version);
    if (s.IsNotFound()) {
      const VersionRange range = AvailableVersions();
      return Status::InvalidArgument("timestamp " + FormatTimestampUtc(*options.timestamp_us) +
                                     " is before the oldest available commit: version " + std::to_string(range.oldest) +
                                     " at " + FormatTimestampUtc(range.oldest_timestamp_us));
    }
    SPOOL_RETURN_IF_ERROR(s);
    *version = std::min(*version, newest);
    return Status::OK();
  }
  if (!options.version) {
    *version = newest;
    return Status::OK();
  }
  *version = *options.version;
  const VersionRange range = AvailableVersions();
  if (*version > newest || *version < range.oldest || *version == 0) {
    return Status::InvalidArgument(RangeError(*version, range));
  }
  return Status::OK();
}

// REQUIRES: commit_mu_ held, or called by a reader holding it.
Status StoreImpl::TableAtLocked(const TableId& id, uint64_t version, TableInfo* table) {
  std::map<std::string, TableInfo> catalog;
  std::vector<std::vector<DdlRecord>> later;
  SPOOL_RETURN_IF_ERROR(CatalogAndDdlAfter(version, &catalog, &later));
  // Undo, newest first, every DDL after `version`.
  for (const std::vector<DdlRecord>& commit : later) {
    for (auto it = commit.rbegin(); it != commit.rend(); ++it) {
      if (it->after) catalog.erase(it->after->id.ToString());
      if (it->before) catalog[it->before->id.ToString()] = *it->before;
    }
  }
  auto it = catalog.find(id.ToString());
  if (it == catalog.end()) {
    return Status::NotFound("table " + id.ToString() + " does not exist at version " + std::to_string(version));
  }
  *table = it->second;
  return Status::OK();
}

Status StoreImpl::CaptureTable(const TableId& id, const ReadOptions& options, Capture* capture) {
  std::lock_guard lock(commit_mu_);
  // What is staged, not what is queued; but a version the log has shown
  // (it shows durable commits, staged once waited for) is read as of itself.
  if (options.version && *options.version > state_->position().version) (void)SettleLocked(nullptr);
  return CaptureTableLocked(id, options, capture);
}

Status StoreImpl::CaptureTableLocked(const TableId& id, const ReadOptions& options, Capture* capture) {
  capture->newest = state_->position().version;
  SPOOL_RETURN_IF_ERROR(ResolveVersion(options, capture->newest, &capture->version));
  SPOOL_RETURN_IF_ERROR(TableAtLocked(id, capture->version, &capture->table));
  capture->prefix = StateRowPrefix(capture->table.uid);
  capture->pin = PinVersion(capture->version);
  SPOOL_RETURN_IF_ERROR(state_->NewView(capture->prefix, PrefixEnd(capture->prefix), &capture->view));
  if (capture->version == capture->newest) return Status::OK();
  // The history index serves versions after its floor (a rebuilt state's
  // index begins at the snapshot it was rebuilt from, a vacuumed one at the
  // vacuum's floor).
  uint64_t floor = 0;
  SPOOL_RETURN_IF_ERROR(HistoryFloor(&floor));
  if (floor > capture->version) return Status::OK();
  const std::string history = StateHistoryPrefix(capture->table.uid);
  return state_->NewView(history, PrefixEnd(history), &capture->history);
}

Status StoreImpl::HistoryFloor(uint64_t* floor) {
  std::string value;
  bool found = false;
  SPOOL_RETURN_IF_ERROR(state_->Get(kStateHistoryFloorKey, &value, &found));
  if (found && value.size() != 8) {
    return Status::Corruption("state store: history floor of " + std::to_string(value.size()) + " bytes");
  }
  *floor = found ? GetBigEndian64(value) : 0;
  return Status::OK();
}

// Estimated bytes of the log's commits (after, upto], from segment sizes.
uint64_t StoreImpl::LogBytesBetween(uint64_t after, uint64_t upto) {
  double bytes = 0;
  for (const LogSegmentInfo& segment : log_->Segments()) {
    if (segment.last_version < segment.first_version) continue;
    const uint64_t lo = std::max(segment.first_version, after + 1), hi = std::min(segment.last_version, upto);
    if (lo > hi) continue;
    const double share =
        static_cast<double>(hi - lo + 1) / static_cast<double>(segment.last_version - segment.first_version + 1);
    bytes += share * static_cast<double>(segment.data_end_bytes);
  }
  return static_cast<uint64_t>(bytes);
}

// Calls `visit(key, row)` for every row of the captured table as of the
// captured version with begin <= key < end (end empty: unbounded), in key
// order. The rows changed since the version come from the history index,
// when it covers the version, or else from the pre-images in the log
// (backward); or the read goes forward from the newest snapshot at or
// before the version (or the empty store, while the log begins at version
// 1) with the log after it replayed — whichever reads less. A restore to a
// version far back is then flat in the history after it.
Status StoreImpl::ScanCaptured(Capture& c, const std::string& begin, const std::string& end,
                               const std::function<bool(std::string_view key, std::string_view row)>& visit) {
  if (c.version == c.newest) return ScanBackward(c, begin, end, visit);  // nothing to undo
  // An index entry costs about half the same change in the log, which is
  // decompressed and decoded whole, pre- and post-image (W5 and W6's longer
  // histories: 0.16–0.5 ms per 1,000-row update commit read through the
  // index, about 0.8 ms replayed forward).
  constexpr uint64_t kIndexAdvantage = 2;
  uint64_t later = LogBytesBetween(c.version, c.newest);
  if (c.history != nullptr) later /= kIndexAdvantage;
  std::vector<SnapshotInfo> snapshots;
  SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(&snapshots));
  const uint64_t before_oldest = log_->BeforeOldest().version;
  std::optional<SnapshotInfo> base;
  if (before_oldest == 0) base = SnapshotInfo{};  // the empty store before version 1
  for (const SnapshotInfo& snapshot : snapshots) {
    if (snapshot.version <= c.version && snapshot.version >= before_oldest) base = snapshot;
  }
  // A snapshot is compressed, holds every table and is parsed whole.
  if (base && 3 * base->bytes + LogBytesBetween(base->version, c.version) < later) {
    return ScanForward(c, *base, begin, end, visit);
  }
  return c.history != nullptr ? ScanIndexed(c, begin, end, visit) : ScanBackward(c, begin, end, visit);
}

Status StoreImpl::ScanForward(Capture& c, const SnapshotInfo& base, const std::string& begin, const std::string& end,
                              const std::function<bool(std::string_view key, std::string_view row)>& visit) {
  std::unique_ptr<VersionPin> pin = PinVersion(base.version);
  // Only the range's rows are kept: a point read replays the log's bytes,
  // not every row of the table into the map.
  const auto in_range = [&](std::string_view key) { return InRange(key, begin, end); };
  std::map<std::string, std::string, std::less<>> rows;
  if (!base.file_name.empty()) {
    SnapshotHeader header;
    Status split;
    Status s = ReadSnapshot(options_.env, JoinPath(snapshot_dir(), base.file_name), log_->StoreId(), &header,
                            [&](std::string_view key, std::string_view value) {
                              if (key < c.prefix) return true;
                              if (!key.starts_with(c.prefix)) return false;  // past the table
                              const std::string_view row_key = key.substr(c.prefix.size());
                              if (!in_range(row_key)) return true;
                              std::string_view row;
                              split = StateRowBytes(value, &row);
                              if (split.ok()) rows.emplace(row_key, row);
                              return split.ok();
                            });
    // A vacuum may have taken the snapshot since it was listed; the capture's
    // pin keeps the log the backward way needs.
    if (s.IsNotFound()) return ScanBackward(c, begin, end, visit);
    SPOOL_RETURN_IF_ERROR(s);
    SPOOL_RETURN_IF_ERROR(split.WithContext("snapshot " + base.file_name));
  }
  if (base.version < c.version) {
    SPOOL_RETURN_IF_ERROR(
        ScanChanges(c.table.uid, base.version + 1, c.version, [&](std::string& key, RowChangeRecord& change) {
          if (!in_range(key)) return;
          if (change.kind == RowChangeKind::kDelete) rows.erase(key);
          else rows.insert_or_assign(std::move(key), std::move(change.post));
        }));
  }
  for (auto it = rows.lower_bound(begin); it != rows.end() && (end.empty() || it->first < end); ++it) {
    if (!visit(it->first, it->second)) break;
  }
  return Status::OK();
}

// Backward: the current rows, with every change after the version undone.
Status StoreImpl::ScanBackward(Capture& c, const std::string& begin, const std::string& end,
                               const std::function<bool(std::string_view key, std::string_view row)>& visit) {
  const auto in_range = [&](std::string_view key) { return InRange(key, begin, end); };
  // (key, the row at the version or nullopt when absent), from each key's
  // first change after it: collected in commit order, then sorted by key
  // keeping the first of each (a sorted vector costs a fraction of a map).
  using Undo = std::pair<std::string, std::optional<std::string>>;
  std::vector<Undo> undo;
  if (c.version < c.newest) {
    SPOOL_RETURN_IF_ERROR(
        ScanChanges(c.table.uid, c.version + 1, c.newest, [&](std::string& key, RowChangeRecord& change) {
          if (!in_range(key)) return;
          std::optional<std::string> before;
          if (change.kind != RowChangeKind::kInsert) before = std::move(change.pre);
          undo.emplace_back(std::move(key), std::move(before));
        }));
    std::stable_sort(undo.begin(), undo.end(), [](const Undo& a, const Undo& b) { return a.first < b.first; });
    undo.erase(std::unique(undo.begin(), undo.end(), [](const Undo& a, const Undo& b) { return a.first == b.first; }),
               undo.end());
  }
  StateView& view = *c.view;
  view.Seek(c.prefix + begin);
  auto u = undo.begin();
  while (true) {
    std::string_view key;
    bool have_view = view.Valid();
    if (have_view) {
      key = view.key().substr(c.prefix.size());
      if (!in_range(key)) have_view = false;
    }
    if (!have_view && u == undo.end()) break;
    if (u != undo.end() && (!have_view || std::string_view(u->first) <= key)) {
      if (have_view && u->first == key) view.Next();
      if (u->second && !visit(u->first, *u->second)) return Status::OK();
      ++u;
      continue;
    }
    std::string_view row;
    SPOOL_RETURN_IF_ERROR(StateRowBytes(view.value(), &row));
    if (!visit(key, row)) return Status::OK();
    view.Next();
  }
  return view.status();
}

// Indexed: the rows merged, in key order, with the history index's runs of
// the commits after the version. A key with an entry was changed since:
// its oldest entry holds the row the version saw. Any other key's current row is unchanged since.
// Either counts only when written at or before the version (a later one:
// the key had no row then).
Status StoreImpl::ScanIndexed(Capture& c, const std::string& begin, const std::string& end,
                              const std::function<bool(std::string_view key, std::string_view row)>& visit) {
  const auto in_range = [&](std::string_view key) { return InRange(key, begin, end); };
  StateView& history = *c.history;
  std::string from = StateHistoryPrefix(c.table.uid);
  PutBigEndian64(&from, c.version + 1);
  std::vector<std::string_view> runs;
  for (history.Seek(from); history.Valid(); history.Next()) runs.push_back(history.value());
  SPOOL_RETURN_IF_ERROR(history.status());
  OpenedRuns opened(&run_memory_);  // alive while the merge points into its runs
  SPOOL_RETURN_IF_ERROR(opened.Open(&runs).WithContext("table " + c.table.id.ToString() + ": history index"));
  IndexMerge index(runs, opened.shared_prefix(), begin, end);

  StateView& rows = *c.view;
  Status parsed;
  std::string_view row;
  // Whether `value` (a row's or an entry's) existed at the version.
  const auto at_version = [&](std::string_view value) {
    uint64_t written = 0;
    parsed = SplitStateRow(value, &written, &row);
    return parsed.ok() && written <= c.version;
  };
  for (rows.Seek(c.prefix + begin);;) {
    std::string_view key;
    const bool have_row = rows.Valid() && in_range(key = rows.key().substr(c.prefix.size()));
    const int order = !index.Valid() ? 1 : have_row ? CompareBytes(index.key(), key) : -1;
    if (order <= 0) {
      if (order == 0) rows.Next();
      if (at_version(index.value()) && !visit(index.key(), row)) return Status::OK();
      index.Next();
    } else if (have_row) {
      if (at_version(rows.value()) && !visit(key, row)) return Status::OK();
      rows.Next();
    } else {
      break;
    }
    if (!parsed.ok()) return parsed.WithContext("table " + c.table.id.ToString());
  }
  return rows.status();
}

Status StoreImpl::Read(const TableId& id, const ReadOptions& options, const std::function<bool(const Row&)>& visit,
                       TableInfo* table, uint64_t* version_read) {
  Row row;
  return Scan(
      id, options,
      [&](const RowView& view) {
        view.CopyTo(&row);
        return visit(row);
      },
      table, version_read);
}

Status StoreImpl::Scan(const TableId& id, const ReadOptions& options, const std::function<bool(const RowView&)>& visit,
                       TableInfo* table, uint64_t* version_read) {
  if (options.version && !options.timestamp_us && IsCutVersion(*options.version)) {
    return ScanCutVersion(id, options, visit, table, version_read);
  }
  Capture c;
  SPOOL_RETURN_IF_ERROR(CaptureTable(id, options, &c));
  std::string begin, end;
  SPOOL_RETURN_IF_ERROR(KeyRange(c.table, options, &begin, &end));
  if (table != nullptr) *table = c.table;
  if (version_read != nullptr) *version_read = c.version;
  Status decoded;
  RowView row;
  Status scanned = ScanCaptured(c, begin, end, [&](std::string_view, std::string_view bytes) {
    decoded = ParseRow(c.table.schema, bytes, &row);
    return decoded.ok() && visit(row);
  });
  // Damage found in the state names the table (and the state, the key).
  if (!scanned.ok()) return scanned.IsCorruption() ? scanned.WithContext("table " + id.ToString()) : scanned;
  return decoded.WithContext("table " + id.ToString());
}

Status StoreImpl::Get(const TableId& id, const Row& key, Row* row, bool* found) {
  TableInfo table;
  SPOOL_RETURN_IF_ERROR(GetTable(id, &table));
  if (!table.schema.has_key()) return Status::InvalidArgument("table " + id.ToString() + " has no primary key");
  std::string encoded = StateRowPrefix(table.uid);
  Status s = EncodeKeyValues(table.schema, key, false, &encoded);
  if (!s.ok()) return Status::InvalidArgument("table " + id.ToString() + ": " + std::string(s.message()));
  std::string value;
  SPOOL_RETURN_IF_ERROR(state_->Get(encoded, &value, found).WithContext("table " + id.ToString()));
  if (!*found) return Status::OK();
  std::string_view bytes;
  SPOOL_RETURN_IF_ERROR(StateRowBytes(value, &bytes));
  return DecodeRow(table.schema, bytes, row);
}

Status StoreImpl::GetCheckpoint(const std::string& flow, std::string* data, bool* found) {
  return state_->Get(StateCheckpointKey(flow), data, found);
}

Status StoreImpl::GetCheckpointAt(const std::string& flow, uint64_t version, std::string* data, bool* found) {
  std::unique_lock lock = LockSettled();  // the current value must be the one after the commits read
  std::vector<ArchivedCut> cuts;
  if (IsCutVersion(version)) SPOOL_RETURN_IF_ERROR(ListArchivedCuts(&cuts));
  return GetCheckpointAtLocked(&cuts, flow, version, data, found);
}

Status StoreImpl::GetCheckpointAtLocked(const std::vector<ArchivedCut>* cuts, const std::string& flow, uint64_t version,
                                        std::string* data, bool* found) {
  if (cuts != nullptr && IsCutVersion(version)) {
    // The last value the cut set up to `version`, else the one at its point.
    const ArchivedCut* cut = nullptr;
    SPOOL_RETURN_IF_ERROR(CutHolding(*cuts, version, &cut));
    std::optional<std::optional<std::string>> set;
    SPOOL_RETURN_IF_ERROR(ScanArchivedUpTo(*cut, version, [&](const LogEntry&, CommitRecord& record) {
      for (CheckpointRecord& checkpoint : record.checkpoints) {
        if (checkpoint.flow == flow) set = std::move(checkpoint.after);
      }
      return Status::OK();
    }));
    if (!set) return GetCheckpointAtLocked(cuts, flow, cut->point, data, found);
    *found = set->has_value();
    if (*found) *data = **set;
    return Status::OK();
  }
  const uint64_t newest = log_->Newest().version;
  if (version > newest) {
    return Status::InvalidArgument("version " + std::to_string(version) + " is beyond the newest, " +
                                   std::to_string(newest));
  }
  if (version < newest) {
    std::unique_ptr<LogIterator> it;
    SPOOL_RETURN_IF_ERROR(log_->NewIterator(version + 1, &it));
    LogEntry entry;
    CommitRecord record;
    while (it->Next(&entry)) {
      Status s = DecodeCommit(entry.body, &record);
      if (!s.ok()) return s.WithContext("log version " + std::to_string(entry.position.version));
      for (const CheckpointRecord& checkpoint : record.checkpoints) {
        if (checkpoint.flow != flow) continue;
        *found = checkpoint.before.has_value();
        if (*found) *data = *checkpoint.before;
        return Status::OK();
      }
    }
    SPOOL_RETURN_IF_ERROR(it->status());
  }
  return GetCheckpoint(flow, data, found);
}

std::vector<TableInfo> StoreImpl::ListTables() {
  std::shared_lock lock(catalog_mu_);
  std::vector<TableInfo> tables;
  for (const auto& [name, table] : catalog_) tables.push_back(table);
  return tables;
}

Status StoreImpl::GetTable(const TableId& id, TableInfo* table) {
  std::shared_lock lock(catalog_mu_);
  auto it = catalog_.find(id.ToString());
  if (it == catalog_.end()) return Status::NotFound("table " + id.ToString() + " does not exist");
  *table = it->second;
  return Status::OK();
}

// Calls `visit` with each retained commit of [from, to] that touched table
// `uid` (its row changes decoded, other tables' skipped).
Status StoreImpl::ScanCommits(uint64_t uid, uint64_t from, uint64_t to,
                              const std::function<bool(const LogEntry&, CommitRecord&)>& visit) {
  std::unique_ptr<VersionPin> pin = PinVersion(from);
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(log_->NewIterator(from, &it));
  LogEntry entry;
  CommitRecord record;
  while (it->Next(&entry) && entry.position.version <= to) {
    SPOOL_RETURN_IF_ERROR(
        DecodeCommit(entry.body, &record, uid).WithContext("log version " + std::to_string(entry.position.version)));
    const bool touched =
        !record.tables.empty() || std::any_of(record.ddl.begin(), record.ddl.end(), [&](const DdlRecord& d) {
          return (d.after && d.after->uid == uid) || (d.before && d.before->uid == uid);
        });
    if (touched && !visit(entry, record)) return Status::OK();
  }
  return it->status();
}

// Calls `visit(key, change)` for each row change of table `uid` in versions
// [from, to], in commit order; a keyless insert's key is its derived row id.
Status StoreImpl::ScanChanges(uint64_t uid, uint64_t from, uint64_t to,
                              const std::function<void(std::string& key, RowChangeRecord& change)>& visit) {
  return ScanCommits(uid, from, to, [&](const LogEntry& entry, CommitRecord& record) {
    for (TableChangeSet& set : record.tables) {
      uint32_t keyless_index = 0;
      for (RowChangeRecord& change : set.changes) {
        std::string key =
            change.key.empty() ? KeylessRowId(entry.position.version, keyless_index++) : std::move(change.key);
        visit(key, change);
      }
    }
    return true;
  });
}

Status StoreImpl::History(const TableId& id, std::vector<HistoryEntry>* history, uint64_t limit, uint64_t from) {
  TableInfo table;
  SPOOL_RETURN_IF_ERROR(GetTable(id, &table));
  const VersionRange range = AvailableVersions();
  history->clear();
  from = std::max({from, range.oldest, table.created_version()});
  if (from > range.newest) return Status::OK();
  SPOOL_RETURN_IF_ERROR(ScanCommits(table.uid, from, range.newest, [&](const LogEntry& entry, CommitRecord& record) {
    HistoryEntry h{entry.position.version, entry.timestamp_us, entry.operation, record.parameters_json, {},
                   record.update_id};
    int64_t inserted = 0, updated = 0, deleted = 0, bytes = 0;
    for (const TableChangeSet& set : record.tables) {
      for (const RowChangeRecord& change : set.changes) {
        inserted += change.kind == RowChangeKind::kInsert;
        updated += change.kind == RowChangeKind::kUpdate;
        deleted += change.kind == RowChangeKind::kDelete;
        bytes += static_cast<int64_t>(change.post.size());
      }
    }
    h.metrics = record.metrics;
    h.metrics["numOutputRows"] = inserted + updated;
    h.metrics["numInsertedRows"] = inserted;
    h.metrics["numUpdatedRows"] = updated;
    h.metrics["numDeletedRows"] = deleted;
    h.metrics["numOutputBytes"] = bytes;
    h.metrics["executionTimeUs"] = static_cast<int64_t>(record.execution_time_us);
    history->push_back(std::move(h));
    return true;
  }));
  std::reverse(history->begin(), history->end());
  if (limit != 0 && history->size() > limit) history->resize(limit);
  return Status::OK();
}

Status StoreImpl::Changes(const TableId& id, uint64_t from, uint64_t to,
                          const std::function<bool(const ChangeRow&)>& visit, TableInfo* table_out) {
  const VersionRange range = AvailableVersions();
  if (to == 0) to = range.newest;
  // From the version after the history's start before the oldest retained
  // commit (a version a rewind cut may lie between them).
  if (from <= log_->BeforeOldest().version || from > range.newest) {
    return Status::InvalidArgument(RangeError(from, range));
  }
  if (to > range.newest) return Status::InvalidArgument(RangeError(to, range));
  if (to < from) {
    return Status::InvalidArgument("change feed from version " + std::to_string(from) + " to version " +
                                   std::to_string(to) + " is reversed");
  }
  if (IsCutVersion(to)) {
    return Status::InvalidArgument("version " + std::to_string(to) +
                                   " was cut by a rewind: the change feed ends at a version of the current history "
                                   "(read a cut version by time travel)");
  }
  TableInfo table;
  {
    std::lock_guard lock(commit_mu_);
    SPOOL_RETURN_IF_ERROR(TableAtLocked(id, to, &table));
  }
  if (table_out != nullptr) *table_out = table;
  Status decoded;
  ChangeRow out;
  auto emit = [&](ChangeType type, const std::string& bytes) {
    out.change_type = type;
    decoded = DecodeRow(table.schema, bytes, &out.row);
    return decoded.ok() && visit(out);
  };
  Status failed;
  SPOOL_RETURN_IF_ERROR(ScanCommits(table.uid, from, to, [&](const LogEntry& entry, CommitRecord& record) {
    out.commit_version = entry.position.version;
    out.commit_timestamp_us = entry.timestamp_us;
    // A rewind's commit, for a reader that read versions the rewind cut:
    // what the rewind undid of them.
    uint64_t point = 0;
    if (RewindPoint(entry, record, &point) && from - 1 > point) {
      bool go = true;
      failed = RewindNetChange(table.uid, from - 1, point,
                               [&](ChangeType type, const std::string& row) { return go = emit(type, row); });
      return failed.ok() && go;
    }
    for (const TableChangeSet& set : record.tables) {
      for (const RowChangeRecord& change : set.changes) {
        bool go = true;
        switch (change.kind) {
          case RowChangeKind::kInsert:
            go = emit(ChangeType::kInsert, change.post);
            break;
          case RowChangeKind::kUpdate:
            go = emit(ChangeType::kUpdatePreimage, change.pre) && emit(ChangeType::kUpdatePostimage, change.post);
            break;
          case RowChangeKind::kDelete:
            go = emit(ChangeType::kDelete, change.pre);
            break;
        }
        if (!go) return false;
      }
    }
    return true;
  }));
  SPOOL_RETURN_IF_ERROR(failed);
  return decoded.WithContext("table " + id.ToString());
}

Status StoreImpl::RewindNetChange(uint64_t uid, uint64_t seen, uint64_t point,
                                  const std::function<bool(ChangeType, const std::string& row)>& emit) {
  std::vector<ArchivedCut> cuts;
  SPOOL_RETURN_IF_ERROR(ListArchivedCuts(&cuts));
  // From `seen` back to the point: the cuts holding the versions on the way
  // (the newest first), each read up to the version on the way.
  std::vector<std::pair<const ArchivedCut*, uint64_t>> path;
  for (uint64_t at = seen; at != point;) {
    if (!IsCutVersion(at)) {
      return Status::InvalidArgument("version " + std::to_string(seen) +
                                     " is not on a history that the rewind to version " + std::to_string(point) +
                                     " cut");
    }
    const ArchivedCut* cut = nullptr;
    SPOOL_RETURN_IF_ERROR(CutHolding(cuts, at, &cut));
    path.emplace_back(cut, at);
    at = cut->point;
  }
  // Each key's row at the point (the first change's pre-image) and at
  // `seen` (the last change's post-image); absent when there was none.
  std::map<std::string, std::pair<std::optional<std::string>, std::optional<std::string>>> rows;
  for (auto step = path.rbegin(); step != path.rend(); ++step) {
    SPOOL_RETURN_IF_ERROR(
        ScanArchivedUpTo(*step->first, step->second, [&](const LogEntry& entry, CommitRecord& record) {
          for (TableChangeSet& set : record.tables) {
            if (set.uid != uid) continue;
            uint32_t keyless_index = 0;
            for (RowChangeRecord& change : set.changes) {
              std::string key =
                  change.key.empty() ? KeylessRowId(entry.position.version, keyless_index++) : std::move(change.key);
              auto [it, first] = rows.try_emplace(std::move(key));
              if (first && change.kind != RowChangeKind::kInsert) it->second.first = std::move(change.pre);
              it->second.second.reset();
              if (change.kind != RowChangeKind::kDelete) it->second.second = std::move(change.post);
            }
          }
          return Status::OK();
        }));
  }
  for (const auto& [key, images] : rows) {
    const auto& [at_point, at_seen] = images;
    if (at_point == at_seen) continue;
    bool go = true;
    if (!at_point) go = emit(ChangeType::kDelete, *at_seen);
    else if (!at_seen) go = emit(ChangeType::kInsert, *at_point);
    else go = emit(ChangeType::kUpdatePreimage, *at_seen) && emit(ChangeType::kUpdatePostimage, *at_point);
    if (!go) break;
  }
  return Status::OK();
}

Status StoreImpl::ReadArchived(const ArchivedCut& cut, const TableId& id, uint64_t version,
                               const std::function<bool(const Row&)>& visit, TableInfo* table_out) {
  if (cut.commits == 0 || version < cut.first_version || version > cut.last_version) {
    return Status::InvalidArgument("version " + std::to_string(version) + " is not in the archived cut " + cut.dir +
                                   " (versions " + std::to_string(cut.first_version) + "-" +
                                   std::to_string(cut.last_version) + ")");
  }
  TableInfo table;
  std::map<std::string, std::string> rows;
  {
    std::unique_lock lock = LockSettled();
    std::vector<ArchivedCut> cuts;
    SPOOL_RETURN_IF_ERROR(ListArchivedCuts(&cuts));
    SPOOL_RETURN_IF_ERROR(ArchivedRowsLocked(cuts, id, version, &table, &rows));
  }
  if (table_out != nullptr) *table_out = table;
  Row row;
  for (const auto& [key, bytes] : rows) {
    SPOOL_RETURN_IF_ERROR(DecodeRow(table.schema, bytes, &row).WithContext("table " + id.ToString()));
    if (!visit(row)) break;
  }
  return Status::OK();
}

// A version a rewind cut, read from the archive.
Status StoreImpl::ScanCutVersion(const TableId& id, const ReadOptions& options,
                                 const std::function<bool(const RowView&)>& visit, TableInfo* table_out,
                                 uint64_t* version_read) {
  TableInfo table;
  std::map<std::string, std::string> rows;
  {
    std::unique_lock lock = LockSettled();
    std::vector<ArchivedCut> cuts;
    SPOOL_RETURN_IF_ERROR(ListArchivedCuts(&cuts));
    SPOOL_RETURN_IF_ERROR(ArchivedRowsLocked(cuts, id, *options.version, &table, &rows));
  }
  std::string begin, end;
  SPOOL_RETURN_IF_ERROR(KeyRange(table, options, &begin, &end));
  if (table_out != nullptr) *table_out = table;
  if (version_read != nullptr) *version_read = *options.version;
  RowView row;
  for (auto it = rows.lower_bound(begin); it != rows.end() && InRange(it->first, begin, end); ++it) {
    SPOOL_RETURN_IF_ERROR(ParseRow(table.schema, it->second, &row).WithContext("table " + id.ToString()));
    if (!visit(row)) break;
  }
  return Status::OK();
}

bool StoreImpl::IsCutVersion(uint64_t version) {
  // Versions up to the history's start before the oldest retained commit
  // are not retained, whatever the archive holds.
  return version > log_->BeforeOldest().version && version <= log_->Newest().version && !VersionOnHistory(version);
}

Status StoreImpl::CutHolding(const std::vector<ArchivedCut>& cuts, uint64_t version, const ArchivedCut** holding) {
  // A version is cut once: by the oldest cut whose versions span it (a
  // later one that spans it jumps over it).
  for (const ArchivedCut& cut : cuts) {
    if (cut.commits > 0 && cut.first_version <= version && version <= cut.last_version) {
      *holding = &cut;
      return Status::OK();
    }
  }
  return Status::NotFound("version " + std::to_string(version) +
                          " was cut by a rewind, and the archive no longer holds it (vacuum removed it)");
}

Status StoreImpl::ScanArchivedUpTo(const ArchivedCut& cut, uint64_t version,
                                   const std::function<Status(const LogEntry&, CommitRecord&)>& visit) {
  Status failed;
  bool reached = false;
  SPOOL_RETURN_IF_ERROR(ScanArchivedCut(options_.env, cut.dir, [&](const LogEntry& entry) {
    if (entry.position.version > version) return false;
    reached = entry.position.version == version;
    CommitRecord record;
    failed =
        DecodeCommit(entry.body, &record).WithContext("archived version " + std::to_string(entry.position.version));
    if (failed.ok()) failed = visit(entry, record);
    return failed.ok();
  }));
  SPOOL_RETURN_IF_ERROR(failed);
  if (!reached) {
    return Status::NotFound("version " + std::to_string(version) + " is not in the archived cut " + cut.dir +
                            " (versions " + std::to_string(cut.first_version) + "-" + std::to_string(cut.last_version) +
                            " with a jump where it would be)");
  }
  return Status::OK();
}

Status StoreImpl::RowsAtLocked(const std::vector<ArchivedCut>* cuts, const TableId& id, uint64_t version,
                               TableInfo* table, std::map<std::string, std::string>* rows) {
  rows->clear();
  if (cuts != nullptr && IsCutVersion(version)) return ArchivedRowsLocked(*cuts, id, version, table, rows);
  if (version == 0) return Status::NotFound("no table " + id.ToString() + " before the first version");
  ReadOptions at;
  at.version = version;
  Capture then;
  SPOOL_RETURN_IF_ERROR(CaptureTableLocked(id, at, &then));
  *table = then.table;
  return ScanCaptured(then, "", "", [&](std::string_view key, std::string_view row) {
    rows->emplace(key, row);
    return true;
  });
}

Status StoreImpl::ArchivedRowsLocked(const std::vector<ArchivedCut>& cuts, const TableId& id, uint64_t version,
                                     TableInfo* table_out, std::map<std::string, std::string>* rows) {
  const ArchivedCut* cut = nullptr;
  SPOOL_RETURN_IF_ERROR(CutHolding(cuts, version, &cut));
  // The table at the cut's point: on the current history, or cut by a
  // later rewind (then read the same way).
  const uint64_t point = cut->point;
  std::optional<TableInfo> table;
  {
    TableInfo then;
    Status s = RowsAtLocked(&cuts, id, point, &then, rows);
    if (s.ok()) table = then;
    else if (!s.IsNotFound()) return s.WithContext("the archived cut's point, version " + std::to_string(point));
  }
  // The cut's commits up to `version`: the table's definition and rows.
  SPOOL_RETURN_IF_ERROR(ScanArchivedUpTo(*cut, version, [&](const LogEntry& entry, CommitRecord& record) {
    for (const DdlRecord& ddl : record.ddl) {
      if (ddl.after && ddl.after->id == id) {
        if (!table || table->uid != ddl.after->uid) rows->clear();  // created (again)
        table = *ddl.after;
      } else if (ddl.before && ddl.before->id == id && !ddl.after) {
        table.reset();  // dropped
        rows->clear();
      }
    }
    for (TableChangeSet& set : record.tables) {
      if (!table || set.uid != table->uid) continue;
      uint32_t keyless_index = 0;
      for (RowChangeRecord& change : set.changes) {
        std::string key =
            change.key.empty() ? KeylessRowId(entry.position.version, keyless_index++) : std::move(change.key);
        if (change.kind == RowChangeKind::kDelete) {
          rows->erase(key);
        } else {
          (*rows)[std::move(key)] = std::move(change.post);
        }
      }
    }
    return Status::OK();
  }));
  if (!table) {
    return Status::NotFound("no table " + id.ToString() + " at version " + std::to_string(version) +
                            " of the archived cut " + cut->dir);
  }
  *table_out = *table;
  return Status::OK();
}

}  // namespace spool
