#include "state_store.h"

#include <fcntl.h>
#include <lmdb.h>
#include <sys/statvfs.h>
#include <unistd.h>
// XXH3 compiled here, for the short keys StringHash hashes millions of
// times a second: inlined, without the library's call and dispatch.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <set>

#include "helper_thread.h"
#include "invariant.h"
#include "kill_point.h"
#include "state_check.h"
#include "varint.h"

namespace spool {
namespace {

Status LmdbError(int rc, std::string_view what) {
  const std::string message = "state store: " + std::string(what) + ": " + mdb_strerror(rc);
  return rc == MDB_MAP_FULL ? Status::NoSpace(message) : Status::IOError(message);
}

// A failed write to the environment in `dir`. LMDB reports a write the
// disk took only part of as EIO: with the file system nearly full, that is
// a full disk, and said so, with where.
Status LmdbWriteError(int rc, std::string_view what, const std::string& dir) {
  constexpr uint64_t kNearlyFull = 64ull << 20;
  struct statvfs fs {};
  const bool known = ::statvfs(dir.c_str(), &fs) == 0;
  const uint64_t free_bytes = known ? static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize : 0;
  if (rc == ENOSPC || rc == EDQUOT || (rc == EIO && known && free_bytes < kNearlyFull)) {
    return Status::NoSpace("state store: " + std::string(what) + ": no space left on the file system of " + dir + " (" +
                           std::to_string(free_bytes >> 10) + " KiB free; LMDB said: " + mdb_strerror(rc) + ")");
  }
  return LmdbError(rc, what);
}

MDB_val Val(std::string_view s) { return MDB_val{s.size(), const_cast<char*>(s.data())}; }
std::string_view View(const MDB_val& v) { return {static_cast<const char*>(v.mv_data), v.mv_size}; }

// Every value goes in sealed (state_check.h): LMDB reserves the room and
// the value and its checksum are written there, with no copy in between.
int PutSealed(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view value) {
  MDB_val k = Val(key), v{SealedSize(value), nullptr};
  const int rc = mdb_put(txn, dbi, &k, &v, MDB_RESERVE);
  if (rc == 0) Seal(key, value, static_cast<char*>(v.mv_data));
  return rc;
}

// PutSealed through a cursor, with `flags` (MDB_APPEND).
int CursorPutSealed(MDB_cursor* cursor, std::string_view key, std::string_view value, unsigned int flags) {
  MDB_val k = Val(key), v{SealedSize(value), nullptr};
  const int rc = mdb_cursor_put(cursor, &k, &v, flags | MDB_RESERVE);
  if (rc == 0) Seal(key, value, static_cast<char*>(v.mv_data));
  return rc;
}

// The value LMDB holds at `k`, checked and unsealed.
Status UnsealVal(const MDB_val& k, const MDB_val& v, std::string_view* value) {
  return Unseal(View(k), View(v), value) ? Status::OK() : DamagedEntry(View(k));
}

// The value LMDB holds at `k`, its seal dropped unchecked: for scans, which
// read values the open's check of the whole file verified (a seal per value
// read costs a full scan 7-28 %; docs/storage_format.md).
Status StripSeal(const MDB_val& k, const MDB_val& v, std::string_view* value) {
  if (v.mv_size < kEntryChecksumBytes) return DamagedEntry(View(k));
  *value = View(v).substr(0, v.mv_size - kEntryChecksumBytes);
  return Status::OK();
}

std::string EncodePosition(const StatePosition& p) {
  std::string out;
  for (uint64_t v : {p.store_id, p.epoch, p.version, p.timestamp_us}) PutBigEndian64(&out, v);
  return out;
}

bool DecodePosition(std::string_view in, StatePosition* p) {
  if (in.size() != 32) return false;
  *p = StatePosition{GetBigEndian64(in), GetBigEndian64(in.substr(8)), GetBigEndian64(in.substr(16)),
                     GetBigEndian64(in.substr(24))};
  return true;
}

}  // namespace

std::string StateCatalogKey(uint64_t uid) {
  std::string key(kStateCatalogPrefix);
  PutBigEndian64(&key, uid);
  return key;
}

std::string StateRowPrefix(uint64_t uid) {
  std::string key(kStateRowPrefix);
  PutBigEndian64(&key, uid);
  return key;
}

std::string StateRowKey(uint64_t uid, std::string_view key) {
  std::string state_key = StateRowPrefix(uid);
  state_key.append(key);
  return state_key;
}

std::string StateHistoryPrefix(uint64_t uid) {
  std::string key(kStateHistoryPrefix);
  PutBigEndian64(&key, uid);
  return key;
}

std::string StateCheckpointKey(std::string_view flow) {
  std::string key(kStateCheckpointPrefix);
  key.append(flow);
  return key;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && static_cast<uint8_t>(end.back()) == 0xff) end.pop_back();
  if (!end.empty()) end.back() = static_cast<char>(static_cast<uint8_t>(end.back()) + 1);
  return end;  // empty: no upper bound
}

size_t StringHash::operator()(std::string_view key) const { return XXH3_64bits(key.data(), key.size()); }

void StateDelta::Put(std::string key, std::string value) {
  bytes += key.size() + value.size();
  changes.emplace_back(std::move(key), std::move(value));
}

void StateDelta::Delete(std::string key) {
  bytes += key.size();
  changes.emplace_back(std::move(key), std::nullopt);
}

StagedChanges::StagedChanges()
    : entries_(std::make_unique<Entries>()), index_(0, IndexHash{entries_.get()}, IndexEq{entries_.get()}) {}

void StagedChanges::reserve(size_t keys) {
  entries_->reserve(keys);
  index_.reserve(keys);
}

const StateValue* StagedChanges::Find(const Probe& probe) const {
  auto it = index_.find(probe);
  return it == index_.end() ? nullptr : &(*entries_)[*it].second;
}

void StagedChanges::Set(std::string key, size_t hash, StateValue value) {
  SPOOL_DCHECK(entries_->size() < UINT32_MAX, "staged changes are indexed by 32 bits");
  SPOOL_DCHECK(hash == MakeProbe(key).hash, "a staged key comes with its own hash");
  bool inserted = false;
  // One probe: a new key's entry is made where the probe ended.
  const auto it = index_.lazy_emplace(Probe{key, hash}, [&](const auto& construct) {
    entries_->emplace_back(std::move(key), std::move(value));
    construct(static_cast<uint32_t>(entries_->size() - 1));
    inserted = true;
  });
  if (!inserted) (*entries_)[*it].second = std::move(value);
}

void StagedChanges::MoveInto(StateDelta* delta) {
  index_.clear();  // it hashes the keys about to move
  delta->changes.reserve(delta->changes.size() + entries_->size());
  for (Entry& entry : *entries_) {
    delta->bytes += entry.first.size() + (entry.second ? entry.second->size() : 0);
    delta->changes.push_back(std::move(entry));
  }
  entries_->clear();
}

[[gnu::always_inline]] inline std::string_view StateOverlay::GroupOf(std::string_view key) {
  static_assert(kStateRowPrefix.size() == 1 && kStateHistoryPrefix.size() == 1);
  const bool per_table = !key.empty() && (key[0] == kStateRowPrefix[0] || key[0] == kStateHistoryPrefix[0]);
  // Group names must be prefix-free for VisitSorted's order: no "r" or "h"
  // key is shorter than a table's prefix.
  SPOOL_DCHECK(!per_table || key.size() >= kStateRowPrefixBytes, "a row or history key holds its table's prefix");
  return key.substr(0, per_table ? kStateRowPrefixBytes : 1);
}

StateOverlay::Group& StateOverlay::GroupNamed(std::string_view name) {
  auto group = groups_.find(name);
  if (group == groups_.end()) group = groups_.try_emplace(std::string(name)).first;
  return group->second;
}

void StateOverlay::Set(Group& group, std::string_view suffix, StateValue value) {
  auto [it, inserted] = group.try_emplace(suffix);
  it->second = std::move(value);
  size_ += inserted ? 1 : 0;
}

void StateOverlay::Add(StateDelta&& delta) {
  // A commit's changes come table by table: the group of the last key
  // usually holds the next. The slot of the change kAhead places on is
  // loaded while this one is set, so that the sets of a big commit wait
  // for memory together rather than one by one.
  constexpr size_t kAhead = 8;
  auto& changes = delta.changes;
  std::string_view last_name;
  Group* group = nullptr;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i + kAhead < changes.size() && group != nullptr) {
      const std::string_view ahead = changes[i + kAhead].first;
      if (StringEq()(GroupOf(ahead), last_name)) group->prefetch(ahead.substr(last_name.size()));
    }
    auto& [key, value] = changes[i];
    const std::string_view name = GroupOf(key);
    if (group == nullptr || !StringEq()(name, last_name)) {
      group = &GroupNamed(name);
      last_name = name;
    }
    Set(*group, std::string_view(key).substr(name.size()), std::move(value));
  }
  position = delta.position;
  ++commits;
  bytes += delta.bytes;
}

void StateOverlay::Merge(const StateOverlay& later) {
  for (const auto& [name, group] : later.groups_) {
    Group& into = GroupNamed(name);
    for (const auto& [suffix, value] : group) Set(into, suffix, value);
  }
  position = later.position;
  commits += later.commits;
  bytes += later.bytes;
}

