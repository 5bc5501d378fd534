// The failure timeline of a diagnose report: ranks grouped by host against time, each rank's
// first event (initiating or collateral) and the launcher's claim, as a model (rows of marks)
// and as inline SVG. Made from the JSON report alone: the per-rank events of
// `diagnosis.timeline` when the report has them (docs/reports.md), otherwise one event per
// party of `diagnosis.initiating` / `collateral`.
//
// It stays one screen at any scale: hosts become rows only up to `max_rows`; beyond that hosts
// whose events look the same (same roles at the same point of the time axis) share a row
// labelled with their folded names ("node[002-125]") and rank ranges, so there is never more
// than one row per host and usually far fewer.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

enum class TimelineRole { initiating, collateral };

// One mark: the first events of one or more ranks of a row at (about) one time.
struct TimelineMark {
  TimelineRole role = TimelineRole::collateral;
  bool has_time = false;
  double t = 0;                     // seconds on the report's clock (when has_time)
  std::string when;                 // as the report prints it ("05-14 10:12:05"), or ""
  std::vector<int> ranks;           // sorted, no duplicates
  std::vector<std::string> procs;   // processes whose rank is unknown ("node01:1234")
  std::string what;                 // the first event's description
  int events = 0;                   // how many events the mark stands for
};

struct TimelineRow {
  std::vector<std::string> hosts;   // sorted; more than one when folded
  std::string label;                // "node02", "node[002-125]", "(host unknown)"
  std::vector<int> ranks;           // every rank of the row's events
  std::vector<TimelineMark> marks;  // in time order
  bool claimed = false;             // the launcher's claim names a rank or host of this row
};

struct TimelineClaim {
  bool present = false;
  bool correct = true;
  std::vector<int> ranks;
  std::vector<std::string> hosts;
  bool has_time = false;
  double t = 0;
  std::string when, what;
};

struct Timeline {
  std::vector<TimelineRow> rows;
  TimelineClaim claim;
  bool any_time = false;            // some mark has a time: the x axis is time
  bool all_time = false;            // every mark has one
  double t0 = 0, t1 = 0;            // the span of the known times
  std::size_t hosts = 0;            // distinct hosts before folding
  bool per_rank = false;            // built from diagnosis.timeline (one event per rank)
};

// Seconds from a report time: "05-14 10:12:05", "05-14 10:12", "2024-05-14T10:12:05[.123]",
// "10:12:05": day of the year (a year without a leap day, as the readers count) x 86,400 + the
// time of day, the clock of `at_us` / 1e6 (docs/reports.md). False when it is none of these or
// a field is out of range.
bool parse_report_time(const std::string& when, double* seconds);

// The timeline of a diagnose report; no rows when the report has no diagnosis or no party.
// Never throws: keys missing or of the wrong type are read as absent.
Timeline timeline_of(const nlohmann::json& report, std::size_t max_rows = 32);

// The timeline as an <svg> element (width scales with the page), every text from the report
// escaped. Each mark is a <g class="mark" data-role="initiating|collateral" data-t="seconds"
// data-ranks="0-3"> with a <title>; each row a <g class="row" data-hosts="N">; the claim a
// <g class="claim">. "" for a timeline without rows.
std::string timeline_svg(const Timeline& timeline);

}  // namespace denpex
