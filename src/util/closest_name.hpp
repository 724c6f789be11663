// The name a user probably meant: for "did you mean" in the messages about unknown keys,
// packs and tools.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::util {

// Edits (insertions, deletions, substitutions, swaps of neighbours) from `a` to `b`,
// letters compared without case.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate closest to `typed` when it is close enough to be a likely typo (at most a
// third of the longer name's letters differ, and at most 3), else nullopt; the first of
// equally close ones.
std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& candidates);

// " (did you mean \"X\"?)" for the closest candidate, or "" when none is close.
std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates);

}  // namespace toolport::util
