// Fuzz target: recovery over a damaged log directory. The input is a
// program of up to 32 damage operations (6 bytes each: op, file, 32-bit
// argument) applied to the segments of a fixed, valid log of several
// segments, one truncation and its archived cut (left whole): truncate a
// file at any byte, flip a bit, remove a file, duplicate a segment under
// another number, swap two files, overwrite bytes with garbage. Then the
// log is opened, strictly and in salvage mode, and read. Oracle: opening
// and reading may fail with an error, but every commit returned must be
// exactly the one written at that version (corruption is detected, never
// returned), and nothing may crash.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "log_fixture.h"
#include "spool/txnlog/log.h"

namespace {

void Damage(std::map<std::string, std::string>* files, const uint8_t* op) {
  if (files->empty()) return;
  uint32_t arg;
  std::memcpy(&arg, op + 2, 4);
  auto it = files->begin();
  std::advance(it, op[1] % files->size());
  std::string& bytes = it->second;
  switch (op[0] % 6) {
    case 0:
      bytes.resize(arg % (bytes.size() + 1));
      break;
    case 1:
      if (!bytes.empty()) bytes[arg % bytes.size()] ^= static_cast<char>(1u << (arg >> 29));
      break;
    case 2:
      files->erase(it);
      break;
    case 3: {
      char name[32];
      std::snprintf(name, sizeof(name), "%012u.seg", 1 + arg % 12);
      (*files)[name] = bytes;
      break;
    }
    case 4: {
      auto other = files->begin();
      std::advance(other, arg % files->size());
      std::swap(bytes, other->second);
      break;
    }
    case 5:
      for (size_t i = 0; i < 16 && !bytes.empty(); ++i)
        bytes[(arg + i) % bytes.size()] = static_cast<char>(arg >> (i % 4 * 8));
      break;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kOpBytes = 6;
  constexpr size_t kMaxOps = 32;
  std::map<std::string, std::string> files = spool::fuzz::GetFixtureFiles().files;
  for (size_t i = 0; i + kOpBytes <= size && i / kOpBytes < kMaxOps; i += kOpBytes) Damage(&files, data + i);
  spool::fuzz::RecoverAndCheck(files);
  return 0;
}
