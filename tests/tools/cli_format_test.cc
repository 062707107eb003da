// The CLI's tables: aligned, and fitted to a width by cutting the widest
// columns.
#include "cli_format.h"

#include <sstream>

#include <gtest/gtest.h>

namespace spool::cli {
namespace {

size_t Columns(const std::string& line) {
  size_t n = 0;
  for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

TEST(TableTest, ColumnsAreAlignedAndNothingIsCutWithoutALimit) {
  Table t({"table", "kind"});
  t.AddRow({"main.shop.orders", "streaming_table"});
  t.AddRow({"m.s.x", "materialized_view"});
  EXPECT_EQ(t.ToString(0),
            "table             kind\n"
            "-----------------------------------\n"
            "main.shop.orders  streaming_table\n"
            "m.s.x             materialized_view\n");
}

TEST(TableTest, AWideTableFitsEightyColumnsByCuttingItsWidestColumns) {
  Table t({"table", "kind", "columns", "key"});
  t.AddRow({"__spool.state.revenue__state0_aggregate", "internal_state",
            "__group bytes not null, country string, __count_0 int64 not null, __value_0 int64", "__group"});
  t.AddRow({"main.shop.orders", "streaming_table", "order_id int64 not null, amount int64", ""});
  const std::string out = t.ToString(80);
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_LE(Columns(line), 80u) << line;
  EXPECT_NE(out.find("…"), std::string::npos);
  EXPECT_NE(out.find("main.shop.orders"), std::string::npos);  // the narrow cells stay whole
  EXPECT_NE(out.find("internal_state"), std::string::npos);
  EXPECT_EQ(t.ToString(0).find("…"), std::string::npos);
}

}  // namespace
}  // namespace spool::cli
