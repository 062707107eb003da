// The state store: the current rows of every table, the catalog and the
// flow checkpoints, in one LMDB environment, derived from the log
// (docs/architecture.md, "State"). Internal to storage.
//
// Keys:
//   "M"                    the applied position (StatePosition), written in
//                          the same LMDB transaction as what it covers
//   "T" uid(be64)          a catalog entry (commit_codec: TableDef)
//   "r" uid(be64) row key  a row (row_codec); lower case so that rows sort
//                          after every other key and ascending inserts
//                          append to LMDB's last page instead of splitting
//                          pages in the middle
//   "C" flow               a flow checkpoint
//   "h" uid(be64) version(be64)
//                          the history index: the rows the commit at
//                          `version` changed or deleted in the table, as
//                          they were before it, as one run in key order
//                          (store_internal.h). Time travel reads it;
//                          snapshots leave it out.
//   "H"                    the history floor (be64): the index holds every
//                          change made after this version
//
// Commits reach LMDB in batches. Each committed log record is first staged
// in memory (the "mem" overlay); when mem holds enough commits or bytes it
// becomes "imm" and is written to LMDB in one transaction, by a background
// thread or (background = false) by the committer. Reads look at mem, then
// imm, then LMDB, so they see every staged commit. LMDB runs with
// MDB_NOMETASYNC: a batch costs one fsync off the commit path, and power loss
// can undo the last batch but never corrupt the environment; the log replays
// whatever the recorded position does not cover.
//
// Thread-safety: Stage, Flush and Reset are called by one writer at a time
// (the store's commit lock); Get, NewView and Meta may be called from any
// thread concurrently with them.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "spool/txnlog/log.h"
#include "state_check.h"

struct MDB_txn;

namespace spool {

struct LmdbEnv;

std::string StateCatalogKey(uint64_t uid);
std::string StateRowPrefix(uint64_t uid);
inline constexpr size_t kStateRowPrefixBytes = 9;  // "r" uid(be64); "h" keys begin alike
// StateRowPrefix(uid), then `key`.
std::string StateRowKey(uint64_t uid, std::string_view key);
std::string StateCheckpointKey(std::string_view flow);
std::string StateHistoryPrefix(uint64_t uid);
inline constexpr std::string_view kStatePositionKey = "M";
inline constexpr std::string_view kStateCatalogPrefix = "T";
inline constexpr std::string_view kStateRowPrefix = "r";
inline constexpr std::string_view kStateCheckpointPrefix = "C";
inline constexpr std::string_view kStateHistoryPrefix = "h";
inline constexpr std::string_view kStateHistoryFloorKey = "H";
// The smallest key greater than every key starting with `prefix`.
std::string PrefixEnd(std::string_view prefix);

// The log position the state reflects.
struct StatePosition {
  uint64_t store_id = 0;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
};

// A key with its StringHash, so that a key looked up in several maps (and
// prefetched first) is hashed once.
struct HashedKey {
  std::string_view key;
  size_t hash;
};

// Hash and equality of std::string keys that std::string_view and
// HashedKey find too (absl's own take absl::string_view, which is not
// std's in this build).
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view key) const;
  size_t operator()(const HashedKey& key) const { return key.hash; }
};
struct StringEq {
  using is_transparent = void;
  // Inline: std::string_view's == is not always inlined here.
  bool operator()(std::string_view a, std::string_view b) const {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
  }
  bool operator()(const HashedKey& a, std::string_view b) const { return (*this)(a.key, b); }
  bool operator()(std::string_view a, const HashedKey& b) const { return (*this)(a, b.key); }
};
template <typename V>
using StringMap = absl::flat_hash_map<std::string, V, StringHash, StringEq>;

// A key's staged value; nullopt: deleted.
using StateValue = std::optional<std::string>;

// The state changes of one commit, in the order it made them: a later change
// of a key replaces an earlier one.
struct StateDelta {
  std::vector<std::pair<std::string, StateValue>> changes;
  StatePosition position;
  uint64_t bytes = 0;

  void Put(std::string key, std::string value);
  void Delete(std::string key);
};

// One commit's state changes as its builder makes them: the newest value
// of each key it set, found by key, in the order the keys were first set
// (table by table, as transactions write), and moved whole into the
// commit's StateDelta once it is durable, so that staging it allocates no
// key or value again.
class StagedChanges {
 public:
  using Entry = std::pair<std::string, StateValue>;
  using Entries = std::vector<Entry>;

