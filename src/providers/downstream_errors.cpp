#include "providers/downstream_errors.hpp"

#include <fmt/format.h>

#include "http_client/http_client.hpp"
#include "http_client/retry_policy.hpp"

namespace toolport::providers {

ToolError unreachable_error(const http_client::HttpError& error, std::string_view api, std::string_view settings) {
    auto code = error.kind == http_client::HttpError::Kind::timeout ? ToolErrorCode::timeout
                                                                    : ToolErrorCode::upstream_error;
    return ToolError(code, fmt::format("Could not reach {}: {}", api, error.what()))
        .transient(error.transient())
        .suggest(error.transient() ? std::string("Retry in a moment.") : fmt::format("Check {}.", settings));
}

ToolError too_large_error(std::size_t limit, std::string_view api, std::string suggestion) {
    return ToolError(ToolErrorCode::response_too_large, fmt::format("{}'s answer is over {} bytes", api, limit))
        .suggest(std::move(suggestion));
}

ToolError rate_limited_error(std::string message, const std::optional<std::string>& retry_after,
                             std::optional<std::chrono::milliseconds> fallback) {
    std::optional<std::chrono::milliseconds> wait;
    if (retry_after) wait = http_client::parse_retry_after(*retry_after, std::chrono::system_clock::now());
    const auto delay = wait.value_or(fallback.value_or(std::chrono::milliseconds(1000)));
    return ToolError(ToolErrorCode::rate_limited, std::move(message))
        .retry_after(delay)
        .transient(true)
        .suggest(fmt::format("Wait {} seconds and retry.", (delay.count() + 999) / 1000));
}

}  // namespace toolport::providers
