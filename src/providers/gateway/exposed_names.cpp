#include "providers/gateway/exposed_names.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "providers/rest/tool_names.hpp"

namespace toolport::gateway {

namespace {

constexpr std::size_t kMaxName = rest::kMaxToolName;

std::string identity_of(const NameRequest& request) { return request.prefix + '\0' + request.original; }

// "_" + 6 hex digits of a hash of what the name stands for (`round` > 0: once more, salted).
std::string hash_suffix(const NameRequest& request, std::uint32_t round = 0) {
    const std::string identity = identity_of(request);
    const auto hash = rest::name_hash(round ? fmt::format("{}#{}", identity, round) : identity);
    return fmt::format("_{:06x}", hash & 0xffffff);
}

// `name` made safe; when it does not fit, cut with a hash of what it stands for.
std::string fitted(const std::string& wanted, const NameRequest& request) {
    std::string safe = rest::safe_tool_name(wanted, 4 * kMaxName);
    if (safe.size() <= kMaxName) return safe;
    std::string suffix = hash_suffix(request);
    std::string base = safe.substr(0, kMaxName - suffix.size());
    while (!base.empty() && (base.back() == '_' || base.back() == '-')) base.pop_back();
    return base + suffix;
}

// Which of two requests for one name keeps it: the earlier upstream, then the smaller name.
bool keeps_before(const NameRequest& a, const NameRequest& b) {
    return std::tie(a.upstream_order, a.prefix, a.original) < std::tie(b.upstream_order, b.prefix, b.original);
}

// For each name in `names`, the index of the request that keeps it.
std::map<std::string, std::size_t> keepers_of(const std::vector<NameRequest>& requests,
                                              const std::vector<std::string>& names) {
    std::map<std::string, std::size_t> keeper;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        auto [it, inserted] = keeper.emplace(names[i], i);
        if (!inserted && keeps_before(requests[i], requests[it->second])) it->second = i;
    }
    return keeper;
}

}  // namespace

std::vector<std::string> expose_names(const std::vector<NameRequest>& requests, PrefixMode mode,
                                      const std::string& separator, const std::set<std::string>& reserved,
                                      std::vector<std::size_t>* yielded_to) {
    std::vector<std::string> plain(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) plain[i] = fitted(requests[i].original, requests[i]);
    // Who keeps each plain name: the upstream configured first.
    const auto plain_keeper = keepers_of(requests, plain);
    std::vector<std::size_t> yielded(requests.size(), kNoCollision);
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const std::size_t k = plain_keeper.at(plain[i]);
        if (k != i && requests[k].upstream_order != requests[i].upstream_order) yielded[i] = k;
    }
    // Under `always` every name is prefixed anyway: nobody yields to anybody.
    if (mode == PrefixMode::always) std::fill(yielded.begin(), yielded.end(), kNoCollision);
    if (yielded_to) *yielded_to = yielded;

    std::vector<std::string> wanted(requests.size());
    for (std::size_t i = 0; i < requests.size(); ++i) {
        bool prefixed = mode == PrefixMode::always;
        // Prefixed when an earlier upstream has the name (never because a later one does).
        if (mode == PrefixMode::conditional) prefixed = yielded[i] != kNoCollision || reserved.count(plain[i]) > 0;
        wanted[i] = prefixed ? fitted(requests[i].prefix + separator + requests[i].original, requests[i]) : plain[i];
    }
    if (mode == PrefixMode::never) {
        // The upstream configured first keeps a shared name; the others' entries are left out.
        std::vector<std::string> out(requests.size());
        const auto keeper = keepers_of(requests, wanted);
        for (std::size_t i = 0; i < requests.size(); ++i) {
            if (!reserved.count(wanted[i]) && keeper.at(wanted[i]) == i) out[i] = wanted[i];
        }
        return out;
    }
    // Even the prefixed name is another source's: tell it apart by a hash.
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (reserved.count(wanted[i])) {
            const std::string suffix = hash_suffix(requests[i]);
            wanted[i] = wanted[i].substr(0, kMaxName - suffix.size()) + suffix;
        }
    }
    // Names that still meet: the earliest upstream keeps the name, the others get a hash
    // of what they stand for (salted again while even that is taken).
    const auto keeper = keepers_of(requests, wanted);
    std::vector<std::string> out(requests.size());
    std::set<std::string> taken;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (keeper.at(wanted[i]) == i) {
            out[i] = wanted[i];
            taken.insert(wanted[i]);
        }
    }
    for (std::size_t i = 0; i < requests.size(); ++i) {
        if (!out[i].empty()) continue;
        for (std::uint32_t round = 0;; ++round) {
            const std::string suffix = hash_suffix(requests[i], round);
            std::string name = wanted[i].substr(0, kMaxName - suffix.size()) + suffix;
            if (!reserved.count(name) && taken.insert(name).second) {
                out[i] = std::move(name);
                break;
            }
        }
    }
    return out;
}

}  // namespace toolport::gateway
