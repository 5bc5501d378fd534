// The name of every finding code, as a type: a finding holds a FindingCode, never a string, so
// no code can be emitted without its row in the one table (compare/finding_codes.h: severity,
// mode, meaning, release). Its text in reports is code_name().
#pragma once

#include <cstring>

namespace denpex {

enum class FindingCode {
  nccl_version_mismatch,
  nccl_build_mismatch,
  nccl_missing,
  nccl_unloadable,
  nccl_abi_mismatch,
  torch_nccl_mismatch,
  torch_version_mismatch,
  cuda_driver_missing,
  cuda_driver_stub,
  cuda_driver_kernel_mismatch,
  cuda_driver_too_old,
  cuda_driver_version_mismatch,
  nccl_net_plugin_mismatch,
  nccl_env_mismatch,
  rank_timeout,
  probe_untrusted_library,
  collective_mismatch,
  collective_args_mismatch,
  collective_missing,
  initiating_failure,
  diagnose_inconclusive,
  cuda_driver_unusable,
  cuda_driver_minor_compat,
  cuda_driver_forward_compat,
  cuda_driver_unverified,
  torch_unreadable,
  torch_missing,
  probe_loader_disagreement,
  nccl_abi_unchecked,
  probe_error,
  internal_error,
  collective_ranks_absent,
  collective_input_unreadable,
  collective_calls_unattributed,
  rank_stuck,
  collective_in_flight,
  collective_rank_unseen,
  nccl_reported_mismatch,
  nccl_ras_mismatch,
  nccl_net_mismatch,
  diagnose_unreadable_lines,
  diagnose_lines_lost,
  ras_rank_dead,
  ras_rank_error,
  nccl_wheel_conflict,
  torch_nccl_pin_mismatch,
  input_cut,
  gpu_count_short,
  gpu_count_mismatch,
  gpu_model_mismatch,
  gpu_kernel_module_mismatch,
  rdma_hca_mismatch,
  rdma_firmware_mismatch,
  rdma_port_down,
  gpudirect_mismatch,
  nccl_socket_ifname_unmatched,
  nccl_ib_hca_unmatched,
  cuda_visible_devices_beyond,
  gpu_mig_mismatch,
  gpu_compute_mode_mismatch,
  gpu_lost,
  gpu_ecc_mode_mismatch,
  gpu_ecc_errors_pending,
  nvlink_down,
  fabric_manager_not_ready,
  container_visible_devices_unmatched,
  nccl_net_unavailable,
  nccl_topo_file_unreadable,
  gpu_shared_by_ranks,
};

// The code's name as emitted in reports (`nccl-version-mismatch`). Never fails: every
// FindingCode has a row in the table.
const char* code_name(FindingCode c);

// Orders codes by name, as reports list them.
struct CodeNameLess {
  bool operator()(FindingCode a, FindingCode b) const { return std::strcmp(code_name(a), code_name(b)) < 0; }
};

}  // namespace denpex
