// Bytes written, for write amplification, two ways:
//
// - syscall bytes: what this process (all its threads, so background flush,
//   compaction and apply threads count) handed to write/pwrite-like system
//   calls — /proc/self/io wchar. Exact for the process, but it does not see
//   page rounding (a 100-byte write that makes the device rewrite a 4-KiB
//   block counts 100) nor writes through a writable mmap.
// - device bytes: sectors written by the block device holding a path —
//   /sys/dev/block/MAJ:MIN/stat — after a sync: partial-page rewrites and
//   the filesystem journal included, but so is anything else writing to
//   that device at the time, so it is only meaningful on a quiet machine.
//
// /proc/self/io write_bytes is not used: on kernels that cache files in
// large folios (ext4 since 6.16 among them) it charges the whole folio each
// time a 4-KiB write dirties it — measured here as 1,745 MiB charged for
// 2,000 4-KiB overwrites + fdatasync that put 15 MiB on the device.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace spool::bench {

struct WriteCounters {
  uint64_t syscall_bytes = 0;
  std::optional<uint64_t> device_bytes;  // nullopt: no block device found for the path
};

// The counters now, the device being the one holding `path`. Throws
// BenchError when /proc/self/io cannot be read.
WriteCounters ReadWriteCounters(const std::string& path);

// later − earlier, per counter (device: nullopt unless both have it).
WriteCounters WrittenBetween(const WriteCounters& earlier, const WriteCounters& later);

}  // namespace spool::bench
