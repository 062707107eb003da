// Store: snapshots, state copies, pins, retention and vacuum.
#include <xxhash.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <optional>
#include <sstream>

#include "invariant.h"
#include "kill_point.h"
#include "parse_whole.h"
#include "snapshot_file.h"
#include "store_impl.h"
#include "store_internal.h"
#include "varint.h"

namespace spool {
namespace {

constexpr uint64_t kSnapshotProgressEvery = 4096;  // entries

std::string Hours(uint64_t us) { return std::to_string(us / 3600000000ull) + "h"; }

}  // namespace

// ---------------------------------------------------------------------------
// Snapshots

Status StoreImpl::TakeSnapshot(SnapshotInfo* info) { return TakeSnapshot(info, {}); }

Status StoreImpl::TakeSnapshot(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress) {
  std::unique_lock lock = LockSettled();
  return TakeSnapshotLocked(info, on_progress);
}

Status StoreImpl::TakeSnapshotLocked(SnapshotInfo* info, const std::function<void(uint64_t entries)>& on_progress) {
  const StatePosition position = state_->position();
  if (position.version == 0) return Status::InvalidArgument("the store has no commits to snapshot");
  Env* env = options_.env;
  const std::string dir = snapshot_dir();
  if (!env->FileExists(dir)) {
    SPOOL_RETURN_IF_ERROR(env->CreateDir(dir));
    SPOOL_RETURN_IF_ERROR(env->SyncDir(dir_));
  }
  SnapshotInfo taken{SnapshotFileName(position.epoch, position.version),
                     position.epoch,
                     position.version,
                     position.timestamp_us,
                     0,
                     0};
  const std::string path = JoinPath(dir, taken.file_name);
  if (!env->FileExists(path)) {
    std::unique_ptr<StateView> view;
    SPOOL_RETURN_IF_ERROR(state_->NewView("", "", &view));
    std::unique_ptr<SnapshotWriter> writer;
    SPOOL_RETURN_IF_ERROR(SnapshotWriter::Create(
        env, path, SnapshotHeader{log_->StoreId(), position.epoch, position.version, position.timestamp_us}, &writer));
    // The position is the header's; the history index is not state a
    // rebuild needs (its floor becomes the snapshot's version).
    const std::string history_end = PrefixEnd(kStateHistoryPrefix);
    uint64_t written = 0;
    while (view->Valid()) {
      const std::string_view key = view->key();
      if (key.starts_with(kStateHistoryPrefix)) {
        view->Seek(history_end);
        continue;
      }
      if (key != kStatePositionKey && key != kStateHistoryFloorKey) {
        SPOOL_RETURN_IF_ERROR(writer->Add(key, view->value()));
        if (on_progress && ++written % kSnapshotProgressEvery == 0) on_progress(written);
      }
      view->Next();
    }
    SPOOL_RETURN_IF_ERROR(view->status());
    SPOOL_RETURN_IF_ERROR(writer->Finish(&taken.bytes, &taken.entries));
    if (on_progress) on_progress(written);
    std::unique_lock stats_lock(catalog_mu_);
    stats_.snapshots_taken++;
  } else {
    SPOOL_RETURN_IF_ERROR(env->GetFileSize(path, &taken.bytes));
  }
  last_snapshot_version_ = position.version;
  last_snapshot_us_ = env->NowMicros();
  bytes_since_snapshot_ = 0;
  if (info != nullptr) *info = taken;
  return Status::OK();
}

Status StoreImpl::MaybeSnapshotLocked() {
  const uint64_t version = state_->position().version;
  const uint64_t now = options_.env->NowMicros();
  const bool due =
      (options_.snapshot_every_versions != 0 && version - last_snapshot_version_ >= options_.snapshot_every_versions) ||
      (options_.snapshot_every_bytes != 0 && bytes_since_snapshot_ >= options_.snapshot_every_bytes) ||
      (options_.snapshot_every_us != 0 && now - last_snapshot_us_ >= options_.snapshot_every_us);
  if (!due) return Status::OK();
  // The commit is durable whatever happens here: report, do not fail it.
  Status s = TakeSnapshotLocked(nullptr);
  if (!s.ok()) {
    std::unique_lock lock(catalog_mu_);
    stats_.snapshot_error = s.ToString();
  }
  return Status::OK();
}

Status StoreImpl::ListSnapshots(std::vector<SnapshotInfo>* snapshots) {
  SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(snapshots));
  for (SnapshotInfo& info : *snapshots) {
    LogEntry entry;
    if (log_->Read(info.version, &entry).ok()) info.timestamp_us = entry.timestamp_us;
  }
  return Status::OK();
}

