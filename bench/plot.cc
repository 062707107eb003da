// DrawPlots (plot.h). nlohmann-json and the gnuplot child process stay in
// this file. Every chart is one self-contained gnuplot script: terminal,
// axes, the data as inline datablocks ($NAME << EOD), then one plot command.
#include "plot.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace spool::bench {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// Chart size: pixels for png, user units for svg.
constexpr int kWidth = 1000;
constexpr int kHeight = 560;
// Category labels share this many pixels, about kCharWidthPx a character;
// they are wrapped to their share, never narrower than kMinTicColumns.
constexpr size_t kTicLabelsWidthPx = 820;
constexpr size_t kCharWidthPx = 8;
constexpr size_t kMinTicColumns = 6;
// A y axis is logarithmic when its largest value is more than kLogYRatio
// times its smallest; an x axis when its values span kLogXSpan or more.
constexpr double kLogYRatio = 50;
constexpr double kLogXSpan = 10;
// Room above the highest whisker for its value label.
constexpr double kHeadroomLinear = 1.15;
constexpr double kHeadroomLog = 1.6;
// A linear y axis has about this many tics.
constexpr double kYTicsWanted = 6;
// Scaling charts mark each x value when there are at most this many.
constexpr size_t kMaxXTics = 12;
// How much of gnuplot's output an error message quotes.
constexpr size_t kMaxQuotedOutput = 2000;

constexpr uint32_t kGrey = 0x9e9e9e;
constexpr uint32_t kSpoolColour = 0xe6550d;
constexpr uint32_t kSpoolVariantColour = 0xfd8d3c;
constexpr std::array<std::pair<std::string_view, uint32_t>, 4> kPeerColours = {
    {{"rocksdb", 0x3182bd}, {"lmdb", 0x31a354}, {"sqlite", 0x756bb1}, {"leveldb", 0x8c6d31}}};
constexpr std::array<uint32_t, 4> kOtherColours = {0x17becf, 0xbcbd22, 0xe377c2, 0x393b79};

// The latency metrics, slowest last, and the colours of their bars.
struct PercentileBar {
  std::string_view metric;
  std::string_view label;
  uint32_t colour;
};
constexpr std::array<PercentileBar, 3> kPercentiles = {
    {{"p50_us", "p50", 0x9ecae1}, {"p99_us", "p99", 0x4292c6}, {"p999_us", "p99.9", 0x08306b}}};

// One result object of the file, with a median.
struct Result {
  std::string workload;
  std::string title;
  std::string engine;
  std::string engine_label;
  std::string metric;
  std::string metric_label;  // the metric in words; the metric where the file has none
  std::string unit;
  std::string x_name;
  bool headline = false;
  std::optional<double> x;
  double median = 0;
  double min = 0;  // the median where the file has null
  double max = 0;  // likewise
};

using Rows = std::vector<const Result*>;

// A chart to draw: its file name without extension and its gnuplot script
// from the axes on (DrawChart adds terminal and output).
struct Chart {
  std::string stem;
  std::string script;
};

[[noreturn]] void Fail(const std::string& message) { throw std::runtime_error("plot: " + message); }

// Reads the fields of results[index], naming it in every complaint.
class ResultReader {
 public:
  ResultReader(const std::string& path, size_t index, const Json& object)
      : path_(path), index_(index), object_(object) {
    if (!object.is_object()) {
      Fail(fmt::format("{}: results[{}] is {}, not an object", path_, index_, object.type_name()));
    }
  }

  std::string String(const char* key, bool null_allowed = false) const {
    const Json& value = Field(key);
    if (null_allowed && value.is_null()) return "";
    Expect(value.is_string(), key, "a string");
    return value.get<std::string>();
  }
  bool Has(const char* key) const { return object_.contains(key); }
  bool Bool(const char* key) const {
    const Json& value = Field(key);
    Expect(value.is_boolean(), key, "true or false");
    return value.get<bool>();
  }
  // Null (how the tool writes a non-finite value) gives nullopt.
  std::optional<double> Number(const char* key) const {
    const Json& value = Field(key);
    if (value.is_null()) return std::nullopt;
    Expect(value.is_number(), key, "a number or null");
    return value.get<double>();
  }

