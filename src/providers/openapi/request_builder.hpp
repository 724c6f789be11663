// A tool call's arguments turned into the HTTP request its operation describes:
//
//   auto built = build_request(op, args, "https://petstore.example/v3", schemes, env_secret);
//   co_await http.fetch(std::move(built.request), ...);
//
//  - Path: every {name} replaced by its argument, percent-encoded as one segment ('/', '?',
//    '#' and '%' encoded, and a value of only dots such as ".." too), so no argument can
//    change the origin or climb out of the operation's path.
//  - Query (style form, explode by default): arrays as a=1&a=2, with explode: false as
//    a=1,2; spaceDelimited and pipeDelimited; objects exploded (k=v), joined (a=k,v) or
//    deepObject (a[k]=v).
//  - Headers and cookies: the simple style; a value with control characters is refused.
//  - Body: the merged arguments (or the `body` argument) as JSON.
//  - Credentials: the first security alternative of the operation (or of the document)
//    whose schemes all have their secret set; none set → MISSING_API_KEY naming the
//    environment variables.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "http_client/http_client.hpp"
#include "providers/openapi/openapi_document.hpp"
#include "providers/openapi/operations.hpp"
#include "providers/openapi/security_schemes.hpp"

namespace toolport::openapi {

// The value of an environment variable (std::getenv in the server; a map in tests).
using SecretLookup = std::function<std::optional<std::string>(const std::string& env_var)>;

struct BuiltRequest {
    http_client::Request request;
    std::vector<std::string> secrets;   // credential values sent: scrubbed from every message
    std::vector<std::string> env_vars;  // where they came from: named when the API refuses them
};

// Throws ToolError: MISSING_PARAMETER for a path parameter without a value (validation
// normally catches it first), INVALID_ARGUMENT for a header value with control
// characters, MISSING_API_KEY when no security alternative has its secrets.
BuiltRequest build_request(const Operation& op, const Json& args, const std::string& base_url,
                           const SecuritySchemes& schemes, const SecretLookup& secret_of);

}  // namespace toolport::openapi