// ListSnapshots without the timestamps, which cost a log read each.
Status StoreImpl::ListSnapshotFiles(std::vector<SnapshotInfo>* snapshots) {
  snapshots->clear();
  std::vector<std::string> names;
  Status s = options_.env->ListDir(snapshot_dir(), &names);
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s);
  for (const std::string& name : names) {
    SnapshotInfo info;
    info.file_name = name;
    if (!ParseSnapshotFileName(name, &info.epoch, &info.version)) continue;
    if (!PositionOnHistory(info.epoch, info.version)) continue;
    SPOOL_RETURN_IF_ERROR(options_.env->GetFileSize(JoinPath(snapshot_dir(), name), &info.bytes));
    snapshots->push_back(std::move(info));
  }
  std::sort(snapshots->begin(), snapshots->end(),
            [](const SnapshotInfo& a, const SnapshotInfo& b) { return a.version < b.version; });
  return Status::OK();
}

// ---------------------------------------------------------------------------
// State copies

namespace {
std::string StateCopyName(uint64_t epoch, uint64_t version) {
  return "e" + std::to_string(epoch) + "-v" + std::to_string(version);
}
}  // namespace

Status StoreImpl::StateCopies(std::vector<StateCopy>* copies) {
  std::vector<std::string> names;
  SPOOL_RETURN_IF_ERROR(state_->ListCopies(&names));
  copies->clear();
  for (std::string& name : names) {
    StateCopy copy;
    if (std::sscanf(name.c_str(), "e%" SCNu64 "-v%" SCNu64, &copy.epoch, &copy.version) != 2 ||
        name != StateCopyName(copy.epoch, copy.version)) {
      continue;
    }
    copy.name = std::move(name);
    copies->push_back(std::move(copy));
  }
  std::sort(copies->begin(), copies->end(),
            [](const StateCopy& a, const StateCopy& b) { return a.version > b.version; });
  return Status::OK();
}

// Drops the copies that are off the history (a rewind cut them) and, with
// `keep_newest`, all but the newest StoreOptions::state_copies.
Status StoreImpl::PruneStateCopies(bool keep_newest) {
  std::vector<StateCopy> copies;
  SPOOL_RETURN_IF_ERROR(StateCopies(&copies));
  uint64_t kept = 0;
  for (const StateCopy& copy : copies) {
    const bool keep = PositionOnHistory(copy.epoch, copy.version) && (!keep_newest || kept < options_.state_copies);
    if (keep) ++kept;
    else SPOOL_RETURN_IF_ERROR(state_->RemoveCopy(copy.name));
  }
  return Status::OK();
}

Status StoreImpl::SaveStateCopy() {
  std::unique_lock lock = LockSettled();
  if (options_.state_copies == 0) return Status::OK();
  const StatePosition head = state_->position();
  if (head.version == 0) return Status::OK();
  StatePosition copied;
  SPOOL_RETURN_IF_ERROR(state_->SaveCopy(StateCopyName(head.epoch, head.version), &copied));
  SPOOL_CHECK(copied.version == head.version, "a state copy is taken at the state's head");
  return PruneStateCopies(/*keep_newest=*/true);
}

