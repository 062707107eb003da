#include "spool/txnlog/checksum.h"

#include <xxhash.h>

#include <cinttypes>
#include <cstdio>

namespace spool {
namespace {

constexpr std::string_view kPrefix = "checksum ";
constexpr size_t kLineBytes = kPrefix.size() + 16 + 1;

std::string Hex(uint64_t v) {
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016" PRIx64, v);
  return std::string(digits, 16);
}

}  // namespace

std::string WithChecksumLine(std::string_view text) {
  std::string out(text);
  out += kPrefix;
  out += Hex(XXH3_64bits(text.data(), text.size()));
  out += '\n';
  return out;
}

Status StripChecksumLine(std::string_view file, std::string_view* text) {
  if (file.size() < kLineBytes || file.back() != '\n' ||
      file.substr(file.size() - kLineBytes, kPrefix.size()) != kPrefix ||
      (file.size() > kLineBytes && file[file.size() - kLineBytes - 1] != '\n')) {
    return Status::Corruption("no checksum line at the end: cut short or changed");
  }
  const std::string_view body = file.substr(0, file.size() - kLineBytes);
  const std::string_view stored = file.substr(file.size() - kLineBytes + kPrefix.size(), 16);
  if (stored != Hex(XXH3_64bits(body.data(), body.size()))) return Status::Corruption("checksum mismatch");
  *text = body;
  return Status::OK();
}

}  // namespace spool
