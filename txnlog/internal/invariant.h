// Always-on checks of Spool's own invariants.
//
// SPOOL_CHECK(condition, invariant) stops the process, naming the invariant,
// the condition and where, when `condition` is false. It is for what can only
// be false through a bug in Spool or memory it no longer can trust — a group
// commit's queue out of order, a record encoded to another size than it
// measured — where going on would write damage to disk. It is compiled in
// every build: keep it off the hot loops (one check per record or per batch,
// not per byte or per row) and the condition free of side effects.
//
// Bad input — a malformed file, record, spec or request — is never checked
// this way: it is a Status naming what is wrong, and changes nothing.
//
// SPOOL_DCHECK is the same check where it would cost too much in a release
// (a row validated again after its encoder validated it): compiled only
// without NDEBUG, and into the sanitizer builds, which define SPOOL_DCHECKS.
#pragma once

namespace spool::internal {

// Prints "spool: invariant violated: ..." to stderr and aborts.
[[noreturn]] void InvariantViolated(const char* invariant, const char* condition, const char* file, int line);

}  // namespace spool::internal

#define SPOOL_CHECK(condition, invariant)                                              \
  do {                                                                                 \
    if (__builtin_expect(!(condition), 0)) {                                           \
      ::spool::internal::InvariantViolated(invariant, #condition, __FILE__, __LINE__); \
    }                                                                                  \
  } while (false)

// Stops the process where control cannot reach unless an invariant broke.
#define SPOOL_UNREACHABLE(invariant) ::spool::internal::InvariantViolated(invariant, "unreachable", __FILE__, __LINE__)

#if !defined(NDEBUG) || defined(SPOOL_DCHECKS)
#define SPOOL_DCHECK(condition, invariant) SPOOL_CHECK(condition, invariant)
#else
#define SPOOL_DCHECK(condition, invariant) \
  do {                                     \
    if (false) (void)(condition);          \
  } while (false)
#endif
