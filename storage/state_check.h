// What protects the state store's LMDB file from damage at rest. Internal
// to storage.
//
// LMDB keeps no checksums, and it follows page numbers, offsets and sizes
// read from its file without checking them: one flipped bit can turn a
// row's value into another value, or send a read outside the map. So:
//
//  - Every value Spool stores carries a checksum of its key and value
//    (SealedSize/Seal on the way in, Unseal on the way out): a point read
//    that meets damaged bytes fails with Corruption naming the key, instead
//    of returning them. (Scans drop the seal unchecked and rely on the
//    check below: docs/storage_format.md says why.)
//  - Before LMDB opens a file, CheckStateFile walks it as LMDB would read
//    it, but checking everything: both meta pages, every page's header and
//    node bounds, the order of keys against their branch separators,
//    overflow runs, the free-page lists, that every page is reached exactly
//    once (LMDB's own invariant), and every entry's checksum. What it
//    accepts, LMDB can read without leaving the file; what it refuses is
//    reported with the page and what is wrong.
//
// The first key of a sealed state is kStateFormatKey, which sorts before
// every other key; a state without it was written before values were
// sealed (FileCheck::legacy).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

inline constexpr std::string_view kStateFormatKey = "#";
inline constexpr std::string_view kStateFormatValue = "sealed 1";
// Every other key sorts at or after this one: views start here.
inline constexpr std::string_view kStateKeysBegin = "$";
inline constexpr size_t kEntryChecksumBytes = 4;

inline size_t SealedSize(std::string_view value) { return value.size() + kEntryChecksumBytes; }
// Writes `value` and its checksum (with `key`'s) to `out`, SealedSize bytes.
void Seal(std::string_view key, std::string_view value, char* out);
// The value in `stored` (sealed under `key`); false when the checksum
// does not match.
bool Unseal(std::string_view key, std::string_view stored, std::string_view* value);
// Corruption naming the key `Unseal` refused (DescribeStateKey); counted.
Status DamagedEntry(std::string_view key);
// How many DamagedEntry errors this process has met: damage seen while a
// state was open, which its close then does not vouch for (a DIGEST).
uint64_t DamagedEntriesSeen();
// A state key in words: "row 'alice' of table #3", "the applied position".
std::string DescribeStateKey(std::string_view key);

struct FileCheck {
  uint64_t pages = 0;    // reached, of the newest snapshot
  uint64_t entries = 0;  // key-value pairs, every one verified
  uint64_t bytes = 0;    // the file's size
  bool legacy = false;   // entries not sealed: structure checked only
};

// Checks `image`, the bytes of an LMDB data file (empty: a file not yet
// written, which is fine), its leaves on up to `threads` threads (0: the
// machine's cores, up to 4, for a file of 4 MiB or more; else one). The
// verdict does not depend on `threads`. Errors: Corruption("page N: ...").
Status CheckStateImage(std::string_view image, FileCheck* check, unsigned threads = 0);
// CheckStateImage of the file at `path`, read through a read-only map;
// with `digest`, also the file's DigestStateFile when it passes. Errors:
// IOError, Corruption naming the file.
Status CheckStateFile(const std::string& path, FileCheck* check, std::string* digest = nullptr);
// The digest hashes a file in chunks of this size.
inline constexpr size_t kDigestChunkBytes = size_t{1} << 20;

// A file's digest as its chunks' hashes: what a file changed in a few
// places is digested again from (RedigestResidentStateFile).
struct StateDigest {
  uint64_t size = 0;                                // the file's bytes
  std::vector<std::array<unsigned char, 16>> sums;  // each chunk's XXH3-128, canonical
  // The digest in a line: "xxh3-128/1m", the XXH3-128 (32 hex digits) of
  // the chunks' hashes, and the file's size.
  std::string Line() const;
};

// `image`'s digest, the chunks hashed on up to `threads` threads (0: as
// for CheckStateImage). The digest does not depend on `threads`.
StateDigest DigestStateChunks(std::string_view image, unsigned threads = 0);
inline std::string DigestStateImage(std::string_view image, unsigned threads = 0) {
  return DigestStateChunks(image, threads).Line();
}
// DigestStateImage of the file at `path`. A state copy records it when it
// is written and checked, and a clean close records it for the live state
// (state_store.h), so that adopting or opening one needs only to find the
// same bytes again, a fraction of the check's time (a different digest: the
// check decides). Errors: IOError.
Status DigestStateFile(const std::string& path, StateDigest* digest);
// DigestStateFile of a file whose every page is in the page cache or in a
// hole (which reads as zeros without the disk), read from there; `digest`
// left empty, and no page read from the disk, when any is not. Errors:
// IOError.
Status DigestResidentStateFile(const std::string& path, std::string* digest);
// The digest line of the file at `path`, which had the digest `before`
// when the chunks for which `unchanged(k)` holds were last written: those
// keep their hashes, and every other chunk (with any past `before`'s end
// or where the size changed) is hashed again, from the page cache or a
// hole — `line` left empty, and no page read from the disk, when any of
// them is not all there. A chunk said unchanged that changed gives a digest the file does
// not match, never one of bytes not hashed here or in `before`. Errors:
// IOError.
Status RedigestResidentStateFile(const std::string& path, const StateDigest& before,
                                 const std::function<bool(size_t chunk)>& unchanged, std::string* line);
// How many chunks the digests of this process hashed: what a test counts
// to tell a digest taken again in part from one taken whole.
uint64_t StateChunksHashed();

}  // namespace spool