  StagedChanges();
  void reserve(size_t keys);
  bool empty() const { return entries_->empty(); }
  // A key hashed once for every commit's changes it is looked up in.
  using Probe = HashedKey;
  static Probe MakeProbe(std::string_view key) { return Probe{key, StringHash()(key)}; }
  // The value `key` was last set to (nullopt: deleted), or null when unset.
  const StateValue* Find(std::string_view key) const { return Find(MakeProbe(key)); }
  const StateValue* Find(const Probe& probe) const;
  // Starts loading the memory a Find of `probe` will read.
  void Prefetch(const Probe& probe) const { index_.prefetch(probe); }
  void Set(std::string key, StateValue value) {
    const size_t hash = MakeProbe(key).hash;
    Set(std::move(key), hash, std::move(value));
  }
  // `hash`: MakeProbe(key)'s, known already.
  void Set(std::string key, size_t hash, StateValue value);
  // In the order first set.
  const Entries& entries() const { return *entries_; }
  // Moves every entry into `delta` (after what it holds), leaving this empty.
  void MoveInto(StateDelta* delta);

 private:
  // The index holds positions in *entries_ and hashes and compares the keys
  // there (a key is looked up, and set, by its Probe). The entries sit
  // behind a pointer that a move keeps, so the index's functors, which
  // hold it, stay right.
  struct IndexHash {
    using is_transparent = void;
    const Entries* entries;
    size_t operator()(uint32_t at) const { return StringHash()((*entries)[at].first); }
    size_t operator()(const Probe& probe) const { return probe.hash; }
  };
  struct IndexEq {
    using is_transparent = void;
    const Entries* entries;
    std::string_view KeyOf(uint32_t at) const { return (*entries)[at].first; }
    std::string_view KeyOf(const Probe& probe) const { return probe.key; }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return StringEq()(KeyOf(a), KeyOf(b));
    }
  };
  std::unique_ptr<Entries> entries_;
  absl::flat_hash_set<uint32_t, IndexHash, IndexEq> index_;
};

// Staged commits merged in order: the newest value of every key they
// changed. Point reads hash the key; reads in key order (views, the batch
// written to LMDB) sort only the part they cover. Keys are grouped by table
// ("r" and "h" keys by their 9-byte prefix, the other families by their
// first byte), so a scan of one table sorts that table's staged keys, not
// everything staged; a group holds its keys without the prefix, which keeps
// short row keys within std::string's inline buffer (one cache miss fewer
// per probe).
class StateOverlay {
 public:
  using Entries = std::vector<std::pair<std::string, StateValue>>;
  using Visitor = std::function<bool(std::string_view key, const StateValue& value)>;
  // Open addressing: a probe reads the slot, which holds a short key inline.
  using Group = StringMap<StateValue>;
  // Where a key lies: its group (null: the overlay holds none of its
  // group's keys) and its suffix there, hashed; found once for a Prefetch
  // and the Find after it. Valid while the overlay is unchanged.
  struct Probe {
    const Group* group = nullptr;
    HashedKey suffix;
  };

  // Adds a commit's changes (moved out of `delta`) over what is staged.
  void Add(StateDelta&& delta);
  // Adds `later` over this overlay.
  void Merge(const StateOverlay& later);
  Probe MakeProbe(std::string_view key) const;
  // The staged value of `key`, or null when the overlay does not hold it.
  const StateValue* Find(std::string_view key) const { return Find(MakeProbe(key)); }
  static const StateValue* Find(const Probe& probe);
  // Starts loading the memory a Find of `probe` will read.
  static void Prefetch(const Probe& probe);
  // Visits the entries in [begin, end) (`end` empty: no bound) in key order
  // until `visit` returns false.
  void VisitSorted(std::string_view begin, std::string_view end, const Visitor& visit) const;
  // A copy of the entries in [begin, end), in key order.
  Entries Sorted(std::string_view begin, std::string_view end) const;

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }

  StatePosition position;  // the newest commit's
  uint64_t commits = 0;
  uint64_t bytes = 0;  // of every change added, overwritten ones included

 private:
  static std::string_view GroupOf(std::string_view key);
  Group& GroupNamed(std::string_view name);  // made empty on first use
  void Set(Group& group, std::string_view suffix, StateValue value);

  StringMap<Group> groups_;
  size_t size_ = 0;
};

