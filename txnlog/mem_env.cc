// MemEnv: every file and directory lives in one map from path to node,
// guarded by one mutex. A node of a file points at a shared inode, so open
// handles keep working on the data after the name is renamed or removed, as
// on POSIX. Directories are explicit entries; "." and "/" always exist.
#include "spool/testing/mem_env.h"

#include <map>
#include <mutex>
#include <set>
#include <utility>

#include "model_paths.h"

namespace spool {
namespace {

constexpr uint64_t kClockStartMicros = 1'700'000'000'000'000;

struct Inode {
  std::string data;
};

struct Node {
  bool is_dir = false;
  std::shared_ptr<Inode> inode;  // null for a directory
};

// The prefix shared by the paths of the entries of `dir`.
std::string ChildPrefix(const std::string& dir) { return dir == "/" ? dir : dir + "/"; }

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

struct MemState {
  std::mutex mu;
  std::map<std::string, Node> nodes;  // by normalised path, roots excluded
  std::set<std::string> locks;        // paths locked by a live MemLock
  uint64_t now_micros = kClockStartMicros;

  // REQUIRES: mu is held.
  bool IsDir(const std::string& path) const {
    if (IsModelRoot(path)) return true;
    auto it = nodes.find(path);
    return it != nodes.end() && it->second.is_dir;
  }

  // REQUIRES: mu is held.
  bool ParentExists(const std::string& path) const { return IsDir(DirName(path)); }

  // The names of the entries of `dir`. REQUIRES: mu is held.
  std::vector<std::string> Children(const std::string& dir) const {
    std::vector<std::string> names;
    if (dir == ".") {
      for (const auto& [path, node] : nodes) {
        if (path.find('/') == std::string::npos) names.push_back(path);
      }
      return names;
    }
    const std::string prefix = ChildPrefix(dir);
    for (auto it = nodes.lower_bound(prefix); it != nodes.end() && StartsWith(it->first, prefix); ++it) {
      std::string_view rest = std::string_view(it->first).substr(prefix.size());
      if (!rest.empty() && rest.find('/') == std::string_view::npos) names.emplace_back(rest);
    }
    return names;
  }

  // REQUIRES: mu is held.
  bool HasChildren(const std::string& dir) const { return !Children(dir).empty(); }
};

class MemFile final : public File {
 public:
  MemFile(std::shared_ptr<MemState> state, std::shared_ptr<Inode> inode, std::string path, bool writable)
      : state_(std::move(state)), inode_(std::move(inode)), path_(std::move(path)), writable_(writable) {}

  Status Read(uint64_t offset, size_t n, std::string* out) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    SPOOL_RETURN_IF_ERROR(CheckOpen());
    const std::string& data = inode_->data;
    if (offset >= data.size()) {
      out->clear();
    } else {
      out->assign(data, static_cast<size_t>(offset), n);
    }
    return Status::OK();
  }

  Status Write(uint64_t offset, std::string_view data) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    SPOOL_RETURN_IF_ERROR(CheckWritable());
    if (offset > kMaxFileBytes || data.size() > kMaxFileBytes - offset) {
      return Status::IOError("write " + path_ + ": offset beyond the maximum file size");
    }
    if (data.empty()) return Status::OK();  // as pwrite: no change, not even the size
    std::string& bytes = inode_->data;
    const size_t start = static_cast<size_t>(offset);
    if (bytes.size() < start + data.size()) bytes.resize(start + data.size(), '\0');
    bytes.replace(start, data.size(), data);
    return Status::OK();
  }

  Status Truncate(uint64_t size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    SPOOL_RETURN_IF_ERROR(CheckWritable());
    if (size > kMaxFileBytes) return Status::IOError("truncate " + path_ + ": size beyond the maximum file size");
    inode_->data.resize(static_cast<size_t>(size), '\0');
    return Status::OK();
  }

  Status Sync() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    return CheckWritable();
  }

  Status Size(uint64_t* size) override {
    std::lock_guard<std::mutex> lock(state_->mu);
    SPOOL_RETURN_IF_ERROR(CheckOpen());
    *size = inode_->data.size();
    return Status::OK();
  }

  Status Close() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    closed_ = true;
    return Status::OK();
  }

 private:
  // Keeps a stray huge offset from allocating all memory.
  static constexpr uint64_t kMaxFileBytes = uint64_t{1} << 40;

  Status CheckOpen() const {
    if (closed_) return Status::IOError(path_ + ": file is closed");
    return Status::OK();
  }

  Status CheckWritable() const {
    SPOOL_RETURN_IF_ERROR(CheckOpen());
    if (!writable_) return Status::IOError(path_ + ": file is open read-only");
    return Status::OK();
  }

  std::shared_ptr<MemState> state_;
  std::shared_ptr<Inode> inode_;
  const std::string path_;
  const bool writable_;
  bool closed_ = false;  // guarded by state_->mu
};

