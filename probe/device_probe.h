// The devices NCCL will drive on this host, read from the kernel's files: GPUs from the NVIDIA
// driver's procfs, RDMA devices and their ports from sysfs, the GPUDirect peer-memory module
// from /sys/module, NVSwitch devices from the driver's procfs; and NVML's answers when it is
// given (nvml_probe.h). No GPU kernel is run. The driver's and the RDMA devices' files and NVML
// are read in an isolated child under a deadline: reading a GPU's `information` takes a power
// reference in the driver (and waits for a suspend or resume in progress), a port's state and
// rate are asked of the device, and NVML initialises the driver's state.
#pragma once

#include <string>

#include "probe/isolated_call.h"
#include "probe/monotonic_clock.h"
#include "probe/record.h"

namespace denpex {

// Where procfs and sysfs are (tests point these at fixture trees), and NVML.
struct DeviceRoots {
  std::string proc = "/proc";
  std::string sys = "/sys";
  // libnvidia-ml.so.1 as this process would open it (resolved by the loader and, as root,
  // trusted); "" when there is none to load, and then `nvml_why` says why.
  std::string nvml;
  std::string nvml_why = "libnvidia-ml.so.1 was not looked for";
  // The driver's library (as this process opens it) whose version call the same child makes
  // after reading, so that a GPU node forks once for both; "" for none. `driver_symbol` is the
  // `int f(int*)` it calls (cuda_driver_probe.h kDriverVersionSymbol).
  std::string driver;
  const char* driver_symbol = "";
};

// Reads every fact. Never throws and never blocks past `timeout_seconds` (plus the isolated
// child's reap grace): a fact that cannot be read is status unknown with `why`; nothing is
// guessed. Forks only when the driver's or the RDMA devices' directories exist, so a host
// without them pays a few stat calls.
DevicesInfo probe_devices(const DeviceRoots& roots, double timeout_seconds);

// The same in two halves, so the child reads while the rest of the probe runs: start forks it
// (when a directory is there) and reads GPUDirect and the interfaces meanwhile; finish waits for
// the child until `timeout_seconds` after the start and kills it then. Call finish exactly once
// for each start that forked (a DeviceRead destroyed unfinished leaves its child unreaped).
struct DeviceRead {
  DevicesInfo facts;
  IsolatedChild child;
  bool started = false;                      // a child was forked (or fork failed)
  bool gpus = false, rdma = false, nvswitch = false;  // what the child reads
  std::string nvml;                                   // and NVML, when not ""
  std::string driver;                                 // and the driver's call, when not ""
  const char* driver_symbol = "";
  // After finish: the child's answer for the driver's call, for ProbeContext::prefetched (the
  // child's failure when it failed).
  IsolatedResult driver_answer;
  double start = monotonic_seconds();
};
DeviceRead start_device_read(const DeviceRoots& roots);
DevicesInfo finish_device_read(DeviceRead* read, double timeout_seconds);

// The record of an image (--root): devices are the nodes', so every part is not_probed.
DevicesInfo devices_not_probed();

// One GPU from the text of /proc/driver/nvidia/gpus/<dir>/information (any driver's layout:
// "Key:" then tabs and spaces, then the value; lines that drivers add or drop are tolerated).
// The bus location is the directory's name, lower-cased. An empty text (older drivers write
// nothing when the power reference fails) gives a GPU with only its bus location.
GpuDevice parse_gpu_information(const std::string& dir_name, const std::string& text);

// The name part of a sysfs port attribute: "ACTIVE" from "4: ACTIVE\n", "LinkUp" from
// "5: LinkUp"; a value without a "<number>:" prefix trimmed as it is ("InfiniBand").
std::string sysfs_state_name(const std::string& text);

}  // namespace denpex
