// Fuzz target: the state reader (storage/state_check.h and state_store.h).
// Input: the bytes of a state's LMDB file (data.mdb).
// Oracle, beyond "no crash, no hang, no undefined behaviour": CheckStateImage
// either refuses the bytes with Corruption or accepts them, with the same
// verdict on one thread and on two; bytes it accepts are then opened as a
// state, in LMDB, and read whole — a scan of every key and a point read of
// each — and every read must succeed, each point read finding the value
// the scan found. What the check lets through, LMDB must read without
// leaving the file or disagreeing with itself.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>

#include "state_check.h"
#include "state_store.h"

namespace {

void Check(bool ok, const char* what, const spool::Status& s = spool::Status::OK()) {
  if (!ok) {
    std::fprintf(stderr, "state_image_fuzzer: invariant violated: %s %s\n", what, s.ToString().c_str());
    std::abort();
  }
}

// One directory for every input, emptied before each.
const std::string& StateDir() {
  static const std::string dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "spool-state-fuzz-XXXXXX").string();
    Check(mkdtemp(pattern.data()) != nullptr, "mkdtemp");
    return pattern;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view image(reinterpret_cast<const char*>(data), size);
  spool::FileCheck check;
  const spool::Status checked = spool::CheckStateImage(image, &check, /*threads=*/1);
  Check(checked.ok() || checked.IsCorruption(), "the check failed other than with Corruption", checked);
  spool::FileCheck threaded;
  Check(spool::CheckStateImage(image, &threaded, /*threads=*/2).ToString() == checked.ToString(),
        "the check's verdict on two threads differs from one thread's", checked);
  if (!checked.ok() || image.empty()) return 0;

  const std::string dir = StateDir() + "/state";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/gen-000001");
  {
    std::ofstream out(dir + "/gen-000001/data.mdb", std::ios::binary);
    out.write(image.data(), static_cast<std::streamsize>(image.size()));
  }
  spool::StateStoreOptions options;
  options.path = dir;
  options.background = false;
  options.map_size_bytes = 256ull << 20;
  std::unique_ptr<spool::StateStore> store;
  spool::Status s = spool::StateStore::Open(options, &store);
  // A state written before values were sealed is emptied on open (legacy);
  // a sealed one the check accepted opens.
  Check(s.ok() || s.IsCorruption(), "open", s);
  if (!s.ok()) return 0;
  std::unique_ptr<spool::StateView> view;
  s = store->NewView("", "", &view);
  Check(s.ok(), "a view of an accepted state", s);
  std::map<std::string, std::string> seen;
  for (; view->Valid(); view->Next()) seen.emplace(view->key(), view->value());
  Check(view->status().ok(), "a scan of an accepted state", view->status());
  for (const auto& [key, value] : seen) {
    std::string got;
    bool found = false;
    s = store->Get(key, &got, &found);
    Check(s.ok() && found && got == value, "a point read disagrees with the scan", s);
  }
  return 0;
}
