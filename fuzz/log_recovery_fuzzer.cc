// Fuzz target: recovery over a damaged log directory. The input is a
// program of up to 32 damage operations (6 bytes each: op, file, 32-bit
// argument) applied to the segments of a fixed, valid log of several
// segments, one truncation and its archived cut (left whole): truncate a
// file at any byte, flip a bit, remove a file, duplicate a segment under
// another number, swap two files, overwrite bytes with garbage. Then the
// log is opened, strictly and in salvage mode, and read. Oracle: opening
// and reading may fail with an error, but every commit returned must be
// exactly the one written at that version (corruption is detected, never
// returned), and nothing may crash.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "log_fixture.h"
#include "spool/txnlog/log.h"

namespace {

using spool::Env;
using spool::MemEnv;

struct Fixture {
  std::map<std::string, std::string> files;    // name -> bytes; damaged
  std::map<std::string, std::string> archive;  // path -> bytes; kept whole
  std::map<uint64_t, std::string> bodies;
};

// Every file below `dir` (recursively), by path.
void ReadTree(Env* env, const std::string& dir, std::map<std::string, std::string>* files) {
  std::vector<std::string> names;
  if (!env->ListDir(dir, &names).ok()) return;
  for (const std::string& name : names) {
    const std::string path = spool::JoinPath(dir, name);
    std::string bytes;
    if (spool::ReadFileToString(env, path, &bytes).ok()) (*files)[path] = bytes;
    else ReadTree(env, path, files);
  }
}

const Fixture& GetFixture() {
  static const Fixture* fixture = [] {
    auto* f = new Fixture();
    MemEnv env;
    spool::fuzz::BuildFixtureLog(&env, &f->bodies);
    std::vector<std::string> names;
    if (!env.ListDir(spool::fuzz::kFixtureDir, &names).ok()) std::abort();
    for (const std::string& name : names) {
      std::string bytes;
      if (name != "LOCK" && spool::ReadFileToString(&env, spool::JoinPath(spool::fuzz::kFixtureDir, name), &bytes).ok()) {
        f->files[name] = bytes;
      }
    }
    // The truncation's archived cut: it lets recovery tell a lost successor
    // segment from a log that was never truncated.
    ReadTree(&env, spool::JoinPath(spool::fuzz::kFixtureDir, "archive"), &f->archive);
    return f;
  }();
  return *fixture;
}

void Damage(std::map<std::string, std::string>* files, const uint8_t* op) {
  if (files->empty()) return;
  uint32_t arg;
  std::memcpy(&arg, op + 2, 4);
  auto it = files->begin();
  std::advance(it, op[1] % files->size());
  std::string& bytes = it->second;
  switch (op[0] % 6) {
    case 0: bytes.resize(arg % (bytes.size() + 1)); break;
    case 1:
      if (!bytes.empty()) bytes[arg % bytes.size()] ^= static_cast<char>(1u << (arg >> 29));
      break;
    case 2: files->erase(it); break;
    case 3: {
      char name[32];
      std::snprintf(name, sizeof(name), "%012u.seg", 1 + arg % 12);
      (*files)[name] = bytes;
      break;
    }
    case 4: {
      auto other = files->begin();
      std::advance(other, arg % files->size());
      std::swap(bytes, other->second);
      break;
    }
    case 5:
      for (size_t i = 0; i < 16 && !bytes.empty(); ++i) bytes[(arg + i) % bytes.size()] = static_cast<char>(arg >> (i % 4 * 8));
      break;
  }
}

// Opens and reads the damaged log; aborts if a wrong commit is returned.
void OpenAndCheck(MemEnv* env, bool salvage, const std::map<uint64_t, std::string>& bodies) {
  spool::LogOptions options;
  options.env = env;
  options.salvage = salvage;
  options.create_if_missing = false;
  std::unique_ptr<spool::Log> log;
  if (!spool::Log::Open(options, spool::fuzz::kFixtureDir, &log).ok()) return;
  std::unique_ptr<spool::LogIterator> it;
  if (!log->NewIterator(0, &it).ok()) return;
  spool::LogEntry entry;
  while (it->Next(&entry)) {
    auto expected = bodies.find(entry.position.version);
    if (expected == bodies.end() || expected->second != entry.body) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kOpBytes = 6;
  constexpr size_t kMaxOps = 32;
  const Fixture& fixture = GetFixture();
  std::map<std::string, std::string> files = fixture.files;
  for (size_t i = 0; i + kOpBytes <= size && i / kOpBytes < kMaxOps; i += kOpBytes) Damage(&files, data + i);
  for (bool salvage : {false, true}) {
    MemEnv env;
    if (!env.CreateDir(spool::fuzz::kFixtureDir).ok()) std::abort();
    auto write = [&](const std::string& path, const std::string& bytes) {
      std::unique_ptr<spool::File> file;
      if (!env.CreateDir(spool::DirName(spool::DirName(path))).ok() || !env.CreateDir(spool::DirName(path)).ok() ||
          !env.OpenFile(path, spool::OpenMode::kTruncate, &file).ok() || !file->Write(0, bytes).ok()) {
        std::abort();
      }
    };
    for (const auto& [name, bytes] : files) write(spool::JoinPath(spool::fuzz::kFixtureDir, name), bytes);
    for (const auto& [path, bytes] : fixture.archive) write(path, bytes);
    OpenAndCheck(&env, salvage, fixture.bodies);
  }
  return 0;
}
