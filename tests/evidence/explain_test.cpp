// evidence/explain and evidence/failures_doc: `denpex-probe explain` and docs/failures.md say
// what the signal library and the finding-code table say, entry by entry.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>
#include <cstring>

#include "compare/finding_codes.h"
#include "evidence/explain.h"
#include "evidence/failures_doc.h"

using namespace denpex;
using namespace denpex::evidence;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const SignalTable& table() {
  const SignalTable& t = builtin_signals();
  REQUIRE(t.error == "");
  return t;
}

// The text wraps at spaces; compare with every run of spaces and newlines made one space.
std::string flat(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (space && !out.empty() && out.back() == ' ') continue;
    out += space ? ' ' : c;
  }
  return out;
}

}  // namespace

TEST_CASE("explain names every field of every signature") {
  for (const Signal& s : table().signals) {
    INFO("signature " << s.id);
    Explanation e = explain(s.id, table());
    REQUIRE(e.status == ExplainStatus::signature);
    const std::string text = flat(e.text);
    CHECK(text.find(s.family) != std::string::npos);
    CHECK(text.find(flat(s.summary)) != std::string::npos);
    CHECK(text.find(flat(s.implicates)) != std::string::npos);
    CHECK(text.find(flat(s.tells_apart)) != std::string::npos);
    CHECK(text.find(flat(s.fix)) != std::string::npos);
    // The verify command and the example are printed whole on their line, to be copied.
    CHECK(e.text.find(" " + expand_verify(s.verify) + "\n") != std::string::npos);
    CHECK(e.text.find(" " + s.examples.front() + "\n") != std::string::npos);
    CHECK(e.text.find("@RECORDER@") == std::string::npos);
    CHECK(e.json["id"] == s.id);
    CHECK(e.json["code"] == s.code);
    CHECK(e.json["verify"] == expand_verify(s.verify));
    CHECK(e.json["example"] == s.examples.front());
  }
}

TEST_CASE("every signature leads to a code of the finding-code table") {
  for (const Signal& s : table().signals) {
    INFO("signature " << s.id << " code " << s.code);
    CHECK(find_finding_code(s.code) != nullptr);
  }
}

TEST_CASE("explain CODE lists every signature that gives the code, and only those") {
  size_t listed = 0;
  for (const FindingCodeInfo& row : finding_codes()) {
    INFO("code " << row.code);
    Explanation e = explain(row.code, table());
    REQUIRE(e.status == ExplainStatus::code);
    CHECK(flat(e.text).find(flat(row.meaning)) != std::string::npos);
    std::vector<std::string> ids = e.json["signatures"].get<std::vector<std::string>>();
    for (const Signal& s : table().signals) {
      const bool gives = s.code == row.code;
      CHECK((std::find(ids.begin(), ids.end(), s.id) != ids.end()) == gives);
      if (gives) CHECK(e.text.find("    " + s.id + " ") != std::string::npos);
    }
    listed += ids.size();
  }
  CHECK(listed == table().signals.size());
}

TEST_CASE("explain with no name lists every id and every code, each with a line of what it is") {
  Explanation e = explain("", table());
  REQUIRE(e.status == ExplainStatus::index);
  CHECK(e.json["signatures"].size() == table().signals.size());
  CHECK(e.json["codes"].size() == finding_codes().size());
  auto line_of = [&](const std::string& start) {
    size_t at = e.text.find(start);
    return at == std::string::npos ? std::string() : e.text.substr(at, e.text.find('\n', at) - at);
  };
  for (const Signal& s : table().signals) {
    std::string line = line_of("    " + s.id + " ");
    INFO(s.id << ": " << line);
    CHECK(line.find(s.summary.substr(0, 12)) != std::string::npos);
    CHECK(line.size() <= 120);
  }
  for (const FindingCodeInfo& row : finding_codes()) {
    std::string line = line_of("  " + std::string(row.code) + " ");
    INFO(row.code << ": " << line);
    CHECK(line.size() > std::strlen(row.code) + 10);
    CHECK(line.size() <= 120);
  }
}

