#include "snapshot_file.h"

#include <xxhash.h>
#include <zstd.h>

#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "kill_point.h"
#include "varint.h"

namespace spool {
namespace {

constexpr std::string_view kSnapshotMagic = "SPOOLSNP";
constexpr std::string_view kTrailerMagic = "SPOOLEND";
constexpr uint32_t kFormat = 1;
constexpr size_t kHeaderBytes = 64;
constexpr size_t kBlockHeaderBytes = 24;
constexpr size_t kTrailerBytes = 40;
constexpr size_t kBlockTargetBytes = 256 << 10;
// A block holds at most this much raw data (a row or key can be large, but
// not larger than a log record).
constexpr uint32_t kMaxBlockRawBytes = 256u << 20;
constexpr uint32_t kFlagZstd = 1;
constexpr int kZstdLevel = 1;

void Put32(std::string* out, uint32_t v) { out->append(reinterpret_cast<const char*>(&v), 4); }
void Put64(std::string* out, uint64_t v) { out->append(reinterpret_cast<const char*>(&v), 8); }
uint32_t Get32(std::string_view in, size_t at) {
  uint32_t v;
  std::memcpy(&v, in.data() + at, 4);
  return v;
}
uint64_t Get64(std::string_view in, size_t at) {
  uint64_t v;
  std::memcpy(&v, in.data() + at, 8);
  return v;
}

std::string EncodeHeader(const SnapshotHeader& h) {
  std::string out(kSnapshotMagic);
  Put32(&out, kFormat);
  Put32(&out, kHeaderBytes);
  for (uint64_t v : {h.store_id, h.epoch, h.version, h.timestamp_us, uint64_t{0}}) Put64(&out, v);
  Put64(&out, XXH3_64bits(out.data(), out.size()));
  return out;
}

// Where ParseFrom reads bytes: a file or memory.
using ReadAt = std::function<Status(uint64_t offset, size_t n, std::string* out)>;

Status ParseFrom(const ReadAt& read, uint64_t size, const std::string& name, uint64_t expected_store_id,
                 SnapshotHeader* header, const std::function<bool(std::string_view, std::string_view)>& visit) {
  auto bad = [&](const std::string& what) { return Status::Corruption("snapshot " + name + ": " + what); };
  if (size < kHeaderBytes + kTrailerBytes) return bad("too short to be a snapshot");
  std::string head;
  SPOOL_RETURN_IF_ERROR(read(0, kHeaderBytes, &head));
  if (head.size() != kHeaderBytes || head.substr(0, 8) != kSnapshotMagic) return bad("bad magic");
  if (Get64(head, 56) != XXH3_64bits(head.data(), 56)) return bad("header checksum mismatch");
  if (Get32(head, 8) != kFormat || Get32(head, 12) != kHeaderBytes) return bad("unknown format");
  *header = SnapshotHeader{Get64(head, 16), Get64(head, 24), Get64(head, 32), Get64(head, 40)};
  if (header->store_id != expected_store_id) return bad("belongs to another store");

  std::string trailer;
  SPOOL_RETURN_IF_ERROR(read(size - kTrailerBytes, kTrailerBytes, &trailer));
  if (trailer.size() != kTrailerBytes || trailer.substr(0, 8) != kTrailerMagic) return bad("bad trailer");
  if (Get64(trailer, 32) != XXH3_64bits(trailer.data(), 32)) return bad("trailer checksum mismatch");
  const uint64_t blocks = Get64(trailer, 8), entries = Get64(trailer, 16), data_end = Get64(trailer, 24);
  if (data_end != size - kTrailerBytes) return bad("trailer does not match the file size");

  uint64_t offset = kHeaderBytes, seen_blocks = 0, seen_entries = 0;
  std::string block_header, stored, raw, last_key;
  bool first = true;
  while (offset < data_end) {
    if (data_end - offset < kBlockHeaderBytes) return bad("truncated block header at offset " + std::to_string(offset));
    SPOOL_RETURN_IF_ERROR(read(offset, kBlockHeaderBytes, &block_header));
    const uint32_t raw_bytes = Get32(block_header, 0), stored_bytes = Get32(block_header, 4);
    const uint32_t flags = Get32(block_header, 8), block_entries = Get32(block_header, 12);
    const uint64_t checksum = Get64(block_header, 16);
    const std::string where = " in the block at offset " + std::to_string(offset);
    if (raw_bytes > kMaxBlockRawBytes || stored_bytes > data_end - offset - kBlockHeaderBytes ||
        (flags & ~kFlagZstd) != 0) {
      return bad("bad block header" + where);
    }
    SPOOL_RETURN_IF_ERROR(read(offset + kBlockHeaderBytes, stored_bytes, &stored));
    if (XXH3_64bits_withSeed(stored.data(), stored.size(), expected_store_id) != checksum) {
      return bad("checksum mismatch" + where);
    }
    std::string_view data = stored;
    if ((flags & kFlagZstd) != 0) {
      // The frame states its size: believe the header's only when they agree,
      // so a damaged header cannot make us allocate what it likes.
      if (ZSTD_getFrameContentSize(stored.data(), stored.size()) != raw_bytes) {
        return bad("block's compressed size does not match its header" + where);
      }
      raw.resize(raw_bytes);
      const size_t n = ZSTD_decompress(raw.data(), raw.size(), stored.data(), stored.size());
      if (ZSTD_isError(n) || n != raw_bytes) return bad("block does not decompress" + where);
      data = raw;
    } else if (stored_bytes != raw_bytes) {
      return bad("bad block size" + where);
    }
    for (uint32_t i = 0; i < block_entries; ++i) {
      uint64_t key_bytes = 0, value_bytes = 0;
      if (!GetVarint(&data, &key_bytes) || key_bytes > data.size()) return bad("bad entry" + where);
      const std::string_view key = data.substr(0, key_bytes);
      data.remove_prefix(key_bytes);
      if (!GetVarint(&data, &value_bytes) || value_bytes > data.size()) return bad("bad entry" + where);
      const std::string_view value = data.substr(0, value_bytes);
      data.remove_prefix(value_bytes);
      if (!first && key <= std::string_view(last_key)) return bad("keys out of order" + where);
      first = false;
      last_key.assign(key);
      ++seen_entries;
      if (!visit(key, value)) return Status::OK();
    }
    if (!data.empty()) return bad("bytes past the last entry" + where);
    offset += kBlockHeaderBytes + stored_bytes;
    ++seen_blocks;
  }
  if (seen_blocks != blocks || seen_entries != entries) return bad("trailer counts do not match the blocks");
  return Status::OK();
}

}  // namespace

std::string SnapshotFileName(uint64_t epoch, uint64_t version) {
  char name[64];
  std::snprintf(name, sizeof(name), "snap-%06" PRIu64 "-%020" PRIu64 ".spsnap", epoch, version);
  return name;
}

bool ParseSnapshotFileName(std::string_view name, uint64_t* epoch, uint64_t* version) {
  if (name.size() != 5 + 6 + 1 + 20 + 7 || name.substr(0, 5) != "snap-" || name[11] != '-' ||
      name.substr(32) != ".spsnap") {
    return false;
  }
  auto digits = [](std::string_view s, uint64_t* out) {
    *out = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      *out = *out * 10 + static_cast<uint64_t>(c - '0');
    }
    return true;
  };
  return digits(name.substr(5, 6), epoch) && digits(name.substr(12, 20), version);
}

