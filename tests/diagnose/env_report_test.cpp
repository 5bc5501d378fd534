// Pasted environment reports (evidence/read_env_report.cpp, diagnose/env_judge.cpp): collect_env,
// pip, nvidia-smi, /proc/driver/nvidia/version, dpkg, libnccl listings, ctypes probes, a prompt's
// host; Horovod's multi-line stall report; Slurm's cgroup OOM pair. The fixtures in
// fixtures/env are written in the formats of the threads tests/diagnose/SOURCES.md lists.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "diagnose/diagnosis.h"
#include "tests/diagnose/diagnose_test_support.h"
#include "evidence/matcher.h"

using namespace denpex;
using namespace denpex::diag;
using denpex::diag::test::find;
using namespace denpex::evidence;

namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(DENPEX_DIAGNOSE_FIXTURES) + "/env/" + name);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Diagnosis diagnose_text(const std::string& text, const std::string& name = "paste.txt") {
  LogReader r;
  r.read_text(text, name);
  r.finish();
  return diagnose(r);
}

bool mentions(const DxFinding* x, const std::string& s) {
  return x != nullptr && (x->f.message.find(s) != std::string::npos || x->f.found.find(s) != std::string::npos);
}

}  // namespace

TEST_CASE("every example of the environment entries is read by its own entry") {
  denpex::diag::test::check_examples_read_by_own_entry({"env.shell_prompt", "env.torch_version", "env.torch_cuda", "env.cuda_runtime",
                         "env.driver_collect_env", "env.nvidia_smi_header", "env.nvrm_version", "env.driver_package",
                         "env.driver_package_plain", "env.nvrm_api_mismatch", "env.sys_module_version",
                         "env.pip_show_name", "env.conda_nccl", "env.torch_nccl_command", "env.nccl_listing",
                         "env.ctypes_cdll", "env.hasattr_nccl", "horovod.stall.header", "slurm.task_oom", "slurm.oom_kill"});
}

TEST_CASE("collect_env with two NCCL wheels: nccl-wheel-conflict naming both versions") {
  Diagnosis d = diagnose_text(fixture("collect_env_two_wheels.txt"));
  const DxFinding* x = find(d, "nccl-wheel-conflict");
  REQUIRE(x != nullptr);
  CHECK(x->f.severity == Severity::error);
  CHECK(mentions(x, "nvidia-nccl-cu12 2.21.5"));
  CHECK(mentions(x, "nvidia-nccl-cu13 2.27.7"));
  CHECK(d.exit_code == 1);
  // Driver 550.90.07 supports CUDA 12.4, the build's: not too old.
  CHECK(find(d, "cuda-driver-too-old") == nullptr);
}

TEST_CASE("collect_env: PyTorch built for CUDA 12.1 on a 470 driver is cuda-driver-too-old") {
  Diagnosis d = diagnose_text(fixture("collect_env_old_driver.txt"));
  const DxFinding* x = find(d, "cuda-driver-too-old");
  REQUIRE(x != nullptr);
  CHECK(mentions(x, "12.1"));
  CHECK(mentions(x, "470.239.06"));
  CHECK(find(d, "nccl-wheel-conflict") == nullptr);  // one wheel
}

TEST_CASE("pip list, pip freeze and pip show forms of two wheels") {
  const DxFinding* x;
  Diagnosis list = diagnose_text(fixture("pip_list_two_wheels.txt"));
  x = find(list, "nccl-wheel-conflict");
  CHECK((mentions(x, "nvidia-nccl-cu11 2.14.3") && mentions(x, "nvidia-nccl-cu12 2.20.5")));
  Diagnosis show = diagnose_text(fixture("pip_show_two_wheels.txt"));
  x = find(show, "nccl-wheel-conflict");
  CHECK((mentions(x, "nvidia-nccl-cu12 2.26.2") && mentions(x, "nvidia-nccl-cu13 2.28.3")));
  Diagnosis freeze = diagnose_text("nvidia-nccl-cu12==2.18.1\ntorchvision==0.19.0\nnvidia-nccl-cu12==2.20.5\n");
  x = find(freeze, "nccl-wheel-conflict");
  CHECK((mentions(x, "2.18.1") && mentions(x, "2.20.5")));
  // The same wheel printed twice is one wheel.
  CHECK(find(diagnose_text("[pip3] nvidia-nccl-cu12==2.20.5\n[pip3] nvidia-nccl-cu12==2.20.5\n"), "nccl-wheel-conflict") == nullptr);
}

