#include "state_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__)
// The library's XXH3 dispatched at run time to the widest vector unit the
// CPU has, for the digest's bulk hashing (the inlined one below is built
// for the baseline, SSE2: half the speed where AVX2 is there).
#define XXH_DISPATCH_DISABLE_REPLACE  // named where used, not put for XXH3_* at large
#include <xxh_x86dispatch.h>
#else
#include <xxhash.h>
#endif

namespace spool {
namespace {

// The library's streaming XXH3-128, for a digest read a buffer at a time.
// Defined before XXH_INLINE_ALL below renames XXH3_* to inlined copies,
// whose forced inlining does not compile unoptimised (the sanitizer
// builds) and which would not dispatch.
class StreamingXxh3 {
 public:
  StreamingXxh3() : state_(XXH3_createState()) {
    if (state_ != nullptr) (void)XXH3_128bits_reset(state_);
  }
  StreamingXxh3(const StreamingXxh3&) = delete;
  StreamingXxh3& operator=(const StreamingXxh3&) = delete;
  ~StreamingXxh3() { (void)XXH3_freeState(state_); }

  bool ok() const { return state_ != nullptr; }
  void Update(const void* bytes, size_t size) {
#if defined(__x86_64__)
    (void)XXH3_128bits_update_dispatch(state_, bytes, size);
#else
    (void)XXH3_128bits_update(state_, bytes, size);
#endif
  }
  // The hash's halves: high, low.
  std::pair<uint64_t, uint64_t> Digest() const {
    const XXH128_hash_t hash = XXH3_128bits_digest(state_);
    return {hash.high64, hash.low64};
  }

 private:
  XXH3_state_t* state_;
};

}  // namespace
}  // namespace spool

// XXH3 compiled here: every value read from LMDB is checked with it, and
// inlined it costs a fraction of the library's call and dispatch.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "helper_thread.h"
#include "varint.h"

namespace spool {

// ---------------------------------------------------------------------------
// Sealed entries

namespace {

uint32_t EntryChecksum(std::string_view key, std::string_view value) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(value.data(), value.size(), XXH3_64bits(key.data(), key.size())));
}

// Printable bytes as they are, the others as \xNN, at most 64 of them.
std::string Printable(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < bytes.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  if (bytes.size() > 64) out += "...";
  return out;
}

}  // namespace

void Seal(std::string_view key, std::string_view value, char* out) {
  std::memcpy(out, value.data(), value.size());
  const uint32_t sum = EntryChecksum(key, value);
  std::memcpy(out + value.size(), &sum, sizeof sum);
}

bool Unseal(std::string_view key, std::string_view stored, std::string_view* value) {
  if (stored.size() < kEntryChecksumBytes) return false;
  const std::string_view v = stored.substr(0, stored.size() - kEntryChecksumBytes);
  uint32_t sum;
  std::memcpy(&sum, stored.data() + v.size(), sizeof sum);
  if (sum != EntryChecksum(key, v)) return false;
  *value = v;
  return true;
}

std::string DescribeStateKey(std::string_view key) {
  if (key.empty()) return "an empty key";
  const char family = key[0];
  std::string_view rest = key.substr(1);
  const auto table = [&](std::string_view what) {
    const std::string uid = rest.size() >= 8 ? std::to_string(GetBigEndian64(rest)) : "?";
    std::string out = std::string(what) + "table #" + uid;
    if (rest.size() > 8) out = std::string(what) + "'" + Printable(rest.substr(8)) + "' of table #" + uid;
    return out;
  };
  switch (family) {
    case '#':
      return "the state's format";
    case 'M':
      return "the applied position";
    case 'H':
      return "the history floor";
    case 'T':
      return "the catalog entry of " + table("");
    case 'L':
      return "the last change of " + table("");
    case 'r':
      return rest.size() > 8 ? table("row ") : table("rows of ");
    case 'h':
      return rest.size() > 8 ? "a history run of " + table("") : table("history of ");
    case 'C':
      return "the checkpoint of flow '" + Printable(rest) + "'";
    case 'D':
      return "the schema change at version " + (rest.size() == 8 ? std::to_string(GetBigEndian64(rest)) : "?");
    default:
      return "key '" + Printable(key) + "'";
  }
}

namespace {
std::atomic<uint64_t> damaged_entries_seen{0};
}  // namespace

uint64_t DamagedEntriesSeen() { return damaged_entries_seen.load(std::memory_order_relaxed); }

Status DamagedEntry(std::string_view key) {
  damaged_entries_seen.fetch_add(1, std::memory_order_relaxed);
  return Status::Corruption("state store: " + DescribeStateKey(key) +
                            " is damaged (checksum mismatch); `spool repair` rebuilds the state from the log");
}

