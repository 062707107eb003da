// File-system helpers: fresh directories, their size on disk, and the
// bytes this process has written to storage.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spool::bench {

// Creates `root` for a run, empty. A `root` that exists must be a directory
// an earlier run created (it holds the marker file); anything else is
// refused with BenchError, so a mistyped --dir never wipes a user's files.
void PrepareRunDir(const std::string& root);
// Removes `dir` if present, then creates it (and its parents) empty.
void FreshDir(const std::string& dir);
void RemoveDir(const std::string& dir);

// Bytes allocated on disk (st_blocks) by every file under `dir`: sparse
// files and preallocated-but-unused space count as the file system counts.
// With a `suffix`, only files whose names end with it.
uint64_t DiskBytes(const std::string& dir, std::string_view suffix = {});
// DiskBytes of each entry directly under `dir` (a file, or a directory's
// files), largest first, as "name 12.3 MB, …": where an engine's disk goes.
std::string DiskBreakdown(const std::string& dir);
// Bytes of data (st_size) in the files under `dir` whose names end with
// `suffix`: what a reader has to go through, preallocation left out.
uint64_t FileBytes(const std::string& dir, std::string_view suffix);
// Flushes every dirty page on the machine, so that one engine's write-back
// is not charged to the next measurement.
void SyncAll();

}  // namespace spool::bench
