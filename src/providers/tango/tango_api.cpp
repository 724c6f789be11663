#include "providers/tango/tango_api.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "http_client/http_client.hpp"
#include "providers/downstream_errors.hpp"
#include "server/request_context.hpp"
#include "util/ascii.hpp"
#include "util/percent.hpp"
#include "util/sanitize.hpp"

namespace toolport::tango {

using namespace std::chrono_literals;

namespace {

// One answer of the Tango API is read no further than this: its pages hold at most 100
// records (a few hundred KiB), so more is an API gone wrong, not data to hold in memory.
constexpr std::size_t kMaxAnswerBytes = 8u << 20;

}  // namespace

Query& Query::add(const std::string& name, const std::optional<std::string>& value, const char* argument) {
    if (!value) return *this;
    params_.emplace_back(name, *value);
    if (argument) filters_[argument] = *value;
    return *this;
}

Query& Query::add(const std::string& name, const std::optional<int>& value, const char* argument) {
    if (!value) return *this;
    params_.emplace_back(name, std::to_string(*value));
    if (argument) filters_[argument] = *value;
    return *this;
}

std::string Query::encoded() const {
    std::string out;
    for (const auto& [name, value] : params_) {
        if (!out.empty()) out += '&';
        out += util::percent_encode(name) + "=" + util::percent_encode(value);
    }
    return out;
}

std::string api_key_for(const RequestContext& ctx, const Json& args, const TangoSettings& settings) {
    if (auto it = args.find("api_key"); it != args.end() && it->is_string() && !it->get<std::string>().empty()) {
        return it->get<std::string>();
    }
    if (!settings.client_key_header.empty()) {
        const std::string header = util::to_lower_ascii(settings.client_key_header);
        const auto& sent = ctx.caller().client_headers;
        if (auto it = sent.find(header); it != sent.end() && !it->second.empty()) return it->second;
    }
    if (!settings.server_api_key.empty()) return settings.server_api_key;
    throw ToolError(ToolErrorCode::missing_api_key, "Tango API key required")
        .parameter("api_key")
        .suggest(fmt::format("Provide the api_key parameter, send the {} header, or set the {} environment variable "
                             "for the server (keys: https://tango.makegov.com).",
                             settings.client_key_header.empty() ? "X-Tango-Api-Key" : settings.client_key_header,
                             settings.api_key_env));
}

namespace {

// The readable message of a DRF-style error body: detail, message, error, or the first
// "field": ["message"].
std::string api_message(std::string_view body) {
    auto parsed = Json::parse(body, nullptr, false);
    // sanitize_for_message cuts on a character boundary and marks the cut.
    if (parsed.is_discarded() || !parsed.is_object()) return util::sanitize_for_message(body, 300);
    for (const char* key : {"detail", "message", "error"}) {
        if (auto it = parsed.find(key); it != parsed.end() && it->is_string()) {
            return util::sanitize_for_message(it->get<std::string>(), 500);
        }
    }
    if (auto issues = parsed.find("issues"); issues != parsed.end() && issues->is_array() && !issues->empty()) {
        const Json& first = (*issues)[0];
        return util::sanitize_for_message(fmt::format("{}: {}", first.value("path", "?"),
                                                      first.value("reason", "invalid")),
                                          500);
    }
    for (const auto& [field, value] : parsed.items()) {
        if (value.is_array() && !value.empty() && value[0].is_string()) {
            return util::sanitize_for_message(field + ": " + value[0].get<std::string>(), 500);
        }
        if (value.is_string()) return util::sanitize_for_message(field + ": " + value.get<std::string>(), 500);
    }
    return "the API gave no reason";
}

}  // namespace

ToolError error_for_status(unsigned status, const std::optional<std::string>& retry_after, std::string_view body) {
    const std::string message = api_message(body);
    if (status == 401) {
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("Tango refused the API key (HTTP {}): {}", status, message))
            .parameter("api_key")
            .suggest(
                "Check the Tango API key (api_key, the X-Tango-Api-Key header or TANGO_API_KEY); keys are managed "
                "at https://tango.makegov.com.");
    }
    if (status == 403) {
        // A refused key, or a key whose plan does not cover this request (Tango gates some
        // endpoints and features by plan): the message tells which.
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("Tango refused this request for the API key (HTTP {}): {}", status, message))
            .parameter("api_key")
            .suggest(
                "Check the Tango API key (api_key, the X-Tango-Api-Key header or TANGO_API_KEY) and whether its "
                "plan includes this request; keys and plans are managed at https://tango.makegov.com.");
    }
    if (status == 404) {
        return ToolError(ToolErrorCode::not_found, fmt::format("Tango has no such record: {}", message))
            .suggest(
                "Check the identifier; search first (search_tango_contracts with vendor_name finds vendors' UEIs).");
    }
    if (status == 429) {
        std::optional<std::chrono::milliseconds> wait_in_body;
        auto parsed = Json::parse(body, nullptr, false);
        if (parsed.is_object() && parsed.contains("wait_in_seconds") && parsed["wait_in_seconds"].is_number()) {
            wait_in_body = std::chrono::milliseconds(
                static_cast<long long>(parsed["wait_in_seconds"].get<double>() * 1000));
        }
        return providers::rate_limited_error(fmt::format("Tango API rate limit reached: {}", message), retry_after,
                                             wait_in_body);
    }
    if (status == 408) {
        // The request was fine; Tango gave up waiting for it.
        return ToolError(ToolErrorCode::upstream_error,
                         fmt::format("Tango timed out the request (HTTP 408): {}", message))
            .transient(true)
            .suggest("Retry in a moment; if it persists, narrow the filters.");
    }
    if (status >= 400 && status < 500) {
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("Tango rejected the request (HTTP {}): {}", status, message))
            .suggest("Correct the parameter the message names and retry.");
    }
    return ToolError(ToolErrorCode::upstream_error, fmt::format("Tango API returned HTTP {}: {}", status, message))
        .transient(true)
        .suggest("The Tango API had trouble; retry in a moment.");
}

