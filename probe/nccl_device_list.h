// NCCL's syntax for the settings that pick devices by name (NCCL_SOCKET_IFNAME, NCCL_IB_HCA),
// as NCCL's own parser reads them: at most one leading '^' (the list excludes), then at most one
// '=' (names are exact, not prefixes), both for the whole list; entries split at ','; each entry
// `name[:port[:...]]`, an entry with an empty name dropped. An empty list selects everything.
#pragma once

#include <string>
#include <vector>

namespace denpex {

struct NcclDeviceEntry {
  std::string name;  // a prefix, or the exact name when the list is exact
  int port = -1;     // -1: any port (no port given, or a field that is not a number)
};

struct NcclDeviceList {
  bool exclude = false;  // '^': the entries name what NCCL leaves out
  bool exact = false;    // '=': whole names, not prefixes
  std::vector<NcclDeviceEntry> entries;
};

// The list in `value`. `with_ports`: read the field after the first ':' as a port
// (NCCL_IB_HCA); sockets ignore ports. Never fails: text NCCL would skip is skipped.
NcclDeviceList parse_nccl_device_list(const std::string& value, bool with_ports);

// Whether NCCL would use device `name` (and port `port`, -1 for a device without ports) under
// `list`: an entry matches by prefix (or whole name when exact) and by port when both sides
// give one; the result is inverted for an excluding list. An empty list selects everything.
bool nccl_list_selects(const NcclDeviceList& list, const std::string& name, int port);

}  // namespace denpex
