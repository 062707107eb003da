// Replays fuzz inputs without libFuzzer: every file named on the command
// line, or found (non-recursively) in a directory named there, is passed to
// LLVMFuzzerTestOneInput once. Used by CI to replay the seed corpora with
// the ordinary compiler; prints how many inputs ran.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::string> Inputs(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return {};
  if (!S_ISDIR(st.st_mode)) return {path};
  std::vector<std::string> files;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name != "." && name != "..") files.push_back(path + "/" + name);
    }
    closedir(dir);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  size_t executed = 0;
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::string> inputs = Inputs(argv[i]);
    if (inputs.empty()) {
      std::fprintf(stderr, "no inputs at %s\n", argv[i]);
      return 1;
    }
    for (const std::string& input : inputs) {
      std::ifstream in(input, std::ios::binary);
      std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
      ++executed;
    }
  }
  std::printf("fuzz replay: %zu inputs executed, 0 crashes\n", executed);
  return 0;
}
