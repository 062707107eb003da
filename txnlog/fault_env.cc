// FaultEnv: a model of durability kept beside a base Env (see fault_env.h).
//
// The model covers only the names FaultEnv has touched; everything else in
// the base is left alone and counts as durable.
//   * InodeModel: a file's durable bytes and the writes and truncates made
//     since its last Sync, in order. Renames move names, not inodes.
//   * DirModel: per touched name, the durable entry and the current one, and
//     the ordered directory operations not yet made durable by SyncDir.
//     Directories have ids, not just paths, so a directory removed and made
//     again is a new directory whose entries start empty.
// A crash computes, from the model and the seed, the surviving entries of
// every directory and the surviving bytes of every inode, rewrites the base
// to that image, and then forgets the model: the base is now all durable.
#include "spool/testing/fault_env.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <utility>

#include "model_paths.h"

namespace spool {
namespace {

constexpr std::string_view kCrashMessage = "simulated crash";
constexpr uint64_t kSector512 = 512;
constexpr uint64_t kSector4K = 4096;

// A write of `data` at `offset`, or (is_truncate) a truncate to `offset`.
struct FileOp {
  bool is_truncate = false;
  uint64_t offset = 0;
  std::string data;
};

struct InodeModel {
  std::string durable;
  std::vector<FileOp> pending;
  uint64_t size = 0;      // current size, pending ops included
  bool diverged = false;  // the base holds bytes a failed Sync dropped
};

enum class EntryKind : unsigned char { kFile, kDir };

struct Entry {
  EntryKind kind = EntryKind::kFile;
  uint64_t id = 0;  // of an InodeModel or a DirModel
  bool operator==(const Entry&) const = default;
};
using MaybeEntry = std::optional<Entry>;

struct EntryState {
  MaybeEntry durable;
  MaybeEntry current;
};

// One directory operation; its changes become durable together.
struct DirOp {
  std::vector<std::pair<std::string, MaybeEntry>> changes;
};

struct DirModel {
  std::string path;
  std::map<std::string, EntryState> entries;  // touched names only
  std::vector<DirOp> pending;
};

// The disk a crash leaves, before it is written to the base.
struct Image {
  std::map<uint64_t, std::map<std::string, MaybeEntry>> entries;  // by dir id
  std::map<uint64_t, std::string> contents;                       // by inode id
};

std::string BaseName(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string ChildPath(const std::string& dir, const std::string& name) {
  return dir == "." ? name : JoinPath(dir, name);
}

Status Crashed() { return Status::Aborted(kCrashMessage); }

// Rebuilding the image must not fail on a base that worked a moment ago;
// if it does, the crash test cannot go on meaningfully.
void MustSucceed(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "FaultEnv: %s failed while building a crash image: %s\n", what, s.ToString().c_str());
  std::abort();
}

uint64_t Below(std::mt19937_64& rng, uint64_t n) { return n == 0 ? 0 : rng() % n; }
bool Coin(std::mt19937_64& rng) { return (rng() & 1) != 0; }

std::string RandomBytes(std::mt19937_64& rng, size_t n) {
  std::string bytes(n, '\0');
  for (size_t i = 0; i < n; i += 8) {
    uint64_t word = rng();
    for (size_t j = i; j < n && j < i + 8; ++j, word >>= 8) bytes[j] = static_cast<char>(word & 0xff);
  }
  return bytes;
}

void ApplyWrite(std::string* content, uint64_t offset, std::string_view data) {
  const size_t start = static_cast<size_t>(offset);
  if (content->size() < start + data.size()) content->resize(start + data.size(), '\0');
  content->replace(start, data.size(), data);
}

void ApplyOp(std::string* content, const FileOp& op) {
  if (op.is_truncate) {
    content->resize(static_cast<size_t>(op.offset), '\0');
  } else {
    ApplyWrite(content, op.offset, op.data);
  }
}

std::string ApplyOps(std::string content, const std::vector<FileOp>& ops, size_t count) {
  for (size_t i = 0; i < count && i < ops.size(); ++i) ApplyOp(&content, ops[i]);
  return content;
}

// A dropped sector in kGarbage mode: zeros or random bytes, and, at the end
// of a write that grew the file, possibly the rest of the sector too.
void ApplyGarbage(std::string* content, uint64_t begin, uint64_t end, bool last, std::mt19937_64& rng) {
  const bool zeros = Coin(rng);
  const size_t n = static_cast<size_t>(end - begin);
  ApplyWrite(content, begin, zeros ? std::string(n, '\0') : RandomBytes(rng, n));
  const uint64_t sector_end = (end + kSector4K - 1) / kSector4K * kSector4K;
  if (last && content->size() == end && sector_end > end && Coin(rng)) {
    const size_t extra = static_cast<size_t>(sector_end - end);
    content->append(zeros ? std::string(extra, '\0') : RandomBytes(rng, extra));
  }
}

// Splits `op` at sector boundaries of the file; each piece survives or not.
void ApplyTorn(std::string* content, const FileOp& op, uint64_t sector, bool garbage, std::mt19937_64& rng) {
  if (op.is_truncate) {
    if (Coin(rng)) ApplyOp(content, op);
    return;
  }
  const uint64_t end = op.offset + op.data.size();
  for (uint64_t begin = op.offset; begin < end;) {
    const uint64_t piece_end = std::min(end, (begin / sector + 1) * sector);
    if (Coin(rng)) {
      const size_t from = static_cast<size_t>(begin - op.offset);
      ApplyWrite(content, begin, std::string_view(op.data).substr(from, static_cast<size_t>(piece_end - begin)));
    } else if (garbage) {
      ApplyGarbage(content, begin, piece_end, piece_end == end, rng);
    }
    begin = piece_end;
  }
}

std::string SurvivingContent(const InodeModel& inode, CrashMode mode, std::mt19937_64& rng) {
  const std::vector<FileOp>& ops = inode.pending;
  switch (mode) {
    case CrashMode::kProcessKill:
      return ApplyOps(inode.durable, ops, ops.size());
    case CrashMode::kPowerLoss:
      return inode.durable;
    case CrashMode::kPrefix:
      return ApplyOps(inode.durable, ops, static_cast<size_t>(Below(rng, ops.size() + 1)));
    case CrashMode::kReorder: {
      std::string content = inode.durable;
      for (const FileOp& op : ops) {
        if (Coin(rng)) ApplyOp(&content, op);
      }
      return content;
    }
    case CrashMode::kTorn512:
    case CrashMode::kTorn4K:
    case CrashMode::kGarbage: {
      const uint64_t sector = mode == CrashMode::kTorn512 ? kSector512 : kSector4K;
      std::string content = inode.durable;
      for (const FileOp& op : ops) ApplyTorn(&content, op, sector, mode == CrashMode::kGarbage, rng);
      return content;
    }
  }
  return inode.durable;
}

std::map<std::string, MaybeEntry> SurvivingEntries(const DirModel& dir, CrashMode mode, std::mt19937_64& rng) {
  std::map<std::string, MaybeEntry> entries;
  for (const auto& [name, state] : dir.entries) entries[name] = state.durable;
  size_t keep = 0;
  if (mode == CrashMode::kProcessKill) {
    keep = dir.pending.size();
  } else if (mode != CrashMode::kPowerLoss) {
    keep = static_cast<size_t>(Below(rng, dir.pending.size() + 1));
  }
  for (size_t i = 0; i < keep; ++i) {
    for (const auto& [name, entry] : dir.pending[i].changes) entries[name] = entry;
  }
  return entries;
}

// Holds a base lock until the owner drops it or the process "dies".
struct LockSlot {
  std::unique_ptr<FileLock> base;
};

class FaultLock final : public FileLock {
 public:
  explicit FaultLock(std::shared_ptr<LockSlot> slot) : slot_(std::move(slot)) {}

