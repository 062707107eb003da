// Paths as the in-memory file systems (MemEnv, and FaultEnv's model of the
// disk) key them: one spelling per file, so that "./a/" and "a" name the
// same entry. Private to txnlog/.
#pragma once

#include <string>
#include <string_view>

namespace spool {

// "a/b/" -> "a/b", "./a" -> "a"; "/" stays "/".
inline std::string NormalizeModelPath(std::string_view path) {
  while (path.size() > 2 && path.starts_with("./")) path.remove_prefix(2);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  return std::string(path);
}

// Whether a normalized path names the root of the file system.
inline bool IsModelRoot(std::string_view path) { return path == "." || path == "/"; }

}  // namespace spool