std::optional<ToolError> error_in_body(const Json& body) {
    if (!body.is_object()) return std::nullopt;
    auto it = body.find("error");
    if (it == body.end() || it->is_null() || body.contains("results")) return std::nullopt;
    std::string message = it->is_string() ? it->get<std::string>() : it->dump();
    return ToolError(ToolErrorCode::upstream_error,
                     "Tango API reported an error: " + util::sanitize_for_message(message, 500))
        .transient(true)
        .suggest("Retry in a moment; if it persists, narrow the filters.");
}

TangoCall::TangoCall(http_client::HttpClient& http, const TangoSettings& settings, RequestContext& ctx, const Json& args)
    : http_(http), settings_(settings), ctx_(ctx), args_(args) {}

Task<Json> TangoCall::get(const std::string& path, const Query& query) {
    if (api_key_.empty()) api_key_ = api_key_for(ctx_, args_, settings_);
    http_client::Request request;
    request.url = settings_.base_url + path;
    if (!query.params().empty()) request.url += "?" + query.encoded();
    request.headers = {{"X-API-KEY", api_key_}, {"Accept", "application/json"}};
    http_client::CallOptions options;
    options.deadline = ctx_.deadline();
    options.cancel = &ctx_.cancel_token();
    options.max_response_bytes = kMaxAnswerBytes;
    options.trace_parent = &ctx_.trace_context();
    options.baggage = ctx_.baggage();
    options.before_attempt = [this]() -> Task<void> {
        co_await ctx_.pace_downstream_request();
        ++requests_;
    };
    http_client::Response response;
    try {
        response = co_await http_.fetch(std::move(request), std::move(options));
    } catch (const http_client::HttpError& e) {
        throw providers::unreachable_error(e, "the Tango API", "the Tango base URL and the network settings");
    } catch (const http_client::ResponseTooLarge& e) {
        throw providers::too_large_error(e.limit, "The Tango API",
                                         "Ask for fewer records (a lower limit) or narrower filters.");
    }
    if (response.status < 200 || response.status > 299) {
        throw error_for_status(response.status, response.header("Retry-After"), response.body);
    }
    auto body = Json::parse(response.body, nullptr, false);
    if (body.is_discarded()) {
        throw ToolError(ToolErrorCode::upstream_error, "The Tango API answered with something that is not JSON")
            .transient(true);
    }
    if (auto error = error_in_body(body)) throw *error;
    co_return body;
}

}  // namespace toolport::tango
