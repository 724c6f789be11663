#include "providers/gateway/exposed_names.hpp"

#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "providers/rest/tool_names.hpp"

namespace toolport::gateway {

namespace {

constexpr std::size_t kMaxName = rest::kMaxToolName;

// `name` made safe; when it does not fit, cut with a hash of what it stands for.
std::string fitted(const std::string& wanted, const NameRequest& request) {
    std::string safe = rest::safe_tool_name(wanted, 4 * kMaxName);
    if (safe.size() <= kMaxName) return safe;
    std::string suffix = fmt::format("_{:06x}", rest::name_hash(request.prefix + '\0' + request.original) & 0xffffff);
    std::string base = safe.substr(0, kMaxName - suffix.size());
    while (!base.empty() && (base.back() == '_' || base.back() == '-')) base.pop_back();
    return base + suffix;
}

}  // namespace

std::vector<std::string> expose_names(const std::vector<NameRequest>& requests, PrefixMode mode,
                                      const std::string& separator, const std::set<std::string>& reserved) {
    // How many upstreams want each plain name (before any prefix).
    std::vector<std::string> plain(requests.size());
    std::map<std::string, int> holders;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        plain[i] = fitted(requests[i].original, requests[i]);
        ++holders[plain[i]];
    }
    std::vector<std::string> wanted(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        bool prefixed = mode == PrefixMode::always;
        if (mode == PrefixMode::conditional) prefixed = holders[plain[i]] > 1 || reserved.count(plain[i]) > 0;
        wanted[i] = prefixed ? fitted(requests[i].prefix + separator + requests[i].original, requests[i]) : plain[i];
    }
    if (mode == PrefixMode::never) {
        // The upstream listed first keeps a shared name (then the smaller original name).
        std::map<std::string, std::size_t> keeper;
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (reserved.count(wanted[i])) continue;
            auto [it, inserted] = keeper.emplace(wanted[i], i);
            const auto& k = requests[it->second];
            if (!inserted && std::tie(requests[i].upstream_order, requests[i].original) <
                                 std::tie(k.upstream_order, k.original)) {
                it->second = i;
            }
        }
        std::vector<std::string> out(requests.size());
        for (std::size_t i = 0; i < requests.size(); ++i) {
            auto it = keeper.find(wanted[i]);
            if (it != keeper.end() && it->second == i) out[i] = wanted[i];
        }
        return out;
    }
    // Names that still meet (two originals that only differ in characters made safe, or a
    // prefixed name equal to another upstream's plain one) are told apart by a hash.
    std::vector<std::string> identities(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) identities[i] = requests[i].prefix + '\0' + requests[i].original;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        // Even the prefixed name is another source's: tell it apart by a hash.
        if (reserved.count(wanted[i])) {
            std::string suffix =
                fmt::format("_{:06x}", rest::name_hash(requests[i].prefix + '\0' + requests[i].original) & 0xffffff);
            wanted[i] = wanted[i].substr(0, kMaxName - suffix.size()) + suffix;
        }
    }
    return rest::unique_tool_names(wanted, identities);
}

}  // namespace toolport::gateway
