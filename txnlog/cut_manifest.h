// The files of an archived cut (docs/log_format.md, "Truncation"): the
// directory "<archive>/epoch-NNNNNN" that a truncation starting epoch N
// fills with the commits it cut.
//   CUT        the manifest, written and synced before the truncation's
//              commit point: which records of which files the cut holds.
//   *.seg      hard links to the log's segments that hold them: the kept
//              segment (its records past the cut) and every later one (up
//              to where its records end). No byte is copied.
//   COMPLETE   written last; a cut without it is still being archived (or,
//              without CUT too, being removed).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "spool/txnlog/status.h"

namespace spool::cutfmt {

inline constexpr std::string_view kManifestName = "CUT";
inline constexpr std::string_view kCompleteName = "COMPLETE";

// "epoch-000042"
std::string ArchiveName(uint64_t new_epoch);

// Bytes [begin, end) of the segment file `file_name`: records, the first of
// version `first_version`.
struct Piece {
  std::string file_name;
  uint64_t begin = 0;
  uint64_t end = 0;
  uint64_t first_version = 0;
};

struct Manifest {
  std::vector<Piece> pieces;  // in version order; none when nothing was cut
};

std::string EncodeManifest(const Manifest& manifest);
// Errors: Corruption naming what is wrong.
Status DecodeManifest(std::string_view text, Manifest* manifest);

}  // namespace spool::cutfmt
