#include "files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include <fmt/format.h>

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

std::string DiskBreakdown(const std::string& dir) {
  std::vector<std::pair<uint64_t, std::string>> parts;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    struct stat st;
    if (::lstat(entry.path().c_str(), &st) != 0) continue;
    const uint64_t bytes = S_ISDIR(st.st_mode)   ? DiskBytes(entry.path().string())
                           : S_ISREG(st.st_mode) ? static_cast<uint64_t>(st.st_blocks) * kStatBlockBytes
                                                 : 0;
    parts.emplace_back(bytes, name);
  }
  if (ec) throw BenchError("list " + dir + ": " + ec.message());
  std::sort(parts.begin(), parts.end(), std::greater<>());
  std::string out;
  for (const auto& [bytes, name] : parts) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {:.1f} MB", name, static_cast<double>(bytes) / 1e6);
  }
  return out;
}

uint64_t FileBytes(const std::string& dir, std::string_view suffix) {
  return SumFiles(dir, suffix, [](const struct stat& st) { return static_cast<uint64_t>(st.st_size); });
}

void SyncAll() { ::sync(); }

}  // namespace spool::bench