class MemLock final : public FileLock {
 public:
  MemLock(std::shared_ptr<MemState> state, std::string path) : state_(std::move(state)), path_(std::move(path)) {}
  ~MemLock() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->locks.erase(path_);
  }

 private:
  std::shared_ptr<MemState> state_;
  std::string path_;
};

}  // namespace

struct MemEnv::State : MemState {};

MemEnv::MemEnv() : state_(std::make_shared<State>()) {}
MemEnv::~MemEnv() = default;

void MemEnv::CopyFrom(const MemEnv& other) {
  if (&other == this) return;
  std::map<std::string, Node> nodes;
  uint64_t now_micros = 0;
  {
    std::lock_guard<std::mutex> lock(other.state_->mu);
    std::map<const Inode*, std::shared_ptr<Inode>> copies;  // hard links share their copy
    for (const auto& [path, node] : other.state_->nodes) {
      Node copy{node.is_dir, nullptr};
      if (node.inode != nullptr) {
        std::shared_ptr<Inode>& inode = copies[node.inode.get()];
        if (inode == nullptr) inode = std::make_shared<Inode>(*node.inode);
        copy.inode = inode;
      }
      nodes.emplace(path, std::move(copy));
    }
    now_micros = other.state_->now_micros;
  }
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->nodes = std::move(nodes);
  state_->now_micros = now_micros;
}

Status MemEnv::OpenFile(const std::string& raw_path, OpenMode mode, std::unique_ptr<File>* file) {
  const std::string path = NormalizeModelPath(raw_path);
  if (path.empty() || IsModelRoot(path)) return Status::IOError("open " + path + ": not a file");
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->nodes.find(path);
  if (it == state_->nodes.end()) {
    if (mode == OpenMode::kReadOnly || mode == OpenMode::kReadWrite) return Status::NotFound("open " + path);
    if (!state_->ParentExists(path)) return Status::NotFound("open " + path + ": no parent directory");
    it = state_->nodes.emplace(path, Node{false, std::make_shared<Inode>()}).first;
  }
  if (it->second.is_dir) return Status::IOError("open " + path + ": is a directory");
  if (mode == OpenMode::kTruncate) it->second.inode->data.clear();
  *file = std::make_unique<MemFile>(state_, it->second.inode, path, mode != OpenMode::kReadOnly);
  return Status::OK();
}

Status MemEnv::ListDir(const std::string& raw_dir, std::vector<std::string>* names) {
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(state_->mu);
  if (!IsModelRoot(dir)) {
    auto it = state_->nodes.find(dir);
    if (it == state_->nodes.end()) return Status::NotFound("list " + dir);
    if (!it->second.is_dir) return Status::IOError("list " + dir + ": not a directory");
  }
  *names = state_->Children(dir);
  return Status::OK();
}

bool MemEnv::FileExists(const std::string& raw_path) {
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(state_->mu);
  return IsModelRoot(path) || state_->nodes.count(path) > 0;
}

Status MemEnv::GetFileSize(const std::string& raw_path, uint64_t* size) {
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->nodes.find(path);
  if (IsModelRoot(path) || (it != state_->nodes.end() && it->second.is_dir)) {
    return Status::IOError("size of " + path + ": is a directory");
  }
  if (it == state_->nodes.end()) return Status::NotFound("size of " + path);
  *size = it->second.inode->data.size();
  return Status::OK();
}

Status MemEnv::RemoveFile(const std::string& raw_path) {
  const std::string path = NormalizeModelPath(raw_path);
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->nodes.find(path);
  if (IsModelRoot(path) || (it != state_->nodes.end() && it->second.is_dir)) {
    return Status::IOError("remove " + path + ": is a directory");
  }
  if (it == state_->nodes.end()) return Status::NotFound("remove " + path);
  state_->nodes.erase(it);
  return Status::OK();
}

Status MemEnv::LinkFile(const std::string& raw_from, const std::string& raw_to) {
  const std::string from = NormalizeModelPath(raw_from);
  const std::string to = NormalizeModelPath(raw_to);
  std::lock_guard<std::mutex> lock(state_->mu);
  auto src = state_->nodes.find(from);
  if (src == state_->nodes.end()) return Status::NotFound("link " + from + ": no such file");
  if (src->second.is_dir) return Status::IOError("link " + from + ": is a directory");
  if (!state_->ParentExists(to)) return Status::NotFound("link to " + to + ": no parent directory");
  if (state_->nodes.count(to) != 0) return Status::IOError("link to " + to + ": target exists");
  state_->nodes[to] = src->second;  // the same inode
  return Status::OK();
}

