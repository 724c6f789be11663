#include "providers/openapi/response_mapping.hpp"

#include <fmt/format.h>

#include "providers/downstream_errors.hpp"
#include "providers/secret_redaction.hpp"
#include "server/content.hpp"
#include "util/ascii.hpp"
#include "util/base64.hpp"
#include "util/sanitize.hpp"

namespace toolport::openapi {

namespace {

std::string media_type_of(const http_client::Response& response) {
    std::string type = response.header("Content-Type").value_or("");
    type = type.substr(0, type.find(';'));
    while (!type.empty() && type.back() == ' ') type.pop_back();
    return util::to_lower_ascii(type);
}

bool is_json(const std::string& type) {
    return type == "application/json" || (type.rfind("application/", 0) == 0 && type.ends_with("+json"));
}

bool is_text(const std::string& type) {
    return type.rfind("text/", 0) == 0 || type == "application/xml" || type.ends_with("+xml") ||
           type == "application/yaml" || type == "application/x-yaml";
}

// The API's reason in an error body: the usual fields of JSON error bodies (RFC 9457
// problem details, {"message"}, {"error": {"message"}}, {"errors": [{"message"}]}), else
// the text itself.
std::string api_message(const std::string& body) {
    auto parsed = Json::parse(body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) return body;
    auto text_at = [&](const Json& object, const char* key) -> std::string {
        auto it = object.find(key);
        if (it == object.end()) return {};
        if (it->is_string()) return it->get<std::string>();
        if (it->is_object() && it->contains("message") && (*it)["message"].is_string()) return (*it)["message"];
        if (it->is_array() && !it->empty()) {
            const Json& first = (*it)[0];
            if (first.is_string()) return first.get<std::string>();
            if (first.is_object() && first.contains("message") && first["message"].is_string()) return first["message"];
        }
        return {};
    };
    const std::string title = text_at(parsed, "title");
    const std::string detail = text_at(parsed, "detail");
    if (!title.empty() && !detail.empty()) return title + ": " + detail;
    for (const char* key : {"message", "detail", "error_description", "error", "title", "errors"}) {
        if (auto text = text_at(parsed, key); !text.empty()) return text;
    }
    return body;
}

}  // namespace

namespace {

ToolResult unredacted_result(const Operation& op, const http_client::Response& response,
                             const std::string& resource_uri, const std::vector<std::string>& secrets) {
    const std::string type = media_type_of(response);
    if (response.body.empty()) {
        if (!op.output_schema.is_null()) {
            throw ToolError(ToolErrorCode::upstream_error,
                            fmt::format("The API answered HTTP {} with no body, where {} promises an object",
                                        response.status, op.tool_name))
                .suggest("Retry; if it persists, the API does not follow its own document.");
        }
        return ToolResult::text(fmt::format("HTTP {} (no content)", response.status));
    }
    if (is_json(type) || (type.empty() && op.expects_json)) {
        auto value = Json::parse(response.body, nullptr, false);
        if (!value.is_discarded()) {
            if (op.output_schema.is_null()) {
                // The API's own text, unless a secret is in it, escaped (a "\/" or "\u00..."
                // the text does not show as the secret) or not: then the redacted value's.
                if (providers::redact_json(value, secrets)) {
                    return ToolResult::text(value.dump(-1, ' ', false, Json::error_handler_t::replace));
                }
                return ToolResult::text(response.body);
            }
            if (value.is_object()) return ToolResult::structured(std::move(value));
        }
        if (!op.output_schema.is_null()) {
            throw ToolError(ToolErrorCode::upstream_error,
                            fmt::format("The API's answer is not the JSON object {} promises", op.tool_name))
                .transient(false)
                .suggest("The API does not follow its own document for this operation.");
        }
    }
    if (is_text(type) || type.empty()) return ToolResult::text(response.body);
    return ToolResult{}.add(content::embedded_blob_resource(resource_uri, util::base64_encode(response.body), type));
}

}  // namespace

ToolResult result_from_response(const Operation& op, const http_client::Response& response,
                                const std::string& resource_uri, const std::vector<std::string>& secrets) {
    ToolResult result = unredacted_result(op, response, resource_uri, secrets);
    // An API that echoes the keys it was sent must not hand them to the client: as in its
    // errors, they are redacted (text, structuredContent, embedded text).
    if (providers::redact_result(result, secrets))
        providers::check_redacted_output(result, op.output_schema, op.tool_name);
    return result;
}

ToolError error_from_response(const http_client::Response& response, const std::string& api,
                              const std::vector<std::string>& secrets, const std::vector<std::string>& env_vars) {
    const unsigned status = response.status;
    const std::string message = util::sanitize_for_message(providers::redact_text(api_message(response.body), secrets),
                                                           500);
    const std::string reason = message.empty() ? "no reason given" : message;
    if (status == 401 || status == 403) {
        std::string vars;
        for (const auto& v : env_vars) vars += (vars.empty() ? "" : ", ") + v;
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("{} refused the request (HTTP {}): {}", api, status, reason))
            .suggest(vars.empty() ? "The operation sent no credentials; check the document's security schemes and "
                                    "the source's `credentials:` setting."
                                  : fmt::format("Check the credentials in {} (the server's environment).", vars));
    }
    if (status == 404) {
        return ToolError(ToolErrorCode::not_found, fmt::format("{} found nothing (HTTP 404): {}", api, reason))
            .suggest("Check the identifiers in the path.");
    }
    if (status == 429) {
        return providers::rate_limited_error(fmt::format("{} rate limit reached (HTTP 429): {}", api, reason),
                                             response.header("Retry-After"));
    }
    if (status == 408 || status >= 500) {
        return ToolError(ToolErrorCode::upstream_error, fmt::format("{} failed (HTTP {}): {}", api, status, reason))
            .transient(true)
            .suggest("The API had trouble; retry in a moment.");
    }
    if (status >= 400) {
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("{} rejected the request (HTTP {}): {}", api, status, reason))
            .suggest("Correct the argument the message names and retry.");
    }
    return ToolError(ToolErrorCode::upstream_error, fmt::format("{} answered HTTP {}: {}", api, status, reason))
        .suggest("The API answered with a status the operation does not expect.");
}

}  // namespace toolport::openapi
