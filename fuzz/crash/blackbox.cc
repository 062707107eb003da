#include "blackbox.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "kill_point.h"
#include "progress.h"
#include "spool/storage/store.h"

extern char** environ;

namespace spool::crashtest {
namespace {

constexpr int kTables = 3;
constexpr int64_t kKeys = 200;

std::string StoreDir(const std::string& dir) { return dir + "/store"; }
std::string CountsPath(const std::string& dir) { return dir + "/kill-counts"; }

TableId Table(int i) {
  TableId id;
  (void)TableId::Parse("main.bb.t" + std::to_string(i), &id);
  return id;
}

StoreOptions Options() {
  StoreOptions options;
  options.log.segment_size_bytes = 256 << 10;  // rolls often
  options.snapshot_every_versions = 50;
  options.snapshot_every_bytes = 0;
  options.state_batch_commits = 16;
  options.retention_us = 2000;  // vacuum removes history quickly
  options.min_retention_us = 0;
  return options;
}

// Every table's rows: id -> (v, n).
using Rows = std::map<int64_t, std::pair<std::string, int64_t>>;
using Tables = std::map<int, Rows>;

uint64_t Digest(const Tables& tables) {
  std::string bytes;
  for (const auto& [t, rows] : tables) {
    bytes += "t" + std::to_string(t) + ":";
    for (const auto& [id, value] : rows) {
      bytes += std::to_string(id) + "=" + value.first + "/" + std::to_string(value.second) + ";";
    }
  }
  return XXH3_64bits(bytes.data(), bytes.size());
}

// The tables as of `version` (nullopt: the current state).
Status ReadTables(Store* store, std::optional<uint64_t> version, Tables* tables) {
  tables->clear();
  for (int t = 0; t < kTables; ++t) {
    TableInfo info;
    Status s = store->GetTable(Table(t), &info);
    if (s.IsNotFound()) continue;
    SPOOL_RETURN_IF_ERROR(s);
    ReadOptions options;
    options.version = version;
    Rows& rows = (*tables)[t];
    SPOOL_RETURN_IF_ERROR(store->Read(Table(t), options, [&](const Row& row) {
      rows[std::get<int64_t>(row[0])] = {std::get<std::string>(row[1]), std::get<int64_t>(row[2])};
      return true;
    }));
  }
  return Status::OK();
}

// --- The child

// One line to the parent, written whole with one write(2): it survives a
// SIGKILL right after.
void Tell(const std::string& line) {
  const std::string out = line + "\n";
  (void)!::write(STDOUT_FILENO, out.data(), out.size());
}

int Fail(const std::string& what, const Status& s) {
  std::fprintf(stderr, "blackbox child: %s: %s\n", what.c_str(), s.ToString().c_str());
  return 3;
}

}  // namespace

int RunBlackboxChild(const std::string& dir, uint64_t seed, uint64_t max_ops) {
  std::unique_ptr<Store> store;
  Status s = Store::Open(Options(), StoreDir(dir), &store);
  if (!s.ok()) return Fail("open", s);
  std::mt19937_64 rng(seed);
  // What every version this child made (and the one it found) must read as.
  std::map<uint64_t, Tables> known;
  uint64_t newest = store->AvailableVersions().newest;
  s = ReadTables(store.get(), std::nullopt, &known[newest]);
  if (!s.ok()) return Fail("read the tables", s);
  auto commit = [&](const Transaction& txn, const Tables& after) -> Status {
    Tell("intent " + std::to_string(newest + 1) + " " + std::to_string(Digest(after)));
    CommitResult result;
    SPOOL_RETURN_IF_ERROR(store->Commit(txn, &result));
    newest = result.version;
    known[newest] = after;
    Tell("ack " + std::to_string(newest));
    return Status::OK();
  };
  if (known[newest].size() < kTables) {
    Transaction create("CREATE TABLE");
    Tables after = known[newest];
    for (int t = 0; t < kTables; ++t) {
      if (after.count(t) != 0) continue;
      Schema schema;
      (void)Schema::Make(
          {{"id", ColumnType::kInt64, false}, {"v", ColumnType::kString, false}, {"n", ColumnType::kInt64, false}},
          {"id"}, &schema);
      create.CreateTable(Table(t), TableKind::kStreamingTable, schema);
      after[t];
    }
    if (s = commit(create, after); !s.ok()) return Fail("create the tables", s);
    known.erase(known.begin(), known.find(newest));  // no restore or rewind goes back before the tables
  }
  for (uint64_t op = 0; op < max_ops; ++op) {
    const uint64_t roll = rng() % 100;
    const Tables& current = known[newest];
    if (roll < 75) {
      Transaction txn;
      Tables after = current;
      const uint64_t tables = 1 + rng() % kTables;
      for (uint64_t i = 0; i < tables; ++i) {
        const int t = static_cast<int>(rng() % kTables);
        const uint64_t changes = 1 + rng() % 30;
        for (uint64_t c = 0; c < changes; ++c) {
          const int64_t id = static_cast<int64_t>(rng() % kKeys);
          if (rng() % 5 == 0) {
            txn.Delete(Table(t), Row{id});
            after[t].erase(id);
          } else {
            std::string v = "v" + std::to_string(rng() % 100000) + std::string(rng() % 200, 'x');
            const int64_t n = static_cast<int64_t>(rng() % 1000000);
            txn.Write(Table(t), Row{id, v, n});
            after[t][id] = {std::move(v), n};
          }
        }
      }
      if (s = commit(txn, after); !s.ok()) return Fail("commit", s);
    } else if (roll < 83 && known.size() > 1) {
      // Restore a table to a version this child knows.
      auto target = known.begin();
      std::advance(target, static_cast<long>(rng() % (known.size() - 1)));
      const int t = static_cast<int>(rng() % kTables);
      if (target->second.count(t) == 0) continue;
      Tables after = current;
      after[t] = target->second.at(t);
      Tell("intent " + std::to_string(newest + 1) + " " + std::to_string(Digest(after)));
      CommitResult result;
      if (s = store->Restore(Table(t), target->first, &result); !s.ok()) {
        if (s.IsInvalidArgument()) {  // vacuumed meanwhile: the store refused, nothing was committed
          Tell("refused " + std::to_string(newest + 1));
          continue;
        }
        return Fail("restore", s);
      }
      newest = result.version;
      known[newest] = std::move(after);
      Tell("ack " + std::to_string(newest));
    } else if (roll < 88) {
      if (s = store->TakeSnapshot(); !s.ok()) return Fail("snapshot", s);
    } else if (roll < 92) {
      VacuumReport report;
      VacuumOptions vacuum;
      vacuum.force = true;
      if (s = store->Vacuum(vacuum, &report); !s.ok()) return Fail("vacuum", s);
    } else if (roll < 96 && known.size() > 1) {
      auto target = known.begin();
      std::advance(target, static_cast<long>(rng() % (known.size() - 1)));
      if (!store->CanRewindTo(target->first).ok()) continue;
      // The cut and its RESTORE commit, at the next version, which then
      // reads as the target does.
      const uint64_t restore = store->log()->NextVersion();
      Tell("rewind " + std::to_string(target->first) + " " + std::to_string(restore));
      LogPosition head;
      if (s = store->RewindTo(target->first, &head); !s.ok()) return Fail("rewind", s);
      if (head.version != restore) {
        return Fail("rewind", Status::Corruption("its RESTORE commit is version " + std::to_string(head.version) +
                                                 ", not " + std::to_string(restore)));
      }
      known.erase(std::next(known.find(target->first)), known.end());
      known[restore] = known[target->first];
      newest = restore;
      Tell("rewound " + std::to_string(target->first) + " " + std::to_string(restore));
    } else if (roll < 98) {
      // A copy of the state at the newest version, which a rewind to it adopts.
      if (s = store->SaveStateCopy(); !s.ok()) return Fail("state copy", s);
    }
  }
  return 0;
}

namespace {

// --- The parent

// The parent's model: the digest of every version the children made and
// the one operation in flight.
struct Model {
  std::map<uint64_t, uint64_t> digests;
  std::optional<std::pair<uint64_t, uint64_t>> intent;  // version, digest
  std::optional<std::pair<uint64_t, uint64_t>> rewind;  // a rewind in flight: its target, its RESTORE's version
  uint64_t acked = 0;                                   // the newest acknowledged version
};

void Violate(BlackboxFigures* figures, const std::string& where, const std::string& invariant,
             const std::string& what) {
  ++figures->crash.violations;
  if (figures->crash.failures.size() < 20) figures->crash.failures.push_back(where + ": " + invariant + ": " + what);
}

// A rewind to `target` took effect: the versions after it are off the
// history, and its RESTORE commit reads as the target.
void Rewound(uint64_t target, uint64_t restore, Model* model) {
  model->digests.erase(model->digests.upper_bound(target), model->digests.end());
  if (model->digests.count(target) != 0) model->digests[restore] = model->digests[target];
}

// Applies the child's lines to the model.
void Learn(const std::string& line, Model* model, BlackboxFigures* figures) {
  std::istringstream in(line);
  std::string word;
  uint64_t a = 0, b = 0;
  in >> word >> a >> b;
  if (word == "intent") {
    model->intent = {a, b};
  } else if (word == "ack") {
    if (model->intent && model->intent->first == a) model->digests[a] = model->intent->second;
    model->intent.reset();
    model->acked = a;
    ++figures->commits_acknowledged;
  } else if (word == "refused") {
    model->intent.reset();
  } else if (word == "rewind") {
    model->rewind = {a, b};
  } else if (word == "rewound") {
    Rewound(a, b, model);
    model->acked = b;
    model->rewind.reset();
  }
}

// Opens the store the child left and checks it against the model; then
// settles what was in flight.
void CheckStore(const std::string& dir, const std::string& where, Model* model, std::mt19937_64* rng,
                BlackboxFigures* figures) {
  for (int open = 0; open < 2; ++open) {  // the second: recovery is idempotent
    std::unique_ptr<Store> store;
    ++figures->crash.recoveries;
    Status s = Store::Open(Options(), StoreDir(dir), &store);
    if (!s.ok()) return Violate(figures, where, "recoverable", s.ToString());
    const VersionRange range = store->AvailableVersions();
    const uint64_t newest = range.newest;
    if (open == 0) {
      bool expected = newest == model->acked;
      if (model->intent && newest == model->intent->first) {  // the commit in flight survived
        model->digests[newest] = model->intent->second;
        expected = true;
      }
      if (model->rewind && newest == model->rewind->second) {  // the rewind in flight is done
        Rewound(model->rewind->first, model->rewind->second, model);
        expected = true;
      }
      if (!expected) {
        return Violate(figures, where, newest < model->acked ? "durability" : "no phantom",
                       "the store's newest version is " + std::to_string(newest) + "; acknowledged " +
                           std::to_string(model->acked) +
                           (model->intent ? ", in flight " + std::to_string(model->intent->first) : ""));
      }
      model->digests.erase(model->digests.upper_bound(newest), model->digests.end());
      model->intent.reset();
      model->rewind.reset();
      model->acked = newest;
    }
    Tables tables;
    if (s = ReadTables(store.get(), std::nullopt, &tables); !s.ok()) {
      return Violate(figures, where, "readable", s.ToString());
    }
    auto digest = model->digests.find(newest);
    if (digest == model->digests.end() || Digest(tables) != digest->second) {
      return Violate(figures, where, "atomicity",
                     "the tables do not read as version " + std::to_string(newest) + " must" +
                         (open == 1 ? " (after a second recovery)" : ""));
    }
    if (open == 1) break;
    // Retained versions read back exactly: a few, at random.
    std::vector<uint64_t> retained;
    for (const auto& [version, d] : model->digests) {
      if (version >= std::max<uint64_t>(range.oldest, 1) && version < newest) retained.push_back(version);
    }
    for (int i = 0; i < 4 && !retained.empty(); ++i) {
      const uint64_t version = retained[(*rng)() % retained.size()];
      if (s = ReadTables(store.get(), version, &tables); !s.ok()) {
        return Violate(figures, where, "retained reads", "version " + std::to_string(version) + ": " + s.ToString());
      }
      ++figures->versions_checked;
      if (Digest(tables) != model->digests[version]) {
        return Violate(figures, where, "retained reads", "version " + std::to_string(version) + " reads differently");
      }
    }
  }
}

// The counters the child's kill points share with the parent.
class KillCounts {
 public:
  explicit KillCounts(const std::string& path) : path_(path), n_(1 + kill_point::Defined().size()) {}
  // A zeroed file for the next child.
  bool Reset() {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    const bool ok = ::ftruncate(fd, static_cast<off_t>(n_ * sizeof(uint64_t))) == 0;
    ::close(fd);
    return ok;
  }
  std::vector<uint64_t> Read() const {
    std::vector<uint64_t> counts(n_, 0);
    const int fd = ::open(path_.c_str(), O_RDONLY);
    if (fd < 0) return counts;
    (void)!::pread(fd, counts.data(), n_ * sizeof(uint64_t), 0);
    ::close(fd);
    return counts;
  }

