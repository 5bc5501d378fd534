// The finding-code table against itself, against docs/finding-codes.md (generated from it) and,
// in the cases tagged [contract], against the contract's tables of finding codes.
#include "compare/finding_codes.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

using namespace denpex;

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool code_shaped(const std::string& code) {
  if (code.empty() || code.front() == '-' || code.back() == '-') return false;
  bool hyphen = false;
  for (char c : code) {
    if (c == '-') hyphen = true;
    else if (c < 'a' || c > 'z') return false;
  }
  return hyphen && code.find("--") == std::string::npos;
}

// "0.2.0" -> {0, 2, 0}; empty when it is not three dot-separated numbers.
std::vector<int> version_parts(const std::string& v) {
  std::vector<int> parts;
  std::string part;
  std::istringstream in(v);
  while (std::getline(in, part, '.')) {
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) return {};
    parts.push_back(std::stoi(part));
  }
  return parts.size() == 3 ? parts : std::vector<int>{};
}

struct ContractRow {
  std::string severity;  // the cell as written, backticks included
  bool diagnose_table = false;
  bool collectives_mode = false;
};

// The rows of the contract's finding-code tables: from "## Finding codes" to the end, every
// table row whose first cell is a code in backticks.
std::map<std::string, ContractRow> contract_rows(const std::string& text) {
  std::map<std::string, ContractRow> rows;
  std::istringstream in(text.substr(std::min(text.find("## Finding codes"), text.size())));
  bool diagnose = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("### ", 0) == 0) diagnose = line.find("diagnose") != std::string::npos;
    if (line.rfind("| `", 0) != 0) continue;
    std::vector<std::string> cells;
    std::istringstream cols(line.substr(1));
    for (std::string cell; std::getline(cols, cell, '|');) {
      auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
      cells.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
    }
    if (cells.size() < 3 || cells[0].size() < 3 || cells[0].back() != '`') continue;
    ContractRow row{cells[1], diagnose, cells[2].find("(collectives mode)") != std::string::npos};
    rows[cells[0].substr(1, cells[0].size() - 2)] = row;
  }
  return rows;
}

}  // namespace

TEST_CASE("every finding code has one well-formed row, in FindingCode order") {
  const auto& table = finding_codes();
  REQUIRE(!table.empty());
  std::set<std::string> seen;
  const auto project = version_parts(DENPEX_VERSION);
  REQUIRE(!project.empty());
  for (std::size_t i = 0; i < table.size(); ++i) {
    const auto& row = table[i];
    INFO("row " << i << ": " << row.code);
    CHECK(static_cast<std::size_t>(row.id) == i);
    CHECK(code_shaped(row.code));
    CHECK(seen.insert(row.code).second);
    CHECK(std::string(row.meaning).size() > 10);
    CHECK(std::string(row.meaning).find('|') == std::string::npos);
    CHECK(std::string(row.severity_note).find('|') == std::string::npos);
    CHECK(std::string(code_name(row.id)) == row.code);
    REQUIRE(find_finding_code(row.code) != nullptr);
    CHECK(find_finding_code(row.code)->id == row.id);
    // Released, or the next minor release while it is not out yet.
    auto since = version_parts(row.since);
    REQUIRE(!since.empty());
    CHECK(since <= std::vector<int>{project[0], project[1] + 1, 0});
  }
  CHECK(find_finding_code("no-such-code") == nullptr);
  CHECK(find_finding_code("") == nullptr);
  CHECK(find_finding_code("torch-static") == nullptr);  // an origin, not a finding code
}

TEST_CASE("internal-error is in the table: a judge that fails rejects, and says so") {
  const auto* row = find_finding_code("internal-error");
  REQUIRE(row != nullptr);
  CHECK(row->severity == Severity::error);
}

TEST_CASE("docs/finding-codes.md is the page generated from the table") {
  const std::string docs = read_file(DENPEX_DOCS_FINDING_CODES);
  const std::string expected = finding_codes_markdown();
  if (docs != expected) {
    const std::string fresh = std::string(DENPEX_TEST_BINARY_DIR) + "/finding-codes.md";
    std::ofstream(fresh) << expected;
    FAIL_CHECK(DENPEX_DOCS_FINDING_CODES << " differs from compare/finding_codes.cpp's table; "
               "after checking the difference: cp " << fresh << " " << DENPEX_DOCS_FINDING_CODES);
  }
  // Every code appears on the page as a row of its own.
  for (const auto& row : finding_codes())
    CHECK(docs.find(std::string("| `") + row.code + "` |") != std::string::npos);
}

TEST_CASE("the contract's finding codes are the table's contract rows", "[contract]") {
  const std::string text = read_file(DENPEX_CONTRACT_MD);
  const auto rows = contract_rows(text);
  // The contract lists 21 codes today; fewer means the parser lost rows.
  REQUIRE(rows.size() >= 21);
  for (const auto& [code, c] : rows) {
    INFO("contract code " << code << ", severity '" << c.severity << "'");
    const FindingCodeInfo* row = find_finding_code(code);
    REQUIRE(row != nullptr);
    CHECK(row->origin == CodeOrigin::contract);
    // The usual severity first ("warning (error with `--require-gpu`)", "warning; error for ...").
    CHECK(c.severity.rfind(to_string(row->severity), 0) == 0);
    if (c.diagnose_table) CHECK(row->mode == CodeMode::diagnose);
    if (c.collectives_mode) CHECK(row->mode == CodeMode::collectives);
  }
  for (const auto& row : finding_codes()) {
    INFO("table code " << row.code);
    if (row.origin == CodeOrigin::contract) CHECK(rows.count(row.code) == 1);
    else CHECK(rows.count(row.code) == 0);
  }
}
