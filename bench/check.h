// How the benchmark gives up: a failed engine call or system call means the
// run cannot go on, so it throws BenchError, which main() reports before
// exiting non-zero. No exception leaves the benchmark's own code.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool::bench {

class BenchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws BenchError("<what>: <status>") unless `s` is OK.
void Expect(const Status& s, std::string_view what);
// Throws BenchError("<what>: <strerror(errno)>") unless `ok`.
void ExpectSys(bool ok, std::string_view what);

}  // namespace spool::bench