// ---------------------------------------------------------------------------
// The file walk
//
// LMDB's data format (version 1, 64-bit): pages of `psize` bytes, each
// starting with a 16-byte header: pgno u64, pad u16, flags u16, then lower
// u16 and upper u16 (or, on an overflow page, its page count u32). Branch
// and leaf pages hold u16 node offsets from byte 16 up to `lower`; the
// nodes lie between `upper` and the page's end. A node: lo u16, hi u16,
// flags u16, ksize u16, the key, then (leaf) the value or (F_BIGDATA) the
// u64 page number of its overflow run. A leaf's value size is lo | hi << 16;
// a branch's child is lo | hi << 16 | flags << 32. Pages 0 and 1 are the
// meta pages: after the header, magic u32, version u32, address u64,
// map size u64, then two database records (free pages, main) of 48 bytes —
// pad u32 (the free record's: the page size), flags u16, depth u16,
// branch/leaf/overflow page counts u64, entries u64, root u64 — then the
// last page used u64 and the transaction id u64. The meta with the higher
// transaction id is the one LMDB reads.

namespace {

constexpr size_t kPageHeader = 16;
constexpr size_t kNodeHeader = 8;
constexpr uint16_t kBranch = 0x01, kLeaf = 0x02, kOverflow = 0x04, kMeta = 0x08, kLeaf2 = 0x20, kSubPage = 0x40;
constexpr uint16_t kPageKinds = kBranch | kLeaf | kOverflow | kMeta | kLeaf2 | kSubPage;
constexpr uint16_t kBigData = 0x01;
constexpr uint32_t kLmdbMagic = 0xBEEFC0DE;
constexpr uint32_t kDataVersion = 1;
constexpr uint16_t kIntegerKey = 0x08;
constexpr uint64_t kNoPage = ~uint64_t{0};
constexpr size_t kMaxDepth = 64;
// Smaller files are checked (and digested in memory) on the caller's
// thread alone: starting another would cost more than it saves.
constexpr size_t kThreadedCheckBytes = size_t{4} << 20;
// A digest read with pread is bound by copying memory: a second thread
// pays for its start only on a big file (W6p's 10 MB state, hashed twice
// a rewind: the rewind 0.0113 s and 0.0123 s with one thread, 0.0163 s and
// 0.0131 s with two, in alternating runs on this project's VM).
constexpr size_t kThreadedReadDigestBytes = size_t{32} << 20;
constexpr const char* kCheckThreadName = "spool-check";

// How many threads work on `bytes` of a file when the caller leaves it to
// the check (0): the machine's cores, up to 4, for `bytes` of `from` or
// more.
unsigned ThreadsFor(size_t bytes, unsigned threads, size_t from = kThreadedCheckBytes) {
  if (threads != 0) return threads;
  return bytes < from ? 1 : std::clamp(std::thread::hardware_concurrency(), 1U, 4U);
}

template <typename T>
T Load(const char* at) {
  T v;
  std::memcpy(&v, at, sizeof v);
  return v;
}

struct Db {
  uint32_t pad;
  uint16_t flags, depth;
  uint64_t branch_pages, leaf_pages, overflow_pages, entries, root;
};

struct Meta {
  uint32_t magic, version;
  Db free, main;
  uint64_t last_page, txnid;
};

Db LoadDb(const char* at) {
  return Db{Load<uint32_t>(at),      Load<uint16_t>(at + 4),  Load<uint16_t>(at + 6),  Load<uint64_t>(at + 8),
            Load<uint64_t>(at + 16), Load<uint64_t>(at + 24), Load<uint64_t>(at + 32), Load<uint64_t>(at + 40)};
}

Meta LoadMeta(const char* page) {
  const char* m = page + kPageHeader;
  return Meta{Load<uint32_t>(m), Load<uint32_t>(m + 4),   LoadDb(m + 24),
              LoadDb(m + 72),    Load<uint64_t>(m + 120), Load<uint64_t>(m + 128)};
}
constexpr size_t kMetaBytes = kPageHeader + 136;

bool ValidPageSize(uint64_t psize) { return psize >= 512 && psize <= 65536 && (psize & (psize - 1)) == 0; }

// Key orders: LMDB's default (bytes, then length) for the main database,
// native u64 for the free-page database (MDB_INTEGERKEY).
int CompareKeys(bool integer, std::string_view a, std::string_view b) {
  if (!integer) return a.compare(b);
  const uint64_t x = Load<uint64_t>(a.data()), y = Load<uint64_t>(b.data());
  return x < y ? -1 : x > y ? 1 : 0;
}

// The walk of one tree runs in two phases. The first follows its branch
// pages from the root in key order, checking each and marking it reached
// at once (so no damage can make it loop, or walk a subtree twice), and
// lists the leaves beneath with the key bounds their parents give them.
// The second checks the leaves — nearly all of the file, and every value —
// in chunks, on several threads when there are many: a chunk records the
// pages its leaves reach (each leaf, its overflow runs, a free list's
// pages) in order, and stops at its first failure. The chunks are then
// replayed in the walk's order into the map of reached pages, and the
// first failure in that order — a page reached twice, or a chunk's own —
// is the one reported, whatever the number of threads.
class Walker {
 public:
  Walker(std::string_view image, uint64_t psize, const Meta& meta, unsigned threads)
      : image_(image),
        psize_(psize),
        meta_(meta),
        file_pages_(image.size() / psize),
        threads_(threads),
        reached_(meta.last_page + 1, false) {}

