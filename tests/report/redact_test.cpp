#include "report/redact.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "report_fixtures.h"

using namespace denpex;
using nlohmann::json;

TEST_CASE("redact: hosts, addresses, paths and users get placeholders in order of first appearance") {
  json report = test::oom_diagnosis();
  Redactor r = Redactor::from_report(report);
  json out = r.apply(report);
  std::string dump = out.dump();
  INFO(dump);
  for (const char* original : {"node01", "node02", "alice", "/home"}) CHECK(dump.find(original) == std::string::npos);
  CHECK(out["redacted"] == true);
  CHECK(out["diagnosis"]["initiating"]["hosts"][0] == "host-2");  // "diagnosis" comes before "findings"
  CHECK(out["diagnosis"]["collateral"][0]["hosts"][0] == "host-1");
  CHECK(out["findings"][0]["verify"] == "mpirun -np 8 -H host-1,host-2 denpex-probe");
  CHECK(out["inputs"]["files"][0] == "/path-1/host-1.log");
  // Stable: the same original is the same placeholder in text made later.
  CHECK(r.apply(std::string("rank 6 on node02, see /home/alice/job/node02.log")) ==
        "rank 6 on host-2, see /path-1/host-2.log");
}

TEST_CASE("redact: addresses, IPv6, loopback kept, and names glued to ports") {
  Redactor r = Redactor::from_report(json::object());
  std::string t = r.apply(std::string("Bootstrap : Using ens7:10.128.0.30<0> and 10.128.0.32:29500, "
                                      "MASTER_ADDR=127.0.0.1 [fe80::1c2a:3bff:fe4d:5e6f%eth0] 10.128.0.30."));
  CHECK(t == "Bootstrap : Using ens7:10.0.0.1<0> and 10.0.0.2:29500, MASTER_ADDR=127.0.0.1 [fd00::1%eth0] 10.0.0.1.");
  // Not addresses: versions, times, C++ names.
  std::string keep = "NCCL 2.19.3 at 10:12:05 in c10d::TCPStore, std::runtime_error, 550.54.15";
  CHECK(r.apply(keep) == keep);
}

TEST_CASE("redact: NCCL line headers, domain names and a known host's longer forms") {
  Redactor r = Redactor::from_report(json::object());
  std::string t = r.apply(std::string(
      "ng30903:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
      "ng30903-ib.narval.calcul.quebec<51159>"));
  CHECK(t == "host-1:3063025:3066048 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer "
             "host-2<51159>");
  CHECK(r.apply(std::string("ng30903-ib and ng30903.log")) == "host-1-ib and host-1.log");
  // Files, modules and documentation links are not hosts.
  std::string keep = "see https://pytorch.org/docs/stable/notes/cuda.html in torch.distributed.elastic train.py";
  CHECK(r.apply(keep) == keep);
  CHECK(r.apply(std::string("ip-10-0-3-17 joined")) == "host-3 joined");
}

TEST_CASE("redact: paths keep the system's directories and the part from site-packages on") {
  json report = {{"configurations",
                  {{{"hosts", {"gpu01"}},
                    {"record",
                     {{"host", "gpu01"},
                      {"nccl", {{"path", "/home/bob/venv/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2"}}},
                      {"system_nccl", {{"path", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9"}}},
                      {"nccl_env", {{"NCCL_TOPO_FILE", "/scratch/bob/topo.xml"}}}}}}}}};
  json out = Redactor::from_report(report).apply(report);
  const json& rec = out["configurations"][0]["record"];
  CHECK(rec["host"] == "host-1");
  CHECK(rec["nccl"]["path"] == "/path-1/site-packages/nvidia/nccl/lib/libnccl.so.2");
  CHECK(rec["system_nccl"]["path"] == "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.9");
  CHECK(rec["nccl_env"]["NCCL_TOPO_FILE"] == "/path-2/topo.xml");
  CHECK(out.dump().find("bob") == std::string::npos);
  // The directory of a file, named on its own later, keeps the file's placeholder.
  Redactor r = Redactor::from_report(report);
  r.apply(report);
  CHECK(r.apply(std::string("via LD_LIBRARY_PATH=/scratch/bob and /scratch/bob/")) ==
        "via LD_LIBRARY_PATH=/path-2 and /path-2/");
}

TEST_CASE("redact: folded host lists become the fold of their placeholders") {
  json report = {{"findings", {{{"hosts", {"node001", "node002", "node003", "node009"}},
                                {"message", "ranks 0-31 on node[001-003,009] load 2.27.3; ranks 32-63 on node[001-003,...]"}}}}};
  json out = Redactor::from_report(report).apply(report);
  CHECK(out["findings"][0]["message"] == "ranks 0-31 on host-[1-4] load 2.27.3; ranks 32-63 on host-[1-3,...]");
}

TEST_CASE("redact: a placeholder never equals an original") {
  json report = {{"hosts", {"host-1", "node7"}}, {"text", "10.0.0.1 and 10.0.0.2 talk"}};
  Redactor r = Redactor::from_report(report);
  json out = r.apply(report);
  CHECK(out["hosts"][0] != "host-1");
  CHECK(out["hosts"][0] != out["hosts"][1]);
  std::string text = out["text"].get<std::string>();
  CHECK(text.find("10.0.0.1 ") == std::string::npos);
  for (const auto& [original, placeholder] : r.assigned()) CHECK(original != placeholder);
}

TEST_CASE("redact: the image host of a --root record is a path") {
  json report = {{"configurations", {{{"hosts", {"image /srv/images/alice-pytorch.tar"}}}}}};
  json out = Redactor::from_report(report).apply(report);
  CHECK(out["configurations"][0]["hosts"][0] == "image /path-1/alice-pytorch.tar");
}
