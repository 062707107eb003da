// MemEnv must behave like a POSIX file system closely enough that code
// tested on it behaves the same on PosixEnv: explicit directories, atomic
// rename-over, handles that outlive their names, exclusive locks.
#include "spool/testing/mem_env.h"

#include <algorithm>

#include <gtest/gtest.h>

namespace spool {
namespace {

Status WriteFile(Env* env, const std::string& path, std::string_view data) {
  std::unique_ptr<File> file;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kTruncate, &file));
  SPOOL_RETURN_IF_ERROR(file->Write(0, data));
  return file->Close();
}

std::string ReadAll(Env* env, const std::string& path) {
  std::string out;
  Status s = ReadFileToString(env, path, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

TEST(MemEnvTest, CreateInMissingDirectoryIsNotFound) {
  MemEnv env;
  std::unique_ptr<File> file;
  EXPECT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).IsNotFound());
  EXPECT_TRUE(env.CreateDir("db/sub").IsNotFound());
  ASSERT_TRUE(env.CreateDir("db").ok());
  EXPECT_TRUE(env.OpenFile("db/a", OpenMode::kCreate, &file).ok());
  EXPECT_TRUE(env.OpenFile("top", OpenMode::kCreate, &file).ok());
  EXPECT_TRUE(env.OpenFile("/rooted", OpenMode::kCreate, &file).ok());
}

TEST(MemEnvTest, OpenModesRespectExistence) {
  MemEnv env;
  std::unique_ptr<File> file;
  EXPECT_TRUE(env.OpenFile("f", OpenMode::kReadOnly, &file).IsNotFound());
  EXPECT_TRUE(env.OpenFile("f", OpenMode::kReadWrite, &file).IsNotFound());
  ASSERT_TRUE(WriteFile(&env, "f", "hello").ok());
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kCreate, &file).ok());
  EXPECT_EQ(ReadAll(&env, "f"), "hello");
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kTruncate, &file).ok());
  EXPECT_EQ(ReadAll(&env, "f"), "");
}

TEST(MemEnvTest, ReadOnlyHandleRefusesWrites) {
  MemEnv env;
  ASSERT_TRUE(WriteFile(&env, "f", "abc").ok());
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kReadOnly, &file).ok());
  EXPECT_TRUE(file->Write(0, "x").IsIOError());
  EXPECT_TRUE(file->Truncate(0).IsIOError());
  EXPECT_TRUE(file->Sync().IsIOError());
  EXPECT_EQ(ReadAll(&env, "f"), "abc");
}

TEST(MemEnvTest, WritePastEndZeroFillsTheGap) {
  MemEnv env;
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(file->Write(4, "xy").ok());
  EXPECT_EQ(ReadAll(&env, "f"), std::string("\0\0\0\0xy", 6));
  std::string out;
  ASSERT_TRUE(file->Read(5, 10, &out).ok());
  EXPECT_EQ(out, "y");
  ASSERT_TRUE(file->Read(100, 10, &out).ok());
  EXPECT_EQ(out, "");
}

TEST(MemEnvTest, TruncateShrinksAndExtendsWithZeros) {
  MemEnv env;
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(file->Write(0, "abcdef").ok());
  ASSERT_TRUE(file->Truncate(2).ok());
  ASSERT_TRUE(file->Truncate(4).ok());
  EXPECT_EQ(ReadAll(&env, "f"), std::string("ab\0\0", 4));
  uint64_t size = 0;
  ASSERT_TRUE(env.GetFileSize("f", &size).ok());
  EXPECT_EQ(size, 4u);
}

TEST(MemEnvTest, ListDirNamesOnlyDirectChildren) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("db").ok());
  ASSERT_TRUE(env.CreateDir("db/sub").ok());
  ASSERT_TRUE(WriteFile(&env, "db/a", "").ok());
  ASSERT_TRUE(WriteFile(&env, "db/sub/deep", "").ok());
  ASSERT_TRUE(WriteFile(&env, "dbx", "").ok());  // shares the prefix "db"
  std::vector<std::string> names;
  ASSERT_TRUE(env.ListDir("db", &names).ok());
  EXPECT_EQ(Sorted(names), (std::vector<std::string>{"a", "sub"}));
  ASSERT_TRUE(env.ListDir("db/", &names).ok());
  EXPECT_EQ(Sorted(names), (std::vector<std::string>{"a", "sub"}));
  ASSERT_TRUE(env.ListDir(".", &names).ok());
  EXPECT_EQ(Sorted(names), (std::vector<std::string>{"db", "dbx"}));
}

