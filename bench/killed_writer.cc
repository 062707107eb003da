#include "killed_writer.h"

#include <sys/wait.h>

#include <string_view>

#include "check.h"
#include "child_process.h"

namespace spool::bench {
namespace {

constexpr std::string_view kWriterReportPrefix = "written ";

}  // namespace

KilledWriter RunKilledWriter(const std::string& self_path, const std::string& engine, const std::string& dir,
                             uint64_t payload_bytes) {
  const ChildOutcome child =
      RunChild({self_path, "--w7-writer", engine, "--dir", dir, "--w7-bytes", std::to_string(payload_bytes)},
               ChildEnd::kKillAfterReport);
  if (!child.report.starts_with(kWriterReportPrefix) || !WIFSIGNALED(child.wait_status)) {
    throw BenchError("W7 writer for " + engine + " failed (report \"" + child.report + "\", wait status " +
                     std::to_string(child.wait_status) + ")");
  }
  KilledWriter writer;
  writer.records = std::stoull(child.report.substr(kWriterReportPrefix.size()));
  writer.peak_rss_bytes = child.peak_rss_bytes;
  return writer;
}

}  // namespace spool::bench
