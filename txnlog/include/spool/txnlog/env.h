// Env: the only way Spool touches files, directories, durability barriers,
// locks and the clock (LevelDB's idea). Production code uses PosixEnv via
// Env::Default(); tests wrap an Env in FaultEnv (spool/testing/fault_env.h)
// to count every I/O call as a crash point and to build the disk a crash
// would leave.
//
// Durability vocabulary used throughout Spool:
//   File::Sync()     makes the file's data and size durable (fdatasync). It
//                    does NOT make the file's directory entry durable.
//   Env::SyncDir(d)  makes the entries of directory d durable: creates,
//                    renames and deletes of names in d done before the call.
// A newly created file therefore survives a power loss only after both its
// Sync() and a SyncDir() of its directory.
//
// Thread-safety: an Env is safe for concurrent use. A File may be read
// concurrently; Write, Truncate and Sync of one File need external
// synchronisation with each other.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool {

// An open file. All reads and writes are positional: the handle keeps no
// cursor. The destructor closes the file; errors on close are reported only
// by an explicit Close().
class File {
 public:
  virtual ~File() = default;

  // Reads up to `n` bytes at `offset` into `*out` (replacing its contents).
  // Fewer bytes are returned at end of file; zero bytes past it.
  // Errors: IOError.
  virtual Status Read(uint64_t offset, size_t n, std::string* out) = 0;

  // Writes `data` at `offset`, extending the file (with zeros in any gap) if
  // needed. Not durable until Sync(). Errors: IOError, NoSpace.
  virtual Status Write(uint64_t offset, std::string_view data) = 0;

  // Sets the file's size. Not durable until Sync(). Errors: IOError.
  virtual Status Truncate(uint64_t size) = 0;

  // Makes every completed Write and Truncate of this file durable
  // (fdatasync). After a failed Sync the file's unsynced data may already be
  // lost; callers must treat the failure as fatal, never retry and trust.
  // Errors: IOError.
  virtual Status Sync() = 0;

  // The file's current size (including unsynced writes). Errors: IOError.
  virtual Status Size(uint64_t* size) = 0;

  // Idempotent. Errors: IOError (what close(2) reports).
  virtual Status Close() = 0;
};

// An exclusive lock on a file, held until the object is destroyed.
class FileLock {
 public:
  virtual ~FileLock() = default;
};

enum class OpenMode : unsigned char {
  kReadOnly,   // must exist; Write/Truncate/Sync fail
  kReadWrite,  // must exist; contents kept
  kCreate,     // created if missing; contents kept
  kTruncate,   // created if missing; truncated to zero length
};

class Env {
 public:
  virtual ~Env() = default;

  // The process-wide PosixEnv. Never destroyed.
  static Env* Default();

  // Errors: NotFound (kReadOnly/kReadWrite on a missing file), IOError.
  virtual Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) = 0;

  // The names (not paths) of the entries of `dir`, without "." and "..", in
  // no particular order. Errors: NotFound, IOError.
  virtual Status ListDir(const std::string& dir, std::vector<std::string>* names) = 0;

  virtual bool FileExists(const std::string& path) = 0;
  // Errors: NotFound, IOError.
  virtual Status GetFileSize(const std::string& path, uint64_t* size) = 0;
  // Errors: NotFound, IOError.
  virtual Status RemoveFile(const std::string& path) = 0;
  // Atomically replaces `to` if it exists. Errors: NotFound, IOError.
  virtual Status RenameFile(const std::string& from, const std::string& to) = 0;
  // Makes `to` a second name of the file `from` (a hard link): one file, two
  // names, no bytes copied. Durable once `to`'s directory is synced.
  // Errors: NotFound, IOError (also when `to` exists).
  virtual Status LinkFile(const std::string& from, const std::string& to) = 0;
  // OK if the directory already exists. Errors: NotFound (parent), IOError.
  virtual Status CreateDir(const std::string& dir) = 0;
  // Removes an empty directory. Errors: NotFound, IOError.
  virtual Status RemoveDir(const std::string& dir) = 0;
  // Makes the entries of `dir` durable (see the top of this file). Errors:
  // NotFound, IOError.
  virtual Status SyncDir(const std::string& dir) = 0;

  // Takes an exclusive lock on `path` (created if missing). Errors: Busy when
  // another holder has it, IOError.
  virtual Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) = 0;

  // Wall-clock time in microseconds since the Unix epoch.
  virtual uint64_t NowMicros() = 0;
};

// An Env that forwards every call to another; subclasses override what they
// want to change (LevelDB's EnvWrapper). `target` must outlive it.
class EnvWrapper : public Env {
 public:
  explicit EnvWrapper(Env* target) : target_(target) {}
  Env* target() const { return target_; }

  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override {
    return target_->OpenFile(path, mode, file);
  }
  Status ListDir(const std::string& dir, std::vector<std::string>* names) override {
    return target_->ListDir(dir, names);
  }
  bool FileExists(const std::string& path) override { return target_->FileExists(path); }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return target_->GetFileSize(path, size); }
  Status RemoveFile(const std::string& path) override { return target_->RemoveFile(path); }
  Status RenameFile(const std::string& from, const std::string& to) override { return target_->RenameFile(from, to); }
  Status LinkFile(const std::string& from, const std::string& to) override { return target_->LinkFile(from, to); }
  Status CreateDir(const std::string& dir) override { return target_->CreateDir(dir); }
  Status RemoveDir(const std::string& dir) override { return target_->RemoveDir(dir); }
  Status SyncDir(const std::string& dir) override { return target_->SyncDir(dir); }
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override {
    return target_->LockFile(path, lock);
  }
  uint64_t NowMicros() override { return target_->NowMicros(); }

 private:
  Env* target_;
};

// Reads the whole file at `path` into `*out`. Errors: NotFound, IOError.
Status ReadFileToString(Env* env, const std::string& path, std::string* out);

// Replaces the file at `path` with `data` so that a crash at any point leaves
// either the old contents or the new ones: writes `path`.tmp, syncs it,
// renames it over `path` and syncs the directory. Errors: IOError, NoSpace
// (the file or its directory could not be written; `path` is unchanged).
Status WriteFileAtomically(Env* env, const std::string& path, std::string_view data);

// Writes `data` over the file at `path` in place (created if missing, cut
// to its length), not synced: for a file whose loss, tearing or staleness
// its reader detects and can do without — a digest, a marker, an index
// kept for speed. Replacing a file by a rename or a truncation to zero
// would make ext4 write it back at once; an unlink costs as much. On error
// the file is removed. Errors: IOError, NoSpace.
Status WriteFileInPlace(Env* env, const std::string& path, std::string_view data);

// "dir/name"
std::string JoinPath(std::string_view dir, std::string_view name);
// The directory part of `path` ("." when there is none).
std::string DirName(std::string_view path);

// Removes `path` and everything below it. OK if it does not exist.
// Errors: IOError (what could not be removed, named; what was removed
// stays removed).
Status RemoveTree(Env* env, const std::string& path);

}  // namespace spool
