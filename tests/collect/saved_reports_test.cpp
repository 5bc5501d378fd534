#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "collect/saved_reports.h"
#include "compare/bounded_json.h"

using namespace denpex;
namespace fs = std::filesystem;

namespace {

struct Dir {
  fs::path path;
  Dir() {
    path = fs::temp_directory_path() / ("denpex-saved-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

std::string record(int rank, const std::string& host, const std::string& version) {
  RankRecord r;
  r.rank = rank;
  r.host = host;
  r.nccl.status = NcclStatus::ok;
  r.nccl.version = version;
  return nlohmann::json(r).dump();
}

// Every record kept, as `compare` keeps them for its report on small inputs.
constexpr size_t kKeepAll = 1000;

}  // namespace

TEST_CASE("records load from files and directories; repeated ranks are renumbered") {
  Dir d;
  d.write("node1.json", record(0, "node1", "2.28.9"));
  d.write("node2.json", record(0, "node2", "2.27.3"));
  d.write("notes.txt", "ignored: not *.json");
  SavedJob s = load_saved_job({d.path.string()}, kKeepAll);
  REQUIRE(s.status == SavedStatus::ok);
  REQUIRE(s.kept.size() == 2);
  CHECK(s.kept[0].host == "node1");
  CHECK(s.kept[0].rank == 0);
  CHECK(s.kept[1].host == "node2");
  CHECK(s.kept[1].rank == 1);
  CHECK(s.renumbered == 1);
  CHECK(s.kept[1].nccl.version == "2.27.3");
}

TEST_CASE("a cluster report supplies its ranks") {
  Dir d;
  nlohmann::json report = {{"schema", "denpex.report.v1"},
                           {"ranks", {nlohmann::json::parse(record(0, "a", "2.28.9")),
                                      nlohmann::json::parse(record(1, "b", "2.28.9"))}}};
  SavedJob s = load_saved_job({d.write("r.json", report.dump())}, kKeepAll);
  REQUIRE(s.status == SavedStatus::ok);
  CHECK(s.kept.size() == 2);
}

TEST_CASE("bad inputs name the file and the problem") {
  Dir d;
  auto err = [&](const std::string& name, const std::string& text) {
    SavedJob s = load_saved_job({d.write(name, text)}, kKeepAll);
    CHECK(s.status == SavedStatus::bad_input);
    CHECK(s.error.find(name) != std::string::npos);
    return s.error;
  };
  CHECK(err("trunc.json", record(0, "a", "2.28.9").substr(0, 40)).find("not valid JSON") !=
        std::string::npos);
  CHECK(err("schema.json", R"({"schema":"denpex.report.v9"})").find("denpex.report.v9") !=
        std::string::npos);
  CHECK(err("foreign.json", R"({"hello":"world"})").find("not a denpex rank record") !=
        std::string::npos);
  CHECK(err("deep.json", std::string(100000, '[')).find("nested") != std::string::npos);
  SavedJob missing = load_saved_job({(d.path / "nope.json").string()}, kKeepAll);
  CHECK(missing.status == SavedStatus::bad_input);
  CHECK(missing.error.find("nope.json") != std::string::npos);
  fs::create_directories(d.path / "empty");
  SavedJob empty = load_saved_job({(d.path / "empty").string()}, kKeepAll);
  CHECK(empty.error.find("no *.json") != std::string::npos);
}

TEST_CASE("a report nested up to the shared cap loads; one level more names the nesting") {
  // Unknown keys of a report are ignored, so only the cap decides (compare/bounded_json.h).
  Dir d;
  auto report = [](int levels) {  // the document nests `levels` levels in all
    return R"({"schema": "denpex.report.v1", "ranks": [)" + record(0, "a", "2.28.9") +
           R"(], "extra": )" + std::string(static_cast<size_t>(levels - 1), '[') +
           std::string(static_cast<size_t>(levels - 1), ']') + "}";
  };
  SavedJob at = load_saved_job({d.write("at.json", report(kMaxJsonDepth))}, kKeepAll);
  CHECK(at.status == SavedStatus::ok);
  CHECK(at.nranks == 1);
  SavedJob past = load_saved_job({d.write("past.json", report(kMaxJsonDepth + 1))}, kKeepAll);
  CHECK(past.status == SavedStatus::bad_input);
  CHECK(past.error.find("past.json: nested more than 64 levels deep: not a denpex record") !=
        std::string::npos);
}

TEST_CASE("load_saved_job groups as it reads and keeps only the first records") {
  Dir d;
  d.write("a.json", record(0, "node1", "2.28.9"));
  d.write("b.json", record(0, "node2", "2.28.9"));
  d.write("c.json", record(5, "node3", "2.27.3"));
  d.write("d.json", record(1, "node4", "2.28.9"));
  SavedJob job = load_saved_job({d.path.string()}, 2);
  REQUIRE(job.status == SavedStatus::ok);
  CHECK(job.nranks == 4);
  CHECK(job.renumbered == 1);  // b.json's rank 0 becomes 6, after the highest (5)
  REQUIRE(job.groups.size() == 2);
  CHECK(job.groups[0].ranks == std::vector<int>{0, 1, 6});
  CHECK(job.groups[0].hosts == std::vector<std::string>{"node1", "node2", "node4"});
  CHECK(job.groups[0].record.rank == 0);
  CHECK(job.groups[0].record.host == "node1");
  CHECK(job.groups[1].ranks == std::vector<int>{5});
  CHECK(job.groups[1].record.nccl.version == "2.27.3");
  REQUIRE(job.kept.size() == 2);
  CHECK(job.kept[1].rank == 6);
  CHECK(job.kept[1].host == "node2");
}

TEST_CASE("a rank that is null, negative, fractional or a string is refused, with one message shape") {
  Dir d;
  std::vector<std::string> errors;
  for (const char* bad : {R"({"rank": null, "host": "a", "nccl": {}})",
                          R"({"rank": -1, "host": "a", "nccl": {}})",
                          R"({"rank": 1.5, "host": "a", "nccl": {}})",
                          R"({"rank": "0", "host": "a", "nccl": {}})"}) {
    INFO(bad);
    SavedJob s = load_saved_job({d.write("bad.json", bad)}, kKeepAll);
    CHECK(s.status == SavedStatus::bad_input);
    CHECK(s.error.find("bad.json") != std::string::npos);
    errors.push_back(s.error);
  }
  // null was read as rank 0; now it says what -1 says.
  CHECK(errors[0] == errors[1]);
  CHECK(errors[0].find("\"rank\" is not an integer") != std::string::npos);
  SavedJob missing = load_saved_job({d.write("bad.json", R"({"host": "a", "nccl": {}})")}, kKeepAll);
  CHECK(missing.status == SavedStatus::bad_input);
  CHECK(missing.error.find("missing required key \"rank\"") != std::string::npos);
}

TEST_CASE("numbers out of range or of the wrong kind are refused, not converted") {
  Dir d;
  for (const char* bad : {R"({"rank": 2.1e43, "host": "a", "nccl": {}})",
                          R"({"rank": -1, "host": "a", "nccl": {}})",
                          R"({"rank": 0, "host": "a", "nccl": {"version_code": 1e99}})",
                          R"({"rank": 0, "host": "a", "pid": "12", "nccl": {}})"}) {
    INFO(bad);
    SavedJob s = load_saved_job({d.write("bad.json", bad)}, kKeepAll);
    CHECK(s.status == SavedStatus::bad_input);
    CHECK(s.error.find("bad.json") != std::string::npos);
  }
  nlohmann::json report = {
      {"schema", "denpex.report.v1"},
      {"configurations", {{{"ranks", {0.5}}, {"record", nlohmann::json::parse(record(0, "a", "2.28.9"))}}}}};
  SavedJob s = load_saved_job({d.write("r.json", report.dump())}, kKeepAll);
  CHECK(s.status == SavedStatus::bad_input);
  CHECK(s.error.find("not a rank number") != std::string::npos);
  report["configurations"][0]["ranks"] = {0};
  report["configurations"][0]["hosts"] = {1};
  s = load_saved_job({d.write("r.json", report.dump())}, kKeepAll);
  CHECK(s.status == SavedStatus::bad_input);
}