 private:
  std::shared_ptr<LockSlot> slot_;
};

// All state of a FaultEnv, shared with its open files so that a file may
// outlive the env. Every member is guarded by `mu`.
struct Core {
  explicit Core(Env* base_env) : base(base_env) {}

  std::mutex mu;
  Env* const base;
  uint64_t generation = 0;  // bumped by each crash; older handles are dead
  uint64_t calls = 0;
  uint64_t crash_at = 0;
  uint64_t fail_sync_at = 0;
  uint64_t syncs = 0;
  bool dead = false;
  bool crashed = false;
  std::optional<int64_t> misdirect;
  std::set<std::string> read_faults;
  uint64_t space_limit = 0;
  uint64_t next_id = 1;
  std::map<uint64_t, InodeModel> inodes;
  std::map<uint64_t, DirModel> dirs;
  std::map<std::string, uint64_t> dir_by_path;  // the live directory at a path
  std::vector<std::weak_ptr<LockSlot>> locks;

  Status Alive() const { return dead ? Crashed() : Status::OK(); }

  // Numbers one mutating call; the armed one kills the process.
  Status Step() {
    SPOOL_RETURN_IF_ERROR(Alive());
    if (++calls == crash_at) {
      dead = true;
      crashed = true;
      return Crashed();
    }
    return Status::OK();
  }

