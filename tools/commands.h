// Each command group of the spool CLI registers its subcommands here.
#pragma once

#include "spool/txnlog/status.h"

namespace CLI {
class App;
}

namespace spool::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the check or operation found a problem (e.g. corruption)
inline constexpr int kExitError = 2;    // the command could not run (bad arguments, missing files)

// Prints `s` on stderr and returns the exit code for it: kExitFailure for
// corruption found, kExitError otherwise.
int ReportError(const Status& s);

// `spool log …`: demo, inspect, verify, dump. `*exit_code` receives the
// result of whichever subcommand runs.
void RegisterLogCommands(CLI::App& app, int* exit_code);

// `spool init`, `spool events`.
void RegisterStoreCommands(CLI::App& app, int* exit_code);

}  // namespace spool::cli
