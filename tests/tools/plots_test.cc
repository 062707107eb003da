// The SVG pictures: well-formed XML (parsed back with Boost.PropertyTree),
// holding the elements the data asks for, with text escaped.
#include "plots.h"

#include <sstream>

#include <boost/property_tree/ptree.hpp>
#include <boost/property_tree/xml_parser.hpp>
#include <gtest/gtest.h>

namespace spool::cli {
namespace {

namespace pt = boost::property_tree;

// Parses `svg` (failing the test if it is not well-formed) and counts the
// elements named `tag`, at any depth.
struct Parsed {
  pt::ptree tree;
  size_t Count(const std::string& tag) const { return CountIn(tree, tag); }
  static size_t CountIn(const pt::ptree& node, const std::string& tag) {
    size_t n = 0;
    for (const auto& [name, child] : node) n += (name == tag ? 1 : 0) + CountIn(child, tag);
    return n;
  }
  // Every <text>'s content, joined by newlines.
  std::string Texts() const { return TextsIn(tree); }
  static std::string TextsIn(const pt::ptree& node) {
    std::string out;
    for (const auto& [name, child] : node) {
      if (name == "text" || name == "title") out += child.data() + "\n";
      out += TextsIn(child);
    }
    return out;
  }
};

Parsed Parse(const std::string& svg) {
  Parsed parsed;
  std::istringstream in(svg);
  EXPECT_NO_THROW(pt::read_xml(in, parsed.tree)) << svg;
  return parsed;
}

PipelineSpec ShopSpec() {
  PipelineBuilder b("shop");
  b.StreamingTable("main.shop.orders");
  b.StreamingTable("main.shop.revenue").PrimaryKey({"country"});
  b.MaterializedView("main.shop.top");
  b.Flow("clean").FromTopic("/data/orders", {{"id", ColumnType::kInt64, false}}).Into("main.shop.orders");
  b.Flow("revenue").FromDataset("main.shop.orders").Into("main.shop.revenue");
  b.Flow("top").FromDataset("main.shop.revenue").Into("main.shop.top");
  return b.Build();
}

TEST(PlotsTest, APipelineGraphHasABoxPerSourceAndDatasetAndAnArrowPerFlow) {
  const Parsed svg = Parse(PipelineGraphSvg(ShopSpec(), GraphNotes{}));
  EXPECT_EQ(svg.tree.get<std::string>("svg.<xmlattr>.xmlns"), "http://www.w3.org/2000/svg");
  EXPECT_EQ(svg.Count("rect"), 1u + 1 + 3);  // the background, the topic, three datasets
  EXPECT_EQ(svg.Count("line"), 3u);          // one arrow per flow
  const std::string texts = svg.Texts();
  for (const char* want :
       {"pipeline shop", "topic /data/orders", "main.shop.orders", "main.shop.top", "materialized_view", "revenue"}) {
    EXPECT_NE(texts.find(want), std::string::npos) << want << " in\n" << texts;
  }
}

TEST(PlotsTest, ARewindPreviewMarksWhatItTouchesAndEscapesItsNotes) {
  GraphNotes notes;
  notes.title = "rewind to version 7";
  notes.highlighted = {"main.shop.revenue", "main.shop.top"};
  notes.dataset_notes["main.shop.revenue"] = "back to table version 5";
  notes.flow_notes["revenue"] = "replays from offset <3> & on";
  const std::string svg = PipelineGraphSvg(ShopSpec(), notes);
  const Parsed parsed = Parse(svg);
  EXPECT_NE(parsed.Texts().find("replays from offset <3> & on"), std::string::npos);
  EXPECT_NE(svg.find("&lt;3&gt; &amp; on"), std::string::npos);
  EXPECT_NE(parsed.Texts().find("back to table version 5"), std::string::npos);
  size_t touched = 0, greyed = 0;
  for (size_t at = 0; (at = svg.find("fill=\"#fde2c8\"", at)) != std::string::npos; ++at) ++touched;
  for (size_t at = 0; (at = svg.find("fill=\"#f1f3f4\"", at)) != std::string::npos; ++at) ++greyed;
  EXPECT_EQ(touched, 2u);
  EXPECT_EQ(greyed, 1u);  // main.shop.orders is not rewound
}

TEST(PlotsTest, ATimelineDrawsCommitsPointsAndCutBranches) {
  Timeline t;
  t.title = "history of main.shop.revenue";
  for (uint64_t v = 1; v <= 5; ++v)
    t.commits.push_back({v, 1764547200000000 + v, v == 1 ? "CREATE TABLE" : "WRITE", 10});
  t.points.push_back({"6f5ee29a-0000-4000-8000-000000000000", 3});
  t.branches.push_back({"epoch-000002", 3, {{4, 0, "WRITE", 2}, {5, 0, "WRITE", 2}}});
  const Parsed svg = Parse(TimelineSvg(t));
  EXPECT_EQ(svg.Count("circle"), 5u + 2 + 4);  // main line, the cut branch, the legend
  const std::string texts = svg.Texts();
  for (const char* want : {"history of main.shop.revenue", "v5", "epoch-000002 (cut by a rewind)", "6f5ee29a",
                           "version 2: WRITE, 10 rows, 2025-12-01 00:00:00 UTC"}) {
    EXPECT_NE(texts.find(want), std::string::npos) << want << " in\n" << texts;
  }
}

TEST(PlotsTest, ALongHistoryDrawsItsNewestCommitsAndSaysHowManyAreLeftOut) {
  Timeline t;
  t.title = "history";
  for (uint64_t v = 1; v <= kTimelineMaxCommits + 25; ++v) t.commits.push_back({v, 0, "WRITE", -1});
  const Parsed svg = Parse(TimelineSvg(t));
  EXPECT_EQ(svg.Count("circle"), kTimelineMaxCommits + 4);
  EXPECT_NE(svg.Texts().find("(25 older commits not drawn)"), std::string::npos);
}

}  // namespace
}  // namespace spool::cli