  uint64_t NewDir(const std::string& path) {
    const uint64_t id = next_id++;
    dirs[id].path = path;
    dir_by_path[path] = id;
    return id;
  }

  uint64_t NewInode(std::string durable) {
    const uint64_t id = next_id++;
    InodeModel& inode = inodes[id];
    inode.size = durable.size();
    inode.durable = std::move(durable);
    return id;
  }

  // What the base holds at `path`, imported as durable.
  MaybeEntry ImportFromBase(const std::string& path) {
    std::vector<std::string> names;
    if (base->ListDir(path, &names).ok()) {
      auto it = dir_by_path.find(path);
      return Entry{EntryKind::kDir, it != dir_by_path.end() ? it->second : NewDir(path)};
    }
    if (!base->FileExists(path)) return std::nullopt;
    std::string content;
    MustSucceed(ReadFileToString(base, path, &content), "importing a file");
    return Entry{EntryKind::kFile, NewInode(std::move(content))};
  }

  // The state of `name` in directory `dir_id`, imported on first touch.
  EntryState& Track(uint64_t dir_id, const std::string& name) {
    DirModel& dir = dirs[dir_id];
    auto it = dir.entries.find(name);
    if (it != dir.entries.end()) return it->second;
    const MaybeEntry entry = ImportFromBase(ChildPath(dir.path, name));
    return dirs[dir_id].entries[name] = EntryState{entry, entry};
  }

  // The model of the live directory at `path`; its own entry in its parent
  // (and so on up to a root) is tracked too, so a crash can reach it.
  uint64_t DirId(const std::string& path) {
    auto it = dir_by_path.find(path);
    if (it != dir_by_path.end()) return it->second;
    const uint64_t id = NewDir(path);
    if (!IsModelRoot(path)) Track(DirId(DirName(path)), BaseName(path));
    return id;
  }

  void Record(uint64_t dir_id, DirOp op) {
    DirModel& dir = dirs[dir_id];
    for (const auto& [name, entry] : op.changes) dir.entries[name].current = entry;
    dir.pending.push_back(std::move(op));
  }

  void MakeDirDurable(const std::string& path) {
    auto it = dir_by_path.find(path);
    if (it == dir_by_path.end()) return;
    DirModel& dir = dirs[it->second];
    for (auto& [name, state] : dir.entries) state.durable = state.current;
    dir.pending.clear();
  }

  void AddFileOp(uint64_t inode_id, FileOp op) {
    InodeModel& inode = inodes[inode_id];
    inode.size = op.is_truncate ? op.offset : std::max(inode.size, op.offset + op.data.size());
    inode.pending.push_back(std::move(op));
  }

  void MakeFileDurable(uint64_t inode_id) {
    InodeModel& inode = inodes[inode_id];
    inode.durable = ApplyOps(std::move(inode.durable), inode.pending, inode.pending.size());
    inode.pending.clear();
  }