TEST_CASE("torch's NCCL against the wheel and the system library, and a missing symbol probed with ctypes") {
  Diagnosis d = diagnose_text(fixture("torch_nccl_vs_wheel.txt"));
  const DxFinding* t = find(d, "torch-nccl-mismatch");
  REQUIRE(t != nullptr);
  CHECK(mentions(t, "2.26.2"));
  CHECK(mentions(t, "2.27.7"));
  CHECK(mentions(t, "/usr/lib/x86_64-linux-gnu/libnccl.so.2.19.3"));
  CHECK(t->f.hosts == std::vector<std::string>{"node-a3"});  // from the prompt
  const DxFinding* a = find(d, "nccl-abi-mismatch");
  REQUIRE(a != nullptr);
  CHECK(mentions(a, "ncclCommInitRankScalable"));
  CHECK(mentions(a, "libnccl.so.2"));
  CHECK(mentions(a, "2.19.3"));
  CHECK(d.exit_code == 1);
}

TEST_CASE("torch's NCCL: older integer output, same-line forms, and agreement gives nothing") {
  // The wheel older than the build: PyTorch may call functions it lacks.
  Diagnosis older = diagnose_text(">>> torch.cuda.nccl.version()\n21903\n[pip3] nvidia-nccl-cu12==2.18.1\n");
  const DxFinding* x = find(older, "torch-nccl-mismatch");
  REQUIRE(x != nullptr);
  CHECK(x->f.severity == Severity::error);
  CHECK((mentions(x, "2.19.3") && mentions(x, "2.18.1")));
  Diagnosis same = diagnose_text("python -c 'import torch; print(torch.cuda.nccl.version())'\n(2, 20, 5)\n"
                                 "nvidia-nccl-cu12         2.20.5\n");
  CHECK(find(same, "torch-nccl-mismatch") == nullptr);
  Diagnosis inline_probe = diagnose_text(">>> print(hasattr(lib, 'ncclCommShrink')) False\n");
  CHECK(mentions(find(inline_probe, "nccl-abi-mismatch"), "ncclCommShrink"));
  CHECK(find(diagnose_text(">>> hasattr(lib, \"ncclCommShrink\")\nTrue\n"), "nccl-abi-mismatch") == nullptr);
}

TEST_CASE("NVML mismatch names the user-space and the kernel-module versions and the prompt's host") {
  Diagnosis d = diagnose_text(fixture("nvml_versions.txt"));
  const DxFinding* x = find(d, "cuda-driver-kernel-mismatch");
  REQUIRE(x != nullptr);
  CHECK(mentions(x, "550.163"));
  CHECK(mentions(x, "550.127.05"));
  CHECK(x->f.hosts == std::vector<std::string>{"gpu-r12"});
  Diagnosis prose = diagnose_text(fixture("nvml_prose.md"));
  x = find(prose, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "535.216.01") && mentions(x, "535.183.01")));
  // Several versions in one sentence, with and without NVML's message on the same line.
  Diagnosis one_line = diagnose_text(
      "Right now I have updated to `nvidia-driver-560:amd64 560.35.05-0ubuntu0.24.04.1`, but /proc/driver/nvidia/version "
      "reports `NVRM version: NVIDIA UNIX x86_64 Kernel Module  560.28.03  Wed Jul 31 10:11:12 UTC 2024`.\n");
  x = find(one_line, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "560.35.05") && mentions(x, "560.28.03")));
  Diagnosis with_nvml = diagnose_text(
      "`Failed to initialize NVML: Driver/library version mismatch` with `nvidia-driver-535:amd64 535.216.01-0ubuntu1` "
      "installed and `NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 2024` loaded\n");
  x = find(with_nvml, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "535.216.01") && mentions(x, "535.183.01")));
}

TEST_CASE("driver versions alone: a package newer than the module is a mismatch; equal ones are not") {
  std::string module = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  560.35.03  Release Build  (dvs-builder@U16)\n";
  Diagnosis d = diagnose_text("[ops@node9 ~]$ apt list --installed 2>/dev/null | grep nvidia-driver\n"
                              "nvidia-driver-560/jammy-updates,now 560.35.05-0ubuntu1 amd64 [installed]\n" + module);
  const DxFinding* x = find(d, "cuda-driver-kernel-mismatch");
  REQUIRE(x != nullptr);
  CHECK((mentions(x, "560.35.05") && mentions(x, "560.35.03")));
  CHECK(x->f.hosts == std::vector<std::string>{"node9"});
  Diagnosis same = diagnose_text("ii  nvidia-driver-560   560.35.03-0ubuntu1   amd64   NVIDIA driver metapackage\n" + module +
                                 "| NVIDIA-SMI 560.35.03     Driver Version: 560.35.03     CUDA Version: 12.6     |\n");
  CHECK(find(same, "cuda-driver-kernel-mismatch") == nullptr);
  // apt history of an upgrade beside NVML's error: the old version is named.
  Diagnosis apt = diagnose_text("Failed to initialize NVML: Driver/library version mismatch\n"
                                "Upgrade: libnvidia-common-470:amd64 (470.182.03-0ubuntu1, 470.199.02-0ubuntu1)\n");
  x = find(apt, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "470.199.02") && mentions(x, "470.182.03")));
}

