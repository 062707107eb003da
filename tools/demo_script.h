// What the demos share (`spool demo`, `spool demo --jetstream`): a script of
// steps, each command printed before it runs in this process with its real
// output, and the directory it works in.
#pragma once

#include <string>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool::cli {

// How a person runs this program: "spool" when that name on the PATH is
// this very program, else the program's full path.
std::string SelfCommand();
// The word after `marker` in `text` (up to a space, a newline or a ','), or
// "" when `marker` is not there.
std::string WordAfter(const std::string& text, std::string_view marker);
// A new directory in /tmp when `*dir` is empty, else `*dir` if new or
// empty; made absolute. Errors: InvalidArgument (not empty), IOError.
Status MakeDemoDir(std::string* dir);
// The JetStream demo (demo_jetstream.cc) in `dir`.
int RunJetStreamDemo(const std::string& dir);

class DemoScript {
 protected:
  explicit DemoScript(std::string dir) : dir_(std::move(dir)), store_(dir_ + "/store") {}

  void Say(const std::string& text);
  void Step(const std::string& text);
  // Records the step that failed; false.
  bool Failed(const std::string& what);
  void Write(const std::string& name, const std::string& text);
  // Prints the command line, runs it in this process and shows its output
  // (`quiet`: neither), which `*output` receives too. False when it failed.
  bool Run(const std::vector<std::string>& args, std::string* output = nullptr, bool quiet = false);
  // Whether two stores' copies of `table` are equal, row for row; prints
  // the line saying so. False (and Failed) when they differ or cannot be read.
  bool SameTable(const std::string& reference, const std::string& table);

  std::string dir_;
  std::string store_;
  std::string failed_at_;  // the step that failed
};

}  // namespace spool::cli
