// Archived cuts (cut_manifest.h): their manifest, reading and removing them.
#include <algorithm>
#include <optional>

#include "cut_manifest.h"
#include "log_format.h"
#include "parse_whole.h"
#include "payload.h"
#include "record_scanner.h"
#include "spool/txnlog/checksum.h"
#include "spool/txnlog/log.h"

namespace spool {
namespace cutfmt {
namespace {
// Version 2 ends with a checksum line; version 1, which archives made
// before it hold, has none and is still read.
constexpr std::string_view kManifestHeader = "spool cut manifest 2\n";
constexpr std::string_view kManifestHeaderV1 = "spool cut manifest 1\n";

}  // namespace

constexpr std::string_view kArchivePrefix = "epoch-";

std::string ArchiveName(uint64_t new_epoch) {
  std::string digits = std::to_string(new_epoch);
  return std::string(kArchivePrefix) + std::string(digits.size() < 6 ? 6 - digits.size() : 0, '0') + digits;
}

std::string EncodeManifest(const Manifest& manifest) {
  std::string out(kManifestHeader);
  for (const Piece& p : manifest.pieces) {
    out += "piece " + p.file_name + " " + std::to_string(p.begin) + " " + std::to_string(p.end) + " " +
           std::to_string(p.first_version) + "\n";
  }
  return WithChecksumLine(out);
}

Status DecodeManifest(std::string_view text, Manifest* manifest) {
  if (text.starts_with(kManifestHeader)) {
    SPOOL_RETURN_IF_ERROR(StripChecksumLine(text, &text).WithContext("cut manifest"));
    text.remove_prefix(kManifestHeader.size());
  } else if (text.starts_with(kManifestHeaderV1)) {
    text.remove_prefix(kManifestHeaderV1.size());
  } else {
    return Status::Corruption("cut manifest: bad header");
  }
  manifest->pieces.clear();
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    if (newline == std::string_view::npos) return Status::Corruption("cut manifest: unterminated line");
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline + 1);
    std::string_view words[5];
    for (size_t i = 0; i < 5; ++i) {
      const size_t space = line.find(' ');
      words[i] = line.substr(0, space);
      line = space == std::string_view::npos ? std::string_view() : line.substr(space + 1);
      if ((space == std::string_view::npos) != (i == 4)) return Status::Corruption("cut manifest: bad piece line");
    }
    Piece piece;
    uint64_t number = 0;
    piece.file_name = std::string(words[1]);
    if (words[0] != "piece" || !logfmt::ParseSegmentFileName(piece.file_name, &number) ||
        !ParseWhole(words[2], &piece.begin) || !ParseWhole(words[3], &piece.end) ||
        !ParseWhole(words[4], &piece.first_version) || piece.begin >= piece.end ||
        piece.begin < logfmt::kSegmentHeaderBytes || piece.first_version == 0) {
      return Status::Corruption("cut manifest: bad piece line");
    }
    manifest->pieces.push_back(std::move(piece));
  }
  return Status::OK();
}

}  // namespace cutfmt

