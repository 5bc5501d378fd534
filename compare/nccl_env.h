// NCCL_* settings as NCCL sees them, and which of them change what goes on the wire.
//
// NCCL reads /etc/nccl.conf (and ~/.nccl.conf or $NCCL_CONF_FILE) at init and applies each line
// with setenv(name, value, 0): a variable already in the environment wins over the file. The
// effective setting of a rank is therefore nccl_conf overlaid by nccl_env.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "probe/record.h"

namespace denpex {

// The effective NCCL_* settings of a rank: nccl_conf, overridden by nccl_env.
std::map<std::string, std::string> effective_nccl_settings(const RankRecord& record);

// One entry of the table of variables whose disagreement between ranks breaks communication.
struct WireVariable {
  const char* name;    // e.g. "NCCL_PROTO"
  const char* reason;  // why ranks must agree, one sentence for docs/gate.md and messages
};

// The variables that change the protocol, algorithm, buffer layout or transport, so that ranks
// that disagree on them hang, fail with "Message truncated", or corrupt data. A difference in
// any of these is an error; a difference in any other NCCL_* variable is a warning.
// docs/gate.md copies this table.
const std::vector<WireVariable>& wire_variables();

// The table entry for `name`, or nullptr when the variable does not change the wire protocol.
const WireVariable* find_wire_variable(const std::string& name);

}  // namespace denpex