 private:
  std::string path_;
  size_t n_;
};

struct Child {
  pid_t pid = -1;
  int out = -1;  // the child's stdout
};

Child Spawn(const BlackboxOptions& options, uint64_t seed, const std::vector<std::string>& extra_env) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return {};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> args = {options.self,
                                   "--blackbox-child",
                                   options.dir,
                                   "--seed",
                                   std::to_string(seed),
                                   "--max-ops",
                                   std::to_string(options.max_ops)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = extra_env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("SPOOL_KILL_")) continue;
    env_strings.emplace_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  Child child;
  if (posix_spawn(&child.pid, options.self.c_str(), &actions, nullptr, argv.data(), envp.data()) != 0) child.pid = -1;
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  child.out = pipe_fds[0];
  return child;
}

}  // namespace

BlackboxFigures RunBlackbox(const BlackboxOptions& options) {
  BlackboxFigures figures;
  figures.crash.workload = "blackbox";
  std::error_code ec;
  std::filesystem::remove_all(options.dir, ec);
  std::filesystem::create_directories(options.dir, ec);
  const std::vector<std::string>& points = kill_point::Defined();
  figures.points_defined = points.size();
  std::vector<uint64_t> hits(points.size(), 0), kills(points.size(), 0);
  KillCounts counts(CountsPath(options.dir));
  Model model;
  model.digests[0] = Digest(Tables{});
  const auto started = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(); };
  cli::ProgressBar bar("blackbox", "restarts", cli::ProgressEnabled(cli::ProgressMode::kAuto));
  for (uint64_t cycle = 0;; ++cycle) {
    if (options.cycles > 0 ? cycle >= options.cycles : elapsed() >= options.duration_s) break;
    if (options.cycles > 0) bar.Update(cycle, options.cycles);
    const uint64_t seed = options.first_seed + cycle;
    std::mt19937_64 rng(Mix(seed, 0xb1ac));
    const std::string where = "blackbox seed=" + std::to_string(seed);
    // Three runs in four arm the kill points (when built in): each with a
    // focus, the point killed least so far, rotating through those reached.
    std::vector<std::string> env;
    if (!points.empty() && rng() % 4 != 0 && counts.Reset()) {
      size_t focus = cycle % points.size();
      for (size_t i = 0; i < points.size(); ++i) {
        if (hits[i] > 0 && (hits[focus] == 0 || kills[i] < kills[focus])) focus = i;
      }
      const uint64_t per_run = std::max<uint64_t>(1, hits[focus] / std::max<uint64_t>(1, cycle));
      env = {"SPOOL_KILL_ODDS=20000", "SPOOL_KILL_FOCUS=" + points[focus],
             "SPOOL_KILL_FOCUS_ODDS=" + std::to_string(1 + rng() % (2 * per_run)),
             "SPOOL_KILL_SEED=" + std::to_string(rng()), "SPOOL_KILL_COUNTS=" + CountsPath(options.dir)};
    }
    Child child = Spawn(options, seed, env);
    if (child.pid < 0) {
      Violate(&figures, where, "child", "cannot start " + options.self);
      break;
    }
    // The parent kills after a random number of acknowledgements (unless a
    // kill point or the end of the child's work comes first).
    // One run in eight is left to end by itself.
    const uint64_t kill_after =
        rng() % 8 == 0 ? UINT64_MAX : 1 + rng() % std::max<uint64_t>(1, options.max_ops * 3 / 4);
    uint64_t acks = 0;
    bool killed_by_parent = false;
    std::string pending;
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(child.out, buf, sizeof buf);
      if (n <= 0) break;
      pending.append(buf, static_cast<size_t>(n));
      size_t eol;
      while ((eol = pending.find('\n')) != std::string::npos) {
        const std::string line = pending.substr(0, eol);
        pending.erase(0, eol + 1);
        Learn(line, &model, &figures);
        if (line.starts_with("ack ") && ++acks == kill_after && !killed_by_parent) {
          ::kill(child.pid, SIGKILL);
          killed_by_parent = true;
        }
      }
    }
    ::close(child.out);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    if (!env.empty()) {
      const std::vector<uint64_t> c = counts.Read();
      for (size_t i = 0; i < points.size(); ++i) hits[i] += c[1 + i];
      if (killed && c[0] > 0 && c[0] <= points.size()) {  // a point fired (before any kill of the parent's landed)
        ++kills[c[0] - 1];
        ++figures.killed_at_points;
        killed_by_parent = false;
      }
    }
    if (killed && killed_by_parent) ++figures.killed_by_parent;
    if (!killed) {
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        Violate(&figures, where, "child", "the workload failed (exit " + std::to_string(WEXITSTATUS(status)) + ")");
        break;
      }
      ++figures.clean_exits;
    }
    ++figures.crash.crash_points;
    ++figures.crash.states_checked;
    CheckStore(options.dir, where, &model, &rng, &figures);
    if (figures.crash.violations > 0) break;  // the store is not what the model says: stop there
  }
  if (options.cycles > 0) bar.Update(options.cycles, options.cycles);
  for (size_t i = 0; i < points.size(); ++i) {
    figures.points_hit += hits[i] > 0;
    figures.points_killed += kills[i] > 0;
    if (hits[i] == 0) figures.points_never_hit.push_back(points[i]);
  }
  return figures;
}

}  // namespace spool::crashtest
