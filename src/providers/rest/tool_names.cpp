#include "providers/rest/tool_names.hpp"

#include <cctype>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

namespace toolport::rest {

namespace {

bool safe_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

std::string trimmed(std::string name, std::size_t limit) {
    if (name.size() > limit) name.resize(limit);
    while (!name.empty() && (name.back() == '_' || name.back() == '-')) name.pop_back();
    std::size_t start = 0;
    while (start < name.size() && (name[start] == '_' || name[start] == '-')) ++start;
    name.erase(0, start);
    return name.empty() ? "tool" : name;
}

}  // namespace

std::uint32_t name_hash(std::string_view text) {
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 16777619u;
    }
    return hash;
}

std::string safe_tool_name(std::string_view text, std::size_t limit) {
    std::string name;
    name.reserve(std::min(text.size(), limit + 1));
    bool gap = false;
    for (char c : text) {
        if (safe_char(c)) {
            if (gap && !name.empty()) name += '_';
            gap = false;
            name += c;
        } else {
            gap = true;
        }
        if (name.size() > limit) break;
    }
    return trimmed(std::move(name), limit);
}

std::string name_from_title(std::string_view title, std::size_t limit) {
    std::string name;
    bool gap = false;
    for (char c : title) {
        const unsigned char u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '_') {
            if (gap && !name.empty()) name += '-';
            gap = false;
            name += static_cast<char>(std::tolower(u));
        } else if (c == ' ' || c == '-' || c == '\t') {
            gap = true;
        }
        // Anything else (punctuation, bytes of non-ASCII letters) is dropped, as the
        // AgentPMT server did.
        if (name.size() > limit) break;
    }
    return trimmed(std::move(name), limit);
}

std::vector<std::string> unique_tool_names(const std::vector<std::string>& wanted,
                                           const std::vector<std::string>& catalog_names) {
    // For each wanted name, the smallest catalog name that wants it keeps it.
    std::map<std::string, std::string> keeper;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        auto [it, inserted] = keeper.emplace(wanted[i], catalog_names[i]);
        if (!inserted && catalog_names[i] < it->second) it->second = catalog_names[i];
    }
    std::vector<std::string> out(wanted.size());
    std::set<std::string> taken;
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        if (keeper[wanted[i]] == catalog_names[i] && taken.insert(wanted[i]).second) out[i] = wanted[i];
    }
    for (std::size_t i = 0; i < wanted.size(); ++i) {
        if (!out[i].empty()) continue;
        // Suffixed: hash of the catalog name, then of it with a counter if even that is taken.
        for (std::uint32_t round = 0;; ++round) {
            std::uint32_t hash = name_hash(round ? fmt::format("{}#{}", catalog_names[i], round) : catalog_names[i]);
            std::string suffix = fmt::format("_{:06x}", hash & 0xffffff);
            std::string base = wanted[i].substr(0, kMaxToolName - suffix.size());
            std::string name = base + suffix;
            if (taken.insert(name).second) {
                out[i] = name;
                break;
            }
        }
    }
    return out;
}

}  // namespace toolport::rest