  // Sum of the current sizes of the files FaultEnv knows, plus `extra_id`.
  uint64_t KnownBytes(uint64_t extra_id) const {
    std::set<uint64_t> ids{extra_id};
    for (const auto& [dir_id, dir] : dirs) {
      for (const auto& [name, state] : dir.entries) {
        if (state.current && state.current->kind == EntryKind::kFile) ids.insert(state.current->id);
      }
    }
    uint64_t total = 0;
    for (uint64_t id : ids) {
      auto it = inodes.find(id);
      if (it != inodes.end()) total += it->second.size;
    }
    return total;
  }

  Status CheckSpace(uint64_t inode_id, uint64_t new_end) const {
    if (space_limit == 0) return Status::OK();
    auto it = inodes.find(inode_id);
    const uint64_t size = it == inodes.end() ? 0 : it->second.size;
    if (new_end <= size) return Status::OK();
    if (KnownBytes(inode_id) + (new_end - size) <= space_limit) return Status::OK();
    return Status::NoSpace("simulated full disk");
  }

  uint64_t Misdirected(uint64_t offset) {
    if (!misdirect) return offset;
    const int64_t delta = *misdirect;
    if (delta >= 0) return offset + static_cast<uint64_t>(delta);
    const uint64_t back = static_cast<uint64_t>(-(delta + 1)) + 1;
    return back > offset ? 0 : offset - back;
  }

