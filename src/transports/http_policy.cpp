#include "transports/http_policy.hpp"

#include <openssl/crypto.h>

#include <algorithm>
#include <cctype>

#include "util/ascii.hpp"
#include "util/digest.hpp"
#include "util/http_text.hpp"
#include "util/json.hpp"
#include "util/sanitize.hpp"
#include "util/session_id.hpp"

namespace toolport::http_policy {

namespace {

bool loopback_bind(const HttpOptions& o) { return is_loopback_host(o.host); }

}  // namespace

namespace {
// A dotted-quad IPv4 address in 127.0.0.0/8 (not a DNS name that merely starts with "127."):
// four parts of one to three digits, each at most 255, the first "127". Runs on every request
// (the Host header, and the address the server is bound to), so it reads the text in place.
bool is_ipv4_loopback(std::string_view h) {
    int parts = 0;
    std::size_t i = 0;
    while (i <= h.size()) {
        std::size_t end = i;
        unsigned value = 0;
        while (end < h.size() && h[end] != '.') {
            const char c = h[end];
            if (c < '0' || c > '9' || end - i == 3) return false;
            value = value * 10 + static_cast<unsigned>(c - '0');
            ++end;
        }
        if (end == i || value > 255) return false;
        if (parts == 0 && h.substr(i, end - i) != "127") return false;
        ++parts;
        i = end + 1;
    }
    return parts == 4;
}
}  // namespace

namespace {
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
// A reg-name or IPv4 address character (RFC 3986 §3.2.2: unreserved, pct-encoded, sub-delims).
bool is_reg_name_char(char c) {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' || c == '-' ||
           std::string_view("_~%!$&'()*+,;=").find(c) != std::string_view::npos;
}
}  // namespace

std::optional<std::string_view> authority_host(std::string_view authority) {
    std::string_view host;
    std::string_view rest;
    if (!authority.empty() && authority.front() == '[') {
        // An IPv6 literal: hex digits, colons and dots (an embedded IPv4) between brackets.
        auto close = authority.find(']');
        if (close == std::string_view::npos || close < 3) return std::nullopt;
        host = authority.substr(0, close + 1);
        auto inside = host.substr(1, host.size() - 2);
        if (inside.find(':') == std::string_view::npos ||
            !std::all_of(inside.begin(), inside.end(), [](char c) { return is_hex(c) || c == ':' || c == '.'; })) {
            return std::nullopt;
        }
        rest = authority.substr(close + 1);
    } else {
        auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (host.empty() || !std::all_of(host.begin(), host.end(), is_reg_name_char)) return std::nullopt;
        rest = colon == std::string_view::npos ? std::string_view{} : authority.substr(colon);
    }
    // Nothing after the host but an optional ":port" of digits.
    if (rest.empty()) return host;
    if (rest.front() != ':') return std::nullopt;
    auto port = rest.substr(1);
    if (port.size() > 5 || !std::all_of(port.begin(), port.end(), is_digit)) return std::nullopt;
    return host;
}

bool is_loopback_host(std::string_view host) {
    return util::iequals_ascii(host, "localhost") || host == "::1" || host == "[::1]" || is_ipv4_loopback(host);
}

bool origin_allowed(const HttpOptions& options, std::string_view origin) {
    if (origin.empty()) return true;  // not a browser: nothing to protect against here
    auto o = util::to_lower_ascii(origin);
    if (options.allowed_origins.empty()) {
        // Default: loopback origins only, any port.
        for (std::string_view scheme : {"http://", "https://"}) {
            if (o.rfind(scheme, 0) != 0) continue;
            // A serialized origin is scheme://host[:port] and nothing else: a host that only
            // starts like a loopback one ("[::1].evil.com", "localhost@evil.com") is not one.
            auto host = authority_host(std::string_view(o).substr(scheme.size()));
            return host && is_loopback_host(*host);
        }
        return false;
    }
    for (const auto& allowed : options.allowed_origins) {
        auto a = util::to_lower_ascii(allowed);
        if (a == "*" || a == o) return true;
        if (a.size() > 2 && a.compare(a.size() - 2, 2, ":*") == 0) {
            auto prefix = a.substr(0, a.size() - 2);
            if (o == prefix) return true;
            // "scheme://host:*": any port, and only a port, after the host.
            if (o.size() > prefix.size() + 1 && o.rfind(prefix + ":", 0) == 0) {
                auto port = std::string_view(o).substr(prefix.size() + 1);
                if (port.size() <= 5 && std::all_of(port.begin(), port.end(), is_digit)) return true;
            }
        }
    }
    return false;
}

bool host_allowed(const HttpOptions& options, std::string_view host) {
    if (options.allowed_hosts.empty()) {
        if (!loopback_bind(options)) return true;
        if (host.empty()) return true;  // HTTP/1.0 clients without Host (an empty one is the endpoint's 400)
        // host[:port] exactly: "[::1].evil.com" or "localhost@evil.com" is no loopback name.
        auto bare = authority_host(host);
        return bare && is_loopback_host(*bare);
    }
    auto h = util::to_lower_ascii(host);
    auto bare = authority_host(h);
    for (const auto& allowed : options.allowed_hosts) {
        auto a = util::to_lower_ascii(allowed);
        if (a == "*" || a == h || (bare && a == *bare)) return true;
    }
    return false;
}

std::string_view bearer_token(std::string_view authorization) {
    constexpr std::string_view kScheme = "bearer ";
    if (authorization.size() <= kScheme.size() ||
        util::to_lower_ascii(authorization.substr(0, kScheme.size())) != kScheme) {
        return {};
    }
    auto token = authorization.substr(kScheme.size());
    while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
    return token;
}

bool same_token(std::string_view expected, std::string_view token) {
    return !token.empty() && expected.size() == token.size() &&
           CRYPTO_memcmp(expected.data(), token.data(), expected.size()) == 0;
}

bool token_listed(const std::vector<std::string>& tokens, std::string_view token) {
    bool match = false;
    for (const auto& t : tokens) match = same_token(t, token) || match;  // no early exit
    return match;
}

std::string principal_of_token(std::string_view token) { return "bearer:" + util::sha256_hex(token).substr(0, 16); }

bool authorized(const HttpOptions& options, std::string_view authorization) {
    if (options.bearer_tokens.empty()) return true;
    return token_listed(options.bearer_tokens, bearer_token(authorization));
}

std::string principal_of(const HttpOptions& options, std::string_view authorization) {
    if (options.bearer_tokens.empty() || !authorized(options, authorization)) return {};
    return principal_of_token(bearer_token(authorization));
}

void attach_trace_headers(protocol::Message& message, const TraceHeaders& headers) {
    if (headers.traceparent.empty() && headers.baggage.empty()) return;
    auto* request = std::get_if<protocol::Request>(&message);
    if (!request) return;
    Json& params = request->params;
    if (!params.is_object()) return;  // no params (nothing to budget), or invalid ones
    Json& meta = params["_meta"];
    if (meta.is_null()) meta = Json::object();
    if (!meta.is_object()) return;
    // Sizes as the W3C formats bound them; the content is checked where it is read
    // (observability/trace_propagation.hpp).
    if (!headers.traceparent.empty() && headers.traceparent.size() <= 256 && !meta.contains("traceparent")) {
        meta["traceparent"] = headers.traceparent;
        if (!headers.tracestate.empty() && headers.tracestate.size() <= 512) meta["tracestate"] = headers.tracestate;
    }
    if (!headers.baggage.empty() && headers.baggage.size() <= 8192 && !meta.contains("baggage")) {
        meta["baggage"] = headers.baggage;
    }
}

bool accepts(std::string_view accept_header, std::string_view media_type) {
    if (accept_header.empty()) return false;
    // Compared ignoring ASCII case, in place: this runs on every POST.
    const std::string_view type = media_type;
    std::string_view rest = accept_header;
    while (!rest.empty()) {
        auto comma = rest.find(',');
        auto item = rest.substr(0, comma);
        rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
        auto semi = item.find(';');
        auto range = item.substr(0, semi);
        while (!range.empty() && range.front() == ' ') range.remove_prefix(1);
        while (!range.empty() && range.back() == ' ') range.remove_suffix(1);
        // "q=0" means "not acceptable" (RFC 9110 §12.4.2).
        bool refused = false;
        for (auto params = semi == std::string_view::npos ? std::string_view{} : item.substr(semi + 1);
             !params.empty();) {
            auto next = params.find(';');
            auto p = params.substr(0, next);
            params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
            while (!p.empty() && p.front() == ' ') p.remove_prefix(1);
            if (util::starts_with_ascii_nocase(p, "q=")) {
                auto q = p.substr(2);
                refused = !q.empty() && std::all_of(q.begin(), q.end(), [](char c) { return c == '0' || c == '.'; });
            }
        }
        if (refused) continue;
        if (util::iequals_ascii(range, type) || range == "*/*") return true;
        auto slash = type.find('/');
        if (slash != std::string_view::npos && range.size() == slash + 2 && range.substr(slash) == "/*" &&
            util::iequals_ascii(range.substr(0, slash), type.substr(0, slash)))
            return true;
    }
    return false;
}

bool is_json_content_type(std::string_view content_type) {
    std::string_view base = content_type.substr(0, content_type.find(';'));
    while (!base.empty() && base.back() == ' ') base.remove_suffix(1);
    return util::iequals_ascii(base, "application/json");
}

VersionHeader read_version_header(std::string_view value, bool present) {
    VersionHeader h;
    h.present = present;
    if (present) h.revision = protocol::parse_revision(value);
    return h;
}

std::string public_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    std::size_t i = 0;
    while (i < text.size()) {
        auto scheme = text.find("://", i);
        if (scheme == std::string_view::npos) {
            out.append(text.substr(i));
            break;
        }
        out.append(text.substr(i, scheme + 3 - i));
        // The URL runs to the first space, quote, parenthesis or comma.
        auto end = text.find_first_of(" \t\r\n\"'<>(),;", scheme + 3);
        if (end == std::string_view::npos) end = text.size();
        auto url = text.substr(scheme + 3, end - scheme - 3);
        auto authority_end = url.find_first_of("/?#");
        auto at = url.substr(0, authority_end).rfind('@');
        if (at != std::string_view::npos) url.remove_prefix(at + 1);
        out.append(url.substr(0, url.find_first_of("?#")));
        i = end;
    }
    return util::sanitize_for_message(out, 1000);
}

bool valid_session_id(std::string_view id) { return util::valid_session_id(id, 256); }

}  // namespace toolport::http_policy
