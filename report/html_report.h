// --html FILE: one self-contained page made from a finished JSON report of any mode (the gate,
// compare, collectives, diagnose), so that it is the same whether the report was just made or
// read back from a file. No network: no external script, style, font or image; inline CSS and
// SVG, and one small script (the copy buttons) allowed by the page's Content-Security-Policy by
// its hash, so nothing else could run even if a string escaped its escaping.
//
// The page shows the verdict and the lead lines (report/lead.h); for diagnose the timeline of
// ranks by host against time (report/timeline.h); for a collective divergence a grid of ranks
// x positions around it (findings[].calls_around, docs/reports.md); each finding with its
// evidence (file:line, the line, the telling part marked), its fix and its verify, each with a
// copy button; the gate's configurations and what sets each apart; what was read and what was
// unreadable. Every string from the report is escaped (report/html_escape.h).
//
// Bounded at any input: at most kHtmlMaxFindings findings, kHtmlMaxEvidence evidence lines each,
// kHtmlMaxText bytes of any one string, kHtmlMaxFiles input files and the timeline's row limit,
// so a page stays well under 2 MB; what was left out is counted on the page.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

// The page. Never throws: keys missing or of the wrong type are shown as absent.
std::string render_html(const nlohmann::json& report);

// The script of the page and the Content-Security-Policy hash that allows it
// ("sha256-<base64>"): the browser test recomputes the hash from the script.
const char* html_script();
const char* html_script_hash();

constexpr std::size_t kHtmlMaxFindings = 50;
constexpr std::size_t kHtmlMaxEvidence = 8;
constexpr std::size_t kHtmlMaxText = 2000;
constexpr std::size_t kHtmlMaxFiles = 50;

}  // namespace denpex
