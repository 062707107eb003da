#include "log_model.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace spool::crashtest {

void LogModel::AppendAttempted(const std::string& body) {
  std::lock_guard<std::mutex> lock(mu_);
  attempted_.insert(body);
}

void LogModel::AppendAcked(const std::string& body, const LogCommit& commit) {
  std::lock_guard<std::mutex> lock(mu_);
  live_[commit.position.version] = Acked{commit.position.epoch, body};
  acked_bodies_.insert(body);
}

void LogModel::TruncateAttempted(uint64_t version, const std::string& first) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!first.empty()) attempted_.insert(first);
  pending_first_ = first;
  truncate_in_flight_ = true;
  truncate_version_ = version;
  pending_cut_ = Cut{version, {live_.upper_bound(version), live_.end()}, live_.empty() ? 0 : live_.rbegin()->first};
}

void LogModel::TruncateAcked(uint64_t version, uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (truncate_in_flight_ && epoch > acked_epoch_ + 1) {
    // A retry: the interrupted attempt had taken effect and archived the
    // cut; the retry's own cut holds no acknowledged commit.
    cuts_[acked_epoch_ + 1] = pending_cut_;
    cuts_[epoch] = Cut{version, {}, pending_cut_.highest};
  } else {
    cuts_[epoch] = pending_cut_;
  }
  truncate_in_flight_ = false;
  pending_first_.clear();
  live_.erase(live_.upper_bound(version), live_.end());
  acked_epoch_ = epoch;
}

void LogModel::RetentionAttempted(uint64_t pinned_version) {
  std::lock_guard<std::mutex> lock(mu_);
  max_pinned_ = std::max(max_pinned_, pinned_version);
}

bool LogModel::truncation_in_flight(uint64_t* version) const {
  std::lock_guard<std::mutex> lock(mu_);
  *version = truncate_version_;
  return truncate_in_flight_;
}

uint64_t LogModel::acked_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return live_.size();
}

Status ReadEntries(Log* log, std::vector<LogEntry>* entries) {
  std::unique_ptr<LogIterator> it;
  SPOOL_RETURN_IF_ERROR(log->NewIterator(0, &it));
  LogEntry entry;
  while (it->Next(&entry)) entries->push_back(entry);
  return it->status();
}

namespace {
// Bytes returned that no append wrote there: never allowed, even after a
// media fault (corruption must be detected, not returned).
constexpr char kCorrectBytes[] = "correct bytes";

void Add(std::vector<Violation>* violations, std::string invariant, std::string detail) {
  violations->push_back(Violation{std::move(invariant), std::move(detail)});
}
}  // namespace

// `truncated`: an in-flight truncation took effect.
void LogModel::CheckEntries(const std::vector<LogEntry>& entries, uint64_t oldest, bool truncated,
                            std::vector<Violation>* violations) const {
  const uint64_t cut = truncated ? truncate_version_ : UINT64_MAX;
  const uint64_t max_acked = live_.empty() ? 0 : live_.rbegin()->first;
  std::set<std::string> seen;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LogEntry& e = entries[i];
    const uint64_t v = e.position.version;
    // Versions jump only where an epoch starts.
    if (i > 0 && v != entries[i - 1].position.version + 1 &&
        !(e.position.epoch > entries[i - 1].position.epoch && v > entries[i - 1].position.version)) {
      Add(violations, "prefix", "hole before version " + std::to_string(v));
    }
    if (!seen.insert(e.body).second)
      Add(violations, "no phantom", "a body appears twice, again at " + std::to_string(v));
    auto acked = live_.find(v);
    if (acked != live_.end() && v <= cut) {
      if (acked->second.body != e.body || acked->second.epoch != e.position.epoch) {
        Add(violations, kCorrectBytes, "version " + std::to_string(v) + " differs from what was acknowledged");
      }
    } else if (attempted_.count(e.body) == 0 || acked_bodies_.count(e.body) != 0) {
      Add(violations, kCorrectBytes, "version " + std::to_string(v) + " holds bytes no unacknowledged append wrote");
    } else if (!truncated && v <= max_acked) {
      Add(violations, "prefix", "unacknowledged version " + std::to_string(v) + " precedes acknowledged ones");
    }
  }
  // Durability: acknowledged versions within retention and not cut.
  const uint64_t newest = entries.empty() ? 0 : entries.back().position.version;
  for (auto it = live_.begin(); it != live_.end() && it->first <= cut; ++it) {
    const uint64_t v = it->first;
    if (v < oldest) {
      if (v >= max_pinned_)
        Add(violations, "durable",
            "acknowledged version " + std::to_string(v) + " was deleted by retention before its pin");
      continue;
    }
    if (v > newest) Add(violations, "durable", "acknowledged version " + std::to_string(v) + " is lost");
  }
}