TEST_CASE("NVRM's API mismatch (syslog-joined and dmesg-wrapped), /sys/module, Debian and rpm package names") {
  Diagnosis joined = diagnose_text(
      "Aug  2 09:14:05 gpu-0 kernel: NVRM: API mismatch: the client has the version 550.120, but#012NVRM: this kernel "
      "module has the version 550.90.07.  Please#012NVRM: make sure that this kernel module and all NVIDIA driver\n");
  const DxFinding* x = find(joined, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "550.120") && mentions(x, "550.90.07")));
  Diagnosis wrapped = diagnose_text("[    7.112233] NVRM: API mismatch: the client 'python3' (pid 4411)\n"
                                    "               NVRM: has the version 560.35.05, but this kernel module has\n"
                                    "               NVRM: the version 560.35.03.  Please make sure that this\n"
                                    "               NVRM: kernel module and all NVIDIA driver components\n");
  x = find(wrapped, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "560.35.05") && mentions(x, "560.35.03")));
  Diagnosis sys = diagnose_text("$ cat /sys/module/nvidia/version\n535.183.01\n$ dpkg -l nvidia-smi\n"
                                "ii  nvidia-smi     535.216.01-1  amd64        NVIDIA System Management Interface\n");
  x = find(sys, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "535.216.01") && mentions(x, "535.183.01")));
  Diagnosis rpm = diagnose_text("nvidia-driver-cuda-libs-550.127.05-1.el9.x86_64\n"
                                "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\n");
  x = find(rpm, "cuda-driver-kernel-mismatch");
  CHECK((mentions(x, "550.127.05") && mentions(x, "550.90.07")));
}

TEST_CASE("Horovod's stall report: the ranks under 'Missing ranks:' are collective-missing") {
  Diagnosis d = diagnose_text(fixture("horovod_missing_ranks.log"));
  const DxFinding* x = find(d, "collective-missing");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{3, 5});
  CHECK(d.blame.initiating.ranks == std::vector<int>{3, 5});
  Diagnosis plain = diagnose_text(fixture("horovod_missing_plain.log"));
  REQUIRE(find(plain, "collective-missing") != nullptr);
  CHECK(find(plain, "collective-missing")->f.ranks == std::vector<int>{1});
  // Glued onto the header, and a list a terminal wrapped before the next rank's.
  Diagnosis glued = diagnose_text(
      "[2024-09-02 14:11:05.402211: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted to be "
      "reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 "
      "seconds. This may indicate ... deadlock. Missing ranks: 0: [allreduce.fc1.weight,\n"
      " allreduce.fc1.bias]\n6: [allreduce.fc1.weight]\nstep 12 loss 0.41\n");
  REQUIRE(find(glued, "collective-missing") != nullptr);
  CHECK(find(glued, "collective-missing")->f.ranks == std::vector<int>{0, 6});
}

TEST_CASE("Slurm's cgroup OOM: the task srun names Out Of Memory initiates, not the launcher's kill") {
  Diagnosis d = diagnose_text(fixture("slurm_cgroup_oom.log"));
  REQUIRE(d.blame.found);
  CHECK(d.blame.initiating.ranks == std::vector<int>{2});
  CHECK(d.blame.initiating.hosts == std::vector<std::string>{"cn-g017"});
  CHECK(d.blame.initiating.kind == Failure::Kind::oom);
  const DxFinding* x = find(d, "initiating-failure");
  REQUIRE(x != nullptr);
  CHECK(x->f.ranks == std::vector<int>{2});
  CHECK(mentions(x, "771204.0"));
  // The StepId form and a task range: every task named initiates with the others.
  Diagnosis range = diagnose_text("slurmstepd: error: Detected 2 oom_kill events in StepId=5512.0. Some of the step tasks have been OOM Killed.\n"
                                  "srun: error: nid004411: tasks 1-3: Out Of Memory\n"
                                  "srun: error: nid004410: task 0: Exited with exit code 1\n");
  REQUIRE(range.blame.found);
  CHECK(range.blame.initiating.ranks == std::vector<int>{1, 2, 3});
  // Without srun's line the OOM-kill line still stands as the node's failure.
  Diagnosis alone = diagnose_text("slurmstepd: error: Detected 1 oom-kill event(s) in step 9001.batch cgroup. Some of your "
                                  "processes may have been killed by the cgroup out-of-memory handler.\n");
  REQUIRE(alone.blame.found);
  CHECK(alone.blame.initiating.kind == Failure::Kind::oom);
}

