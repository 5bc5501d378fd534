#include "probe/net_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

namespace denpex {

namespace {

// The address of an AF_INET/AF_INET6 entry as text; "" for other families.
std::string address_text(const sockaddr* sa) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(static_cast<const void*>(sa));
    if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf)) return buf;
  } else if (sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(static_cast<const void*>(sa));
    if (inet_ntop(AF_INET6, &in6->sin6_addr, buf, sizeof buf)) return buf;
  }
  return "";
}

}  // namespace

InterfaceFacts read_interfaces() {
  InterfaceFacts f;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    f.why = std::string("getifaddrs failed: ") + std::strerror(errno);
    return f;
  }
  std::map<std::string, NetInterface> by_name;
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_name) continue;
    NetInterface& i = by_name[a->ifa_name];
    i.name = a->ifa_name;
    i.running = i.running || (a->ifa_flags & IFF_RUNNING) != 0;
    if (!a->ifa_addr) continue;
    std::string addr = address_text(a->ifa_addr);
    if (!addr.empty()) i.addresses.push_back(std::move(addr));
  }
  ::freeifaddrs(list);
  for (auto& [name, i] : by_name) {
    std::sort(i.addresses.begin(), i.addresses.end());
    f.interfaces.push_back(std::move(i));
  }
  f.status = FactStatus::ok;
  return f;
}

}  // namespace denpex
