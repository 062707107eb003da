#include "io_counters.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fstream>
#include <string>

#include "check.h"

namespace spool::bench {
namespace {

constexpr uint64_t kSectorBytes = 512;
constexpr int kSectorsWrittenField = 7;  // Documentation/block/stat.rst

uint64_t SyscallBytes() {
  std::ifstream io("/proc/self/io");
  if (!io) throw BenchError("cannot read /proc/self/io");
  std::string name;
  uint64_t value = 0;
  while (io >> name >> value) {
    if (name == "wchar:") return value;
  }
  throw BenchError("/proc/self/io has no wchar");
}

std::optional<uint64_t> DeviceBytes(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || major(st.st_dev) == 0) return std::nullopt;
  std::ifstream stat_file("/sys/dev/block/" + std::to_string(major(st.st_dev)) + ":" +
                          std::to_string(minor(st.st_dev)) + "/stat");
  uint64_t field = 0;
  for (int i = 0; i < kSectorsWrittenField; ++i) {
    if (!(stat_file >> field)) return std::nullopt;
  }
  return field * kSectorBytes;
}

}  // namespace

WriteCounters ReadWriteCounters(const std::string& path) { return WriteCounters{SyscallBytes(), DeviceBytes(path)}; }

WriteCounters WrittenBetween(const WriteCounters& earlier, const WriteCounters& later) {
  WriteCounters d;
  d.syscall_bytes = later.syscall_bytes - earlier.syscall_bytes;
  if (earlier.device_bytes && later.device_bytes) d.device_bytes = *later.device_bytes - *earlier.device_bytes;
  return d;
}

}  // namespace spool::bench
