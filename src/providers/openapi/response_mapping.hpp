// What an API's answer to an operation becomes:
//  - 2xx JSON: structuredContent (plus its text) when the operation declares an object
//    outputSchema and the answer is an object; the JSON text alone when there is no
//    outputSchema; an answer that is not the declared object is an UPSTREAM_ERROR (MCP
//    requires structured content matching the schema);
//  - 2xx text/* (and XML): the text; anything else: an embedded blob resource (base64);
//    no body: a line saying so; the request's credentials redacted from JSON and text;
//  - non-2xx: a ToolError with the API's own message (secrets scrubbed, sanitized):
//    401/403 INVALID_ARGUMENT naming the credential variables to check, 404 NOT_FOUND,
//    408 and 5xx UPSTREAM_ERROR (transient), 429 RATE_LIMITED with Retry-After, other 4xx
//    INVALID_ARGUMENT.
#pragma once

#include <string>
#include <vector>

#include "http_client/http_client.hpp"
#include "providers/openapi/operations.hpp"
#include "server/tool_error.hpp"

namespace toolport::openapi {

// `resource_uri`: names a binary answer (the request URL without its query). `secrets`:
// the credentials the request sent, redacted from the JSON and text answers
// (secret_redaction.hpp; a binary answer is passed on as it came). Throws ToolError
// UPSTREAM_ERROR when the redacted answer no longer matches the operation's outputSchema.
ToolResult result_from_response(const Operation& op, const http_client::Response& response,
                                const std::string& resource_uri, const std::vector<std::string>& secrets = {});

// `api`: how messages name the API (the source's name); `secrets`: values never to show;
// `env_vars`: the credential variables the request used.
ToolError error_from_response(const http_client::Response& response, const std::string& api,
                              const std::vector<std::string>& secrets, const std::vector<std::string>& env_vars);

}  // namespace toolport::openapi
