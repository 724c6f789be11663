// A line diff of two texts (longest common subsequence), for showing what changed in a
// definition: as a unified diff for terminals, or as aligned rows for a side-by-side view.
//
//   for (const auto& line : diff_lines(before, after)) ...   // {' ', "same"}, {'-', "old"}, {'+', "new"}
//   std::string text = unified_diff(before, after, "pinned", "current");
#pragma once

#include <string>
#include <vector>

namespace toolport::util {

struct DiffLine {
    char op;  // ' ' in both, '-' only before, '+' only after
    std::string text;
};

// Every line of both texts in order. Texts of more than 4,000 lines each are compared as
// wholes (all of one removed, all of the other added): the table would be too large.
std::vector<DiffLine> diff_lines(const std::string& before, const std::string& after);

// `--- before_label` / `+++ after_label`, then hunks with `context` unchanged lines around
// each change; "" when the texts are the same.
std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_label,
                         const std::string& after_label, int context = 3);

}  // namespace toolport::util
