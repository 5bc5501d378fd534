// The rank record: everything one process found about the NCCL, CUDA driver, PyTorch and
// NCCL settings it would really use. Plain structs with explicit status values; this header is
// the schema shared by probe/ (which fills it), collect/ (which moves it) and compare/ (which
// judges it). It depends on nothing but nlohmann_json.
//
// JSON shape: the contract's "The rank record". Extra keys are additions, never renames.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

// How an NCCL library was read.
//   ok          found and confirmed live (dlopen + ncclGetVersion in an isolated child)
//   missing     nothing resolvable for the name
//   unloadable  found, but not usable; `error` says why in words a person understands
//   not_loaded  read statically only (under --root, or as root on a path others can write)
enum class NcclStatus { ok, missing, unloadable, not_loaded };

struct NcclInfo {
  NcclStatus status = NcclStatus::missing;
  std::string path;          // real path (symlinks resolved) of what the process gets
  std::string version;       // "2.28.9"; empty when unknown
  int version_code = 0;      // ncclGetVersion() value, or derived from the literal; 0 when unknown
  std::string cuda_build;    // "13.0" from the "+cudaA.B" literal; empty when unknown
  std::string method;        // "dlopen" (a libnccl file) or "static" (linked into a consumer)
  std::string origin;        // how it was found: "LD_PRELOAD", "LD_LIBRARY_PATH", "ld.so.cache",
                             // "default-dir", "rpath", "runpath", "torch-wheel", "torch-static"...
  std::string static_version;  // version read from the file's literal ("" if none)
  std::string error;           // why unloadable / missing; empty when ok
  // Under --root, when the answer depends on the target CPU (a libnccl.so.2 in a glibc-hwcaps
  // subdirectory): "x86-64-v3: <path>" per level in the loader's order, then "otherwise: <the
  // path above>". Empty when the answer is the same on every CPU.
  std::vector<std::string> depends_on_cpu;
};

struct NcclCandidate {
  std::string path;
  std::string version;     // "" when no literal was found
  std::string cuda_build;
  std::string origin;      // "LD_LIBRARY_PATH", "ld.so.cache", "cuda-toolkit", "torch-wheel",
                           // "python-env", "torch-static", "default-dir"
};

// PyTorch's NCCL: what libtorch_cuda.so would load.
struct TorchNccl {
  std::string path;
  std::string version;
  std::string cuda_build;
  std::string linkage;   // "wheel", "static", "system", "" when unresolved
};

enum class TorchStatus { ok, missing, error };

struct TorchInfo {
  TorchStatus status = TorchStatus::missing;
  std::string version;      // torch/version.py __version__
  std::string cuda;         // torch/version.py cuda ("" for CPU builds)
  std::string path;         // the torch package directory
  std::string site_packages;
  std::string libtorch_cuda;  // path of libtorch_cuda.so, "" for CPU builds
  std::string build;          // "cuda" (has libtorch_cuda.so), "cpu" (none: uses no NCCL),
                              // "" when unknown (status not ok)
  TorchNccl nccl;            // what libtorch_cuda.so would really load (or has linked in)
  TorchNccl bundled;         // the NCCL wheel installed for this torch (nvidia/nccl/lib), even
                             // when something else wins; empty when there is none
  // The NCCL wheel torch's METADATA requires (Requires-Dist), as written after the project
  // name: "nvidia-nccl-cu12==2.20.5". "" when it names none (source builds, conda's pytorch,
  // no dist-info).
  std::string nccl_requirement;
  // Whether the installed nvidia-nccl wheel satisfies nccl_requirement: "yes", "no" (another
  // version, or that wheel not installed), "unknown"; "" when there is no requirement.
  std::string nccl_requirement_met;
  std::string error;
};

// An nvidia-nccl-cu* distribution pip recorded in a site-packages directory. Every such wheel
// installs the same file, nvidia/nccl/lib/libnccl.so.2: with two of them the file is the one
// installed last, and uninstalling either removes it.
struct NcclWheel {
  std::string project;        // "nvidia-nccl-cu12"
  std::string version;        // "2.20.5", from its .dist-info name
  std::string site_packages;
  std::string dist_info;      // its .dist-info directory
  // Whether nvidia/nccl/lib/libnccl.so.2 on disk is the file this wheel's RECORD lists (by
  // size, and by version where the file's literal gives one). "yes", "no" (another file, or
  // none), or "unknown" (RECORD does not list it).
  std::string owns_library;
};