  Status Run(FileCheck* check) {
    SPOOL_RETURN_IF_ERROR(Tree(meta_.free, /*integer=*/true, "free-page"));
    SPOOL_RETURN_IF_ERROR(Tree(meta_.main, /*integer=*/false, "main"));
    uint64_t lost = 0, first_lost = 0;
    for (uint64_t p = 2; p < reached_.size(); ++p) {
      if (!reached_[p] && lost++ == 0) first_lost = p;
    }
    if (lost != 0) {
      return Fail(first_lost, "reached by no tree and in no free list (" + std::to_string(lost) + " such pages)");
    }
    check->pages = pages_;
    check->entries = entries_;
    check->legacy = legacy_;
    return Status::OK();
  }

 private:
  struct Bounds {
    std::optional<std::string_view> low, high;  // low <= key < high
  };
  struct Leaf {
    uint64_t pgno;
    Bounds bounds;
  };
  // Pages a leaf reaches: the leaf, an overflow run, a free page.
  struct Span {
    uint64_t pgno, count;
    const char* what;
  };
  // What checking a run of consecutive leaves found.
  struct Chunk {
    std::vector<Span> runs;  // in the walk's order
    Status status;           // the first failure; the chunk stops there
    uint64_t pages = 0, entries = 0;
  };

  static Status Fail(uint64_t pgno, const std::string& what) {
    return Status::Corruption("page " + std::to_string(pgno) + ": " + what);
  }

  // Whether `count` pages from `pgno` are pages of the file (and, when
  // `readable`, within its bytes): what reaching them needs before they
  // are read, on any thread.
  Status InRange(uint64_t pgno, uint64_t count, bool readable, const char* what) const {
    if (pgno < 2 || pgno > meta_.last_page || count > meta_.last_page + 1 - pgno) {
      return Fail(pgno, std::string(what) + " outside the file's pages 2.." + std::to_string(meta_.last_page));
    }
    if (readable && pgno + count > file_pages_) return Fail(pgno, std::string(what) + " beyond the file's end");
    return Status::OK();
  }

  // Marks `run`'s pages reached; each page once.
  Status Mark(const Span& run) {
    for (uint64_t p = run.pgno; p < run.pgno + run.count; ++p) {
      if (reached_[p]) return Fail(p, std::string(run.what) + " reached twice");
      reached_[p] = true;
    }
    return Status::OK();
  }

  const char* PageAt(uint64_t pgno) const { return image_.data() + pgno * psize_; }

  Status Tree(const Db& db, bool integer, const char* name) {
    if (db.root == kNoPage) {
      if (db.depth != 0 || db.entries != 0) return Status::Corruption(std::string(name) + " tree: empty but counted");
      return Status::OK();
    }
    if (db.depth == 0 || db.depth > kMaxDepth) {
      return Status::Corruption(std::string(name) + " tree: depth " + std::to_string(db.depth));
    }
    std::vector<Leaf> leaves;
    // A failure among the branches comes after the leaves listed before it.
    const Status branches = Branches(db.root, db.depth, integer, Bounds{}, &leaves);
    uint64_t entries = 0;
    SPOOL_RETURN_IF_ERROR(Leaves(leaves, integer, &entries));
    SPOOL_RETURN_IF_ERROR(branches);
    if (entries != db.entries) {
      return Status::Corruption(std::string(name) + " tree: " + std::to_string(entries) + " entries, its record says " +
                                std::to_string(db.entries));
    }
    return Status::OK();
  }

