#include "demo_script.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "commands.h"

namespace spool::cli {

std::string SelfCommand() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "spool";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "";
  while (!dirs.empty()) {
    const size_t colon = dirs.find(':');
    const fs::path candidate = fs::path(dirs.substr(0, colon)) / "spool";
    if (fs::equivalent(candidate, self, ec)) return "spool";
    dirs.remove_prefix(colon == std::string_view::npos ? dirs.size() : colon + 1);
  }
  return self.string();
}

std::string WordAfter(const std::string& text, std::string_view marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = at + marker.size();
  return text.substr(begin, text.find_first_of(" \n,", begin) - begin);
}

Status MakeDemoDir(std::string* dir) {
  std::error_code error;
  if (dir->empty()) {
    std::string pattern = (std::filesystem::temp_directory_path(error) / "spool-demo-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) return Status::IOError("cannot create a directory in /tmp");
    *dir = pattern;
  } else if (std::filesystem::exists(*dir) && !std::filesystem::is_empty(*dir)) {
    return Status::InvalidArgument(*dir + " is not empty: the demo needs a new or empty directory");
  } else if (!std::filesystem::create_directories(*dir, error) && error) {
    return Status::IOError("cannot create " + *dir + ": " + error.message());
  }
  *dir = std::filesystem::absolute(*dir).string();
  return Status::OK();
}

void DemoScript::Say(const std::string& text) { std::cout << text << "\n"; }
void DemoScript::Step(const std::string& text) { std::cout << "\n== " << text << "\n"; }
bool DemoScript::Failed(const std::string& what) {
  failed_at_ = what;
  return false;
}
void DemoScript::Write(const std::string& name, const std::string& text) { std::ofstream(dir_ + "/" + name) << text; }

bool DemoScript::Run(const std::vector<std::string>& args, std::string* output, bool quiet) {
  if (!quiet) {
    std::string line = "$ spool";
    for (const std::string& a : args) {
      line += ' ';
      line += a.find_first_of(" ><*'") == std::string::npos ? a : "\"" + a + "\"";
    }
    std::cout << line << "\n";
  }
  std::ostringstream captured;
  std::streambuf* saved = std::cout.rdbuf(captured.rdbuf());
  const int code = RunSpool(args);
  std::cout.rdbuf(saved);
  if (!quiet) std::cout << captured.str();
  if (output != nullptr) *output = captured.str();
  return code == kExitOk;
}

bool DemoScript::SameTable(const std::string& reference, const std::string& table) {
  std::string mine, theirs;
  if (!Run({"read", store_, table, "--format", "csv"}, &mine, true) ||
      !Run({"read", reference, table, "--format", "csv"}, &theirs, true)) {
    return Failed("reading " + table);
  }
  const size_t rows = mine.empty() ? 0 : static_cast<size_t>(std::count(mine.begin(), mine.end(), '\n')) - 1;
  std::cout << fmt::format("  {:<22} {:>4} rows  {}\n", table, rows, mine == theirs ? "equal" : "DIFFERENT");
  return mine == theirs || Failed("the tables differ from the run without the bug");
}

}  // namespace spool::cli
