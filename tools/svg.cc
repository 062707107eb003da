#include "svg.h"

#include <fmt/format.h>

namespace spool::cli {
namespace {
std::string Num(double v) { return fmt::format("{:.1f}", v); }

std::string Tooltip(std::string_view tooltip) {
  return tooltip.empty() ? std::string() : "<title>" + Svg::Escape(tooltip) + "</title>";
}
}  // namespace

Svg::Svg(double width, double height, std::string_view title) : width_(width), height_(height), title_(title) {}

std::string Svg::Escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

void Svg::Rect(double x, double y, double w, double h, std::string_view style, std::string_view tooltip) {
  body_ += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"6\" {}>{}</rect>\n", Num(x), Num(y),
                       Num(w), Num(h), style, Tooltip(tooltip));
}

void Svg::Circle(double cx, double cy, double r, std::string_view style, std::string_view tooltip) {
  body_ += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" {}>{}</circle>\n", Num(cx), Num(cy), Num(r), style,
                       Tooltip(tooltip));
}

void Svg::Line(double x1, double y1, double x2, double y2, std::string_view style) {
  body_ +=
      fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" {}/>\n", Num(x1), Num(y1), Num(x2), Num(y2), style);
}

void Svg::Arrow(double x1, double y1, double x2, double y2, std::string_view color) {
  arrows_ = true;
  body_ += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"1.5\" marker-end=\"url(#arrow)\"/>\n",
      Num(x1), Num(y1), Num(x2), Num(y2), Escape(color));
}

void Svg::Text(double x, double y, std::string_view text, std::string_view style, std::string_view anchor) {
  body_ += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"{}\" {}>{}</text>\n", Num(x), Num(y), Escape(anchor),
                       style, Escape(text));
}

std::string Svg::Finish() {
  std::string out = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<title>{2}</title>\n",
      Num(width_), Num(height_), Escape(title_));
  if (arrows_) {
    out +=
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" "
        "markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\" fill=\"#555\"/>"
        "</marker></defs>\n";
  }
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  return out + body_ + "</svg>\n";
}

}  // namespace spool::cli
