// What a probe's record depends on besides the files it reads, as one key: the environment but
// the variables a launcher sets differently for each rank of a host, the identity the process
// runs as, its working directory (a relative LD_LIBRARY_PATH entry resolves against it), the
// mount namespace and root it sees files through, the options that change the probe, and the
// probe's own version. Two processes of one host with the same key, probing at the same moment,
// get the same record but for its identity fields (rank, pid): the ranks of a torchrun node
// share one probe on that ground (collect/store_job.h).
#pragma once

#include <string>

#include "probe/probe.h"

namespace denpex {

// The key of `o` (hex, 16 digits). "" when an input cannot be read (no /proc: the mount
// namespace is unknown; no working directory), and then no record may be shared.
std::string probe_input_key(const ProbeOptions& o);

// Whether launchers set `name` per rank, so that it cannot change what a rank loads: RANK,
// LOCAL_RANK, GROUP_RANK, ROLE_RANK and TORCHELASTIC_ERROR_FILE (torchrun sets them per worker).
bool per_rank_variable(const std::string& name);

}  // namespace denpex
