#include "state_check.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
// XXH3 compiled here: every value read from LMDB is checked with it, and
// inlined it costs a fraction of the library's call and dispatch.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <vector>

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

Status DamagedEntry(std::string_view key) {
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

class Walker {
 public:
  Walker(std::string_view image, uint64_t psize, const Meta& meta)
      : image_(image),
        psize_(psize),
        meta_(meta),
        file_pages_(image.size() / psize),
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

  Status Fail(uint64_t pgno, const std::string& what) const {
    return Status::Corruption("page " + std::to_string(pgno) + ": " + what);
  }

  // Marks `count` pages from `pgno` reached; each page once.
  Status Reach(uint64_t pgno, uint64_t count, bool readable, const char* what) {
    if (pgno < 2 || pgno > meta_.last_page || count > meta_.last_page + 1 - pgno) {
      return Fail(pgno, std::string(what) + " outside the file's pages 2.." + std::to_string(meta_.last_page));
    }
    if (readable && pgno + count > file_pages_) return Fail(pgno, std::string(what) + " beyond the file's end");
    for (uint64_t p = pgno; p < pgno + count; ++p) {
      if (reached_[p]) return Fail(p, std::string(what) + " reached twice");
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
    tree_entries_ = 0;
    SPOOL_RETURN_IF_ERROR(Page(db.root, db.depth, integer, Bounds{}));
    if (tree_entries_ != db.entries) {
      return Status::Corruption(std::string(name) + " tree: " + std::to_string(tree_entries_) +
                                " entries, its record says " + std::to_string(db.entries));
    }
    return Status::OK();
  }

  // Checks page `pgno`, `levels` above the leaves (1: a leaf), whose keys
  // lie within `bounds`, and the pages under it.
  Status Page(uint64_t pgno, size_t levels, bool integer, const Bounds& bounds) {
    SPOOL_RETURN_IF_ERROR(Reach(pgno, 1, true, levels == 1 ? "leaf" : "branch"));
    ++pages_;
    const char* page = PageAt(pgno);
    if (Load<uint64_t>(page) != pgno) return Fail(pgno, "header names page " + std::to_string(Load<uint64_t>(page)));
    const uint16_t kind = Load<uint16_t>(page + 10) & kPageKinds;
    if (kind != (levels == 1 ? kLeaf : kBranch)) return Fail(pgno, "kind " + std::to_string(kind) + " at this depth");
    const uint16_t lower = Load<uint16_t>(page + 12), upper = Load<uint16_t>(page + 14);
    if (lower < kPageHeader || lower > upper || upper > psize_ || (lower - kPageHeader) % 2 != 0) {
      return Fail(pgno, "free space [" + std::to_string(lower) + ", " + std::to_string(upper) + ")");
    }
    const size_t nodes = (lower - kPageHeader) / 2;
    if (nodes == 0) return Fail(pgno, "no nodes");
    // A branch's separator keys and children, walked once the page is
    // checked (a leaf, most pages, keeps nothing).
    std::vector<std::pair<std::string_view, uint64_t>> children;
    if (levels > 1) children.reserve(nodes);
    std::string_view previous;
    for (size_t i = 0; i < nodes; ++i) {
      const size_t at = Load<uint16_t>(page + kPageHeader + 2 * i);
      if (at < upper || at + kNodeHeader > psize_) return Fail(pgno, "node " + std::to_string(i) + " outside the page");
      const char* node = page + at;
      const uint16_t lo = Load<uint16_t>(node), hi = Load<uint16_t>(node + 2), flags = Load<uint16_t>(node + 4);
      const size_t ksize = Load<uint16_t>(node + 6);
      if (at + kNodeHeader + ksize > psize_)
        return Fail(pgno, "key of node " + std::to_string(i) + " outside the page");
      const std::string_view key(node + kNodeHeader, ksize);
      // Keys within bounds and ascending; a branch's first key is not one
      // (LMDB ignores it).
      const size_t first = levels > 1 ? 1 : 0;
      if (i >= first) {
        if (integer && ksize != 8) return Fail(pgno, "free-page key of " + std::to_string(ksize) + " bytes");
        const bool ordered = (!bounds.low || CompareKeys(integer, *bounds.low, key) <= 0) &&
                             (!bounds.high || CompareKeys(integer, key, *bounds.high) < 0) &&
                             (i == first || CompareKeys(integer, previous, key) < 0);
        if (!ordered) return Fail(pgno, "key of node " + std::to_string(i) + " out of order");
        previous = key;
      }
      if (levels > 1) {
        children.emplace_back(key, lo | uint64_t{hi} << 16 | uint64_t{flags} << 32);
        continue;
      }
      SPOOL_RETURN_IF_ERROR(Entry(pgno, i, key, at, flags, lo | size_t{hi} << 16, integer));
    }
    for (size_t i = 0; i < children.size(); ++i) {
      const Bounds child{i == 0 ? bounds.low : std::optional(children[i].first),
                         i + 1 < children.size() ? std::optional(children[i + 1].first) : bounds.high};
      SPOOL_RETURN_IF_ERROR(Page(children[i].second, levels - 1, integer, child));
    }
    return Status::OK();
  }

  // Checks the value of leaf node `i`, whose key is `key`, at byte `at` of
  // page `pgno`.
  Status Entry(uint64_t pgno, size_t i, std::string_view key, size_t at, uint16_t flags, size_t dsize, bool integer) {
    const char* node = key.data() - kNodeHeader;
    const size_t ksize = key.size();
    std::string_view value;
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
      SPOOL_RETURN_IF_ERROR(Reach(run, count, true, "overflow run"));
      pages_ += count;
      value = std::string_view(first + kPageHeader, dsize);
    } else if (flags == 0) {
      if (at + kNodeHeader + ksize + dsize > psize_)
        return Fail(pgno, "value of node " + std::to_string(i) + " outside the page");
      value = std::string_view(node + kNodeHeader + ksize, dsize);
    } else {
      return Fail(pgno, "node " + std::to_string(i) + " has flags " + std::to_string(flags));
    }
    ++tree_entries_;
    if (integer) return FreeList(pgno, value);
    return MainEntry(pgno, key, value);
  }

  // A free-page list: a u64 count, then that many page numbers.
  Status FreeList(uint64_t pgno, std::string_view value) {
    if (value.size() < 8 || value.size() % 8 != 0 || Load<uint64_t>(value.data()) != value.size() / 8 - 1) {
      return Fail(pgno, "free-page list of " + std::to_string(value.size()) + " bytes");
    }
    for (size_t at = 8; at < value.size(); at += 8) {
      SPOOL_RETURN_IF_ERROR(Reach(Load<uint64_t>(value.data() + at), 1, false, "free page"));
    }
    return Status::OK();
  }

  // The first key of a sealed state is its format; every entry after it
  // is sealed.
  Status MainEntry(uint64_t pgno, std::string_view key, std::string_view stored) {
    if (entries_++ == 0) legacy_ = key != kStateFormatKey;
    if (legacy_) return Status::OK();
    std::string_view value;
    if (!Unseal(key, stored, &value)) return Fail(pgno, DescribeStateKey(key) + " is damaged (checksum mismatch)");
    return Status::OK();
  }

  const std::string_view image_;
  const uint64_t psize_;
  const Meta meta_;
  const uint64_t file_pages_;
  std::vector<bool> reached_;
  uint64_t pages_ = 0, entries_ = 0, tree_entries_ = 0;
  bool legacy_ = false;
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

Status CheckStateImage(std::string_view image, FileCheck* check) {
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
  return Walker(image, psize, newest).Run(check);
}

Status CheckStateFile(const std::string& path, FileCheck* check) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::IOError("cannot stat " + path + ": " + std::strerror(err));
  }
  const auto size = static_cast<size_t>(st.st_size);
  // Populated at once: the walk touches every page, and one call maps them
  // all (and reads a file not in the page cache ahead, in order) instead of
  // a fault per page in the walk's order.
  void* map = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status::IOError("cannot map " + path + ": " + std::strerror(errno));
  Status s = CheckStateImage(std::string_view(static_cast<const char*>(map), size), check);
  if (map != nullptr) ::munmap(map, size);
  return s.WithContext(path);
}

}  // namespace spool
