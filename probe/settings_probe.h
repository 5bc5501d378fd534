// NCCL settings and the identity of the process: every NCCL_* variable, the NCCL_* lines of
// /etc/nccl.conf and ~/.nccl.conf (NCCL reads both; NCCL_CONF_FILE replaces the user file),
// host name, pid, CPU architecture and whether it runs in a container.
#pragma once

#include <map>
#include <string>

#include "probe/probe_context.h"
#include "probe/record.h"

namespace denpex {

// NCCL_* variables of ctx.env (DENPEX_* and other variables are never recorded).
std::map<std::string, std::string> nccl_env_settings(const ProbeContext& ctx);

// NCCL_* assignments from the configuration files NCCL reads, as NCCL applies them: the user
// file (NCCL_CONF_FILE, else ~/.nccl.conf) first, then /etc/nccl.conf, and a variable already
// set is never overwritten, so the first file that sets it wins (environment variables win over
// both; the caller keeps them apart so a report can say where a setting came from). Unreadable
// files are skipped.
std::map<std::string, std::string> nccl_conf_settings(const ProbeContext& ctx);

// Parses "KEY=VALUE" lines ('#' comments, blank lines, surrounding spaces ignored).
std::map<std::string, std::string> parse_nccl_conf(const std::string& text);

// Fills host, pid, arch and container in *r.
void fill_identity(const ProbeContext& ctx, RankRecord* r);

}  // namespace denpex