struct StateStoreOptions {
  std::string path;  // a directory on the real file system
  uint64_t map_size_bytes = 256ull << 30;
  uint64_t batch_commits = 512;              // mem becomes a batch after this many commits
  uint64_t batch_bytes = 32ull << 20;        // ... or this many staged bytes
  uint64_t max_staged_bytes = 256ull << 20;  // committers wait for the applier beyond this
  bool background = true;
  // Check the environment's file whole before LMDB opens it (state_check.h):
  // a damaged state fails Open with Corruption instead of misreading or
  // crashing later. A file a clean close left (its DIGEST matches) costs a
  // digest of its bytes; any other, the walk.
  bool check_on_open = true;
  // Open the live generation beside the process that writes it, changing
  // nothing: no batches are applied (what is staged stays in memory), and
  // every read goes through one LMDB read transaction begun at open, so
  // it sees the state as it was then, whatever the writer applies later
  // (LMDB keeps the pages that transaction reads until it ends, so a
  // long-lived read-only store holds disk). Every call that writes
  // returns NotSupported, as does NewReader.
  bool read_only = false;
};

struct StateStats {
  uint64_t batches = 0;  // LMDB transactions written
  uint64_t applied_commits = 0;
  // How the generations opened or adopted were checked: found as a clean
  // close (or SaveCopy) recorded them by their digest, or walked whole.
  uint64_t checks_by_digest = 0;
  uint64_t checks_whole = 0;
};

using StateLoader = std::function<Status(std::string_view key, std::string_view value)>;

// A consistent read of one key range as of the moment it was taken.
class StateView {
 public:
  virtual ~StateView() = default;
  // Positions at the first key >= `key` within the view's range.
  virtual void Seek(std::string_view key) = 0;
  virtual bool Valid() const = 0;
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual void Next() = 0;
  virtual Status status() const = 0;
};

// Point reads for the writer, as of when it was made: one LMDB read
// transaction for many keys. Made and used under the writer's lock, before
// the writer's next Stage.
class StateReader {
 public:
  ~StateReader();
  // A key's places in the staged overlays, found once for the Prefetch and
  // the Get after it.
  struct Probe {
    std::string_view key;
    StateOverlay::Probe mem, imm;
  };
  Probe MakeProbe(std::string_view key) const;
  // The value of the probe's key (`*found`), viewed where it is staged or
  // in LMDB's map: valid until the writer's next Stage or the reader's end.
  Status Get(const Probe& probe, std::string_view* value, bool* found);
  // Starts loading the staged entries a Get of `probe` will read, so that a
  // writer with many keys to read has them arrive together.
  static void Prefetch(const Probe& probe);

 private:
  friend class StateStore;
  StateReader() = default;
  const StateOverlay* mem_ = nullptr;
  std::shared_ptr<const StateOverlay> imm_;
  struct Txn;  // holds its generation open
  std::unique_ptr<Txn> txn_;
};

// One LMDB environment of a state directory, as StateStore::Verify found it.
struct StateFileReport {
  std::string name;  // "gen-000003" (the live state) or "copies/<name>"
  std::string file;  // its data.mdb
  FileCheck check;
  StatePosition position;  // read when the file is intact
  Status status;           // OK, or the damage
};

// The chunks of a state file (kDigestChunkBytes each) that LMDB may have
// written since the file was found to have the digest `checked`: those
// holding a meta page, a page past the file's last one then, or a page on
// LMDB's free list after any commit since — LMDB writes no other page (a
// page in use is copied, never written over), and a page it frees is on
// that list from its commit until it is taken again. What a clean close
// hashes again; with `checked` empty, the whole file is.
struct WrittenChunks {
  StateDigest checked;
  uint64_t first_new_chunk = 0;  // holds the first page past the last at the check
  std::vector<bool> freed;       // held a free page after some commit
  bool Maybe(size_t k) const { return k == 0 || k >= first_new_chunk || (k < freed.size() && freed[k]); }
};

// The environment lives in a generation directory "<path>/gen-NNNNNN"; the
// newest is the live one. A copy (SaveCopy) is a complete environment of its
// own in "<path>/copies/<name>"; Adopt makes one the next generation by
// renaming it, which is how a rewind gets the state of a point without
// rebuilding it. Readers keep the generation they started on open until
// they end; a retired generation is deleted after its last reader.
class StateStore {
 public:
  static Status Open(const StateStoreOptions& options, std::unique_ptr<StateStore>* out);
  ~StateStore();

