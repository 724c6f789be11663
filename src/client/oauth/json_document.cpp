#include "client/oauth/json_document.hpp"

#include <chrono>

#include <fmt/format.h>

#include "client/http_authorizer.hpp"
#include "http_client/http_client.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::client::oauth {

namespace {
// Discovery documents are a few kilobytes; a megabyte is generous.
constexpr std::size_t kMaxDocumentBytes = 1 << 20;
constexpr auto kFetchTimeout = std::chrono::seconds(15);
}  // namespace

Task<std::optional<nlohmann::json>> fetch_json_document(http_client::HttpClient& http, std::string url,
                                                        std::string what) {
    std::string shown;
    try {
        shown = http_client::parse_url(url).display();
    } catch (const std::invalid_argument& e) {
        throw AuthorizationError(
            fmt::format("the {} URL {} is not usable: {}", what, util::sanitize_for_message(url, 200), e.what()));
    }
    http_client::Response response;
    try {
        http_client::Request request;
        request.url = url;
        request.headers.emplace_back("Accept", "application/json");
        http_client::CallOptions options;
        options.deadline = std::chrono::steady_clock::now() + kFetchTimeout;
        options.max_response_bytes = kMaxDocumentBytes;
        response = co_await http.fetch(std::move(request), options);
    } catch (const http_client::HttpError& e) {
        throw AuthorizationError(fmt::format("could not fetch the {} at {}: {}", what, shown, e.what()));
    } catch (const ResponseTooLarge& e) {
        throw AuthorizationError(fmt::format("could not fetch the {} at {}: {}", what, shown, e.what()));
    }
    if (response.status != 200) co_return std::nullopt;
    nlohmann::json document = nlohmann::json::parse(response.body, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        throw AuthorizationError(fmt::format("the {} at {} is not a JSON object", what, shown));
    }
    co_return document;
}

}  // namespace toolport::client::oauth
