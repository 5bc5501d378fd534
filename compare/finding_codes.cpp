#include "compare/finding_codes.h"

#include <iterator>

namespace denpex {

namespace {

using C = FindingCode;
using S = Severity;
using M = CodeMode;
constexpr CodeOrigin kContract = CodeOrigin::contract;
constexpr CodeOrigin kExtension = CodeOrigin::extension;

constexpr FindingCodeInfo kTable[] = {
    {C::nccl_version_mismatch, "nccl-version-mismatch", S::error, "", M::all, kContract,
     "ranks get different NCCL versions (or differ from the baseline)", "0.1.0"},
    {C::nccl_build_mismatch, "nccl-build-mismatch", S::warning, "", M::all, kContract,
     "same NCCL version, built against different CUDA versions (`+cudaX.Y`)", "0.1.0"},
    {C::nccl_missing, "nccl-missing", S::error, "", M::gate, kContract,
     "a rank resolves no NCCL at all (not reported when a baseline pins no NCCL and no rank has "
     "one)",
     "0.1.0"},
    {C::nccl_unloadable, "nccl-unloadable", S::error, "", M::gate, kContract,
     "a rank's NCCL is there but unusable; the message says why (not an ELF, wrong machine, "
     "truncated, symbol missing, crashed, timed out)",
     "0.1.0"},
    {C::nccl_abi_mismatch, "nccl-abi-mismatch", S::error, "", M::all, kContract,
     "a library the process would load (PyTorch's `libtorch_cuda.so`, or any other that imports "
     "`nccl*` symbols) needs NCCL symbols that the NCCL it would get does not export: the "
     "`undefined symbol: ncclCommRegister` crash, caught before the job",
     "0.1.0"},
    {C::torch_nccl_mismatch, "torch-nccl-mismatch", S::warning,
     "error where the system NCCL wins inside PyTorch too", M::gate, kContract,
     "PyTorch's NCCL differs from the NCCL a non-PyTorch process on the same rank resolves (the "
     "system NCCL)",
     "0.1.0"},
    {C::torch_version_mismatch, "torch-version-mismatch", S::error, "", M::gate, kContract,
     "ranks run different PyTorch versions (or differ from the baseline)", "0.1.0"},
    {C::cuda_driver_missing, "cuda-driver-missing", S::warning, "error with `--require-gpu`",
     M::gate, kContract, "no NVIDIA driver library on the rank (not judged for images)", "0.1.0"},
    {C::cuda_driver_stub, "cuda-driver-stub", S::error, "", M::all, kContract,
     "the driver library resolved is the CUDA toolkit stub", "0.1.0"},
    {C::cuda_driver_kernel_mismatch, "cuda-driver-kernel-mismatch", S::error, "", M::all,
     kContract, "the user-space driver library and the loaded kernel module differ in version",
     "0.1.0"},
    {C::cuda_driver_too_old, "cuda-driver-too-old", S::error, "", M::all, kContract,
     "NCCL or PyTorch was built for a newer CUDA than the driver supports (since 0.2.0 not for a "
     "build of the same CUDA major release on a driver at or above that release's minimum: "
     "`cuda-driver-minor-compat`)",
     "0.1.0"},
    {C::cuda_driver_version_mismatch, "cuda-driver-version-mismatch", S::warning, "", M::gate,
     kContract, "hosts run different driver versions", "0.1.0"},
    {C::nccl_net_plugin_mismatch, "nccl-net-plugin-mismatch", S::error, "", M::all, kContract,
     "ranks differ in NCCL net plugin presence, path or plugin API version", "0.1.0"},
    {C::nccl_env_mismatch, "nccl-env-mismatch", S::warning,
     "error for variables that change the wire protocol (`NCCL_PROTO`, `NCCL_ALGO` and the "
     "others listed in [gate.md](gate.md#nccl_-variables-that-must-agree))",
     M::all, kContract, "`NCCL_*` settings differ between ranks", "0.1.0"},
    {C::rank_timeout, "rank-timeout", S::error, "", M::gate, kContract,
     "ranks that did not report before `--timeout` (alone and under `--root`: the probe did not "
     "finish, with the step it was stuck in)",
     "0.1.0"},
    {C::probe_untrusted_library, "probe-untrusted-library", S::warning, "", M::prolog, kContract,
     "running as root, a candidate library was writable by another user; it was read statically "
     "and not loaded",
     "0.1.0"},
    {C::collective_mismatch, "collective-mismatch", S::error, "", M::collectives, kContract,
     "ranks called different collectives at the same position of a communicator's sequence",
     "0.1.0"},
    {C::collective_args_mismatch, "collective-args-mismatch", S::error, "", M::collectives,
     kContract, "same collective, different count, datatype, reduction op or root", "0.1.0"},
    {C::collective_missing, "collective-missing", S::error, "", M::collectives, kContract,
     "a rank's sequence ends early or skips a call the others made", "0.1.0"},
    {C::initiating_failure, "initiating-failure", S::error, "", M::diagnose, kContract,
     "the rank whose own error (an exception, a CUDA or NCCL error, a crash) came first and "
     "explains the others; `ranks` is that rank",
     "0.2.0"},
    {C::diagnose_inconclusive, "diagnose-inconclusive", S::warning, "", M::diagnose, kContract,
     "the evidence read cannot decide (one rank, ranks of different process groups, lines "
     "lost); says what to add",
     "0.2.0"},
    {C::cuda_driver_unusable, "cuda-driver-unusable", S::warning, "error with `--require-gpu`",
     M::gate, kExtension, "a driver library that is there but errors, crashes or hangs", "0.1.0"},
    {C::cuda_driver_minor_compat, "cuda-driver-minor-compat", S::warning, "", M::gate, kExtension,
     "NCCL or PyTorch built for a newer CUDA of the same major release than the driver supports, "
     "on a driver at or above that release's minimum",
     "0.2.0"},
    {C::cuda_driver_forward_compat, "cuda-driver-forward-compat", S::warning, "", M::gate,
     kExtension,
     "the user-space driver is the cuda-compat package's and newer than the kernel module",
     "0.2.0"},
    {C::cuda_driver_unverified, "cuda-driver-unverified", S::warning, "", M::gate, kExtension,
     "`cuda_driver.status` is `version-unknown`: the driver checks were skipped", "0.2.0"},
    {C::torch_unreadable, "torch-unreadable", S::warning, "", M::gate, kExtension,
     "a PyTorch whose `version.py` cannot be read", "0.1.0"},
    {C::torch_missing, "torch-missing", S::warning, "", M::image, kExtension,
     "an image without PyTorch compared with a record that has it (`validate-image "
     "--against-record`, `compare`), or a rank without PyTorch under a baseline that pins it",
     "0.2.0"},
    {C::probe_loader_disagreement, "probe-loader-disagreement", S::warning, "", M::gate,
     kExtension,
     "the live child asked ld.so for a library and got another file than the emulation named; "
     "both paths given (`loader_checks[]`)",
     "0.2.0"},
    {C::nccl_abi_unchecked, "nccl-abi-unchecked", S::warning, "", M::gate, kExtension,
     "a dynamic symbol table that cannot be read: the ABI check could not be made (`abi[].error` "
     "says why)",
     "0.2.0"},
    {C::probe_error, "probe-error", S::warning, "", M::gate, kExtension,
     "a step that could not be completed, from the record's `probe_errors` (e.g. a FIFO at "
     "`/etc/ld.so.cache`)",
     "0.2.0"},
    {C::internal_error, "internal-error", S::error, "", M::all, kExtension,
     "denpex-probe itself failed while judging (out of memory, or a bug): the verdict is reject, "
     "never a silent pass; report it",
     "0.1.0"},
    {C::collective_ranks_absent, "collective-ranks-absent", S::warning, "", M::collectives,
     kExtension, "a communicator has N ranks but the input holds no calls of some of them",
     "0.1.0"},
    {C::collective_input_unreadable, "collective-input-unreadable", S::warning, "",
     M::collectives, kExtension,
     "input lines that look like NCCL or PyTorch records but cannot be read; the first is quoted",
     "0.1.0"},
    {C::collective_calls_unattributed, "collective-calls-unattributed", S::warning, "",
     M::collectives, kExtension,
     "calls on communicators whose identity across ranks is unknown (no Init COMPLETE line); not "
     "compared",
     "0.1.0"},
    {C::rank_stuck, "rank-stuck", S::error, "", M::collectives, kExtension,
     "(recorder traces) a rank entered a call and never returned while other ranks of its "
     "communicator went past it; names the rank, the call, since when, and where the others are",
     "0.2.0"},
    {C::collective_in_flight, "collective-in-flight", S::error,
     "warning naming the waiting ranks when no rank in the input is behind", M::collectives,
     kExtension, "(recorder traces) the rank that never entered the call the others wait in",
     "0.2.0"},
    {C::collective_rank_unseen, "collective-rank-unseen", S::warning, "", M::collectives,
     kExtension,
     "(recorder traces) NCCL is mapped in a rank but no call went through the recorder (static "
     "NCCL, a private handle); points to that rank's logs",
     "0.2.0"},
    {C::nccl_reported_mismatch, "nccl-reported-mismatch", S::warning, "", M::diagnose,
     kExtension,
     "NCCL's own \"Mismatched collective detected ... around rank N\", which a transport error "
     "can also cause",
     "0.2.0"},
    {C::nccl_ras_mismatch, "nccl-ras-mismatch", S::warning, "", M::diagnose, kExtension,
     "NCCL RAS reports ranks with different collective operation counts", "0.2.0"},
    {C::nccl_net_mismatch, "nccl-net-mismatch", S::warning, "", M::diagnose, kExtension,
     "NCCL's network transport reports a collective mismatch error", "0.2.0"},
    {C::diagnose_unreadable_lines, "diagnose-unreadable-lines", S::warning, "", M::diagnose,
     kExtension, "lines that look like records but cannot be read; counted and sampled", "0.2.0"},
    {C::diagnose_lines_lost, "diagnose-lines-lost", S::warning, "", M::diagnose, kExtension,
     "a gap in a rank's NCCL opCounts: a lost line, never blamed", "0.2.0"},
    {C::ras_rank_dead, "ras-rank-dead", S::error, "", M::diagnose, kExtension,
     "NCCL's RAS (`ncclras -f json`) considers a rank of a communicator dead: its process is "
     "gone and the others wait for it",
     "0.3.0"},
    {C::ras_rank_error, "ras-rank-error", S::error, "", M::diagnose, kExtension,
     "NCCL's RAS (`ncclras -f json`) reports an NCCL error on a rank (its init state or "
     "asynchronous error)",
     "0.3.0"},
    {C::nccl_wheel_conflict, "nccl-wheel-conflict", S::error, "", M::gate, kExtension,
     "two or more nvidia-nccl-cu* wheels in one site-packages: they share "
     "nvidia/nccl/lib/libnccl.so.2, the last installed wins, and uninstalling either deletes it",
     "0.3.0"},
    {C::torch_nccl_pin_mismatch, "torch-nccl-pin-mismatch", S::warning, "", M::gate, kExtension,
     "the NCCL wheel installed beside PyTorch is not the exact version its wheel requires "
     "(Requires-Dist)",
     "0.3.0"},
    {C::input_cut, "input-cut", S::warning, "", M::diagnose, kExtension,
     "(`diagnose` and `collectives`) a compressed input ended early: damaged (truncated, corrupt, "
     "trailing bytes) or past the decoded size or ratio limit (`--max-decoded-size`, "
     "`--max-decoded-ratio`); what decoded is judged, the rest is not, and no rank is blamed for "
     "what was cut; a recorder output (a Flight Recorder dump, RAS JSON) that was cut is not read",
     "0.3.0"},
    {C::gpu_count_short, "gpu-count-short", S::error, "", M::gate, kExtension,
     "a host shows fewer usable GPUs (`/proc/driver/nvidia/gpus`, excluded GPUs left out) than "
     "the ranks the job places on it: NCCL refuses two ranks on one GPU",
     "0.3.0"},
    {C::gpu_count_mismatch, "gpu-count-mismatch", S::warning, "", M::gate, kExtension,
     "where the job places the same number of ranks on every host, a host shows another number "
     "of usable GPUs than the others (a GPU fell off the bus, or is excluded)",
     "0.3.0"},
    {C::gpu_model_mismatch, "gpu-model-mismatch", S::warning, "", M::gate, kExtension,
     "a host's GPUs are another model than the other hosts'", "0.3.0"},
    {C::gpu_kernel_module_mismatch, "gpu-kernel-module-mismatch", S::warning, "", M::gate,
     kExtension,
     "hosts load different NVIDIA kernel module versions (not repeated where "
     "`cuda-driver-version-mismatch` names the same hosts)",
     "0.3.0"},
    {C::rdma_hca_mismatch, "rdma-hca-mismatch", S::warning, "", M::gate, kExtension,
     "a host has another number or model of RDMA devices (`/sys/class/infiniband`) than the "
     "other hosts: NCCL uses fewer rails there, or sockets",
     "0.3.0"},
    {C::rdma_firmware_mismatch, "rdma-firmware-mismatch", S::warning, "", M::gate, kExtension,
     "RDMA devices of the same model run another firmware on a host than on the other hosts",
     "0.3.0"},
    {C::rdma_port_down, "rdma-port-down", S::warning, "", M::gate, kExtension,
     "an RDMA port is not ACTIVE on a host where it is ACTIVE on the other hosts: NCCL leaves it "
     "out, or falls back to sockets",
     "0.3.0"},
    {C::gpudirect_mismatch, "gpudirect-mismatch", S::warning, "", M::gate, kExtension,
     "among hosts with RDMA devices, the GPUDirect RDMA peer-memory module (`nvidia_peermem` or "
     "`nv_peer_mem`) is loaded on some and not on others: NCCL quietly runs without GPUDirect "
     "there",
     "0.3.0"},
    {C::nccl_socket_ifname_unmatched, "nccl-socket-ifname-unmatched", S::error, "", M::gate,
     kExtension,
     "`NCCL_SOCKET_IFNAME` (environment or nccl.conf, with NCCL's `^`, `=` and prefix rules) "
     "selects no interface on a host that is running and has an address: NCCL's bootstrap finds "
     "no socket interface there and the job fails or hangs",
     "0.3.0"},
    {C::nccl_ib_hca_unmatched, "nccl-ib-hca-unmatched", S::warning, "", M::gate, kExtension,
     "`NCCL_IB_HCA` (with NCCL's `^`, `=`, prefix and `:port` rules) selects no RDMA device on a "
     "host, or only ports that are not ACTIVE: NCCL falls back to sockets there and the job runs "
     "at a fraction of its speed",
     "0.3.0"},
    {C::cuda_visible_devices_beyond, "cuda-visible-devices-beyond", S::error, "", M::gate,
     kExtension,
     "`CUDA_VISIBLE_DEVICES` names a GPU (an index or a UUID) that the host does not have: CUDA "
     "ignores it and every entry after it, so the rank gets fewer GPUs or none",
     "0.3.0"},
    {C::gpu_mig_mismatch, "gpu-mig-mismatch", S::error, "", M::gate, kExtension,
     "MIG is enabled on a host's GPUs (NVML) and not on the other hosts', or the other way round: "
     "CUDA there sees MIG instances, or no device, and NCCL cannot use them as the others' GPUs",
     "0.3.0"},
    {C::gpu_compute_mode_mismatch, "gpu-compute-mode-mismatch", S::warning, "", M::gate,
     kExtension,
     "a host's GPUs are in another compute mode (NVML) than the other hosts': in "
     "exclusive-process mode two ranks cannot share a GPU, in prohibited mode none can use it",
     "0.3.0"},
    {C::gpu_lost, "gpu-lost", S::error, "", M::gate, kExtension,
     "NVML reports a GPU of the host lost (`GPU_IS_LOST`; the driver's procfs still lists it): "
     "CUDA fails on it",
     "0.3.0"},
    {C::gpu_ecc_mode_mismatch, "gpu-ecc-mode-mismatch", S::warning, "", M::gate, kExtension,
     "a host's GPUs run with ECC off (NVML) where the other hosts' run with it on, or the other "
     "way round: memory errors there go undetected, and the GPUs differ in usable memory",
     "0.3.0"},
    {C::gpu_ecc_errors_pending, "gpu-ecc-errors-pending", S::error, "", M::gate, kExtension,
     "a GPU of the host has volatile uncorrected ECC errors, pages pending retirement, rows "
     "pending remapping or a failed remapping (NVML): it needs a reset (or service) before a job, "
     "which would otherwise fail with an uncorrectable ECC error",
     "0.3.0"},
    {C::nvlink_down, "nvlink-down", S::warning, "", M::gate, kExtension,
     "a host's GPUs have fewer NVLink links active (NVML) than the other hosts': NCCL routes "
     "around them, over fewer links or PCIe, and every collective waits for the slowest host",
     "0.3.0"},
    {C::fabric_manager_not_ready, "fabric-manager-not-ready", S::error, "", M::gate, kExtension,
     "a GPU's fabric registration (NVML's fabric state, the fabric manager's work on NVSwitch "
     "systems) has not started, is in progress or failed: CUDA fails with error 802, \"system not "
     "yet initialized\"",
     "0.3.0"},
    {C::container_visible_devices_unmatched, "container-visible-devices-unmatched", S::error, "",
     M::gate, kExtension,
     "`NVIDIA_VISIBLE_DEVICES` (the NVIDIA container runtime's `all`, `none`, `void`, indices, "
     "UUIDs) gives the container no GPU, or names a GPU the host does not have: the runtime "
     "refuses to start the container, or CUDA finds no device in it",
     "0.3.0"},
    {C::nccl_net_unavailable, "nccl-net-unavailable", S::error, "", M::gate, kExtension,
     "`NCCL_NET` names a network NCCL does not have on the host (`IB` with no usable RDMA port, a "
     "plugin's network with no net plugin): NCCL fails to initialise any network there",
     "0.3.0"},
    {C::nccl_topo_file_unreadable, "nccl-topo-file-unreadable", S::warning, "", M::gate,
     kExtension,
     "`NCCL_TOPO_FILE` names a file that does not exist or cannot be read on the host: NCCL "
     "ignores it (an INFO line only) and detects the topology itself, which on a VM can be wrong",
     "0.3.0"},
    {C::gpu_shared_by_ranks, "gpu-shared-by-ranks", S::error, "", M::diagnose, kExtension,
     "NCCL found two ranks of one communicator on the same GPU (`Duplicate GPU detected`): the "
     "device is assigned wrongly for both, neither started it; `ranks` names both",
     "0.3.0"},
};

constexpr std::size_t kRows = std::size(kTable);

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kRows; ++i)
    if (static_cast<std::size_t>(kTable[i].id) != i) return false;
  return true;
}

