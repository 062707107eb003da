// The checksum line of Spool's small text files (an archived cut's
// manifest, a topic's TOPIC): the file's last line is "checksum <XXH3-64
// of every byte before the line, 16 hex digits>", so that a changed digit
// or a cut line reads as damage instead of as another value.
#pragma once

#include <string>
#include <string_view>

#include "spool/txnlog/status.h"

namespace spool {

// `text` (whole lines) followed by its checksum line.
std::string WithChecksumLine(std::string_view text);

// The text before the checksum line that ends `file`, checked.
// Errors: Corruption saying what is wrong (no checksum line, a mismatch).
Status StripChecksumLine(std::string_view file, std::string_view* text);

}  // namespace spool
