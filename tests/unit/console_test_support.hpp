// A request as a connection hands it to the endpoint or the console, for the console's tests.
#pragma once

#include <strings.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "transports/http_exchange.hpp"
#include "util/json.hpp"

namespace toolport::test_support {

class ConsoleRequest final : public HttpRequestView {
public:
    ConsoleRequest(HttpMethod method, std::string target, std::map<std::string, std::string> headers = {},
                   std::string body = {})
        : method_(method), target_(std::move(target)), headers_(std::move(headers)), body_(std::move(body)) {
        if (!headers_.count("Host")) headers_["Host"] = "127.0.0.1:8080";
    }
    HttpMethod method() const override { return method_; }
    std::string_view target() const override { return target_; }
    unsigned version() const override { return 11; }
    bool keep_alive() const override { return true; }
    std::string_view header(std::string_view name) const override {
        for (const auto& [n, v] : headers_)
            if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return v;
        return {};
    }
    bool has_header(std::string_view name) const override {
        for (const auto& [n, v] : headers_)
            if (n.size() == name.size() && strncasecmp(n.data(), name.data(), n.size()) == 0) return true;
        return false;
    }
    void for_each_header(const std::function<void(std::string_view, std::string_view)>& visit) const override {
        for (const auto& [n, v] : headers_) visit(n, v);
    }
    const std::string& body() const override { return body_; }

private:
    HttpMethod method_;
    std::string target_;
    std::map<std::string, std::string> headers_;
    std::string body_;
};

// A header field's value in a reply's head ("" when absent).
inline std::string head_field(const std::string& head, const std::string& name) {
    auto at = head.find("\r\n" + name + ": ");
    if (at == std::string::npos) return {};
    at += name.size() + 4;
    return head.substr(at, head.find("\r\n", at) - at);
}

}  // namespace toolport::test_support