static_assert(rows_in_enum_order(), "kTable must list every FindingCode once, in enum order");
static_assert(kRows == static_cast<std::size_t>(FindingCode::gpu_shared_by_ranks) + 1,
              "every FindingCode needs a row in kTable");

const char* mode_meaning(CodeMode m) {
  switch (m) {
    case CodeMode::gate:
      return "rank records judged: under a launcher, alone, in the Slurm prolog, under `--root` "
             "(`denpex-validate-image`) and by `compare`";
    case CodeMode::prolog:
      return "as `gate`, only when running as root, which is how the Slurm prolog runs";
    case CodeMode::image:
      return "as `gate`, for a record read statically (`--root`, `denpex-validate-image`) or "
             "judged against a baseline";
    case CodeMode::collectives:
      return "call sequences compared: `collectives`, and `diagnose` on NCCL COLL lines";
    case CodeMode::diagnose:
      return "`diagnose` only: read from a failed job's logs";
    case CodeMode::all:
      return "as `gate`, and by `diagnose` for facts found in logs (the same rules give the same "
             "codes)";
  }
  return "";
}

std::string severity_text(const FindingCodeInfo& row) {
  std::string s = to_string(row.severity);
  if (*row.severity_note) s += std::string(" (") + row.severity_note + ")";
  return s;
}