StateOverlay::Probe StateOverlay::MakeProbe(std::string_view key) const {
  const std::string_view name = GroupOf(key);
  auto group = groups_.find(name);
  if (group == groups_.end()) return Probe{};
  const std::string_view suffix = key.substr(name.size());
  return Probe{&group->second, HashedKey{suffix, StringHash()(suffix)}};
}

const StateValue* StateOverlay::Find(const Probe& probe) {
  if (probe.group == nullptr) return nullptr;
  auto it = probe.group->find(probe.suffix);
  return it == probe.group->end() ? nullptr : &it->second;
}

void StateOverlay::Prefetch(const Probe& probe) {
  if (probe.group != nullptr) probe.group->prefetch(probe.suffix);
}

void StateOverlay::VisitSorted(std::string_view begin, std::string_view end, const Visitor& visit) const {
  // The groups holding keys in range, in key order (group names are
  // prefix-free, so their order is their keys' order).
  std::vector<const std::pair<const std::string, Group>*> groups;
  for (const auto& group : groups_) {
    const std::string& name = group.first;
    const std::string group_end = PrefixEnd(name);  // the group's keys lie in [name, group_end)
    if ((!end.empty() && end <= name) || (!group_end.empty() && group_end <= begin)) continue;
    groups.push_back(&group);
  }
  std::sort(groups.begin(), groups.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  std::vector<const Group::value_type*> entries;
  std::string key;
  for (const auto* group : groups) {
    const std::string& name = group->first;
    // The range as bounds on the suffixes; a bound outside the group is none.
    const std::string_view low = begin.starts_with(name) ? begin.substr(name.size()) : std::string_view();
    const bool bounded = !end.empty() && end.starts_with(name);
    const std::string_view high = bounded ? end.substr(name.size()) : std::string_view();
    entries.clear();
    for (const auto& entry : group->second) {
      if (entry.first >= low && (!bounded || entry.first < high)) entries.push_back(&entry);
    }
    std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* entry : entries) {
      key.assign(name).append(entry->first);
      if (!visit(key, entry->second)) return;
    }
  }
}

StateOverlay::Entries StateOverlay::Sorted(std::string_view begin, std::string_view end) const {
  Entries out;
  VisitSorted(begin, end, [&](std::string_view key, const StateValue& value) {
    out.emplace_back(key, value);
    return true;
  });
  return out;
}

// One generation's LMDB environment, open until its last reader is done.
// A read-only store reads through one transaction begun at open, `pinned`;
// LMDB lets one thread at a time use a transaction, so `pinned_mu`
// serialises its uses.
struct LmdbEnv {
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  std::string dir;
  MDB_txn* pinned = nullptr;
  std::mutex pinned_mu;
  ~LmdbEnv() {
    if (pinned != nullptr) mdb_txn_abort(pinned);
    if (env != nullptr) mdb_env_close(env);
  }
  // Held while the pinned transaction is used; empty without one.
  std::unique_lock<std::mutex> GuardPinned() {
    return pinned != nullptr ? std::unique_lock(pinned_mu) : std::unique_lock<std::mutex>();
  }
};

namespace {

constexpr std::string_view kGenerationPrefix = "gen-";
constexpr std::string_view kCopiesDir = "copies";
constexpr std::string_view kTempSuffix = ".tmp";
// Beside data.mdb, in a copy and in the live generation: DigestStateFile of
// it, taken when its bytes were known sound — a copy's when it was written
// and checked, a generation's at a clean close (RecordDigest).
constexpr std::string_view kDigestFile = "DIGEST";

std::string GenerationName(uint64_t generation) {
  std::string digits = std::to_string(generation);
  return std::string(kGenerationPrefix) + std::string(digits.size() < 6 ? 6 - digits.size() : 0, '0') + digits;
}

// "gen-000042" -> 42; 0 for any other name.
uint64_t ParseGeneration(std::string_view name) {
  if (!name.starts_with(kGenerationPrefix)) return 0;
  name.remove_prefix(kGenerationPrefix.size());
  uint64_t n = 0;
  for (char c : name) {
    if (c < '0' || c > '9') return 0;
    n = n * 10 + static_cast<uint64_t>(c - '0');
  }
  return n;
}

Status FsError(std::string_view what, const std::string& path, const std::error_code& ec) {
  return Status::IOError("state store: " + std::string(what) + " " + path + ": " + ec.message());
}

// Opens (creating) the environment in `dir`, `flags` added to the usual.
Status OpenLmdb(const std::string& dir, uint64_t map_size, unsigned int flags, std::shared_ptr<LmdbEnv>* out) {
  auto opened = std::make_shared<LmdbEnv>();
  opened->dir = dir;
  int rc = mdb_env_create(&opened->env);
  if (rc != 0) return LmdbError(rc, "create environment");
  if ((rc = mdb_env_set_mapsize(opened->env, map_size)) != 0) return LmdbError(rc, "set map size");
  if ((rc = mdb_env_set_maxreaders(opened->env, 1024)) != 0) return LmdbError(rc, "set readers");
  // MDB_NOTLS: views are not tied to a thread.
  if ((rc = mdb_env_open(opened->env, dir.c_str(), flags | MDB_NOTLS, 0644)) != 0) {
    return LmdbError(rc, "open " + dir);
  }
  MDB_txn* txn = nullptr;
  if ((rc = mdb_txn_begin(opened->env, nullptr, flags & MDB_RDONLY, &txn)) != 0) return LmdbError(rc, "begin");
  if ((rc = mdb_dbi_open(txn, nullptr, 0, &opened->dbi)) != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "open database");
  }
  if ((rc = mdb_txn_commit(txn)) != 0) return LmdbError(rc, "commit");
  *out = std::move(opened);
  return Status::OK();
}

// Whether the environment in `dir` holds the bytes its DIGEST names
// (`*digest`: theirs). Anything else — no digest (a compaction's copy, a
// generation a crash left), a damaged digest, other bytes — is false: the
// walk then decides.
bool MatchesDigest(const std::string& dir, StateDigest* digest) {
  std::string recorded;
  return ReadFileToString(Env::Default(), (std::filesystem::path(dir) / kDigestFile).string(), &recorded).ok() &&
         DigestStateFile((std::filesystem::path(dir) / "data.mdb").string(), digest).ok() && recorded == digest->Line();
}

// Checks the environment in `dir` before LMDB opens it: its bytes found
// unchanged since its digest was recorded (`*by_digest`, `*digest` theirs),
// or walked whole (`check` says what the walk found; `*digest` empty).
Status CheckEnvironment(const std::string& dir, FileCheck* check, bool* by_digest, StateDigest* digest) {
  *by_digest = MatchesDigest(dir, digest);
  if (*by_digest) return Status::OK();
  *digest = StateDigest();
  const std::string file = (std::filesystem::path(dir) / "data.mdb").string();
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return Status::OK();
  Status s = CheckStateFile(file, check);
  if (s.IsCorruption()) {
    return Status::Corruption(std::string(s.message()) +
                              "; the state is derived from the log: `spool repair` rebuilds it");
  }
  return s;
}

// Records the digest of the closed environment in `dir` when every page
// of its file is in memory, so that the digest is of bytes LMDB wrote or
// read in this process, never of pages read back from the disk now. With
// the digest `written` kept from the check (if any), only the chunks LMDB
// may have written since are hashed again. WriteFileInPlace: a DIGEST
// lost, torn or older than the file does not match it, and costs the next
// Open only the walk. A file partly out of memory loses its DIGEST.
void RecordDigest(const std::string& dir, const WrittenChunks& written) {
  Env* env = Env::Default();
  const std::string path = (std::filesystem::path(dir) / kDigestFile).string();
  const std::string file = (std::filesystem::path(dir) / "data.mdb").string();
  std::string digest;
  const Status s = RedigestResidentStateFile(
      file, written.checked, [&](size_t k) { return !written.Maybe(k); }, &digest);
  if (s.ok() && !digest.empty()) {
    (void)WriteFileInPlace(env, path, digest);  // which removes it on error
  } else {
    (void)env->RemoveFile(path);
  }
}

// Calls `at(txn, offset)` with the offset in the file of each page on
// LMDB's free list and the transaction that freed it: the records of its
// free-page tree (dbi 0), keyed by that transaction, each a list of page
// numbers, the first its length.
Status ForEachFreePage(const LmdbEnv& lmdb, const std::function<void(uint64_t txn, uint64_t offset)>& at) {
  MDB_txn* txn = nullptr;
  MDB_cursor* cursor = nullptr;
  MDB_stat st{};
  int rc = mdb_env_stat(lmdb.env, &st);
  if (rc == 0) rc = mdb_txn_begin(lmdb.env, nullptr, MDB_RDONLY, &txn);
  if (rc == 0) rc = mdb_cursor_open(txn, 0, &cursor);
  MDB_val k{}, v{};
  if (rc == 0) rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST);
  for (; rc == 0; rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    size_t freed_by = 0;
    if (k.mv_size == sizeof freed_by) std::memcpy(&freed_by, k.mv_data, sizeof freed_by);
    const size_t n = v.mv_size / sizeof(size_t);
    const auto* pages = static_cast<const char*>(v.mv_data);
    size_t count = 0;
    if (n > 0) std::memcpy(&count, pages, sizeof count);
    for (size_t i = 1; i <= std::min(count, n - 1); ++i) {
      size_t page = 0;
      std::memcpy(&page, pages + i * sizeof page, sizeof page);
      at(static_cast<uint64_t>(freed_by), static_cast<uint64_t>(page) * st.ms_psize);
    }
  }
  if (cursor != nullptr) mdb_cursor_close(cursor);
  if (txn != nullptr) mdb_txn_abort(txn);
  return rc == MDB_NOTFOUND ? Status::OK() : LmdbError(rc, "read the free list");
}

