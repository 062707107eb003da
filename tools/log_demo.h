// `spool log demo`: Spool's main job until the pipeline exists. Writes
// commits to an embedded log in a temporary directory, cuts the power with
// FaultEnv while writers are still committing, recovers, and shows what
// survived and how fast it went.
#pragma once

#include <cstdint>
#include <string>

namespace spool::cli {

struct LogDemoOptions {
  std::string dir;          // empty: a new temporary directory
  uint64_t commits = 2000;  // durable commits before the power cut
  int writers = 4;
  uint64_t seed = 42;
  bool keep = false;  // keep the directory afterwards
};

int RunLogDemo(const LogDemoOptions& options);

}  // namespace spool::cli
