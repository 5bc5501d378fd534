#include "report/html_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compare/config_diff.h"
#include "compare/evidence_cut.h"
#include "compare/facts.h"
#include "compare/fold.h"
#include "probe/record.h"
#include "report/html_escape.h"
#include "report/lead.h"
#include "report/timeline.h"

namespace denpex {

using nlohmann::json;

namespace {

// The page's one script: copy buttons, then a marker that it ran (the browser test reads it).
// Its SHA-256 is in the Content-Security-Policy below: change one and the other with it
// (tests/report/run_browser.sh says when they disagree).
constexpr const char* kScript = R"JS(
(function () {
  function fallback(text) {
    var t = document.createElement('textarea');
    t.value = text;
    t.setAttribute('readonly', '');
    t.style.position = 'fixed';
    t.style.opacity = '0';
    document.body.appendChild(t);
    t.select();
    var ok = false;
    try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
    document.body.removeChild(t);
    return ok;
  }
  function copy(text, button) {
    function done(ok) {
      button.textContent = ok ? 'copied' : 'select and copy';
      setTimeout(function () { button.textContent = 'copy'; }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done(true); }, function () { done(fallback(text)); });
    } else {
      done(fallback(text));
    }
  }
  var buttons = document.querySelectorAll('button.copy');
  for (var i = 0; i < buttons.length; i++) {
    buttons[i].addEventListener('click', function (ev) {
      var b = ev.currentTarget;
      var source = document.getElementById(b.getAttribute('data-for'));
      if (source) copy(source.textContent, b);
    });
  }
  document.documentElement.setAttribute('data-script', 'ran');
})();
)JS";

constexpr const char* kScriptHash = "sha256-EVVGrSvklAIWqtYTmmpFn/sfa+vE3hba8dlgGI6H4J4=";

