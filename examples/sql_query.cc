// Embedding Spool's SQL: the same statements `spool sql` runs, from C++.
// Orders are written in two commits; a query reads the table now, one
// reads it as of the first commit, and one reads its change feed and
// history (docs/sql.md).
//
//   sql_query DIR      (DIR: an empty or missing directory)
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "spool/sql/sql.h"
#include "spool/storage/store.h"

namespace {

using namespace spool;

void Check(const Status& s, const char* what) {
  if (s.ok()) return;
  std::fprintf(stderr, "%s: %s\n", what, s.ToString().c_str());
  std::exit(1);
}

// Prints each row of `query`'s result as "a | b | c".
void Print(sql::Session* session, const std::string& query) {
  std::printf("%s\n", query.c_str());
  sql::ResultHandler results;
  results.on_row = [](const Row& row) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) line += " | ";
      const Value& v = row[i];
      if (IsNull(v)) line += "NULL";
      else if (const auto* n = std::get_if<int64_t>(&v)) line += std::to_string(*n);
      else if (const auto* d = std::get_if<double>(&v)) line += std::to_string(*d);
      else if (const auto* text = std::get_if<std::string>(&v)) line += *text;
      else line += "<blob>";
    }
    std::printf("%s\n", line.c_str());
    return true;
  };
  Check(session->Execute(query, sql::QueryOptions{}, results), "querying");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: sql_query DIR\n");
    return 2;
  }
  std::unique_ptr<Store> store;
  Check(Store::Open(StoreOptions{}, argv[1], &store), "opening the store");
  TableId orders;
  Check(TableId::Parse("main.shop.orders", &orders), "naming the table");
  Schema schema;
  Check(Schema::Make({{"id", ColumnType::kInt64, false},
                      {"country", ColumnType::kString, false},
                      {"amount", ColumnType::kInt64, true}},
                     {"id"}, &schema),
        "making the schema");
  Transaction first("CREATE TABLE");
  first.CreateTable(orders, TableKind::kStreamingTable, schema);
  first.Write(orders, {int64_t{1}, std::string("de"), int64_t{10}});
  first.Write(orders, {int64_t{2}, std::string("fr"), int64_t{5}});
  CommitResult v1;
  Check(store->Commit(first, &v1), "committing");
  Transaction second;
  second.Write(orders, {int64_t{2}, std::string("fr"), int64_t{50}});
  second.Write(orders, {int64_t{3}, std::string("de"), int64_t{7}});
  Check(store->Commit(second), "committing");

  // A session keeps its scratch tables between statements; sql::Query runs
  // one text in a session of its own.
  std::unique_ptr<sql::Session> session;
  Check(sql::Session::Open(store.get(), &session), "opening a SQL session");
  Print(session.get(), "SELECT country, sum(amount) FROM main.shop.orders GROUP BY country ORDER BY country");
  Print(session.get(),
        "SELECT id, amount FROM main.shop.orders VERSION AS OF " + std::to_string(v1.version) + " WHERE id = 2");
  Print(session.get(), "SELECT _commit_version, _change_type, id, amount FROM table_changes('main.shop.orders', " +
                           std::to_string(v1.version + 1) + ")");
  Print(session.get(), "SELECT version, operation FROM (DESCRIBE HISTORY main.shop.orders)");
  return 0;
}
