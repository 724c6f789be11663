// Fetching the small JSON documents of OAuth discovery (protected resource metadata,
// authorization server metadata): a GET bounded in time and size whose 200 answer must be
// a JSON object.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "async/task.hpp"

namespace toolport::http_client {
class HttpClient;
}

namespace toolport::client::oauth {

// The document at `url`: nullopt when the server has none there (any status but 200), the
// JSON object otherwise. Throws AuthorizationError when the server cannot be reached or
// its 200 answer is not a JSON object (naming `what`, e.g. "protected resource metadata").
Task<std::optional<nlohmann::json>> fetch_json_document(http_client::HttpClient& http, std::string url,
                                                        std::string what);

}  // namespace toolport::client::oauth
