#include "auth/scope_policy.hpp"

#include <algorithm>

namespace toolport::auth {

namespace {

const std::vector<std::string>& lookup(const std::map<std::string, std::vector<std::string>, std::less<>>& map,
                                       std::string_view key) {
    static const std::vector<std::string> none;
    auto it = map.find(key);
    return it == map.end() ? none : it->second;
}

}  // namespace

std::vector<std::string> ScopePolicy::for_tool(std::string_view tool, std::string_view source) const {
    return scope_union(lookup(tools, tool), source.empty() ? std::vector<std::string>{} : lookup(sources, source));
}

std::vector<std::string> ScopePolicy::for_source(std::string_view source) const {
    if (source.empty()) return {};
    return lookup(sources, source);
}

std::vector<std::string> ScopePolicy::for_profile(std::string_view profile) const {
    if (profile.empty()) return {};
    return lookup(profiles, profile);
}

std::vector<std::string> scope_union(const std::vector<std::string>& a, const std::vector<std::string>& b) {
    std::vector<std::string> out;
    out.reserve(a.size() + b.size());
    for (const auto* list : {&a, &b}) {
        for (const auto& s : *list) {
            if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
        }
    }
    return out;
}

std::vector<std::string> missing_scopes(const std::vector<std::string>& held, const std::vector<std::string>& needed) {
    std::vector<std::string> out;
    for (const auto& s : needed) {
        if (std::find(held.begin(), held.end(), s) == held.end() && std::find(out.begin(), out.end(), s) == out.end()) {
            out.push_back(s);
        }
    }
    return out;
}

std::vector<std::string> split_scope(std::string_view scope) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (i < scope.size()) {
        auto end = scope.find(' ', i);
        if (end == std::string_view::npos) end = scope.size();
        if (end > i) out.emplace_back(scope.substr(i, end - i));
        i = end + 1;
    }
    return out;
}

std::string join_scopes(const std::vector<std::string>& scopes) {
    std::string out;
    for (const auto& s : scopes) out += (out.empty() ? "" : " ") + s;
    return out;
}

}  // namespace toolport::auth
