#include "collect/saved_reports.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compare/bounded_json.h"

namespace denpex {

namespace {

bool parse_bounded(const std::string& text, nlohmann::json* out, std::string* error) {
  BoundedJson parsed = parse_bounded_json(text);
  switch (parsed.status) {
    case BoundedJsonStatus::ok: break;
    case BoundedJsonStatus::too_deep:
      *error = fmt::format("nested more than {} levels deep: not a denpex record", kMaxJsonDepth);
      return false;
    case BoundedJsonStatus::invalid:
      *error = "not valid JSON (truncated or corrupt)";
      return false;
  }
  *out = std::move(parsed.value);
  return true;
}

bool read_file(const std::string& path, std::string* text, std::string* error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    *error = std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *error = "not a regular file";
    return false;
  }
  if (st.st_size > kMaxRecordFileBytes) {
    *error = fmt::format("{} bytes, larger than the {} MiB a record file can be; not read",
                         st.st_size, kMaxRecordFileBytes >> 20);
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = std::strerror(errno);
    return false;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  *text = ss.str();
  return true;
}

bool records_from_file(const std::string& path, const std::function<void(RankRecord&&)>& out,
                       std::string* error) {
  std::string text;
  if (!read_file(path, &text, error)) return false;
  nlohmann::json j;
  if (!parse_bounded(text, &j, error)) return false;
  if (!j.is_object()) {
    *error = "not a JSON object";
    return false;
  }
  if (j.contains("schema")) {
    const auto& schema = j.at("schema");
    if (!schema.is_string() || schema.get<std::string>() != "denpex.report.v1") {
      *error = fmt::format("schema {} is not one this version reads (denpex.report.v1)",
                           schema.dump());
      return false;
    }
    // A cluster report: full records if it kept them, else one per configuration with the
    // configuration's ranks.
    if (j.contains("ranks") && j.at("ranks").is_array() && !j.at("ranks").empty()) {
      for (const auto& rj : j.at("ranks")) {
        RankRecord r;
        std::string e;
        if (!record_from_json(rj, &r, &e)) {
          *error = "a rank record inside: " + e;
          return false;
        }
        out(std::move(r));
      }
      return true;
    }
    if (!j.contains("configurations") || !j.at("configurations").is_array()) {
      *error = "a report with neither \"ranks\" nor \"configurations\"";
      return false;
    }
    for (const auto& cj : j.at("configurations")) {
      RankRecord rep;
      std::string e;
      if (!cj.is_object() || !cj.contains("record") || !record_from_json(cj.at("record"), &rep, &e)) {
        *error = "a configuration without a readable record" + (e.empty() ? "" : ": " + e);
        return false;
      }
      std::vector<int> ranks{rep.rank};
      if (cj.contains("ranks")) {
        ranks.clear();
        for (const auto& v : cj.at("ranks")) {
          // Integers only: a float rank would be an undefined conversion.
          if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > INT_MAX) {
            *error = "a configuration's \"ranks\" holds " +
                     v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) +
                     ", not a rank number";
            return false;
          }
          ranks.push_back(v.get<int>());
        }
      }
      std::vector<std::string> hosts = cj.value("hosts", std::vector<std::string>{rep.host});
      for (size_t i = 0; i < ranks.size(); ++i) {
        RankRecord r = rep;
        r.rank = ranks[i];
        // Which host each rank ran on is not kept per rank in a folded report; the group's
        // first host stands in when hosts and ranks do not pair up.
        r.host = hosts.size() == ranks.size() ? hosts[i] : (hosts.empty() ? rep.host : hosts[0]);
        out(std::move(r));
      }
    }
    return true;
  }
  RankRecord r;
  std::string e;
  if (!record_from_json(j, &r, &e)) {
    *error = "not a denpex rank record: " + e;
    return false;
  }
  out(std::move(r));
  return true;
}

}  // namespace

SavedVisit for_each_saved_record(const std::vector<std::string>& paths,
                                 const std::function<void(RankRecord&&)>& visit) {
  SavedVisit res;
  std::vector<std::string> files;
  for (const auto& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) {
      res.status = SavedStatus::bad_input;
      res.error = fmt::format("{}: {}", p, std::strerror(errno));
      return res;
    }
    if (!S_ISDIR(st.st_mode)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> names;
    if (DIR* d = ::opendir(p.c_str())) {
      while (struct dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".json") == 0) names.push_back(n);
      }
      ::closedir(d);
    }
    std::sort(names.begin(), names.end());
    if (names.empty()) {
      res.status = SavedStatus::bad_input;
      res.error = fmt::format("{}: directory holds no *.json rank records", p);
      return res;
    }
    for (const auto& n : names) files.push_back(p + "/" + n);
  }
  auto counted = [&](RankRecord&& r) {
    ++res.records;
    visit(std::move(r));
  };
  for (const auto& f : files) {
    std::string error;
    bool ok = false;
    try {
      ok = records_from_file(f, counted, &error);
    } catch (const std::exception& e) {
      // A key of the wrong type deep inside a report (nlohmann's type_error).
      error = e.what();
    }
    if (!ok) {
      res.status = SavedStatus::bad_input;
      res.error = fmt::format("{}: {}", f, error);
      return res;
    }
  }
  return res;
}

int renumber_repeated_ranks(std::vector<int>* ranks) {
  std::set<int> used;
  std::vector<size_t> clashes;
  for (size_t i = 0; i < ranks->size(); ++i)
    if (!used.insert((*ranks)[i]).second) clashes.push_back(i);
  int next = used.empty() ? 0 : *used.rbegin() + 1;
  for (size_t i : clashes) (*ranks)[i] = next++;
  return static_cast<int>(clashes.size());
}

SavedJob load_saved_job(const std::vector<std::string>& paths, size_t keep) {
  SavedJob job;
  // Configuration text -> group; per record only (rank, host, group) stays in memory.
  std::unordered_map<std::string, size_t> index;
  std::vector<int> ranks;
  std::vector<size_t> group_of;
  std::vector<std::string> hosts;
  SavedVisit v = for_each_saved_record(paths, [&](RankRecord&& r) {
    std::string key = configuration_json(r);
    auto it = index.find(key);
    if (it == index.end()) {
      it = index.emplace(std::move(key), job.groups.size()).first;
      ConfigGroup g;
      g.digest = configuration_digest(r);
      g.record = r;
      job.groups.push_back(std::move(g));
    }
    ranks.push_back(r.rank);
    hosts.push_back(r.host);
    group_of.push_back(it->second);
    if (job.kept.size() < keep) job.kept.push_back(std::move(r));
  });
  if (v.status != SavedStatus::ok) {
    job.status = v.status;
    job.error = v.error;
    job.groups.clear();
    job.kept.clear();
    return job;
  }
  job.renumbered = renumber_repeated_ranks(&ranks);
  for (size_t i = 0; i < job.kept.size(); ++i) job.kept[i].rank = ranks[i];
  for (size_t i = 0; i < ranks.size(); ++i) {
    ConfigGroup& g = job.groups[group_of[i]];
    g.ranks.push_back(ranks[i]);
    g.hosts.push_back(std::move(hosts[i]));
    // The representative speaks for the group's lowest rank, as group_records() has it.
    if (ranks[i] < g.record.rank || g.ranks.size() == 1) {
      g.record.rank = ranks[i];
      g.record.host = g.hosts.back();
    }
  }
  job.nranks = static_cast<int>(ranks.size());
  normalize_groups(&job.groups);
  return job;
}

}  // namespace denpex
