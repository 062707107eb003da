// The state on a full disk: LMDB reports a write the disk took only part of
// as an I/O error; the state store says "no space left" and where, and
// keeps every staged commit readable. The test mounts a small tmpfs, and is
// skipped where it cannot.
#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "state_store.h"
#include "temp_dir.h"

namespace spool {
namespace {

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::mount("tmpfs", dir_.path().c_str(), "tmpfs", 0, "size=1m") != 0) {
      GTEST_SKIP() << "cannot mount a tmpfs here (" << std::strerror(errno) << "): the disk-full tests need root";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) ::umount2(dir_.path().c_str(), MNT_DETACH);
  }

  TempDir dir_;
  bool mounted_ = false;
};

TEST_F(DiskFullTest, AFullDiskUnderTheStateSaysNoSpaceAndWhere) {
  StateStoreOptions options;
  options.path = dir_.Sub("state");
  options.background = false;
  options.map_size_bytes = 64ull << 20;
  std::unique_ptr<StateStore> store;
  ASSERT_TRUE(StateStore::Open(options, &store).ok());
  StateDelta delta;
  std::mt19937_64 random(36);
  std::string value(4096, '\0');
  for (int i = 0; i < 512; ++i) {  // 2 MiB that do not compress, on a 1 MiB file system
    for (char& c : value) c = static_cast<char>(random());
    delta.Put(StateRowKey(3, "key-" + std::to_string(i)), value);
  }
  delta.Put(StateRowKey(3, "last"), "the last row");
  delta.position = StatePosition{9, 1, 1, 100};
  ASSERT_TRUE(store->Stage(std::move(delta)).ok());
  const Status s = store->Flush();
  EXPECT_TRUE(s.IsNoSpace() || s.IsFailed()) << s.ToString();
  EXPECT_NE(s.ToString().find("no space left on the file system of " + dir_.Sub("state")), std::string::npos)
      << s.ToString();
  // What was staged still reads: the log holds it, and a later open replays it.
  std::string got;
  bool found = false;
  ASSERT_TRUE(store->Get(StateRowKey(3, "last"), &got, &found).ok());
  EXPECT_TRUE(found);
  EXPECT_EQ(got, "the last row");
}

}  // namespace
}  // namespace spool
