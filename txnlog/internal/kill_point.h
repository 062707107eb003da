// Whitebox kill points (the README's crash-safety section; RocksDB's TEST_KILL_RANDOM is the model).
//
//   SPOOL_KILL_POINT("log.append.synced");
//
// marks a place where a crash is worth trying: before and after a sync, a
// rename, a truncation, a snapshot's publication, a rewind's steps. In a
// build configured with -DSPOOL_KILL_POINTS=ON every point is registered at
// link time (so a campaign can report points hit / points defined), and a
// process started with SPOOL_KILL_ODDS in its environment may kill itself
// there with SIGKILL. In every other build the macro is nothing at all.
//
// Environment of a process with kill points (spool-crashfuzz --blackbox sets it):
//   SPOOL_KILL_ODDS=N        each hit of any point kills with odds 1 in N (0: never)
//   SPOOL_KILL_FOCUS=NAME    ... but hits of this point with odds 1 in
//   SPOOL_KILL_FOCUS_ODDS=M  M, so that rarely reached points get their turn
//   SPOOL_KILL_SEED=S        the random choices
//   SPOOL_KILL_COUNTS=PATH   a file of 8-byte counters, shared with the
//                            parent: [0] 1 + the index of the point that
//                            killed (0: none), [1 + i] hits of point i, in
//                            the order of Defined()
//
// Internal (not installed): the modules above the log and the crash engine
// mark and count points through it too (spool_txnlog_internal).
#pragma once

#include <string>
#include <vector>

#if defined(SPOOL_KILL_POINTS)
#define SPOOL_KILL_POINT(name)                                                                          \
  do {                                                                                                  \
    [[gnu::used, gnu::section("spool_kill_points")]] static const char* const spool_kill_point_ = name; \
    ::spool::kill_point::Hit(spool_kill_point_);                                                        \
  } while (0)
#else
#define SPOOL_KILL_POINT(name) \
  do {                         \
  } while (0)
#endif

namespace spool::kill_point {

// Whether this build has kill points.
bool CompiledIn();
// Every point of the program, sorted by name (empty without kill points).
const std::vector<std::string>& Defined();
// Counts the hit; may kill the process (see above).
void Hit(const char* name);

}  // namespace spool::kill_point
