// Reading archived cuts (docs/log_format.md, "Truncation").
#include <algorithm>

#include "log_format.h"
#include "payload.h"
#include "record_scanner.h"
#include "spool/txnlog/log.h"

namespace spool {
namespace {

struct CutFile {
  std::string path;
  logfmt::SegmentHeader header;
};

Status ListCutFiles(Env* env, const std::string& cut_dir, std::vector<CutFile>* files) {
  std::vector<std::string> names;
  SPOOL_RETURN_IF_ERROR(env->ListDir(cut_dir, &names));
  for (const std::string& name : names) {
    uint64_t number = 0;
    if (!logfmt::ParseSegmentFileName(name, &number)) continue;
    CutFile file{JoinPath(cut_dir, name), {}};
    std::unique_ptr<File> handle;
    std::string bytes;
    SPOOL_RETURN_IF_ERROR(env->OpenFile(file.path, OpenMode::kReadOnly, &handle));
    SPOOL_RETURN_IF_ERROR(handle->Read(0, logfmt::kSegmentHeaderBytes, &bytes));
    SPOOL_RETURN_IF_ERROR(logfmt::DecodeSegmentHeader(bytes, &file.header).WithContext(file.path));
    files->push_back(std::move(file));
  }
  std::sort(files->begin(), files->end(),
            [](const CutFile& a, const CutFile& b) { return a.header.first_version < b.header.first_version; });
  return Status::OK();
}

// Visits the records of one file; `*next_version` is the version expected
// first and becomes the one after the file's last. Returns false in `*go_on`
// when `visit` asked to stop.
Status ScanCutFile(Env* env, const CutFile& file, uint64_t* next_version,
                   const std::function<bool(const LogEntry&)>& visit, bool* go_on) {
  std::unique_ptr<File> handle;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(file.path, OpenMode::kReadOnly, &handle));
  uint64_t size = 0;
  SPOOL_RETURN_IF_ERROR(handle->Size(&size));
  RecordScanner scanner(handle.get(), file.header.store_id, file.header.epoch, logfmt::kSegmentHeaderBytes, size,
                        file.header.first_version);
  logfmt::RecordHeader header;
  std::string_view payload;
  LogEntry entry;
  while (*go_on && scanner.Next(&header, &payload)) {
    entry.position = LogPosition{header.epoch, header.version};
    entry.timestamp_us = header.timestamp_us;
    SPOOL_RETURN_IF_ERROR(DecodePayload(payload, header.flags, &entry).WithContext(file.path));
    *go_on = visit(entry);
  }
  SPOOL_RETURN_IF_ERROR(scanner.status());
  if (*go_on && scanner.stop() != logfmt::RecordCheck::kValid) {
    // The cut's last segment may end in zero-filled space; anything else is damage.
    std::string rest;
    SPOOL_RETURN_IF_ERROR(handle->Read(scanner.offset(), static_cast<size_t>(size - scanner.offset()), &rest));
    if (rest.find_first_not_of('\0') != std::string::npos) {
      return Status::Corruption("archived " + file.path + " offset " + std::to_string(scanner.offset()) + ": " +
                                std::string(logfmt::RecordCheckName(scanner.stop())));
    }
  }
  *next_version = scanner.next_version();
  return Status::OK();
}

}  // namespace

Status ScanArchivedCut(Env* env, const std::string& cut_dir, const std::function<bool(const LogEntry&)>& visit) {
  std::vector<CutFile> files;
  SPOOL_RETURN_IF_ERROR(ListCutFiles(env, cut_dir, &files));
  if (files.empty()) return Status::NotFound("no archived segments in " + cut_dir);
  uint64_t next_version = files.front().header.first_version;
  bool go_on = true;
  for (const CutFile& file : files) {
    if (file.header.first_version != next_version) {
      return Status::Corruption("archived cut " + cut_dir + " has a gap: " + file.path + " starts at version " +
                                std::to_string(file.header.first_version) + ", expected " +
                                std::to_string(next_version));
    }
    SPOOL_RETURN_IF_ERROR(ScanCutFile(env, file, &next_version, visit, &go_on));
    if (!go_on) break;
  }
  return Status::OK();
}

}  // namespace spool