  // Checks the state in `path` without writing to it: the live generation
  // and every copy, each whole (CheckStateFile), and the position of each
  // that is intact. Damage goes in the reports. Errors: IOError.
  static Status Verify(const std::string& path, std::vector<StateFileReport>* files);

  // What LMDB holds: the position of the last applied batch (all zero when
  // empty) — not counting what is staged.
  Status AppliedPosition(StatePosition* position);
  // The position of the newest staged or applied commit.
  StatePosition position();

  // Stages one commit's changes; may hand a batch to the applier (or apply
  // it, background = false). Errors: Failed (an earlier batch failed).
  Status Stage(StateDelta delta);
  // Writes everything staged to LMDB and waits for it. Errors: IOError, NoSpace.
  Status Flush() { return FlushUnlessBelow(0, 0); }
  // Flush, unless LMDB holds an applied position already and fewer than
  // `commits` commits and `bytes` bytes are staged: what a close leaves,
  // which the next open replays from the log in less time than writing
  // and syncing a batch takes (and a reader beside the next writer, from
  // a state on the log's history).
  Status FlushUnlessBelow(uint64_t commits, uint64_t bytes);
  // Forgets what is staged and not yet applied (waiting for a batch being
  // applied): the store then holds what LMDB holds, at AppliedPosition().
  // For a rewind, which cuts the commits staged here from the log.
  Status DropStaged();
  // Empties the store (staged and applied) and, in the same LMDB
  // transaction, writes what `load` puts (keys in any order; ascending keys,
  // as a snapshot holds them, are appended without a search) and records
  // `position`: the start of a rebuild. `load` may be null.
  Status Reset(const StatePosition& position, const std::function<Status(const StateLoader& put)>& load);

  // Deletes, in one LMDB transaction, every applied key in [begin, end)
  // that `drop` chooses, and writes `puts` in the same transaction (what
  // must change with the deletion: the history floor); keys still staged
  // are left. Sets *dropped to how many went. Errors: IOError, Failed.
  Status Prune(std::string_view begin, std::string_view end, const std::function<bool(std::string_view key)>& drop,
               const std::vector<std::pair<std::string, std::string>>& puts, uint64_t* dropped);

  // What Compact found and did.
  struct Compaction {
    uint64_t file_bytes_before = 0;  // the environment's file
    uint64_t file_bytes_after = 0;   // the same when not compacted
    uint64_t free_bytes = 0;         // of it, pages LMDB holds free for reuse
    bool compacted = false;
  };
  // Replaces the environment by a compacted copy when at least
  // `min_free_share` of its file is free pages: LMDB reuses a freed page
  // but never shortens its file, so after a prune (or a batch that rewrote
  // most pages) the file keeps its high-water mark. The copy (LMDB's copy
  // without free pages) is synced, checked whole and adopted as the next
  // generation, as Adopt does; the retired generation is deleted once no
  // reader has it open (DiscardNow returns the space at once). Nothing may
  // be staged: call it after a Flush, with commits held off. Errors:
  // IOError, NoSpace, Failed, Corruption (the copy failed its check); on
  // error the state is unchanged.
  Status Compact(double min_free_share, Compaction* report);

  // Point read of the current state.
  Status Get(std::string_view key, std::string* value, bool* found);
  // Point reads for the writer (see StateReader).
  Status NewReader(std::unique_ptr<StateReader>* out);
  // A view over [begin, end) of the current state.
  Status NewView(std::string begin, std::string end, std::unique_ptr<StateView>* view);

  StateStats stats();

  // Writes everything staged, then a copy of the state named `name`: every
  // key but the history index, with the history floor at the copy's
  // position, durable before it appears under its name. Returns the copy's
  // position. Errors: IOError, NoSpace, Failed.
  Status SaveCopy(const std::string& name, StatePosition* position);
  // The names of the copies.
  Status ListCopies(std::vector<std::string>* names);
  // OK if there is no such copy.
  Status RemoveCopy(const std::string& name);
  // Makes every discarded generation due now and waits until those no
  // handle has open are deleted (background applier only): a vacuum that
  // compacted returns the space before it returns. Returns how many are
  // left, held open here or in another process.
  size_t DiscardNow();

  // Replaces the state by the copy `name` (which is consumed), dropping
  // what is staged. Errors: NotFound, IOError, Corruption; on error the
  // state is unchanged.
  Status Adopt(const std::string& name);

