// A small log built deterministically in a MemEnv: the base that the fuzz
// targets and the seed-corpus generator start from. Internal to fuzz/.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "spool/testing/mem_env.h"

namespace spool::fuzz {

inline constexpr char kFixtureDir[] = "/log";
inline constexpr uint64_t kFixtureStoreId = 0xf022f022ull;

// Writes a log of several segments (64 KiB each), with small, large
// (compressed) and empty-bodied commits, one truncation, and more commits
// after it. `*bodies` receives the live body of every version.
void BuildFixtureLog(MemEnv* env, std::map<uint64_t, std::string>* bodies);

// The fixture log's files, read back once: those of its directory (but
// LOCK), by name; those of its archive (the truncation's cut), by path; and
// the live body of every version.
struct FixtureFiles {
  std::map<std::string, std::string> files;
  std::map<std::string, std::string> archive;
  std::map<uint64_t, std::string> bodies;
};
const FixtureFiles& GetFixtureFiles();

// A directory's files as bytes (log_directory_fuzzer's input): for each
// file, a 1-byte name length, the name, a 4-byte little-endian size and the
// bytes. Parsing is lenient (it stops at the first malformed entry; names
// with '/' are skipped), as a fuzzer's input needs.
std::string SerializeDirectory(const std::map<std::string, std::string>& files);
std::map<std::string, std::string> ParseDirectory(const uint8_t* data, size_t size);

// --- The fixed bad-segment corpus (fuzz/corpus/bad_segments/, EXPECTED)

// What a strict open of a damaged log directory gives, as one line:
// "ok records=N last=E/V digest=H" (H: XXH3 of every version and body read)
// or "corruption" (the open or a read failed with Corruption) or
// "error CODE" for any other failure.
std::string RecoveryOutcome(const std::map<std::string, std::string>& files);
// The "ok …" line for a log that reads back as exactly `entries` (version ->
// (epoch, body)).
std::string OkOutcome(const std::map<uint64_t, std::pair<uint64_t, std::string>>& entries);

// Writes `files` as the log's directory (and the fixture's archive whole)
// into a fresh MemEnv, then opens the log strictly and in salvage mode and
// reads it. Opening and reading may fail, but a commit returned that is not
// the one written at its version (corruption returned as data) aborts.
void RecoverAndCheck(const std::map<std::string, std::string>& files);

}  // namespace spool::fuzz