TEST(MemEnvTest, ListDirOfMissingOrFileFails) {
  MemEnv env;
  std::vector<std::string> names;
  EXPECT_TRUE(env.ListDir("nope", &names).IsNotFound());
  ASSERT_TRUE(WriteFile(&env, "f", "").ok());
  EXPECT_TRUE(env.ListDir("f", &names).IsIOError());
}

TEST(MemEnvTest, RemoveDirRefusesNonEmptyDirectory) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("db").ok());
  ASSERT_TRUE(WriteFile(&env, "db/a", "").ok());
  EXPECT_TRUE(env.RemoveDir("db").IsIOError());
  EXPECT_TRUE(env.RemoveDir("db/a").IsIOError());
  EXPECT_TRUE(env.RemoveFile("db").IsIOError());
  ASSERT_TRUE(env.RemoveFile("db/a").ok());
  EXPECT_TRUE(env.RemoveDir("db").ok());
  EXPECT_FALSE(env.FileExists("db"));
  EXPECT_TRUE(env.RemoveDir("db").IsNotFound());
  EXPECT_TRUE(env.RemoveFile("db/a").IsNotFound());
}

TEST(MemEnvTest, CreateDirIsIdempotentButNotOverAFile) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("db").ok());
  EXPECT_TRUE(env.CreateDir("db").ok());
  ASSERT_TRUE(WriteFile(&env, "f", "").ok());
  EXPECT_TRUE(env.CreateDir("f").IsIOError());
}

TEST(MemEnvTest, RenameReplacesTargetAtomically) {
  MemEnv env;
  ASSERT_TRUE(WriteFile(&env, "a", "new").ok());
  ASSERT_TRUE(WriteFile(&env, "b", "old").ok());
  ASSERT_TRUE(env.RenameFile("a", "b").ok());
  EXPECT_FALSE(env.FileExists("a"));
  EXPECT_EQ(ReadAll(&env, "b"), "new");
  EXPECT_TRUE(env.RenameFile("a", "b").IsNotFound());
  EXPECT_TRUE(env.RenameFile("b", "missing/b").IsNotFound());
  EXPECT_EQ(ReadAll(&env, "b"), "new");
}

TEST(MemEnvTest, OpenHandleSurvivesRenameAndRemove) {
  MemEnv env;
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("a", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(file->Write(0, "one").ok());
  ASSERT_TRUE(env.RenameFile("a", "b").ok());
  ASSERT_TRUE(file->Write(3, "two").ok());
  EXPECT_EQ(ReadAll(&env, "b"), "onetwo");
  ASSERT_TRUE(env.RemoveFile("b").ok());
  ASSERT_TRUE(file->Write(6, "three").ok());
  std::string out;
  ASSERT_TRUE(file->Read(0, 100, &out).ok());
  EXPECT_EQ(out, "onetwothree");
  EXPECT_FALSE(env.FileExists("b"));
  // A new file with the old name is a different inode.
  ASSERT_TRUE(WriteFile(&env, "b", "fresh").ok());
  ASSERT_TRUE(file->Read(0, 100, &out).ok());
  EXPECT_EQ(out, "onetwothree");
}

TEST(MemEnvTest, RenameMovesADirectoryWithItsContents) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("a").ok());
  ASSERT_TRUE(WriteFile(&env, "a/f", "x").ok());
  ASSERT_TRUE(env.RenameFile("a", "b").ok());
  EXPECT_FALSE(env.FileExists("a/f"));
  EXPECT_EQ(ReadAll(&env, "b/f"), "x");
  ASSERT_TRUE(env.CreateDir("c").ok());
  ASSERT_TRUE(WriteFile(&env, "c/g", "").ok());
  EXPECT_TRUE(env.RenameFile("b", "c").IsIOError());  // non-empty target
}

