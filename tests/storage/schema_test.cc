#include "spool/storage/schema.h"

#include <gtest/gtest.h>

namespace spool {
namespace {

TEST(TableIdTest, ParsesThreePartIdentifiers) {
  TableId id;
  ASSERT_TRUE(TableId::Parse("main.sales.orders_2026", &id).ok());
  EXPECT_EQ(id.catalog, "main");
  EXPECT_EQ(id.schema, "sales");
  EXPECT_EQ(id.table, "orders_2026");
  EXPECT_EQ(id.ToString(), "main.sales.orders_2026");
}

TEST(TableIdTest, MalformedIdentifiersAreRefusedNamingThePart) {
  TableId id;
  for (const char* bad : {"orders", "sales.orders", "a.b.c.d", "a..c", ".b.c", "a.b.", ""}) {
    Status s = TableId::Parse(bad, &id);
    EXPECT_TRUE(s.IsInvalidArgument()) << bad;
  }
  Status s = TableId::Parse("main.sales.9orders", &id);
  EXPECT_NE(s.message().find("table '9orders' must start with a letter"), std::string::npos) << s.ToString();
  s = TableId::Parse("main.sa-les.orders", &id);
  EXPECT_NE(s.message().find("schema 'sa-les'"), std::string::npos) << s.ToString();
  s = TableId::Parse("main.sales." + std::string(129, 'x'), &id);
  EXPECT_NE(s.message().find("longer than 128"), std::string::npos) << s.ToString();
}

TEST(ColumnTypeTest, NamesRoundTripAndUnknownNamesAreRefused) {
  for (ColumnType t : {ColumnType::kInt64, ColumnType::kDouble, ColumnType::kString, ColumnType::kBool,
                       ColumnType::kTimestamp, ColumnType::kBytes}) {
    ColumnType parsed;
    ASSERT_TRUE(ParseColumnType(ColumnTypeName(t), &parsed).ok());
    EXPECT_EQ(parsed, t);
  }
  ColumnType parsed;
  EXPECT_TRUE(ParseColumnType("varchar", &parsed).IsInvalidArgument());
}

Schema OrdersSchema() {
  Schema schema;
  Status s = Schema::Make({{"id", ColumnType::kInt64, false},
                           {"customer", ColumnType::kString, true},
                           {"amount", ColumnType::kDouble, true},
                           {"placed", ColumnType::kTimestamp, false}},
                          {"id"}, &schema);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return schema;
}

TEST(SchemaTest, MakeRefusesBadColumnsAndKeys) {
  Schema schema;
  EXPECT_TRUE(Schema::Make({}, {}, &schema).IsInvalidArgument());
  EXPECT_TRUE(Schema::Make({{"a", ColumnType::kInt64, false}, {"a", ColumnType::kString, true}}, {}, &schema)
                  .IsInvalidArgument());
  EXPECT_TRUE(Schema::Make({{"bad name", ColumnType::kInt64, false}}, {}, &schema).IsInvalidArgument());
  Status s = Schema::Make({{"a", ColumnType::kInt64, false}}, {"b"}, &schema);
  EXPECT_NE(s.message().find("'b' is not a column"), std::string::npos) << s.ToString();
  s = Schema::Make({{"a", ColumnType::kInt64, true}}, {"a"}, &schema);
  EXPECT_NE(s.message().find("must not be nullable"), std::string::npos) << s.ToString();
  EXPECT_TRUE(Schema::Make({{"a", ColumnType::kInt64, false}}, {"a", "a"}, &schema).IsInvalidArgument());
}

TEST(SchemaTest, KeyColumnsFollowTheKeyOrder) {
  Schema schema;
  ASSERT_TRUE(
      Schema::Make({{"a", ColumnType::kInt64, false}, {"b", ColumnType::kString, false}}, {"b", "a"}, &schema).ok());
  EXPECT_EQ(schema.key_columns(), (std::vector<size_t>{1, 0}));
  EXPECT_TRUE(schema.has_key());
}

TEST(SchemaTest, ValidateNamesTheColumnThatDoesNotFit) {
  const Schema schema = OrdersSchema();
  EXPECT_TRUE(schema.Validate({int64_t{1}, std::string("ada"), 9.5, Timestamp{100}}).ok());
  EXPECT_TRUE(schema.Validate({int64_t{1}, Value{}, Value{}, Timestamp{100}}).ok());
  Status s = schema.Validate({int64_t{1}, std::string("ada"), std::string("9.5"), Timestamp{100}});
  EXPECT_EQ(s.message(), "column 'amount' is double but the value is string");
  s = schema.Validate({Value{}, std::string("ada"), 9.5, Timestamp{100}});
  EXPECT_EQ(s.message(), "column 'id' must not be null");
  s = schema.Validate({int64_t{1}});
  EXPECT_EQ(s.message(), "row has 1 values but the table has 4 columns");
}

}  // namespace
}  // namespace spool