  // The first phase: checks page `pgno`, `levels` above the leaves (1: a
  // leaf, listed for the second phase), whose keys lie within `bounds`,
  // and the branch pages under it.
  Status Branches(uint64_t pgno, size_t levels, bool integer, const Bounds& bounds, std::vector<Leaf>* leaves) {
    if (levels == 1) {
      leaves->push_back(Leaf{pgno, bounds});
      return Status::OK();
    }
    SPOOL_RETURN_IF_ERROR(InRange(pgno, 1, true, "branch"));
    SPOOL_RETURN_IF_ERROR(Mark(Span{pgno, 1, "branch"}));
    ++pages_;
    std::vector<std::pair<std::string_view, uint64_t>> children;
    SPOOL_RETURN_IF_ERROR(EachNode(pgno, kBranch, integer, bounds, [&](size_t, const char* node, std::string_view key) {
      const uint64_t child =
          Load<uint16_t>(node) | uint64_t{Load<uint16_t>(node + 2)} << 16 | uint64_t{Load<uint16_t>(node + 4)} << 32;
      children.emplace_back(key, child);
      return Status::OK();
    }));
    for (size_t i = 0; i < children.size(); ++i) {
      const Bounds child{i == 0 ? bounds.low : std::optional(children[i].first),
                         i + 1 < children.size() ? std::optional(children[i + 1].first) : bounds.high};
      SPOOL_RETURN_IF_ERROR(Branches(children[i].second, levels - 1, integer, child, leaves));
    }
    return Status::OK();
  }

  // Checks page `pgno`'s header (a page of `kind`) and each node's place
  // and key, calling `visit(i, node, key)` for each node in order. The
  // keys lie within `bounds` and ascend; a branch's first key is not one
  // (LMDB ignores it).
  template <typename Visit>
  Status EachNode(uint64_t pgno, uint16_t kind, bool integer, const Bounds& bounds, const Visit& visit) const {
    const char* page = PageAt(pgno);
    if (Load<uint64_t>(page) != pgno) return Fail(pgno, "header names page " + std::to_string(Load<uint64_t>(page)));
    const uint16_t found = Load<uint16_t>(page + 10) & kPageKinds;
    if (found != kind) return Fail(pgno, "kind " + std::to_string(found) + " at this depth");
    const uint16_t lower = Load<uint16_t>(page + 12), upper = Load<uint16_t>(page + 14);
    if (lower < kPageHeader || lower > upper || upper > psize_ || (lower - kPageHeader) % 2 != 0) {
      return Fail(pgno, "free space [" + std::to_string(lower) + ", " + std::to_string(upper) + ")");
    }
    const size_t nodes = (lower - kPageHeader) / 2;
    if (nodes == 0) return Fail(pgno, "no nodes");
    const size_t first = kind == kBranch ? 1 : 0;
    const auto out_of_order = [&](size_t i, const char* why) {
      return Fail(pgno, "key of node " + std::to_string(i) + " " + why);
    };
    std::string_view previous;
    for (size_t i = 0; i < nodes; ++i) {
      const size_t at = Load<uint16_t>(page + kPageHeader + 2 * i);
      if (at < upper || at + kNodeHeader > psize_) return Fail(pgno, "node " + std::to_string(i) + " outside the page");
      const char* node = page + at;
      const size_t ksize = Load<uint16_t>(node + 6);
      if (at + kNodeHeader + ksize > psize_) return out_of_order(i, "outside the page");
      const std::string_view key(node + kNodeHeader, ksize);
      // Ascending keys need one comparison each; the bounds, the first
      // key's and (below) the last one's.
      if (i >= first) {
        if (integer && ksize != 8) return Fail(pgno, "free-page key of " + std::to_string(ksize) + " bytes");
        if (i == first ? bounds.low && CompareKeys(integer, *bounds.low, key) > 0
                       : CompareKeys(integer, previous, key) >= 0) {
          return out_of_order(i, i == first ? "below its parent's separator" : "not above the one before");
        }
        previous = key;
      }
      SPOOL_RETURN_IF_ERROR(visit(i, node, key));
    }
    if (nodes > first && bounds.high && CompareKeys(integer, previous, *bounds.high) >= 0) {
      return out_of_order(nodes - 1, "at or above its parent's next separator");
    }
    return Status::OK();
  }