// REQUIRES: commit_mu_ held, the log cut after `version`, nothing staged.
// Swaps in the copy at `version` when there is one on the history; the
// state is otherwise left for Recover to rebuild.
Status StoreImpl::AdoptStateCopy(uint64_t version) {
  std::vector<StateCopy> copies;
  SPOOL_RETURN_IF_ERROR(StateCopies(&copies));
  for (const StateCopy& copy : copies) {
    if (copy.version != version || !PositionOnHistory(copy.epoch, copy.version)) continue;
    Status s = state_->Adopt(copy.name);
    if (!s.IsCorruption()) return s;
    // A damaged copy is not used: the state is rebuilt instead, and the
    // damage reported.
    SPOOL_RETURN_IF_ERROR(state_->RemoveCopy(copy.name));
    Event event;
    event.level = EventLevel::kWarn;
    event.event_type = "state_copy_damaged";
    event.message = "The state copy " + copy.name + " is damaged (" + std::string(s.message()) +
                    "); the state was rebuilt from a snapshot and the log instead.";
    return events_->Append(&event);
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Archived cuts

std::string StoreImpl::ArchiveDir() const {
  return options_.log.archive_dir.empty() ? JoinPath(JoinPath(dir_, "log"), "archive") : options_.log.archive_dir;
}

Status StoreImpl::ListArchivedCuts(std::vector<ArchivedCut>* cuts) {
  cuts->clear();
  const std::string archive = ArchiveDir();
  std::vector<std::string> names;
  Status s = options_.env->ListDir(archive, &names);
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    ArchivedCut cut;
    if (!ParseArchivedCutName(name, &cut.new_epoch)) continue;
    cut.dir = JoinPath(archive, name);
    cut.complete = ArchivedCutComplete(options_.env, cut.dir);
    SPOOL_RETURN_IF_ERROR(ScanArchivedCut(options_.env, cut.dir, [&](const LogEntry& e) {
                            if (cut.commits++ == 0) {
                              cut.first_version = e.position.version;
                              cut.first_timestamp_us = e.timestamp_us;
                            }
                            cut.last_version = e.position.version;
                            cut.last_timestamp_us = e.timestamp_us;
                            return true;
                          }).WithContext("archived cut " + cut.dir));
    if (cut.commits > 0) SPOOL_RETURN_IF_ERROR(ArchivedCutPoint(options_.env, cut.dir, &cut.point));
    cuts->push_back(std::move(cut));
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Pins

class StoreImpl::PinImpl final : public VersionPin {
 public:
  PinImpl(StoreImpl* store, std::multiset<uint64_t>::iterator it) : store_(store), it_(it) {}
  ~PinImpl() override {
    std::lock_guard lock(store_->pins_mu_);
    store_->live_pins_.erase(it_);
  }

 private:
  StoreImpl* store_;
  std::multiset<uint64_t>::iterator it_;
};

std::unique_ptr<VersionPin> StoreImpl::PinVersion(uint64_t version) {
  std::lock_guard lock(pins_mu_);
  return std::make_unique<PinImpl>(this, live_pins_.insert(version));
}

class StoreImpl::UpdateClaimImpl final : public UpdateClaim {
 public:
  explicit UpdateClaimImpl(StoreImpl* store) : store_(store) {}
  ~UpdateClaimImpl() override {
    std::lock_guard lock(store_->update_mu_);
    store_->running_update_.clear();
  }

 private:
  StoreImpl* store_;
};

Status StoreImpl::ClaimUpdate(const std::string& update_id, std::unique_ptr<UpdateClaim>* claim) {
  std::lock_guard lock(update_mu_);
  if (!running_update_.empty()) {
    return Status::Busy("RESOURCE_CONFLICT: update " + running_update_ +
                        " is running on this store; stop it or wait for it to end before starting update " + update_id);
  }
  running_update_ = update_id;
  *claim = std::make_unique<UpdateClaimImpl>(this);
  return Status::OK();
}

std::string StoreImpl::RunningUpdate() {
  std::lock_guard lock(update_mu_);
  return running_update_;
}

// PINS: a header line "spool pins 1 <pins> <XXH3-64 of the lines after it,
// 16 hex digits>", then a "name version" line per pin. The header makes a
// truncated or damaged file read as damage: losing pins silently would let
// vacuum delete what a rewind point needs. (A file without the header, as
// stores before it wrote, is read as it is and rewritten with one.)
namespace {
constexpr std::string_view kPinsHeader = "spool pins 1 ";
}  // namespace

Status ParsePins(const std::string& path, std::string_view text, std::map<std::string, uint64_t>* pins) {
  auto damaged = [&](const std::string& why) {
    return Status::Corruption(path + " is damaged (" + why +
                              "): its pins keep what rewind points need from vacuum. Delete it to go on; the next "
                              "update pins the pipeline's rewind points again (do not vacuum before that)");
  };
  std::optional<uint64_t> count;
  if (text.starts_with(kPinsHeader)) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return damaged("its header is cut short");
    unsigned long long expected_count = 0, checksum = 0;
    const std::string header(text.substr(kPinsHeader.size(), newline - kPinsHeader.size()));
    if (std::sscanf(header.c_str(), "%llu %16llx", &expected_count, &checksum) != 2) return damaged("a bad header");
    text.remove_prefix(newline + 1);
    if (XXH3_64bits(text.data(), text.size()) != checksum) return damaged("checksum mismatch: truncated or changed");
    count = expected_count;
  }
  // Without the header, nothing vouches for the lines: an empty file or a
  // zeroed one is not an empty list.
  if (!count && text.empty()) return damaged("empty, and without its header");
  // Each line: a name of printable bytes, a space, the version's digits.
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return damaged("its last line is cut short");
    const std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    const size_t space = line.find(' ');
    const std::string_view name = line.substr(0, space);
    const std::string_view digits = space == std::string_view::npos ? "" : line.substr(space + 1);
    const bool printable = std::all_of(name.begin(), name.end(), [](char c) { return c > ' ' && c < 0x7f; });
    uint64_t version = 0;
    if (name.empty() || !printable || !ParseWhole(digits, &version)) {
      return damaged("not a list of 'name version' lines");
    }
    (*pins)[std::string(name)] = version;
  }
  if (count && pins->size() != *count) return damaged("the header counts another number of pins");
  return Status::OK();
}

Status StoreImpl::LoadPins() {
  const std::string path = JoinPath(dir_, kStorePinsName);
  std::string text;
  Status s = ReadFileToString(options_.env, path, &text);
  if (s.IsNotFound()) return Status::OK();
  SPOOL_RETURN_IF_ERROR(s);
  std::map<std::string, uint64_t> pins;
  SPOOL_RETURN_IF_ERROR(ParsePins(path, text, &pins));
  std::lock_guard lock(pins_mu_);
  pins_ = std::move(pins);
  return Status::OK();
}

Status StoreImpl::SavePinsLocked() {
  std::string lines;
  for (const auto& [name, version] : pins_) lines += name + " " + std::to_string(version) + "\n";
  char header[64];
  std::snprintf(header, sizeof(header), "%zu %016llx\n", pins_.size(),
                static_cast<unsigned long long>(XXH3_64bits(lines.data(), lines.size())));
  return WriteFileAtomically(options_.env, JoinPath(dir_, kStorePinsName), std::string(kPinsHeader) + header + lines);
}

Status StoreImpl::AddPin(const std::string& name, uint64_t version) {
  if (name.empty() || std::any_of(name.begin(), name.end(), [](char c) { return c <= ' '; })) {
    return Status::InvalidArgument("a pin name must be non-empty, without spaces or control characters");
  }
  if (version == 0 || version > log_->Newest().version) {
    return Status::InvalidArgument("cannot pin version " + std::to_string(version) + ": the newest is " +
                                   std::to_string(log_->Newest().version));
  }
  std::unique_lock commit_lock = LockSettled();  // vacuum reads pins under it
  // A pin keeps a version; it cannot bring back one vacuum removed.
  const uint64_t oldest = log_->Oldest().version;
  if (oldest > 1 && version < oldest) {
    return Status::NotFound("cannot pin version " + std::to_string(version) + ": the oldest version the log keeps is " +
                            std::to_string(oldest));
  }
  std::lock_guard lock(pins_mu_);
  pins_[name] = version;
  return SavePinsLocked();
}

Status StoreImpl::RemovePin(const std::string& name) {
  std::unique_lock commit_lock = LockSettled();
  std::lock_guard lock(pins_mu_);
  if (pins_.erase(name) == 0) return Status::NotFound("no pin named " + name);
  return SavePinsLocked();
}

std::vector<std::pair<std::string, uint64_t>> StoreImpl::Pins() {
  std::lock_guard lock(pins_mu_);
  return {pins_.begin(), pins_.end()};
}

// ---------------------------------------------------------------------------
// Vacuum (docs/storage_format.md, "Retention and vacuum"): decide the floor,
// find what no version from it on needs — log segments, snapshots, archived
// cuts — delete that in an order that is safe to interrupt, and report.

// One vacuum's findings: what it keeps, and the files it deletes.
struct StoreImpl::VacuumPlan {
  bool dry_run = false;
  uint64_t cutoff_us = 0;  // commits before it are outside the retention window
  uint64_t floor = 0;      // the oldest version that must stay readable
  // The newest snapshot at or before the floor: a rewind to the floor
  // rebuilds from it and the log after it.
  std::optional<uint64_t> base;
  uint64_t log_floor = 0;                   // the log keeps the versions from here on
  std::vector<SnapshotInfo> snapshots;      // those on the history, oldest first
  std::vector<LogSegmentInfo> segments;     // doomed: wholly before log_floor
  std::vector<std::string> snapshot_files;  // doomed, paths
  std::vector<std::string> cuts;            // doomed archived cut directories
};

Status StoreImpl::Vacuum(const VacuumOptions& options, VacuumReport* report) {
  const uint64_t retain = options.retain_us.value_or(options_.retention_us);
  if (retain < options_.min_retention_us && !options.force) {
    return Status::InvalidArgument("a retention of " + Hours(retain) + " is below the safety minimum of " +
                                   Hours(options_.min_retention_us) +
                                   ": time travel and rewind to older versions would fail; force it to go ahead");
  }
  *report = VacuumReport{};
  std::unique_lock lock = LockSettled();
  // Before any log segment goes, the state must not need it to catch up. A
  // dry run deletes nothing and writes nothing (it works on a full disk).
  if (!options.dry_run) SPOOL_RETURN_IF_ERROR(state_->Flush());
  if (log_->Newest().version == 0) return Status::OK();
  VacuumPlan plan;
  plan.dry_run = options.dry_run;
  DecideVacuumFloor(retain, &plan, report);
  SPOOL_RETURN_IF_ERROR(FindDoomedSegments(&plan, report));
  FindDoomedSnapshots(&plan, report);
  SPOOL_RETURN_IF_ERROR(FindDoomedCuts(&plan, report));
  // The snapshots' files are listed last.
  for (const std::string& path : plan.snapshot_files) {
    uint64_t size = 0;
    if (options_.env->GetFileSize(path, &size).ok()) report->bytes += size;
    report->paths.push_back(path);
  }
  if (options.dry_run) return Status::OK();
  SPOOL_RETURN_IF_ERROR(DeleteDoomed(plan, options, report));
  SPOOL_RETURN_IF_ERROR(RecordVacuum(*report));
  lock.unlock();
  // The generation a compaction retired goes now (its last reader gone),
  // so that the space is back when the vacuum returns; commits go on.
  if (report->state_compacted) state_->DiscardNow();
  return Status::OK();
}

// The floor: the newest commit at or before now minus the retention,
// lowered by the durable pins and the live readers, never below the oldest
// version the log has.
void StoreImpl::DecideVacuumFloor(uint64_t retain_us, VacuumPlan* plan, VacuumReport* report) {
  const uint64_t oldest = log_->Oldest().version;
  const uint64_t now = options_.env->NowMicros();
  plan->cutoff_us = now > retain_us ? now - retain_us : 0;
  uint64_t floor = oldest;
  if (uint64_t at = 0; log_->VersionAtTime(plan->cutoff_us, &at).ok()) floor = std::max(floor, at);
  report->held_by = "retention";
  {
    std::lock_guard pins_lock(pins_mu_);
    for (const auto& [name, version] : pins_) {
      if (version < floor) {
        floor = version;
        report->held_by = "pin " + name;
      }
    }
    if (!live_pins_.empty() && *live_pins_.begin() < floor) {
      floor = *live_pins_.begin();
      report->held_by = "a live reader";
    }
  }
  plan->floor = std::max(floor, oldest);
  report->floor_version = plan->floor;
}

// Log segments: those wholly before what a kept version needs. A rewind
// (RewindTo) to a version from the floor on rebuilds it from the newest
// snapshot at or before it and the log after that snapshot: both stay.
Status StoreImpl::FindDoomedSegments(VacuumPlan* plan, VacuumReport* report) {
  SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(&plan->snapshots));
  for (const SnapshotInfo& snapshot : plan->snapshots) {
    if (snapshot.version <= plan->floor) plan->base = snapshot.version;
  }
  plan->log_floor = plan->base ? std::min(plan->floor, *plan->base + 1) : plan->floor;
  const std::vector<LogSegmentInfo> segments = log_->Segments();
  for (size_t i = 0; i + 1 < segments.size() && segments[i].last_version < plan->log_floor; ++i) {
    plan->segments.push_back(segments[i]);
  }
  // Rebuilding the state needs a snapshot at or after the first version
  // kept: take one when the newest is older.
  // (The history reaches the first version kept from the last one deleted.)
  if (!plan->segments.empty() &&
      (plan->snapshots.empty() || plan->snapshots.back().version < plan->segments.back().last_version)) {
    report->snapshot_taken = true;
    if (!plan->dry_run) {
      SPOOL_RETURN_IF_ERROR(TakeSnapshotLocked(nullptr));
      SPOOL_RETURN_IF_ERROR(ListSnapshotFiles(&plan->snapshots));
    }
  }
  const std::string log_dir = JoinPath(dir_, "log");
  for (const LogSegmentInfo& segment : plan->segments) {
    report->paths.push_back(JoinPath(log_dir, segment.file_name));
    report->bytes += segment.file_size_bytes;
    report->log_segments++;
  }
  return Status::OK();
}

