#include "machine_limits.h"

#include <algorithm>
#include <iostream>

#include "cpu_limits.h"
#include "disk_limits.h"
#include "files.h"
#include "records.h"

namespace spool::bench {
namespace {

constexpr uint64_t kMinSequentialBytes = 1 << 20;
constexpr size_t kHashBufferBytes = 1 << 20;
constexpr double kCpuSecondsFull = 0.3;
constexpr double kCpuSecondsMin = 0.01;

void RunDiskLimits(const BenchConfig& config, const std::string& dir, Results* results) {
  const uint64_t blocks = config.Scaled(kLimitSyncedBlocks);
  const uint64_t bytes = config.Scaled(kLimitSequentialBytes, kMinSequentialBytes);
  SyncAll();
  const SyncRate append = AppendSyncRate(dir + "/append", blocks);
  results->Add(kLimits, kMachine, metric::kAppendSyncPerS, append.per_s);
  results->Add(kLimits, kMachine, metric::kAppendSyncP50Us, append.p50_us);
  SyncAll();
  const SyncRate overwrite = OverwriteSyncRate(dir + "/overwrite", blocks);
  results->Add(kLimits, kMachine, metric::kOverwriteSyncPerS, overwrite.per_s);
  results->Add(kLimits, kMachine, metric::kOverwriteSyncP50Us, overwrite.p50_us);
  SyncAll();
  results->Add(kLimits, kMachine, metric::kSeqBufferedMBPerS, SequentialWriteMBPerS(dir + "/seq", bytes, false));
  SyncAll();
  results->Add(kLimits, kMachine, metric::kSeqDirectMBPerS, SequentialWriteMBPerS(dir + "/direct", bytes, true));
}

void RunCpuLimits(const BenchConfig& config, Results* results) {
  const double seconds = std::clamp(kCpuSecondsFull * config.scale, kCpuSecondsMin, kCpuSecondsFull);
  results->Add(kLimits, kMachine, metric::kXxh3MBPerS, Xxh3MBPerS(MakeRows(kHashBufferBytes), seconds));
  const ZstdRates zstd = Zstd1Rates(MakeRows(kZstdBatchBytes), seconds);
  results->Add(kLimits, kMachine, metric::kZstdCompressMBPerS, zstd.compress_mb_per_s);
  results->Add(kLimits, kMachine, metric::kZstdDecompressMBPerS, zstd.decompress_mb_per_s);
  results->Add(kLimits, kMachine, metric::kZstdRatio, zstd.ratio);
}

}  // namespace

void RunLimits(const BenchConfig& config, int rep, Results* results) {
  const std::string dir = config.RunDir(kLimits, kMachine, rep);
  FreshDir(dir);
  RunDiskLimits(config, dir, results);
  RunCpuLimits(config, results);
  RemoveDir(dir);
  std::cerr << "limits: rep " << rep << "/" << config.reps << " done\n";
}

}  // namespace spool::bench
