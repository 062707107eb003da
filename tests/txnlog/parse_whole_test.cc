// ParseWhole: the checked parse of stored numbers (checkpoint offsets,
// watermark steps, archived cuts' epochs, pins, manifests).
#include "parse_whole.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace spool {
namespace {

TEST(ParseWholeTest, AWholeNumberIsRead) {
  uint64_t value = 0;
  ASSERT_TRUE(ParseWhole("0", &value));
  EXPECT_EQ(value, 0u);
  ASSERT_TRUE(ParseWhole("18446744073709551615", &value));
  EXPECT_EQ(value, UINT64_MAX);
  int64_t signed_value = 0;
  ASSERT_TRUE(ParseWhole("-42", &signed_value));
  EXPECT_EQ(signed_value, -42);
}

TEST(ParseWholeTest, AnythingButOneWholeNumberFailsWithoutThrowing) {
  uint64_t value = 7;
  for (const char* text : {"", " 1", "1 ", "12abc", "+1", "-1", "0x10", "1.5", "18446744073709551616"}) {
    EXPECT_FALSE(ParseWhole(text, &value)) << '"' << text << '"';
  }
  uint8_t small = 0;
  EXPECT_FALSE(ParseWhole("256", &small));  // out of the type's range
}

}  // namespace
}  // namespace spool