// The id of the newest transaction LMDB committed to `lmdb`.
uint64_t LastTransaction(const LmdbEnv& lmdb) {
  MDB_envinfo info{};
  return mdb_env_info(lmdb.env, &info) == 0 ? static_cast<uint64_t>(info.me_last_txnid) : 0;
}

// The free pages of `lmdb` that neither meta page's snapshot holds, as
// byte ranges [begin, end) of its file, in order: those freed before its
// newest transaction. (The pages that one freed belong to the snapshot
// before it, which the other meta page names until the next commit; the
// ones freed earlier, to snapshots no meta page names. A reader's
// snapshot may be older: the caller makes sure there is none.)
// `*held`: the bytes of the free pages the newest transaction freed.
Status ReleasablePages(const LmdbEnv& lmdb, std::vector<std::pair<uint64_t, uint64_t>>* ranges, uint64_t* held) {
  const uint64_t newest = LastTransaction(lmdb);
  MDB_stat st{};
  if (const int rc = mdb_env_stat(lmdb.env, &st); rc != 0) return LmdbError(rc, "stat");
  std::vector<uint64_t> offsets;
  *held = 0;
  SPOOL_RETURN_IF_ERROR(ForEachFreePage(lmdb, [&](uint64_t txn, uint64_t offset) {
    if (txn < newest) {
      offsets.push_back(offset);
    } else {
      *held += st.ms_psize;
    }
  }));
  std::sort(offsets.begin(), offsets.end());
  ranges->clear();
  for (uint64_t offset : offsets) {
    if (!ranges->empty() && ranges->back().second == offset) {
      ranges->back().second += st.ms_psize;
    } else {
      ranges->emplace_back(offset, offset + st.ms_psize);
    }
  }
  return Status::OK();
}

bool OpenElsewhere(const std::string& dir);  // below

// Gives the file system back the blocks of the `ranges` of the file at
// `path`, which keeps its size: they read as zeros from then on. LMDB
// reads no free page and writes one whole before it uses it again (the
// state's check counts free pages, never reads them). Returns whether a
// range held a block (a hole already is skipped). Best effort: a file
// system that cannot punch holes keeps the blocks.
bool PunchHoles(const std::string& path, const std::vector<std::pair<uint64_t, uint64_t>>& ranges) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  bool punched = false;
  for (const auto& [begin, end] : ranges) {
    const off_t data = ::lseek(fd, static_cast<off_t>(begin), SEEK_DATA);
    if (data < 0 || static_cast<uint64_t>(data) >= end) continue;  // a hole, or none past it
    if (::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(begin),
                    static_cast<off_t>(end - begin)) != 0) {
      break;
    }
    punched = true;
  }
  ::close(fd);
  return punched;
}

// Gives an environment without the format key one: an empty one, or one
// whose values were written before they were sealed, which is emptied
// (the store rebuilds it from a snapshot and the log). A format key that
// is missing from sealed values is damage.
Status SealFormat(const LmdbEnv& lmdb) {
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(lmdb.env, nullptr, 0, &txn);
  if (rc != 0) return LmdbError(rc, "begin write");
  MDB_val k = Val(kStateFormatKey), v{};
  rc = mdb_get(txn, lmdb.dbi, &k, &v);
  if (rc != MDB_NOTFOUND) {
    mdb_txn_abort(txn);
    return rc == 0 ? Status::OK() : LmdbError(rc, "read format");
  }
  MDB_val pk = Val(kStatePositionKey), pv{};
  rc = mdb_get(txn, lmdb.dbi, &pk, &pv);
  if (rc == 0 && pv.mv_size != 32) {  // a sealed position: the format key was lost
    mdb_txn_abort(txn);
    return Status::Corruption("state store " + lmdb.dir +
                              ": the format key is missing; `spool repair` rebuilds the state from the log");
  }
  rc = mdb_drop(txn, lmdb.dbi, 0);
  if (rc == 0) rc = PutSealed(txn, lmdb.dbi, kStateFormatKey, kStateFormatValue);
  if (rc != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "write format");
  }
  if ((rc = mdb_txn_commit(txn)) != 0) return LmdbError(rc, "commit format");
  return Status::OK();
}

// A read transaction for one call: a new one, or the environment's pinned
// one, held for the scope.
class ReadTxn {
 public:
  explicit ReadTxn(LmdbEnv& lmdb) : lmdb_(lmdb), guard_(lmdb.GuardPinned()) {}
  ReadTxn(const ReadTxn&) = delete;
  ReadTxn& operator=(const ReadTxn&) = delete;
  ~ReadTxn() {
    if (txn_ != nullptr && txn_ != lmdb_.pinned) mdb_txn_abort(txn_);
  }
  Status Begin() {
    if (lmdb_.pinned != nullptr) {
      txn_ = lmdb_.pinned;
      return Status::OK();
    }
    const int rc = mdb_txn_begin(lmdb_.env, nullptr, MDB_RDONLY, &txn_);
    return rc == 0 ? Status::OK() : LmdbError(rc, "begin read");
  }
  MDB_txn* get() const { return txn_; }

 private:
  LmdbEnv& lmdb_;
  std::unique_lock<std::mutex> guard_;
  MDB_txn* txn_ = nullptr;
};

Status ReadPosition(LmdbEnv& lmdb, StatePosition* position) {
  ReadTxn read(lmdb);
  SPOOL_RETURN_IF_ERROR(read.Begin());
  MDB_txn* txn = read.get();
  MDB_val k = Val(kStatePositionKey), v{};
  int rc = mdb_get(txn, lmdb.dbi, &k, &v);
  *position = StatePosition{};
  Status s;
  std::string_view value;
  if (rc == 0) s = UnsealVal(k, v, &value);
  if (rc == 0 && s.ok() && !DecodePosition(value, position)) s = Status::Corruption("state store: bad position record");
  if (rc != 0 && rc != MDB_NOTFOUND) s = LmdbError(rc, "read position");
  return s;
}

}  // namespace

namespace {

// Staged entries in key order (a copy, as the overlay changes after the view
// is made), merged over an LMDB cursor, within [begin, end).
using OverlayCopy = StateOverlay::Entries;

class MergedView final : public StateView {
 public:
  MergedView(OverlayCopy overlay, std::string begin, std::string end)
      : overlay_(std::move(overlay)), begin_(std::move(begin)), end_(std::move(end)) {}
  ~MergedView() override {
    if (lmdb_ == nullptr) return;
    auto guard = lmdb_->GuardPinned();
    if (cursor_ != nullptr) mdb_cursor_close(cursor_);
    if (txn_ != nullptr && txn_ != lmdb_->pinned) mdb_txn_abort(txn_);
  }

  // On the pinned transaction when the environment has one: each step then
  // holds it for its length.
  Status Start(std::shared_ptr<LmdbEnv> lmdb) {
    lmdb_ = std::move(lmdb);
    {
      auto guard = lmdb_->GuardPinned();
      txn_ = lmdb_->pinned;
      int rc = txn_ != nullptr ? 0 : mdb_txn_begin(lmdb_->env, nullptr, MDB_RDONLY, &txn_);
      if (rc != 0) return LmdbError(rc, "begin read");
      rc = mdb_cursor_open(txn_, lmdb_->dbi, &cursor_);
      if (rc != 0) return LmdbError(rc, "open cursor");
    }
    Seek(begin_);
    return status_;
  }

  void Seek(std::string_view key) override {
    auto guard = lmdb_->GuardPinned();
    const std::string_view target = key < begin_ ? std::string_view(begin_) : key;
    overlay_it_ = std::lower_bound(overlay_.begin(), overlay_.end(), target,
                                   [](const auto& entry, std::string_view k) { return entry.first < k; });
    MDB_val k = Val(target), v{};
    // LMDB refuses an empty key: the first key is MDB_FIRST.
    StepLmdb(mdb_cursor_get(cursor_, &k, &v, target.empty() ? MDB_FIRST : MDB_SET_RANGE), k, v);
    Settle();
  }
  bool Valid() const override { return valid_; }
  std::string_view key() const override {
    return from_overlay_ ? std::string_view(overlay_it_->first) : View(lmdb_key_);
  }
  std::string_view value() const override {
    return from_overlay_ ? std::string_view(*overlay_it_->second) : lmdb_value_;
  }
  void Next() override {
    auto guard = lmdb_->GuardPinned();
    if (from_overlay_) {
      ++overlay_it_;
    } else {
      MDB_val k{}, v{};
      StepLmdb(mdb_cursor_get(cursor_, &k, &v, MDB_NEXT), k, v);
    }
    Settle();
  }
  Status status() const override { return status_; }