 private:
  const Json& Field(const char* key) const {
    const auto it = object_.find(key);
    if (it == object_.end()) Fail(fmt::format("{}: results[{}] lacks the field \"{}\"", path_, index_, key));
    return *it;
  }
  void Expect(bool ok, const char* key, std::string_view wanted) const {
    if (!ok) {
      Fail(fmt::format("{}: results[{}].{} is {}, not {}", path_, index_, key, object_.at(key).type_name(), wanted));
    }
  }

  const std::string& path_;
  size_t index_;
  const Json& object_;
};

// nullopt when the result has no median.
std::optional<Result> ReadResult(const ResultReader& reader) {
  Result r;
  r.workload = reader.String("workload");
  r.title = reader.String("title");
  r.engine = reader.String("engine");
  r.engine_label = reader.String("engine_label");
  r.metric = reader.String("metric");
  r.metric_label = reader.Has("metric_label") ? reader.String("metric_label") : r.metric;
  r.unit = reader.String("unit");
  r.headline = reader.Bool("headline");
  r.x_name = reader.String("x_name", /*null_allowed=*/true);
  r.x = reader.Number("x");
  const std::optional<double> median = reader.Number("median");
  const std::optional<double> min = reader.Number("min");
  const std::optional<double> max = reader.Number("max");
  if (!median) return std::nullopt;
  if (r.engine_label.empty()) r.engine_label = r.engine;
  if (r.title.empty()) r.title = r.workload;
  r.median = *median;
  r.min = min.value_or(r.median);
  r.max = max.value_or(r.median);
  return r;
}

Json ReadDocument(const std::string& path) {
  std::error_code error;
  if (!fs::exists(path, error)) Fail(fmt::format("no such file: {}", path));
  if (fs::is_directory(path, error)) Fail(fmt::format("{} is a directory, not a spool-bench --json file", path));
  std::ifstream file(path);
  if (!file) Fail(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  try {
    return Json::parse(file);
  } catch (const Json::parse_error& e) {
    Fail(fmt::format("{} is not JSON: {}", path, e.what()));
  }
}

std::vector<Result> ReadResults(const std::string& path) {
  const Json doc = ReadDocument(path);
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    Fail(fmt::format("{} has no \"results\" array: not a spool-bench --json file", path));
  }
  std::vector<Result> results;
  const Json& objects = doc["results"];
  for (size_t i = 0; i < objects.size(); ++i) {
    std::optional<Result> r = ReadResult(ResultReader(path, i, objects[i]));
    if (r) results.push_back(std::move(*r));
  }
  return results;
}

// fmt::join would do, but with fmt 9 GCC 12 at -O3 reports a false
// -Wstringop-overflow inside it.
template <typename Range>
std::string Join(const Range& items, std::string_view separator) {
  std::string out;
  bool first = true;
  for (const auto& item : items) {
    if (!first) out += separator;
    out += fmt::format("{}", item);
    first = false;
  }
  return out;
}

// Groups `rows` by `key_of`: groups in the order their first row appears,
// rows within a group in their order.
template <typename KeyOf>
std::vector<Rows> GroupBy(const Rows& rows, KeyOf key_of) {
  std::vector<Rows> groups;
  std::map<std::string, size_t> group_of_key;
  for (const Result* r : rows) {
    const auto [it, added] = group_of_key.try_emplace(key_of(*r), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(r);
  }
  return groups;
}

template <typename Predicate>
Rows Select(const Rows& rows, Predicate keep) {
  Rows out;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(out), [&](const Result* r) { return keep(*r); });
  return out;
}

