#include "providers/openapi/openapi_tools.hpp"

#include "http_client/response_too_large.hpp"
#include "http_client/url.hpp"
#include "providers/downstream_errors.hpp"
#include "providers/openapi/response_mapping.hpp"
#include "server/request_context.hpp"
#include "util/ascii.hpp"
#include "providers/credentials_tool_error.hpp"

namespace toolport::openapi {

namespace {

// A coroutine of its own (not the handler lambda's body), so that its state lives in its
// frame: a reload may replace the tool, and its handler, while a call is under way.
Task<ToolResult> call_operation(std::shared_ptr<const Operation> op, std::shared_ptr<const Api> api,
                                RequestContext& ctx, Json args) {
    if (!api->http) throw ToolError(ToolErrorCode::internal_error, "This process has no HTTP client for OpenAPI tools");
    BuiltRequest built = build_request(*op, args, api->base_url, api->schemes, api->secret_of);
    const std::string url_shown = built.request.url.substr(0, built.request.url.find('?'));
    http_client::CallOptions options;
    options.deadline = ctx.deadline();
    options.cancel = &ctx.cancel_token();
    options.max_response_bytes = api->max_response_bytes;
    options.before_attempt = [&ctx]() -> Task<void> { co_await ctx.pace_downstream_request(); };
    options.trace_parent = &ctx.trace_context();
    options.baggage = ctx.baggage();
    http_client::Response response;
    // A 401 to a token from the authorization server: a new one, once.
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto request = built.request;
        std::string authorization;
        if (api->tokens) {
            try {
                authorization = co_await api->tokens->for_caller(ctx.caller().access_token);
            } catch (const auth::UpstreamCredentialsError& e) {
                throw providers::credentials_tool_error(e);
            }
            // auth: replaces what a security scheme would have sent.
            std::erase_if(request.headers,
                          [](const auto& h) { return util::to_lower_ascii(h.first) == "authorization"; });
            request.headers.emplace_back("Authorization", authorization);
            // The token itself, without its scheme, is a secret the answer may echo too.
            built.secrets.push_back(authorization.substr(authorization.find(' ') + 1));
        }
        try {
            response = co_await api->http->fetch(std::move(request), options);
        } catch (const http_client::HttpError& e) {
            throw providers::unreachable_error(e, api->name, "the source's base_url and the network settings");
        } catch (const http_client::ResponseTooLarge& e) {
            throw providers::too_large_error(e.limit, api->name,
                                             "Ask for less (filters, a smaller page); the source's max_response_bytes "
                                             "sets the limit.");
        }
        if (response.status != 401 || authorization.empty() || attempt == 1) break;
        api->tokens->rejected(authorization);
    }
    if (response.status < 200 || response.status > 299) {
        throw error_from_response(response, api->name, built.secrets, built.env_vars);
    }
    ToolResult result = result_from_response(*op, response, url_shown, built.secrets);
    // The requests really sent (retries included): the budget stage settles the call's
    // reservation with this figure, and would charge its whole estimate without it.
    result.meta = {{"downstream_api_calls", ctx.downstream_requests()}};
    co_return result;
}

// The outputSchema a tool declares: the API's object, or the error fields an isError
// result carries as structuredContent (ToolError::to_json). Clients such as the official
// TypeScript SDK check an error result's structuredContent against the outputSchema too;
// without the second branch every failure (a 404, arguments refused) would reach them as
// a schema violation instead of the error.
Json output_schema_with_errors(const Json& api_schema) {
    if (api_schema.is_null()) return api_schema;
    static const Json error_fields = {{"type", "object"},
                                      {"description", "The error, when the result has isError: true"},
                                      {"required", {"error", "error_code"}},
                                      {"properties",
                                       {{"error", {{"type", "string"}}},
                                        {"error_code", {{"type", "string"}}},
                                        {"suggestion", {{"type", "string"}}},
                                        {"recoverable", {{"type", "boolean"}}},
                                        {"transient", {{"type", "boolean"}}},
                                        {"retry_after_ms", {{"type", "integer"}}}}}};
    return {{"type", "object"}, {"anyOf", Json::array({api_schema, error_fields})}};
}

std::string kind_name(SecurityScheme::Kind kind) {
    switch (kind) {
        case SecurityScheme::Kind::api_key_header: return "header";
        case SecurityScheme::Kind::api_key_query: return "query";
        case SecurityScheme::Kind::api_key_cookie: return "cookie";
        case SecurityScheme::Kind::bearer: return "bearer";
        case SecurityScheme::Kind::basic: return "basic";
    }
    return "?";
}

std::string target_of(const Operation& op, const Api& api) {
    Json params = Json::array();
    for (const auto& p : op.parameters) params.push_back({p.name, p.location, p.argument, p.style, p.explode});
    Json security = Json::array();
    for (const auto& alternative : op.security) {
        Json schemes = Json::array();
        for (const auto& name : alternative) {
            auto s = api.schemes.find(name);
            schemes.push_back(s == api.schemes.end()
                                  ? Json{name}
                                  : Json{name, kind_name(s->second.kind), s->second.parameter, s->second.env_var});
        }
        security.push_back(std::move(schemes));
    }
    Json target = {{"method", op.method},
                   {"url", api.base_url + op.path},
                   {"parameters", std::move(params)},
                   {"body",
                    {static_cast<int>(op.body.layout), op.body.media_type, op.body.properties, op.body.argument,
                     op.body.required}},
                   {"json", op.expects_json},
                   {"security", std::move(security)}};
    return target.dump();
}

}  // namespace

std::vector<providers::SyncedTool> make_tools(const std::vector<Operation>& operations, std::shared_ptr<const Api> api) {
    std::vector<providers::SyncedTool> out;
    for (const auto& operation : operations) {
        auto op = std::make_shared<const Operation>(operation);
        providers::ToolDeclaration d;
        d.name = op->tool_name;
        d.title = op->title;
        d.description = op->description;
        d.input_schema = op->input_schema;
        d.output_schema = output_schema_with_errors(op->output_schema);
        d.annotations = op->annotations;
        d.service = api->name;
        d.paces_downstream = true;  // call_operation paces every request it sends
        d.handler = [op, api](RequestContext& ctx, const Json& args) { return call_operation(op, api, ctx, args); };
        out.push_back({std::move(d), target_of(*op, *api)});
    }
    return out;
}

}  // namespace toolport::openapi
