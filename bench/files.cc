#include "files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "check.h"

namespace spool::bench {
namespace {

namespace fs = std::filesystem;

constexpr char kMarkerFileName[] = ".spool-bench";
constexpr uint64_t kStatBlockBytes = 512;

// Sums `measure` over the regular files under `dir` named "*<suffix>".
template <typename Measure>
uint64_t SumFiles(const std::string& dir, std::string_view suffix, Measure measure) {
  uint64_t total = 0;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir, ec)) {
    if (!entry.path().filename().string().ends_with(suffix)) continue;
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) == 0 && S_ISREG(st.st_mode)) total += measure(st);
  }
  if (ec) throw BenchError("list " + dir + ": " + ec.message());
  return total;
}

}  // namespace

void PrepareRunDir(const std::string& root) {
  std::error_code ec;
  if (fs::exists(root, ec)) {
    const bool ours =
        fs::is_directory(root, ec) && (fs::exists(fs::path(root) / kMarkerFileName, ec) || fs::is_empty(root, ec));
    if (!ours) throw BenchError("--dir " + root + " exists and was not made by spool-bench; refusing to wipe it");
  }
  FreshDir(root);
  std::ofstream marker(fs::path(root) / kMarkerFileName);
  if (!marker) throw BenchError("cannot write the marker file in " + root);
}

void FreshDir(const std::string& dir) {
  RemoveDir(dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw BenchError("create " + dir + ": " + ec.message());
}

void RemoveDir(const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) throw BenchError("remove " + dir + ": " + ec.message());
}

uint64_t DiskBytes(const std::string& dir, std::string_view suffix) {
  return SumFiles(dir, suffix,
                  [](const struct stat& st) { return static_cast<uint64_t>(st.st_blocks) * kStatBlockBytes; });
}

uint64_t FileBytes(const std::string& dir, std::string_view suffix) {
  return SumFiles(dir, suffix, [](const struct stat& st) { return static_cast<uint64_t>(st.st_size); });
}

void SyncAll() { ::sync(); }

}  // namespace spool::bench
