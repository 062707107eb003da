// spool: the command-line tool for Spool stores.
#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"spool: a storage engine with time travel, and its pipelines"};
  app.require_subcommand(1);
  int exit_code = spool::cli::kExitOk;
  spool::cli::RegisterLogCommands(app, &exit_code);
  spool::cli::RegisterStoreCommands(app, &exit_code);
  spool::cli::RegisterTableCommands(app, &exit_code);
  spool::cli::RegisterReadCommands(app, &exit_code);
  spool::cli::RegisterPipelineCommands(app, &exit_code);
  spool::cli::RegisterTopicCommands(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : spool::cli::kExitError;
  }
  return exit_code;
}