SnapshotWriter::SnapshotWriter(Env* env, std::string path, SnapshotHeader header, std::unique_ptr<File> file)
    : env_(env), path_(std::move(path)), header_(header), file_(std::move(file)) {}

SnapshotWriter::~SnapshotWriter() = default;

Status SnapshotWriter::Create(Env* env, const std::string& path, const SnapshotHeader& header,
                              std::unique_ptr<SnapshotWriter>* writer) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path + ".tmp", OpenMode::kTruncate, &file));
  std::unique_ptr<SnapshotWriter> w(new SnapshotWriter(env, path, header, std::move(file)));
  const std::string head = EncodeHeader(header);
  SPOOL_RETURN_IF_ERROR(w->file_->Write(0, head));
  w->offset_ = head.size();
  *writer = std::move(w);
  return Status::OK();
}

Status SnapshotWriter::Add(std::string_view key, std::string_view value) {
  PutVarint(&block_, key.size());
  block_.append(key);
  PutVarint(&block_, value.size());
  block_.append(value);
  ++block_entries_;
  ++entries_;
  if (block_.size() >= kBlockTargetBytes) return FlushBlock();
  return Status::OK();
}

Status SnapshotWriter::FlushBlock() {
  if (block_entries_ == 0) return Status::OK();
  if (block_.size() > kMaxBlockRawBytes) return Status::InvalidArgument("snapshot entry too large");
  std::string stored(ZSTD_compressBound(block_.size()), '\0');
  const size_t n = ZSTD_compress(stored.data(), stored.size(), block_.data(), block_.size(), kZstdLevel);
  uint32_t flags = kFlagZstd;
  if (ZSTD_isError(n) || n >= block_.size()) {
    stored = block_;
    flags = 0;
  } else {
    stored.resize(n);
  }
  std::string out;
  Put32(&out, static_cast<uint32_t>(block_.size()));
  Put32(&out, static_cast<uint32_t>(stored.size()));
  Put32(&out, flags);
  Put32(&out, block_entries_);
  Put64(&out, XXH3_64bits_withSeed(stored.data(), stored.size(), header_.store_id));
  out += stored;
  SPOOL_RETURN_IF_ERROR(file_->Write(offset_, out));
  offset_ += out.size();
  ++blocks_;
  block_.clear();
  block_entries_ = 0;
  return Status::OK();
}

