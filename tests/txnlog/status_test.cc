#include "spool/txnlog/status.h"

#include <gtest/gtest.h>

namespace spool {
namespace {

TEST(StatusTest, OkCarriesNoMessage) {
  Status s = Status::OK();
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
}

TEST(StatusTest, ErrorKeepsCodeAndMessageThroughCopies) {
  Status s = Status::Corruption("segment 000003.seg offset 64: checksum mismatch");
  Status copy = s;
  EXPECT_TRUE(copy.IsCorruption());
  EXPECT_EQ(copy.ToString(), "Corruption: segment 000003.seg offset 64: checksum mismatch");
  copy = Status::NotFound("x");
  EXPECT_TRUE(copy.IsNotFound());
  EXPECT_TRUE(s.IsCorruption());
}

TEST(StatusTest, WithContextPrefixesMessageAndKeepsCode) {
  Status s = Status::IOError("disk gone").WithContext("open log");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(), "open log: disk gone");
  EXPECT_TRUE(Status::OK().WithContext("ignored").ok());
}

TEST(StatusTest, OutOfRangeIsItsOwnCodeWithItsOwnName) {
  Status s = Status::OutOfRange("offset 5 is no longer retained");
  EXPECT_TRUE(s.IsOutOfRange());
  EXPECT_FALSE(s.IsNotFound() || s.IsInvalidArgument());
  EXPECT_EQ(s.ToString(), "OutOfRange: offset 5 is no longer retained");
}

}  // namespace
}  // namespace spool