std::string FileStem(std::string_view name) {
  std::string stem = name.empty() ? "unnamed" : std::string(name);
  for (char& c : stem) {
    const bool safe = std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '.' || c == '-' || c == '_';
    if (!safe) c = '_';
  }
  if (stem.front() == '.') stem.front() = '_';
  return stem;
}

// A gnuplot double-quoted string. The terminal is noenhanced, so '_', '^'
// and '@' print as they are.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out + '"';
}

// A value as a bar's label: three significant digits, k/M/G past 10,000.
// Letters, digits, '.', '-' and '+' only, so it needs no quoting in data.
std::string ValueLabel(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e9) return fmt::format("{:.3g}G", value / 1e9);
  if (magnitude >= 1e6) return fmt::format("{:.3g}M", value / 1e6);
  if (magnitude >= 1e4) return fmt::format("{:.3g}k", value / 1e3);
  if (magnitude >= 100) return fmt::format("{:.0f}", value);
  return fmt::format("{:.3g}", value);
}

std::string Rgb(uint32_t colour) { return fmt::format("rgb \"#{:06x}\"", colour); }

// Spool orange, each peer its own colour on every chart, baselines grey;
// `position` picks a colour for an engine this file does not know.
uint32_t EngineColour(std::string_view engine, size_t position) {
  if (engine.starts_with("raw-") || engine == "machine") return kGrey;
  if (engine == "spool") return kSpoolColour;
  if (engine.starts_with("spool")) return kSpoolVariantColour;
  for (const auto& [peer, colour] : kPeerColours) {
    if (engine == peer) return colour;
  }
  return kOtherColours[position % kOtherColours.size()];
}

// Each distinct unit once, in order.
std::string UnitsOf(const Rows& rows) {
  std::vector<std::string> units;
  for (const Result* r : rows) {
    if (std::find(units.begin(), units.end(), r->unit) == units.end()) units.push_back(r->unit);
  }
  return Join(units, " / ");
}

// A round tic spacing (1, 2, 2.5 or 5 times a power of ten) near `span`
// divided by kYTicsWanted.
double TicStep(double span) {
  const double raw = span / kYTicsWanted;
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 2.5, 5.0}) {
    if (factor * decade >= raw) return factor * decade;
  }
  return 10 * decade;
}

// Tics labelled as the bars are ("2.5M", not gnuplot's "2.5e+06").
std::string LinearYAxis(double bottom, double top) {
  const double step = TicStep(top - bottom);
  const double first = std::ceil(bottom / step) * step;
  std::vector<std::string> tics;
  for (int i = 0; first + i * step <= top; ++i) {
    const double y = std::fabs(first + i * step) < step * 1e-9 ? 0.0 : first + i * step;
    tics.push_back(fmt::format("{} {}", Quote(ValueLabel(y)), y));
  }
  return fmt::format("set yrange [{}:{}]\nset ytics ({})\n", bottom, top, Join(tics, ", "));
}

// gnuplot's tics, a power of ten each, written "100", "1k", "10k" where
// no value is below 1 (where "%c" would give "m" for milli).
std::string LogYAxis(double lowest, double top) {
  const double bottom = std::pow(10.0, std::floor(std::log10(lowest)));
  return fmt::format("set logscale y\nset yrange [{}:{}]\n{}", bottom, top,
                     bottom >= 1 ? "set format y \"%.0s%c\"\n" : "");
}

// From zero (or below, for negative values) unless `log_allowed` and the
// values span more than kLogYRatio.
std::string YAxis(const Rows& rows, bool log_allowed) {
  double lowest = rows.front()->min;
  double highest = rows.front()->max;
  for (const Result* r : rows) {
    lowest = std::min({lowest, r->min, r->median});
    highest = std::max({highest, r->max, r->median});
  }
  if (log_allowed && lowest > 0 && highest / lowest > kLogYRatio) return LogYAxis(lowest, highest * kHeadroomLog);
  const double top = highest > 0 ? highest * kHeadroomLinear : (lowest < 0 ? 0.0 : 1.0);
  return LinearYAxis(std::min(0.0, lowest * kHeadroomLinear), top);
}

