// Writes the seed corpora of the fuzz targets (committed under
// fuzz/corpus/): real segment files, records, payloads and META from the
// fixture log, and damage programs for recovery. Run it only to regenerate
// them: `spool_make_seed_corpus fuzz/corpus`.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "log_fixture.h"
#include "spool/txnlog/log.h"

namespace {

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

std::string Op(uint8_t op, uint8_t file, uint32_t arg) {
  std::string bytes{static_cast<char>(op), static_cast<char>(file)};
  for (int i = 0; i < 4; ++i) bytes.push_back(static_cast<char>(arg >> (8 * i)));
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string root = argv[1];
  spool::MemEnv env;
  std::map<uint64_t, std::string> bodies;
  spool::fuzz::BuildFixtureLog(&env, &bodies);
  std::vector<std::string> names;
  (void)env.ListDir(spool::fuzz::kFixtureDir, &names);
  int n = 0;
  for (const std::string& name : names) {
    std::string bytes;
    if (!spool::ReadFileToString(&env, spool::JoinPath(spool::fuzz::kFixtureDir, name), &bytes).ok()) continue;
    const std::string prefix = root + "/record_decoder/" + name;
    Write(prefix + ".segment", std::string(1, '\0') + bytes);
    if (bytes.size() > 96) Write(prefix + ".record", std::string(1, '\1') + bytes.substr(96, 400));
    if (name == "META") Write(prefix + ".meta", std::string(1, '\3') + bytes);
    ++n;
  }
  Write(root + "/record_decoder/payload-empty", std::string(1, '\2'));
  // Damage programs: one of each kind, and a few combinations.
  const std::vector<std::string> programs = {
      "",
      Op(0, 0, 5000),
      Op(0, 2, 4000),
      Op(1, 0, 300),
      Op(1, 1, 70000),
      Op(2, 1, 0),
      Op(3, 0, 3),
      Op(4, 0, 1),
      Op(5, 2, 200),
      Op(0, 3, 90) + Op(1, 0, 12345),
      Op(2, 0, 0) + Op(2, 0, 0),
      Op(5, 1, 96) + Op(0, 2, 1000) + Op(3, 1, 7),
  };
  for (size_t i = 0; i < programs.size(); ++i) Write(root + "/log_recovery/damage-" + std::to_string(i), programs[i]);
  std::printf("wrote seeds from %d fixture files and %zu damage programs\n", n, programs.size());
  return 0;
}
