#include "console/query_string.hpp"

#include "util/percent.hpp"

namespace toolport::console {

namespace {
std::optional<std::string> decode(std::string_view text) {
    std::string spaced(text);
    for (char& c : spaced) {
        if (c == '+') c = ' ';
    }
    return util::percent_decode(spaced);
}
}  // namespace

std::optional<QueryParameters> parse_query(std::string_view query) {
    QueryParameters pairs;
    while (!query.empty()) {
        const auto amp = query.find('&');
        const auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (pair.empty()) continue;
        const auto eq = pair.find('=');
        auto name = decode(pair.substr(0, eq));
        auto value = decode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        if (!name || !value) return std::nullopt;
        pairs.emplace_back(std::move(*name), std::move(*value));
    }
    return pairs;
}

}  // namespace toolport::console
