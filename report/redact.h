// --redact: a report that can go into a public ticket. Host names, IP addresses, paths and user
// names are replaced by stable placeholders ("host-1", "10.0.0.1", "/path-1", "user-1"),
// assigned in order of first appearance, the same original always giving the same placeholder,
// in the JSON report and in every text made from it (the text report, the HTML page).
//
// What is learnt, from a finished JSON report of any mode (gate, compare, collectives, diagnose):
//  - hosts: the values of "host" and "hosts" keys, the host of "processes" entries
//    ("node01:1234"), the host of an NCCL line header ("node01:1234:1240 [3] NCCL ..."),
//    domain names (a dotted name whose last label is a top-level domain or one of whose labels
//    holds a digit or a hyphen: "ng30903-ib.narval.calcul.quebec"), "ip-10-1-2-3" names, the
//    host of "process node01:1234" and of "user@node01", and a known host wherever it stands
//    between a word's separators ("node01-ib", "node01.cluster", "03-node01-rank2.log");
//  - IP addresses: IPv4 (loopback 127.x and 0.0.0.0 are kept: they identify nobody and a
//    MASTER_ADDR of 127.0.0.1 on a multi-node job is itself a finding) and IPv6 with "::" or
//    all eight groups;
//  - paths: the directory of every absolute path outside the system's own (/usr, /lib*, /bin,
//    /sbin, /etc, /proc, /sys, /dev, /run and /tmp itself): "/home/alice/venv/lib/python3.11
//    /site-packages/torch/lib/libtorch_cuda.so" becomes "/path-1/site-packages/torch/lib/
//    libtorch_cuda.so" (the part from site-packages on and the file name are kept: they say
//    which library it is);
//  - user names: the component after /home/, /Users/ or /scratch/, "user" keys, and the user
//    of "user@host".
// Placeholders never equal an original learnt before them. Folded host lists ("node[01-04]")
// are rewritten as the fold of their placeholders.
#pragma once

#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace denpex {

class Redactor {
 public:
  // Learns the names in `report` in document order. Never fails; anything that is not an
  // object or array yields a redactor that only learns from what it rewrites later.
  static Redactor from_report(const nlohmann::json& report);

  // `report` with every string value and key rewritten, and "redacted": true at the top level
  // (when `report` is an object). Never throws for a parsed document.
  nlohmann::json apply(const nlohmann::json& report);

  // `text` rewritten with the same mapping. Names the report did not hold are learnt here and
  // get the next placeholders, so text and JSON stay consistent.
  std::string apply(const std::string& text);

  // original -> placeholder, in the order assigned (for tests and for --redact's own report).
  const std::vector<std::pair<std::string, std::string>>& assigned() const { return order_; }

 private:
  enum class Kind { host, ip, user, dir };
  void learn_tree(const nlohmann::json& j, const std::string& key);
  void learn_text(const std::string& s);
  void learn_paths(const std::string& s);
  void learn_words(const std::string& s);
  std::unordered_map<std::string, std::string>& map_of(Kind kind);
  void note(Kind kind, const std::string& original);
  void assign();
  std::string rewrite(const std::string& s);
  std::string rewrite_paths(const std::string& s);
  std::string rewrite_words(const std::string& s);
  std::string word(const std::string& w);
  std::string host_or_word(const std::string& w);
  bool folded(const std::string& s, std::size_t start, std::size_t run_end, std::string* out, std::size_t* end);
  nlohmann::json rewrite_tree(const nlohmann::json& j);

  std::unordered_map<std::string, std::string> hosts_, ips_, users_, dirs_;
  std::map<std::string, int> next_;                  // per kind of placeholder: the last number given
  std::vector<std::pair<Kind, std::string>> pending_;  // learnt, no placeholder yet
  std::unordered_set<std::string> used_;              // placeholders given
  std::vector<std::pair<std::string, std::string>> order_;
};

}  // namespace denpex