  // The second phase: checks `leaves` (the first alone, then the others in
  // chunks on up to threads_ threads), then marks what they reach.
  Status Leaves(const std::vector<Leaf>& leaves, bool integer, uint64_t* entries) {
    if (leaves.empty()) return Status::OK();
    const size_t workers = std::max<size_t>(1, std::min<size_t>(threads_, leaves.size() - 1));
    const size_t per_chunk = std::clamp<size_t>((leaves.size() - 1) / (workers * 8), 1, 64);
    // Chunk 0 is the first leaf; chunk k > 0 starts at leaf 1 + (k - 1) * per_chunk.
    const size_t count = 1 + (leaves.size() - 1 + per_chunk - 1) / per_chunk;
    const auto check = [&](size_t k, bool decides_legacy) {
      const size_t begin = k == 0 ? 0 : 1 + (k - 1) * per_chunk;
      return CheckChunk(leaves, begin, k == 0 ? 1 : std::min(leaves.size(), begin + per_chunk), integer,
                        decides_legacy);
    };
    std::vector<Chunk> chunks(count);
    // The main tree's first entry tells a sealed state from a legacy one,
    // which the checks of all the others need.
    chunks[0] = check(0, /*decides_legacy=*/!integer);
    if (chunks[0].status.ok()) {
      OnThreads(count - 1, workers, kCheckThreadName, [&](size_t k) { chunks[k + 1] = check(k + 1, false); });
    }
    for (const Chunk& chunk : chunks) {
      for (const Span& run : chunk.runs) SPOOL_RETURN_IF_ERROR(Mark(run));
      SPOOL_RETURN_IF_ERROR(chunk.status);
      pages_ += chunk.pages;
      *entries += chunk.entries;
      if (!integer) entries_ += chunk.entries;
    }
    return Status::OK();
  }

  // Checks leaves [begin, end), the next few asked into the cache before
  // each: the walk is bound by waiting for memory (a miss per node
  // otherwise), and leaves need not lie in the file in order for the
  // processor to guess them. Each is asked for again at every leaf before
  // it, as the processor drops what its miss buffers cannot hold: this
  // takes a third off the walk, and asking once, four ahead, was 8–15 %
  // slower than asking again in alternating runs.
  Chunk CheckChunk(const std::vector<Leaf>& leaves, size_t begin, size_t end, bool integer, bool decides_legacy) {
    constexpr size_t kAhead = 4;
    Chunk chunk;
    for (size_t i = begin; i < end && chunk.status.ok(); ++i) {
      for (size_t next = i + 1; next <= i + kAhead && next < end; ++next) {
        if (leaves[next].pgno >= file_pages_) continue;
        const char* page = PageAt(leaves[next].pgno);
        for (size_t at = 0; at < psize_; at += 64) __builtin_prefetch(page + at);
      }
      chunk.status = CheckLeaf(leaves[i], integer, decides_legacy, &chunk);
    }
    return chunk;
  }

  // Checks leaf `leaf` and its values into `chunk`.
  Status CheckLeaf(const Leaf& leaf, bool integer, bool decides_legacy, Chunk* chunk) {
    SPOOL_RETURN_IF_ERROR(InRange(leaf.pgno, 1, true, "leaf"));
    chunk->runs.push_back(Span{leaf.pgno, 1, "leaf"});
    ++chunk->pages;
    return EachNode(leaf.pgno, kLeaf, integer, leaf.bounds, [&](size_t i, const char* node, std::string_view key) {
      std::string_view value;
      SPOOL_RETURN_IF_ERROR(Value(leaf.pgno, i, node, key, chunk, &value));
      ++chunk->entries;
      if (integer) return FreeList(leaf.pgno, value, chunk);
      if (decides_legacy && i == 0) legacy_ = key != kStateFormatKey;
      return MainEntry(leaf.pgno, key, value);
    });
  }

  // The value of node `i` of leaf `pgno`, whose key is `key`, in the page
  // or in an overflow run (recorded as reached).
  Status Value(uint64_t pgno, size_t i, const char* node, std::string_view key, Chunk* chunk,
               std::string_view* value) const {
    const size_t at = static_cast<size_t>(node - PageAt(pgno)), ksize = key.size();
    const uint16_t flags = Load<uint16_t>(node + 4);
    const size_t dsize = Load<uint16_t>(node) | size_t{Load<uint16_t>(node + 2)} << 16;
    if (flags == kBigData) {
      if (at + kNodeHeader + ksize + 8 > psize_) return Fail(pgno, "node " + std::to_string(i) + " outside the page");
      const uint64_t run = Load<uint64_t>(node + kNodeHeader + ksize);
      if (run < 2 || run > meta_.last_page || run >= file_pages_) return Fail(run, "overflow run outside the file");
      const char* first = PageAt(run);
      const uint32_t count = Load<uint32_t>(first + 12);
      if (Load<uint64_t>(first) != run || (Load<uint16_t>(first + 10) & kPageKinds) != kOverflow || count == 0) {
        return Fail(run,
                    "not the overflow run node " + std::to_string(i) + " of page " + std::to_string(pgno) + " names");
      }
      if (kPageHeader + dsize > count * psize_) return Fail(run, "overflow run shorter than its value");
      SPOOL_RETURN_IF_ERROR(InRange(run, count, true, "overflow run"));
      chunk->runs.push_back(Span{run, count, "overflow run"});
      chunk->pages += count;
      *value = std::string_view(first + kPageHeader, dsize);
    } else if (flags == 0) {
      if (at + kNodeHeader + ksize + dsize > psize_)
        return Fail(pgno, "value of node " + std::to_string(i) + " outside the page");
      *value = std::string_view(node + kNodeHeader + ksize, dsize);
    } else {
      return Fail(pgno, "node " + std::to_string(i) + " has flags " + std::to_string(flags));
    }
    return Status::OK();
  }

