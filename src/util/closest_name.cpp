#include "util/closest_name.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "util/ascii.hpp"

namespace toolport::util {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    auto lower = [](char c) { return to_lower_ascii(c); };
    // Optimal string alignment: Levenshtein plus transposition of two neighbours ("comamnd").
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
            }
        }
    }
    return d[a.size()][b.size()];
}

std::optional<std::string> closest_name(std::string_view typed, const std::vector<std::string>& candidates) {
    if (typed.size() > 200) return std::nullopt;  // no typo of a short name, and quadratic to compare
    std::optional<std::string> best;
    std::size_t best_distance = 0;
    for (const auto& candidate : candidates) {
        const std::size_t distance = edit_distance(typed, candidate);
        const std::size_t longer = std::max(typed.size(), candidate.size());
        if (distance == 0 || distance > 3 || distance * 3 > longer) continue;
        if (!best || distance < best_distance) {
            best = candidate;
            best_distance = distance;
        }
    }
    return best;
}

std::string did_you_mean(std::string_view typed, const std::vector<std::string>& candidates) {
    auto closest = closest_name(typed, candidates);
    return closest ? fmt::format(" (did you mean \"{}\"?)", *closest) : std::string();
}

}  // namespace toolport::util