namespace {

// One file of a cut and the part of it that the cut holds.
struct CutFile {
  std::string path;
  logfmt::SegmentHeader header;
  uint64_t begin = logfmt::kSegmentHeaderBytes;
  std::optional<uint64_t> end;  // nullopt: the file's end
};

Status ReadCutFile(Env* env, const std::string& path, CutFile* file) {
  file->path = path;
  std::unique_ptr<File> handle;
  std::string bytes;
  SPOOL_RETURN_IF_ERROR(env->OpenFile(path, OpenMode::kReadOnly, &handle));
  SPOOL_RETURN_IF_ERROR(handle->Read(0, logfmt::kSegmentHeaderBytes, &bytes));
  return logfmt::DecodeSegmentHeader(bytes, &file->header).WithContext(path);
}

// The files of the cut in `cut_dir` in version order: the pieces its
// manifest names or, in a cut archived before manifests, every segment.
Status ListCutFiles(Env* env, const std::string& cut_dir, std::vector<CutFile>* files) {
  const std::string manifest_path = JoinPath(cut_dir, cutfmt::kManifestName);
  if (env->FileExists(manifest_path)) {
    std::string text;
    cutfmt::Manifest manifest;
    SPOOL_RETURN_IF_ERROR(ReadFileToString(env, manifest_path, &text));
    SPOOL_RETURN_IF_ERROR(cutfmt::DecodeManifest(text, &manifest).WithContext(manifest_path));
    for (const cutfmt::Piece& piece : manifest.pieces) {
      CutFile file;
      SPOOL_RETURN_IF_ERROR(ReadCutFile(env, JoinPath(cut_dir, piece.file_name), &file));
      file.begin = piece.begin;
      file.end = piece.end;
      file.header.first_version = piece.first_version;
      files->push_back(std::move(file));
    }
    return Status::OK();
  }
  std::vector<std::string> names;
  SPOOL_RETURN_IF_ERROR(env->ListDir(cut_dir, &names));
  for (const std::string& name : names) {
    uint64_t number = 0;
    if (!logfmt::ParseSegmentFileName(name, &number)) continue;
    CutFile file;
    SPOOL_RETURN_IF_ERROR(ReadCutFile(env, JoinPath(cut_dir, name), &file));
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
  const uint64_t end = file.end.value_or(size);
  if (end > size) {
    return Status::Corruption("archived " + file.path + " ends at " + std::to_string(size) + ", before offset " +
                              std::to_string(end) + " that the cut's manifest names");
  }
  RecordScanner scanner(handle.get(), file.header.store_id, file.header.epoch, file.begin, end,
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
  if (*go_on && scanner.offset() < end) {
    // A linked tail holds records up to its end; the cut's last segment may
    // end in zero-filled space. Anything else is damage.
    bool damaged = file.end.has_value();
    if (!damaged) {
      std::string rest;
      SPOOL_RETURN_IF_ERROR(handle->Read(scanner.offset(), static_cast<size_t>(end - scanner.offset()), &rest));
      damaged = rest.find_first_not_of('\0') != std::string::npos;
    }
    if (damaged) {
      return Status::Corruption("archived " + file.path + " offset " + std::to_string(scanner.offset()) + ": " +
                                std::string(logfmt::RecordCheckName(scanner.stop())));
    }
  }
  *next_version = scanner.next_version();
  return Status::OK();
}

}  // namespace

bool ParseArchivedCutName(std::string_view name, uint64_t* new_epoch) {
  if (!name.starts_with(cutfmt::kArchivePrefix)) return false;
  return ParseWhole(name.substr(cutfmt::kArchivePrefix.size()), new_epoch);
}

bool ArchivedCutComplete(Env* env, const std::string& cut_dir) {
  return env->FileExists(JoinPath(cut_dir, cutfmt::kCompleteName));
}

Status RemoveArchivedCut(Env* env, const std::string& cut_dir) {
  // Its marker, then its manifest, durably before any segment file: a crash
  // part way leaves either a whole cut (that may read as incomplete) or one
  // without its manifest, which nothing completes again.
  bool removed = false;
  for (std::string_view name : {cutfmt::kCompleteName, cutfmt::kManifestName}) {
    const std::string path = JoinPath(cut_dir, name);
    if (!env->FileExists(path)) continue;
    SPOOL_RETURN_IF_ERROR(env->RemoveFile(path));
    removed = true;
  }
  if (removed) SPOOL_RETURN_IF_ERROR(env->SyncDir(cut_dir));
  return RemoveTree(env, cut_dir);
}

Status ArchivedCutPoint(Env* env, const std::string& cut_dir, uint64_t* point) {
  std::vector<CutFile> files;
  SPOOL_RETURN_IF_ERROR(ListCutFiles(env, cut_dir, &files));
  if (files.empty()) return Status::NotFound("no archived segments in " + cut_dir);
  // The tail of the segment the truncation kept follows the point; a whole
  // segment names the version before it.
  const CutFile& first = files.front();
  *point = first.begin > logfmt::kSegmentHeaderBytes ? first.header.first_version - 1 : first.header.prev_last_version;
  return Status::OK();
}

Status ScanArchivedCut(Env* env, const std::string& cut_dir, const std::function<bool(const LogEntry&)>& visit) {
  std::vector<CutFile> files;
  SPOOL_RETURN_IF_ERROR(ListCutFiles(env, cut_dir, &files));
  if (files.empty()) {
    // A manifest naming nothing: the truncation cut no commit.
    if (env->FileExists(JoinPath(cut_dir, cutfmt::kManifestName))) return Status::OK();
    return Status::NotFound("no archived segments in " + cut_dir);
  }
  uint64_t next_version = files.front().header.first_version;
  uint64_t epoch = files.front().header.epoch;
  bool go_on = true;
  for (const CutFile& file : files) {
    // Versions jump only where a segment starts a newer epoch, past the
    // versions an earlier truncation cut.
    const bool continues = file.header.first_version == next_version ||
                           (file.header.epoch > epoch && file.header.first_version > next_version &&
                            file.header.prev_last_version + 1 == next_version);
    epoch = file.header.epoch;
    if (!continues) {
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
