// FileWrappingEnv: an EnvWrapper whose files are the target's, each
// wrapped by the subclass (Wrap) in a FileWrapper that forwards every call
// it does not override. The base of the tests' Envs that watch or hold
// back file calls (GatedSyncEnv, ReadCountingEnv).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "spool/txnlog/env.h"

namespace spool::testing {

class FileWrapper : public File {
 public:
  explicit FileWrapper(std::unique_ptr<File> inner) : inner_(std::move(inner)) {}
  Status Read(uint64_t offset, size_t n, std::string* out) override { return inner_->Read(offset, n, out); }
  Status Write(uint64_t offset, std::string_view data) override { return inner_->Write(offset, data); }
  Status Truncate(uint64_t size) override { return inner_->Truncate(size); }
  Status Size(uint64_t* size) override { return inner_->Size(size); }
  Status Close() override { return inner_->Close(); }
  Status Sync() override { return inner_->Sync(); }

 private:
  std::unique_ptr<File> inner_;
};

class FileWrappingEnv : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;
  Status OpenFile(const std::string& path, OpenMode mode, std::unique_ptr<File>* file) override {
    std::unique_ptr<File> inner;
    SPOOL_RETURN_IF_ERROR(target()->OpenFile(path, mode, &inner));
    *file = Wrap(std::move(inner));
    return Status::OK();
  }

 protected:
  virtual std::unique_ptr<File> Wrap(std::unique_ptr<File> inner) = 0;
};

}  // namespace spool::testing
