// The parts of an http:// URL the HTTP client transport needs. Only plain http is
// supported (no TLS in the client yet); credentials in the URL are refused so that they
// never end up in error messages or logs (use a bearer token or a header instead).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace toolport::client {

struct HttpUrl {
    std::string host;             // without brackets for IPv6 literals
    bool ipv6_literal = false;
    unsigned short port = 80;
    std::string path_and_query;   // the request target: "/mcp", "/mcp?key=v"
    std::string path;             // without the query

    // "host[:port]" for the Host header (the port only when it is not 80).
    std::string host_header() const;
    // The URL without its query (queries may hold keys): for messages and logs.
    std::string display() const;
};

// Throws std::invalid_argument naming what is wrong with `url`.
HttpUrl parse_http_url(std::string_view url);

}  // namespace toolport::client