Status SnapshotWriter::Finish(uint64_t* bytes, uint64_t* entries) {
  SPOOL_RETURN_IF_ERROR(FlushBlock());
  std::string trailer(kTrailerMagic);
  for (uint64_t v : {blocks_, entries_, offset_}) Put64(&trailer, v);
  Put64(&trailer, XXH3_64bits(trailer.data(), trailer.size()));
  SPOOL_RETURN_IF_ERROR(file_->Write(offset_, trailer));
  SPOOL_RETURN_IF_ERROR(file_->Sync());
  SPOOL_RETURN_IF_ERROR(file_->Close());
  SPOOL_KILL_POINT("snapshot.synced");
  SPOOL_RETURN_IF_ERROR(env_->RenameFile(path_ + ".tmp", path_));
  SPOOL_KILL_POINT("snapshot.renamed");
  SPOOL_RETURN_IF_ERROR(env_->SyncDir(DirName(path_)));
  SPOOL_KILL_POINT("snapshot.published");
  *bytes = offset_ + trailer.size();
  *entries = entries_;
  return Status::OK();
}

Status ReadSnapshot(Env* env, const std::string& path, uint64_t expected_store_id, SnapshotHeader* header,
                    const std::function<bool(std::string_view, std::string_view)>& visit) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kReadOnly, &file));
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(file->Size(&size));
  ReadAt read = [&](uint64_t offset, size_t n, std::string* out) {
    SPOOL_RETURN_IF_ERROR(file->Read(offset, n, out));
    if (out->size() != n)
      return Status::Corruption("snapshot " + path + ": short read at offset " + std::to_string(offset));
    return Status::OK();
  };
  return ParseFrom(read, size, path, expected_store_id, header, visit);
}

Status ParseSnapshot(std::string_view bytes, uint64_t expected_store_id, SnapshotHeader* header,
                     const std::function<bool(std::string_view, std::string_view)>& visit) {
  ReadAt read = [&](uint64_t offset, size_t n, std::string* out) {
    if (offset > bytes.size() || n > bytes.size() - offset) return Status::Corruption("snapshot: read past the end");
    out->assign(bytes.substr(static_cast<size_t>(offset), n));
    return Status::OK();
  };
  return ParseFrom(read, bytes.size(), "(memory)", expected_store_id, header, visit);
}

}  // namespace spool
