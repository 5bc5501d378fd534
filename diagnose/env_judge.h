// Facts from pasted environment reports (collect_env, pip, nvidia-smi, /proc/driver/nvidia/version,
// dpkg, libnccl listings, ctypes probes) judged per environment: the host a shell prompt named,
// else the process or file they came from. Each finding names the versions and paths it rests on.
//
//   nccl-wheel-conflict          two nvidia-nccl-cu* wheels (or two versions of one) in one environment
//   torch-nccl-mismatch          the NCCL PyTorch was built with (torch.cuda.nccl.version()) differs from
//                                the wheel installed or the system's (the NCCL a process printed it loaded
//                                is compared by facts_judge)
//   nccl-abi-mismatch            a ctypes probe found an nccl* function missing from the libnccl it loaded
//   cuda-driver-kernel-mismatch  the user-space driver (NVML library, packages) and the kernel module
//                                (/proc/driver/nvidia/version, nvidia-smi) differ, without an NVML error line
//   cuda-driver-too-old          PyTorch built for a CUDA release the driver does not support
//   torch-version-mismatch       environments that report different PyTorch versions
#pragma once

#include <string>
#include <vector>

#include "diagnose/facts_judge.h"

namespace denpex::diag {

// Never fails; facts of other kinds are ignored.
std::vector<JudgedFact> judge_env_facts(const std::vector<Fact>& facts);

// The driver versions the facts show, each with where it was read, for the message of an NVML
// "Driver/library version mismatch": "user-space 550.163.01 (installed package), kernel module
// 550.127.05 (/proc/driver/nvidia/version)". "" when the facts name no driver version.
std::string driver_versions_note(const std::vector<Fact>& facts);

}  // namespace denpex::diag
