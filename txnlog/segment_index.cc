#include "segment_index.h"

namespace spool {
namespace {
constexpr uint64_t kIndexMagic = 0x5844494c4f4f5053ull;  // "SPOOLIDX"
constexpr uint64_t kIndexHeaderBytes = 48;
constexpr uint64_t kIndexEntryBytes = 24;
}  // namespace

std::string IndexFileName(uint64_t segment_number) {
  std::string name = logfmt::SegmentFileName(segment_number);
  return name.substr(0, name.size() - logfmt::kSegmentSuffix.size()) + std::string(kIndexSuffix);
}

std::string EncodeIndexFile(const IndexIdentity& identity, const std::vector<IndexEntry>& entries) {
  std::string out;
  out.reserve(kIndexHeaderBytes + entries.size() * kIndexEntryBytes + 8);
  logfmt::PutFixed64(&out, kIndexMagic);
  logfmt::PutFixed32(&out, logfmt::kFormatVersion);
  logfmt::PutFixed32(&out, static_cast<uint32_t>(entries.size()));
  for (uint64_t field : {identity.store_id, identity.segment_number, identity.first_version, identity.data_end}) {
    logfmt::PutFixed64(&out, field);
  }
  for (const IndexEntry& e : entries) {
    logfmt::PutFixed64(&out, e.version);
    logfmt::PutFixed64(&out, e.timestamp_us);
    logfmt::PutFixed64(&out, e.offset);
  }
  logfmt::PutFixed64(&out, logfmt::Hash64(out, identity.store_id));
  return out;
}

Status DecodeIndexFile(std::string_view bytes, const IndexIdentity& identity, std::vector<IndexEntry>* entries) {
  if (bytes.size() < kIndexHeaderBytes + 8) return Status::Corruption("index file is truncated");
  const char* p = bytes.data();
  const uint64_t count = logfmt::LoadFixed32(p + 12);
  if (bytes.size() != kIndexHeaderBytes + count * kIndexEntryBytes + 8) return Status::Corruption("index file size");
  if (logfmt::LoadFixed64(p) != kIndexMagic || logfmt::LoadFixed32(p + 8) != logfmt::kFormatVersion) {
    return Status::Corruption("not an index file");
  }
  if (logfmt::Hash64(bytes.substr(0, bytes.size() - 8), identity.store_id) !=
      logfmt::LoadFixed64(p + bytes.size() - 8)) {
    return Status::Corruption("index file checksum mismatch");
  }
  if (logfmt::LoadFixed64(p + 16) != identity.store_id || logfmt::LoadFixed64(p + 24) != identity.segment_number ||
      logfmt::LoadFixed64(p + 32) != identity.first_version || logfmt::LoadFixed64(p + 40) != identity.data_end) {
    return Status::Corruption("index file is for another segment or an older end");
  }
  entries->clear();
  for (uint64_t i = 0; i < count; ++i) {
    const char* e = p + kIndexHeaderBytes + i * kIndexEntryBytes;
    IndexEntry entry{logfmt::LoadFixed64(e), logfmt::LoadFixed64(e + 8), logfmt::LoadFixed64(e + 16)};
    const bool first_ok =
        !entries->empty() || (entry.version == identity.first_version && entry.offset == logfmt::kSegmentHeaderBytes);
    const bool ordered =
        entries->empty() || (entry.version > entries->back().version && entry.offset > entries->back().offset &&
                             entry.timestamp_us > entries->back().timestamp_us);
    if (!first_ok || !ordered || entry.offset >= identity.data_end) {
      return Status::Corruption("index file entries are out of order");
    }
    entries->push_back(entry);
  }
  return Status::OK();
}

}  // namespace spool