 private:
  bool InRange(std::string_view key) const { return end_.empty() || CompareBytes(key, end_) < 0; }

  void StepLmdb(int rc, const MDB_val& k, const MDB_val& v) {
    lmdb_valid_ = rc == 0 && InRange(View(k));
    if (rc != 0 && rc != MDB_NOTFOUND) status_ = LmdbError(rc, "read cursor");
    lmdb_key_ = k;
    if (lmdb_valid_ && status_.ok()) status_ = StripSeal(k, v, &lmdb_value_);
  }

  void Settle() {
    while (status_.ok()) {
      const bool overlay_valid = overlay_it_ != overlay_.end() && InRange(overlay_it_->first);
      if (!overlay_valid && !lmdb_valid_) break;
      if (overlay_valid && (!lmdb_valid_ || std::string_view(overlay_it_->first) <= View(lmdb_key_))) {
        if (lmdb_valid_ && std::string_view(overlay_it_->first) == View(lmdb_key_)) {
          MDB_val k{}, v{};
          StepLmdb(mdb_cursor_get(cursor_, &k, &v, MDB_NEXT), k, v);
        }
        if (!overlay_it_->second.has_value()) {  // deleted since the last batch
          ++overlay_it_;
          continue;
        }
        from_overlay_ = true;
        valid_ = true;
        return;
      }
      from_overlay_ = false;
      valid_ = true;
      return;
    }
    valid_ = false;
  }

  OverlayCopy overlay_;
  OverlayCopy::const_iterator overlay_it_;
  std::string begin_, end_;
  std::shared_ptr<LmdbEnv> lmdb_;  // outlives txn_ (closed in the destructor's body)
  MDB_txn* txn_ = nullptr;
  MDB_cursor* cursor_ = nullptr;
  MDB_val lmdb_key_{};
  std::string_view lmdb_value_;  // unsealed
  bool lmdb_valid_ = false;
  bool from_overlay_ = false;
  bool valid_ = false;
  Status status_;
};

// The staged entries within [begin, end), in key order: mem's over imm's.
OverlayCopy CopyRange(const StateOverlay* imm, const StateOverlay& mem, std::string_view begin, std::string_view end) {
  OverlayCopy newer = mem.Sorted(begin, end);
  if (imm == nullptr) return newer;
  OverlayCopy older = imm->Sorted(begin, end);
  OverlayCopy out;
  out.reserve(newer.size() + older.size());
  auto a = older.begin(), b = newer.begin();
  while (a != older.end() || b != newer.end()) {
    if (b == newer.end() || (a != older.end() && a->first < b->first)) {
      out.push_back(std::move(*a++));
      continue;
    }
    if (a != older.end() && a->first == b->first) ++a;  // mem's is newer
    out.push_back(std::move(*b++));
  }
  return out;
}

}  // namespace

namespace {

// The state directories open in this process. LMDB must not have one
// environment open twice in a process: its locks belong to the process, so
// a second open would take the first's reader table for its own to reset,
// and closing either would drop the other's locks. A second handle, read-only
// or not, is refused.
std::mutex open_paths_mu;
std::set<std::string> open_paths;

}  // namespace

StateStore::StateStore(const StateStoreOptions& options) : options_(options), mem_(std::make_shared<StateOverlay>()) {}

StateStore::~StateStore() {
  {
    std::lock_guard lock(apply_mu_);
    stopping_ = true;
  }
  apply_cv_.notify_all();
  if (applier_.joinable()) applier_.join();
  imm_.reset();
  const bool clean = !options_.read_only && apply_error_.ok() && lmdb_ != nullptr;
  // Free pages no snapshot holds go back to the file system: a file that
  // a batch rewrote whole keeps the old copy of each page for reuse.
  std::vector<std::pair<uint64_t, uint64_t>> releasable;
  if (clean) ReleaseLater(&releasable);
  // A clean close of a generation checked when it was opened or adopted,
  // with no damage met since, records its digest for the next Open to skip
  // the walk, unless the DIGEST there already names these bytes.
  const bool vouch = clean && checked_ && DamagedEntriesSeen() == damage_seen_at_check_;
  const bool written = clean && !(checked_by_digest_ && LastTransaction(*lmdb_) == checked_transaction_);
  const std::string dir = lmdb_ != nullptr ? lmdb_->dir : std::string();
  const std::weak_ptr<LmdbEnv> env = lmdb_;
  lmdb_.reset();  // closed before another handle may open it
  // Only with no snapshot open anywhere but the newest two.
  const bool punched = !releasable.empty() && env.expired() && !OpenElsewhere(dir) &&
                       PunchHoles((std::filesystem::path(dir) / "data.mdb").string(), releasable);
  if (vouch && (written || punched) && env.expired()) RecordDigest(dir, written_);
  if (!registered_.empty()) {
    std::lock_guard lock(open_paths_mu);
    open_paths.erase(registered_);
  }
}

void StateStore::Checked(bool by_digest, StateDigest digest) {
  std::lock_guard lock(apply_mu_);
  CheckedLocked(by_digest, std::move(digest));
}

void StateStore::CheckedLocked(bool by_digest, StateDigest digest) {
  checked_ = true;
  checked_by_digest_ = by_digest;
  checked_transaction_ = LastTransaction(*lmdb_);
  damage_seen_at_check_ = DamagedEntriesSeen();
  (by_digest ? stats_.checks_by_digest : stats_.checks_whole)++;
  {
    std::lock_guard written(written_mu_);
    written_ = WrittenChunks();
    MDB_envinfo info{};
    MDB_stat st{};
    if (!digest.sums.empty() && mdb_env_info(lmdb_->env, &info) == 0 && mdb_env_stat(lmdb_->env, &st) == 0) {
      written_.first_new_chunk = (static_cast<uint64_t>(info.me_last_pgno) + 1) * st.ms_psize / kDigestChunkBytes;
      written_.freed.assign(digest.sums.size(), false);
      written_.checked = std::move(digest);
    }
  }
  TrackWrites();
}

// The free pages a clean close gives back (ReleasablePages). When the last
// batch freed many (one that rewrote most of the file), one more commit,
// of a value as it is, makes them the snapshot before the newest's pages,
// which no meta page names — at the cost of its sync.
void StateStore::ReleaseLater(std::vector<std::pair<uint64_t, uint64_t>>* releasable) {
  uint64_t held = 0;
  if (!ReleasablePages(*lmdb_, releasable, &held).ok()) {
    releasable->clear();
    return;
  }
  if (held < kReleaseCommitBytes) return;
  MDB_txn* txn = nullptr;
  if (mdb_txn_begin(lmdb_->env, nullptr, 0, &txn) != 0) return;
  if (PutSealed(txn, lmdb_->dbi, kStateFormatKey, kStateFormatValue) != 0) {
    mdb_txn_abort(txn);
    return;
  }
  if (mdb_txn_commit(txn) != 0) return;
  TrackWrites();
  if (!ReleasablePages(*lmdb_, releasable, &held).ok()) releasable->clear();
}

void StateStore::TrackWrites() {
  std::lock_guard lock(written_mu_);
  if (written_.checked.sums.empty()) return;
  Status s = ForEachFreePage(*lmdb_, [&](uint64_t, uint64_t byte) {
    const uint64_t k = byte / kDigestChunkBytes;
    if (k < written_.freed.size()) written_.freed[k] = true;
  });
  size_t marked = 0;
  for (size_t k = 0; k < written_.freed.size(); ++k) marked += written_.Maybe(k) ? 1U : 0U;
  // Past half the file, hashing it all costs about as much: no more is
  // tracked.
  if (!s.ok() || marked * 2 > written_.freed.size()) written_ = WrittenChunks();
}

std::string StateStore::copies_dir() const { return (std::filesystem::path(options_.path) / kCopiesDir).string(); }

std::shared_ptr<LmdbEnv> StateStore::CurrentEnv() {
  std::shared_lock lock(overlay_mu_);
  return lmdb_;
}

Status StateStore::Register() {
  std::error_code ec;
  std::string path = std::filesystem::weakly_canonical(options_.path, ec).string();
  if (ec) path = options_.path;
  std::lock_guard lock(open_paths_mu);
  if (!open_paths.insert(path).second) {
    return Status::Busy("state store " + options_.path + " is open in this process already: read through that handle");
  }
  registered_ = std::move(path);
  return Status::OK();
}

