#include "http_client/proxy.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "http_client/url.hpp"
#include "util/ascii.hpp"
#include "util/base64.hpp"
#include "util/percent.hpp"

namespace toolport::http_client {

namespace {

std::string trim(std::string_view s) {
    auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    auto last = s.find_last_not_of(" \t");
    return std::string(s.substr(first, last - first + 1));
}

const char* env_either(const char* upper, const char* lower_name) {
    const char* v = std::getenv(lower_name);
    if (!v || !*v) v = std::getenv(upper);
    return v && *v ? v : nullptr;
}

std::optional<ProxyEndpoint> endpoint_from(const char* upper, const char* lower_name) {
    const char* value = env_either(upper, lower_name);
    if (!value) return std::nullopt;
    try {
        return ProxySettings::parse(value);
    } catch (const std::invalid_argument& e) {
        // The variable's value may hold a password: name the variable, not the value.
        spdlog::warn("{} is set but cannot be used ({}); requests go direct", upper, e.what());
        return std::nullopt;
    }
}

}  // namespace

ProxyEndpoint ProxySettings::parse(std::string_view url) {
    std::string_view rest = url;
    if (auto scheme = rest.find("://"); scheme != std::string_view::npos) {
        auto name = util::to_lower_ascii(rest.substr(0, scheme));
        if (name != "http") throw std::invalid_argument("only http:// proxies are supported");
        rest = rest.substr(scheme + 3);
    }
    rest = rest.substr(0, rest.find('/'));
    ProxyEndpoint p;
    if (auto at = rest.rfind('@'); at != std::string_view::npos) {
        auto credentials = util::percent_decode(rest.substr(0, at));
        if (!credentials) throw std::invalid_argument("the proxy credentials are not valid percent-encoding");
        p.authorization = "Basic " + util::base64_encode(*credentials);
        rest = rest.substr(at + 1);
    }
    std::string_view host = rest;
    std::string_view port = "80";
    if (!rest.empty() && rest.front() == '[') {
        auto close = rest.find(']');
        if (close == std::string_view::npos) throw std::invalid_argument("unclosed [ in the proxy host");
        host = rest.substr(1, close - 1);
        if (close + 1 < rest.size() && rest[close + 1] == ':') port = rest.substr(close + 2);
    } else if (auto colon = rest.rfind(':'); colon != std::string_view::npos) {
        host = rest.substr(0, colon);
        port = rest.substr(colon + 1);
    }
    if (host.empty()) throw std::invalid_argument("the proxy URL has no host");
    if (port.empty() || port.size() > 5 ||
        !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        std::stoi(std::string(port)) < 1 || std::stoi(std::string(port)) > 65535) {
        throw std::invalid_argument("the proxy port must be a number from 1 to 65535");
    }
    p.host = util::to_lower_ascii(host);
    p.port = static_cast<unsigned short>(std::stoi(std::string(port)));
    return p;
}

ProxySettings ProxySettings::from_environment() {
    ProxySettings s;
    s.https_proxy = endpoint_from("HTTPS_PROXY", "https_proxy");
    s.http_proxy = endpoint_from("HTTP_PROXY", "http_proxy");
    if (const char* no = env_either("NO_PROXY", "no_proxy")) {
        std::string_view list = no;
        while (!list.empty()) {
            auto comma = list.find(',');
            auto entry = trim(list.substr(0, comma));
            if (!entry.empty()) s.no_proxy.push_back(util::to_lower_ascii(entry));
            if (comma == std::string_view::npos) break;
            list = list.substr(comma + 1);
        }
    }
    return s;
}

bool ProxySettings::bypasses(std::string_view host_in, unsigned short port) const {
    const std::string host = util::to_lower_ascii(host_in);
    for (std::string entry : no_proxy) {
        if (entry == "*") return true;
        // An optional ":port" (not inside an IPv6 literal).
        std::optional<unsigned short> entry_port;
        if (auto colon = entry.rfind(':'); colon != std::string::npos && entry.find(':') == colon) {
            auto digits = entry.substr(colon + 1);
            if (!digits.empty() && digits.size() <= 5 &&
                std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                entry_port = static_cast<unsigned short>(std::stoi(digits));
                entry.resize(colon);
            }
        }
        if (entry.size() > 2 && entry.front() == '[' && entry.back() == ']') entry = entry.substr(1, entry.size() - 2);
        if (entry_port && *entry_port != port) continue;
        if (!entry.empty() && entry.front() == '.') entry.erase(0, 1);
        if (entry.rfind("*.", 0) == 0) entry.erase(0, 2);
        if (entry.empty()) continue;
        if (host == entry) return true;
        if (host.size() > entry.size() && host.compare(host.size() - entry.size(), entry.size(), entry) == 0 &&
            host[host.size() - entry.size() - 1] == '.') {
            return true;
        }
    }
    return false;
}

const ProxyEndpoint* ProxySettings::proxy_for(bool https, std::string_view host, unsigned short port) const {
    const auto& proxy = https ? https_proxy : http_proxy;
    if (!proxy || bypasses(host, port)) return nullptr;
    return &*proxy;
}

}  // namespace toolport::http_client