  // A free-page list: a u64 count, then that many page numbers, each
  // recorded as reached.
  Status FreeList(uint64_t pgno, std::string_view value, Chunk* chunk) const {
    if (value.size() < 8 || value.size() % 8 != 0 || Load<uint64_t>(value.data()) != value.size() / 8 - 1) {
      return Fail(pgno, "free-page list of " + std::to_string(value.size()) + " bytes");
    }
    for (size_t at = 8; at < value.size(); at += 8) {
      const uint64_t page = Load<uint64_t>(value.data() + at);
      SPOOL_RETURN_IF_ERROR(InRange(page, 1, false, "free page"));
      chunk->runs.push_back(Span{page, 1, "free page"});
    }
    return Status::OK();
  }

  // Every entry of a sealed state (after its format, the first) is sealed.
  Status MainEntry(uint64_t pgno, std::string_view key, std::string_view stored) const {
    if (legacy_) return Status::OK();
    std::string_view value;
    if (!Unseal(key, stored, &value)) return Fail(pgno, DescribeStateKey(key) + " is damaged (checksum mismatch)");
    return Status::OK();
  }

  const std::string_view image_;
  const uint64_t psize_;
  const Meta meta_;
  const uint64_t file_pages_;
  const size_t threads_;
  std::vector<bool> reached_;
  uint64_t pages_ = 0, entries_ = 0;
  bool legacy_ = false;  // written by the first leaf's check, before the others start
};

// Meta page `n`'s fields, or the damage that makes LMDB refuse or misread it.
Status ReadMeta(std::string_view image, uint64_t offset, uint64_t n, Meta* meta) {
  const std::string where = "meta page " + std::to_string(n) + ": ";
  if (image.size() < offset + kMetaBytes) return Status::Corruption(where + "beyond the file's end");
  const char* page = image.data() + offset;
  if ((Load<uint16_t>(page + 10) & kMeta) == 0) return Status::Corruption(where + "not marked a meta page");
  *meta = LoadMeta(page);
  if (meta->magic != kLmdbMagic) return Status::Corruption(where + "bad magic");
  if (meta->version != kDataVersion)
    return Status::Corruption(where + "format version " + std::to_string(meta->version));
  if (!ValidPageSize(meta->free.pad)) return Status::Corruption(where + "page size " + std::to_string(meta->free.pad));
  if (meta->main.flags != 0)
    return Status::Corruption(where + "main database flags " + std::to_string(meta->main.flags));
  if ((meta->free.flags & kIntegerKey) == 0) return Status::Corruption(where + "free-page database flags");
  // The file may end before the last pages when the free lists hold them,
  // never far before.
  if (meta->last_page < 1 || meta->last_page / 2 > image.size() / meta->free.pad + 4096) {
    return Status::Corruption(where + "last page " + std::to_string(meta->last_page));
  }
  return Status::OK();
}

}  // namespace

Status CheckStateImage(std::string_view image, FileCheck* check, unsigned threads) {
  *check = FileCheck{};
  check->bytes = image.size();
  if (image.empty()) return Status::OK();
  // LMDB reads meta 1 at meta 0's page size.
  Meta metas[2];
  SPOOL_RETURN_IF_ERROR(ReadMeta(image, 0, 0, &metas[0]));
  const uint64_t psize = metas[0].free.pad;
  SPOOL_RETURN_IF_ERROR(ReadMeta(image, psize, 1, &metas[1]));
  if (metas[1].free.pad != psize) return Status::Corruption("meta page 1: page size differs from meta page 0's");
  // Transaction N writes meta page N % 2, so the pages hold two consecutive
  // transactions (or, in a new file, both 0); LMDB's writer relies on it.
  const uint64_t t0 = metas[0].txnid, t1 = metas[1].txnid;
  if (!(t0 == 0 && t1 == 0) && (t0 % 2 != 0 || t1 % 2 != 1 || (t0 > t1 ? t0 - t1 : t1 - t0) != 1)) {
    return Status::Corruption("meta pages: transactions " + std::to_string(t0) + " and " + std::to_string(t1) +
                              " are not two consecutive ones");
  }
  const Meta& newest = metas[metas[0].txnid < metas[1].txnid ? 1 : 0];
  return Walker(image, psize, newest, ThreadsFor(image.size(), threads)).Run(check);
}

