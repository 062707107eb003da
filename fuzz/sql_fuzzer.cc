// Fuzz target: SQL over a store (spool/sql/sql.h) — the Spark translation
// and the virtual tables' arguments. Input: statements' text. Oracle,
// beyond "no crash, no hang, no undefined behaviour": the translation
// refuses with InvalidArgument naming a line and column within the text,
// or gives text that translates to itself again (and declares only change
// feeds of the store's tables and tables as of a version); running the text over a
// small store (a keyed and a keyless table, three versions, a timeout of
// 50 ms) succeeds or fails as bad input does — InvalidArgument, NotFound
// or Aborted, never damage — and changes nothing in the store.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "spool/sql/sql.h"
#include "spool/storage/store.h"

namespace {

void Check(bool ok, const char* what, std::string_view text) {
  if (!ok) {
    std::fprintf(stderr, "sql_fuzzer: invariant violated: %s\ninput: %.*s\n", what, static_cast<int>(text.size()),
                 text.data());
    std::abort();
  }
}

const std::vector<std::string> kTables = {"main.s.pairs", "main.s.log"};

// The store every input runs over, made once in a temporary directory
// that goes when the process exits.
class Fixture {
 public:
  Fixture() {
    dir_ = (std::filesystem::temp_directory_path() / "spool-sql-fuzz-XXXXXX").string();
    if (mkdtemp(dir_.data()) == nullptr || !spool::Store::Open(spool::StoreOptions{}, dir_, &store_).ok()) std::abort();
    spool::Schema keyed, keyless;
    if (!spool::Schema::Make({{"k", spool::ColumnType::kString, false},
                              {"n", spool::ColumnType::kInt64, false},
                              {"at", spool::ColumnType::kTimestamp, true},
                              {"x", spool::ColumnType::kBytes, true}},
                             {"k", "n"}, &keyed)
             .ok() ||
        !spool::Schema::Make({{"msg", spool::ColumnType::kString, true}, {"d", spool::ColumnType::kDouble, true}}, {},
                             &keyless)
             .ok()) {
      std::abort();
    }
    const spool::TableId pairs{"main", "s", "pairs"}, log{"main", "s", "log"};
    spool::Transaction create("CREATE TABLE");
    create.CreateTable(pairs, spool::TableKind::kStreamingTable, keyed);
    create.CreateTable(log, spool::TableKind::kStreamingTable, keyless);
    spool::Transaction first, second;
    for (int64_t n = 0; n < 8; ++n) {
      first.Write(pairs, spool::Row{std::string(n % 2 == 0 ? "a" : "b"), n, spool::Timestamp{n}, spool::Bytes{"\1"}});
      first.Write(log, spool::Row{std::string("m") + std::to_string(n), 0.5 * static_cast<double>(n)});
    }
    second.Delete(pairs, spool::Row{std::string("a"), int64_t{2}});
    second.Write(pairs, spool::Row{std::string("c"), int64_t{1}, std::monostate{}, std::monostate{}});
    for (const spool::Transaction* txn : {&create, &first, &second}) {
      if (!store_->Commit(*txn).ok()) std::abort();
    }
  }
  ~Fixture() {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  spool::Store* store() { return store_.get(); }

 private:
  std::string dir_;
  std::unique_ptr<spool::Store> store_;
};

spool::Store* FixtureStore() {
  static Fixture fixture;
  return fixture.store();
}

// An error's "(at line L, column C)" lies within the text.
void CheckPlace(const spool::Status& s, std::string_view text) {
  Check(s.IsInvalidArgument(), "a translation error that is not InvalidArgument", text);
  const std::string message(s.message());
  const size_t at = message.rfind("(at line ");
  Check(at != std::string::npos, "a translation error without its place", text);
  unsigned line = 0, column = 0;
  Check(std::sscanf(message.c_str() + at, "(at line %u, column %u)", &line, &column) == 2, "a malformed place", text);
  size_t lines = 1;
  for (char c : text) lines += c == '\n' ? 1 : 0;
  Check(line >= 1 && line <= lines && column >= 1 && column <= text.size() + 1, "a place outside the text", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string translated;
  std::vector<std::string> declare;
  const spool::Status s = spool::sql::TranslateSpark(text, kTables, &translated, &declare);
  if (!s.ok()) {
    CheckPlace(s, text);
  } else {
    std::string again;
    std::vector<std::string> declare_again;
    const spool::Status t = spool::sql::TranslateSpark(translated, kTables, &again, &declare_again);
    Check(t.ok() && again == translated, "a translation that does not translate to itself", text);
    for (const std::string& name : declare) {
      Check(name == "table_changes:" + kTables[0] || name == "table_changes:" + kTables[1] ||
                name.starts_with("table_at:"),
            "a virtual table to declare that is neither a change feed of a store table nor a past table", text);
    }
  }
  if (size > 4096) return 0;  // long texts: the translation alone
  spool::Store* store = FixtureStore();
  const uint64_t newest = store->log()->Newest().version;
  uint64_t rows = 0;
  spool::sql::ResultHandler results;
  results.on_row = [&](const spool::Row&) { return ++rows < 10000; };
  const spool::Status run = spool::sql::Query(store, text, spool::sql::QueryOptions{50}, results);
  Check(run.ok() || run.IsInvalidArgument() || run.IsNotFound() || run.IsAborted(),
        "a statement failing as damage, not as bad input", text);
  Check(store->log()->Newest().version == newest, "a statement changed the store", text);
  return 0;
}
