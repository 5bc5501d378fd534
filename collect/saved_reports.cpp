#include "collect/saved_reports.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace denpex {

namespace {

// Hostile inputs (a deeply nested array bomb) must not exhaust the stack of a recursive parse;
// nlohmann's SAX parser is iterative, so depth is checked while parsing.

bool parse_bounded(const std::string& text, nlohmann::json* out, std::string* error) {
  int depth = 0;
  bool too_deep = false;
  auto cb = [&](int d, nlohmann::json::parse_event_t ev, nlohmann::json&) {
    if (ev == nlohmann::json::parse_event_t::object_start ||
        ev == nlohmann::json::parse_event_t::array_start) {
      depth = d;
      if (d > 64) too_deep = true;
    }
    return !too_deep;
  };
  *out = nlohmann::json::parse(text, cb, false);
  if (too_deep) {
    *error = "nested more than 64 levels deep: not a denpex record";
    return false;
  }
  if (out->is_discarded()) {
    *error = "not valid JSON (truncated or corrupt)";
    return false;
  }
  (void)depth;
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

bool records_from_file(const std::string& path, std::vector<RankRecord>* out,
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
        out->push_back(std::move(r));
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
      std::vector<int> ranks = cj.value("ranks", std::vector<int>{rep.rank});
      std::vector<std::string> hosts = cj.value("hosts", std::vector<std::string>{rep.host});
      for (size_t i = 0; i < ranks.size(); ++i) {
        RankRecord r = rep;
        r.rank = ranks[i];
        // Which host each rank ran on is not kept per rank in a folded report; the group's
        // first host stands in when hosts and ranks do not pair up.
        r.host = hosts.size() == ranks.size() ? hosts[i] : (hosts.empty() ? rep.host : hosts[0]);
        out->push_back(std::move(r));
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
  out->push_back(std::move(r));
  return true;
}

}  // namespace

SavedRecords load_saved_records(const std::vector<std::string>& paths, int* renumbered) {
  SavedRecords res;
  *renumbered = 0;
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
  std::set<int> used;
  std::vector<RankRecord*> clashes;
  for (const auto& f : files) {
    std::string error;
    size_t before = res.records.size();
    if (!records_from_file(f, &res.records, &error)) {
      res.status = SavedStatus::bad_input;
      res.error = fmt::format("{}: {}", f, error);
      res.records.clear();
      return res;
    }
    (void)before;
  }
  for (auto& r : res.records)
    if (!used.insert(r.rank).second) clashes.push_back(&r);
  int next = used.empty() ? 0 : *used.rbegin() + 1;
  for (RankRecord* r : clashes) {
    r->rank = next++;
    ++*renumbered;
  }
  return res;
}

}  // namespace denpex
