#include "engine.h"

#include <array>

#include "spool/storage/store.h"

namespace spool::bench {
namespace {

struct EngineName {
  std::string_view engine;
  std::string_view display;
  bool by_default;
};

constexpr std::array<EngineName, 6> kEngines = {{
    {kSpool, "Spool", true},
    {kSpoolGroup, "Spool (group window)", false},
    {kRocksDb, "RocksDB", true},
    {kLmdb, "LMDB", true},
    {kSqlite, "SQLite", true},
    {kLevelDb, "LevelDB", true},
}};

}  // namespace

std::vector<std::string> DefaultEngines() {
  std::vector<std::string> names;
  for (const EngineName& e : kEngines) {
    if (e.by_default) names.emplace_back(e.engine);
  }
  return names;
}

std::vector<std::string> KnownEngines() {
  std::vector<std::string> names;
  for (const EngineName& e : kEngines) names.emplace_back(e.engine);
  return names;
}

std::string_view DisplayName(std::string_view engine) {
  for (const EngineName& e : kEngines) {
    if (e.engine == engine) return e.display;
  }
  return engine;
}

std::unique_ptr<Engine> MakeEngine(std::string_view engine, const EngineOptions& options) {
  if (engine == kSpool) return NewSpoolEngine(false);
  if (engine == kSpoolGroup) return NewSpoolEngine(true);
  if (engine == kRocksDb) return NewRocksDbEngine(options);
  if (engine == kLmdb) return NewLmdbEngine();
  if (engine == kSqlite) return NewSqliteEngine(options);
  if (engine == kLevelDb) return NewLevelDbEngine(options);
  return nullptr;
}

namespace {
uint64_t state_map_bytes = StoreOptions().state_map_bytes;
}  // namespace

StoreOptions SpoolStoreOptions() {
  StoreOptions options;
  options.state_map_bytes = state_map_bytes;
  return options;
}

void SetSpoolStateMapBytes(uint64_t bytes) { state_map_bytes = bytes; }

}  // namespace spool::bench
