// Counts as people read them: "1,234,567". The one home of digit grouping
// for the CLI, the progress bar, the benchmarks' tables and the crash
// campaigns' summaries.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace spool::cli {

// "1234567" -> "1,234,567"; a leading '-' stays in front of the groups.
// `digits` is a plain integer's text (as std::to_string or "{:.0f}" write it).
std::string GroupThousands(std::string_view digits);

// 1234567 -> "1,234,567"
std::string FormatCount(uint64_t n);

}  // namespace spool::cli
