// Each command group of the spool CLI registers its subcommands here.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace CLI {
class App;
}

namespace spool {
class Store;
}

namespace spool::cli {

// Exit codes shared by every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the check or operation found a problem (e.g. corruption)
inline constexpr int kExitError = 2;    // the command could not run (bad arguments, missing files)
inline constexpr int kExitUpdateFailed =
    3;  // the update ran and ended FAILED (its error is printed and in the event log)

// Prints `s` on stderr and returns the exit code for it: kExitFailure for
// corruption found, kExitError otherwise.
int ReportError(const Status& s);

// `spool log …`: demo, inspect, verify, dump. `*exit_code` receives the
// result of whichever subcommand runs.
void RegisterLogCommands(CLI::App& app, int* exit_code);

// `spool init`, `spool events`, `spool archive`, `spool verify`, `spool repair`.
void RegisterStoreCommands(CLI::App& app, int* exit_code);

// `spool table create | alter | drop | list`, `spool write`.
void RegisterTableCommands(CLI::App& app, int* exit_code);

// `spool read`, `history`, `changes`, `restore`, `snapshot`, `vacuum`.
void RegisterReadCommands(CLI::App& app, int* exit_code);

// `spool topic create | produce | consume | info | retention`.
void RegisterTopicCommands(CLI::App& app, int* exit_code);

// `spool pipeline set | show`, `spool update`, `spool rewind`, `spool rewind-points`.
void RegisterPipelineCommands(CLI::App& app, int* exit_code);

// `spool demo`.
void RegisterDemoCommand(CLI::App& app, int* exit_code);

// `spool sql`.
void RegisterSqlCommand(CLI::App& app, int* exit_code);

// `spool serve`.
void RegisterServeCommand(CLI::App& app, int* exit_code);

// Runs one command line (without the program's name) as `spool` does,
// returning its exit code; the demo runs its steps with it.
int RunSpool(const std::vector<std::string>& args);

// Whether this command line draws progress bars (--progress, --no-progress,
// else when stderr is a terminal).
bool ShowProgress();

// How a command uses a store: to read it (opened read-only, so it works
// beside a writer such as `spool serve` or a continuous update), or to
// change it.
enum class StoreAccess { kRead, kWrite };

// Opens the existing store in `dir` for one command: default StoreOptions
// (the state in DIR/state on the real file system), never creating one.
// Errors as Store::Open; NotFound and Busy say what to do about them.
Status OpenStore(const std::string& dir, std::unique_ptr<Store>* store, StoreAccess access = StoreAccess::kWrite);

// `s` (not OK) with "; " and `hint` after its message, same code.
Status WithHint(const Status& s, std::string_view hint);

}  // namespace spool::cli
