#include "discovery/discovery_documents.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "stores/audit_record.hpp"
#include "util/base64.hpp"
#include "util/digest.hpp"
#include "util/percent.hpp"

namespace toolport::discovery {

namespace {

constexpr std::string_view kServersPath = "/v0.1/servers";

// A reply's headers beside Content-Type: the SEP-2127 CORS set and caching.
std::vector<HttpHeader> common_headers(std::string_view content_type, const std::string& etag,
                                       std::string_view cache_control) {
    return {{"Content-Type", content_type},
            {"ETag", etag},
            {"Cache-Control", cache_control},
            {"Vary", "Host"},
            {"Access-Control-Allow-Origin", "*"},
            {"Access-Control-Allow-Methods", "GET"},
            {"Access-Control-Allow-Headers", "Content-Type, If-None-Match"},
            {"Access-Control-Expose-Headers", "ETag"},
            {"X-Content-Type-Options", "nosniff"}};
}

// Whether If-None-Match names `etag` (a list of entity tags, or "*"; weak comparison, as
// RFC 9110 §13.1.2 asks of If-None-Match).
bool none_match_hits(std::string_view header, std::string_view etag) {
    while (!header.empty()) {
        auto comma = header.find(',');
        auto item = header.substr(0, comma);
        header = comma == std::string_view::npos ? std::string_view() : header.substr(comma + 1);
        while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
        while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
        if (item == "*") return true;
        if (item.rfind("W/", 0) == 0) item.remove_prefix(2);
        if (item == etag) return true;
    }
    return false;
}

HttpAnswer reply(const HttpRequestView& req, unsigned status, std::string_view content_type, std::string body,
                 std::string_view cache_control) {
    // A strong validator over the exact bytes: a different byte is a different tag.
    const auto etag = "\"" + util::sha256_hex(body).substr(0, 32) + "\"";
    auto headers = common_headers(content_type, etag, cache_control);
    if (status == 200 && none_match_hits(req.header("If-None-Match"), etag)) {
        return {format_reply(req.version(), req.keep_alive(), 304, headers, {}), nullptr, nullptr};
    }
    return {format_reply(req.version(), req.keep_alive(), status, headers, std::move(body)), nullptr, nullptr};
}

// The registry API's error: {"error"} as its OpenAPI document words it, with the RFC 9457
// title, status and detail the official registry answers with.
HttpAnswer error_reply(const HttpRequestView& req, unsigned status, const std::string& message) {
    Json body = {{"title", std::string(reason_phrase(status))},
                 {"status", status},
                 {"detail", message},
                 {"error", message}};
    return reply(req, status, "application/json", body.dump(), "no-store");
}

struct Query {
    std::optional<std::string> cursor;
    std::size_t limit = kDefaultLimit;
    std::string search;
    std::optional<std::string> version;
    std::optional<std::chrono::system_clock::time_point> updated_since;
};

// The list's query string, or the reason it is refused (400).
std::variant<Query, std::string> parse_list_query(std::string_view query) {
    Query q;
    while (!query.empty()) {
        auto amp = query.find('&');
        auto pair = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (pair.empty()) continue;
        auto eq = pair.find('=');
        std::string raw_value(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1));
        std::replace(raw_value.begin(), raw_value.end(), '+', ' ');
        auto name = util::percent_decode(pair.substr(0, eq));
        auto value = util::percent_decode(raw_value);
        if (!name || !value) return std::string("the query string is not percent-encoded correctly");
        if (*name == "cursor") {
            q.cursor = *value;
        } else if (*name == "limit") {
            const auto& v = *value;
            if (v.empty() || v.size() > 6 || v.find_first_not_of("0123456789") != std::string::npos) {
                return fmt::format("limit must be a whole number from 1 to {}", kMaxLimit);
            }
            auto n = std::stoul(v);
            if (n < 1 || n > kMaxLimit) return fmt::format("limit must be from 1 to {} (got {})", kMaxLimit, n);
            q.limit = n;
        } else if (*name == "search") {
            q.search = *value;
        } else if (*name == "version") {
            if (value->empty()) return std::string("version must be 'latest' or an exact version");
            q.version = *value;
        } else if (*name == "updated_since") {
            auto t = stores::parse_time(*value, std::chrono::system_clock::now());
            if (!t || value->find('T') == std::string::npos) {
                return std::string("updated_since must be an RFC 3339 time such as 2025-08-07T13:15:04Z");
            }
            q.updated_since = *t;
        } else if (*name == "include_deleted") {
            if (*value != "true" && *value != "false") return std::string("include_deleted must be true or false");
        }
        // Other parameters are ignored, as the official registry ignores them.
    }
    return q;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

class DiscoveryDocuments final : public DiscoveryHandler {
public:
    explicit DiscoveryDocuments(Facts facts) : facts_(std::move(facts)) {
        for (const auto& entry : facts_.entries) {
            card_paths_.push_back(entry.profile.empty() ? facts_.mcp_path + "/server-card"
                                                        : facts_.mcp_path + "/" + entry.profile + "/server-card");
        }
    }

