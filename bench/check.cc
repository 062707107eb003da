#include "check.h"

#include <cerrno>
#include <cstring>

namespace spool::bench {

void Expect(const Status& s, std::string_view what) {
  if (!s.ok()) throw BenchError(std::string(what) + ": " + s.ToString());
}

void ExpectSys(bool ok, std::string_view what) {
  if (!ok) throw BenchError(std::string(what) + ": " + std::strerror(errno));
}

}  // namespace spool::bench