// A Python framework other than PyTorch that loads NCCL its own way (JAX's CUDA plugin, CuPy).
enum class FrameworkStatus { ok, missing, error };

struct FrameworkInfo {
  FrameworkStatus status = FrameworkStatus::missing;
  std::string version;        // jax/version.py, cupy/_version.py
  std::string package;        // the distribution that brings the CUDA part: "jax-cuda12-plugin
                              // 0.6.2", "cupy-cuda12x 13.6.0"
  std::string path;           // the package directory that loads NCCL (jax_plugins/xla_cuda12,
                              // cupy)
  std::string site_packages;
  std::string nccl_rule;      // how it picks its NCCL, in words ("nvidia.nccl module, then
                              // the plugin's dlopen of libnccl.so.2")
  TorchNccl nccl;             // what it would load; linkage "wheel" or "system"
  std::string error;
};

// The NCCL ABI check: symbols a consumer imports that the NCCL it would get lacks.
struct AbiCheck {
  std::string consumer;                       // e.g. .../torch/lib/libtorch_cuda.so
  std::string library;                        // the libnccl it would bind to
  std::vector<std::string> imported;          // nccl* symbols the consumer needs (sorted)
  std::vector<std::string> missing;           // of those, not exported by `library` (sorted)
  // "" when the check was made. Otherwise why it could not be (a dynamic symbol table that
  // cannot be read): `imported`/`missing` are then empty, and nothing is known either way.
  std::string error;
};

// The probe checking its loader emulation against the real loader: for a
// library loaded live, the file the emulation named and the file ld.so really mapped for the
// same name in the same environment. They differ when the real loader follows a rule the
// emulation lacks; the record then names the emulated one, and the finding names both.
struct LoaderCheck {
  std::string name;       // what was asked for: "libnccl.so.2"
  std::string emulated;   // real path the emulation resolved
  std::string loaded;     // real path the loader mapped ("" when it mapped nothing)
  std::string error;      // dlerror() when the real loader failed, "" otherwise
};

// cuda_driver.status per the contract: ok, missing, stub (CUDA_ERROR_STUB_LIBRARY = 34, or the
// toolkit's stub recognised by its contents), error; and version_unknown ("version-unknown"): a
// driver library read statically (under --root, or as root from a path others can write) whose
// version cannot be learnt without loading it (no version in its real file name).
enum class DriverStatus { ok, missing, stub, error, version_unknown };

struct CudaDriverInfo {
  DriverStatus status = DriverStatus::missing;
  std::string cuda_version;            // "12.4" from cuDriverGetVersion, or (read statically)
                                       // from library_version by NVIDIA's driver table
                                       // (probe/cuda_compat.h); "" when unknown
  std::string cuda_version_from;       // "cuDriverGetVersion" or "driver-table"; "" when unknown
  int driver_api_version = 0;          // raw cuDriverGetVersion value (12040)
  std::string library;                 // real path of the libcuda.so.1 that resolves
  std::string library_version;         // "550.54.15" from the real file name
  std::string kernel_module_version;   // /sys/module/nvidia/version or /proc/driver/nvidia/version
  bool forward_compat = false;         // the library is the cuda-compat package's (a "compat"
                                       // directory of a CUDA toolkit: CUDA forward compatibility)
  std::string error;
};

// A NCCL plugin (net, tuner, profiler) as NCCL would pick it.
//   ok        a library resolved and its API symbols were read
//   missing   nothing resolved (for net: NCCL falls back to its internal IB/socket transports)
//   disabled  the variable is "none"
//   error     resolved but unreadable (not an ELF, no plugin symbol)
enum class PluginStatus { ok, missing, disabled, error };

struct PluginInfo {
  PluginStatus status = PluginStatus::missing;
  std::string requested;                    // the env value, or the default name
  std::string path;                         // real path of the library NCCL would load
  std::vector<std::string> api_versions;    // e.g. "ncclNetPlugin_v8", sorted
  std::string error;
};

