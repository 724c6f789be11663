// Talking to the Tango API: the query string, the per-call key and request count, and
// what the API's answers mean (its error bodies mapped to the pipeline's tool errors).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "async/task.hpp"
#include "providers/tango/tango_settings.hpp"
#include "server/tool_error.hpp"
#include "util/json.hpp"

namespace toolport {
class RequestContext;
namespace http_client {
class HttpClient;
}
}  // namespace toolport

namespace toolport::tango {

// Query parameters in the order added, every value percent-encoded when written out. A
// parameter added with the tool's `argument` it comes from is also one of the filters
// the envelope reports, under that argument's name (the caller's vocabulary, not Tango's
// query names) with the value as applied.
class Query {
public:
    Query& add(const std::string& name, const std::optional<std::string>& value, const char* argument = nullptr);
    Query& add(const std::string& name, const std::optional<int>& value, const char* argument = nullptr);
    std::string encoded() const;
    // The envelope's `filters`: {argument: value as applied}, integers as integers.
    const Json& filters() const { return filters_; }
    const std::vector<std::pair<std::string, std::string>>& params() const { return params_; }

private:
    std::vector<std::pair<std::string, std::string>> params_;
    Json filters_ = Json::object();
};

// The key a call uses: the `api_key` argument, else the client's X-Tango-Api-Key header
// (HTTP), else the server's own (TANGO_API_KEY). Throws MISSING_API_KEY.
std::string api_key_for(const RequestContext& ctx, const Json& args, const TangoSettings& settings);

// The tool error for a non-2xx answer: 401/403 a refused key, 404 not found, 400 the
// API's own message, 429 rate limited (retry_after_ms from Retry-After or
// wait_in_seconds), 5xx upstream trouble (transient).
ToolError error_for_status(unsigned status, const std::optional<std::string>& retry_after, std::string_view body);
// A 200 that says {"error": ...} (the API does this now and then).
std::optional<ToolError> error_in_body(const Json& body);

// One tool call's conversation with Tango: every request paced by the pipeline's rate
// limit, bounded by the call's deadline, cancelled with it, and counted.
class TangoCall {
public:
    // The key is found (api_key_for) when the first request goes out, so arguments are
    // checked before a missing key is reported.
    TangoCall(http_client::HttpClient& http, const TangoSettings& settings, RequestContext& ctx, const Json& args);
    // GET base_url + path (+ "?" + query): the parsed JSON of a 2xx answer; anything else
    // is a ToolError.
    Task<Json> get(const std::string& path, const Query& query);
    int requests() const { return requests_; }

private:
    http_client::HttpClient& http_;
    const TangoSettings& settings_;
    RequestContext& ctx_;
    const Json& args_;
    std::string api_key_;
    int requests_ = 0;
};

}  // namespace toolport::tango
