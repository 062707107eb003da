#include "log_fixture.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "spool/txnlog/log.h"

namespace spool::fuzz {

void BuildFixtureLog(MemEnv* env, std::map<uint64_t, std::string>* bodies) {
  LogOptions options;
  options.env = env;
  options.new_store_id = kFixtureStoreId;
  options.segment_size_bytes = 64 << 10;
  options.preallocate_bytes = 4096;
  std::unique_ptr<Log> log;
  if (!Log::Open(options, kFixtureDir, &log).ok()) std::abort();
  auto append = [&](uint64_t i) {
    std::string body = "row-" + std::to_string(i) + ":";
    const size_t size = i % 10 == 0 ? 9000 : (i % 7 == 0 ? 0 : 120);
    while (body.size() < size) body.push_back(static_cast<char>('a' + (i * 31 + body.size()) % 26));
    if (size == 0) body.clear();
    LogCommit commit;
    if (!log->Append(LogWrite{i % 2 == 0 ? "WRITE" : "STREAMING UPDATE", body}, &commit).ok()) std::abort();
    (*bodies)[commit.position.version] = body;
  };
  for (uint64_t i = 1; i <= 60; ++i) append(i);
  if (!log->TruncateAfter(40, /*discard_suffix=*/false, nullptr).ok()) std::abort();
  bodies->erase(bodies->upper_bound(40), bodies->end());
  for (uint64_t i = 61; i <= 70; ++i) append(i);
}

namespace {

// Every file below `dir` (recursively), by path.
void ReadTree(Env* env, const std::string& dir, std::map<std::string, std::string>* files) {
  std::vector<std::string> names;
  if (!env->ListDir(dir, &names).ok()) return;
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir, name);
    std::string bytes;
    if (ReadFileToString(env, path, &bytes).ok()) (*files)[path] = bytes;
    else ReadTree(env, path, files);
  }
}

void OpenAndCheck(MemEnv* env, bool salvage, const std::map<uint64_t, std::string>& bodies) {
  LogOptions options;
  options.env = env;
  options.salvage = salvage;
  options.create_if_missing = false;
  std::unique_ptr<Log> log;
  if (!Log::Open(options, kFixtureDir, &log).ok()) return;
  std::unique_ptr<LogIterator> it;
  if (!log->NewIterator(0, &it).ok()) return;
  LogEntry entry;
  while (it->Next(&entry)) {
    auto expected = bodies.find(entry.position.version);
    if (expected == bodies.end() || expected->second != entry.body) std::abort();
  }
}

}  // namespace

const FixtureFiles& GetFixtureFiles() {
  static const FixtureFiles* fixture = [] {
    auto* f = new FixtureFiles();
    MemEnv env;
    BuildFixtureLog(&env, &f->bodies);
    std::vector<std::string> names;
    if (!env.ListDir(kFixtureDir, &names).ok()) std::abort();
    for (const std::string& name : names) {
      std::string bytes;
      if (name != "LOCK" && ReadFileToString(&env, JoinPath(kFixtureDir, name), &bytes).ok()) f->files[name] = bytes;
    }
    // The truncation's archived cut: it lets recovery tell a lost successor
    // segment from a log that was never truncated.
    ReadTree(&env, JoinPath(kFixtureDir, "archive"), &f->archive);
    return f;
  }();
  return *fixture;
}

std::string SerializeDirectory(const std::map<std::string, std::string>& files) {
  std::string out;
  for (const auto& [name, bytes] : files) {
    out.push_back(static_cast<char>(std::min<size_t>(name.size(), 255)));
    out.append(name, 0, 255);
    const auto n = static_cast<uint32_t>(bytes.size());
    out.append(reinterpret_cast<const char*>(&n), 4);
    out.append(bytes);
  }
  return out;
}

std::map<std::string, std::string> ParseDirectory(const uint8_t* data, size_t size) {
  std::map<std::string, std::string> files;
  size_t at = 0;
  while (at < size) {
    const size_t name_size = data[at++];
    if (name_size == 0 || at + name_size + 4 > size) break;
    std::string name(reinterpret_cast<const char*>(data + at), name_size);
    at += name_size;
    uint32_t bytes_size;
    std::memcpy(&bytes_size, data + at, 4);
    at += 4;
    const size_t n = std::min<size_t>(bytes_size, size - at);
    if (name.find('/') == std::string::npos && name != "." && name != "..") {
      files[name].assign(reinterpret_cast<const char*>(data + at), n);
    }
    at += n;
  }
  return files;
}

std::string OkOutcome(const std::map<uint64_t, std::pair<uint64_t, std::string>>& entries) {
  std::string bytes;
  for (const auto& [version, entry] : entries) bytes += std::to_string(version) + ":" + entry.second + ";";
  const uint64_t last_epoch = entries.empty() ? 0 : entries.rbegin()->second.first;
  const uint64_t last_version = entries.empty() ? 0 : entries.rbegin()->first;
  char digest[20];
  std::snprintf(digest, sizeof(digest), "%016llx",
                static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())));
  return "ok records=" + std::to_string(entries.size()) + " last=" + std::to_string(last_epoch) + "/" +
         std::to_string(last_version) + " digest=" + digest;
}

std::string RecoveryOutcome(const std::map<std::string, std::string>& files) {
  MemEnv env;
  if (!env.CreateDir(kFixtureDir).ok()) std::abort();
  for (const auto& [name, bytes] : files) {
    std::unique_ptr<File> file;
    if (!env.OpenFile(JoinPath(kFixtureDir, name), OpenMode::kTruncate, &file).ok() || !file->Write(0, bytes).ok()) {
      std::abort();
    }
  }
  LogOptions options;
  options.env = &env;
  options.create_if_missing = false;
  std::unique_ptr<Log> log;
  auto failed = [](const Status& s) {
    return s.IsCorruption() ? std::string("corruption") : "error " + std::string(Status::CodeName(s.code()));
  };
  Status s = Log::Open(options, kFixtureDir, &log);
  if (!s.ok()) return failed(s);
  std::unique_ptr<LogIterator> it;
  if (s = log->NewIterator(0, &it); !s.ok()) return failed(s);
  std::map<uint64_t, std::pair<uint64_t, std::string>> entries;
  LogEntry entry;
  while (it->Next(&entry)) entries[entry.position.version] = {entry.position.epoch, entry.body};
  if (!it->status().ok()) return failed(it->status());
  return OkOutcome(entries);
}

void RecoverAndCheck(const std::map<std::string, std::string>& files) {
  const FixtureFiles& fixture = GetFixtureFiles();
  for (bool salvage : {false, true}) {
    MemEnv env;
    if (!env.CreateDir(kFixtureDir).ok()) std::abort();
    auto write = [&](const std::string& path, const std::string& bytes) {
      std::unique_ptr<File> file;
      if (!env.CreateDir(DirName(DirName(path))).ok() || !env.CreateDir(DirName(path)).ok() ||
          !env.OpenFile(path, OpenMode::kTruncate, &file).ok() || !file->Write(0, bytes).ok()) {
        std::abort();
      }
    };
    for (const auto& [name, bytes] : files) write(JoinPath(kFixtureDir, name), bytes);
    for (const auto& [path, bytes] : fixture.archive) write(path, bytes);
    OpenAndCheck(&env, salvage, fixture.bodies);
  }
}

}  // namespace spool::fuzz
