#include "run_info.h"

#include <lmdb.h>
#include <sqlite3.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <leveldb/db.h>
#include <rocksdb/version.h>

namespace spool::bench {
namespace {

constexpr char kUnknown[] = "unknown";

// The value of the first line of `path` that starts with `key`, after the
// separator and any blanks and quotes.
std::string FieldOf(const std::string& path, std::string_view key, char separator) {
  std::ifstream file(path);
  std::string line;
  while (std::getline(file, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const size_t at = line.find(separator);
    if (at == std::string::npos) continue;
    const size_t begin = line.find_first_not_of(" \t\"", at + 1);
    const size_t end = line.find_last_not_of(" \t\"");
    return begin == std::string::npos ? "" : line.substr(begin, end - begin + 1);
  }
  return kUnknown;
}

// The mount that holds `path`: the longest mount point that is a prefix of
// its canonical form, as "<type> on <mount point> (<device>)".
std::string FileSystemOf(const std::string& path) {
  std::error_code error;
  std::filesystem::path at = std::filesystem::weakly_canonical(path, error);
  if (error) return kUnknown;
  std::ifstream mounts("/proc/self/mounts");
  std::string device, mount_point, type, rest, best = kUnknown;
  size_t best_length = 0;
  while (mounts >> device >> mount_point >> type && std::getline(mounts, rest)) {
    const std::string text = at.string();
    const bool under = text.rfind(mount_point, 0) == 0 &&
                       (mount_point == "/" || text.size() == mount_point.size() || text[mount_point.size()] == '/');
    if (under && mount_point.size() >= best_length) {
      best_length = mount_point.size();
      best = fmt::format("{} on {} ({})", type, mount_point, device);
    }
  }
  return best;
}

std::string Utc(std::chrono::system_clock::time_point when) {
  const std::time_t t = std::chrono::system_clock::to_time_t(when);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// `git describe` of the tree this binary was built from, when it is still
// there (a build tree's run); the project version alone otherwise.
std::string SpoolVersion() {
  std::string version = SPOOL_BENCH_VERSION;
  const std::string command = fmt::format("git -C '{}' describe --always --dirty 2>/dev/null", SPOOL_BENCH_SOURCE_DIR);
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (pipe == nullptr) return version;
  char line[128] = {};
  if (std::fgets(line, sizeof line, pipe.get()) != nullptr) {
    std::string commit(line);
    while (!commit.empty() && (commit.back() == '\n' || commit.back() == '\r')) commit.pop_back();
    if (!commit.empty()) version += " (git " + commit + ")";
  }
  return version;
}

Fields Machine(const BenchConfig& config) {
  utsname name{};
  const bool named = ::uname(&name) == 0;
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_bytes = ::sysconf(_SC_PAGESIZE);
  return {
      {"host", named ? name.nodename : kUnknown},
      {"cpu", FieldOf("/proc/cpuinfo", "model name", ':')},
      {"cores", std::to_string(std::thread::hardware_concurrency())},
      {"memory",
       pages > 0 && page_bytes > 0
           ? fmt::format("{:.1f} GiB", static_cast<double>(pages) * static_cast<double>(page_bytes) / (1 << 30))
           : kUnknown},
      {"kernel", named ? fmt::format("{} {} {}", name.sysname, name.release, name.machine) : kUnknown},
      {"os", FieldOf("/etc/os-release", "PRETTY_NAME", '=')},
      {"scratch file system", FileSystemOf(config.dir)},
  };
}

std::string LmdbVersion() {
  int major = 0, minor = 0, patch = 0;
  mdb_version(&major, &minor, &patch);
  return fmt::format("{}.{}.{}", major, minor, patch);
}

Fields Versions() {
  return {
      {"spool", SpoolVersion()},
      {"compiler", __VERSION__},
      {"rocksdb", fmt::format("{}.{}.{}", ROCKSDB_MAJOR, ROCKSDB_MINOR, ROCKSDB_PATCH)},
      {"lmdb", LmdbVersion()},
      {"sqlite", sqlite3_libversion()},
      {"leveldb", fmt::format("{}.{}", leveldb::kMajorVersion, leveldb::kMinorVersion)},
      {"zstd", ZSTD_versionString()},
      {"xxhash", fmt::format("{}.{}.{}", XXH_versionNumber() / 10000, XXH_versionNumber() / 100 % 100,
                             XXH_versionNumber() % 100)},
  };
}

std::string CommaList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ",") + item;
  return out;
}

Fields Settings(const BenchConfig& config) {
  return {
      {"reps", std::to_string(config.reps)},
      {"scale", fmt::format("{}", config.scale)},
      {"engines", CommaList(config.engines)},
      {"workloads", CommaList(config.workloads)},
      {"w4_peer_state", config.peer_state},
      {"w6_history_multipliers", fmt::format("{}", fmt::join(config.history_multipliers, ","))},
      {"history_updates", fmt::format("{}", fmt::join(config.history_updates, ","))},
      {"dir", config.dir},
      {"durability",
       "every commit durable before it returns: Spool log kSync (fdatasync), RocksDB and LevelDB sync=true, "
       "LMDB default flags, SQLite WAL synchronous=FULL"},
  };
}

}  // namespace

RunInfo CollectRunInfo(const BenchConfig& config) {
  return RunInfo{Utc(std::chrono::system_clock::now()), Machine(config), Versions(), Settings(config)};
}

void PrintRunInfo(const RunInfo& info, std::ostream& out) {
  auto line = [&](const char* what, const Fields& fields) {
    out << what << ":";
    const char* separator = " ";
    for (const auto& [key, value] : fields) {
      out << separator << key << " " << value;
      separator = "; ";
    }
    out << "\n";
  };
  out << "started " << info.started_at_utc << "\n";
  line("machine", info.machine);
  line("versions", info.versions);
}

}  // namespace spool::bench
