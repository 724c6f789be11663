#include "http_client/url.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "util/ascii.hpp"
#include "util/http_text.hpp"

namespace toolport::http_client {

namespace {

// Characters that must never reach a request line or header.
bool has_forbidden(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) {
        auto u = static_cast<unsigned char>(c);
        return u <= 0x20 || u == 0x7f;
    });
}

}  // namespace

std::string Url::authority() const {
    std::string a = ipv6_literal ? "[" + host + "]" : host;
    if (!default_port()) a += ":" + std::to_string(port);
    return a;
}

std::string Url::origin() const { return (https ? "https://" : "http://") + authority(); }

std::string Url::display() const { return origin() + target.substr(0, target.find('?')); }

Url parse_url(std::string_view text) {
    Url url;
    std::string_view rest;
    if (util::starts_with_ascii_nocase(text, "https://")) {
        url.https = true;
        url.port = 443;
        rest = text.substr(8);
    } else if (util::starts_with_ascii_nocase(text, "http://")) {
        rest = text.substr(7);
    } else {
        throw std::invalid_argument("the URL must start with http:// or https://");
    }
    if (has_forbidden(rest)) throw std::invalid_argument("the URL contains spaces or control characters");
    auto end = rest.find_first_of("/?#");
    std::string_view authority = rest.substr(0, end);
    std::string_view tail = end == std::string_view::npos ? std::string_view() : rest.substr(end);
    if (auto hash = tail.find('#'); hash != std::string_view::npos) tail = tail.substr(0, hash);
    if (authority.find('@') != std::string_view::npos) {
        throw std::invalid_argument("credentials in the URL are not accepted; use a header instead");
    }
    std::string_view host = authority;
    std::string_view port;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) throw std::invalid_argument("unclosed [ in the URL's host");
        host = authority.substr(1, close - 1);
        url.ipv6_literal = true;
        auto after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw std::invalid_argument("unexpected characters after the IPv6 host");
            port = after.substr(1);
        }
    } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);
    }
    if (host.empty()) throw std::invalid_argument("the URL has no host");
    if (!url.ipv6_literal && !std::all_of(host.begin(), host.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
        })) {
        throw std::invalid_argument("the URL's host has characters a host name cannot have");
    }
    if (url.ipv6_literal && !std::all_of(host.begin(), host.end(), [](char c) {
            return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
        })) {
        throw std::invalid_argument("the URL's IPv6 host is malformed");
    }
    url.host = util::to_lower_ascii(host);
    if (!port.empty()) {
        if (port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            throw std::invalid_argument("the URL's port must be a number from 1 to 65535");
        }
        int p = std::stoi(std::string(port));
        if (p < 1 || p > 65535) throw std::invalid_argument("the URL's port must be a number from 1 to 65535");
        url.port = static_cast<unsigned short>(p);
    }
    url.target = tail.empty() ? "/" : std::string(tail);
    if (url.target.front() == '?') url.target.insert(0, "/");
    return url;
}

std::optional<Url> resolve_location(const Url& base, std::string_view location) {
    if (location.empty() || has_forbidden(location)) return std::nullopt;
    try {
        if (util::starts_with_ascii_nocase(location, "http://") || util::starts_with_ascii_nocase(location, "https://"))
            return parse_url(location);
        if (location.substr(0, 2) == "//") return parse_url((base.https ? "https:" : "http:") + std::string(location));
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
    if (location.find(':') != std::string_view::npos && location.find(':') < location.find_first_of("/?")) {
        return std::nullopt;  // another scheme (mailto:, javascript:, ...)
    }
    Url next = base;
    if (location.front() == '/') {
        next.target = std::string(location);
    } else if (location.front() == '?') {
        next.target = base.target.substr(0, base.target.find('?')) + std::string(location);
    } else {
        std::string path = base.target.substr(0, base.target.find('?'));
        next.target = path.substr(0, path.rfind('/') + 1) + std::string(location);
    }
    if (auto hash = next.target.find('#'); hash != std::string::npos) next.target.resize(hash);
    return next;
}

}  // namespace toolport::http_client
