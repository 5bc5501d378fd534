// A pinned configuration to judge ranks against (--baseline), written from a good run
// (--write-baseline). Versioned JSON so that a file written today still reads, or is refused
// with a clear message, after the format changes.
//
// File format, schema "denpex.baseline.v1" (every key but "schema" is optional; an absent or
// empty value is not pinned and not checked):
//
//   {
//     "schema": "denpex.baseline.v1",
//     "written_by": "denpex-probe 0.1.0",          // informational
//     "nccl":        { "version": "2.28.9", "cuda_build": "13.0" },
//     "torch":       { "version": "2.5.1+cu124" },
//     "cuda_driver": { "library_version": "550.54.15", "cuda_version": "12.4" },
//     "net_plugin":  { "status": "missing", "api_versions": [] },
//     "nccl_env":    { "NCCL_PROTO": "Simple" },   // the complete set of effective NCCL_*
//                                                  // settings; present = pinned, {} = none set
//     "devices":     { "gpu_count": "8", "gpu_model": "NVIDIA H100 80GB HBM3",
//                      "rdma_hcas": "2 x MT4129", "rdma_firmware:MT4129": "28.41.1000",
//                      "rdma_port:mlx5_0:1": "ACTIVE", "gpudirect": "loaded" }
//   }                                              // each key pinned on its own
//
// Unknown keys are ignored, so later v1 writers may add fields.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "compare/group.h"

namespace denpex {

// The schema string this code reads and writes.
constexpr const char* kBaselineSchema = "denpex.baseline.v1";

// Larger files are refused without being read: a real baseline is a few hundred bytes.
constexpr long long kBaselineMaxBytes = 4 * 1024 * 1024;

struct Baseline {
  std::string nccl_version;             // "" = not pinned
  std::string nccl_cuda_build;          // "" = not pinned
  std::string torch_version;            // "" = not pinned
  std::string driver_library_version;   // "" = not pinned
  std::string driver_cuda_version;      // "" = not pinned
  bool pin_net_plugin = false;          // false: net plugin not checked
  std::string net_plugin_status;        // to_string(PluginStatus) form: "ok", "missing", ...
  std::vector<std::string> net_plugin_api_versions;  // sorted
  bool pin_nccl_env = false;            // false: NCCL_* settings not checked
  std::map<std::string, std::string> nccl_env;       // effective NCCL_* settings
  // Device facts (compare/device_rules.h device_pins): key -> value; a key absent is not pinned.
  std::map<std::string, std::string> devices;
  std::string written_by;               // informational
  std::string source;                   // the path it was loaded from ("" when built in memory)
};

// The baseline that pins `group`'s configuration: NCCL version and CUDA build when NCCL was
// found, the PyTorch version when PyTorch is present, the driver versions when the driver is
// usable, the net plugin, and the effective NCCL_* settings (always pinned).
Baseline baseline_from_group(const ConfigGroup& group);

// Writes `baseline` to `path` (through a temporary file renamed into place, so a reader never
// sees half a file). Returns false and sets *error to one line naming the file and the problem;
// never throws.
bool write_baseline(const std::string& path, const Baseline& baseline, std::string* error);

enum class BaselineStatus {
  ok,
  missing_file,  // no such file
  unreadable,    // exists but cannot be read (permissions, a directory, an I/O error)
  too_large,     // larger than kBaselineMaxBytes; not read
  malformed,     // not JSON, or a key has the wrong type
  wrong_schema,  // JSON, but "schema" is absent or not kBaselineSchema
};

const char* to_string(BaselineStatus s);

struct BaselineLoad {
  BaselineStatus status = BaselineStatus::missing_file;
  Baseline baseline;  // valid only when status == ok
  std::string error;  // one line naming the file and the problem; empty when ok
};

// Reads and validates a baseline file. Never throws.
BaselineLoad load_baseline(const std::string& path);

// Parses baseline JSON text; `source` names it in errors. Never throws. (load_baseline's core,
// exposed for tests and for callers that already hold the text.)
BaselineLoad parse_baseline(const std::string& text, const std::string& source);

}  // namespace denpex