// How a device fact was read.
//   ok          read from the kernel's files
//   absent      the kernel's files say there is none (no /sys/class/infiniband: no RDMA
//               driver loaded; no peer-memory module under /sys/module)
//   unknown     could not be read (no /proc/driver/nvidia: driver not loaded, or a container
//               masks it; a read that timed out); `why` says which. Never judged
//   not_probed  under --root: the devices are the nodes', not the image's
enum class FactStatus { ok, absent, unknown, not_probed };

// One GPU from /proc/driver/nvidia/gpus/<bus>/information.
struct GpuDevice {
  std::string bus_location;  // identity: "0000:70:00.0" (the directory's name); out of the digest
  std::string uuid;          // identity: "GPU-3291dfa4-..."; "" when the line is missing (drivers
                             // before a GPU's first open) or a placeholder
  std::string model;         // "NVIDIA L4"; "" when unknown (an empty file: older drivers write
                             // nothing when the power reference fails)
  std::string excluded;      // "yes", "no"; "" when the line is missing (older drivers)
};

struct GpuFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;                 // for every status but ok
  std::vector<GpuDevice> devices;  // sorted by bus location
};

// One port of an RDMA device, each field as sysfs words it ("ACTIVE", "LinkUp", "InfiniBand",
// "400 Gb/sec (4X NDR)"); "" when the file is unreadable.
struct RdmaPort {
  std::string port;        // "1"
  std::string state;       // name part of "4: ACTIVE"
  std::string phys_state;  // name part of "5: LinkUp"
  std::string link_layer;
  std::string rate;
};

struct RdmaDevice {
  std::string name;        // "mlx5_0": what NCCL_IB_HCA names
  std::string node_guid;   // identity: "a088:c203:007e:1dba"; out of the digest
  std::string hca_type;    // "MT4129"; "" when the driver has no such file
  std::string fw_ver;      // "28.41.1000"
  std::string board_id;    // "MT_0000000838"
  std::vector<RdmaPort> ports;  // by port number
};

struct RdmaFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;
  std::vector<RdmaDevice> devices;  // sorted by name
};

// GPUDirect RDMA's peer-memory module: ok (loaded: `module` names it), absent (neither loaded),
// unknown (no /sys/module to look in).
struct GpuDirectFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;
  std::string module;   // "nvidia_peermem" or "nv_peer_mem"
  std::string version;  // /sys/module/<module>/version; "" when the module has none
};

// NVSwitch devices the driver lists (/proc/driver/nvidia-nvswitch/devices/*), and the fabric
// manager's work as NVML's fabric state of the GPUs tells it: "ready" (every GPU that has a
// fabric registered), "not-ready" (a GPU's registration not started, in progress or failed:
// CUDA fails with error 802, "system not yet initialized"), "unknown" (NVML not read, or no GPU
// with a fabric state: GPUs before Hopper, systems without an NVLink fabric).
struct NvSwitchFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;
  int count = 0;
  std::string fabric_manager = "unknown";
  std::string fabric_manager_why;  // for every state but ready
};

// One GPU as NVML (libnvidia-ml.so.1) answers for it, by NVML index.
struct NvmlGpu {
  std::string name;          // nvmlDeviceGetName; "" when it failed
  std::string compute_mode;  // "default", "exclusive-thread", "prohibited", "exclusive-process";
                             // "" when unknown
  std::string mig;           // "enabled", "disabled"; "" where MIG is not supported
  bool lost = false;         // nvmlDeviceGetHandleByIndex_v2 answered GPU_IS_LOST
  std::string bus_location;  // identity: nvmlDeviceGetPciInfo_v3's bus id in the procfs form
                             // ("0000:0a:00.0"), to match the driver's GPUs; out of the digest
  std::string ecc;           // nvmlDeviceGetEccMode's current mode: "enabled", "disabled";
                             // "" where the GPU has no ECC or it could not be read
  long long ecc_uncorrected = -1;  // volatile uncorrected ECC errors since the driver loaded
                                   // (nvmlDeviceGetTotalEccErrors); -1 unknown
  std::string retired_pending;     // nvmlDeviceGetRetiredPagesPendingStatus: "yes", "no"; ""
                                   // where not supported (Ampere and later remap rows instead)
  std::string remap_pending;       // nvmlDeviceGetRemappedRows: "yes", "no"; "" unsupported
  bool remap_failed = false;       // a row remapping failed in the past
  int nvlink_links = 0;            // NVLink links that answered nvmlDeviceGetNvLinkState
  int nvlink_up = 0;               // of them, active
  std::string fabric;  // nvmlDeviceGetGpuFabricInfoV's probe state: "not-started",
                       // "in-progress", "completed", or "failed: <NVML error>" (completed with
                       // an error status); "" where the GPU has no fabric to register with
};

