#include "probe/settings_probe.h"

#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probe/text.h"

namespace denpex {

std::map<std::string, std::string> nccl_env_settings(const ProbeContext& ctx) {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : ctx.env)
    if (k.rfind("NCCL_", 0) == 0) out[k] = v;
  return out;
}

std::map<std::string, std::string> parse_nccl_conf(const std::string& text) {
  std::map<std::string, std::string> out;
  for (std::string line : split_lines(text)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = trim(line.substr(0, eq));
    if (key.rfind("NCCL_", 0) == 0) out[key] = trim(line.substr(eq + 1));
  }
  return out;
}

std::map<std::string, std::string> nccl_conf_settings(const ProbeContext& ctx) {
  // NCCL (src/misc/param.cc, initEnv): the user file first (NCCL_CONF_FILE or ~/.nccl.conf),
  // then /etc/nccl.conf; setEnvFile never overrides a variable already set, so the first file
  // wins.
  std::vector<std::string> files;
  std::string conf = env_value(ctx, "NCCL_CONF_FILE");
  std::string home = env_value(ctx, "HOME");
  if (!conf.empty()) files.push_back(conf);
  else if (!home.empty()) files.push_back(join_path(home, ".nccl.conf"));
  files.push_back("/etc/nccl.conf");
  std::map<std::string, std::string> out;
  for (const auto& f : files) {
    std::string text;
    if (!read_small_file(ctx.loader.fs, f, 1 << 20, &text, nullptr)) continue;
    for (auto& [k, v] : parse_nccl_conf(text)) out.emplace(k, v);  // emplace: first file wins
  }
  return out;
}

void fill_identity(const ProbeContext& ctx, RankRecord* r) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) r->host = host;
  r->pid = static_cast<long>(::getpid());
  struct utsname u {};
  if (::uname(&u) == 0) r->arch = u.machine;
  struct stat st {};
  const FsView& fs = ctx.loader.fs;
  r->container = ::stat(host_path(fs, "/.dockerenv").c_str(), &st) == 0 ||
                 ::stat(host_path(fs, "/run/.containerenv").c_str(), &st) == 0 ||
                 !env_value(ctx, "container").empty() ||
                 !env_value(ctx, "KUBERNETES_SERVICE_HOST").empty();
}

}  // namespace denpex
