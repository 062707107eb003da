// ReadCountingEnv: an Env that counts the bytes its files read, so that a
// test can tell a lookup that reads one record from one that reads many.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "file_wrapping_env.h"

namespace spool::testing {

class ReadCountingEnv : public FileWrappingEnv {
 public:
  using FileWrappingEnv::FileWrappingEnv;
  uint64_t bytes_read() const { return bytes_read_.load(); }

 protected:
  std::unique_ptr<File> Wrap(std::unique_ptr<File> inner) override {
    return std::make_unique<CountingFile>(this, std::move(inner));
  }

 private:
  class CountingFile : public FileWrapper {
   public:
    CountingFile(ReadCountingEnv* env, std::unique_ptr<File> inner) : FileWrapper(std::move(inner)), env_(env) {}
    Status Read(uint64_t offset, size_t n, std::string* out) override {
      Status s = FileWrapper::Read(offset, n, out);
      env_->bytes_read_ += out->size();
      return s;
    }

   private:
    ReadCountingEnv* env_;
  };
  std::atomic<uint64_t> bytes_read_{0};
};

}  // namespace spool::testing
