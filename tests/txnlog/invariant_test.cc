// The always-on invariant checks: a broken invariant stops the process,
// naming it, in every build (this one is Release, NDEBUG set).
#include "invariant.h"

#include <gtest/gtest.h>

namespace spool {
namespace {

TEST(InvariantDeathTest, ABrokenInvariantStopsTheProcessNamingIt) {
  int versions = 2;
  EXPECT_DEATH(SPOOL_CHECK(versions == 3, "three versions"),
               "spool: invariant violated: three versions \\(versions == 3 is false at .*invariant_test.cc:[0-9]+\\)");
  EXPECT_DEATH(SPOOL_UNREACHABLE("appends run in groups"), "invariant violated: appends run in groups \\(unreachable");
}

TEST(InvariantDeathTest, AKeptInvariantChangesNothing) {
  int evaluated = 0;
  SPOOL_CHECK(++evaluated == 1, "evaluated once");
  EXPECT_EQ(evaluated, 1);
}

TEST(InvariantDeathTest, ADebugCheckRunsWhereDebugChecksAreOn) {
#if !defined(NDEBUG) || defined(SPOOL_DCHECKS)
  EXPECT_DEATH(SPOOL_DCHECK(1 + 1 == 3, "arithmetic"), "invariant violated: arithmetic");
#else
  int evaluated = 0;
  SPOOL_DCHECK(++evaluated == 5, "not evaluated in a release");
  EXPECT_EQ(evaluated, 0);
#endif
}

}  // namespace
}  // namespace spool
