// LogModel: what a workload was told by the log (its acknowledged commits,
// truncations and retention), and the check of a recovered log against it
// (the README's crash-safety section, "Invariants checked after every recovery"):
//   durable    every acknowledged commit still within retention is there;
//   atomic     every record is exactly a body some append wrote;
//   prefix     versions are dense within an epoch, and unacknowledged
//              records only follow the acknowledged ones;
//   no phantom nothing appears that no append attempted, nor twice;
//   truncation the log is the old one or the truncated one, never a mix,
//              versions cut off never reappear, and a truncation's first
//              commit is there exactly when its cut is;
//   never reused no version acknowledged before a truncation is used again
//              after it for other data;
//   archived   every truncation that took effect archived its cut whole:
//              each acknowledged commit it cut, exactly as written, and no
//              bytes no append wrote (a later cut leaves it intact);
//   idempotent recovering twice gives what recovering once gave;
//   writable   the recovered log takes the next version and keeps it.
// Thread-safe: workloads record from several writer threads.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "spool/txnlog/log.h"

namespace spool::crashtest {

// Which invariant a violation broke.
struct Violation {
  std::string invariant;
  std::string detail;
};

class LogModel {
 public:
  void AppendAttempted(const std::string& body);
  void AppendAcked(const std::string& body, const LogCommit& commit);
  // `first`: the body of the new epoch's first commit, written with the
  // cut (empty: none).
  void TruncateAttempted(uint64_t version, const std::string& first = {});
  // `epoch`: the epoch the acknowledged truncation started.
  void TruncateAcked(uint64_t version, uint64_t epoch);
  void RetentionAttempted(uint64_t pinned_version);

  // True, with the version, when a truncation was attempted but not
  // acknowledged: a user would retry it after recovery.
  bool truncation_in_flight(uint64_t* version) const;
  uint64_t acked_count() const;

  // Checks the log opened after a crash, and its archived cuts below
  // `archive_dir` on `env`; appends to `*violations`. With `media_fault`
  // set (a bit was flipped in durable data) only "no wrong data is
  // returned" is checked: errors are allowed, wrong bytes are not.
  void Check(Log* log, Env* env, const std::string& archive_dir, bool media_fault,
             std::vector<Violation>* violations) const;

 private:
  struct Acked {
    uint64_t epoch;
    std::string body;
  };
  // What a truncation cut: the acknowledged commits after `version`; no
  // version up to `highest` (the highest acknowledged before it) may be
  // used again after it.
  struct Cut {
    uint64_t version = 0;
    std::map<uint64_t, Acked> acked;
    uint64_t highest = 0;
  };
  void CheckEntries(const std::vector<LogEntry>& entries, uint64_t oldest, bool truncated,
                    std::vector<Violation>* violations) const;
  void CheckArchive(Env* env, const std::string& archive_dir, uint64_t epoch, const Cut& cut,
                    std::vector<Violation>* violations) const;
  void CheckNeverReused(const std::vector<LogEntry>& entries, uint64_t epoch, const Cut& cut,
                        std::vector<Violation>* violations) const;

  mutable std::mutex mu_;
  std::map<uint64_t, Acked> live_;   // acknowledged and not cut by an acknowledged truncation
  std::set<std::string> attempted_;  // every body an append was given
  std::set<std::string> acked_bodies_;
  uint64_t acked_epoch_ = 1;  // the epoch of the last acknowledged truncation
  bool truncate_in_flight_ = false;
  uint64_t truncate_version_ = 0;
  Cut pending_cut_;               // of the truncation in flight
  std::string pending_first_;     // its first commit's body, if any
  std::map<uint64_t, Cut> cuts_;  // by the epoch their truncation started
  uint64_t max_pinned_ = 0;       // the highest retention pin attempted
};

// Reads every retained entry. Returns the iterator's status.
Status ReadEntries(Log* log, std::vector<LogEntry>* entries);

}  // namespace spool::crashtest
