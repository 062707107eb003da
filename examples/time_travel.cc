// Embedding Spool's storage: a keyed table written in several commits,
// read as of an earlier version, its change data feed, its history, a
// restore to an earlier version, and a vacuum dry run.
//
//   time_travel DIR      (DIR: an empty or missing directory)
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "spool/storage/store.h"

namespace {

using namespace spool;

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

uint64_t Commit(Store* store, const Transaction& txn) {
  CommitResult result;
  Check(store->Commit(txn, &result), "committing");
  return result.version;
}

// "alice=3 bob=5": the table's rows as of `options`.
std::string Rows(Store* store, const TableId& id, const ReadOptions& options) {
  std::string out;
  Check(store->Read(id, options,
                    [&](const Row& row) {
                      out += (out.empty() ? "" : " ") + std::get<std::string>(row[0]) + "=" +
                             std::to_string(std::get<int64_t>(row[1]));
                      return true;
                    }),
        "reading");
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::unique_ptr<Store> store;
  Check(Store::Open(StoreOptions{}, argv[1], &store), "opening the store");

  TableId stock;
  Check(TableId::Parse("main.shop.stock", &stock), "naming the table");
  Schema schema;
  Check(Schema::Make({{"item", ColumnType::kString, false}, {"count", ColumnType::kInt64, false}}, {"item"}, &schema),
        "making the schema");
  Transaction create("CREATE TABLE");
  create.CreateTable(stock, TableKind::kStreamingTable, schema);
  Commit(store.get(), create);

  Transaction first;
  first.Write(stock, Row{std::string("apple"), int64_t{3}});
  first.Write(stock, Row{std::string("pear"), int64_t{5}});
  const uint64_t v_first = Commit(store.get(), first);
  Transaction second;
  second.Write(stock, Row{std::string("apple"), int64_t{1}});
  second.Delete(stock, Row{std::string("pear")});
  second.Write(stock, Row{std::string("plum"), int64_t{9}});
  const uint64_t v_second = Commit(store.get(), second);

  ReadOptions as_of;
  as_of.version = v_first;
  const std::string then = Rows(store.get(), stock, as_of);
  const std::string now = Rows(store.get(), stock, ReadOptions{});
  std::printf("as of version %llu: %s\nnow (version %llu): %s\n", static_cast<unsigned long long>(v_first),
              then.c_str(), static_cast<unsigned long long>(v_second), now.c_str());

  std::printf("changes %llu..%llu:\n", static_cast<unsigned long long>(v_first),
              static_cast<unsigned long long>(v_second));
  int changes = 0;
  Check(store->Changes(stock, v_first, v_second,
                       [&](const ChangeRow& change) {
                         std::printf("  v%llu %-16s %s\n", static_cast<unsigned long long>(change.commit_version),
                                     std::string(ChangeTypeName(change.change_type)).c_str(),
                                     std::get<std::string>(change.row[0]).c_str());
                         ++changes;
                         return true;
                       }),
        "reading the change feed");

  // Restore: one new commit bringing the table back to the first version.
  Check(store->Restore(stock, v_first), "restoring");
  const std::string restored = Rows(store.get(), stock, ReadOptions{});
  std::vector<HistoryEntry> history;
  Check(store->History(stock, &history), "reading the history");
  for (const HistoryEntry& h : history) {
    std::printf("  version %llu  %s\n", static_cast<unsigned long long>(h.version), h.operation.c_str());
  }
  VacuumOptions vacuum;
  vacuum.dry_run = true;
  VacuumReport report;
  Check(store->Vacuum(vacuum, &report), "vacuum dry run");
  std::printf("vacuum (dry run) would delete %zu file(s); versions from %llu are kept\n", report.paths.size(),
              static_cast<unsigned long long>(report.floor_version));

  // Exactly what the commits above must give.
  const bool ok = then == "apple=3 pear=5" && now == "apple=1 plum=9" && restored == then && changes == 6 &&
                  history.size() == 4 && history.front().operation == "RESTORE";
  std::printf(ok ? "time travel, the change feed and restore read what was written\n" : "unexpected results\n");
  return ok ? 0 : 1;
}