// Opens the newest generation (creating the first) and removes what an
// interrupted Adopt or SaveCopy left: older generations, unfinished copies,
// and the files of the layout before generations.
Status StateStore::Open(const StateStoreOptions& options, std::unique_ptr<StateStore>* out) {
  if (options.read_only) return OpenReadOnly(options, out);
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(options.path, ec);
  if (ec) return FsError("cannot create", options.path, ec);
  std::unique_ptr<StateStore> store(new StateStore(options));
  SPOOL_RETURN_IF_ERROR(store->Register());
  std::vector<uint64_t> generations;
  for (const fs::directory_entry& entry : fs::directory_iterator(options.path, ec)) {
    const std::string name = entry.path().filename().string();
    if (const uint64_t g = ParseGeneration(name); g != 0) generations.push_back(g);
    if (name == "data.mdb" || name == "lock.mdb") fs::remove(entry.path(), ec);
  }
  if (ec) return FsError("cannot list", options.path, ec);
  std::sort(generations.begin(), generations.end());
  store->generation_ = generations.empty() ? 1 : generations.back();
  for (size_t i = 0; i + 1 < generations.size(); ++i) {
    store->Discard((fs::path(options.path) / GenerationName(generations[i])).string());
  }
  if (fs::exists(store->copies_dir(), ec)) {
    for (const fs::directory_entry& entry : fs::directory_iterator(store->copies_dir(), ec)) {
      if (entry.path().filename().string().ends_with(kTempSuffix)) fs::remove_all(entry.path(), ec);
    }
  }
  const std::string dir = (fs::path(options.path) / GenerationName(store->generation_)).string();
  fs::create_directories(dir, ec);
  if (ec) return FsError("cannot create", dir, ec);
  // LMDB opens only a file checked whole (state_check.h), or found as a
  // clean close left it.
  FileCheck check;
  bool by_digest = false;
  StateDigest digest;
  if (options.check_on_open) SPOOL_RETURN_IF_ERROR(CheckEnvironment(dir, &check, &by_digest, &digest));
  // MDB_NOMETASYNC: a power loss may undo the last batch (the log replays
  // it) but cannot corrupt the environment.
  SPOOL_RETURN_IF_ERROR(OpenLmdb(dir, options.map_size_bytes, MDB_NOMETASYNC, &store->lmdb_));
  const uint64_t opened_at = LastTransaction(*store->lmdb_);
  SPOOL_RETURN_IF_ERROR(SealFormat(*store->lmdb_));
  if (LastTransaction(*store->lmdb_) != opened_at) digest = StateDigest();  // not the bytes hashed
  if (options.check_on_open) store->Checked(by_digest, std::move(digest));
  SPOOL_RETURN_IF_ERROR(store->AppliedPosition(&store->position_));
  if (options.background) store->applier_ = std::thread([s = store.get()] { s->ApplierLoop(); });
  *out = std::move(store);
  return Status::OK();
}

namespace {

// The newest generation in `path` (0: none).
Status NewestGeneration(const std::string& path, uint64_t* generation) {
  namespace fs = std::filesystem;
  std::error_code ec;
  *generation = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(path, ec)) {
    *generation = std::max(*generation, ParseGeneration(entry.path().filename().string()));
  }
  if (ec) return FsError("cannot list", path, ec);
  return Status::OK();
}

// Whether another process has the environment in `dir` open. LMDB holds a
// lock on the first byte of its lock file for as long as an environment is
// open, which a test for a write lock there finds. An open file
// description's lock (F_OFD_SETLK) conflicts with LMDB's process locks.
// Only for an environment this process does not have open: closing any
// descriptor of a file drops the process's own locks on it.
bool OpenElsewhere(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "lock.mdb").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  lock.l_start = 0;
  lock.l_len = 1;
  const bool held = ::fcntl(fd, F_OFD_SETLK, &lock) != 0 && (errno == EAGAIN || errno == EACCES);
  ::close(fd);
  return held;
}

}  // namespace

// Beside a writer: the newest generation, opened with LMDB's read-only
// flag (LMDB's lock file lets readers in other processes share it with its
// writer), and checked still the newest once a transaction holds it. A
// generation the writer retires later is deleted only after this process
// closes it (DiscardStep).
Status StateStore::OpenReadOnly(const StateStoreOptions& options, std::unique_ptr<StateStore>* out) {
  constexpr int kAttempts = 8;  // each lost to a rewind adopting a newer generation meanwhile
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    uint64_t generation = 0;
    SPOOL_RETURN_IF_ERROR(NewestGeneration(options.path, &generation));
    if (generation == 0) return Status::NotFound("state store: no state in " + options.path);
    std::unique_ptr<StateStore> store(new StateStore(options));
    SPOOL_RETURN_IF_ERROR(store->Register());
    store->generation_ = generation;
    const std::string dir = (std::filesystem::path(options.path) / GenerationName(generation)).string();
    // A writer checked the file when it opened, and changes it while this
    // would read it: checked only without one.
    FileCheck check;
    bool by_digest = false;
    StateDigest digest;
    if (options.check_on_open && !OpenElsewhere(dir)) {
      SPOOL_RETURN_IF_ERROR(CheckEnvironment(dir, &check, &by_digest, &digest));
    }
    Status s = OpenLmdb(dir, options.map_size_bytes, MDB_RDONLY, &store->lmdb_);
    if (s.ok()) {
      const int rc = mdb_txn_begin(store->lmdb_->env, nullptr, MDB_RDONLY, &store->lmdb_->pinned);
      if (rc != 0) return LmdbError(rc, "begin read");
    }
    uint64_t newest = 0;
    SPOOL_RETURN_IF_ERROR(NewestGeneration(options.path, &newest));
    if (newest != generation) continue;
    SPOOL_RETURN_IF_ERROR(s);
    MDB_val k = Val(kStateFormatKey), v{};
    if (mdb_get(store->lmdb_->pinned, store->lmdb_->dbi, &k, &v) != 0) {
      return Status::NotFound("state store " + dir + " is not initialised yet: open the store for writing once");
    }
    SPOOL_RETURN_IF_ERROR(store->AppliedPosition(&store->position_));
    *out = std::move(store);
    return Status::OK();
  }
  return Status::Busy("state store " + options.path + ": a newer generation appeared at each of " +
                      std::to_string(kAttempts) + " attempts to open it (rewinds in a row); try again");
}

Status StateStore::Writable(std::string_view what) const {
  if (!options_.read_only) return Status::OK();
  return Status::NotSupported("state store " + options_.path + " is open read-only: cannot " + std::string(what));
}

Status StateStore::AppliedPosition(StatePosition* position) { return ReadPosition(*lmdb_, position); }

Status StateStore::Verify(const std::string& path, std::vector<StateFileReport>* files) {
  namespace fs = std::filesystem;
  files->clear();
  std::error_code ec;
  std::vector<std::string> names;  // relative to `path`
  uint64_t live = 0;
  SPOOL_RETURN_IF_ERROR(NewestGeneration(path, &live));
  if (live != 0) names.push_back(GenerationName(live));
  const fs::path copies = fs::path(path) / kCopiesDir;
  if (fs::exists(copies, ec)) {
    std::vector<std::string> found;
    for (const fs::directory_entry& entry : fs::directory_iterator(copies, ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(kTempSuffix)) found.push_back((fs::path(kCopiesDir) / name).string());
    }
    if (ec) return FsError("cannot list", copies.string(), ec);
    std::sort(found.begin(), found.end());
    names.insert(names.end(), found.begin(), found.end());
  }
  for (const std::string& name : names) {
    StateFileReport report;
    report.name = name;
    const std::string dir = (fs::path(path) / name).string();
    report.file = (fs::path(dir) / "data.mdb").string();
    if (!fs::exists(report.file, ec)) continue;
    report.status = CheckStateFile(report.file, &report.check);
    if (report.status.ok() && report.check.legacy) {
      report.status = Status::Corruption(report.file + ": written before values were sealed");
    }
    if (report.status.ok()) {
      // Read-only and without the lock file: the caller holds the store.
      std::shared_ptr<LmdbEnv> lmdb;
      report.status = OpenLmdb(dir, report.check.bytes + (1u << 20), MDB_RDONLY | MDB_NOLOCK, &lmdb);
      if (report.status.ok()) report.status = ReadPosition(*lmdb, &report.position);
    }
    files->push_back(std::move(report));
  }
  return Status::OK();
}

StatePosition StateStore::position() {
  std::shared_lock lock(overlay_mu_);
  return position_;
}

// Fills the emptied database in `txn` with what `load` puts. A rebuild
// loads a snapshot, whose keys ascend: each key is appended (MDB_APPEND: no
// search, pages filled whole instead of split in half) unless it does not
// sort after the last one, which is then put in its place as usual.
Status StateStore::Load(MDB_txn* txn, const std::function<Status(const StateLoader& put)>& load) {
  MDB_cursor* cursor = nullptr;
  const int rc = mdb_cursor_open(txn, lmdb_->dbi, &cursor);
  if (rc != 0) return LmdbError(rc, "open cursor");
  Status s = load([&](std::string_view key, std::string_view value) {
    int put = CursorPutSealed(cursor, key, value, MDB_APPEND);
    if (put == MDB_KEYEXIST) put = CursorPutSealed(cursor, key, value, 0);
    return put == 0 ? Status::OK() : LmdbError(put, "load");
  });
  mdb_cursor_close(cursor);
  return s;
}

