// spool: the command-line tool for Spool stores.
#include <CLI/CLI.hpp>

#include "commands.h"

namespace spool::cli {

int RunSpool(const std::vector<std::string>& args) {
  CLI::App app{"spool: a storage engine with time travel, and its pipelines"};
  app.require_subcommand(1);
  int exit_code = kExitOk;
  RegisterDemoCommand(app, &exit_code);
  RegisterLogCommands(app, &exit_code);
  RegisterStoreCommands(app, &exit_code);
  RegisterTableCommands(app, &exit_code);
  RegisterReadCommands(app, &exit_code);
  RegisterPipelineCommands(app, &exit_code);
  RegisterTopicCommands(app, &exit_code);
  RegisterServeCommand(app, &exit_code);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // as CLI11 takes them
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitError;
  }
  return exit_code;
}

}  // namespace spool::cli

int main(int argc, char** argv) {
  return spool::cli::RunSpool(std::vector<std::string>(argv + 1, argv + argc));
}
