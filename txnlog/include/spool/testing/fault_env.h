// FaultEnv: an Env wrapper that simulates crashes and media faults.
//
// Part of the installed package for testing (spool/testing/, in
// spool::txnlog): an embedder crash-tests its own use of Spool by giving
// LogOptions::env or StoreOptions::env (a store's LMDB state then goes in a
// real StoreOptions::state_dir) a FaultEnv over a MemEnv, crashing at each
// call in turn and checking what reopens. Spool's own crash tests work so.
//
// It passes every call through to a base Env (usually a MemEnv) and keeps,
// beside it, a model of what is durable:
//   * per file (an inode: renames move names, not data): the durable bytes and
//     the ordered list of writes and truncates made since the last Sync();
//   * per directory: the durable set of entries (name -> inode) and the
//     current one; SyncDir makes the current set durable.
// Files that already exist in the base when first touched count as durable.
//
// Crash points. Every mutating call is numbered from 1: File::Write,
// File::Truncate, File::Sync, OpenFile when it creates or truncates a file,
// RemoveFile, RenameFile, LinkFile, CreateDir, RemoveDir, SyncDir. With
// CrashAtCall(k), call k is not performed and it and every later call
// (reads included) return Status::Aborted("simulated crash"): the process is
// dead. SimulateCrash(mode, seed) then rewrites the base Env to the disk that
// survives in `mode`, makes that image the new durable state, and lets the
// Env be used again, as after a reboot.
//
// Crash modes (the README's crash-safety section):
//   kProcessKill  everything written survives, synced or not.
//   kPowerLoss    only synced data survives; unsynced creates, renames and
//                 deletes are undone unless their directory was synced.
//   kPrefix       per file, a random prefix of its unsynced writes survives.
//   kReorder      each unsynced write independently survives or not.
//   kTorn512      unsynced writes split at 512-byte sectors, each sector
//   kTorn4K       (4096-byte sectors) independently kept or dropped.
//   kGarbage      like kTorn4K, but a dropped sector becomes zeros or random
//                 bytes instead of the old contents, and a file may be left
//                 longer than its data.
// In every mode but kProcessKill, unsynced directory operations survive as a
// random prefix (in the order they were made) of those not made durable by a
// SyncDir; in kPowerLoss that prefix is empty.
//
// Media faults (requested explicitly; each also seeded):
//   FlipBit            one bit of a file's durable bytes flips.
//   MisdirectNextWrite the next Write lands `delta` bytes away from its offset.
//   FailReadsOf        every Read of a path returns IOError until cleared.
//   SetSpaceLimit      writes that would grow the sum of file sizes past the
//                      limit fail with NoSpace, changing nothing.
//   FailSyncAtCall     that Sync returns IOError and, as on Linux, the file's
//                      unsynced writes are dropped from the durable model
//                      (they stay readable until a crash).
//
// Every random choice comes from the seed passed in, so a failure replays
// exactly from (workload, crash call, mode, seed).
//
// Thread-safety: all methods may be called concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/env.h"

namespace spool {

enum class CrashMode : unsigned char {
  kProcessKill,
  kPowerLoss,
  kPrefix,
  kReorder,
  kTorn512,
  kTorn4K,
  kGarbage,
};

inline constexpr CrashMode kAllCrashModes[] = {
    CrashMode::kProcessKill, CrashMode::kPowerLoss, CrashMode::kPrefix,  CrashMode::kReorder,
    CrashMode::kTorn512,     CrashMode::kTorn4K,    CrashMode::kGarbage,
};

std::string_view CrashModeName(CrashMode mode);
// Parses a name as printed by CrashModeName ("power-loss"). Errors: InvalidArgument.
Status ParseCrashMode(std::string_view name, CrashMode* mode);

class FaultEnv : public Env {
 public:
  // `base` must outlive this object. Paths are used as given (no
  // canonicalisation): Spool always builds them with JoinPath.
  explicit FaultEnv(Env* base);
  ~FaultEnv() override;

  FaultEnv(const FaultEnv&) = delete;
  FaultEnv& operator=(const FaultEnv&) = delete;

  // --- Env
  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override;
  Status ListDir(const std::string& dir, std::vector<std::string>* names) override;
  bool FileExists(const std::string& path) override;
  Status GetFileSize(const std::string& path, uint64_t* size) override;
  Status RemoveFile(const std::string& path) override;
  Status RenameFile(const std::string& from, const std::string& to) override;
  Status LinkFile(const std::string& from, const std::string& to) override;
  Status CreateDir(const std::string& dir) override;
  Status RemoveDir(const std::string& dir) override;
  Status SyncDir(const std::string& dir) override;
  Status LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) override;
  uint64_t NowMicros() override;

  // --- Crash points
  // Mutating calls made so far (the last crash point number reached).
  uint64_t io_calls() const;
  // Syncs (File::Sync) performed so far; lets tests count fsyncs.
  uint64_t sync_calls() const;
  // Crash at mutating call number `k` (see above); 0 disarms.
  void CrashAtCall(uint64_t k);
  // True once the armed crash point was reached.
  bool crashed() const;
  // Builds the surviving disk in the base Env, resets the durable model to
  // it, disarms the crash point and revives the Env. Handles opened before
  // the crash stay dead (every call returns Aborted). May be called without
  // an armed crash point (crash "now").
  void SimulateCrash(CrashMode mode, uint64_t seed);

  // --- Media faults
  // Flips one bit, chosen by `seed`, within the durable bytes of `path`
  // (a no-op for an empty file). Errors: NotFound.
  Status FlipBit(const std::string& path, uint64_t seed);
  // Flips bit `bit` (0-7) of byte `offset` of `path`, in both the current
  // and the durable contents. Errors: NotFound, InvalidArgument.
  Status FlipBitAt(const std::string& path, uint64_t offset, int bit);
  void MisdirectNextWrite(int64_t delta);
  void FailReadsOf(const std::string& path);
  void ClearReadFaults();
  // 0 removes the limit.
  void SetSpaceLimit(uint64_t bytes);
  // The Sync that would be mutating call number `k` fails instead.
  void FailSyncAtCall(uint64_t k);

 private:
  struct Model;
  class FaultFile;
  std::unique_ptr<Model> model_;
  Env* base_;
};

}  // namespace spool