    bool handles(std::string_view path) const override {
        if (path == kServersPath || path.rfind(std::string(kServersPath) + "/", 0) == 0) return true;
        if (path == "/.well-known/ai-catalog.json" || path == "/.well-known/mcp/catalog.json") return true;
        return std::find(card_paths_.begin(), card_paths_.end(), path) != card_paths_.end();
    }

    HttpAnswer answer(const HttpRequestView& req, std::string_view path) override {
        if (req.method() == HttpMethod::options) {
            // A browser's preflight: the CORS headers, nothing else.
            return {format_reply(req.version(), req.keep_alive(), 204,
                                 {{"Access-Control-Allow-Origin", "*"},
                                  {"Access-Control-Allow-Methods", "GET"},
                                  {"Access-Control-Allow-Headers", "Content-Type, If-None-Match"},
                                  {"Access-Control-Max-Age", "86400"}},
                                 {}),
                    nullptr, nullptr};
        }
        if (req.method() != HttpMethod::get) {
            return {format_reply(req.version(), req.keep_alive(), 405,
                                 {{"Content-Type", "application/json"}, {"Allow", "GET, OPTIONS"}},
                                 Json{{"error", "Method Not Allowed: use GET"}}.dump()),
                    nullptr, nullptr};
        }
        const auto mcp_url = mcp_url_of(req);
        auto target = req.target();
        auto query = target.substr(std::min(target.size(), path.size() + 1));
        if (path == "/.well-known/ai-catalog.json" || path == "/.well-known/mcp/catalog.json") {
            return reply(req, 200, "application/ai-catalog+json", ai_catalog(facts_, mcp_url).dump(),
                         "public, max-age=3600");
        }
        for (std::size_t i = 0; i < card_paths_.size(); ++i) {
            if (path == card_paths_[i]) {
                return reply(req, 200, kServerCardType, server_card(facts_, facts_.entries[i], mcp_url).dump(),
                             "public, max-age=3600");
            }
        }
        if (path == kServersPath) return list(req, query, mcp_url);
        return versions(req, path.substr(kServersPath.size() + 1), mcp_url);
    }

private:
    // The MCP endpoint's URL as this client reached it: the configured one, else the Host
    // the request named (it passed the allowed-hosts check).
    std::string mcp_url_of(const HttpRequestView& req) const {
        if (!facts_.public_url.empty()) return facts_.public_url;
        return fmt::format("http://{}{}", req.header("Host"), facts_.mcp_path);
    }