TEST(MemEnvTest, ClosedHandleRefusesIo) {
  MemEnv env;
  std::unique_ptr<File> file;
  ASSERT_TRUE(env.OpenFile("f", OpenMode::kCreate, &file).ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_TRUE(file->Close().ok());  // idempotent
  std::string out;
  EXPECT_TRUE(file->Read(0, 1, &out).IsIOError());
  EXPECT_TRUE(file->Write(0, "x").IsIOError());
}

TEST(MemEnvTest, SecondLockIsBusyUntilFirstReleased) {
  MemEnv env;
  std::unique_ptr<FileLock> first;
  std::unique_ptr<FileLock> second;
  ASSERT_TRUE(env.LockFile("LOCK", &first).ok());
  EXPECT_TRUE(env.FileExists("LOCK"));
  EXPECT_TRUE(env.LockFile("LOCK", &second).IsBusy());
  first.reset();
  EXPECT_TRUE(env.LockFile("LOCK", &second).ok());
  EXPECT_TRUE(env.LockFile("nodir/LOCK", &first).IsNotFound());
}

TEST(MemEnvTest, ClockAdvancesByOnePerCallAndCanBeSet) {
  MemEnv env;
  EXPECT_EQ(env.NowMicros(), 1'700'000'000'000'000u);
  EXPECT_EQ(env.NowMicros(), 1'700'000'000'000'001u);
  env.SetNowMicros(42);
  EXPECT_EQ(env.NowMicros(), 42u);
  EXPECT_EQ(env.NowMicros(), 43u);
}

TEST(MemEnvTest, ACopyHasTheFilesLinksAndClockAndThenGoesItsOwnWay) {
  MemEnv original;
  ASSERT_TRUE(original.CreateDir("db").ok());
  ASSERT_TRUE(WriteFile(&original, "db/a", "alpha").ok());
  ASSERT_TRUE(original.LinkFile("db/a", "db/a-link").ok());
  original.SetNowMicros(1000);
  MemEnv copy;
  ASSERT_TRUE(WriteFile(&copy, "gone", "not in the original").ok());
  std::unique_ptr<File> gone;
  ASSERT_TRUE(copy.OpenFile("gone", OpenMode::kReadWrite, &gone).ok());
  copy.CopyFrom(original);

  EXPECT_EQ(copy.NowMicros(), 1000u);
  EXPECT_FALSE(copy.FileExists("gone"));
  std::string kept;
  ASSERT_TRUE(gone->Read(0, 19, &kept).ok());  // an open handle keeps its data
  EXPECT_EQ(kept, "not in the original");
  std::vector<std::string> names;
  ASSERT_TRUE(copy.ListDir("db", &names).ok());
  EXPECT_EQ(Sorted(names), (std::vector<std::string>{"a", "a-link"}));
  // The link is a link in the copy, to the copy's file, not the original's.
  std::unique_ptr<File> file;
  ASSERT_TRUE(copy.OpenFile("db/a", OpenMode::kReadWrite, &file).ok());
  ASSERT_TRUE(file->Write(0, "ALPHA").ok());
  EXPECT_EQ(ReadAll(&copy, "db/a-link"), "ALPHA");
  EXPECT_EQ(ReadAll(&original, "db/a"), "alpha");
  EXPECT_EQ(ReadAll(&original, "db/a-link"), "alpha");
  ASSERT_TRUE(WriteFile(&original, "db/b", "beta").ok());
  EXPECT_FALSE(copy.FileExists("db/b"));
  EXPECT_EQ(original.NowMicros(), 1000u);  // the copy's clock is its own
}

TEST(MemEnvTest, HandleOutlivesEnv) {
  std::unique_ptr<File> file;
  {
    MemEnv env;
    ASSERT_TRUE(env.OpenFile("f", OpenMode::kCreate, &file).ok());
  }
  EXPECT_TRUE(file->Write(0, "still here").ok());
}

TEST(MemEnvTest, HelpersWorkOnMemEnv) {
  MemEnv env;
  ASSERT_TRUE(env.CreateDir("db").ok());
  ASSERT_TRUE(WriteFileAtomically(&env, "db/meta", "v1").ok());
  ASSERT_TRUE(WriteFileAtomically(&env, "db/meta", "v2").ok());
  EXPECT_EQ(ReadAll(&env, "db/meta"), "v2");
  EXPECT_FALSE(env.FileExists("db/meta.tmp"));
  ASSERT_TRUE(env.CreateDir("db/sub").ok());
  ASSERT_TRUE(WriteFile(&env, "db/sub/x", "").ok());
  ASSERT_TRUE(RemoveTree(&env, "db").ok());
  EXPECT_FALSE(env.FileExists("db"));
  EXPECT_TRUE(RemoveTree(&env, "db").ok());
}

}  // namespace
}  // namespace spool
