// The reader's two-thread read (lines read and repaired beside the thread that judges them,
// evidence/line_feed.h) against its one-thread read, on several files at once: the report, text
// and JSON, must be the same byte for byte. The inputs are long enough to cross many of the
// feed's batches and hold what line handling carries from line to line (wrapped lines, pdsh
// labels learned, a record waiting for its body, lines cut at kMaxLine, ANSI colour).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "diagnose/diagnosis.h"
#include "evidence/line_reader.h"
#include "evidence/log_reader.h"

using namespace denpex;
using namespace denpex::diag;
using namespace denpex::evidence;

namespace {

using Inputs = std::vector<std::pair<std::string, std::string>>;  // (name, text)

// One node's COLL log: 4 ranks of a 12-rank communicator, `steps` AllReduces each; rank 6
// calls another count from step 1500 on (a divergence far past the first batches). Every
// 97th line is behind a pdsh label, every 89th is coloured, every 211th is cut by a terminal
// (wrapped), every 307th has its body on the next line, and one line is longer than kMaxLine.
std::string node_log(int node, int steps) {
  std::string out;
  auto head = [&](int r) { return fmt::format("gpu-node{:03}:{}:{} [{}]", node, 41000 + r, 41000 + r, r % 4); };
  for (int r = node * 4; r < node * 4 + 4; ++r)
    out += fmt::format("{} NCCL INFO comm 0x55d0a00{:02}000 rank {} nranks 12 cudaDev {} nvmlDev {} busId 1b000 "
                       "commId 0x5d7c1e0a9b3f2c44 localRanks 4 localRank {} MNNVL 0 - Init COMPLETE\n",
                       head(r), r, r, r % 4, r % 4, r % 4);
  long long n = 0;
  for (int s = 0; s < steps; ++s)
    for (int r = node * 4; r < node * 4 + 4; ++r, ++n) {
      long long count = r == 6 && s >= 1500 ? 1000 : 262144;
      std::string rec = fmt::format("{} NCCL INFO AllReduce: opCount {:x} sendbuff 0x7f0056800000 recvbuff "
                                    "0x7f0056800000 count {} datatype 7 op 0 root 0 comm 0x55d0a00{:02}000 "
                                    "[nranks=12] stream 0x55d0b1e00000",
                                    head(r), s, count, r);
      if (n % 211 == 5) {
        size_t at = rec.find(" count ") + 4;
        out += rec.substr(0, at) + "$\n" + "  " + rec.substr(at + 1) + "\n";
      } else if (n % 307 == 11) {
        size_t at = rec.find(" datatype ");
        out += rec.substr(0, at) + "\n" + rec.substr(at) + "\n";
      } else if (n % 97 == 3) {
        out += fmt::format("gpu-node{:03}: {}\n", node, rec);
      } else if (n % 89 == 7) {
        out += "\x1b[32m" + rec + "\x1b[0m\n";
      } else {
        out += rec + "\n";
      }
      if (n == 2500) out += std::string(kMaxLine + 100, 'x') + "\n";
    }
  out += fmt::format("{} NCCL WARN Timeout: the collective did not complete\n", head(node * 4));
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every fixture of one directory, in name order.
Inputs fixture_dir(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/" + dir))
    if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  Inputs out;
  for (const auto& f : files) out.emplace_back(f.filename().string(), slurp(f));
  return out;
}

// The text and JSON reports of reading `inputs` in order with `threads` read threads.
std::pair<std::string, std::string> report(const Inputs& inputs, int threads) {
  LogReader r;
  r.set_read_threads(threads);
  for (const auto& [name, text] : inputs) r.read_text(text, name);
  r.finish();
  Diagnosis d = diagnose(r);
  return {render_diagnosis(d, r), diagnosis_json(d, r).dump(2)};
}

}  // namespace

TEST_CASE("two read threads give the report of one, byte for byte, on several long files") {
  Inputs inputs;
  for (int node = 0; node < 3; ++node) inputs.emplace_back(fmt::format("node{}.log", node), node_log(node, 2000));
  auto one = report(inputs, 1);
  auto two = report(inputs, 2);
  // The divergence is found (the inputs are judged, not only read alike).
  CHECK(one.second.find("collective-args-mismatch") != std::string::npos);
  CHECK(one.first == two.first);
  CHECK(one.second == two.second);
}

TEST_CASE("two read threads give the report of one on every fixture directory") {
  for (const char* dir : {"diag_ecc_xid", "diag_ras", "env", "families", "ima_two_nodes", "oom_two_nodes",
                          "skew_two_nodes", "versions_three_nodes"}) {
    INFO(dir);
    Inputs inputs = fixture_dir(dir);
    REQUIRE(inputs.size() >= 1);
    auto one = report(inputs, 1);
    auto two = report(inputs, 2);
    CHECK(one.first == two.first);
    CHECK(one.second == two.second);
  }
}