    HttpAnswer list(const HttpRequestView& req, std::string_view query, const std::string& mcp_url) const {
        auto parsed = parse_list_query(query);
        if (auto* problem = std::get_if<std::string>(&parsed)) return error_reply(req, 400, "Bad Request: " + *problem);
        const auto& q = std::get<Query>(parsed);
        std::size_t start = 0;
        if (q.cursor && !q.cursor->empty()) {
            // The cursor is the last name of the page before, base64url: opaque to clients.
            auto after = util::base64url_decode(*q.cursor);
            auto it = after ? std::find_if(facts_.entries.begin(), facts_.entries.end(),
                                           [&](const Entry& e) { return e.name == *after; })
                            : facts_.entries.end();
            if (it == facts_.entries.end()) {
                return error_reply(req, 400,
                                   "Bad Request: the cursor is not one this registry gave (use metadata.nextCursor "
                                   "of the page before, unchanged)");
            }
            start = static_cast<std::size_t>(it - facts_.entries.begin()) + 1;
        }
        const auto needle = lower(q.search);
        const bool version_ok = !q.version || *q.version == "latest" || *q.version == facts_.version;
        const auto published = stores::parse_time(facts_.published_at, std::chrono::system_clock::now());
        const bool fresh = !q.updated_since || (published && *published > *q.updated_since);
        Json servers = Json::array();
        std::string last;
        bool more = false;
        for (std::size_t i = start; i < facts_.entries.size() && version_ok && fresh; ++i) {
            const auto& entry = facts_.entries[i];
            if (!needle.empty() && lower(entry.name).find(needle) == std::string::npos) continue;
            if (servers.size() == q.limit) {
                more = true;
                break;
            }
            servers.push_back(server_response(facts_, entry, mcp_url));
            last = entry.name;
        }
        Json metadata = {{"count", servers.size()}};
        if (more) metadata["nextCursor"] = util::base64url_encode(last);
        return reply(req, 200, "application/json", Json{{"servers", servers}, {"metadata", metadata}}.dump(),
                     "public, max-age=60");
    }

    // {name}/versions or {name}/versions/{version}, the name percent-encoded or not.
    HttpAnswer versions(const HttpRequestView& req, std::string_view rest, const std::string& mcp_url) const {
        std::string_view raw_name;
        std::optional<std::string_view> raw_version;
        constexpr std::string_view kVersions = "/versions";
        if (rest.size() > kVersions.size() && rest.substr(rest.size() - kVersions.size()) == kVersions) {
            raw_name = rest.substr(0, rest.size() - kVersions.size());
        } else if (auto at = rest.rfind("/versions/"); at != std::string_view::npos && at > 0) {
            raw_name = rest.substr(0, at);
            raw_version = rest.substr(at + kVersions.size() + 1);
        } else {
            return error_reply(req, 404,
                               "Not Found: use /v0.1/servers, /v0.1/servers/{name}/versions or "
                               "/v0.1/servers/{name}/versions/{version}");
        }
        auto name = util::percent_decode(raw_name);
        if (!name) return error_reply(req, 400, "Bad Request: the server name is not percent-encoded correctly");
        auto it = std::find_if(facts_.entries.begin(), facts_.entries.end(),
                               [&](const Entry& e) { return e.name == *name; });
        if (it == facts_.entries.end()) return error_reply(req, 404, "Server not found");
        if (!raw_version) {
            Json servers = Json::array({server_response(facts_, *it, mcp_url)});
            return reply(req, 200, "application/json", Json{{"servers", servers}, {"metadata", {{"count", 1}}}}.dump(),
                         "public, max-age=60");
        }
        auto version = util::percent_decode(*raw_version);
        if (!version) return error_reply(req, 400, "Bad Request: the version is not percent-encoded correctly");
        if (*version != "latest" && *version != facts_.version)
            return error_reply(req, 404, "Server version not found");
        return reply(req, 200, "application/json", server_response(facts_, *it, mcp_url).dump(), "public, max-age=60");
    }

    Facts facts_;
    std::vector<std::string> card_paths_;  // facts_.entries' Server Cards, in their order
};

}  // namespace

std::shared_ptr<DiscoveryHandler> make_discovery_handler(Facts facts) {
    return std::make_shared<DiscoveryDocuments>(std::move(facts));
}

}  // namespace toolport::discovery