  Image BuildImage(CrashMode mode, uint64_t seed) const;
  void WriteImage(const Image& image);
  void WriteDir(const Image& image, uint64_t dir_id, const std::string& path);
  void WriteFileEntry(const Image& image, uint64_t dir_id, const std::string& name, const Entry& target);
  void ResetAfterCrash();
  Status FlipAt(const std::string& path, uint64_t offset, int bit);
};

Image Core::BuildImage(CrashMode mode, uint64_t seed) const {
  std::mt19937_64 rng(seed);
  Image image;
  for (const auto& [id, dir] : dirs) image.entries[id] = SurvivingEntries(dir, mode, rng);
  for (const auto& [id, inode] : inodes) image.contents[id] = SurvivingContent(inode, mode, rng);
  return image;
}

void Core::WriteImage(const Image& image) {
  for (const char* root : {".", "/"}) {
    auto it = dir_by_path.find(root);
    if (it != dir_by_path.end()) WriteDir(image, it->second, root);
  }
}

// Makes the base directory at `path` hold exactly the surviving entries of
// `dir_id` (for the names the model tracks; others are left alone).
void Core::WriteDir(const Image& image, uint64_t dir_id, const std::string& path) {
  for (const auto& [name, target] : image.entries.at(dir_id)) {
    const std::string full = ChildPath(path, name);
    if (!target) {
      MustSucceed(RemoveTree(base, full), "removing a lost entry");
    } else if (target->kind == EntryKind::kFile) {
      WriteFileEntry(image, dir_id, name, *target);
    } else {
      auto live = dir_by_path.find(full);
      std::vector<std::string> names;
      const bool is_dir = base->ListDir(full, &names).ok();
      // Another incarnation (or a file) holds the path: start afresh. Every
      // name of a directory that was removed is tracked, so none is lost.
      if (!is_dir || live == dir_by_path.end() || live->second != target->id) {
        MustSucceed(RemoveTree(base, full), "replacing a directory");
      }
      MustSucceed(base->CreateDir(full), "restoring a directory");
      WriteDir(image, target->id, full);
    }
  }
}

void Core::WriteFileEntry(const Image& image, uint64_t dir_id, const std::string& name, const Entry& target) {
  const DirModel& dir = dirs.at(dir_id);
  const InodeModel& inode = inodes.at(target.id);
  const std::string& content = image.contents.at(target.id);
  // Unchanged: the base already holds exactly the surviving bytes.
  if (dir.entries.at(name).current == target && inode.pending.empty() && !inode.diverged) return;
  const std::string full = ChildPath(dir.path, name);
  std::vector<std::string> names;
  if (base->ListDir(full, &names).ok()) MustSucceed(RemoveTree(base, full), "replacing a directory by a file");
  std::unique_ptr<File> file;
  MustSucceed(base->OpenFile(full, OpenMode::kTruncate, &file), "rewriting a file");
  MustSucceed(file->Write(0, content), "rewriting a file");
  MustSucceed(file->Close(), "rewriting a file");
}

void Core::ResetAfterCrash() {
  inodes.clear();
  dirs.clear();
  dir_by_path.clear();
  ++generation;
  calls = 0;
  syncs = 0;
  crash_at = 0;
  fail_sync_at = 0;
  dead = false;
  crashed = false;
  misdirect.reset();
  // The process died, so its locks are released.
  for (const std::weak_ptr<LockSlot>& weak : locks) {
    if (std::shared_ptr<LockSlot> slot = weak.lock()) slot->base.reset();
  }
  locks.clear();
}

Status Core::FlipAt(const std::string& path, uint64_t offset, int bit) {
  const EntryState& state = Track(DirId(DirName(path)), BaseName(path));
  if (!state.current || state.current->kind != EntryKind::kFile) return Status::NotFound("flip bit: " + path);
  InodeModel& inode = inodes[state.current->id];
  if (offset >= inode.durable.size() && offset >= inode.size) {
    return Status::InvalidArgument("flip bit: offset beyond the end of " + path);
  }
  const char mask = static_cast<char>(1 << bit);
  if (offset < inode.durable.size()) inode.durable[static_cast<size_t>(offset)] ^= mask;
  if (offset >= inode.size) return Status::OK();
  std::unique_ptr<File> file;
  std::string byte;
  SPOOL_RETURN_IF_ERROR(base->OpenFile(path, OpenMode::kReadWrite, &file));
  SPOOL_RETURN_IF_ERROR(file->Read(offset, 1, &byte));
  if (byte.size() != 1) return Status::IOError("flip bit: short read of " + path);
  byte[0] = static_cast<char>(byte[0] ^ mask);
  SPOOL_RETURN_IF_ERROR(file->Write(offset, byte));
  return file->Close();
}

}  // namespace

struct FaultEnv::Model {
  std::shared_ptr<Core> core;
};

// A handle on a file. `inode_id` is 0 for a read-only handle, which the
// model does not need to follow.
class FaultEnv::FaultFile final : public File {
 public:
  FaultFile(std::shared_ptr<Core> core, std::unique_ptr<File> base, std::string path, uint64_t inode_id)
      : core_(std::move(core)),
        base_(std::move(base)),
        path_(std::move(path)),
        inode_id_(inode_id),
        generation_(core_->generation) {}

  Status Read(uint64_t offset, size_t n, std::string* out) override {
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      SPOOL_RETURN_IF_ERROR(Usable());
      if (core_->read_faults.count(path_) > 0) return Status::IOError("simulated read error on " + path_);
    }
    return base_->Read(offset, n, out);
  }

  Status Write(uint64_t offset, std::string_view data) override {
    std::lock_guard<std::mutex> lock(core_->mu);
    SPOOL_RETURN_IF_ERROR(Usable());
    SPOOL_RETURN_IF_ERROR(core_->Step());
    const uint64_t landed = core_->Misdirected(offset);
    SPOOL_RETURN_IF_ERROR(core_->CheckSpace(inode_id_, landed + data.size()));
    SPOOL_RETURN_IF_ERROR(base_->Write(landed, data));
    core_->misdirect.reset();
    // An empty write changes nothing, not even the size (as pwrite).
    if (inode_id_ != 0 && !data.empty()) core_->AddFileOp(inode_id_, FileOp{false, landed, std::string(data)});
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lock(core_->mu);
    SPOOL_RETURN_IF_ERROR(Usable());
    SPOOL_RETURN_IF_ERROR(core_->Step());
    SPOOL_RETURN_IF_ERROR(base_->Truncate(size));
    if (inode_id_ != 0) core_->AddFileOp(inode_id_, FileOp{true, size, {}});
    return Status::OK();
  }

