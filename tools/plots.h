// The pictures the CLI draws, as SVG (tools/svg.h): a pipeline's graph, the
// same graph as a rewind's preview, and a history timeline. They take plain
// data, gathered by the commands, so that tests can draw them directly.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "spool/stream/pipeline_spec.h"
#include "spool/txnlog/status.h"

namespace spool::cli {

// What a graph adds to the pipeline's datasets and flows.
struct GraphNotes {
  std::string title;
  std::set<std::string> highlighted;                 // datasets drawn as touched (the rest greyed)
  std::map<std::string, std::string> dataset_notes;  // dataset -> a line under its name
  std::map<std::string, std::string> flow_notes;     // flow -> a line under its label
};

// Sources (topics, file directories) on the left, each dataset right of
// everything it reads, a flow as an arrow from its source to its target.
std::string PipelineGraphSvg(const PipelineSpec& spec, const GraphNotes& notes);

struct TimelineCommit {
  uint64_t version = 0;
  uint64_t timestamp_us = 0;
  std::string operation;
  int64_t rows = -1;  // rows written; -1: not known
};
struct TimelinePoint {
  std::string id;
  uint64_t version = 0;
};
// A history a rewind cut: its commits, after version `after`.
struct TimelineBranch {
  std::string name;
  uint64_t after = 0;
  std::vector<TimelineCommit> commits;
};
struct Timeline {
  std::string title;
  std::vector<TimelineCommit> commits;  // oldest first
  std::vector<TimelinePoint> points;    // rewind points on this history
  std::vector<TimelineBranch> branches;
};

// Commits left to right along the history, coloured by operation, each with
// a tooltip; rewind points as flags; each cut history as a branch below.
// At most kTimelineMaxCommits of the newest commits are drawn.
inline constexpr size_t kTimelineMaxCommits = 400;
std::string TimelineSvg(const Timeline& timeline);

// Writes `svg` to `path` (replacing it atomically) and says so on stdout.
Status WritePlot(const std::string& path, const std::string& svg);

}  // namespace spool::cli
