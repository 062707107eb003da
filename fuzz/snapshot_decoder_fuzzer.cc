// Fuzz target: the snapshot file reader (storage/snapshot_file.h,
// ParseSnapshot). Input: one control byte, then the bytes of a snapshot
// file. Control bit 0 set: before parsing, the header, block and trailer
// checksums are recomputed over the bytes as they are (walking the block
// headers as far as they fit), so mutations reach the block, entry and
// decompression code behind the checksums; a zstd block's claimed raw size
// is then also cut to at most 1 MiB, since the reader zero-fills a buffer of
// that size (up to 256 MiB) before decompressing, which under ASan takes
// seconds per input. Bits 1-4: when non-zero, a second parse stops after
// that many entries.
// Oracle, beyond "no crash, no hang, no undefined behaviour": the entries
// of a snapshot that parses come out with keys strictly ascending, as many
// as the trailer counts, with the header's fields; a parse stopped early
// sees a prefix of them and succeeds; another store's id is refused.
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "snapshot_file.h"

namespace {

constexpr uint64_t kStoreId = 0x5707e5707eull;  // the seeds' store id
constexpr size_t kHeaderBytes = 64;
constexpr size_t kBlockHeaderBytes = 24;
constexpr size_t kTrailerBytes = 40;
constexpr uint32_t kFuzzMaxRawBytes = 1u << 20;
constexpr uint32_t kReaderMaxRawBytes = 256u << 20;  // snapshot_file.cc's kMaxBlockRawBytes

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "snapshot_decoder_fuzzer: invariant violated: %s\n", what);
    std::abort();
  }
}

uint32_t Get32(const std::string& s, size_t at) {
  uint32_t v;
  std::memcpy(&v, s.data() + at, 4);
  return v;
}
uint64_t Get64(const std::string& s, size_t at) {
  uint64_t v;
  std::memcpy(&v, s.data() + at, 8);
  return v;
}
void Put32(std::string* s, size_t at, uint32_t v) { std::memcpy(s->data() + at, &v, 4); }
void Put64(std::string* s, size_t at, uint64_t v) { std::memcpy(s->data() + at, &v, 8); }

void FixChecksums(std::string* file) {
  if (file->size() < kHeaderBytes + kTrailerBytes) return;
  Put64(file, 56, XXH3_64bits(file->data(), 56));
  const size_t data_end = file->size() - kTrailerBytes;
  size_t offset = kHeaderBytes;
  while (data_end - offset >= kBlockHeaderBytes) {
    const size_t stored = Get32(*file, offset + 4);
    if (stored > data_end - offset - kBlockHeaderBytes) break;
    const uint32_t raw = Get32(*file, offset);
    if ((Get32(*file, offset + 8) & 1) != 0 && raw > kFuzzMaxRawBytes && raw <= kReaderMaxRawBytes) {
      Put32(file, offset, raw % (kFuzzMaxRawBytes + 1));
    }
    Put64(file, offset + 16, XXH3_64bits_withSeed(file->data() + offset + kBlockHeaderBytes, stored, kStoreId));
    offset += kBlockHeaderBytes + stored;
  }
  Put64(file, data_end + 32, XXH3_64bits(file->data() + data_end, 32));
}

struct Seen {
  std::vector<std::string> keys;
  bool ascending = true;
};

spool::Status Parse(std::string_view bytes, uint64_t store_id, size_t stop_after, spool::SnapshotHeader* header,
                    Seen* seen) {
  return spool::ParseSnapshot(bytes, store_id, header, [&](std::string_view key, std::string_view) {
    if (!seen->keys.empty() && !(std::string_view(seen->keys.back()) < key)) seen->ascending = false;
    seen->keys.emplace_back(key);
    return stop_after == 0 || seen->keys.size() < stop_after;
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  std::string file(reinterpret_cast<const char*>(data) + 1, size - 1);
  if ((control & 1) != 0) FixChecksums(&file);
  const size_t stop_after = (control >> 1) & 0xf;

  spool::SnapshotHeader header;
  Seen all;
  const bool ok = Parse(file, kStoreId, 0, &header, &all).ok();
  Check(all.ascending, "keys out of order were passed to visit");
  if (!ok) return 0;
  Check(file.size() >= kHeaderBytes + kTrailerBytes, "a snapshot shorter than header and trailer parsed");
  const size_t trailer = file.size() - kTrailerBytes;
  Check(all.keys.size() == Get64(file, trailer + 16), "the entries visited are not the trailer's count");
  Check(header.store_id == kStoreId && header.epoch == Get64(file, 24) && header.version == Get64(file, 32) &&
            header.timestamp_us == Get64(file, 40),
        "the header returned is not the file's");
  Check(Get32(file, 8) == 1 && Get32(file, 12) == kHeaderBytes, "a snapshot of an unknown format parsed");

  spool::SnapshotHeader other;
  Seen ignored;
  Check(!Parse(file, kStoreId ^ 1, 0, &other, &ignored).ok(), "a snapshot parsed as another store's");

  if (stop_after != 0) {
    Seen some;
    Check(Parse(file, kStoreId, stop_after, &other, &some).ok(), "a parse stopped early failed");
    Check(some.keys.size() == std::min(stop_after, all.keys.size()), "a parse stopped early saw the wrong count");
    for (size_t i = 0; i < some.keys.size(); ++i)
      Check(some.keys[i] == all.keys[i], "a parse stopped early saw other keys");
  }
  return 0;
}
