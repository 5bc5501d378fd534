// Every finding code denpex-probe can emit, in one table: the code, its usual severity, the
// mode that emits it, what it means and the release that added it. Emitters name a code by its
// FindingCode value (code_name), so a code cannot be emitted without a row here;
// docs/finding-codes.md is generated from this table (finding_codes_markdown) and
// tests/compare/finding_codes_test.cpp checks both it and the contract's tables against it.
//
// Adding a code: a FindingCode value and a row in finding_codes.cpp in the same position, `since`
// the next release (the project's version in CMakeLists.txt, one minor up while unreleased),
// then regenerate docs/finding-codes.md (the test says how).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compare/finding.h"

namespace denpex {

// Where a code comes from.
enum class CodeMode {
  gate,         // rank records judged: under a launcher, alone, the prolog, --root, compare
  prolog,       // rank records judged as root, which is how the Slurm prolog runs
  image,        // a record read statically (--root, validate-image), or a baseline that pins it
  collectives,  // call sequences compared: `collectives`, and `diagnose` on COLL lines
  diagnose,     // a failed job's logs read by `diagnose`
  all,          // rank records judged anywhere, `diagnose`'s facts from logs included
};

const char* to_string(CodeMode m);

// Whether the user-facing contract lists the code, or this project added it.
enum class CodeOrigin { contract, extension };

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
};

struct FindingCodeInfo {
  FindingCode id;
  const char* code;            // "nccl-version-mismatch"
  Severity severity;           // the usual severity
  const char* severity_note;   // when it differs ("error with `--require-gpu`"), or ""
  CodeMode mode;
  CodeOrigin origin;
  const char* meaning;         // one sentence: when it is emitted (Markdown)
  const char* since;           // the release that added it, "0.1.0"
};

// The table, in FindingCode order (finding_codes.cpp checks the order at compile time).
const std::vector<FindingCodeInfo>& finding_codes();

// The code's name as emitted in reports ("nccl-version-mismatch"). Never fails: every
// FindingCode has a row.
const char* code_name(FindingCode c);

// The row of a code given by name; nullptr when it is not a finding code.
const FindingCodeInfo* find_finding_code(std::string_view code);

// docs/finding-codes.md, generated from the table (tests compare the checked-in page with it).
std::string finding_codes_markdown();

}  // namespace denpex
