// Units and constants the benchmarks share.
#pragma once

#include <cstdint>
#include <limits>

namespace spool::bench {

// Reports give sizes in decimal megabytes.
inline constexpr double kBytesPerMB = 1e6;

// A figure that was not measured: a table's empty cell, a plot's gap.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Where the synthetic clock of generated records starts, in microseconds
// (2023-11-14 22:13:20 UTC).
inline constexpr int64_t kEpochUs = 1'700'000'000'000'000;

}  // namespace spool::bench
