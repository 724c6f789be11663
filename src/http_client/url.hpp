// The parts of an http:// or https:// URL the client needs. Credentials in the URL are
// refused (they would end up in messages and logs); the query is kept for the request but
// left out of display(), since queries often hold keys.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace toolport::http_client {

struct Url {
    bool https = false;
    std::string host;  // lower-case; IPv6 literals without brackets
    bool ipv6_literal = false;
    unsigned short port = 80;
    std::string target = "/";  // path and query, as sent in the request line

    // "host" or "host:port" (the port only when it is not the scheme's default).
    std::string authority() const;
    // scheme://authority: what a pool and the redirect rule compare.
    std::string origin() const;
    // scheme://authority/path, without the query: for messages and logs.
    std::string display() const;
    bool default_port() const { return port == (https ? 443 : 80); }
};

// Throws std::invalid_argument naming what is wrong.
Url parse_url(std::string_view text);

// A Location header resolved against the URL it came from (absolute, scheme-relative,
// absolute-path or relative-path references). nullopt when it cannot be used.
std::optional<Url> resolve_location(const Url& base, std::string_view location);

}  // namespace toolport::http_client