// Writes `batch` in one LMDB transaction. With `load`, the database is
// emptied first and filled by `load` before the batch.
Status StateStore::WriteBatch(const StateOverlay& batch, const std::function<Status(const StateLoader& put)>* load) {
  // A reader in another process that died holding a read transaction keeps
  // LMDB from reusing the pages it read, and the file grows; LMDB frees its
  // slot once asked to look.
  int dead = 0;
  (void)mdb_reader_check(lmdb_->env, &dead);
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(lmdb_->env, nullptr, 0, &txn);
  if (rc != 0) return LmdbError(rc, "begin write");
  auto fail = [&](int code, std::string_view what) {
    mdb_txn_abort(txn);
    return LmdbWriteError(code, what, lmdb_->dir);
  };
  if (load != nullptr) {
    if ((rc = mdb_drop(txn, lmdb_->dbi, 0)) != 0) return fail(rc, "clear");
    if ((rc = PutSealed(txn, lmdb_->dbi, kStateFormatKey, kStateFormatValue)) != 0) return fail(rc, "write format");
    if (*load) {
      Status s = Load(txn, *load);
      if (!s.ok()) {
        mdb_txn_abort(txn);
        return s;
      }
    }
  }
  // In key order: LMDB fills pages in order instead of splitting them.
  batch.VisitSorted("", "", [&](std::string_view key, const StateValue& value) {
    if (value.has_value()) {
      rc = PutSealed(txn, lmdb_->dbi, key, *value);
    } else {
      MDB_val k = Val(key);
      rc = mdb_del(txn, lmdb_->dbi, &k, nullptr);
      if (rc == MDB_NOTFOUND) rc = 0;
    }
    return rc == 0;
  });
  if (rc != 0) return fail(rc, "write");
  if ((rc = PutSealed(txn, lmdb_->dbi, kStatePositionKey, EncodePosition(batch.position))) != 0) {
    return fail(rc, "write position");
  }
  SPOOL_KILL_POINT("state.apply.before_commit");
  if ((rc = mdb_txn_commit(txn)) != 0) return LmdbWriteError(rc, "commit batch", lmdb_->dir);
  SPOOL_KILL_POINT("state.apply.committed");
  TrackWrites();
  return Status::OK();
}

// Deletes `dir`, a generation nothing opens again. With an applier thread,
// slowly and later: a large file's deletion frees its extents in the file
// system's journal, and done at once it stalls every fsync after it (a
// rewind's own next commits first) — so it starts kDiscardDelay later and
// takes kDiscardChunkBytes per step, a step every kDiscardStepInterval,
// after any pending batch (RocksDB's DeleteScheduler does the same).
// Readers still on the generation keep reading: an unlinked file stays
// readable while open. What a close leaves undeleted, the next Open
// discards again.
void StateStore::Discard(std::string dir, std::weak_ptr<LmdbEnv> env) {
  if (!options_.background) {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);  // unlinked: a process mapping the file keeps reading it
    return;
  }
  std::lock_guard lock(apply_mu_);
  trash_.push_back(Trash{std::move(dir), std::chrono::steady_clock::now() + kDiscardDelay, std::move(env)});
  ++trash_changes_;
  apply_cv_.notify_all();
}

// One step of deleting `dir`: a chunk off the end of its first file, or
// the file, or (empty) the directory. Returns true when `dir` is gone.
bool StateStore::DiscardStep(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const uint64_t size = entry.is_regular_file(ec) ? entry.file_size(ec) : 0;
    if (size > kDiscardChunkBytes) fs::resize_file(entry.path(), size - kDiscardChunkBytes, ec);
    else fs::remove_all(entry.path(), ec);
    return ec.value() != 0;  // on an error, give up: the next Open discards it again
  }
  fs::remove(dir, ec);
  return true;
}

void StateStore::ApplierLoop() {
  NameThisThread("spool-apply");
  std::unique_lock lock(apply_mu_);
  while (true) {
    // Woken too when trash_ changes, to wait for its new front's deadline.
    const uint64_t seen = trash_changes_;
    const auto woken = [&] { return stopping_ || imm_ != nullptr || trash_changes_ != seen; };
    // The deadline by value: a Discard while this waits may grow trash_ and
    // move its elements (a reference here read freed memory; found by
    // spool-crashfuzz --blackbox under AddressSanitizer).
    const std::optional<std::chrono::steady_clock::time_point> due =
        trash_.empty() ? std::nullopt : std::optional(trash_.front().due);
    const bool signalled = !due ? (apply_cv_.wait(lock, woken), true) : apply_cv_.wait_until(lock, *due, woken);
    if (stopping_ && imm_ == nullptr) return;  // stopping with nothing pending
    if (imm_ == nullptr && signalled) continue;
    if (imm_ == nullptr) {
      // The oldest discarded generation is due for its next step.
      // Nothing is cut while a reader, here or in another process, has the
      // environment open: a mapped file cut shorter kills its reader
      // (SIGBUS). It waits for them.
      const std::string dir = trash_.front().dir;
      const bool open = !trash_.front().env.expired();
      lock.unlock();
      const bool busy = open || OpenElsewhere(dir);
      const bool gone = !busy && DiscardStep(dir);
      lock.lock();
      ++discard_steps_;
      if (gone) {
        trash_.erase(trash_.begin());
      } else if (busy) {  // behind the others, which need not wait for its readers
        Trash held = std::move(trash_.front());
        trash_.erase(trash_.begin());
        held.due = std::chrono::steady_clock::now() + kDiscardDelay;
        trash_.push_back(std::move(held));
      } else {
        trash_.front().due = std::chrono::steady_clock::now() + kDiscardStepInterval;
      }
      apply_cv_.notify_all();
      continue;
    }
    std::shared_ptr<const StateOverlay> batch = imm_;
    lock.unlock();
    const Status s = WriteBatch(*batch);
    lock.lock();
    CompleteBatchLocked(s);
    if (!s.ok()) return;
  }
}

size_t StateStore::DiscardNow() {
  std::unique_lock lock(apply_mu_);
  const auto now = std::chrono::steady_clock::now();
  for (Trash& t : trash_) t.due = now;
  ++trash_changes_;
  apply_cv_.notify_all();
  // The applier has looked at each once, and those left are held open.
  const uint64_t looked = discard_steps_ + trash_.size();
  apply_cv_.wait(lock, [&] {
    return discard_steps_ >= looked && std::all_of(trash_.begin(), trash_.end(), [](const Trash& t) {
             return !t.env.expired() || OpenElsewhere(t.dir);
           });
  });
  return trash_.size();
}

// REQUIRES: apply_mu_ held; imm_ was just written, with result `s`.
void StateStore::CompleteBatchLocked(const Status& s) {
  std::unique_lock overlay(overlay_mu_);
  if (s.ok()) {
    stats_.batches++;
    stats_.applied_commits += imm_->commits;
  } else {
    // Keep the batch readable by folding it back under mem; nothing more is
    // applied, and every later Stage or Flush reports the error.
    auto kept = std::make_shared<StateOverlay>(*imm_);
    kept->Merge(*mem_);
    mem_ = std::move(kept);
    apply_error_ = s;
  }
  imm_.reset();
  apply_cv_.notify_all();
}

// REQUIRES: apply_mu_ held through `lock`.
Status StateStore::HandOffLocked(std::unique_lock<std::mutex>& lock) {
  apply_cv_.wait(lock, [&] { return imm_ == nullptr || !apply_error_.ok(); });
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  {
    std::unique_lock overlay(overlay_mu_);
    imm_ = std::move(mem_);
    mem_ = std::make_shared<StateOverlay>();
  }
  if (options_.background) {
    apply_cv_.notify_all();
    return Status::OK();
  }
  Status s = WriteBatch(*imm_);
  CompleteBatchLocked(s);
  return s;
}

Status StateStore::Stage(StateDelta delta) {
  std::unique_lock lock(apply_mu_);
  uint64_t commits = 0, bytes = 0;
  {
    std::unique_lock overlay(overlay_mu_);
    mem_->Add(std::move(delta));
    position_ = mem_->position;
    commits = mem_->commits;
    bytes = mem_->bytes;
  }
  // Staged even after a failed batch, so that reads see every acknowledged
  // commit; the store reports the failure.
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  if (options_.read_only) return Status::OK();  // kept in memory: a reader's batches are the writer's to apply
  const bool full = commits >= options_.batch_commits || bytes >= options_.batch_bytes;
  if (!full) return Status::OK();
  // Hand off now when the applier is idle; when it is busy, keep staging
  // until mem reaches max_staged_bytes, then wait for it.
  if (imm_ != nullptr && bytes < options_.max_staged_bytes) return Status::OK();
  return HandOffLocked(lock);
}

Status StateStore::FlushUnlessBelow(uint64_t commits, uint64_t bytes) {
  SPOOL_RETURN_IF_ERROR(Writable("apply what is staged"));
  std::unique_lock lock(apply_mu_);
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  if (mem_->commits < commits && mem_->bytes < bytes) {
    StatePosition applied;
    SPOOL_RETURN_IF_ERROR(AppliedPosition(&applied));
    if (applied.store_id != 0) return Status::OK();
  }
  if (mem_->commits > 0 || !mem_->empty()) SPOOL_RETURN_IF_ERROR(HandOffLocked(lock));
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  return Status::OK();
}

Status StateStore::DropStaged() {
  SPOOL_RETURN_IF_ERROR(Writable("drop what is staged"));
  std::unique_lock lock(apply_mu_);
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  StatePosition applied;
  SPOOL_RETURN_IF_ERROR(AppliedPosition(&applied));
  std::unique_lock overlay(overlay_mu_);
  mem_ = std::make_shared<StateOverlay>();
  position_ = applied;
  return Status::OK();
}

