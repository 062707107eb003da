// A small log built deterministically in a MemEnv: the base that the fuzz
// targets and the seed-corpus generator start from. Internal to fuzz/.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "spool/txnlog/mem_env.h"

namespace spool::fuzz {

inline constexpr char kFixtureDir[] = "/log";
inline constexpr uint64_t kFixtureStoreId = 0xf022f022ull;

// Writes a log of several segments (64 KiB each), with small, large
// (compressed) and empty-bodied commits, one truncation, and more commits
// after it. `*bodies` receives the live body of every version.
void BuildFixtureLog(MemEnv* env, std::map<uint64_t, std::string>* bodies);

}  // namespace spool::fuzz