Status MemEnv::RenameFile(const std::string& raw_from, const std::string& raw_to) {
  const std::string from = NormalizeModelPath(raw_from);
  const std::string to = NormalizeModelPath(raw_to);
  std::lock_guard<std::mutex> lock(state_->mu);
  auto src = state_->nodes.find(from);
  if (src == state_->nodes.end()) return Status::NotFound("rename " + from + ": no such file");
  if (to.empty() || IsModelRoot(to)) return Status::IOError("rename to " + to + ": invalid target");
  if (!state_->ParentExists(to)) return Status::NotFound("rename to " + to + ": no parent directory");
  if (from == to) return Status::OK();
  auto dst = state_->nodes.find(to);
  const bool target_is_dir = dst != state_->nodes.end() && dst->second.is_dir;
  if (!src->second.is_dir) {
    if (target_is_dir) return Status::IOError("rename to " + to + ": is a directory");
    Node node = src->second;
    state_->nodes.erase(src);
    state_->nodes[to] = std::move(node);
    return Status::OK();
  }
  // A directory: the target must be absent or an empty directory, and not
  // below the source.
  if (dst != state_->nodes.end() && (!target_is_dir || state_->HasChildren(to))) {
    return Status::IOError("rename to " + to + ": target exists");
  }
  if (StartsWith(to, from + "/")) return Status::IOError("rename " + from + ": target is inside the source");
  std::vector<std::pair<std::string, Node>> moved;
  const std::string prefix = from + "/";
  for (auto it = state_->nodes.lower_bound(prefix); it != state_->nodes.end() && StartsWith(it->first, prefix);) {
    moved.emplace_back(to + "/" + it->first.substr(prefix.size()), std::move(it->second));
    it = state_->nodes.erase(it);
  }
  state_->nodes.erase(from);
  state_->nodes[to] = Node{true, nullptr};
  for (auto& [path, node] : moved) state_->nodes[path] = std::move(node);
  return Status::OK();
}

Status MemEnv::CreateDir(const std::string& raw_dir) {
  const std::string dir = NormalizeModelPath(raw_dir);
  if (dir.empty()) return Status::IOError("mkdir: empty path");
  std::lock_guard<std::mutex> lock(state_->mu);
  if (IsModelRoot(dir)) return Status::OK();
  auto it = state_->nodes.find(dir);
  if (it != state_->nodes.end()) {
    return it->second.is_dir ? Status::OK() : Status::IOError("mkdir " + dir + ": a file has that name");
  }
  if (!state_->ParentExists(dir)) return Status::NotFound("mkdir " + dir + ": no parent directory");
  state_->nodes.emplace(dir, Node{true, nullptr});
  return Status::OK();
}

Status MemEnv::RemoveDir(const std::string& raw_dir) {
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(state_->mu);
  if (IsModelRoot(dir)) return Status::IOError("rmdir " + dir + ": cannot remove a root");
  auto it = state_->nodes.find(dir);
  if (it == state_->nodes.end()) return Status::NotFound("rmdir " + dir);
  if (!it->second.is_dir) return Status::IOError("rmdir " + dir + ": not a directory");
  if (state_->HasChildren(dir)) return Status::IOError("rmdir " + dir + ": directory not empty");
  state_->nodes.erase(it);
  return Status::OK();
}

Status MemEnv::SyncDir(const std::string& raw_dir) {
  const std::string dir = NormalizeModelPath(raw_dir);
  std::lock_guard<std::mutex> lock(state_->mu);
  if (IsModelRoot(dir)) return Status::OK();
  auto it = state_->nodes.find(dir);
  if (it == state_->nodes.end()) return Status::NotFound("sync directory " + dir);
  if (!it->second.is_dir) return Status::IOError("sync directory " + dir + ": not a directory");
  return Status::OK();
}

Status MemEnv::LockFile(const std::string& raw_path, std::unique_ptr<FileLock>* lock_out) {
  const std::string path = NormalizeModelPath(raw_path);
  if (path.empty() || IsModelRoot(path)) return Status::IOError("lock " + path + ": not a file");
  std::lock_guard<std::mutex> lock(state_->mu);
  auto it = state_->nodes.find(path);
  if (it == state_->nodes.end()) {
    if (!state_->ParentExists(path)) return Status::NotFound("lock " + path + ": no parent directory");
    it = state_->nodes.emplace(path, Node{false, std::make_shared<Inode>()}).first;
  }
  if (it->second.is_dir) return Status::IOError("lock " + path + ": is a directory");
  if (!state_->locks.insert(path).second) return Status::Busy("lock " + path + " is held by another handle");
  *lock_out = std::make_unique<MemLock>(state_, path);
  return Status::OK();
}

uint64_t MemEnv::NowMicros() {
  std::lock_guard<std::mutex> lock(state_->mu);
  return state_->now_micros++;
}

void MemEnv::SetNowMicros(uint64_t micros) {
  std::lock_guard<std::mutex> lock(state_->mu);
  state_->now_micros = micros;
}

}  // namespace spool
