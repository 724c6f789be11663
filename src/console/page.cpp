#include "console/page.hpp"

#include <string>

#include "console/console_reply.hpp"
#include "console/static_assets.hpp"
#include "http_client/body_decoder.hpp"
#include "util/ascii.hpp"

namespace toolport::console {

namespace {

// Trims spaces and tabs at both ends.
std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

// Calls `visit` with each comma-separated item of a header's value, trimmed.
template <typename Visit>
void for_each_item(std::string_view value, Visit visit) {
    while (!value.empty()) {
        auto comma = value.find(',');
        auto item = trim(value.substr(0, comma));
        if (!item.empty() && visit(item)) return;
        if (comma == std::string_view::npos) break;
        value.remove_prefix(comma + 1);
    }
}

// Accept-Encoding names gzip (or *) without q=0.
bool accepts_gzip(std::string_view accept_encoding) {
    bool accepted = false;
    for_each_item(accept_encoding, [&](std::string_view item) {
        auto semicolon = item.find(';');
        auto coding = util::to_lower_ascii(trim(item.substr(0, semicolon)));
        if (coding != "gzip" && coding != "x-gzip" && coding != "*") return false;
        bool zero = false;
        if (semicolon != std::string_view::npos) {
            auto params = trim(item.substr(semicolon + 1));
            if (params.size() >= 2 && (params[0] == 'q' || params[0] == 'Q') && params[1] == '=') {
                auto q = trim(params.substr(2));
                zero = !q.empty() && q.find_first_not_of("0.") == std::string_view::npos;
            }
        }
        accepted = !zero;
        return accepted;
    });
    return accepted;
}

// If-None-Match names this ETag (weakly compared, as the header is) or is "*".
bool matches_etag(std::string_view if_none_match, std::string_view etag) {
    bool match = false;
    for_each_item(if_none_match, [&](std::string_view tag) {
        if (tag.substr(0, 2) == "W/") tag.remove_prefix(2);
        match = tag == "*" || tag == etag;
        return match;
    });
    return match;
}

std::string inflate(std::string_view gzip_body) {
    http_client::BodyDecoder decoder("gzip", std::size_t(64) << 20);
    std::string body;
    decoder.feed(gzip_body, body);
    decoder.finish();
    return body;
}

}  // namespace

HttpAnswer serve_static(std::string_view path, const HttpRequestView& request) {
    // {console.path} itself: the page's addresses are relative (assets/app.js, api/me), so it
    // lives at {console.path}/; a permanent redirect there keeps them right.
    if (path.empty()) {
        auto target = request.target();
        auto query = target.find('?');
        std::string location(target.substr(0, query));
        location += '/';
        if (query != std::string_view::npos) location += target.substr(query);
        return reply_answer(request, 308, "no-cache", {{"Location", location}}, {});
    }
    if (path.front() == '/') path.remove_prefix(1);
    const StaticAsset* asset = find_static_asset(path.empty() ? "index.html" : path);
    if (asset == nullptr) {
        // A page of the console's own ({console.path}/calls): its navigation is client-side.
        auto last = path.substr(path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/') + 1);
        if (last.find('.') != std::string_view::npos || path.find('/') != std::string_view::npos) {
            return html_answer(request, 404, "Not Found", "The console has no file at this address.");
        }
        asset = find_static_asset("index.html");
    }
    std::vector<HttpHeader> headers{{"ETag", asset->etag}, {"Vary", "Accept-Encoding"}};
    if (matches_etag(request.header("If-None-Match"), asset->etag)) {
        return reply_answer(request, 304, "no-cache", headers, {});
    }
    headers.push_back({"Content-Type", asset->content_type});
    std::string body;
    if (accepts_gzip(request.header("Accept-Encoding"))) {
        headers.push_back({"Content-Encoding", "gzip"});
        body.assign(asset->gzip_body);
    } else {
        body = inflate(asset->gzip_body);
    }
    return reply_answer(request, 200, "no-cache", headers, std::move(body));
}

}  // namespace toolport::console