TEST_CASE("explain FAMILY lists that family's signatures") {
  Explanation e = explain("nccl", table());
  REQUIRE(e.status == ExplainStatus::family);
  size_t n = 0;
  for (const Signal& s : table().signals) n += s.family == "nccl";
  CHECK(n > 0);
  CHECK(e.json["signatures"].size() == n);
}

TEST_CASE("an unknown name is a status, with the nearest name when one is given") {
  Explanation e = explain("nccl.int", table());
  CHECK(e.status == ExplainStatus::unknown);
  CHECK(e.text.find("did you mean") == std::string::npos);
  add_suggestion(&e, "nccl.init");
  CHECK(e.text.find("did you mean 'nccl.init'?") != std::string::npos);
  CHECK(e.json["did_you_mean"] == "nccl.init");
  // The candidates for a suggestion are every id, code and family.
  const std::vector<std::string> names = explain_names(table());
  CHECK(std::find(names.begin(), names.end(), "nccl.init") != names.end());
  CHECK(std::find(names.begin(), names.end(), "collective-mismatch") != names.end());
  Explanation known = explain("nccl.init", table());
  add_suggestion(&known, "nccl.coll");
  CHECK(known.suggestion.empty());
}

TEST_CASE("a table that does not parse is reported, not explained") {
  SignalTable broken = parse_signal_table("[x.y]\nfamily: nccl\n");
  REQUIRE(!broken.error.empty());
  CHECK(explain("x.y", broken).status == ExplainStatus::table_error);
  CHECK(failures_markdown(broken).find("does not parse") != std::string::npos);
}

TEST_CASE("a kind a table-keyed reader does not know is a load error naming the kinds it knows") {
  const std::string entry =
      "[x.y]\nfamily: nccl\nreader: failure\nkind: own_eror\nrole: initiating\ncode: initiating-failure\n"
      "literal: boom\npattern: boom\nsummary: s\nfix: f\nverify: v\nexample: boom\n";
  SignalTable typo = parse_signal_table(entry);
  REQUIRE(!typo.error.empty());
  CHECK(typo.error.find("unknown kind 'own_eror' for reader failure") != std::string::npos);
  CHECK(typo.error.find("own_error") != std::string::npos);  // the known ones are named
  std::string fact = entry;
  fact.replace(fact.find("reader: failure"), 15, "reader: fact").replace(fact.find("own_eror"), 8, "nccl_verison");
  CHECK(parse_signal_table(fact).error.find("unknown kind 'nccl_verison' for reader fact") != std::string::npos);
  std::string fine = entry;
  fine.replace(fine.find("own_eror"), 8, "own_error");
  CHECK(parse_signal_table(fine).error.find("unknown kind") == std::string::npos);
  // The readers that branch on kind themselves are checked too, and a reader that does not exist.
  std::string env = entry;
  env.replace(env.find("reader: failure"), 15, "reader: env").replace(env.find("own_eror"), 8, "torch_verison");
  CHECK(parse_signal_table(env).error.find("unknown kind 'torch_verison' for reader env (it knows: ") !=
        std::string::npos);
  std::string nobody = entry;
  nobody.replace(nobody.find("reader: failure"), 15, "reader: failur");
  CHECK(parse_signal_table(nobody).error.find("unknown reader 'failur'") != std::string::npos);
  CHECK(builtin_signals().error.empty());  // every built-in entry names a kind its reader knows
}

TEST_CASE("a finding code the table does not have is a load error; a known one loads as its FindingCode") {
  const std::string entry =
      "[x.y]\nfamily: nccl\nreader: failure\nkind: own_error\nrole: initiating\ncode: initiating-failur\n"
      "literal: boom\npattern: boom\nsummary: s\nfix: f\nverify: v\nexample: boom\n";
  SignalTable typo = parse_signal_table(entry);
  CHECK(typo.error.find("unknown finding code 'initiating-failur'") != std::string::npos);
  std::string fine = entry;
  fine.replace(fine.find("initiating-failur"), 17, "initiating-failure");
  SignalTable ok = parse_signal_table(fine);
  REQUIRE(ok.error.empty());
  CHECK(ok.signals.at(0).finding == denpex::FindingCode::initiating_failure);
}