// Snapshots: those older than what a kept version can use, and those a
// truncation cut off the history.
void StoreImpl::FindDoomedSnapshots(VacuumPlan* plan, VacuumReport* report) {
  std::vector<std::string> names;
  if (!options_.env->ListDir(snapshot_dir(), &names).ok()) return;
  for (const std::string& name : names) {
    uint64_t epoch = 0, version = 0;
    if (!ParseSnapshotFileName(name, &epoch, &version)) continue;
    const bool on_history = std::any_of(plan->snapshots.begin(), plan->snapshots.end(),
                                        [&](const SnapshotInfo& s) { return s.file_name == name; });
    // The newest snapshot stays, unless (dry run) a newer one would be taken.
    const bool newest_snapshot = !plan->snapshots.empty() && plan->snapshots.back().file_name == name &&
                                 !(plan->dry_run && report->snapshot_taken);
    if (on_history && (version + 1 >= plan->floor || newest_snapshot || version == plan->base)) continue;
    plan->snapshot_files.push_back(JoinPath(snapshot_dir(), name));
    report->snapshots++;
  }
}

// Archived cuts whose every commit is older than the window, and cuts an
// interrupted vacuum left without their COMPLETE marker.
Status StoreImpl::FindDoomedCuts(VacuumPlan* plan, VacuumReport* report) {
  Env* env = options_.env;
  const std::string archive = ArchiveDir();
  std::vector<std::string> names;
  if (!env->ListDir(archive, &names).ok()) return Status::OK();
  for (const std::string& name : names) {
    const std::string cut = JoinPath(archive, name);
    if (ArchivedCutComplete(env, cut)) {
      uint64_t newest_us = 0;
      Status scanned = ScanArchivedCut(env, cut, [&](const LogEntry& e) {
        newest_us = std::max(newest_us, e.timestamp_us);
        return true;
      });
      if (!scanned.ok() && !scanned.IsCorruption() && !scanned.IsNotFound()) return scanned;
      if (newest_us >= plan->cutoff_us) continue;
    }
    plan->cuts.push_back(cut);
    std::vector<std::string> files;
    if (env->ListDir(cut, &files).ok()) {
      for (const std::string& file : files) {
        uint64_t size = 0;
        if (env->GetFileSize(JoinPath(cut, file), &size).ok()) report->bytes += size;
        report->paths.push_back(JoinPath(cut, file));
        report->archive_files++;
      }
    }
  }
  return Status::OK();
}