constexpr const char* kStyle = R"CSS(
:root { --init: #c8102e; --coll: #e8a33d; --ink: #1d2430; --dim: #5b6472; --line: #d9dde3; --bg: #f6f7f9; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; }
main { max-width: 1100px; margin: 0 auto; padding: 0 20px 40px; }
header.verdict { padding: 18px 20px; margin: 0 -20px 18px; border-bottom: 1px solid var(--line); }
header.reject { background: #fdecee; } header.pass { background: #eaf7ee; } header.inconclusive { background: #fff6e0; }
h1 { font-size: 24px; margin: 0 0 6px; } h1 .word { padding: 1px 8px; border-radius: 4px; color: #fff; }
.reject h1 .word { background: var(--init); } .pass h1 .word { background: #1f8a3b; } .inconclusive h1 .word { background: #b7791f; }
.lead { margin: 4px 0; font-size: 16px; } .lead b { font-weight: 600; }
.meta { color: var(--dim); font-size: 13px; margin-top: 8px; }
.badge { display: inline-block; padding: 0 6px; border: 1px solid var(--dim); border-radius: 3px; font-size: 12px; }
h2 { font-size: 18px; margin: 26px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
svg.timeline { display: block; background: #fff; border: 1px solid var(--line); border-radius: 4px; }
svg text { font: 12px system-ui, sans-serif; fill: var(--ink); } svg text.rk, svg text.ml { fill: var(--dim); font-size: 11px; }
svg rect.even { fill: #fff; } svg rect.odd { fill: var(--bg); } svg .initrow text.host { font-weight: 700; fill: var(--init); }
svg line.lane { stroke: var(--line); } svg .axis line { stroke: var(--dim); }
svg .mark.init circle { fill: var(--init); stroke: #7a0a1c; stroke-width: 1.5; }
svg .mark.coll circle { fill: var(--coll); stroke: #8a5a12; stroke-width: 1; }
svg .claim polygon { fill: none; stroke: #111; stroke-width: 2; } svg .claim.wrong polygon { stroke-dasharray: 3 2; }
.note { color: var(--dim); font-size: 13px; }
article.finding { border: 1px solid var(--line); border-left: 5px solid var(--coll); border-radius: 4px; padding: 10px 14px; margin: 12px 0; }
article.finding.error { border-left-color: var(--init); }
article.finding h3 { margin: 0 0 6px; font-size: 16px; } .sev { text-transform: uppercase; font-size: 12px; color: var(--dim); margin-right: 6px; }
code, pre, .ev { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 13px; }
dl.values { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0; } dl.values dt { color: var(--dim); }
dl.values dd { margin: 0; overflow-wrap: anywhere; }
ol.evidence { list-style: none; padding: 0; margin: 6px 0; }
ol.evidence li { background: var(--bg); border-radius: 3px; padding: 4px 8px; margin: 3px 0; overflow-wrap: anywhere; white-space: pre-wrap; }
.loc { color: var(--dim); margin-right: 8px; } mark { background: #ffe28a; color: inherit; padding: 0 1px; }
.cmd { display: grid; grid-template-columns: 56px 1fr auto; align-items: start; gap: 8px; margin: 6px 0; }
.cmd .k { color: var(--dim); padding-top: 6px; } .cmd pre { margin: 0; padding: 6px 8px; background: #f0f2f5; border-radius: 3px; white-space: pre-wrap; overflow-wrap: anywhere; }
button.copy { font: inherit; font-size: 12px; padding: 4px 10px; border: 1px solid var(--dim); border-radius: 3px; background: #fff; cursor: pointer; }
table { border-collapse: collapse; width: 100%; font-size: 13px; } th, td { border: 1px solid var(--line); padding: 4px 6px; text-align: left; vertical-align: top; }
th { background: var(--bg); } table.grid td { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 12px; }
table.grid .at { outline: 2px solid var(--ink); outline-offset: -2px; } table.grid td.diff { background: #fbd0d6; font-weight: 700; }
table.grid td.none { color: var(--dim); }
details summary { cursor: pointer; color: var(--dim); }
footer { margin-top: 30px; color: var(--dim); font-size: 12px; }
)CSS";

std::string esc(const std::string& s) {
  if (s.size() <= kHtmlMaxText) return html_escape(s);
  return html_escape(s.substr(0, kHtmlMaxText)) + fmt::format("&hellip; ({} more bytes)", s.size() - kHtmlMaxText);
}

std::string str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  if (it == j.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  return "";
}

const json& arr(const json& j, const char* key) {
  static const json empty = json::array();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : empty;
}

const json& obj(const json& j, const char* key) {
  static const json empty = json::object();
  if (!j.is_object()) return empty;
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : empty;
}

long long inum(const json& j, const char* key, long long fallback) {
  if (!j.is_object()) return fallback;
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<long long>() : fallback;
}

std::vector<int> ints(const json& a) {
  std::vector<int> out;
  for (const auto& v : a)
    if (v.is_number_integer()) out.push_back(v.get<int>());
  return out;
}

std::vector<std::string> strings(const json& a) {
  std::vector<std::string> out;
  for (const auto& v : a)
    if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// A block of text with a copy button; `id` is unique on the page.
std::string copyable(const char* label, const std::string& text, const std::string& id) {
  return fmt::format(
      "<div class=\"cmd\"><span class=\"k\">{}</span><pre id=\"{}\">{}</pre>"
      "<button class=\"copy\" type=\"button\" data-for=\"{}\">copy</button></div>\n",
      label, id, esc(text), id);
}

std::string head(const Lead& lead) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
      "script-src '{}'; img-src data:; base-uri 'none'; form-action 'none'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"denpex-probe\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body><main>\n",
      kScriptHash, esc(lead.verdict_line), kStyle);
}

std::string verdict_section(const json& report, const Lead& lead, ReportKind kind) {
  std::string v = lead.verdict.empty() ? "unknown" : lead.verdict;
  const char* what = kind == ReportKind::diagnose ? "diagnose" : kind == ReportKind::collectives ? "collectives" : "gate";
  std::string out = fmt::format("<header class=\"verdict {}\" id=\"verdict\"><h1><span class=\"word\">{}</span> {}</h1>\n",
                                esc(v), esc(v == "pass" ? "PASS" : v == "reject" ? "REJECT" : v == "inconclusive" ? "INCONCLUSIVE" : v),
                                what);
  for (const auto& l : lead.lines) {
    std::size_t colon = l.find(": ");
    bool labelled = colon != std::string::npos && colon < 20 && l.rfind("error ", 0) != 0 && l.rfind("warning ", 0) != 0;
    if (labelled) out += fmt::format("<p class=\"lead\"><b>{}</b>{}</p>\n", esc(l.substr(0, colon + 1)), esc(l.substr(colon + 1)));
    else out += fmt::format("<p class=\"lead\">{}</p>\n", esc(l));
  }
  out += fmt::format("<p class=\"meta\">{}", esc(lead.verdict_line));
  if (report.is_object() && report.contains("redacted") && report["redacted"] == true)
    out += " <span class=\"badge\">redacted: host names, addresses, paths and users replaced</span>";
  return out + "</p></header>\n";
}

std::string timeline_section(const json& report) {
  Timeline tl = timeline_of(report);
  if (tl.rows.empty()) return "";
  std::string out = "<section id=\"timeline\"><h2>Timeline</h2>\n";
  out += timeline_svg(tl);
  out += fmt::format("<p class=\"note\">{} {} on {} {}{}{}.</p></section>\n", tl.rows.size(),
                     tl.rows.size() == 1 ? "row" : "rows", tl.hosts, tl.hosts == 1 ? "host" : "hosts",
                     tl.rows.size() < tl.hosts ? " (hosts whose ranks failed alike share a row)" : "",
                     tl.per_rank ? "; each rank's first event" : "; one mark per party of the diagnosis");
  return out;
}

std::string grid_table(const json& around) {
  const json& rows = arr(around, "rows");
  long long first = inum(around, "first", 0), seq = inum(around, "seq", -1);
  std::size_t width = 0;
  for (const auto& r : rows) width = std::max(width, arr(r, "calls").size());
  // Each column's call by most ranks: the others are highlighted.
  std::vector<std::string> majority(width);
  for (std::size_t c = 0; c < width; ++c) {
    std::map<std::string, std::size_t> votes;
    for (const auto& r : rows) {
      const json& calls = arr(r, "calls");
      std::string call = c < calls.size() && calls[c].is_string() ? calls[c].get<std::string>() : "";
      votes[call] += std::max<std::size_t>(1, arr(r, "ranks").size());
    }
    std::size_t best = 0;
    for (const auto& kv : votes)
      if (kv.second > best) best = kv.second, majority[c] = kv.first;
  }
  std::string out = "<table class=\"grid\"><thead><tr><th>ranks</th>";
  for (std::size_t c = 0; c < width; ++c)
    out += fmt::format("<th{}>{}</th>", first + static_cast<long long>(c) == seq ? " class=\"at\"" : "",
                       first + static_cast<long long>(c));
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    std::vector<int> ranks = ints(arr(r, "ranks"));
    std::vector<std::string> hosts = strings(arr(r, "hosts"));
    out += fmt::format("<tr><th>{}</th>", esc(ranks.empty() ? "?" : rank_phrase(ranks, hosts)));
    const json& calls = arr(r, "calls");
    for (std::size_t c = 0; c < width; ++c) {
      std::string call = c < calls.size() && calls[c].is_string() ? calls[c].get<std::string>() : "";
      std::string cls = call != majority[c] ? "diff" : "";
      if (call.empty()) cls += cls.empty() ? "none" : " none";
      if (first + static_cast<long long>(c) == seq) cls += cls.empty() ? "at" : " at";
      out += fmt::format("<td{}>{}</td>", cls.empty() ? "" : " class=\"" + cls + "\"", call.empty() ? "&mdash;" : esc(call));
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table>\n";
}

std::string grid_section(const json& report) {
  std::string out;
  std::size_t shown = 0;
  for (const auto& f : arr(report, "findings")) {
    const json& around = obj(f, "calls_around");
    if (arr(around, "rows").empty() || shown == 3) continue;
    if (shown++ == 0) out += "<section id=\"grid\"><h2>Collective divergence</h2>\n";
    out += fmt::format("<p>communicator <code>{}</code>, position {}: {}</p>\n", esc(str(around, "comm")),
                       esc(str(around, "seq")), esc(str(f, "message")));
    out += grid_table(around);
  }
  return out.empty() ? "" : out + "<p class=\"note\">Rows are ranks that made the same calls; a highlighted cell is a call "
                                  "most ranks did not make there; the outlined column is the first divergence.</p></section>\n";
}

// The spans of an evidence line to mark: the reader's own match when the report has it, else
// the values that tell the finding's sides apart, else what differs from another line.
std::vector<Span> marks_for(const json& e, const std::string& text, const json& f, const std::string& other) {
  auto m = e.find("match");
  if (m != e.end() && m->is_array() && m->size() == 2 && (*m)[0].is_number_integer() && (*m)[1].is_number_integer()) {
    long long a = (*m)[0].get<long long>(), b = (*m)[1].get<long long>();
    if (a >= 0 && a < b && static_cast<std::size_t>(b) <= text.size())
      return {Span{static_cast<std::size_t>(a), static_cast<std::size_t>(b)}};
  }
  std::string found = str(f, "found"), expected = str(f, "expected");
  std::size_t verbatim = found.size() >= 4 ? text.find(found) : std::string::npos;
  if (verbatim != std::string::npos) return {Span{verbatim, verbatim + found.size()}};
  std::vector<Span> spans;
  std::string side_a, side_b;
  if (!found.empty() && !expected.empty()) spans = value_spans(text, found, expected);
  else if (expected.empty() && merged_sides(found, &side_a, &side_b)) spans = value_spans(text, side_a, side_b);
  if (spans.empty() && !other.empty()) {
    Span d = difference_span(text, other);
    if (!d.empty() && (d.end - d.start) * 10 < text.size() * 6) spans.push_back(d);
  }
  return spans;
}

std::string marked(const std::string& text, const std::vector<Span>& spans) {
  std::string t = text.size() > kHtmlMaxText ? text.substr(0, kHtmlMaxText) : text;
  std::string out;
  std::size_t at = 0;
  for (const auto& s : spans) {
    if (s.start < at || s.end > t.size()) continue;
    out += html_escape(t.substr(at, s.start - at)) + "<mark>" + html_escape(t.substr(s.start, s.end - s.start)) + "</mark>";
    at = s.end;
  }
  out += html_escape(t.substr(at));
  if (t.size() < text.size()) out += fmt::format("&hellip; ({} more bytes)", text.size() - t.size());
  return out;
}

std::string evidence_list(const json& f) {
  const json& ev = arr(f, "evidence");
  if (ev.empty()) return "";
  std::string out = "<ol class=\"evidence\">\n";
  std::size_t shown = 0;
  for (std::size_t i = 0; i < ev.size() && shown < kHtmlMaxEvidence; ++i, ++shown) {
    const json& e = ev[i];
    std::string text = str(e, "text");
    std::string other = ev.size() > 1 ? str(ev[i == 0 ? 1 : 0], "text") : "";
    out += fmt::format("<li class=\"ev\"><span class=\"loc\">{}:{}</span>{}</li>\n", esc(str(e, "file")),
                       esc(str(e, "line")), marked(text, marks_for(e, text, f, other)));
  }
  if (ev.size() > shown) out += fmt::format("<li class=\"note\">{} more lines in the JSON report</li>\n", ev.size() - shown);
  return out + "</ol>\n";
}

std::string finding_article(const json& f, std::size_t n) {
  std::string sev = str(f, "severity");
  std::vector<int> ranks = ints(arr(f, "ranks"));
  std::vector<std::string> hosts = strings(arr(f, "hosts"));
  std::string out = fmt::format("<article class=\"finding {}\" id=\"finding-{}\"><h3><span class=\"sev\">{}</span><code>{}</code>{}</h3>\n",
                                sev == "error" ? "error" : "warning", n, esc(sev), esc(str(f, "code")),
                                ranks.empty() && hosts.empty() ? "" : " &mdash; " + esc(rank_phrase(ranks, hosts)));
  out += fmt::format("<p>{}</p>\n", esc(str(f, "message")));
  std::string values;
  for (const char* k : {"expected", "found", "comm", "seq"}) {
    std::string v = str(f, k);
    if (!v.empty() && !(std::string(k) == "seq" && v == "-1")) values += fmt::format("<dt>{}</dt><dd>{}</dd>", k, esc(v));
  }
  if (!values.empty()) out += "<dl class=\"values\">" + values + "</dl>\n";
  out += evidence_list(f);
  if (!str(f, "fix").empty()) out += copyable("fix", str(f, "fix"), fmt::format("fix-{}", n));
  if (!str(f, "verify").empty()) out += copyable("verify", str(f, "verify"), fmt::format("verify-{}", n));
  return out + "</article>\n";
}

std::string findings_section(const json& report) {
  const json& findings = arr(report, "findings");
  std::string out = fmt::format("<section id=\"findings\"><h2>Findings ({})</h2>\n", findings.size());
  if (findings.empty()) out += "<p>No findings: every rank agrees.</p>\n";
  std::size_t n = 0;
  for (const auto& f : findings) {
    if (n == kHtmlMaxFindings) break;
    out += finding_article(f, ++n);
  }
  if (findings.size() > n) out += fmt::format("<p class=\"note\">{} more findings in the JSON report.</p>\n", findings.size() - n);
  return out + "</section>\n";
}

std::string record_cells(const RankRecord& r) {
  std::string nccl = nccl_found(r.nccl) ? fmt::format("NCCL {}{} {}", nccl_version_of(r.nccl),
                                                       r.nccl.cuda_build.empty() ? "" : "+cuda" + r.nccl.cuda_build,
                                                       nccl_origin_phrase(r.nccl, r.torch))
                                        : fmt::format("NCCL {}", to_string(r.nccl.status));
  std::string torch = r.torch.status == TorchStatus::ok ? "torch " + r.torch.version : to_string(r.torch.status);
  std::string driver = r.cuda_driver.status == DriverStatus::ok ? "driver " + r.cuda_driver.library_version
                                                                : fmt::format("driver {}", to_string(r.cuda_driver.status));
  return fmt::format("<td>{}<br><code>{}</code></td><td>{}</td><td>{}</td>", esc(nccl), esc(r.nccl.path), esc(torch), esc(driver));
}

std::string configurations_section(const json& report) {
  const json& confs = arr(report, "configurations");
  if (confs.empty()) return "";
  std::vector<RankRecord> records;
  for (const auto& c : confs) {
    RankRecord r;
    std::string error;
    if (!c.contains("record") || !record_from_json(c["record"], &r, &error)) r = RankRecord{};
    records.push_back(std::move(r));
    if (records.size() == 20) break;
  }
  std::string out = fmt::format("<section id=\"configurations\"><h2>Configurations ({})</h2>\n<table><thead><tr><th>#</th>"
                                "<th>ranks</th><th>NCCL</th><th>PyTorch</th><th>driver</th><th>what sets it apart</th></tr></thead><tbody>\n",
                                confs.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::vector<int> ranks = ints(arr(confs[i], "ranks"));
    std::vector<std::string> hosts = strings(arr(confs[i], "hosts"));
    std::string apart;
    if (records.size() > 1) {
      std::size_t other = i == 0 ? 1 : 0;
      auto phrases = what_sets_apart(records[i], records[other]);
      if (!phrases.empty()) apart = fmt::format("unlike [{}]: {}", other + 1, fmt::join(phrases, "; "));
    }
    out += fmt::format("<tr><td>[{}]</td><td>{}</td>{}<td>{}</td></tr>\n", i + 1, esc(rank_phrase(ranks, hosts)),
                       record_cells(records[i]), esc(apart));
  }
  out += "</tbody></table>\n";
  if (confs.size() > records.size()) out += fmt::format("<p class=\"note\">{} more in the JSON report.</p>\n", confs.size() - records.size());
  return out + "</section>\n";
}

std::string list_items(const std::vector<std::string>& items) {
  std::string out;
  std::size_t n = 0;
  for (const auto& s : items) {
    if (n++ == kHtmlMaxFiles) {
      out += fmt::format("<li class=\"note\">and {} more</li>", items.size() - kHtmlMaxFiles);
      break;
    }
    out += "<li><code>" + esc(s) + "</code></li>";
  }
  return out;
}

std::string diagnose_inputs(const json& in) {
  std::size_t files = arr(in, "files").size();
  std::string out = fmt::format("<p>{} lines, {} records, {} collective calls; <b>{} unreadable</b>.</p>\n"
                                "<details{}><summary>{} {}</summary><ul>{}</ul></details>\n",
                                esc(str(in, "lines")), esc(str(in, "records")), esc(str(in, "collective_calls")),
                                esc(str(in, "unreadable")), files <= 8 ? " open" : "", files, files == 1 ? "file" : "files",
                                list_items(strings(arr(in, "files"))));
  const json& samples = arr(in, "unreadable_samples");
  if (!samples.empty()) {
    out += "<p>Lines that looked like records but could not be read:</p><ol class=\"evidence\">\n";
    for (const auto& e : samples)
      out += fmt::format("<li class=\"ev\"><span class=\"loc\">{}:{}</span>{}</li>\n", esc(str(e, "file")), esc(str(e, "line")),
                         esc(str(e, "text")));
    out += "</ol>\n";
  }
  for (const auto& n : strings(arr(in, "notes"))) out += "<p class=\"note\">note: " + esc(n) + "</p>\n";
  if (!str(in, "events_not_kept").empty())
    out += "<p class=\"note\">" + esc(str(in, "events_not_kept")) + " events not kept (the input was larger than the limit).</p>\n";
  return out;
}

std::string collectives_inputs(const json& inputs) {
  std::string out = "<table><thead><tr><th>file</th><th>format</th><th>lines</th><th>used</th><th>unreadable</th></tr></thead><tbody>\n";
  std::string samples;
  std::size_t n = 0;
  for (const auto& in : inputs) {
    if (n++ == kHtmlMaxFiles) break;
    out += fmt::format("<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n", esc(str(in, "path")),
                       esc(str(in, "format")), esc(str(in, "lines")), esc(str(in, "used")), esc(str(in, "unreadable")));
    for (const auto& s : strings(arr(in, "unreadable_samples")))
      samples += fmt::format("<li class=\"ev\"><span class=\"loc\">{}</span>{}</li>\n", esc(str(in, "path")), esc(s));
  }
  out += "</tbody></table>\n";
  if (inputs.size() > kHtmlMaxFiles) out += fmt::format("<p class=\"note\">{} more files.</p>\n", inputs.size() - kHtmlMaxFiles);
  if (!samples.empty()) out += "<p>Lines that looked like records but could not be read:</p><ol class=\"evidence\">\n" + samples + "</ol>\n";
  return out;
}

std::string inputs_section(const json& report, ReportKind kind) {
  std::string out = "<section id=\"inputs\"><h2>What was read</h2>\n";
  if (kind == ReportKind::diagnose) {
    out += diagnose_inputs(obj(report, "inputs"));
  } else if (kind == ReportKind::collectives) {
    out += collectives_inputs(arr(report, "inputs"));
  } else {
    std::string mode = str(report, "mode");
    const long long ranks = inum(report, "nranks", 0), hosts = inum(report, "nhosts", 0);
    const size_t configs = arr(report, "configurations").size();
    out += fmt::format("<p>{} rank{} on {} host{}{}: {} distinct configuration{}.</p>\n", ranks, ranks == 1 ? "" : "s",
                       hosts, hosts == 1 ? "" : "s", mode.empty() ? "" : " (" + esc(mode) + ")", configs,
                       configs == 1 ? "" : "s");
  }
  return out + "</section>\n";
}

}  // namespace

const char* html_script() { return kScript; }
const char* html_script_hash() { return kScriptHash; }

std::string render_html(const json& report) {
  ReportKind kind = report_kind(report);
  Lead lead = lead_of(report);
  std::string out = head(lead);
  out += verdict_section(report, lead, kind);
  if (kind == ReportKind::diagnose) out += timeline_section(report);
  out += grid_section(report);
  out += findings_section(report);
  if (kind == ReportKind::gate) out += configurations_section(report);
  out += inputs_section(report, kind);
  out += fmt::format("<footer>denpex-probe report ({}), made from its JSON report.</footer>\n", esc(str(report, "schema")));
  out += "</main>\n<script>";
  out += kScript;
  return out + "</script>\n</body></html>\n";
}

}  // namespace denpex
