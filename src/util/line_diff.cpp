#include "util/line_diff.hpp"

#include <algorithm>
#include <cstdint>
#include <sstream>

#include <fmt/format.h>

namespace toolport::util {

namespace {

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::string line;
    std::istringstream in(text);
    while (std::getline(in, line)) lines.push_back(line);
    return lines;
}

constexpr std::size_t kMaxLines = 4000;

}  // namespace

std::vector<DiffLine> diff_lines(const std::string& before, const std::string& after) {
    const auto a = split_lines(before);
    const auto b = split_lines(after);
    std::vector<DiffLine> out;
    if (a.size() > kMaxLines || b.size() > kMaxLines) {
        for (const auto& line : a) out.push_back({'-', line});
        for (const auto& line : b) out.push_back({'+', line});
        return out;
    }
    // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::uint32_t> lcs((n + 1) * (m + 1), 0);
    auto at = [&](std::size_t i, std::size_t j) -> std::uint32_t& { return lcs[i * (m + 1) + j]; };
    for (std::size_t i = n; i-- > 0;) {
        for (std::size_t j = m; j-- > 0;) {
            at(i, j) = a[i] == b[j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        }
    }
    std::size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && a[i] == b[j]) {
            out.push_back({' ', a[i]});
            ++i;
            ++j;
        } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
            out.push_back({'+', b[j++]});
        } else {
            out.push_back({'-', a[i++]});
        }
    }
    // Removals before additions within each run of changes: easier to read.
    for (std::size_t k = 0; k < out.size();) {
        if (out[k].op == ' ') {
            ++k;
            continue;
        }
        std::size_t end = k;
        while (end < out.size() && out[end].op != ' ') ++end;
        std::stable_partition(out.begin() + static_cast<std::ptrdiff_t>(k),
                              out.begin() + static_cast<std::ptrdiff_t>(end),
                              [](const DiffLine& l) { return l.op == '-'; });
        k = end;
    }
    return out;
}

std::string unified_diff(const std::string& before, const std::string& after, const std::string& before_label,
                         const std::string& after_label, int context) {
    const auto lines = diff_lines(before, after);
    if (std::none_of(lines.begin(), lines.end(), [](const DiffLine& l) { return l.op != ' '; })) return {};
    std::string out = fmt::format("--- {}\n+++ {}\n", before_label, after_label);
    const std::size_t total = lines.size();
    const auto ctx = static_cast<std::size_t>(std::max(context, 0));
    std::size_t k = 0;
    while (k < total) {
        // The next change, and the hunk around it (changes closer than 2 × context join it).
        while (k < total && lines[k].op == ' ') ++k;
        if (k == total) break;
        std::size_t start = k > ctx ? k - ctx : 0;
        std::size_t end = k;
        while (true) {
            while (end < total && lines[end].op != ' ') ++end;
            std::size_t next = end;
            while (next < total && lines[next].op == ' ') ++next;
            if (next < total && next - end <= 2 * ctx) {
                end = next;
                continue;
            }
            end = std::min(total, end + ctx);
            break;
        }
        // Line numbers of the hunk in each text.
        std::size_t a_line = 1, b_line = 1;
        for (std::size_t x = 0; x < start; ++x) {
            if (lines[x].op != '+') ++a_line;
            if (lines[x].op != '-') ++b_line;
        }
        std::size_t a_count = 0, b_count = 0;
        for (std::size_t x = start; x < end; ++x) {
            if (lines[x].op != '+') ++a_count;
            if (lines[x].op != '-') ++b_count;
        }
        out += fmt::format("@@ -{},{} +{},{} @@\n", a_count ? a_line : a_line - 1, a_count,
                           b_count ? b_line : b_line - 1, b_count);
        for (std::size_t x = start; x < end; ++x) {
            out += lines[x].op;
            out += lines[x].text;
            out += '\n';
        }
        k = end;
    }
    return out;
}

}  // namespace toolport::util