// Each step is safe to interrupt and a later vacuum finishes it: the log
// records its floor before deleting, a snapshot is one file, and a cut
// loses its manifest and COMPLETE marker first.
Status StoreImpl::DeleteDoomed(const VacuumPlan& plan, const VacuumOptions& options, VacuumReport* report) {
  Env* env = options_.env;
  const uint64_t total = report->paths.size();
  uint64_t done = 0;
  auto progress = [&](uint64_t files) {
    done += files;
    if (options.on_progress) options.on_progress(std::min(done, total), total);
  };
  uint64_t deleted = 0;
  SPOOL_RETURN_IF_ERROR(log_->DeleteSegmentsBefore(plan.log_floor, &deleted));
  progress(deleted);
  SPOOL_KILL_POINT("vacuum.log_segments_deleted");
  for (const std::string& path : plan.snapshot_files) {
    SPOOL_RETURN_IF_ERROR(env->RemoveFile(path));
    SPOOL_KILL_POINT("vacuum.snapshot_deleted");
    progress(1);
  }
  SPOOL_RETURN_IF_ERROR(PruneHistory(plan.floor, report));
  SPOOL_KILL_POINT("vacuum.history_pruned");
  if (!plan.snapshot_files.empty()) SPOOL_RETURN_IF_ERROR(env->SyncDir(snapshot_dir()));
  for (const std::string& cut : plan.cuts) {
    std::vector<std::string> files;
    (void)env->ListDir(cut, &files);
    SPOOL_RETURN_IF_ERROR(RemoveArchivedCut(env, cut));
    SPOOL_KILL_POINT("vacuum.cut_deleted");
    progress(files.size());
  }
  if (!plan.cuts.empty()) SPOOL_RETURN_IF_ERROR(env->SyncDir(ArchiveDir()));
  return Status::OK();
}

