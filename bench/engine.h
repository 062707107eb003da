// Engine: one store under test — Spool's log or a peer — behind the few
// calls the workloads need. Every implementation commits durably: Commit
// returns only after fsync/fdatasync of everything needed to recover it.
//
// Thread-safety: Commit may be called from several threads at once (W2);
// Open, ReadBack and Close are called by one thread with no Commit running.
// Lifetimes: Close (or the destructor) releases every file of the store.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "records.h"
#include "spool/txnlog/status.h"

namespace spool {
struct StoreOptions;
}

namespace spool::bench {

// The options every Spool store of the run opens with: the defaults, but
// for the LMDB map --state-map-gib sets (valgrind cannot reserve the
// default 256 GiB, nor can a process under ulimit -v).
StoreOptions SpoolStoreOptions();
void SetSpoolStateMapBytes(uint64_t bytes);

struct EngineOptions {
  // W7: keep everything written in the engine's log rather than flushing it
  // into tables or checkpointing it, so that a reopen has the whole log to
  // recover. `log_bytes` is how much will be written.
  bool hold_whole_log = false;
  uint64_t log_bytes = 0;
};

class Engine {
 public:
  virtual ~Engine() = default;

  virtual std::string_view name() const = 0;
  // How the engine's log files end (".log", "-wal", …); empty for engines
  // without a write-ahead log (LMDB).
  virtual std::string_view log_file_suffix() const = 0;

  // Opens the store in `dir` (which must exist), creating the store when
  // missing and recovering it when it was not shut down cleanly.
  virtual Status Open(const std::string& dir) = 0;
  // One durable commit holding a put of every record.
  virtual Status Commit(std::span<const Record> records) = 0;
  // Reads `last` back and checks it; forces any recovery an engine defers to
  // its first read. Errors: NotFound, Corruption (a different value).
  virtual Status ReadBack(const Record& last) = 0;
  // Closes the store; its files are closed when this returns. Idempotent.
  virtual Status Close() = 0;

  // Commits per data sync since Open, for engines that count them.
  virtual std::optional<double> CommitsPerSync() { return std::nullopt; }
};

// Engine names in the order their results are printed.
inline constexpr std::string_view kSpool = "spool";
inline constexpr std::string_view kSpoolGroup = "spool-group";
inline constexpr std::string_view kRocksDb = "rocksdb";
inline constexpr std::string_view kLmdb = "lmdb";
inline constexpr std::string_view kSqlite = "sqlite";
inline constexpr std::string_view kLevelDb = "leveldb";

// The engines run by default: Spool's log (kSync) and the four peers.
std::vector<std::string> DefaultEngines();
// Every known name, including the optional "spool-group" (kGroupWindow).
std::vector<std::string> KnownEngines();
// A human label: "Spool", "RocksDB", …
std::string_view DisplayName(std::string_view engine);

// A new, closed engine; null for an unknown name.
std::unique_ptr<Engine> MakeEngine(std::string_view engine, const EngineOptions& options);

// One factory per implementation file.
std::unique_ptr<Engine> NewSpoolEngine(bool group_window);
std::unique_ptr<Engine> NewRocksDbEngine(const EngineOptions& options);
std::unique_ptr<Engine> NewLmdbEngine();
std::unique_ptr<Engine> NewSqliteEngine(const EngineOptions& options);
std::unique_ptr<Engine> NewLevelDbEngine(const EngineOptions& options);

}  // namespace spool::bench
