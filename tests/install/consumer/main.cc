// Appends a commit to a log through the installed library and reads it back.
#include <cstdio>
#include <memory>

#include "spool/txnlog/log.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  spool::LogOptions options;
  std::unique_ptr<spool::Log> log;
  spool::Status s = spool::Log::Open(options, argv[1], &log);
  spool::LogCommit commit;
  if (s.ok()) s = log->Append(spool::LogWrite{"WRITE", "hello from an embedder"}, &commit);
  spool::LogEntry entry;
  if (s.ok()) s = log->Read(commit.position.version, &entry);
  if (!s.ok() || entry.body != "hello from an embedder") {
    std::fprintf(stderr, "consumer: %s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("consumer: committed and read back version %llu\n",
              static_cast<unsigned long long>(commit.position.version));
  return 0;
}