// NVML's view, read in the same isolated child as the driver's files: ok (`gpus` by index),
// unknown with why (no libnvidia-ml.so.1, not loaded as root from a path others can write,
// nvmlInit_v2 failed: "driver not loaded"), not_probed under --root.
struct NvmlFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;
  std::string library;  // the file loaded (identity: out of the digest)
  std::vector<NvmlGpu> gpus;
  // Bus locations of the driver's GPUs (procfs) that no GPU NVML answered for is at: where NVML
  // reports a GPU lost, which one it is (identities: out of the digest). Empty when every GPU
  // matched or NVML gives no bus locations.
  std::vector<std::string> unmatched;
};

// A network interface as getifaddrs() gives it (identities: out of the digest, as interface
// names differ between hosts that are configured alike, and veth names are random).
struct NetInterface {
  std::string name;                    // "eth0"
  bool running = false;                // IFF_RUNNING: NCCL's sockets use only running ones
  std::vector<std::string> addresses;  // "10.0.0.5", "fe80::1"; IPv4 and IPv6 only, sorted
};

struct InterfaceFacts {
  FactStatus status = FactStatus::unknown;
  std::string why;
  std::vector<NetInterface> interfaces;  // sorted by name
};

// How a setting that names devices fares against this host's devices.
//   ok          it selects something NCCL or CUDA can use (or it is not in force)
//   no_device   it names nothing this host has (no interface, no HCA)
//   ports_down  NCCL_IB_HCA names HCAs here, but none of their named ports is ACTIVE
//   too_many    CUDA_VISIBLE_DEVICES or NVIDIA_VISIBLE_DEVICES names a GPU this host does not
//               have
//   unreadable  NCCL_TOPO_FILE names a file that is not there or cannot be read here
//   unknown     the facts it is checked against could not be read; never judged
enum class SettingStatus { ok, no_device, ports_down, too_many, unreadable, unknown };

// One setting checked on this host. `variable`, `status` and `detail` are in the digest (hosts
// where the same setting fails alike share a configuration); `value` and `selected` are not:
// CUDA_VISIBLE_DEVICES differs by rank, and what a prefix selects by host.
struct DeviceSettingCheck {
  std::string variable;               // "NCCL_SOCKET_IFNAME"
  std::string value;                  // as set
  std::string source;                 // "environment" or "nccl.conf"
  SettingStatus status = SettingStatus::unknown;
  std::string detail;                 // why, for every status but ok; the same words on hosts
                                      // that fail alike
  std::vector<std::string> selected;  // what it selects here ("eth0", "mlx5_0:1", "0")
};

// The devices NCCL will drive on this host. `status` not_probed under --root (every part then
// not_probed too), ok otherwise (each part has its own status).
struct DevicesInfo {
  FactStatus status = FactStatus::unknown;
  std::string why;
  GpuFacts gpus;
  RdmaFacts rdma;
  GpuDirectFacts gpudirect;
  NvSwitchFacts nvswitch;
  NvmlFacts nvml;
  InterfaceFacts interfaces;
  // NCCL_SOCKET_IFNAME, NCCL_IB_HCA, NCCL_NET, NCCL_TOPO_FILE, CUDA_VISIBLE_DEVICES and
  // NVIDIA_VISIBLE_DEVICES where set, checked against the facts above (probe/device_settings.h).
  std::vector<DeviceSettingCheck> settings;
};