TEST_CASE("collect_env of three hosts: the one with another PyTorch is torch-version-mismatch") {
  Diagnosis d = diagnose_text("ops@gpu-a1:~$ python -m torch.utils.collect_env | head -2\nPyTorch version: 2.5.1+cu124\n"
                              "ops@gpu-a2:~$ python -m torch.utils.collect_env | head -2\nPyTorch version: 2.5.1+cu124\n"
                              "ops@gpu-a3:~$ python -m torch.utils.collect_env | head -2\nPyTorch version: 2.4.0+cu121\n");
  const DxFinding* x = find(d, "torch-version-mismatch");
  REQUIRE(x != nullptr);
  CHECK(x->f.hosts == std::vector<std::string>{"gpu-a3"});
  CHECK((mentions(x, "2.4.0") && mentions(x, "2.5.1")));
  CHECK(find(diagnose_text("PyTorch version: 2.5.1+cu124\n[pip3] torch==2.5.1\n"), "torch-version-mismatch") == nullptr);
}

TEST_CASE("NCCL's own lines without their host header: a net plugin that is there but does not load") {
  // Pasted without NCCL's "host:pid:tid" header, as users often cut it, with the loader's error
  // wrapped onto a second line.
  Diagnosis d = diagnose_text(
      "  NCCL INFO NET/Plugin: libnccl-net-ofi.so: /opt/rdma-core/build/lib/libibverbs.so.1: version `IBVERBS_PRIVATE_34' not found (required by\n"
      "  /usr/lib/x86_64-linux-gnu/libefa.so.1)\n"
      "  NCCL INFO NET/Plugin: Could not find: ofi\n");
  const DxFinding* f = find(d, "nccl-net-plugin-mismatch");
  REQUIRE(f);
  CHECK(mentions(f, "IBVERBS_PRIVATE_34"));
  CHECK(d.exit_code == 1);
  // The usual line of a node without any plugin is no finding.
  Diagnosis none = diagnose_text("node1:12:12 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin.\n");
  CHECK(find(none, "nccl-net-plugin-mismatch") == nullptr);
}

TEST_CASE("NCCL WARN lines that state an installation fault: a stub driver, an unsupported API") {
  Diagnosis stub = diagnose_text("ws1:779166:779172 [0] init.cc:255 NCCL WARN Cuda failure 'CUDA driver is a stub library'\n");
  CHECK(find(stub, "cuda-driver-stub") != nullptr);
  CHECK(find(stub, "initiating-failure") == nullptr);
  Diagnosis old = diagnose_text(
      "[1,0]<stdout>:8470dd07de42:174:239 [0] enqueue.cc:802 NCCL WARN Cuda failure 'API call is not supported in the installed CUDA driver'\n");
  CHECK(find(old, "cuda-driver-too-old") != nullptr);
  Diagnosis link = diagnose_text(
      "/usr/bin/ld: /opt/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so: undefined reference to `ncclWaitSignal'\n");
  const DxFinding* abi = find(link, "nccl-abi-mismatch");
  REQUIRE(abi);
  CHECK(mentions(abi, "ncclWaitSignal"));
}

TEST_CASE("PyTorch 1.x's one-sided fingerprint names the inconsistent rank") {
  Diagnosis d = diagnose_text(
      "RuntimeError: Detected mismatch between collectives on ranks. Rank 3 is running inconsistent collective: "
      "CollectiveFingerPrint(OpType=BROADCAST, TensorShape=[4], TensorDtypes=Float, TensorDeviceTypes=TensorOptions(dtype=float (default), device=cuda))\n");
  const DxFinding* f = find(d, "collective-args-mismatch");
  REQUIRE(f);
  CHECK(f->f.ranks == std::vector<int>{3});
  CHECK(mentions(f, "rank 3"));
}
