// Replays the fixed bad-segment corpus (fuzz/corpus/bad_segments/, written
// by spool_make_seed_corpus): for every case of CASES, its base log
// directory (a .dir file) is damaged as the case says, opened strictly and
// read, and the outcome must be exactly the expected one. Prints each
// mismatch and a summary; exits 1 on any, 2 on a malformed corpus.
//
//   bad_segment_replay fuzz/corpus/bad_segments
//
// Damage operations (FILE: a name in the log directory):
//   cut FILE OFFSET          truncate the file there
//   flip FILE OFFSET BIT     flip one bit
//   zeros FILE N             append N zero bytes
//   garbage FILE N SEED      append N pseudo-random bytes
//   remove FILE              delete it
//   copy FILE NEW            a second copy under another name
//   swap A B                 exchange two files' contents
//   take BASE FILE NEW       the file FILE of another base, as NEW
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>

#include "log_fixture.h"

namespace {

using Files = std::map<std::string, std::string>;

bool ReadBase(const std::string& dir, const std::string& name, Files* files) {
  std::ifstream in(dir + "/" + name + ".dir", std::ios::binary);
  if (!in) return false;
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  *files = spool::fuzz::ParseDirectory(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  return true;
}

// Applies the operations in `ops` to `files` (`base_of` finds another
// base for "take"); false and *error if one is malformed or names a file
// that is not there.
bool Damage(std::istringstream& ops, const std::function<const Files*(const std::string&)>& base_of, Files* files,
            std::string* error) {
  auto file = [&](const Files& in, std::string* name) {
    ops >> *name;
    if (in.count(*name) == 0) *error = "no file " + *name;
    return error->empty();
  };
  std::string op;
  while (error->empty() && ops >> op) {
    std::string name, other;
    uint64_t a = 0, b = 0;
    if (op == "cut" && file(*files, &name) && ops >> a) {
      if (a > (*files)[name].size()) *error = "cut past the end of " + name;
      else (*files)[name].resize(a);
    } else if (op == "flip" && file(*files, &name) && ops >> a >> b) {
      if (a >= (*files)[name].size() || b > 7) *error = "flip outside " + name;
      else (*files)[name][a] = static_cast<char>((*files)[name][a] ^ (1 << b));
    } else if (op == "zeros" && file(*files, &name) && ops >> a) {
      (*files)[name].append(a, '\0');
    } else if (op == "garbage" && file(*files, &name) && ops >> a >> b) {
      uint64_t x = b * 0x9e3779b97f4a7c15ull + 1;
      for (uint64_t i = 0; i < a; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        (*files)[name].push_back(static_cast<char>(x));
      }
    } else if (op == "remove" && file(*files, &name)) {
      files->erase(name);
    } else if (op == "copy" && file(*files, &name) && ops >> other) {
      (*files)[other] = (*files)[name];
    } else if (op == "swap" && file(*files, &name) && file(*files, &other)) {
      std::swap((*files)[name], (*files)[other]);
    } else if (op == "take" && ops >> other) {
      const Files* from = base_of(other);
      if (from == nullptr) *error = "no base " + other;
      else if (file(*from, &name) && ops >> other) (*files)[other] = from->at(name);
    } else if (error->empty()) {
      *error = "malformed operation " + op;
    }
  }
  return error->empty();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::ifstream cases(dir + "/CASES");
  if (!cases) {
    std::fprintf(stderr, "bad_segment_replay: cannot read %s/CASES\n", dir.c_str());
    return 2;
  }
  std::map<std::string, Files> bases;
  int checked = 0, mismatches = 0;
  std::string line;
  for (int number = 1; std::getline(cases, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    const size_t arrow = line.find(" => ");
    std::istringstream head(line.substr(0, arrow));
    std::string name, base;
    head >> name >> base;
    if (arrow == std::string::npos || base.empty()) {
      std::fprintf(stderr, "bad_segment_replay: CASES line %d is not NAME BASE [OP...] => OUTCOME\n", number);
      return 2;
    }
    if (bases.count(base) == 0 && !ReadBase(dir, base, &bases[base])) {
      std::fprintf(stderr, "bad_segment_replay: CASES line %d: no base %s.dir\n", number, base.c_str());
      return 2;
    }
    Files files = bases[base];
    std::string error;
    auto base_of = [&](const std::string& other) -> const Files* {
      if (bases.count(other) == 0 && !ReadBase(dir, other, &bases[other])) {
        bases.erase(other);
        return nullptr;
      }
      return &bases[other];
    };
    if (!Damage(head, base_of, &files, &error)) {
      std::fprintf(stderr, "bad_segment_replay: CASES line %d: %s\n", number, error.c_str());
      return 2;
    }
    const std::string want = line.substr(arrow + 4);
    const std::string got = spool::fuzz::RecoveryOutcome(files);
    ++checked;
    if (got != want) {
      std::printf("MISMATCH %s: expected \"%s\", got \"%s\"\n", name.c_str(), want.c_str(), got.c_str());
      ++mismatches;
    }
  }
  std::printf("bad-segment corpus: %d cases, %d mismatches\n", checked, mismatches);
  return mismatches == 0 && checked > 0 ? 0 : 1;
}
