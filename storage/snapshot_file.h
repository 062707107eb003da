// Snapshot files: a consistent copy of the state store at one version,
// written through Env. Internal to storage.
//
//   header  := "SPOOLSNP" u32 format(=1) u32 header_bytes(=64)
//              u64 store_id u64 epoch u64 version u64 timestamp_us
//              u64 reserved u64 xxh3(previous 56 bytes)
//   block*  := u32 raw_bytes u32 stored_bytes u32 flags(1 = zstd) u32 entries
//              u64 xxh3(stored bytes, seed store_id) stored
//   raw     := (varint key_bytes key varint value_bytes value)*   keys ascending
//   trailer := "SPOOLEND" u64 blocks u64 entries u64 data_end
//              u64 xxh3(previous 32 bytes)
// All integers little-endian. A file is published by writing "NAME.tmp",
// syncing it, renaming it to NAME and syncing the directory, so a snapshot
// file either is whole or does not exist under its final name.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "spool/txnlog/env.h"
#include "spool/txnlog/status.h"

namespace spool {

struct SnapshotHeader {
  uint64_t store_id = 0;
  uint64_t epoch = 0;
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
};

// "snap-EEEEEE-VVVVVVVVVVVVVVVVVVVV.spsnap"; Parse returns false for other names.
std::string SnapshotFileName(uint64_t epoch, uint64_t version);
bool ParseSnapshotFileName(std::string_view name, uint64_t* epoch, uint64_t* version);

class SnapshotWriter {
 public:
  // Starts "<path>.tmp". Errors: IOError.
  static Status Create(Env* env, const std::string& path, const SnapshotHeader& header,
                       std::unique_ptr<SnapshotWriter>* writer);
  ~SnapshotWriter();
  // REQUIRES: keys strictly ascending.
  Status Add(std::string_view key, std::string_view value);
  // Writes the trailer, syncs, renames to `path`, syncs the directory.
  Status Finish(uint64_t* bytes, uint64_t* entries);

 private:
  SnapshotWriter(Env* env, std::string path, SnapshotHeader header, std::unique_ptr<File> file);
  Status FlushBlock();

  Env* env_;
  std::string path_;
  SnapshotHeader header_;
  std::unique_ptr<File> file_;
  std::string block_;
  uint32_t block_entries_ = 0;
  uint64_t offset_ = 0;
  uint64_t blocks_ = 0;
  uint64_t entries_ = 0;
  std::string last_key_;
};

// Reads and verifies a snapshot, calling `visit` with every entry in key
// order (stopping early when it returns false). `expected_store_id` seeds the
// block checksums. Errors: Corruption naming the file and what is wrong,
// IOError, NotFound.
Status ReadSnapshot(Env* env, const std::string& path, uint64_t expected_store_id, SnapshotHeader* header,
                    const std::function<bool(std::string_view key, std::string_view value)>& visit);

// The same checks over bytes in memory (the fuzz target's entry point).
Status ParseSnapshot(std::string_view bytes, uint64_t expected_store_id, SnapshotHeader* header,
                     const std::function<bool(std::string_view key, std::string_view value)>& visit);

}  // namespace spool
