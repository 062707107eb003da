// Blackbox crash campaigns (the README's crash-safety section, issue 7): a store on the real file
// system, written by a child process that is killed with SIGKILL — by the
// parent at a random moment, or by itself at a whitebox kill point
// (spool/txnlog/kill_point.h) when the build has them — and checked by the
// parent after every restart.
//
// The child (this executable re-run with --blackbox-child) commits random
// transactions to three keyed tables, restores tables to earlier versions,
// takes snapshots and state copies, vacuums and rewinds. Before each
// commit it tells the parent, on a pipe, the version it is about to commit
// and a digest of every table as that version must read; after it, that
// the commit was acknowledged (likewise for a rewind). After the child
// dies the parent opens the store and checks the invariants of docs/design.md (section 11) against what it
// was told:
//   recoverable      the store opens;
//   durability       every acknowledged version is there;
//   no phantom       nothing beyond the one commit in flight;
//   atomicity        the tables read exactly as the newest version's digest;
//   retained reads   every retained version read as of itself gives its digest;
//   idempotent       a second open gives the same.
// The next child goes on from what survived, in the same directory.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "crash_enumerator.h"

namespace spool::crashtest {

struct BlackboxOptions {
  std::string dir;   // wiped first; holds the store and the kill-point counts
  std::string self;  // the executable to run as the child
  uint64_t first_seed = 1;
  uint64_t cycles = 0;     // child runs (each ends in a kill or a clean exit)
  double duration_s = 0;   // or run until this much time has passed
  uint64_t max_ops = 400;  // a child exits cleanly after this many operations
};

struct BlackboxFigures {
  CrashFigures crash;  // workload "blackbox"; crash points = kills
  uint64_t killed_by_parent = 0;
  uint64_t killed_at_points = 0;
  uint64_t clean_exits = 0;
  uint64_t commits_acknowledged = 0;
  uint64_t versions_checked = 0;  // as-of reads compared with their digest
  // Kill points (0 when the build has none).
  uint64_t points_defined = 0;
  uint64_t points_hit = 0;     // reached at least once in some child
  uint64_t points_killed = 0;  // a child was killed there at least once
  std::vector<std::string> points_never_hit;
};

BlackboxFigures RunBlackbox(const BlackboxOptions& options);

// The child's side: runs until killed or `max_ops` operations are done.
// Returns the process's exit code.
int RunBlackboxChild(const std::string& dir, uint64_t seed, uint64_t max_ops);

}  // namespace spool::crashtest