  Status Sync() override {
    std::lock_guard<std::mutex> lock(core_->mu);
    SPOOL_RETURN_IF_ERROR(Usable());
    SPOOL_RETURN_IF_ERROR(core_->Step());
    if (core_->calls == core_->fail_sync_at && inode_id_ != 0) {
      // As on Linux: the dirty pages are dropped from the write-back queue,
      // so the data stays readable but never becomes durable.
      InodeModel& inode = core_->inodes[inode_id_];
      inode.pending.clear();
      inode.diverged = true;
      return Status::IOError("simulated fsync failure on " + path_);
    }
    SPOOL_RETURN_IF_ERROR(base_->Sync());
    if (inode_id_ != 0) core_->MakeFileDurable(inode_id_);
    ++core_->syncs;
    return Status::OK();
  }

  Status Size(uint64_t* size) override {
    std::lock_guard<std::mutex> lock(core_->mu);
    SPOOL_RETURN_IF_ERROR(Usable());
    return base_->Size(size);
  }

  Status Close() override {
    std::lock_guard<std::mutex> lock(core_->mu);
    Status usable = Usable();
    Status closed = base_->Close();
    return usable.ok() ? closed : usable;
  }

 private:
  // REQUIRES: core_->mu is held.
  Status Usable() const {
    if (generation_ != core_->generation) return Status::Aborted("simulated crash: handle opened before the crash");
    return core_->Alive();
  }

  std::shared_ptr<Core> core_;
  std::unique_ptr<File> base_;
  const std::string path_;
  const uint64_t inode_id_;
  const uint64_t generation_;
};

std::string_view CrashModeName(CrashMode mode) {
  switch (mode) {
    case CrashMode::kProcessKill:
      return "process-kill";
    case CrashMode::kPowerLoss:
      return "power-loss";
    case CrashMode::kPrefix:
      return "prefix";
    case CrashMode::kReorder:
      return "reorder";
    case CrashMode::kTorn512:
      return "torn-512";
    case CrashMode::kTorn4K:
      return "torn-4k";
    case CrashMode::kGarbage:
      return "garbage";
  }
  return "unknown";
}

Status ParseCrashMode(std::string_view name, CrashMode* mode) {
  for (CrashMode candidate : kAllCrashModes) {
    if (CrashModeName(candidate) == name) {
      *mode = candidate;
      return Status::OK();
    }
  }
  return Status::InvalidArgument("unknown crash mode \"" + std::string(name) + "\"");
}

FaultEnv::FaultEnv(Env* base) : model_(std::make_unique<Model>(Model{std::make_shared<Core>(base)})), base_(base) {}
FaultEnv::~FaultEnv() = default;

Status FaultEnv::OpenFile(const std::string& raw_path, OpenMode mode, std::unique_ptr<File>* file) {
  Core& core = *model_->core;
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  std::unique_ptr<File> base_file;
  if (mode == OpenMode::kReadOnly) {
    SPOOL_RETURN_IF_ERROR(base_->OpenFile(path, mode, &base_file));
    *file = std::make_unique<FaultFile>(model_->core, std::move(base_file), path, 0);
    return Status::OK();
  }
  const uint64_t dir_id = core.DirId(DirName(path));
  const std::string name = BaseName(path);
  const MaybeEntry current = core.Track(dir_id, name).current;
  const bool creates = !current && mode != OpenMode::kReadWrite;
  const bool truncates = current && current->kind == EntryKind::kFile && mode == OpenMode::kTruncate;
  if (creates || truncates) SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->OpenFile(path, mode, &base_file));
  if (!creates && !current) return Status::IOError("FaultEnv: " + path + " was changed behind its back");
  uint64_t inode_id = 0;
  if (creates) {
    inode_id = core.NewInode({});
    core.Record(dir_id, DirOp{{{name, Entry{EntryKind::kFile, inode_id}}}});
  } else {
    inode_id = current->id;
    if (truncates) core.AddFileOp(inode_id, FileOp{true, 0, {}});
  }
  *file = std::make_unique<FaultFile>(model_->core, std::move(base_file), path, inode_id);
  return Status::OK();
}