TEST_CASE("rerun variables are the NAME=VALUE words after 'rerun with'") {
  CHECK(rerun_variables("a (b); rerun with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL so that x") ==
        std::vector<std::string>{"NCCL_DEBUG=INFO", "NCCL_DEBUG_SUBSYS=INIT,COLL"});
  CHECK(rerun_variables("rerun with CUDA_LAUNCH_BLOCKING=1 to see; rerun with TORCHELASTIC_ERROR_FILE set") ==
        std::vector<std::string>{"CUDA_LAUNCH_BLOCKING=1", "TORCHELASTIC_ERROR_FILE"});
  CHECK(rerun_variables("a variable that changes the wire protocol (NCCL_PROTO, NCCL_ALGO)").empty());
  CHECK(rerun_variables("rerun with NCCL_DEBUG=INFO.") == std::vector<std::string>{"NCCL_DEBUG=INFO"});
}

TEST_CASE("a verify command that says 'denpex-probe explain X' names an X explain knows") {
  const std::string prefix = "denpex-probe explain ";
  for (const Signal& s : table().signals) {
    const size_t at = s.verify.find(prefix);
    if (at == std::string::npos) continue;
    std::string x = s.verify.substr(at + prefix.size());
    x = x.substr(0, x.find(' '));
    INFO("signature " << s.id << " verify: " << s.verify);
    const ExplainStatus st = explain(x, table()).status;
    CHECK((st == ExplainStatus::signature || st == ExplainStatus::code || st == ExplainStatus::family));
  }
}

TEST_CASE("docs/failures.md is the page generated from the signal library", "[docs]") {
  const std::string expected = failures_markdown(table());
  for (const Signal& s : table().signals) {
    INFO("signature " << s.id);
    CHECK(expected.find("### `" + s.id + "`\n") != std::string::npos);
    CHECK(expected.find(s.examples.front()) != std::string::npos);
  }
  CHECK(expected.find("@RECORDER@") == std::string::npos);
  const std::string docs = read_file(DENPEX_DOCS_FAILURES);
  if (docs != expected) {
    const std::string fresh = std::string(DENPEX_TEST_BINARY_DIR) + "/failures.md";
    std::ofstream(fresh) << expected;
    FAIL_CHECK(DENPEX_DOCS_FAILURES << " differs from the signal library (evidence/signals.txt); "
               "after checking the difference: cp " << fresh << " " << DENPEX_DOCS_FAILURES);
  }
}

// Examples that the engine does not yet give to their own entry when sent alone (each needs the
// lines around it, listed in docs/known-gaps.md). The test fails when one of them starts to
// reach its entry, so that this list only shrinks.
const std::vector<std::string> kExamplesNotYetReached = {
};

TEST_CASE("explain: every example of the signal library, sent through the engine, is read by its own entry") {
  size_t examples = 0, reached = 0;
  std::vector<std::string> missed;
  for (const Signal& s : table().signals)
    for (const std::string& ex : s.examples) {
      ++examples;
      std::vector<const Signal*> got = signatures_reading(ex);
      if (std::find(got.begin(), got.end(), &s) != got.end()) ++reached;
      else missed.push_back(s.id + ": " + ex);
    }
  WARN(reached << " of " << examples << " examples reach their own entry");
  for (const auto& m : missed) {
    INFO(m);
    bool known = std::any_of(kExamplesNotYetReached.begin(), kExamplesNotYetReached.end(),
                             [&](const std::string& id) { return m.rfind(id + ": ", 0) == 0; });
    CHECK(known);
  }
  for (const auto& id : kExamplesNotYetReached) {
    INFO(id << " is listed as not reached, yet every example of it now reaches it: remove it from the list");
    CHECK(std::any_of(missed.begin(), missed.end(), [&](const std::string& m) { return m.rfind(id + ": ", 0) == 0; }));
  }
}

TEST_CASE("explain: a log line is explained by the signature that reads it") {
  Explanation e = explain_line(table().signals.front().examples.front(), table());
  CHECK(e.status == ExplainStatus::line);
  CHECK(e.text.find(table().signals.front().id) != std::string::npos);
  CHECK(e.json["signatures"].size() >= 1);
  Explanation none = explain_line("the weather is fine today", table());
  CHECK(none.status == ExplainStatus::unread);
  CHECK(looks_like_line("a b"));
  CHECK_FALSE(looks_like_line("nccl.init"));
}
