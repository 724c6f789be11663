// Proxy settings as users behind corporate proxies set them: HTTPS_PROXY for https
// targets (a CONNECT tunnel), HTTP_PROXY for http ones (absolute-form requests), NO_PROXY
// for the hosts that bypass both. Lower-case names are read too, as curl does.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::http_client {

struct ProxyEndpoint {
    std::string host;
    unsigned short port = 0;
    // "Basic …" from user:password in the proxy URL (sent as Proxy-Authorization, never logged).
    std::string authorization;
    std::string display() const { return "http://" + host + ":" + std::to_string(port); }
};

struct ProxySettings {
    std::optional<ProxyEndpoint> https_proxy;
    std::optional<ProxyEndpoint> http_proxy;
    // NO_PROXY entries: "*", host names (a leading dot or none: the host and its
    // subdomains), IP literals, each optionally with ":port".
    std::vector<std::string> no_proxy;

    static ProxySettings from_environment();
    // Parses one proxy URL ("http://[user:pass@]host[:port]"; no scheme means http).
    // Throws std::invalid_argument naming what is wrong.
    static ProxyEndpoint parse(std::string_view url);

    // The proxy a request to host:port goes through, if any.
    const ProxyEndpoint* proxy_for(bool https, std::string_view host, unsigned short port) const;
    bool bypasses(std::string_view host, unsigned short port) const;
};

}  // namespace toolport::http_client
