#include "engine_runs.h"

#include "check.h"
#include "files.h"

namespace spool::bench {

void ForEachEngineRun(const BenchConfig& config, const std::string& workload, int rep, const EngineOptions& options,
                      const std::function<void(EngineRun&)>& body, const Baseline& baseline) {
  if (baseline) {
    const std::string dir = config.RunDir(workload, "raw", rep);
    FreshDir(dir);
    SyncAll();
    baseline(dir);
    RemoveDir(dir);
  }
  for (const std::string& name : config.engines) {
    std::unique_ptr<Engine> engine = MakeEngine(name, options);
    if (engine == nullptr) throw BenchError("unknown engine " + name);
    const std::string dir = config.RunDir(workload, name, rep);
    FreshDir(dir);
    SyncAll();
    Expect(engine->Open(dir), name + " open");
    EngineRun run{*engine, dir, rep};
    body(run);
    Expect(engine->Close(), name + " close");
    engine.reset();
    RemoveDir(dir);
  }
}

}  // namespace spool::bench
