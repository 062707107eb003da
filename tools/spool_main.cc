// spool: the command-line tool for Spool stores.
#include <CLI/CLI.hpp>

#include "commands.h"
#include "progress.h"

namespace spool::cli {
namespace {
ProgressMode progress_mode = ProgressMode::kAuto;  // of the command line being run
}  // namespace

bool ShowProgress() { return ProgressEnabled(progress_mode); }

int RunSpool(const std::vector<std::string>& args) {
  CLI::App app{"spool: a storage engine with time travel, and its pipelines", "spool"};
  app.require_subcommand(1);
  app.fallthrough();  // the options below may follow the subcommand
  progress_mode = ProgressMode::kAuto;
  bool progress = false, no_progress = false;
  CLI::Option* on =
      app.add_flag("--progress", progress, "Draw progress bars for long work even when stderr is not a terminal");
  app.add_flag("--no-progress", no_progress, "Never draw progress bars (default: only on a terminal)")->excludes(on);
  app.parse_complete_callback([&] {
    if (progress) progress_mode = ProgressMode::kOn;
    if (no_progress) progress_mode = ProgressMode::kOff;
  });
  int exit_code = kExitOk;
  RegisterDemoCommand(app, &exit_code);
  RegisterLogCommands(app, &exit_code);
  RegisterStoreCommands(app, &exit_code);
  RegisterTableCommands(app, &exit_code);
  RegisterReadCommands(app, &exit_code);
  RegisterPipelineCommands(app, &exit_code);
  RegisterTopicCommands(app, &exit_code);
  RegisterSqlCommand(app, &exit_code);
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

int main(int argc, char** argv) { return spool::cli::RunSpool(std::vector<std::string>(argv + 1, argv + argc)); }
