#include "probe/probe_context.h"

namespace denpex {

std::string env_value(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace denpex