Status StateStore::Reset(const StatePosition& position, const std::function<Status(const StateLoader& put)>& load) {
  SPOOL_RETURN_IF_ERROR(Writable("reset the state"));
  std::unique_lock lock(apply_mu_);
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  StateOverlay empty;
  empty.position = position;
  SPOOL_RETURN_IF_ERROR(WriteBatch(empty, &load));
  std::unique_lock overlay(overlay_mu_);
  mem_ = std::make_shared<StateOverlay>();
  position_ = position;
  apply_error_ = Status::OK();
  return Status::OK();
}

Status StateStore::Prune(std::string_view begin, std::string_view end,
                         const std::function<bool(std::string_view key)>& drop,
                         const std::vector<std::pair<std::string, std::string>>& puts, uint64_t* dropped) {
  *dropped = 0;
  SPOOL_RETURN_IF_ERROR(Writable("prune"));
  std::unique_lock lock(apply_mu_);
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  MDB_txn* txn = nullptr;
  int rc = mdb_txn_begin(lmdb_->env, nullptr, 0, &txn);
  if (rc != 0) return LmdbError(rc, "begin write");
  MDB_cursor* cursor = nullptr;
  if ((rc = mdb_cursor_open(txn, lmdb_->dbi, &cursor)) != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "open cursor");
  }
  // Chosen first, deleted after: the cursor is not walked across deletes.
  std::vector<std::string> chosen;
  MDB_val k = Val(begin), v{};
  for (rc = mdb_cursor_get(cursor, &k, &v, begin.empty() ? MDB_FIRST : MDB_SET_RANGE);
       rc == 0 && (end.empty() || View(k) < end); rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)) {
    if (drop(View(k))) chosen.emplace_back(View(k));
  }
  mdb_cursor_close(cursor);
  if (rc == MDB_NOTFOUND) rc = 0;
  for (size_t i = 0; rc == 0 && i < chosen.size(); ++i) {
    MDB_val key = Val(chosen[i]);
    rc = mdb_del(txn, lmdb_->dbi, &key, nullptr);
  }
  for (size_t i = 0; rc == 0 && i < puts.size(); ++i) rc = PutSealed(txn, lmdb_->dbi, puts[i].first, puts[i].second);
  if (rc != 0) {
    mdb_txn_abort(txn);
    return LmdbError(rc, "prune");
  }
  if ((rc = mdb_txn_commit(txn)) != 0) return LmdbWriteError(rc, "commit prune", lmdb_->dir);
  TrackWrites();
  *dropped = chosen.size();
  return Status::OK();
}

namespace {

// The value of `probe`'s key: staged in mem, else in imm, else in LMDB
// (`txn`), viewed there.
Status Lookup(const StateReader::Probe& probe, MDB_txn* txn, MDB_dbi dbi, std::string_view* value, bool* found) {
  for (const StateOverlay::Probe* overlay : {&probe.mem, &probe.imm}) {
    if (const StateValue* staged = StateOverlay::Find(*overlay)) {
      *found = staged->has_value();
      if (*found) *value = **staged;
      return Status::OK();
    }
  }
  MDB_val k = Val(probe.key), v{};
  const int rc = mdb_get(txn, dbi, &k, &v);
  *found = rc == 0;
  if (rc == 0) return UnsealVal(k, v, value);
  return rc == MDB_NOTFOUND ? Status::OK() : LmdbError(rc, "read");
}

StateReader::Probe MakeReaderProbe(const StateOverlay* mem, const StateOverlay* imm, std::string_view key) {
  StateReader::Probe probe{key, {}, {}};
  if (mem != nullptr) probe.mem = mem->MakeProbe(key);
  if (imm != nullptr) probe.imm = imm->MakeProbe(key);
  return probe;
}

}  // namespace

struct StateReader::Txn {
  std::shared_ptr<LmdbEnv> lmdb;
  MDB_txn* txn = nullptr;
  MDB_dbi dbi = 0;
  ~Txn() {
    if (txn != nullptr) mdb_txn_abort(txn);
  }
};

StateReader::~StateReader() = default;

StateReader::Probe StateReader::MakeProbe(std::string_view key) const { return MakeReaderProbe(mem_, imm_.get(), key); }

Status StateReader::Get(const Probe& probe, std::string_view* value, bool* found) {
  return Lookup(probe, txn_->txn, txn_->dbi, value, found);
}

void StateReader::Prefetch(const Probe& probe) {
  StateOverlay::Prefetch(probe.mem);
  StateOverlay::Prefetch(probe.imm);
}

Status StateStore::NewReader(std::unique_ptr<StateReader>* out) {
  SPOOL_RETURN_IF_ERROR(Writable("read for a commit"));
  std::unique_ptr<StateReader> reader(new StateReader());
  reader->txn_ = std::make_unique<StateReader::Txn>();
  std::shared_lock overlay(overlay_mu_);
  reader->txn_->lmdb = lmdb_;
  reader->txn_->dbi = lmdb_->dbi;
  reader->mem_ = mem_.get();
  reader->imm_ = imm_;
  const int rc = mdb_txn_begin(lmdb_->env, nullptr, MDB_RDONLY, &reader->txn_->txn);
  if (rc != 0) return LmdbError(rc, "begin read");
  *out = std::move(reader);
  return Status::OK();
}

Status StateStore::Get(std::string_view key, std::string* value, bool* found) {
  std::shared_lock overlay(overlay_mu_);
  ReadTxn read(*lmdb_);
  SPOOL_RETURN_IF_ERROR(read.Begin());
  std::string_view view;
  Status s = Lookup(MakeReaderProbe(mem_.get(), imm_.get(), key), read.get(), lmdb_->dbi, &view, found);
  if (s.ok() && *found) value->assign(view);  // while the transaction holds LMDB's page
  return s;
}

Status StateStore::NewView(std::string begin, std::string end, std::unique_ptr<StateView>* view) {
  if (begin < kStateKeysBegin) begin = kStateKeysBegin;  // the format key is the store's own
  std::shared_lock lock(overlay_mu_);
  OverlayCopy overlay = CopyRange(imm_.get(), *mem_, begin, end);
  auto merged = std::make_unique<MergedView>(std::move(overlay), std::move(begin), std::move(end));
  // The LMDB transaction starts while the lock holds imm_ in place, so the
  // copy and LMDB agree on which batch is applied.
  SPOOL_RETURN_IF_ERROR(merged->Start(lmdb_));
  *view = std::move(merged);
  return Status::OK();
}

StateStats StateStore::stats() {
  std::lock_guard lock(apply_mu_);
  return stats_;
}

// ---------------------------------------------------------------------------
// Copies and generations

namespace {

Status SyncDirectory(const std::string& dir) { return spool::Env::Default()->SyncDir(dir); }

// Copies every key of `from` but the history index into the empty `to`,
// with the history floor at the copied position, and commits (synced).
Status CopyState(LmdbEnv& from, const LmdbEnv& to, StatePosition* position) {
  SPOOL_RETURN_IF_ERROR(ReadPosition(from, position));
  MDB_txn* read = nullptr;
  MDB_txn* write = nullptr;
  MDB_cursor* in = nullptr;
  MDB_cursor* out = nullptr;
  int rc = mdb_txn_begin(from.env, nullptr, MDB_RDONLY, &read);
  if (rc == 0) rc = mdb_txn_begin(to.env, nullptr, 0, &write);
  if (rc == 0) rc = mdb_cursor_open(read, from.dbi, &in);
  if (rc == 0) rc = mdb_cursor_open(write, to.dbi, &out);
  const std::string history_end = PrefixEnd(kStateHistoryPrefix);
  Status damaged;
  MDB_val k{}, v{};
  if (rc == 0) rc = mdb_cursor_get(in, &k, &v, MDB_FIRST);
  while (rc == 0) {
    const std::string_view key = View(k);
    if (key.starts_with(kStateHistoryPrefix)) {
      k = Val(history_end);
      rc = mdb_cursor_get(in, &k, &v, MDB_SET_RANGE);
      continue;
    }
    // Sealed values are copied as they are, checked: a copy is as
    // trustworthy as what it was made from.
    std::string_view value;
    if (!(damaged = UnsealVal(k, v, &value)).ok()) break;
    if (key != kStateHistoryFloorKey && (rc = mdb_cursor_put(out, &k, &v, MDB_APPEND)) != 0) break;
    rc = mdb_cursor_get(in, &k, &v, MDB_NEXT);
  }
  if (rc == MDB_NOTFOUND && damaged.ok()) {
    std::string floor;
    PutBigEndian64(&floor, position->version);
    rc = PutSealed(write, to.dbi, kStateHistoryFloorKey, floor);
  }
  if (in != nullptr) mdb_cursor_close(in);
  if (out != nullptr) mdb_cursor_close(out);
  if (read != nullptr) mdb_txn_abort(read);
  if (write == nullptr) return LmdbError(rc, "copy");
  if (rc != 0 || !damaged.ok()) {
    mdb_txn_abort(write);
    return damaged.ok() ? LmdbError(rc, "copy") : damaged;
  }
  if ((rc = mdb_txn_commit(write)) != 0) return LmdbWriteError(rc, "commit copy", to.dir);
  return Status::OK();
}

}  // namespace