struct RankRecord {
  // Identity fields: excluded from configuration digests.
  int rank = 0;
  std::string host;            // host name; for an image (--root) "image <name or path>"
  long pid = 0;                // the rank's process (not the probe's isolated child)
  // The rank whose probe this record is, when this rank took it instead of probing (same host,
  // same probe inputs: probe/probe_inputs.h); -1 when the rank probed itself.
  int probed_by = -1;

  std::string probe_version;   // denpex-probe version that wrote this record
  std::string arch;            // "x86_64", "aarch64": of the image under --root
  std::string arch_source;     // what said so: "this system", "--arch", "/bin/sh",
                               // "/lib/ld-linux-aarch64.so.1"
  bool container = false;      // /.dockerenv, /run/.containerenv, container= env; always
                               // true under --root (the record of an image)
  std::string mode;            // "live" or "static" (--root)
  std::string root;            // the --root directory, "" for live probes

  NcclInfo nccl;                          // the effective NCCL (PyTorch's when PyTorch is present)
  NcclInfo system_nccl;                   // what a non-PyTorch process resolves for libnccl.so.2
  std::vector<NcclCandidate> nccl_candidates;
  TorchInfo torch;
  FrameworkInfo jax;                      // JAX with its CUDA plugin (status missing without one)
  FrameworkInfo cupy;
  std::vector<NcclWheel> nccl_wheels;     // in every site-packages searched, in search order
  std::vector<AbiCheck> abi;
  CudaDriverInfo cuda_driver;
  PluginInfo net_plugin;
  PluginInfo tuner_plugin;
  PluginInfo profiler_plugin;
  std::map<std::string, std::string> nccl_env;     // NCCL_* from the environment
  std::map<std::string, std::string> nccl_conf;    // NCCL_* from /etc/nccl.conf, ~/.nccl.conf
  std::vector<std::string> untrusted_libraries;    // read statically, not loaded (as root)
  // Libraries of another machine the loader passes over (an x86_64 libnccl in an arm64 image):
  // "path (built for x86_64, the image is aarch64)".
  std::vector<std::string> foreign_libraries;
  std::vector<LoaderCheck> loader_checks;          // emulation vs the real loader (live only)
  // GPUs, RDMA devices, GPUDirect, NVSwitch. Records of older probes have none: status unknown,
  // why "not in the record".
  DevicesInfo devices;
  std::vector<std::string> probe_errors;           // steps that failed or timed out, with reason
};

// String forms used in JSON and messages.
const char* to_string(NcclStatus s);
const char* to_string(TorchStatus s);
const char* to_string(FrameworkStatus s);
const char* to_string(DriverStatus s);
const char* to_string(PluginStatus s);
const char* to_string(FactStatus s);
const char* to_string(SettingStatus s);

// The `host` of a record probed under --root starts with this: findings then name the image
// ("image /srv/pytorch.tar") instead of "rank 1 on <the machine that read it>".
constexpr const char* kImageHostPrefix = "image ";

void to_json(nlohmann::json& j, const RankRecord& r);

// Parses a record. Returns false and sets *error (naming the key and what is wrong) when `j` is
// not a rank record; never throws.
bool record_from_json(const nlohmann::json& j, RankRecord* out, std::string* error);

// The devices object of a record (identities included), and back: the probe's isolated child
// sends its facts this way. devices_from_json returns false and sets *error (naming the key) when
// a field has the wrong type; never throws.
void devices_to_json(nlohmann::json& j, const DevicesInfo& d);
bool devices_from_json(const nlohmann::json& j, DevicesInfo* out, std::string* error);

// The record as JSON without identity fields (rank, host, pid; and in `devices`, GPU bus
// locations and UUIDs and RDMA node GUIDs): two ranks with the same
// configuration give byte-identical dumps.
std::string configuration_json(const RankRecord& r);

// 64-bit FNV-1a of configuration_json(r).
unsigned long long configuration_digest(const RankRecord& r);

// "2.28.9" from a version code; pre-2.9 codes (< 2900) use base 1000. "" for code <= 0.
std::string nccl_version_from_code(int code);

}  // namespace denpex
