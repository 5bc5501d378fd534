#include "compare/nccl_env.h"

namespace denpex {

std::map<std::string, std::string> effective_nccl_settings(const RankRecord& record) {
  std::map<std::string, std::string> settings = record.nccl_conf;
  for (const auto& [name, value] : record.nccl_env) settings[name] = value;
  return settings;
}

// Sources (NVIDIA/nccl, src/init.cc and src/transport/*.cc; NCCL user guide, "Environment
// Variables"; NVIDIA/nccl issues #234, #1328, #1739):
// - Each rank reads these variables for itself; NCCL does not exchange or reconcile them at init
//   (unlike channel counts, which are all-gathered and reduced), so two ranks can run a different
//   protocol or lay out their buffers differently for the same collective.
// - computeBuffSizes() sets comm->buffSizes[] from NCCL_{LL_,LL128_,}BUFFSIZE locally and every
//   transport derives its step size from it (stepSize = buffSizes[proto] / NCCL_STEPS), while the
//   sender writes into the receiver's buffer: a mismatch overruns or under-fills the peer's FIFO.
// - Transport selection runs canConnect() on each side with that side's settings; with IB
//   disabled on one node and not on the other, init hangs (issue #234).
// - The maintainers' first answer to "Message truncated" / "receiving N bytes instead of M" is
//   a version or configuration mismatch: "check for environment variables set on one rank but not
//   the other" (issue #1328).
const std::vector<WireVariable>& wire_variables() {
  // Function-local static: built once, read-only, no global initialisation order to worry about.
  static const std::vector<WireVariable> table = {
      {"NCCL_PROTO", "selects the protocol (LL, LL128, Simple) each collective uses; peers on "
                     "different protocols misread each other's data"},
      {"NCCL_ALGO", "selects the algorithm (Ring, Tree, CollNet, NVLS, PAT); ranks on different "
                    "algorithms wait for peers that never send"},
      {"NCCL_BUFFSIZE", "sets the Simple protocol buffer and step size; the sender steps through "
                        "the receiver's buffer with its own size"},
      {"NCCL_LL_BUFFSIZE", "sets the LL protocol buffer and step size (as NCCL_BUFFSIZE)"},
      {"NCCL_LL128_BUFFSIZE", "sets the LL128 protocol buffer and step size (as NCCL_BUFFSIZE)"},
      {"NCCL_P2P_NET_CHUNKSIZE", "sets how send/recv splits data over the network; peers must cut "
                                 "the same chunks"},
      {"NCCL_P2P_NVL_CHUNKSIZE", "sets how send/recv splits data over NVLink (as "
                                 "NCCL_P2P_NET_CHUNKSIZE)"},
      {"NCCL_P2P_PCI_CHUNKSIZE", "sets how send/recv splits data over PCI (as "
                                 "NCCL_P2P_NET_CHUNKSIZE)"},
      {"NCCL_NET", "forces the network transport (IB, Socket, a plugin's name); peers on different "
                   "networks cannot connect"},
      {"NCCL_NET_PLUGIN", "chooses the network plugin library; peers on different plugins cannot "
                          "connect"},
      {"NCCL_IB_DISABLE", "turns InfiniBand/RoCE off; a socket rank and an IB rank hang at init "
                          "(NVIDIA/nccl#234)"},
      {"NCCL_P2P_DISABLE", "turns the GPU peer-to-peer transport off on one side only; the two "
                           "sides of a connection choose different transports"},
      {"NCCL_P2P_LEVEL", "changes when the peer-to-peer transport is used (as NCCL_P2P_DISABLE)"},
      {"NCCL_SHM_DISABLE", "turns the shared-memory transport off (as NCCL_P2P_DISABLE)"},
      {"NCCL_NET_DISABLE_INTRA", "turns the network transport between GPUs of one node off (as "
                                 "NCCL_P2P_DISABLE)"},
      {"NCCL_CUMEM_ENABLE", "switches how GPU buffers are shared between processes (cuMem handles "
                            "or legacy CUDA IPC); the importer must use the exporter's kind"},
      {"NCCL_COLLNET_ENABLE", "makes the CollNet algorithms available on some ranks only, so their "
                              "algorithm choice differs"},
      {"NCCL_NVLS_ENABLE", "makes the NVLink SHARP algorithms available on some ranks only, so "
                           "their algorithm choice differs"},
      {"NCCL_TUNER_PLUGIN", "a tuner picks algorithm and protocol per call; different tuners "
                            "pick differently"},
  };
  return table;
}

const WireVariable* find_wire_variable(const std::string& name) {
  for (const auto& v : wire_variables())
    if (name == v.name) return &v;
  return nullptr;
}

}  // namespace denpex
