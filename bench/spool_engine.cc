// Spool's transaction log as an engine: a commit is one Append whose body
// is the records' key and value bytes back to back, operation "WRITE".
#include <string>

#include "engine.h"
#include "spool/txnlog/log.h"

namespace spool::bench {
namespace {

constexpr std::string_view kOperation = "WRITE";

class SpoolEngine final : public Engine {
 public:
  explicit SpoolEngine(bool group_window) : group_window_(group_window) {}

  std::string_view name() const override { return group_window_ ? kSpoolGroup : kSpool; }
  std::string_view log_file_suffix() const override { return ".seg"; }

  Status Open(const std::string& dir) override {
    LogOptions options;
    options.durability = group_window_ ? Durability::kGroupWindow : Durability::kSync;
    return Log::Open(options, dir, &log_);
  }

  Status Commit(std::span<const Record> records) override {
    // Built per call, as a caller of Append would; peers copy into their
    // write batches the same way.
    thread_local std::string body;
    body.clear();
    for (const Record& r : records) {
      body.append(r.key);
      body.append(r.value);
    }
    LogCommit commit;
    return log_->Append(LogWrite{kOperation, body}, &commit);
  }

  Status ReadBack(const Record& last) override {
    const uint64_t newest = log_->Newest().version;
    if (newest == 0) return Status::NotFound("the log is empty");
    LogEntry entry;
    SPOOL_RETURN_IF_ERROR(log_->Read(newest, &entry));
    const std::string expected = std::string(last.key) + std::string(last.value);
    if (entry.operation != kOperation || !entry.body.ends_with(expected)) {
      return Status::Corruption("the newest commit does not end with the last record");
    }
    return Status::OK();
  }

  Status Close() override {
    log_.reset();
    return Status::OK();
  }

  std::optional<double> CommitsPerSync() override {
    if (log_ == nullptr) return std::nullopt;
    const LogStats stats = log_->Stats();
    if (stats.syncs == 0) return std::nullopt;
    return static_cast<double>(stats.appends) / static_cast<double>(stats.syncs);
  }

 private:
  const bool group_window_;
  std::unique_ptr<Log> log_;
};

}  // namespace

std::unique_ptr<Engine> NewSpoolEngine(bool group_window) { return std::make_unique<SpoolEngine>(group_window); }

}  // namespace spool::bench
