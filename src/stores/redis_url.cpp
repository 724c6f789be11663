#include "stores/redis_url.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "stores/stores.hpp"
#include "util/ascii.hpp"
#include "util/percent.hpp"

namespace toolport::stores {

namespace {

[[noreturn]] void fail(std::string_view problem) { throw StoreConfigError("store URL: " + std::string(problem)); }

bool is_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

std::optional<long> parse_number(std::string_view s, long max) {
    if (!is_digits(s) || s.size() > 10) return std::nullopt;
    long value = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || value > max) return std::nullopt;
    return value;
}

// Decodes %XX in the credentials. The message names the part, never its content.
std::string percent_decode(std::string_view s, std::string_view what) {
    auto decoded = util::percent_decode(s);
    if (!decoded) fail("the " + std::string(what) + " has a malformed percent-escape (expected % and two hex digits)");
    return *decoded;
}

bool is_host_name(std::string_view s) {
    return std::all_of(s.begin(), s.end(),
                       [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '.' || c == '_'; });
}

bool is_ipv6_text(std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isxdigit(c) || c == ':' || c == '.'; });
}

}  // namespace

std::string RedisEndpoint::describe() const {
    std::string shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
    return shown + ":" + std::to_string(port) + "/" + std::to_string(db);
}

RedisEndpoint parse_redis_url(std::string_view url) {
    auto scheme_end = url.find("://");
    if (scheme_end == std::string_view::npos) fail("expected \"memory\" or redis://[:password@]host:port[/db]");
    const std::string scheme = util::to_lower_ascii(url.substr(0, scheme_end));
    if (scheme == "rediss") fail("rediss:// (Redis over TLS) is not supported; use redis://");
    if (scheme != "redis") {
        // The scheme is shown only when it looks like one (it cannot hold credentials then).
        const bool plain = !scheme.empty() && std::all_of(scheme.begin(), scheme.end(), [](unsigned char c) {
            return std::isalnum(c) || c == '+' || c == '-' || c == '.';
        });
        fail(plain ? "unsupported scheme \"" + scheme + "\"; expected redis://"
                   : "unsupported scheme; expected redis://");
    }
    std::string_view rest = url.substr(scheme_end + 3);
    if (rest.find('?') != std::string_view::npos) fail("query parameters are not supported");
    if (rest.find('#') != std::string_view::npos) fail("a fragment (#...) is not allowed");

    auto slash = rest.find('/');
    std::string_view authority = rest.substr(0, slash);
    std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);

    RedisEndpoint endpoint;
    if (auto at = authority.rfind('@'); at != std::string_view::npos) {
        std::string_view userinfo = authority.substr(0, at);
        authority = authority.substr(at + 1);
        auto colon = userinfo.find(':');
        if (colon == std::string_view::npos)
            fail("credentials must be written :password@ or user:password@ (the ':' is missing)");
        endpoint.username = percent_decode(userinfo.substr(0, colon), "user name");
        endpoint.password = percent_decode(userinfo.substr(colon + 1), "password");
        if (endpoint.password.empty()) fail("the password after ':' is empty");
    }

    std::string_view host;
    std::string_view port_text;
    bool has_port = false;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) fail("an IPv6 address opened with '[' is not closed with ']'");
        host = authority.substr(1, close - 1);
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') fail("expected ':port' after the IPv6 address");
            has_port = true;
            port_text = after.substr(1);
        }
        if (host.empty() || !is_ipv6_text(host)) fail("the address in [...] is not an IPv6 address");
    } else {
        auto colon = authority.find(':');
        host = authority.substr(0, colon);
        if (colon != std::string_view::npos) {
            has_port = true;
            port_text = authority.substr(colon + 1);
            if (port_text.find(':') != std::string_view::npos) fail("an IPv6 address must be written in [brackets]");
        }
        if (host.empty()) fail("the host is missing");
        // Not echoed: a mistyped URL can leave part of a password where the host should be.
        if (!is_host_name(host)) fail("the host has characters a host name cannot have (letters, digits, '-', '.')");
    }
    endpoint.host = std::string(host);

    if (has_port) {
        if (port_text.empty()) fail("the port after ':' is empty");
        auto port = parse_number(port_text, 65535);
        if (!port || *port == 0) fail("the port must be a number from 1 to 65535");
        endpoint.port = static_cast<std::uint16_t>(*port);
    }

    if (!path.empty()) {
        auto db = parse_number(path, 1'000'000);
        if (!db) fail("the database after '/' must be a number (redis://host:port/0)");
        endpoint.db = static_cast<int>(*db);
    }
    return endpoint;
}

}  // namespace toolport::stores