namespace {

// `fn(fd, size)` on the file at `path`, opened for reading.
template <typename Fn>
Status WithOpenFile(const std::string& path, const Fn& fn) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  Status s;
  if (::fstat(fd, &st) != 0) {
    s = Status::IOError("cannot stat " + path + ": " + std::strerror(errno));
  } else {
    s = fn(fd, static_cast<size_t>(st.st_size));
  }
  ::close(fd);
  return s;
}

// `fn(bytes, fd)` on the file at `path`, its bytes through a read-only map.
// Populated at once unless `populate` is false: the walk touches every
// page, and one call maps them all (and reads a file not in the page cache
// ahead, in order) instead of a fault per page in the walk's order.
// Unpopulated, nothing is read until `fn` reads it.
template <typename Fn>
Status WithMappedFile(const std::string& path, bool populate, const Fn& fn) {
  return WithOpenFile(path, [&](int fd, size_t size) {
    const int flags = MAP_PRIVATE | (populate ? MAP_POPULATE : 0);
    void* map = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
    if (map == MAP_FAILED) return Status::IOError("cannot map " + path + ": " + std::strerror(errno));
    Status s = fn(std::string_view(static_cast<const char*>(map), size), fd);
    if (map != nullptr) ::munmap(map, size);
    return s.WithContext(path);
  });
}

// The holes of the file at `path` (SEEK_HOLE/SEEK_DATA), as [begin, end)
// byte ranges in order: pages the file system keeps no block for, which
// read as zeros without reading the disk. None where that cannot be told.
std::vector<std::pair<uint64_t, uint64_t>> Holes(const std::string& path) {
  std::vector<std::pair<uint64_t, uint64_t>> holes;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return holes;
  struct stat st {};
  if (::fstat(fd, &st) == 0) {
    const auto size = static_cast<off_t>(st.st_size);
    for (off_t at = 0; at < size;) {
      const off_t hole = ::lseek(fd, at, SEEK_HOLE);
      if (hole < 0 || hole >= size) break;
      off_t data = ::lseek(fd, hole, SEEK_DATA);
      if (data < 0) data = size;  // ENXIO: a hole to the end
      holes.emplace_back(static_cast<uint64_t>(hole), static_cast<uint64_t>(data));
      at = data;
    }
  }
  ::close(fd);
  return holes;
}

// Whether every page of `bytes`, mapped from `image` (the whole file), is
// in the page cache or in one of the file's `holes`.
bool Resident(std::string_view image, std::string_view bytes, const std::vector<std::pair<uint64_t, uint64_t>>& holes) {
  if (bytes.empty()) return true;
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes.size() + page - 1) / page);
  if (::mincore(const_cast<char*>(bytes.data()), bytes.size(), in.data()) != 0) return false;
  const auto base = static_cast<uint64_t>(bytes.data() - image.data());
  for (size_t i = 0; i < in.size(); ++i) {
    if ((in[i] & 1) != 0) continue;
    const uint64_t at = base + i * page;
    auto it = std::upper_bound(holes.begin(), holes.end(), std::make_pair(at, ~uint64_t{0}));
    if (it == holes.begin() || std::prev(it)->second < std::min<uint64_t>(at + page, image.size())) return false;
  }
  return true;
}

std::atomic<uint64_t> chunks_hashed{0};

// A chunk's sum: its XXH3-128 (halves `high`, `low`) in canonical form.
std::array<unsigned char, 16> ChunkSum(uint64_t high, uint64_t low) {
  chunks_hashed.fetch_add(1, std::memory_order_relaxed);
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH128_hash_t{low, high});
  std::array<unsigned char, 16> out;
  std::memcpy(out.data(), canonical.digest, out.size());
  return out;
}

// The sum of a chunk of bytes in memory (a file's are mapped whole and
// populated by the walk, the one caller with a file).
std::array<unsigned char, 16> HashChunk(std::string_view bytes) {
#if defined(__x86_64__)
  // The library's XXH128_hash_t, not the inlined one's (XXH_INLINE_ALL).
  const auto h = XXH3_128bits_dispatch(bytes.data(), bytes.size());
#else
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
#endif
  return ChunkSum(h.high64, h.low64);
}

std::string_view Chunk(std::string_view image, size_t k) {
  return image.substr(k * kDigestChunkBytes, kDigestChunkBytes);
}