 private:
  // Adopt's work on the complete environment in `copy` (consumed), with
  // apply_mu_ held through `lock` and no batch being applied.
  Status AdoptLocked(const std::string& copy, std::unique_lock<std::mutex>& lock);
  // The environment's file and the bytes of it that are free pages.
  Status MeasureFree(uint64_t* file_bytes, uint64_t* free_bytes);

 private:
  explicit StateStore(const StateStoreOptions& options);
  std::string copies_dir() const;
  std::shared_ptr<LmdbEnv> CurrentEnv();
  static Status OpenReadOnly(const StateStoreOptions& options, std::unique_ptr<StateStore>* out);
  // Takes options_.path in this process's registry of open states. Errors: Busy.
  Status Register();
  Status Writable(std::string_view what) const;
  // `env`: the generation's environment, when this process has it open.
  void Discard(std::string dir, std::weak_ptr<LmdbEnv> env = {});
  static bool DiscardStep(const std::string& dir);
  Status WriteBatch(const StateOverlay& batch, const std::function<Status(const StateLoader& put)>* load = nullptr);
  Status Load(MDB_txn* txn, const std::function<Status(const StateLoader& put)>& load);
  void ApplierLoop();
  void CompleteBatchLocked(const Status& s);
  Status HandOffLocked(std::unique_lock<std::mutex>& lock);
  // Records that the live generation was checked (by its digest or whole)
  // as LMDB's newest transaction left it; what the close's digest needs.
  // With `digest` (the file's, found by it), what a close hashes again is
  // tracked from here on (TrackWrites).
  void Checked(bool by_digest, StateDigest digest);
  void CheckedLocked(bool by_digest, StateDigest digest);  // REQUIRES: apply_mu_ held
  // After each commit LMDB makes: the chunks it may write from now on.
  void TrackWrites();
  // At a clean close: the free pages to give back to the file system, as
  // byte ranges of the file, after one more commit when the last one freed
  // kReleaseCommitBytes or more (its pages are the snapshot before it).
  void ReleaseLater(std::vector<std::pair<uint64_t, uint64_t>>* releasable);
  static constexpr uint64_t kReleaseCommitBytes = uint64_t{1} << 20;

  StateStoreOptions options_;
  std::string registered_;  // the path Register took, released by the destructor
  // Replaced only by Adopt, holding apply_mu_ and overlay_mu_ (exclusive):
  // readers copy it under overlay_mu_ (shared); the writer's paths run under
  // apply_mu_ or hold the commit lock that Adopt's caller holds too.
  std::shared_ptr<LmdbEnv> lmdb_;
  uint64_t generation_ = 0;

  std::shared_mutex overlay_mu_;             // guards mem_ and imm_ pointers for readers
  std::shared_ptr<StateOverlay> mem_;        // changed only under overlay_mu_ (exclusive)
  std::shared_ptr<const StateOverlay> imm_;  // being applied
  StatePosition position_;

  std::mutex apply_mu_;
  std::condition_variable apply_cv_;
  bool stopping_ = false;
  Status apply_error_;
  StateStats stats_;
  // The live generation was checked when opened or adopted, by its digest
  // or whole, at LMDB's transaction `checked_transaction_` (Checked); the
  // close vouches for it only if no damage was met since.
  bool checked_ = false;
  bool checked_by_digest_ = false;
  uint64_t checked_transaction_ = 0;
  uint64_t damage_seen_at_check_ = 0;  // DamagedEntriesSeen() then
  std::mutex written_mu_;
  WrittenChunks written_;  // under written_mu_; reset by Checked
  std::thread applier_;
  // Generations for the applier to delete (Discard), oldest first; under
  // apply_mu_.
  struct Trash {
    std::string dir;
    std::chrono::steady_clock::time_point due;  // of its next step
    std::weak_ptr<LmdbEnv> env;                 // while this process has it open
  };
  std::vector<Trash> trash_;
  uint64_t trash_changes_ = 0;  // counts changes to trash_ that move its deadlines
  uint64_t discard_steps_ = 0;  // steps the applier took (DiscardNow waits for them)
  static constexpr std::chrono::seconds kDiscardDelay{1};
  static constexpr std::chrono::milliseconds kDiscardStepInterval{20};
  static constexpr uint64_t kDiscardChunkBytes = 32ull << 20;
};

}  // namespace spool
