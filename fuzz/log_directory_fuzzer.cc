// Fuzz target: recovery over a whole log directory. The input is the
// directory itself, serialized (for each file: a 1-byte name length, the
// name, a 4-byte little-endian size, the bytes); the seeds are the fixture
// log's directory. Under libFuzzer a custom mutator damages the directory
// the way disks and crashes do — truncate a file at any byte, flip a bit,
// drop a file, duplicate a segment under another number, swap two files,
// zero or garbage a tail, append zeros or garbage — and otherwise lets
// libFuzzer mutate one file's bytes. Then the log is opened, strictly and
// in salvage mode, and read (the fixture's archived cut beside it, whole).
// Oracle: opening and reading may fail, but every commit returned must be
// exactly the one written at that version, and nothing may crash.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include "log_fixture.h"

// libFuzzer's own mutation, when linked with it (weak: the standalone
// replay driver has none and never calls the custom mutator).
extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size) __attribute__((weak));

namespace {

using Files = std::map<std::string, std::string>;

// One damage of the kinds a disk or a crash does.
void Damage(Files* files, std::mt19937_64& rng) {
  if (files->empty()) return;
  auto pick = [&] {
    auto it = files->begin();
    std::advance(it, static_cast<long>(rng() % files->size()));
    return it;
  };
  auto it = pick();
  std::string& bytes = it->second;
  const size_t at = bytes.empty() ? 0 : rng() % (bytes.size() + 1);
  switch (rng() % 9) {
    case 0:
      bytes.resize(at);
      break;  // truncated at any byte
    case 1:
      if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8));
      break;
    case 2:
      files->erase(it);
      break;   // a missing file
    case 3: {  // a duplicated segment
      char name[32];
      std::snprintf(name, sizeof(name), "%012u.seg", static_cast<unsigned>(1 + rng() % 12));
      (*files)[name] = bytes;
      break;
    }
    case 4:
      std::swap(bytes, pick()->second);
      break;  // swapped files
    case 5:
      std::fill(bytes.begin() + static_cast<long>(at), bytes.end(), '\0');
      break;  // a zeroed tail
    case 6:
      for (size_t i = at; i < bytes.size(); ++i) bytes[i] = static_cast<char>(rng());  // a garbage tail
      break;
    case 7:
      bytes.append(1 + rng() % 8192, '\0');
      break;  // preallocated space
    case 8:
      for (size_t i = 1 + rng() % 600; i > 0; --i) bytes.push_back(static_cast<char>(rng()));  // garbage appended
      break;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937_64 rng(seed);
  Files files = spool::fuzz::ParseDirectory(data, size);
  if (files.empty()) files = spool::fuzz::GetFixtureFiles().files;
  if (rng() % 4 == 0 && LLVMFuzzerMutate != nullptr && !files.empty()) {
    auto it = files.begin();
    std::advance(it, static_cast<long>(rng() % files.size()));
    std::string& bytes = it->second;
    const size_t room = bytes.size() + 64;
    bytes.resize(room);
    bytes.resize(LLVMFuzzerMutate(reinterpret_cast<uint8_t*>(bytes.data()), room - 64, room));
  } else {
    Damage(&files, rng);
  }
  const std::string out = spool::fuzz::SerializeDirectory(files);
  if (out.size() > max_size) return size;  // too big to hold: leave the input as it was
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  spool::fuzz::RecoverAndCheck(spool::fuzz::ParseDirectory(data, size));
  return 0;
}
