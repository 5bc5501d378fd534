// Compact, human-readable names for sets of hosts and ranks, so that a finding about 4,096 ranks
// on 512 hosts still fits on a line: hosts in Slurm hostlist style ("node[001-004,009],gpu7"),
// ranks as ranges ("0-3,7").
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace denpex {

// Folds host names the way Slurm's hostlist does: names that share a prefix and end in a number
// of the same zero-padded width become "prefix[a-b,c]"; a lone name is printed as is; names
// without a trailing number are listed unchanged. Duplicates and empty names are dropped. Groups
// are ordered by prefix, then by width; numbers within a group ascend.
//
// "node1" and "node01" are different hosts and stay in different groups. An unpadded number
// joins a padded group of its own width ("node100" with "node001" -> "node[001,100]").
// Trailing numbers longer than 18 digits are treated as part of the name (no overflow).
// Never fails: the empty list gives "".
std::string fold_hosts(std::vector<std::string> hosts);

// "0-3,7" from {7, 0, 1, 2, 3}: sorted, duplicates dropped, consecutive runs as "a-b".
// The empty list gives "".
std::string rank_ranges(const std::vector<int>& ranks);

// Shortens a comma-separated list (a rank_ranges or fold_hosts result) so that messages stay one
// line at any scale: keeps at most `max_chars` characters, cut after an item (preferring a comma
// outside brackets), and appends ",..." (",...]" when the cut falls inside a bracket group, so
// the text stays well formed). Returns `list` unchanged when it already fits.
std::string abbreviate_list(const std::string& list, std::size_t max_chars);

// "rank 3", "ranks 0-3,7": the subject of a message about ranks, counted and ranged after
// duplicates are dropped; a long list is abbreviated (the finding's JSON keeps every rank).
// The empty list gives "no ranks".
std::string rank_subject(const std::vector<int>& ranks);

// "2147483646 ranks (0-5,7-2147483646)": the subject of a message about a rank set given as
// inclusive ranges (sorted, disjoint) and counted (`total`), for sets too large to list;
// `more` says ranges were left off the list. Abbreviated like rank_subject.
std::string ranges_subject(const std::vector<std::pair<int, int>>& ranges, long long total, bool more);

// "rank 3 on node2", "ranks 0-3,7 on node[1-2]", "ranks 4-5" (no hosts known): the subject of a
// finding's message. Long lists are abbreviated (the finding's JSON keeps every rank and host).
std::string rank_phrase(const std::vector<int>& ranks, const std::vector<std::string>& hosts);

}  // namespace denpex