void append_table(CodeOrigin origin, std::string* out) {
  *out += "| code | severity | mode | since | when |\n| --- | --- | --- | --- | --- |\n";
  for (const auto& row : kTable) {
    if (row.origin != origin) continue;
    *out += std::string("| `") + row.code + "` | " + severity_text(row) + " | " +
            to_string(row.mode) + " | " + row.since + " | " + row.meaning + " |\n";
  }
}

}  // namespace

const char* to_string(CodeMode m) {
  switch (m) {
    case CodeMode::gate: return "gate";
    case CodeMode::prolog: return "prolog";
    case CodeMode::image: return "image";
    case CodeMode::collectives: return "collectives";
    case CodeMode::diagnose: return "diagnose";
    case CodeMode::all: return "all";
  }
  return "?";
}

const std::vector<FindingCodeInfo>& finding_codes() {
  static const std::vector<FindingCodeInfo> table(std::begin(kTable), std::end(kTable));
  return table;
}

const char* code_name(FindingCode c) { return kTable[static_cast<std::size_t>(c)].code; }

const FindingCodeInfo* find_finding_code(std::string_view code) {
  for (const auto& row : kTable)
    if (code == row.code) return &row;
  return nullptr;
}

std::string finding_codes_markdown() {
  std::string out =
      "# Finding codes\n\n"
      "Every code denpex-probe emits. This page is generated from the table in\n"
      "`compare/finding_codes.cpp`; `tests/compare/finding_codes_test.cpp` fails when the two\n"
      "differ, and `tests/source/finding_codes.sh` when a source file emits a code that is not\n"
      "in the table. `denpex-probe` exits 1 (reject) when a finding of severity `error` is\n"
      "reported, and also for warnings with `--strict`.\n\n"
      "The mode says where a code comes from:\n\n"
      "| mode | emitted by |\n| --- | --- |\n";
  for (CodeMode m : {CodeMode::gate, CodeMode::prolog, CodeMode::image, CodeMode::all,
                     CodeMode::collectives, CodeMode::diagnose})
    out += std::string("| ") + to_string(m) + " | " + mode_meaning(m) + " |\n";
  out += "\n## In the contract\n\n";
  append_table(CodeOrigin::contract, &out);
  out += "\n## Extensions to the contract\n\n"
         "Codes this project added; the contract allows more codes than its own.\n\n";
  append_table(CodeOrigin::extension, &out);
  return out;
}

}  // namespace denpex
