#include "log_fixture.h"

#include <cstdlib>

#include "spool/txnlog/log.h"

namespace spool::fuzz {

void BuildFixtureLog(MemEnv* env, std::map<uint64_t, std::string>* bodies) {
  LogOptions options;
  options.env = env;
  options.new_store_id = kFixtureStoreId;
  options.segment_size_bytes = 64 << 10;
  options.preallocate_bytes = 4096;
  std::unique_ptr<Log> log;
  if (!Log::Open(options, kFixtureDir, &log).ok()) std::abort();
  auto append = [&](uint64_t i) {
    std::string body = "row-" + std::to_string(i) + ":";
    const size_t size = i % 10 == 0 ? 9000 : (i % 7 == 0 ? 0 : 120);
    while (body.size() < size) body.push_back(static_cast<char>('a' + (i * 31 + body.size()) % 26));
    if (size == 0) body.clear();
    LogCommit commit;
    if (!log->Append(LogWrite{i % 2 == 0 ? "WRITE" : "STREAMING UPDATE", body}, &commit).ok()) std::abort();
    (*bodies)[commit.position.version] = body;
  };
  for (uint64_t i = 1; i <= 60; ++i) append(i);
  if (!log->TruncateAfter(40, /*discard_suffix=*/false, nullptr).ok()) std::abort();
  bodies->erase(bodies->upper_bound(40), bodies->end());
  for (uint64_t i = 61; i <= 70; ++i) append(i);
}

}  // namespace spool::fuzz
