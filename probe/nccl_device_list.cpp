#include "probe/nccl_device_list.h"

#include <cctype>

#include "probe/text.h"

namespace denpex {

namespace {

// A port field: digits only, else "any" (NCCL reads a port with atoi; a field that is not a
// number names no real port, and NCCL would then match nothing, which the caller reports).
int port_of(const std::string& field) {
  if (field.empty() || field.size() > 6) return -1;
  for (char c : field)
    if (!std::isdigit(static_cast<unsigned char>(c))) return -1;
  return std::stoi(field);
}

}  // namespace

NcclDeviceList parse_nccl_device_list(const std::string& value, bool with_ports) {
  NcclDeviceList list;
  std::string rest = value;
  if (!rest.empty() && rest[0] == '^') {
    list.exclude = true;
    rest.erase(0, 1);
  }
  if (!rest.empty() && rest[0] == '=') {
    list.exact = true;
    rest.erase(0, 1);
  }
  for (const std::string& item : split_nonempty(rest, ',')) {
    NcclDeviceEntry e;
    const std::size_t colon = item.find(':');
    e.name = item.substr(0, colon);
    if (e.name.empty()) continue;
    if (with_ports && colon != std::string::npos) {
      const std::size_t next = item.find(':', colon + 1);
      e.port = port_of(item.substr(colon + 1, next == std::string::npos ? next : next - colon - 1));
    }
    list.entries.push_back(e);
  }
  return list;
}

bool nccl_list_selects(const NcclDeviceList& list, const std::string& name, int port) {
  if (list.entries.empty()) return true;
  bool matched = false;
  for (const auto& e : list.entries) {
    const bool name_ok = list.exact ? name == e.name : name.compare(0, e.name.size(), e.name) == 0;
    const bool port_ok = e.port == -1 || port == -1 || e.port == port;
    if (name_ok && port_ok) {
      matched = true;
      break;
    }
  }
  return matched != list.exclude;
}

}  // namespace denpex