Status FaultEnv::ListDir(const std::string& dir, std::vector<std::string>* names) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  SPOOL_RETURN_IF_ERROR(model_->core->Alive());
  return base_->ListDir(NormalizeModelPath(dir), names);
}

bool FaultEnv::FileExists(const std::string& path) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  return model_->core->Alive().ok() && base_->FileExists(NormalizeModelPath(path));
}

Status FaultEnv::GetFileSize(const std::string& path, uint64_t* size) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  SPOOL_RETURN_IF_ERROR(model_->core->Alive());
  return base_->GetFileSize(NormalizeModelPath(path), size);
}

Status FaultEnv::RemoveFile(const std::string& raw_path) {
  Core& core = *model_->core;
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  const uint64_t dir_id = core.DirId(DirName(path));
  const std::string name = BaseName(path);
  (void)core.Track(dir_id, name);
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->RemoveFile(path));
  core.Record(dir_id, DirOp{{{name, std::nullopt}}});
  return Status::OK();
}

Status FaultEnv::RenameFile(const std::string& raw_from, const std::string& raw_to) {
  Core& core = *model_->core;
  const std::string from = NormalizeModelPath(raw_from);
  const std::string to = NormalizeModelPath(raw_to);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  const uint64_t from_dir = core.DirId(DirName(from));
  const uint64_t to_dir = core.DirId(DirName(to));
  const std::string from_name = BaseName(from);
  const std::string to_name = BaseName(to);
  const MaybeEntry moved = core.Track(from_dir, from_name).current;
  (void)core.Track(to_dir, to_name);
  if (moved && moved->kind == EntryKind::kDir) {
    return Status::NotSupported("FaultEnv does not model renaming a directory: " + from);
  }
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->RenameFile(from, to));
  if (from == to || !moved) return Status::OK();
  if (from_dir == to_dir) {
    core.Record(from_dir, DirOp{{{to_name, moved}, {from_name, std::nullopt}}});
  } else {
    // Two directories: each change becomes durable with its own directory.
    core.Record(to_dir, DirOp{{{to_name, moved}}});
    core.Record(from_dir, DirOp{{{from_name, std::nullopt}}});
  }
  return Status::OK();
}

// A second name of the same inode: both names see its writes, and a crash
// treats them alike (the image writes the inode's surviving bytes under
// each surviving name).
Status FaultEnv::LinkFile(const std::string& raw_from, const std::string& raw_to) {
  Core& core = *model_->core;
  const std::string from = NormalizeModelPath(raw_from);
  const std::string to = NormalizeModelPath(raw_to);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  const uint64_t to_dir = core.DirId(DirName(to));
  const std::string to_name = BaseName(to);
  const MaybeEntry linked = core.Track(core.DirId(DirName(from)), BaseName(from)).current;
  (void)core.Track(to_dir, to_name);
  if (linked && linked->kind == EntryKind::kDir) return Status::IOError("link " + from + ": is a directory");
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->LinkFile(from, to));
  if (linked) core.Record(to_dir, DirOp{{{to_name, linked}}});
  return Status::OK();
}

Status FaultEnv::CreateDir(const std::string& raw_dir) {
  Core& core = *model_->core;
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  if (IsModelRoot(dir)) {
    SPOOL_RETURN_IF_ERROR(core.Step());
    return base_->CreateDir(dir);
  }
  const uint64_t parent = core.DirId(DirName(dir));
  const std::string name = BaseName(dir);
  const MaybeEntry current = core.Track(parent, name).current;
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->CreateDir(dir));
  if (!current) core.Record(parent, DirOp{{{name, Entry{EntryKind::kDir, core.NewDir(dir)}}}});
  return Status::OK();
}

