#include "plots.h"

#include <algorithm>
#include <ctime>
#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "spool/storage/table.h"
#include "spool/txnlog/env.h"
#include "svg.h"

namespace spool::cli {
namespace {

// --- The pipeline graph

constexpr double kMargin = 30, kTop = 60;
constexpr double kNodeW = 240, kNodeH = 52, kColumnGap = 300, kRowGap = 84;

struct Node {
  std::string label;   // what the box says first
  std::string detail;  // its second line
  int column = 0;
  int row = 0;
  bool dataset = false;
};

std::string SourceKey(const SourceSpec& source) {
  return std::string(SourceKindName(source.kind)) + " " + SourceLocation(source);
}

// What fits in a box: a long label keeps its end (a path's file name).
std::string Fit(const std::string& text, size_t max = 34) {
  return text.size() <= max ? text : "…" + text.substr(text.size() - (max - 1));
}

double NodeX(const Node& n) { return kMargin + n.column * kColumnGap; }
double NodeY(const Node& n) { return kTop + n.row * kRowGap; }

// Nodes by key: external sources ("topic PATH", "files PATH") and datasets
// (their names), each in the column right of everything it reads.
std::map<std::string, Node> LayOut(const PipelineSpec& spec) {
  std::map<std::string, Node> nodes;
  for (const FlowSpec& f : spec.flows) {
    if (f.source.kind != SourceKind::kDataset)
      nodes[SourceKey(f.source)] = Node{SourceKey(f.source), "external source"};
  }
  for (const DatasetSpec& d : spec.datasets) {
    nodes[d.name] = Node{d.name, std::string(TableKindName(d.kind)), 1, 0, true};
  }
  // Longest path from a source: a DAG settles within as many rounds as it
  // has datasets.
  for (size_t round = 0; round <= spec.datasets.size(); ++round) {
    for (const FlowSpec& f : spec.flows) {
      const std::string from = f.source.kind == SourceKind::kDataset ? f.source.dataset : SourceKey(f.source);
      auto src = nodes.find(from);
      auto dst = nodes.find(f.target);
      if (src != nodes.end() && dst != nodes.end())
        dst->second.column = std::max(dst->second.column, src->second.column + 1);
    }
  }
  std::map<int, int> rows;  // the next free row of each column
  for (auto& [key, node] : nodes) node.row = rows[node.column]++;
  return nodes;
}

}  // namespace

std::string PipelineGraphSvg(const PipelineSpec& spec, const GraphNotes& notes) {
  const std::map<std::string, Node> nodes = LayOut(spec);
  int columns = 1, rows = 1;
  for (const auto& [key, n] : nodes) {
    columns = std::max(columns, n.column + 1);
    rows = std::max(rows, n.row + 1);
  }
  Svg svg(2 * kMargin + (columns - 1) * kColumnGap + kNodeW, kTop + rows * kRowGap + kMargin,
          notes.title.empty() ? "pipeline " + spec.name : notes.title);
  svg.Text(kMargin, 28, notes.title.empty() ? "pipeline " + spec.name : notes.title,
           R"(font-size="15" font-weight="bold")");
  for (const FlowSpec& f : spec.flows) {
    const std::string from = f.source.kind == SourceKind::kDataset ? f.source.dataset : SourceKey(f.source);
    auto src = nodes.find(from);
    auto dst = nodes.find(f.target);
    if (src == nodes.end() || dst == nodes.end()) continue;
    const double x1 = NodeX(src->second) + kNodeW, y1 = NodeY(src->second) + kNodeH / 2;
    const double x2 = NodeX(dst->second), y2 = NodeY(dst->second) + kNodeH / 2;
    svg.Arrow(x1, y1, x2, y2);
    const double mx = (x1 + x2) / 2, my = (y1 + y2) / 2;
    svg.Text(mx, my - 6, f.name + (f.once ? " (once)" : ""), R"(font-size="11" fill="#333")", "middle");
    auto note = notes.flow_notes.find(f.name);
    if (note != notes.flow_notes.end())
      svg.Text(mx, my + 10, note->second, R"(font-size="10" fill="#b3261e")", "middle");
  }
  for (const auto& [key, n] : nodes) {
    const bool touched = notes.highlighted.count(key) > 0;
    const bool greyed = n.dataset && !notes.highlighted.empty() && !touched;
    const char* style = !n.dataset ? R"(fill="#f1f8e9" stroke="#558b2f")"
                        : touched  ? R"(fill="#fde2c8" stroke="#e8710a" stroke-width="2")"
                        : greyed   ? R"(fill="#f1f3f4" stroke="#bdc1c6")"
                                   : R"(fill="#e8f0fe" stroke="#1a73e8")";
    svg.Rect(NodeX(n), NodeY(n), kNodeW, kNodeH, style, n.label);
    svg.Text(NodeX(n) + 10, NodeY(n) + 19, Fit(n.label), R"(font-weight="bold")");
    auto note = notes.dataset_notes.find(key);
    svg.Text(NodeX(n) + 10, NodeY(n) + 38, Fit(note != notes.dataset_notes.end() ? note->second : n.detail, 40),
             R"(font-size="11" fill="#555")");
  }
  return svg.Finish();
}

// --- The timeline

namespace {

constexpr double kStep = 30, kLeft = 50, kLine = 130, kBranchGap = 70;
constexpr size_t kBranchMaxCommits = 60;

const char* OperationColor(const std::string& operation) {
  if (operation == "STREAMING UPDATE" || operation == "WRITE") return "#1a73e8";
  if (operation == "CREATE TABLE" || operation == "PIPELINE DEFINITION" || operation.starts_with("ALTER") ||
      operation == "DROP TABLE") {
    return "#80868b";
  }
  if (operation == "RESTORE" || operation == "REWIND") return "#e8710a";
  if (operation.find("REFRESH") != std::string::npos || operation.find("RESET") != std::string::npos) return "#b3261e";
  return "#188038";
}

std::string Utc(uint64_t us) {
  const std::time_t seconds = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
  return text;
}

std::string Tooltip(const TimelineCommit& c) {
  std::string text = fmt::format("version {}: {}", c.version, c.operation);
  if (c.rows >= 0) text += fmt::format(", {} rows", c.rows);
  if (c.timestamp_us != 0) text += ", " + Utc(c.timestamp_us) + " UTC";
  return text;
}

// One commit: its dot, its tooltip, its version under it.
void DrawCommit(Svg& svg, double x, double y, const TimelineCommit& c, bool cut) {
  const std::string style =
      fmt::format(R"(fill="{}" stroke="{}" stroke-width="1.5"{})", cut ? "white" : OperationColor(c.operation),
                  OperationColor(c.operation), cut ? R"( stroke-dasharray="2,2")" : "");
  svg.Circle(x, y, 7, style, Tooltip(c));
  svg.Text(x, y + 22, fmt::format("v{}", c.version),
           fmt::format(R"svg(font-size="9" fill="#555" transform="rotate(45 {:.1f} {:.1f})")svg", x, y + 22), "start");
}

}  // namespace

std::string TimelineSvg(const Timeline& t) {
  const size_t skipped = t.commits.size() > kTimelineMaxCommits ? t.commits.size() - kTimelineMaxCommits : 0;
  const std::vector<TimelineCommit> commits(t.commits.begin() + static_cast<std::ptrdiff_t>(skipped), t.commits.end());
  std::map<uint64_t, double> x_of;  // version -> x on the main line
  for (size_t i = 0; i < commits.size(); ++i) x_of[commits[i].version] = kLeft + static_cast<double>(i) * kStep;
  size_t widest = commits.size();
  for (const TimelineBranch& b : t.branches) {
    auto after = x_of.upper_bound(b.after);
    const double start = after == x_of.begin() ? kLeft : std::prev(after)->second;
    widest = std::max(widest,
                      static_cast<size_t>((start - kLeft) / kStep) + std::min(b.commits.size(), kBranchMaxCommits) + 2);
  }
  const double width = kLeft + static_cast<double>(widest) * kStep + 220;
  const double height = kLine + 80 + static_cast<double>(t.branches.size()) * kBranchGap + 60;
  Svg svg(width, height, t.title);
  svg.Text(kLeft - 20, 28, t.title, R"(font-size="15" font-weight="bold")");
  if (skipped > 0)
    svg.Text(kLeft - 20, 48, fmt::format("({} older commits not drawn)", skipped), R"(font-size="11" fill="#555")");
  if (!commits.empty()) {
    svg.Line(kLeft, kLine, x_of.rbegin()->second, kLine, R"(stroke="#9aa0a6" stroke-width="2")");
  }
  // The newest drawn commit at or before `version` (a point or a cut may
  // fall between the commits of one table).
  auto x_at = [&](uint64_t version) -> std::optional<double> {
    auto after = x_of.upper_bound(version);
    if (after == x_of.begin()) return std::nullopt;
    return std::prev(after)->second;
  };
  for (const TimelinePoint& p : t.points) {
    const std::optional<double> x = x_at(p.version);
    if (!x) continue;
    svg.Line(*x, kLine - 8, *x, kLine - 42, R"(stroke="#e8710a" stroke-width="1.5")");
    svg.Rect(*x, kLine - 52, 56, 14, R"(fill="#fde2c8" stroke="#e8710a")",
             "rewind point " + p.id + " at version " + std::to_string(p.version));
    svg.Text(*x + 4, kLine - 41, p.id.substr(0, 8), R"(font-size="9")");
  }
  for (const TimelineCommit& c : commits) DrawCommit(svg, x_of[c.version], kLine, c, false);
  for (size_t b = 0; b < t.branches.size(); ++b) {
    const TimelineBranch& branch = t.branches[b];
    const double x0 = x_at(branch.after).value_or(kLeft);
    const double y = kLine + 80 + static_cast<double>(b) * kBranchGap;
    const size_t drawn = std::min(branch.commits.size(), kBranchMaxCommits);
    const double x_end = x0 + static_cast<double>(drawn) * kStep;
    svg.Line(x0, kLine + 8, x0 + kStep / 2, y, R"(stroke="#9aa0a6" stroke-dasharray="4,3")");
    svg.Line(x0 + kStep / 2, y, x_end, y, R"(stroke="#9aa0a6" stroke-dasharray="4,3")");
    for (size_t i = 0; i < drawn; ++i)
      DrawCommit(svg, x0 + kStep * static_cast<double>(i + 1), y, branch.commits[i], true);
    std::string label = branch.name + " (cut by a rewind)";
    if (drawn < branch.commits.size()) label += fmt::format(", {} more commits", branch.commits.size() - drawn);
    svg.Text(x_end + 16, y + 4, label, R"(font-size="11" fill="#555")");
  }
  // The legend.
  const double ly = height - 24;
  double lx = kLeft;
  for (const char* op : {"STREAMING UPDATE", "RESTORE", "FULL REFRESH", "CREATE TABLE"}) {
    svg.Circle(lx, ly, 6, fmt::format(R"(fill="{}")", OperationColor(op)));
    svg.Text(lx + 10, ly + 4, op == std::string("STREAMING UPDATE") ? "write, streaming update" : op,
             R"(font-size="10")");
    lx += 170;
  }
  return svg.Finish();
}

Status WritePlot(const std::string& path, const std::string& svg) {
  SPOOL_RETURN_IF_ERROR(WriteFileAtomically(Env::Default(), path, svg).WithContext("writing the plot"));
  std::cout << "wrote " << path << "\n";
  return Status::OK();
}

}  // namespace spool::cli