// The history index from the floor on: a run at version u answers reads
// as of versions before u, so those at or before the floor answer only
// reads below it, which the log serves (the floor rises with them, in the
// same LMDB transaction: an index never claims versions it lost). Then the
// state's file is compacted when the runs dropped (or earlier batches) left
// much of it free: LMDB reuses free pages but never returns them.
Status StoreImpl::PruneHistory(uint64_t floor, VacuumReport* report) {
  uint64_t current = 0;
  SPOOL_RETURN_IF_ERROR(HistoryFloor(&current));
  std::vector<std::pair<std::string, std::string>> puts;
  if (current < floor) {
    std::string raised;
    PutBigEndian64(&raised, floor);
    puts.emplace_back(std::string(kStateHistoryFloorKey), std::move(raised));
  }
  SPOOL_RETURN_IF_ERROR(state_->Prune(
      kStateHistoryPrefix, PrefixEnd(kStateHistoryPrefix),
      [&](std::string_view key) {
        return key.size() == kStateHistoryKeyBytes && GetBigEndian64(key.substr(1 + 8)) <= floor;
      },
      puts, &report->history_runs));
  constexpr double kCompactFreeShare = 0.25;
  StateStore::Compaction compaction;
  SPOOL_RETURN_IF_ERROR(state_->Compact(kCompactFreeShare, &compaction));
  report->state_compacted = compaction.compacted;
  report->state_bytes_before = compaction.file_bytes_before;
  report->state_bytes_after = compaction.file_bytes_after;
  return Status::OK();
}

