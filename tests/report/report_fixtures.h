// Reports the report/ tests share, in the shapes the modes write (contract: "The cluster
// report", "diagnose additions"). Header-only.
#pragma once

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace denpex::test {

// The two-node OOM diagnosis: rank 6 on node02 fails first, ranks 0-3 time out, torchrun on
// node01 blames rank 2. `payload` goes into the evidence line of the initiating failure.
inline nlohmann::json oom_diagnosis(const std::string& payload = "") {
  using nlohmann::json;
  json ev = {{"file", "/home/alice/job/node02.log"}, {"line", 9},
             {"text", "[rank6]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB." + payload}};
  json init = {{"ranks", {6}}, {"hosts", {"node02"}}, {"what", "torch.OutOfMemoryError: CUDA out of memory."},
               {"when", "05-14 10:12:05"}, {"evidence", {ev}}};
  json coll = json::array({{{"ranks", {0, 1, 2, 3}}, {"hosts", {"node01"}}, {"what", "watchdog timeout in ALLREDUCE"},
                            {"when", "05-14 10:42:05"}, {"evidence", json::array()}}});
  json claim = {{"ranks", {2}}, {"hosts", {"node01"}}, {"what", "torchrun 'Root Cause': rank 2 on node01"},
                {"when", "05-14 10:42:06"}, {"correct", false}, {"note", "rank 6 failed first"}, {"evidence", json::array()}};
  json finding = {{"code", "initiating-failure"}, {"severity", "error"}, {"ranks", {6}}, {"hosts", {"node02"}},
                  {"message", "rank 6 on node02 failed first (05-14 10:12:05): torch.OutOfMemoryError"},
                  {"expected", ""}, {"found", "torch.OutOfMemoryError: CUDA out of memory."},
                  {"fix", "set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"},
                  {"verify", "mpirun -np 8 -H node01,node02 denpex-probe"}, {"evidence", {ev}}};
  return {{"schema", "denpex.report.v1"}, {"mode", "diagnose"}, {"verdict", "reject"}, {"nranks", 8}, {"nhosts", 2},
          {"errors", 1}, {"warnings", 0}, {"findings", {finding}},
          {"diagnosis", {{"initiating", init}, {"collateral", coll}, {"launcher_claim", claim}}},
          {"inputs", {{"files", {"/home/alice/job/node01.log", "/home/alice/job/node02.log"}}, {"lines", 106},
                      {"records", 56}, {"collective_calls", 0}, {"unreadable", 1},
                      {"unreadable_samples", {{{"file", "/home/alice/job/node01.log"}, {"line", 3}, {"text", "NCCL INFO ???"}}}},
                      {"notes", json::array()}}}};
}

// A diagnosis of `ranks` ranks on hosts of `per_host` ("gpu-node001"...), with the per-rank
// timeline extension: rank `first` fails at 10:12:05, every other rank times out 30 minutes later
// (spread over a minute), torchrun blames rank 2.
inline nlohmann::json large_diagnosis(int ranks, int per_host, int first) {
  using nlohmann::json;
  json timeline = json::array();
  for (int r = 0; r < ranks; ++r) {
    bool init = r == first;
    double t = init ? 36600.0 * 1e6 : (36600.0 + 1800 + (r % 60)) * 1e6;
    timeline.push_back({{"rank", r}, {"host", fmt::format("gpu-node{:03}", r / per_host + 1)},
                        {"role", init ? "initiating" : "collateral"}, {"what", init ? "CUDA error" : "watchdog timeout"},
                        {"at_us", static_cast<long long>(t)}});
  }
  json report = oom_diagnosis();
  report["nranks"] = ranks;
  report["nhosts"] = (ranks + per_host - 1) / per_host;
  report["diagnosis"]["timeline"] = timeline;
  report["diagnosis"]["initiating"]["ranks"] = {first};
  report["diagnosis"]["initiating"]["hosts"] = {fmt::format("gpu-node{:03}", first / per_host + 1)};
  return report;
}

}  // namespace denpex::test
