// Appends a commit to a log through the installed library and reads it back;
// then does the same on the installed testing Envs across a simulated power
// cut, as an embedder crash-testing its own use of Spool would.
#include <cstdio>
#include <memory>
#include <string>

#include "spool/testing/fault_env.h"
#include "spool/testing/mem_env.h"
#include "spool/txnlog/log.h"

namespace {

// Appends `body` to the log in `dir` and returns its version; 0 on error.
uint64_t Append(const spool::LogOptions& options, const std::string& dir, const std::string& body) {
  std::unique_ptr<spool::Log> log;
  spool::Status s = spool::Log::Open(options, dir, &log);
  spool::LogCommit commit;
  if (s.ok()) s = log->Append(spool::LogWrite{"WRITE", body}, &commit);
  if (!s.ok()) std::fprintf(stderr, "consumer: %s\n", s.ToString().c_str());
  return s.ok() ? commit.position.version : 0;
}

// Whether the log in `dir` holds `body` at `version`.
bool Holds(const spool::LogOptions& options, const std::string& dir, uint64_t version, const std::string& body) {
  std::unique_ptr<spool::Log> log;
  spool::Status s = spool::Log::Open(options, dir, &log);
  spool::LogEntry entry;
  if (s.ok()) s = log->Read(version, &entry);
  if (!s.ok()) std::fprintf(stderr, "consumer: %s\n", s.ToString().c_str());
  return s.ok() && entry.body == body;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  spool::LogOptions options;
  const uint64_t version = Append(options, argv[1], "hello from an embedder");
  if (version == 0 || !Holds(options, argv[1], version, "hello from an embedder")) return 1;
  std::printf("consumer: committed and read back version %llu\n", static_cast<unsigned long long>(version));

  // A synced commit survives a power cut: the crash model of spool/testing/.
  spool::MemEnv mem;
  spool::FaultEnv fault(&mem);
  options.env = &fault;
  const uint64_t synced = Append(options, "/log", "synced before the power cut");
  if (synced == 0) return 1;
  fault.SimulateCrash(spool::CrashMode::kPowerLoss, 1);
  if (!Holds(options, "/log", synced, "synced before the power cut")) return 1;
  std::printf("consumer: version %llu survived a simulated power cut\n", static_cast<unsigned long long>(synced));
  return 0;
}