// XXH3-128 of chunk `k` of the file open at `fd` (`size` bytes), in
// canonical form, read through a small buffer rather than mapped: where page
// tables are virtualised, mapping a page in costs more than copying it (a
// 10 MB state on this project's VM: 4-5 ms mapped, about 2 ms read). The
// same hash as HashChunk's of the chunk's bytes. False when the file ends
// before the chunk does or cannot be read.
bool HashFileChunk(int fd, size_t size, size_t k, std::array<unsigned char, 16>* out) {
  StreamingXxh3 state;
  if (!state.ok()) return false;
  std::array<char, size_t{64} << 10> buffer;
  const size_t end = std::min(size, (k + 1) * kDigestChunkBytes);
  for (size_t at = k * kDigestChunkBytes; at < end;) {
    const ssize_t got = ::pread(fd, buffer.data(), std::min(buffer.size(), end - at), static_cast<off_t>(at));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    state.Update(buffer.data(), static_cast<size_t>(got));
    at += static_cast<size_t>(got);
  }
  const auto [high, low] = state.Digest();
  *out = ChunkSum(high, low);
  return true;
}

// Hashes the chunks `which` of the file open at `fd` into `digest->sums`.
Status HashFileChunks(int fd, const std::vector<size_t>& which, StateDigest* digest) {
  const size_t workers = ThreadsFor(which.size() * kDigestChunkBytes, 0, kThreadedReadDigestBytes);
  std::atomic<bool> failed{false};
  OnThreads(which.size(), workers, kCheckThreadName, [&](size_t i) {
    if (!HashFileChunk(fd, digest->size, which[i], &digest->sums[which[i]])) failed = true;
  });
  return failed ? Status::IOError("cannot read the file whole (changed while it was hashed?)") : Status::OK();
}

}  // namespace

std::string StateDigest::Line() const {
  const XXH128_hash_t h = XXH3_128bits(sums.data(), sums.size() * sizeof(sums[0]));
  char line[80];
  std::snprintf(line, sizeof line, "xxh3-128/1m %016" PRIx64 "%016" PRIx64 " %" PRIu64, h.high64, h.low64, size);
  return line;
}

StateDigest DigestStateChunks(std::string_view image, unsigned threads) {
  StateDigest digest;
  digest.size = image.size();
  digest.sums.resize((image.size() + kDigestChunkBytes - 1) / kDigestChunkBytes);
  OnThreads(digest.sums.size(), ThreadsFor(image.size(), threads), kCheckThreadName,
            [&](size_t k) { digest.sums[k] = HashChunk(Chunk(image, k)); });
  return digest;
}

uint64_t StateChunksHashed() { return chunks_hashed.load(std::memory_order_relaxed); }

Status CheckStateFile(const std::string& path, FileCheck* check, std::string* digest) {
  return WithMappedFile(path, /*populate=*/true, [&](std::string_view image, int) {
    SPOOL_RETURN_IF_ERROR(CheckStateImage(image, check));
    if (digest != nullptr) *digest = DigestStateImage(image);
    return Status::OK();
  });
}

Status DigestStateFile(const std::string& path, StateDigest* digest) {
  return WithOpenFile(path, [&](int fd, size_t size) {
    StateDigest read;
    read.size = size;
    read.sums.resize((size + kDigestChunkBytes - 1) / kDigestChunkBytes);
    std::vector<size_t> all(read.sums.size());
    std::iota(all.begin(), all.end(), size_t{0});
    SPOOL_RETURN_IF_ERROR(HashFileChunks(fd, all, &read).WithContext(path));
    *digest = std::move(read);
    return Status::OK();
  });
}

Status DigestResidentStateFile(const std::string& path, std::string* digest) {
  // With no chunk kept, every chunk is hashed again.
  return RedigestResidentStateFile(
      path, StateDigest(), [](size_t) { return false; }, digest);
}

Status RedigestResidentStateFile(const std::string& path, const StateDigest& before,
                                 const std::function<bool(size_t chunk)>& unchanged, std::string* line) {
  line->clear();
  const auto holes = Holes(path);
  // Mapped only to ask which pages are in memory (mincore): not populated.
  return WithMappedFile(path, /*populate=*/false, [&](std::string_view image, int fd) {
    StateDigest after;
    after.size = image.size();
    after.sums.resize((image.size() + kDigestChunkBytes - 1) / kDigestChunkBytes);
    // Where the size changed, the chunk that ended the file, and any after.
    const size_t kept_end =
        after.size == before.size ? before.sums.size() : std::min(after.size, before.size) / kDigestChunkBytes;
    std::vector<size_t> again;
    for (size_t k = 0; k < after.sums.size(); ++k) {
      if (k < kept_end && unchanged(k)) {
        after.sums[k] = before.sums[k];
      } else if (Resident(image, Chunk(image, k), holes)) {
        again.push_back(k);
      } else {
        return Status::OK();
      }
    }
    SPOOL_RETURN_IF_ERROR(HashFileChunks(fd, again, &after));
    *line = after.Line();
    return Status::OK();
  });
}

}  // namespace spool
