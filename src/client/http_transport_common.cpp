#include "client/http_transport_common.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "client/wire_payload.hpp"
#include "util/http_text.hpp"
#include "util/sanitize.hpp"

namespace toolport::client {

namespace {

void check_headers(const HttpClientOptions& options) {
    // Headers the transports set themselves: a second value would contradict them.
    static constexpr std::string_view kReserved[] = {"host",           "content-type",         "content-length",
                                                     "accept",         "transfer-encoding",    "connection",
                                                     "mcp-session-id", "mcp-protocol-version", "last-event-id"};
    for (const auto& [name, value] : options.headers) {
        if (!util::is_http_token(name)) {
            throw std::invalid_argument(
                fmt::format("\"{}\" is not a valid HTTP header name", util::sanitize_for_message(name, 60)));
        }
        for (auto reserved : kReserved) {
            if (util::iequals_ascii(name, reserved)) {
                throw std::invalid_argument(fmt::format("the {} header is set by the MCP client itself", name));
            }
        }
        if (util::iequals_ascii(name, "authorization") && (!options.bearer_token.empty() || options.authorizer)) {
            throw std::invalid_argument(
                "both a bearer token (or OAuth) and an Authorization header were given; use one");
        }
        if (util::has_control_chars(value)) {
            throw std::invalid_argument(fmt::format("the value of header {} contains control characters", name));
        }
    }
    if (options.authorizer && !options.bearer_token.empty()) {
        throw std::invalid_argument("both a bearer token and OAuth authorization were given; use one");
    }
    if (util::has_control_chars(options.bearer_token) || options.bearer_token.find(' ') != std::string::npos) {
        throw std::invalid_argument("the bearer token contains spaces or control characters");
    }
}

}  // namespace

http_client::Url check_http_client_options(const HttpClientOptions& options) {
    http_client::Url url = http_client::parse_url(options.url);
    check_headers(options);
    if (!options.ca_file.empty() || options.insecure_skip_verify) {
        if (!url.https) throw std::invalid_argument("a CA file or skipping verification applies to https:// URLs only");
    }
    return url;
}

void add_caller_headers(const HttpClientOptions& options, http_client::Headers& headers) {
    if (!options.bearer_token.empty()) headers.emplace_back("Authorization", "Bearer " + options.bearer_token);
    for (const auto& header : options.headers) headers.push_back(header);
}

std::string error_body_detail(std::string_view body) {
    auto payload = decode_wire_payload(body);
    if (payload.error.empty() && payload.messages.size() == 1) {
        const auto& m = payload.messages.front();
        if (!m.is_object() || !m.contains("error") || !m["error"].is_object()) return {};
        const auto& message = m["error"]["message"];
        return message.is_string() ? message.get<std::string>() : std::string();
    }
    if (!body.empty() && body.size() < 300 && !util::has_control_chars(body)) return std::string(body);
    return {};
}

}  // namespace toolport::client
