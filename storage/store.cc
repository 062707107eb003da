#include "spool/storage/store.h"

#include <algorithm>

namespace spool {
namespace {

constexpr std::string_view kMarkerName = "STORE";
constexpr std::string_view kLockName = "LOCK";
constexpr std::string_view kMarker = "spool-store 1\n";

// Makes `dir` a store (marker written atomically) or checks that it is one.
Status PrepareDirectory(const StoreOptions& options, const std::string& dir) {
  Env* env = options.env;
  std::vector<std::string> names;
  Status listed = env->ListDir(dir, &names);
  if (!listed.ok() && !listed.IsNotFound()) return listed;
  const std::string marker_path = JoinPath(dir, kMarkerName);
  if (listed.ok() && std::find(names.begin(), names.end(), kMarkerName) != names.end()) {
    std::string marker;
    SPOOL_RETURN_IF_ERROR(ReadFileToString(env, marker_path, &marker));
    if (marker != kMarker) return Status::Corruption(marker_path + " is not a store marker this version reads");
    return Status::OK();
  }
  if (!options.create_if_missing) return Status::NotFound(dir + " is not a Spool store");
  // An interrupted creation leaves at most these behind.
  const bool empty = !listed.ok() || std::all_of(names.begin(), names.end(), [](const std::string& n) {
    return n == kLockName || n == std::string(kMarkerName) + ".tmp";
  });
  if (!empty) return Status::InvalidArgument(dir + " holds other files and is not a Spool store; nothing was changed");
  SPOOL_RETURN_IF_ERROR(env->CreateDir(dir));
  SPOOL_RETURN_IF_ERROR(env->SyncDir(DirName(dir)));
  return WriteFileAtomically(env, marker_path, kMarker);
}

}  // namespace

Store::Store(std::string dir, std::unique_ptr<FileLock> lock) : dir_(std::move(dir)), lock_(std::move(lock)) {}

Store::~Store() {
  events_.reset();
  log_.reset();
}

Status Store::Open(const StoreOptions& options, const std::string& dir, std::unique_ptr<Store>* store) {
  SPOOL_RETURN_IF_ERROR(PrepareDirectory(options, dir));
  std::unique_ptr<FileLock> lock;
  Status s = options.env->LockFile(JoinPath(dir, kLockName), &lock);
  if (s.IsBusy()) return Status::Busy("store " + dir + " is open in another process or handle");
  SPOOL_RETURN_IF_ERROR(s);
  std::unique_ptr<Store> opened(new Store(dir, std::move(lock)));
  LogOptions log_options = options.log;
  log_options.env = options.env;
  SPOOL_RETURN_IF_ERROR(Log::Open(log_options, JoinPath(dir, "log"), &opened->log_).WithContext("store log"));
  SPOOL_RETURN_IF_ERROR(EventLog::Open(options.env, JoinPath(dir, "events"), &opened->events_).WithContext("event log"));
  *store = std::move(opened);
  return Status::OK();
}

}  // namespace spool
