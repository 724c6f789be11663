#include "providers/tango/envelope.hpp"

#include <cctype>

#include "providers/tango/tango_api.hpp"
#include "util/percent.hpp"

namespace toolport::tango {

namespace {

// The value of `name` in a URL's query ("…?limit=3&cursor=abc" → "abc").
std::optional<std::string> query_value(const std::string& url, const std::string& name) {
    auto q = url.find('?');
    if (q == std::string::npos) return std::nullopt;
    std::string_view rest(url);
    rest.remove_prefix(q + 1);
    while (!rest.empty()) {
        auto amp = rest.find('&');
        auto pair = rest.substr(0, amp);
        auto eq = pair.find('=');
        if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
            return util::percent_decode(pair.substr(eq + 1));
        }
        if (amp == std::string_view::npos) break;
        rest.remove_prefix(amp + 1);
    }
    return std::nullopt;
}

long long count_of(const Json& body) {
    auto it = body.find("count");
    return it != body.end() && it->is_number() ? it->get<long long>() : 0;
}

Json rows_of(const Json& body) {
    auto it = body.find("results");
    return it != body.end() && it->is_array() ? *it : Json::array();
}

}  // namespace

Page read_cursor_page(const Json& body) {
    Page page;
    page.total = count_of(body);
    page.rows = rows_of(body);
    auto next = body.find("next");
    if (next != body.end() && next->is_string()) {
        if (auto c = body.find("cursor"); c != body.end() && c->is_string() && !c->get<std::string>().empty()) {
            page.next_cursor = c->get<std::string>();
        } else {
            page.next_cursor = query_value(next->get<std::string>(), "cursor");
        }
    }
    return page;
}

Page read_numbered_page(const Json& body, int page_number) {
    Page page;
    page.total = count_of(body);
    page.rows = rows_of(body);
    auto next = body.find("next");
    if (next != body.end() && next->is_string()) {
        auto n = query_value(next->get<std::string>(), "page");
        int following = page_number + 1;
        if (n) {
            try {
                following = std::stoi(*n);
            } catch (const std::logic_error&) {}
        }
        page.next_cursor = "page:" + std::to_string(following);
    }
    return page;
}

Json envelope(Json data, long long total, Json filters, int limit, const std::optional<std::string>& next_cursor,
              std::chrono::milliseconds duration, int api_calls) {
    const auto returned = data.size();
    Json pagination = {{"limit", limit}, {"has_more", next_cursor.has_value()}};
    pagination["next_cursor"] = next_cursor ? Json(*next_cursor) : Json();
    return {{"data", std::move(data)},
            {"total", total},
            {"returned", returned},
            {"filters", std::move(filters)},
            {"pagination", std::move(pagination)},
            {"execution", {{"duration_ms", duration.count()}, {"cached", false}, {"api_calls", api_calls}}}};
}

void drop_nulls(Json& value) {
    if (value.is_object()) {
        for (auto it = value.begin(); it != value.end();) {
            if (it->is_null()) {
                it = value.erase(it);
            } else {
                drop_nulls(*it);
                ++it;
            }
        }
    } else if (value.is_array()) {
        for (auto& item : value) drop_nulls(item);
    }
}

void mark_cached(Json& env, std::chrono::milliseconds duration) {
    if (!env.is_object() || !env.contains("execution")) return;
    env["execution"] = {{"duration_ms", duration.count()}, {"cached", true}, {"api_calls", 0}};
}

}  // namespace toolport::tango
