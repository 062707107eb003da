#include "spool/txnlog/env.h"

#include "kill_point.h"

namespace spool {

std::string JoinPath(std::string_view dir, std::string_view name) {
  std::string path(dir);
  if (!path.empty() && path.back() != '/') path += '/';
  path += name;
  return path;
}

std::string DirName(std::string_view path) {
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

Status ReadFileToString(Env* env, const std::string& path, std::string* out) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kReadOnly, &file));
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(file->Size(&size));
  SPOOL_RETURN_IF_ERROR(file->Read(0, static_cast<size_t>(size), out));
  return file->Close();
}

Status WriteFileAtomically(Env* env, const std::string& path, std::string_view data) {
  const std::string tmp = path + ".tmp";
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(tmp, OpenMode::kTruncate, &file));
  SPOOL_RETURN_IF_ERROR(file->Write(0, data));
  SPOOL_RETURN_IF_ERROR(file->Sync());
  SPOOL_RETURN_IF_ERROR(file->Close());
  SPOOL_KILL_POINT("file.atomic.synced");
  SPOOL_RETURN_IF_ERROR(env->RenameFile(tmp, path));
  SPOOL_KILL_POINT("file.atomic.renamed");
  return env->SyncDir(DirName(path));
}

Status WriteFileInPlace(Env* env, const std::string& path, std::string_view data) {
  std::unique_ptr<File> file;
  uint64_t size = 0;
  Status s = env->OpenFile(path, OpenMode::kCreate, &file);
  if (s.ok()) s = file->Write(0, data);
  if (s.ok()) s = file->Size(&size);
  if (s.ok() && size > data.size()) s = file->Truncate(data.size());
  if (s.ok()) s = file->Close();
  if (!s.ok()) (void)env->RemoveFile(path);
  return s;
}

Status RemoveTree(Env* env, const std::string& path) {
  std::vector<std::string> names;
  Status s = env->ListDir(path, &names);
  if (s.IsNotFound()) {
    if (!env->FileExists(path)) return Status::OK();
    return env->RemoveFile(path);
  }
  if (!s.ok()) {
    // Not a directory: a plain file.
    return env->RemoveFile(path);
  }
  for (const std::string& name : names) SPOOL_RETURN_IF_ERROR(RemoveTree(env, JoinPath(path, name)));
  return env->RemoveDir(path);
}

}  // namespace spool
