#include "client/http_url.hpp"

#include <charconv>
#include <cstdint>

#include <fmt/format.h>

#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        char c = text[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != prefix[i]) return false;
    }
    return true;
}

}  // namespace

std::string HttpUrl::host_header() const {
    std::string h = ipv6_literal ? "[" + host + "]" : host;
    if (port != 80) h += ":" + std::to_string(port);
    return h;
}

std::string HttpUrl::display() const { return "http://" + host_header() + path; }

HttpUrl parse_http_url(std::string_view url) {
    for (char c : url) {
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) {
            throw std::invalid_argument("the URL contains spaces or control characters");
        }
    }
    if (starts_with_nocase(url, "https://")) {
        throw std::invalid_argument(
            "https:// URLs are not supported yet (the client has no TLS); use http://, for example through a "
            "local TLS-terminating proxy, or --stdio");
    }
    if (!starts_with_nocase(url, "http://")) {
        throw std::invalid_argument(fmt::format("expected an http:// URL, got \"{}\"", util::sanitize_for_message(url, 80)));
    }
    std::string_view rest = url.substr(7);
    if (auto hash = rest.find('#'); hash != std::string_view::npos) rest = rest.substr(0, hash);
    const auto authority_end = rest.find_first_of("/?");
    std::string_view authority = rest.substr(0, authority_end);
    std::string_view target = authority_end == std::string_view::npos ? std::string_view() : rest.substr(authority_end);
    if (authority.find('@') != std::string_view::npos) {
        throw std::invalid_argument("credentials in the URL are not supported; use --token or --header instead");
    }

    HttpUrl out;
    std::string_view port_text;
    if (!authority.empty() && authority.front() == '[') {
        auto close = authority.find(']');
        if (close == std::string_view::npos) throw std::invalid_argument("the URL's IPv6 address lacks its closing ']'");
        out.host.assign(authority.substr(1, close - 1));
        out.ipv6_literal = true;
        std::string_view after = authority.substr(close + 1);
        if (!after.empty()) {
            if (after.front() != ':') throw std::invalid_argument("unexpected text after the URL's IPv6 address");
            port_text = after.substr(1);
            if (port_text.empty()) throw std::invalid_argument("the URL has a ':' but no port number");
        }
    } else {
        auto colon = authority.find(':');
        out.host.assign(authority.substr(0, colon));
        if (colon != std::string_view::npos) {
            port_text = authority.substr(colon + 1);
            if (port_text.empty()) throw std::invalid_argument("the URL has a ':' but no port number");
        }
    }
    if (out.host.empty()) throw std::invalid_argument("the URL has no host");
    if (!port_text.empty()) {
        std::uint32_t port = 0;
        auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
        if (ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 || port > 65535) {
            throw std::invalid_argument(
                fmt::format("the URL's port \"{}\" is not a number from 1 to 65535", util::sanitize_for_message(port_text, 20)));
        }
        out.port = static_cast<unsigned short>(port);
    }
    out.path_and_query = target.empty() || target.front() == '?' ? "/" + std::string(target) : std::string(target);
    out.path = out.path_and_query.substr(0, out.path_and_query.find('?'));
    return out;
}

}  // namespace toolport::client