// The event that says what a vacuum removed.
Status StoreImpl::RecordVacuum(const VacuumReport& report) {
  Event event;
  event.event_type = "vacuum";
  event.message = "Vacuum removed " + std::to_string(report.paths.size()) + " file(s), " +
                  std::to_string(report.bytes) + " bytes; versions from " + std::to_string(report.floor_version) +
                  " are kept.";
  if (report.state_compacted) {
    event.message += " The state's file was compacted from " + std::to_string(report.state_bytes_before) + " to " +
                     std::to_string(report.state_bytes_after) + " bytes.";
  }
  event.details_json = "{\"floor_version\":" + std::to_string(report.floor_version) +
                       ",\"bytes\":" + std::to_string(report.bytes) +
                       ",\"log_segments\":" + std::to_string(report.log_segments) +
                       ",\"snapshots\":" + std::to_string(report.snapshots) +
                       ",\"archive_files\":" + std::to_string(report.archive_files) +
                       ",\"history_runs\":" + std::to_string(report.history_runs) +
                       ",\"state_compacted\":" + (report.state_compacted ? "true" : "false") +
                       ",\"state_bytes_before\":" + std::to_string(report.state_bytes_before) +
                       ",\"state_bytes_after\":" + std::to_string(report.state_bytes_after) + "}";
  return events_->Append(&event);
}

Status StoreImpl::FlushState() {
  std::unique_lock lock = LockSettled();
  return state_->Flush();
}

StoreStats StoreImpl::Stats() {
  StoreStats stats;
  {
    std::shared_lock lock(catalog_mu_);
    stats = stats_;
  }
  stats.state_batches = state_->stats().batches;
  return stats;
}

}  // namespace spool
