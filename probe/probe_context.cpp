#include "probe/probe_context.h"

namespace denpex {

std::string env_value(const ProbeContext& ctx, const std::string& name) {
  auto it = ctx.env.find(name);
  return it == ctx.env.end() ? "" : it->second;
}

}  // namespace denpex
