#include "invariant.h"

#include <cstdio>
#include <cstdlib>

namespace spool::internal {

void InvariantViolated(const char* invariant, const char* condition, const char* file, int line) {
  std::fprintf(stderr, "spool: invariant violated: %s (%s is false at %s:%d)\n", invariant, condition, file, line);
  std::fflush(stderr);
  std::abort();
}

}  // namespace spool::internal