Status FaultEnv::RemoveDir(const std::string& raw_dir) {
  Core& core = *model_->core;
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  if (IsModelRoot(dir)) {
    SPOOL_RETURN_IF_ERROR(core.Step());
    return base_->RemoveDir(dir);
  }
  const uint64_t parent = core.DirId(DirName(dir));
  const std::string name = BaseName(dir);
  (void)core.Track(parent, name);
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->RemoveDir(dir));
  core.Record(parent, DirOp{{{name, std::nullopt}}});
  core.dir_by_path.erase(dir);
  return Status::OK();
}

Status FaultEnv::SyncDir(const std::string& raw_dir) {
  Core& core = *model_->core;
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Step());
  SPOOL_RETURN_IF_ERROR(base_->SyncDir(dir));
  core.MakeDirDurable(dir);
  return Status::OK();
}

// Not a crash point, but the lock file it may create is an unsynced create.
Status FaultEnv::LockFile(const std::string& raw_path, std::unique_ptr<FileLock>* lock_out) {
  Core& core = *model_->core;
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(core.mu);
  SPOOL_RETURN_IF_ERROR(core.Alive());
  const uint64_t dir_id = core.DirId(DirName(path));
  const std::string name = BaseName(path);
  const bool existed = core.Track(dir_id, name).current.has_value();
  auto slot = std::make_shared<LockSlot>();
  SPOOL_RETURN_IF_ERROR(base_->LockFile(path, &slot->base));
  if (!existed) core.Record(dir_id, DirOp{{{name, Entry{EntryKind::kFile, core.NewInode({})}}}});
  core.locks.push_back(slot);
  *lock_out = std::make_unique<FaultLock>(std::move(slot));
  return Status::OK();
}

uint64_t FaultEnv::NowMicros() { return base_->NowMicros(); }

uint64_t FaultEnv::io_calls() const {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  return model_->core->calls;
}

uint64_t FaultEnv::sync_calls() const {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  return model_->core->syncs;
}

void FaultEnv::CrashAtCall(uint64_t k) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->crash_at = k;
}

bool FaultEnv::crashed() const {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  return model_->core->crashed;
}

void FaultEnv::SimulateCrash(CrashMode mode, uint64_t seed) {
  Core& core = *model_->core;
  std::lock_guard<std::mutex> lock(core.mu);
  core.WriteImage(core.BuildImage(mode, seed));
  core.ResetAfterCrash();
}

Status FaultEnv::FlipBit(const std::string& raw_path, uint64_t seed) {
  Core& core = *model_->core;
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(core.mu);
  const EntryState& state = core.Track(core.DirId(DirName(path)), BaseName(path));
  if (!state.current || state.current->kind != EntryKind::kFile) return Status::NotFound("flip bit: " + path);
  const uint64_t durable_size = core.inodes[state.current->id].durable.size();
  if (durable_size == 0) return Status::OK();
  std::mt19937_64 rng(seed);
  const uint64_t offset = Below(rng, durable_size);
  return core.FlipAt(path, offset, static_cast<int>(Below(rng, 8)));
}

Status FaultEnv::FlipBitAt(const std::string& raw_path, uint64_t offset, int bit) {
  if (bit < 0 || bit > 7) return Status::InvalidArgument("flip bit: bit must be 0..7");
  std::lock_guard<std::mutex> lock(model_->core->mu);
  return model_->core->FlipAt(NormalizeModelPath(raw_path), offset, bit);
}

void FaultEnv::MisdirectNextWrite(int64_t delta) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->misdirect = delta;
}

void FaultEnv::FailReadsOf(const std::string& path) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->read_faults.insert(NormalizeModelPath(path));
}

void FaultEnv::ClearReadFaults() {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->read_faults.clear();
}

void FaultEnv::SetSpaceLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->space_limit = bytes;
}

void FaultEnv::FailSyncAtCall(uint64_t k) {
  std::lock_guard<std::mutex> lock(model_->core->mu);
  model_->core->fail_sync_at = k;
}

}  // namespace spool