void LogModel::CheckArchive(Env* env, const std::string& archive_dir, uint64_t epoch, const Cut& cut,
                            std::vector<Violation>* violations) const {
  char name[32];
  std::snprintf(name, sizeof(name), "epoch-%06llu", static_cast<unsigned long long>(epoch));
  const std::string dir = JoinPath(archive_dir, name);
  if (!ArchivedCutComplete(env, dir)) return Add(violations, "archived", dir + " is not complete");
  std::vector<LogEntry> entries;
  Status s = ScanArchivedCut(env, dir, [&](const LogEntry& e) {
    entries.push_back(e);
    return true;
  });
  if (!s.ok() && !(s.IsNotFound() && cut.acked.empty())) return Add(violations, "archived", dir + ": " + s.ToString());
  std::set<uint64_t> archived;
  for (size_t i = 0; i < entries.size(); ++i) {
    const LogEntry& e = entries[i];
    // The cut's first version follows its point, or (the point's successor
    // cut by an earlier truncation) comes past it.
    const uint64_t expected = i == 0 ? cut.version + 1 : entries[i - 1].position.version + 1;
    const bool jump = e.position.version > expected && (i == 0 || e.position.epoch > entries[i - 1].position.epoch);
    if (e.position.version != expected && !jump) {
      return Add(violations, "archived",
                 dir + " holds version " + std::to_string(e.position.version) + " where " + std::to_string(expected) +
                     " belongs");
    }
    archived.insert(e.position.version);
    auto acked = cut.acked.find(e.position.version);
    const bool right = acked != cut.acked.end()
                           ? acked->second.body == e.body && acked->second.epoch == e.position.epoch
                           : attempted_.count(e.body) != 0;
    if (!right)
      Add(violations, "archived", dir + ": version " + std::to_string(e.position.version) + " is not what was written");
  }
  for (const auto& [version, acked] : cut.acked) {
    if (archived.count(version) == 0) {
      Add(violations, "archived", dir + " lost acknowledged version " + std::to_string(version));
      break;
    }
  }
}

// Entries of the epoch a truncation started, or later, past its point hold
// versions above every version acknowledged before it.
void LogModel::CheckNeverReused(const std::vector<LogEntry>& entries, uint64_t epoch, const Cut& cut,
                                std::vector<Violation>* violations) const {
  for (const LogEntry& e : entries) {
    if (e.position.epoch >= epoch && e.position.version > cut.version && e.position.version <= cut.highest) {
      return Add(violations, "never reused",
                 "version " + std::to_string(e.position.version) + " of epoch " + std::to_string(e.position.epoch) +
                     " was acknowledged before the truncation that started epoch " + std::to_string(epoch));
    }
  }
}

void LogModel::Check(Log* log, Env* env, const std::string& archive_dir, bool media_fault,
                     std::vector<Violation>* violations) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LogEntry> entries;
  Status s = ReadEntries(log, &entries);
  if (!s.ok() && !(media_fault && s.IsCorruption())) Add(violations, "readable", s.ToString());
  const uint64_t epoch = log->CurrentEpoch();
  const bool truncated = truncate_in_flight_ && epoch > acked_epoch_;
  if (media_fault) {
    // Only: whatever is returned is what was written.
    std::vector<Violation> found;
    CheckEntries(entries, log->Oldest().version, truncated, &found);
    for (Violation& v : found) {
      if (v.invariant == kCorrectBytes) violations->push_back(std::move(v));
    }
    return;
  }
  if (epoch != acked_epoch_ && !(truncate_in_flight_ && epoch == acked_epoch_ + 1)) {
    Add(violations, "truncation",
        "epoch " + std::to_string(epoch) + " but " + std::to_string(acked_epoch_) + " expected");
  }
  if (truncated) {
    for (const LogEntry& e : entries) {
      if (e.position.version > truncate_version_ && e.position.epoch < epoch) {
        Add(violations, "truncation", "version " + std::to_string(e.position.version) + " of the cut epoch reappeared");
      }
    }
    // The cut took effect: its first commit with it.
    auto first =
        std::find_if(entries.begin(), entries.end(), [&](const LogEntry& e) { return e.position.epoch == epoch; });
    if (!pending_first_.empty() && (first == entries.end() || first->body != pending_first_)) {
      Add(violations, "truncation",
          "the truncation to epoch " + std::to_string(epoch) + " took effect without its first commit");
    }
  }
  CheckEntries(entries, log->Oldest().version, truncated, violations);
  for (const auto& [cut_epoch, cut] : cuts_) {
    CheckArchive(env, archive_dir, cut_epoch, cut, violations);
    CheckNeverReused(entries, cut_epoch, cut, violations);
  }
  if (truncated) {
    CheckArchive(env, archive_dir, epoch, pending_cut_, violations);
    CheckNeverReused(entries, epoch, pending_cut_, violations);
  }
  const LogPosition newest = log->Newest();
  if (!entries.empty() && newest.version != entries.back().position.version) {
    Add(violations, "prefix",
        "Newest() says " + std::to_string(newest.version) + " but the log ends at " +
            std::to_string(entries.back().position.version));
  }
}

}  // namespace spool::crashtest