Status StateStore::SaveCopy(const std::string& name, StatePosition* position) {
  SPOOL_RETURN_IF_ERROR(Writable("save a copy"));
  namespace fs = std::filesystem;
  SPOOL_RETURN_IF_ERROR(Flush());
  const std::string dir = (fs::path(copies_dir()) / name).string();
  const std::string tmp = dir + std::string(kTempSuffix);
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return FsError("cannot create", tmp, ec);
  {
    std::shared_ptr<LmdbEnv> copy;
    // Synced on commit (no NOMETASYNC): the copy is whole before its rename.
    SPOOL_RETURN_IF_ERROR(OpenLmdb(tmp, options_.map_size_bytes, 0, &copy));
    SPOOL_RETURN_IF_ERROR(CopyState(*CurrentEnv(), *copy, position));
  }
  fs::remove(fs::path(tmp) / "lock.mdb", ec);
  // Checked whole now, and its digest kept beside it: adopting the copy
  // later needs only to find the same bytes (MatchesDigest).
  FileCheck check;
  std::string digest;
  SPOOL_RETURN_IF_ERROR(CheckStateFile((fs::path(tmp) / "data.mdb").string(), &check, &digest));
  // Its directory synced after, data.mdb's entry with it.
  SPOOL_RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), (fs::path(tmp) / kDigestFile).string(), digest));
  SPOOL_KILL_POINT("state.copy.synced");
  fs::remove_all(dir, ec);
  fs::rename(tmp, dir, ec);
  if (ec) return FsError("cannot publish", dir, ec);
  SPOOL_KILL_POINT("state.copy.renamed");
  return SyncDirectory(copies_dir());
}

Status StateStore::ListCopies(std::vector<std::string>* names) {
  namespace fs = std::filesystem;
  names->clear();
  std::error_code ec;
  if (!fs::exists(copies_dir(), ec)) return Status::OK();
  for (const fs::directory_entry& entry : fs::directory_iterator(copies_dir(), ec)) {
    std::string name = entry.path().filename().string();
    if (!name.ends_with(kTempSuffix)) names->push_back(std::move(name));
  }
  if (ec) return FsError("cannot list", copies_dir(), ec);
  std::sort(names->begin(), names->end());
  return Status::OK();
}

Status StateStore::RemoveCopy(const std::string& name) {
  SPOOL_RETURN_IF_ERROR(Writable("remove a copy"));
  std::error_code ec;
  std::filesystem::remove_all(std::filesystem::path(copies_dir()) / name, ec);
  if (ec) return FsError("cannot remove copy", name, ec);
  return Status::OK();
}

Status StateStore::Adopt(const std::string& name) {
  SPOOL_RETURN_IF_ERROR(Writable("adopt a copy"));
  namespace fs = std::filesystem;
  std::unique_lock lock(apply_mu_);
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  const std::string copy = (fs::path(copies_dir()) / name).string();
  std::error_code ec;
  if (!fs::exists(copy, ec)) return Status::NotFound("state store: no copy " + name);
  return AdoptLocked(copy, lock);
}

// The copy becomes generation N + 1 by one rename, durable before anything
// reads it; a crash before leaves generation N, after, N + 1 (Open removes
// N). Both are states the log can bring forward or rebuild from.
Status StateStore::AdoptLocked(const std::string& copy, std::unique_lock<std::mutex>& lock) {
  namespace fs = std::filesystem;
  std::error_code ec;
  // A copy kept for a rewind point may have sat on the disk for long: it
  // is checked again, unless its bytes are still those checked when it was
  // written.
  FileCheck check;
  bool by_digest = false;
  StateDigest digest;
  SPOOL_RETURN_IF_ERROR(CheckEnvironment(copy, &check, &by_digest, &digest));
  if (check.legacy) return Status::Corruption("state store: copy " + copy + " was written before values were sealed");
  const uint64_t next = generation_ + 1;
  const std::string dir = (fs::path(options_.path) / GenerationName(next)).string();
  fs::remove_all(dir, ec);
  fs::rename(copy, dir, ec);
  if (ec) return FsError("cannot adopt", copy, ec);
  SPOOL_KILL_POINT("state.adopt.renamed");
  SPOOL_RETURN_IF_ERROR(SyncDirectory(options_.path));
  SPOOL_KILL_POINT("state.adopt.synced");
  SPOOL_RETURN_IF_ERROR(SyncDirectory(copies_dir()));
  std::shared_ptr<LmdbEnv> adopted;
  StatePosition position;
  Status s = OpenLmdb(dir, options_.map_size_bytes, MDB_NOMETASYNC, &adopted);
  if (s.ok()) s = ReadPosition(*adopted, &position);
  if (!s.ok()) {
    adopted.reset();
    fs::remove_all(dir, ec);  // the next Open must not take it
    return s;
  }
  std::shared_ptr<LmdbEnv> retired;
  {
    std::unique_lock overlay(overlay_mu_);
    retired = std::exchange(lmdb_, std::move(adopted));
    mem_ = std::make_shared<StateOverlay>();
    position_ = position;
  }
  generation_ = next;
  apply_error_ = Status::OK();
  CheckedLocked(by_digest, std::move(digest));
  lock.unlock();
  Discard(retired->dir, retired);
  return Status::OK();
}

Status StateStore::MeasureFree(uint64_t* file_bytes, uint64_t* free_bytes) {
  // The pages in use: the main tree's, the free-page tree's own and the two
  // meta pages; the rest of the file up to LMDB's last page are free pages
  // (kept for reuse, or still held by a reader's snapshot).
  MDB_envinfo info{};
  MDB_stat main{}, free_tree{};
  MDB_txn* txn = nullptr;
  int rc = mdb_env_info(lmdb_->env, &info);
  if (rc == 0) rc = mdb_txn_begin(lmdb_->env, nullptr, MDB_RDONLY, &txn);
  if (rc == 0) rc = mdb_stat(txn, lmdb_->dbi, &main);
  if (rc == 0) rc = mdb_stat(txn, 0, &free_tree);  // dbi 0: LMDB's free-page tree
  if (txn != nullptr) mdb_txn_abort(txn);
  if (rc != 0) return LmdbError(rc, "measure");
  const auto pages = [](const MDB_stat& st) {
    return static_cast<uint64_t>(st.ms_branch_pages + st.ms_leaf_pages + st.ms_overflow_pages);
  };
  const uint64_t file_pages = static_cast<uint64_t>(info.me_last_pgno) + 1;
  const uint64_t used = std::min<uint64_t>(file_pages, 2 + pages(main) + pages(free_tree));
  *file_bytes = file_pages * main.ms_psize;
  *free_bytes = (file_pages - used) * main.ms_psize;
  return Status::OK();
}

// LMDB's compacting copy goes into copies/compact.tmp (a crash leaves it to
// Open, which removes *.tmp there), synced, then becomes the next
// generation as a copy does (AdoptLocked). The applier is held off
// throughout, so the copy misses no batch.
Status StateStore::Compact(double min_free_share, Compaction* report) {
  *report = Compaction{};
  SPOOL_RETURN_IF_ERROR(Writable("compact"));
  namespace fs = std::filesystem;
  std::unique_lock lock(apply_mu_);
  apply_cv_.wait(lock, [&] { return imm_ == nullptr; });
  if (!apply_error_.ok()) return Status::Failed(apply_error_.message());
  {
    std::shared_lock overlay(overlay_mu_);
    if (!mem_->empty()) return Status::Failed("state store: compact with commits staged");
  }
  SPOOL_RETURN_IF_ERROR(MeasureFree(&report->file_bytes_before, &report->free_bytes));
  report->file_bytes_after = report->file_bytes_before;
  if (static_cast<double>(report->free_bytes) < min_free_share * static_cast<double>(report->file_bytes_before)) {
    return Status::OK();
  }
  const std::string tmp = (fs::path(copies_dir()) / ("compact" + std::string(kTempSuffix))).string();
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return FsError("cannot create", tmp, ec);
  const std::string file = (fs::path(tmp) / "data.mdb").string();
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("state store: cannot create " + file + ": " + std::strerror(errno));
  int rc = mdb_env_copyfd2(lmdb_->env, fd, MDB_CP_COMPACT);
  const int synced = rc == 0 ? ::fdatasync(fd) : 0;
  const int sync_errno = errno;
  ::close(fd);
  Status s = rc != 0       ? LmdbWriteError(rc, "compacting copy", tmp)
             : synced != 0 ? Status::IOError("state store: cannot sync " + file + ": " + std::strerror(sync_errno))
                           : SyncDirectory(tmp);
  SPOOL_KILL_POINT("state.compact.copied");
  if (s.ok()) s = AdoptLocked(tmp, lock);
  if (!s.ok()) {
    fs::remove_all(tmp, ec);
    return s;
  }
  report->compacted = true;
  std::error_code size_ec;
  const uint64_t after = fs::file_size(fs::path(options_.path) / GenerationName(generation_) / "data.mdb", size_ec);
  report->file_bytes_after = size_ec ? 0 : after;
  return Status::OK();
}

}  // namespace spool
