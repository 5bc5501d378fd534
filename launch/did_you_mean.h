// "did you mean": the nearest of a few known words to one a person mistyped (a subcommand, an
// option), by edit distance.
#pragma once

#include <string>
#include <vector>

namespace denpex {

// Levenshtein distance (insertions, deletions, substitutions; an adjacent swap counts once).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate nearest to `word`, if it is near enough to be what was meant: at most 2 edits
// and at most a third of the word's length (at least 1). "" when none is, when `word` is itself
// a candidate, or when two candidates are equally near. Never fails.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace denpex
