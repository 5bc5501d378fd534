#include "report/html_report.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report/html_escape.h"
#include "report_fixtures.h"

using namespace denpex;
using nlohmann::json;

namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("html_escape: markup and terminal escapes are shown, not interpreted") {
  CHECK(html_escape("</script><script>alert(1)</script>") ==
        "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
  CHECK(html_escape("a & \"b\" 'c'") == "a &amp; &quot;b&quot; &#39;c&#39;");
  CHECK(html_escape("\x1b[31mred\x7f") == "\xe2\x90\x9b[31mred\xe2\x90\xa1");
  CHECK(html_escape("tab\tnew\nline \xc3\xa9") == "tab\tnew\nline \xc3\xa9");
  // Bidirectional overrides would reorder what the page shows around them.
  CHECK(html_escape("file\xe2\x80\xae" "txt.sh \xe2\x81\xa6x\xe2\x81\xa9 \xd8\x9c \xe2\x80\x99") ==
        "file\\u202etxt.sh \\u2066x\\u2069 \\u061c \xe2\x80\x99");
}

TEST_CASE("render_html: a log line holding a script is text; the page has one script, allowed by its hash") {
  std::string page = render_html(test::oom_diagnosis("</script><script>alert(1)</script>"));
  CHECK(count(page, "<script") == 1);
  CHECK(count(page, "</script>") == 1);
  CHECK(page.find("alert(1)</script>") == std::string::npos);
  CHECK(page.find("&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;") != std::string::npos);
  CHECK(page.find(std::string("script-src '") + html_script_hash() + "'") != std::string::npos);
  CHECK(page.find(html_script()) != std::string::npos);
  // Nothing is fetched: no URL other than none at all.
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(page.find(" src=") == std::string::npos);
}

TEST_CASE("render_html: verdict, lead lines, timeline, evidence marked, fix and verify with copy buttons, inputs") {
  std::string page = render_html(test::oom_diagnosis());
  CHECK(page.find("<header class=\"verdict reject\"") != std::string::npos);
  CHECK(page.find("<b>Started by:</b> rank 6 on node02 at 05-14 10:12:05") != std::string::npos);
  CHECK(page.find("<svg class=\"timeline\"") != std::string::npos);
  CHECK(page.find("<mark>torch.OutOfMemoryError: CUDA out of memory.</mark>") != std::string::npos);
  CHECK(page.find("/home/alice/job/node02.log:9") != std::string::npos);
  CHECK(count(page, "<button class=\"copy\"") == 2);
  CHECK(page.find("<pre id=\"verify-1\">mpirun -np 8 -H node01,node02 denpex-probe</pre>") != std::string::npos);
  CHECK(page.find("1 unreadable") != std::string::npos);
  CHECK(page.find("NCCL INFO ???") != std::string::npos);
}

TEST_CASE("render_html: the reader's own match is what is marked, when the report has it") {
  json r = test::oom_diagnosis();
  r["findings"][0]["evidence"][0]["match"] = {9, 31};
  std::string page = render_html(r);
  CHECK(page.find("[rank6]: <mark>torch.OutOfMemoryError</mark>: CUDA") != std::string::npos);
}

TEST_CASE("render_html: a collective divergence gets its grid, the odd call highlighted") {
  json around = {{"comm", "0xabc"}, {"seq", 5}, {"first", 4},
                 {"rows", {{{"ranks", {0, 1, 2}}, {"hosts", {"n1"}}, {"calls", {"AllReduce(count=8)", "AllReduce(count=8)", "AllReduce(count=8)"}}},
                           {{"ranks", {3}}, {"hosts", {"n2"}}, {"calls", {"AllReduce(count=8)", "AllReduce(count=9)", nullptr}}}}}};
  json r = {{"schema", "denpex.report.v1"}, {"verdict", "reject"}, {"nranks", 4}, {"nhosts", 2}, {"communicators", 1},
            {"findings", {{{"code", "collective-args-mismatch"}, {"severity", "error"}, {"ranks", {3}}, {"comm", "0xabc"},
                           {"seq", 5}, {"message", "rank 3 called AllReduce(count=9)"}, {"calls_around", around}}}},
            {"inputs", {{{"path", "rank3.log"}, {"format", "nccl-log"}, {"lines", 10}, {"used", 9}, {"unreadable", 0}}}}};
  std::string page = render_html(r);
  CHECK(page.find("<section id=\"grid\">") != std::string::npos);
  CHECK(page.find("<td class=\"diff at\">AllReduce(count=9)</td>") != std::string::npos);
  CHECK(page.find("<td class=\"diff none\">&mdash;</td>") != std::string::npos);
  CHECK(page.find("<th class=\"at\">5</th>") != std::string::npos);
  CHECK(page.find("<code>rank3.log</code>") != std::string::npos);
}

TEST_CASE("render_html: the gate's configurations say what sets each apart") {
  json rec = {{"rank", 0}, {"host", "node1"}, {"nccl", {{"status", "ok"}, {"version", "2.28.9"}, {"path", "/usr/lib/libnccl.so.2"}}},
              {"nccl_env", json::object()}};
  json rec2 = rec;
  rec2["nccl_env"] = {{"NCCL_PROTO", "Simple"}};
  json r = {{"schema", "denpex.report.v1"}, {"verdict", "reject"}, {"nranks", 4}, {"nhosts", 2},
            {"findings", json::array()},
            {"configurations", {{{"ranks", {0, 1, 2}}, {"hosts", {"node1"}}, {"record", rec}},
                                {{"ranks", {3}}, {"hosts", {"node2"}}, {"record", rec2}}}}};
  std::string page = render_html(r);
  CHECK(page.find("unlike [1]: NCCL_PROTO=Simple") != std::string::npos);
  CHECK(page.find("unlike [2]: NCCL_PROTO unset") != std::string::npos);
}

TEST_CASE("render_html: bounded whatever the report holds") {
  json r = test::oom_diagnosis();
  json big = r["findings"][0];
  big["evidence"] = json::array();
  for (int i = 0; i < 20; ++i) big["evidence"].push_back({{"file", "f"}, {"line", i}, {"text", std::string(5000, 'x')}});
  r["findings"] = json::array();
  for (int i = 0; i < 100; ++i) r["findings"].push_back(big);
  std::string page = render_html(r);
  CHECK(page.size() < 2 * 1024 * 1024);
  CHECK(page.find("50 more findings in the JSON report") != std::string::npos);
  CHECK(page.find("12 more lines in the JSON report") != std::string::npos);
  CHECK(page.find("(3000 more bytes)") != std::string::npos);
  CHECK_NOTHROW(render_html(json("not a report")));
  CHECK_NOTHROW(render_html(json{{"findings", {1, "x", json::object()}}, {"diagnosis", 3}, {"inputs", "x"}}));
}
