// timeline_svg() of report/timeline.h: the drawing, apart from the model.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compare/fold.h"
#include "report/html_escape.h"
#include "report/timeline.h"

namespace denpex {

namespace {

constexpr double kWidth = 1000, kLabel = 300, kRight = 40, kNoTime = 110;
constexpr double kTop = 14, kRow = 26, kAxis = 58;

struct Geometry {
  double x0 = 0, x1 = 0;        // the plot's time span in pixels
  double no_time_x = 0;         // where marks without a time go, when others have one
  const Timeline* tl = nullptr;

  double x(const TimelineMark& m) const {
    if (!tl->any_time) return m.role == TimelineRole::initiating ? x0 + (x1 - x0) * 0.12 : x0 + (x1 - x0) * 0.55;
    if (!m.has_time) return no_time_x;
    return at(m.t);
  }
  double at(double t) const {
    double span = tl->t1 - tl->t0;
    if (span <= 0) return (x0 + x1) / 2;
    return x0 + (t - tl->t0) / span * (x1 - x0);
  }
};

std::string time_label(double t, double span) {
  double day = std::floor(t / 86400);
  double rest = t - day * 86400;
  int h = static_cast<int>(rest / 3600), m = static_cast<int>(std::fmod(rest, 3600) / 60);
  double s = std::fmod(rest, 60);
  if (span >= 86400) {
    static const int before[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365};
    int d = static_cast<int>(day), month = 1;
    while (month < 12 && d >= before[month]) ++month;
    return fmt::format("{:02}-{:02} {:02}:{:02}", month, d - before[month - 1] + 1, h, m);
  }
  if (span < 10) return fmt::format("{:02}:{:02}:{:06.3f}", h, m, s);
  return fmt::format("{:02}:{:02}:{:02}", h, m, static_cast<int>(s));
}

std::string who(const TimelineMark& m) {
  if (!m.ranks.empty()) return rank_subject(m.ranks);
  if (m.procs.empty()) return "a rank";
  return fmt::format("{} {}", m.procs.size() == 1 ? "process" : "processes", fmt::join(m.procs, ", "));
}

std::string short_label(const TimelineMark& m) {
  if (!m.ranks.empty()) return abbreviate_list(rank_ranges(m.ranks), 16);
  if (!m.procs.empty()) {
    const std::string& p = m.procs.front();
    std::size_t colon = p.rfind(':');
    std::string pid = colon == std::string::npos ? p : "pid " + p.substr(colon + 1);
    return m.procs.size() > 1 ? pid + ",..." : pid;
  }
  return "";
}

// `labelled`: whether the mark's short label is drawn (not when it would overlap the last one).
std::string mark_svg(const Geometry& g, const TimelineMark& m, double y, bool labelled) {
  bool init = m.role == TimelineRole::initiating;
  double x = g.x(m);
  std::string title = fmt::format("{}{}: {}{}", who(m), m.when.empty() ? "" : " at " + m.when, m.what,
                                  m.events > 1 ? fmt::format(" ({} events)", m.events) : "");
  // Near the right edge the label goes to the left of its mark.
  bool left = x > kWidth - 110;
  return fmt::format(
      "<g class=\"mark {}\" data-role=\"{}\" data-t=\"{}\" data-ranks=\"{}\" data-procs=\"{}\">"
      "<title>{}</title><circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\"/>"
      "<text x=\"{:.1f}\" y=\"{:.1f}\" class=\"ml\"{}>{}</text></g>",
      init ? "init" : "coll", init ? "initiating" : "collateral", m.has_time ? fmt::format("{:.6f}", m.t) : "",
      html_escape(rank_ranges(m.ranks)), html_escape(fmt::format("{}", fmt::join(m.procs, " "))), html_escape(title),
      x, y, init ? 8 : 6, left ? x - 11 : x + 11, y + 4, left ? " text-anchor=\"end\"" : "",
      labelled ? html_escape(short_label(m)) : "");
}

std::string claim_svg(const Geometry& g, const Timeline& tl, const TimelineRow& row, double y) {
  double x = 0;
  if (tl.claim.has_time && tl.any_time) {
    x = g.at(tl.claim.t);
  } else {
    // No time of its own: beside the claimed rank's own mark.
    auto it = std::find_if(row.marks.begin(), row.marks.end(), [&](const TimelineMark& m) {
      return std::any_of(tl.claim.ranks.begin(), tl.claim.ranks.end(),
                         [&](int r) { return std::binary_search(m.ranks.begin(), m.ranks.end(), r); });
    });
    x = (it != row.marks.end() ? g.x(*it) : g.x0) + 16;
  }
  std::string title = fmt::format("launcher's claim{}: {}{}", tl.claim.when.empty() ? "" : " at " + tl.claim.when,
                                  tl.claim.what, tl.claim.correct ? " (agrees)" : " (wrong)");
  return fmt::format(
      "<g class=\"claim{}\" data-t=\"{}\"><title>{}</title>"
      "<polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/></g>",
      tl.claim.correct ? "" : " wrong", tl.claim.has_time ? fmt::format("{:.6f}", tl.claim.t) : "", html_escape(title),
      x, y - 9, x + 9, y, x, y + 9, x - 9, y);
}

std::string row_svg(const Geometry& g, const Timeline& tl, const TimelineRow& row, std::size_t i) {
  double y = kTop + kRow * static_cast<double>(i) + kRow / 2;
  bool init = std::any_of(row.marks.begin(), row.marks.end(),
                          [](const TimelineMark& m) { return m.role == TimelineRole::initiating; });
  std::string ranks = row.ranks.empty() ? "" : abbreviate_list(rank_ranges(row.ranks), 18);
  std::string out = fmt::format(
      "<g class=\"row{}\" data-hosts=\"{}\" data-label=\"{}\"><title>{}</title><rect x=\"0\" y=\"{:.1f}\" width=\"{}\" height=\"{}\" "
      "class=\"{}\"/><text x=\"8\" y=\"{:.1f}\" class=\"host\">{}</text><text x=\"{}\" y=\"{:.1f}\" "
      "class=\"rk\" text-anchor=\"end\">{}</text><line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" class=\"lane\"/>",
      init ? " initrow" : "", row.hosts.size(), html_escape(row.label),
      html_escape(fmt::format("{} ({} {})", row.label, row.hosts.size(), row.hosts.size() == 1 ? "host" : "hosts")),
      y - kRow / 2, kWidth, kRow,
      i % 2 ? "odd" : "even", y + 4, html_escape(abbreviate_list(row.label, 22)), kLabel, y + 4,
      html_escape(ranks.empty() ? "" : (row.ranks.size() == 1 ? "rank " : "ranks ") + ranks), g.x0, y, g.x1, y);
  double last = -1e9;
  for (const auto& m : row.marks) {
    bool labelled = g.x(m) - last >= 110;
    if (labelled) last = g.x(m);
    out += mark_svg(g, m, y, labelled);
  }
  if (row.claimed) out += claim_svg(g, tl, row, y);
  return out + "</g>";
}

std::string axis_svg(const Geometry& g, const Timeline& tl, double y) {
  std::string out = fmt::format("<g class=\"axis\"><line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\"/>", g.x0, y,
                                g.x1, y);
  if (!tl.any_time) {
    out += fmt::format("<text x=\"{}\" y=\"{:.1f}\">order only: the log lines carry no times</text>", g.x0, y + 16);
  } else {
    double span = tl.t1 - tl.t0;
    int ticks = span > 0 ? 5 : 1;
    for (int k = 0; k < ticks; ++k) {
      double t = ticks == 1 ? tl.t0 : tl.t0 + span * k / (ticks - 1);
      double x = g.at(t);
      out += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\"/><text x=\"{:.1f}\" y=\"{:.1f}\" "
                         "text-anchor=\"middle\">{}</text>",
                         x, y, x, y + 5, x, y + 18, time_label(t, span));
    }
    if (!tl.all_time)
      out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">no time</text>", g.no_time_x, y + 18);
  }
  // The legend: the same glyphs as the marks.
  double ly = y + 40;
  out += fmt::format(
      "<g class=\"legend\"><g class=\"mark init\"><circle cx=\"{0}\" cy=\"{1:.1f}\" r=\"8\"/></g>"
      "<text x=\"{2}\" y=\"{3:.1f}\">initiating: failed first, on its own</text>"
      "<g class=\"mark coll\"><circle cx=\"{4}\" cy=\"{1:.1f}\" r=\"6\"/></g>"
      "<text x=\"{5}\" y=\"{3:.1f}\">collateral: failed because of it</text>",
      g.x0, ly, g.x0 + 14, ly + 4, g.x0 + 240, g.x0 + 252);
  if (tl.claim.present)
    out += fmt::format("<g class=\"claim{}\"><polygon points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>"
                       "</g><text x=\"{}\" y=\"{:.1f}\">the launcher's claim{}</text>",
                       tl.claim.correct ? "" : " wrong", g.x0 + 470, ly - 9, g.x0 + 479, ly, g.x0 + 470, ly + 9,
                       g.x0 + 461, ly, g.x0 + 486, ly + 4, tl.claim.correct ? "" : " (wrong)");
  return out + "</g></g>";
}

}  // namespace

std::string timeline_svg(const Timeline& tl) {
  if (tl.rows.empty()) return "";
  Geometry g;
  g.tl = &tl;
  g.x0 = kLabel + 16;
  g.x1 = kWidth - kRight - (tl.any_time && !tl.all_time ? kNoTime : 0);
  g.no_time_x = g.x1 + kNoTime / 2;
  double rows_h = kRow * static_cast<double>(tl.rows.size());
  double height = kTop + rows_h + kAxis;
  std::string out = fmt::format(
      "<svg class=\"timeline\" viewBox=\"0 0 {} {:.0f}\" width=\"100%\" role=\"img\" "
      "aria-label=\"ranks by host against time\">",
      kWidth, height);
  for (std::size_t i = 0; i < tl.rows.size(); ++i) out += row_svg(g, tl, tl.rows[i], i);
  out += axis_svg(g, tl, kTop + rows_h + 10);
  return out + "</svg>";
}

}  // namespace denpex
