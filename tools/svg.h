// A small SVG writer for Spool's pictures (tools/plots.h): shapes and text
// with every attribute value and text escaped, in document order.
#pragma once

#include <string>
#include <string_view>

namespace spool::cli {

class Svg {
 public:
  // A drawing `width` × `height` pixels titled `title` (shown as the
  // document's <title>).
  Svg(double width, double height, std::string_view title);

  // `style` is an SVG presentation-attribute string, e.g. R"(fill="#eee")".
  void Rect(double x, double y, double w, double h, std::string_view style, std::string_view tooltip = {});
  void Circle(double cx, double cy, double r, std::string_view style, std::string_view tooltip = {});
  void Line(double x1, double y1, double x2, double y2, std::string_view style);
  // A line ending in an arrowhead at (x2, y2).
  void Arrow(double x1, double y1, double x2, double y2, std::string_view color = "#555");
  // `anchor`: start, middle or end.
  void Text(double x, double y, std::string_view text, std::string_view style = {}, std::string_view anchor = "start");

  std::string Finish();  // the document

  static std::string Escape(std::string_view text);

 private:
  std::string body_;
  double width_, height_;
  std::string title_;
  bool arrows_ = false;
};

}  // namespace spool::cli
