// NVML's answers about this host's GPUs, from libnvidia-ml.so.1: the name, compute mode, MIG
// mode, bus location, ECC mode, volatile uncorrected ECC errors, pages or rows waiting to be
// retired or remapped, NVLink link states and the fabric registration (the fabric manager's
// work on NVSwitch systems) of each GPU, and GPUs lost at run time (the driver's procfs keeps
// their entries). Called
// inside the device child (device_probe.h): NVML initialises the driver's state and can hang
// with it, so never in the probe's own process. NVML's symbols are looked up by their versioned
// names (nvmlInit_v2, nvmlDeviceGetCount_v2, nvmlDeviceGetHandleByIndex_v2), as nvml.h maps them.
#pragma once

#include <string>

#include "probe/record.h"

namespace denpex {

// Opens `host_path` (a file the loader resolves for libnvidia-ml.so.1, and trusted) and asks it.
// Status ok with one entry per NVML index; unknown with why when dlopen, a symbol or
// nvmlInit_v2 fails ("nvmlInit_v2: Driver Not Loaded (9)"). Never throws.
NvmlFacts read_nvml(const std::string& host_path);

}  // namespace denpex
