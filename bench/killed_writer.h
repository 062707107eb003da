// Runs W7's writer as a child process and kills it once it has written.
#pragma once

#include <cstdint>
#include <string>

namespace spool::bench {

struct KilledWriter {
  uint64_t records = 0;         // records the writer had committed durably
  uint64_t peak_rss_bytes = 0;  // the writer's memory high-water mark
};

// Starts `self_path --w7-writer <engine> --dir <dir> --w7-bytes <bytes>`,
// reads its report, SIGKILLs it and reaps it. Throws BenchError if the
// writer exits or reports nothing.
KilledWriter RunKilledWriter(const std::string& self_path, const std::string& engine, const std::string& dir,
                             uint64_t payload_bytes);

}  // namespace spool::bench