// Display width: a UTF-8 sequence is one column.
size_t Width(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0u) != 0x80u; }));
}

// `label` broken at spaces into lines of at most `columns` where it can be.
std::string Wrap(std::string_view label, size_t columns) {
  std::string out;
  size_t line = 0;
  while (!label.empty()) {
    const size_t space = label.find(' ');
    const std::string_view word = label.substr(0, space);
    label = space == std::string_view::npos ? std::string_view() : label.substr(space + 1);
    if (line > 0 && line + 1 + Width(word) > columns) {
      out += '\n';
      line = 0;
    } else if (line > 0) {
      out += ' ';
      ++line;
    }
    out += word;
    line += Width(word);
  }
  return out;
}

// Category labels at x = 0, 1, …: wrapped to the width of a category, and
// tilted, unwrapped, when a single word is wider still.
std::string CategoryAxis(const std::vector<std::string>& labels) {
  const size_t columns = std::max<size_t>(kMinTicColumns, kTicLabelsWidthPx / (kCharWidthPx * labels.size()));
  bool tilted = false;
  for (const std::string& label : labels) {
    const std::string wrapped = Wrap(label, columns);
    size_t start = 0;
    for (size_t end = 0; end != std::string::npos; start = end + 1) {
      end = wrapped.find('\n', start);
      tilted = tilted || Width(std::string_view(wrapped).substr(start, end - start)) > columns;
    }
  }
  std::vector<std::string> tics;
  size_t lines = 1;
  for (size_t i = 0; i < labels.size(); ++i) {
    const std::string text = tilted ? labels[i] : Wrap(labels[i], columns);
    lines = std::max(lines, static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
    tics.push_back(fmt::format("{} {}", Quote(text), i));
  }
  // gnuplot leaves room for one line of tic labels, or for tilted ones.
  const std::string margin = lines > 1 ? fmt::format("set bmargin {}\n", lines + 2) : "";
  return fmt::format("set xrange [-0.6:{}]\n{}set xtics scale 0 {}({})\n", static_cast<double>(labels.size()) - 0.4,
                     margin, tilted ? "rotate by 30 right " : "", Join(tics, ", "));
}

// Bar labels: the engine's display name, with the metric where an engine
// has more than one headline row.
std::vector<std::string> BarLabels(const Rows& rows) {
  std::map<std::string, int> count;
  for (const Result* r : rows) ++count[r->engine_label];
  std::vector<std::string> labels;
  for (const Result* r : rows) {
    labels.push_back(count[r->engine_label] > 1 ? fmt::format("{} ({})", r->engine_label, r->metric) : r->engine_label);
  }
  return labels;
}

// The min–max whisker of a bar, drawn as a candlestick whose box is the
// median alone: gnuplot's yerrorbars leave a gap around the point.
constexpr char kWhiskers[] = "whiskerbars 0.3 lc rgb \"#202020\" lw 1.5 fill empty";

// Columns: x, median, min, max, then `last_column`.
std::string DataLine(double x, const Result& r, const std::string& last_column) {
  return fmt::format("{} {} {} {} {}\n", x, r.median, r.min, r.max, last_column);
}

// Chart 1: the workload's headline rows, a bar each.
std::string BarChart(const Rows& rows) {
  std::string data;
  for (size_t i = 0; i < rows.size(); ++i) {
    const Result& r = *rows[i];
    data += DataLine(static_cast<double>(i), r, fmt::format("{} {}", EngineColour(r.engine, i), ValueLabel(r.median)));
  }
  return fmt::format(
      "set title {}\nset ylabel {}\nset key off\n{}{}"
      "set boxwidth 0.6\nset style fill solid 0.9 border rgb \"#404040\"\n"
      "$BARS << EOD\n# x median min max colour label\n{}EOD\n"
      "plot $BARS using 1:2:5 with boxes lc rgb variable, \\\n"
      "     $BARS using 1:2:3:4:2 with candlesticks {}, \\\n"
      "     $BARS using 1:4:6 with labels offset 0,0.8\n",
      Quote(rows.front()->title), Quote(UnitsOf(rows)), CategoryAxis(BarLabels(rows)), YAxis(rows, false), data,
      kWhiskers);
}

bool HasMetric(const Rows& rows, std::string_view metric) {
  return std::any_of(rows.begin(), rows.end(), [&](const Result* r) { return r->metric == metric; });
}

bool IsPercentile(const Result& r) {
  return std::any_of(kPercentiles.begin(), kPercentiles.end(),
                     [&](const PercentileBar& p) { return r.metric == p.metric; });
}

// Chart 2: per engine, a cluster of one bar per percentile.
std::string LatencyChart(const Rows& rows) {
  const std::vector<Rows> engines = GroupBy(rows, [](const Result& r) { return r.engine; });
  std::vector<std::string> labels;
  for (const Rows& engine : engines) labels.push_back(engine.front()->engine_label);
  std::vector<const PercentileBar*> shown;
  for (const PercentileBar& p : kPercentiles) {
    if (HasMetric(rows, p.metric)) shown.push_back(&p);
  }
  const double slot = 0.8 / static_cast<double>(shown.size());
  std::string blocks;
  std::vector<std::string> plots;
  for (size_t j = 0; j < shown.size(); ++j) {
    const double shift = (static_cast<double>(j) - static_cast<double>(shown.size() - 1) / 2) * slot;
    blocks += fmt::format("$P{} << EOD\n# x median min max label\n", j);
    for (size_t i = 0; i < engines.size(); ++i) {
      for (const Result* r : engines[i]) {
        if (r->metric == shown[j]->metric) {
          blocks += DataLine(static_cast<double>(i) + shift, *r, ValueLabel(r->median));
        }
      }
    }
    blocks += "EOD\n";
    plots.push_back(
        fmt::format("$P{0} using 1:2 with boxes lc {1} title {2}, \\\n"
                    "     $P{0} using 1:2:3:4:2 with candlesticks {3} notitle, \\\n"
                    "     $P{0} using 1:4:5 with labels font small_font offset 0,0.7 notitle",
                    j, Rgb(shown[j]->colour), Quote(shown[j]->label), kWhiskers));
  }
  return fmt::format(
      "set title {}\nset ylabel {}\nset key outside top center horizontal\n{}{}"
      "set boxwidth {}\nset style fill solid 0.9 border rgb \"#404040\"\n{}plot {}\n",
      Quote(rows.front()->title + " — latency percentiles"), Quote(UnitsOf(rows)), CategoryAxis(labels),
      YAxis(rows, true), slot * 0.9, blocks, Join(plots, ", \\\n     "));
}

std::string ScalingXAxis(const Rows& rows) {
  std::set<double> xs;
  std::string name;
  for (const Result* r : rows) {
    xs.insert(*r->x);
    if (name.empty()) name = r->x_name;
  }
  const double low = *xs.begin();
  const double high = *xs.rbegin();
  std::string axis = fmt::format("set xlabel {}\n", Quote(name.empty() ? "x" : name));
  if (low > 0 && high / low >= kLogXSpan) {
    axis += fmt::format("set logscale x\nset xrange [{}:{}]\n", low / 1.25, high * 1.25);
  } else {
    const double pad = high > low ? (high - low) * 0.05 : 1;
    axis += fmt::format("set xrange [{}:{}]\n", low - pad, high + pad);
  }
  if (xs.size() <= kMaxXTics) axis += fmt::format("set xtics ({})\n", Join(xs, ", "));
  return axis;
}

// Chart 3: one series (a workload's metric over x), a line per engine.
std::string ScalingChart(const Rows& rows) {
  const std::vector<Rows> engines = GroupBy(rows, [](const Result& r) { return r.engine; });
  std::string blocks;
  std::vector<std::string> plots;
  for (size_t i = 0; i < engines.size(); ++i) {
    Rows points = engines[i];
    std::stable_sort(points.begin(), points.end(), [](const Result* a, const Result* b) { return *a->x < *b->x; });
    blocks += fmt::format("$E{} << EOD\n# x median min max\n", i);
    for (const Result* r : points) blocks += DataLine(*r->x, *r, "");
    blocks += "EOD\n";
    const Result& first = *points.front();
    plots.push_back(fmt::format("$E{} using 1:2:3:4 with yerrorlines lw 2 pt 7 ps 1.2 lc {} title {}", i,
                                Rgb(EngineColour(first.engine, i)), Quote(first.engine_label)));
  }
  const Result& first = *rows.front();
  return fmt::format(
      "set title {}\nset ylabel {}\nset key outside top center horizontal\nset grid xtics\n{}{}{}plot {}\n",
      Quote(fmt::format("{} — {}", first.title, first.metric_label)), Quote(UnitsOf(rows)), ScalingXAxis(rows),
      YAxis(rows, true), blocks, Join(plots, ", \\\n     "));
}

void AddWorkloadCharts(const Rows& rows, std::vector<Chart>& charts) {
  const std::string stem = FileStem(rows.front()->workload);
  const Rows headline = Select(rows, [](const Result& r) { return !r.x && r.headline; });
  if (!headline.empty()) charts.push_back({stem, BarChart(headline)});
  const Rows latency = Select(rows, [](const Result& r) { return !r.x && IsPercentile(r); });
  if (HasMetric(latency, kPercentiles[0].metric) && HasMetric(latency, kPercentiles[1].metric)) {
    charts.push_back({stem + "-latency", LatencyChart(latency)});
  }
  // A count (no unit: the versions a series point holds) describes the
  // point rather than measures it.
  const Rows scaled = Select(rows, [](const Result& r) { return r.x.has_value() && !r.unit.empty(); });
  for (const Rows& series : GroupBy(scaled, [](const Result& r) { return r.metric; })) {
    charts.push_back({stem + "-" + FileStem(series.front()->metric), ScalingChart(series)});
  }
}

// Every chart, in workload order. Two charts whose names would coincide
// (workloads "a b" and "a_b") are told apart by a suffix.
std::vector<Chart> PlanCharts(const std::vector<Result>& results) {
  Rows all;
  for (const Result& r : results) all.push_back(&r);
  std::vector<Chart> charts;
  for (const Rows& workload : GroupBy(all, [](const Result& r) { return r.workload; })) {
    AddWorkloadCharts(workload, charts);
  }
  std::set<std::string> stems;
  for (Chart& chart : charts) {
    const std::string base = chart.stem;
    for (int n = 2; !stems.insert(chart.stem).second; ++n) chart.stem = fmt::format("{}-{}", base, n);
  }
  return charts;
}

// The terminal, and `small_font` for crowded labels: svg text is drawn
// smaller than cairo's at the same size.
std::string Terminal(const std::string& format) {
  if (format == "png") {
    return fmt::format("set terminal pngcairo size {},{} noenhanced font \"Sans,11\"\nsmall_font = \",9\"\n", kWidth,
                       kHeight);
  }
  return fmt::format(
      "set terminal svg size {},{} dynamic noenhanced font \"sans-serif,14\" background \"white\"\n"
      "small_font = \",11\"\n",
      kWidth, kHeight);
}

std::string Script(const Chart& chart, const PlotOptions& options, const std::string& image) {
  std::string source = options.json_path;
  std::replace(source.begin(), source.end(), '\n', ' ');  // it goes in a comment line
  return fmt::format(
      "# {}, drawn by spool-bench plot from {}.\n# To draw it again: cd to this directory, then gnuplot {}.gp\n"
      "set encoding utf8\n{}set output {}\n"
      "set border 3\nset tics nomirror\nset grid ytics lt 1 lc rgb \"#e0e0e0\"\n{}",
      image, source, chart.stem, Terminal(options.format), Quote(image), chart.script);
}

void WriteFile(const fs::path& path, const std::string& text) {
  std::ofstream file(path, std::ios::trunc);
  file << text;
  file.close();
  if (!file) Fail(fmt::format("cannot write {}: {}", path.string(), std::strerror(errno)));
}

std::string ReadAll(int fd) {
  std::string out;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

std::string Describe(int wait_status) {
  if (WIFEXITED(wait_status)) return fmt::format("exit status {}", WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) return fmt::format("killed by signal {}", WTERMSIG(wait_status));
  return fmt::format("wait status {}", wait_status);
}

// Runs `gnuplot <script>` in `dir`, its stdout and stderr captured. A
// second pipe, closed by a successful exec, carries errno when exec fails.
void RunGnuplot(const fs::path& dir, const std::string& script) {
  int output[2];
  int exec_error[2];
  if (::pipe2(output, O_CLOEXEC) != 0 || ::pipe2(exec_error, O_CLOEXEC) != 0) {
    Fail(fmt::format("pipe: {}", std::strerror(errno)));
  }
  const std::string dir_name = dir.string();
  std::array<char*, 3> argv = {const_cast<char*>("gnuplot"), const_cast<char*>(script.c_str()), nullptr};
  const pid_t pid = ::fork();
  if (pid < 0) Fail(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    if (::dup2(output[1], STDOUT_FILENO) >= 0 && ::dup2(output[1], STDERR_FILENO) >= 0 &&
        ::chdir(dir_name.c_str()) == 0) {
      ::execvp(argv[0], argv.data());
    }
    const int exec_errno = errno;
    [[maybe_unused]] const ssize_t ignored = ::write(exec_error[1], &exec_errno, sizeof exec_errno);
    ::_exit(127);
  }
  ::close(output[1]);
  ::close(exec_error[1]);
  const std::string said = ReadAll(output[0]);
  const std::string exec_report = ReadAll(exec_error[0]);
  ::close(output[0]);
  ::close(exec_error[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (exec_report.size() == sizeof(int)) {
    int code = 0;
    std::memcpy(&code, exec_report.data(), sizeof code);
    Fail(fmt::format("cannot run gnuplot in {}: {} (is it installed? Debian: apt-get install gnuplot-nox)", dir_name,
                     std::strerror(code)));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Fail(fmt::format("gnuplot failed on {} ({}):\n{}", (dir / script).string(), Describe(status),
                     said.substr(0, kMaxQuotedOutput)));
  }
}

std::string DrawChart(const Chart& chart, const PlotOptions& options, const fs::path& dir) {
  const std::string image = chart.stem + "." + options.format;
  const std::string script = chart.stem + ".gp";
  WriteFile(dir / script, Script(chart, options, image));
  RunGnuplot(dir, script);
  std::error_code error;
  if (fs::file_size(dir / image, error) == 0 || error) {
    Fail(fmt::format("gnuplot wrote no {} (script {})", (dir / image).string(), (dir / script).string()));
  }
  return (dir / image).string();
}

fs::path PrepareDir(const std::string& out_dir) {
  fs::path dir = out_dir.empty() ? fs::path(".") : fs::path(out_dir);
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) Fail(fmt::format("cannot create {}: {}", dir.string(), error.message()));
  if (!fs::is_directory(dir, error)) Fail(fmt::format("{} is not a directory", dir.string()));
  return dir;
}

}  // namespace

std::vector<std::string> DrawPlots(const PlotOptions& options) {
  if (options.format != "png" && options.format != "svg") {
    Fail(fmt::format("format must be png or svg, not \"{}\"", options.format));
  }
  const std::vector<Result> results = ReadResults(options.json_path);
  const std::vector<Chart> charts = PlanCharts(results);
  if (charts.empty()) return {};
  const fs::path dir = PrepareDir(options.out_dir);
  std::vector<std::string> written;
  for (const Chart& chart : charts) written.push_back(DrawChart(chart, options, dir));
  return written;
}

}  // namespace spool::bench
