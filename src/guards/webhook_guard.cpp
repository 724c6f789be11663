#include "guards/webhook_guard.hpp"

#include <fmt/format.h>

#include "http_client/http_client.hpp"
#include "server/request_context.hpp"

namespace toolport::guards {

using pipeline::GuardFailure;
using pipeline::GuardPhase;
using pipeline::GuardVerdict;

WebhookGuard::WebhookGuard(http_client::HttpClient& http, std::string name, pipeline::GuardSettings::Webhook settings)
    : http_(http), name_(std::move(name)), settings_(std::move(settings)) {}

Json webhook_request(const std::string& guard, const pipeline::GuardInput& input) {
    Json body = {{"version", 1},
                 {"guard", guard},
                 {"phase", std::string(pipeline::to_string(input.phase))},
                 {"request_id", input.request_id},
                 {"tool", input.tool},
                 {"source", input.source},
                 {"arguments", input.arguments}};
    if (input.phase == GuardPhase::after && input.result) body["result"] = *input.result;
    // Who calls, never with what credential (no token, no client headers).
    const auto& caller = input.caller;
    const std::string& id = caller.subject.empty() ? caller.principal : caller.subject;
    if (id.empty()) {
        body["principal"] = nullptr;
    } else {
        Json principal = {{"id", id}};
        if (caller.scopes) principal["scopes"] = *caller.scopes;
        body["principal"] = std::move(principal);
    }
    if (!caller.session_id.empty()) body["session_id"] = caller.session_id;
    if (!caller.trace_id.empty()) body["trace_id"] = caller.trace_id;
    return body;
}

GuardVerdict parse_webhook_reply(std::string_view body, GuardPhase phase) {
    Json reply;
    try {
        reply = Json::parse(body);
    } catch (const Json::exception&) {
        throw GuardFailure("its reply is not JSON");
    }
    if (!reply.is_object()) throw GuardFailure("its reply is not a JSON object");
    auto decision = reply.find("decision");
    if (decision == reply.end() || !decision->is_string())
        throw GuardFailure("its reply has no \"decision\" (allow, deny or modify)");
    auto text = [&](const char* key) {
        auto it = reply.find(key);
        if (it == reply.end() || it->is_null()) return std::string();
        if (!it->is_string()) throw GuardFailure(fmt::format("its reply's \"{}\" is not a string", key));
        return it->get<std::string>();
    };
    GuardVerdict verdict;
    const auto& d = decision->get_ref<const std::string&>();
    if (d == "allow") {
        verdict.allow = true;
    } else if (d == "deny") {
        verdict.allow = false;
        verdict.reason = text("reason");
        verdict.suggestion = text("suggestion");
    } else if (d == "modify") {
        const char* key = phase == GuardPhase::before ? "arguments" : "result";
        auto it = reply.find(key);
        if (it == reply.end() || !it->is_object())
            throw GuardFailure(fmt::format("its reply modifies the {} but has no \"{}\" object",
                                           phase == GuardPhase::before ? "arguments" : "result", key));
        verdict.replacement = *it;
    } else {
        throw GuardFailure("its reply's \"decision\" is not allow, deny or modify");
    }
    if (auto ttl = reply.find("cache_ttl_s"); ttl != reply.end() && !ttl->is_null()) {
        if (!ttl->is_number_integer() || ttl->get<std::int64_t>() < 0)
            throw GuardFailure("its reply's \"cache_ttl_s\" is not a whole number of seconds");
        verdict.cacheable_for = std::chrono::seconds(ttl->get<std::int64_t>());
    }
    return verdict;
}

Task<GuardVerdict> WebhookGuard::check(const pipeline::GuardInput& input, const pipeline::GuardCallLimits& limits) {
    http_client::Request request;
    request.method = "POST";
    request.url = settings_.url;
    request.headers = settings_.headers;
    request.headers.emplace_back("Content-Type", "application/json");
    request.headers.emplace_back("Accept", "application/json");
    if (!settings_.bearer_token.empty())
        request.headers.emplace_back("Authorization", "Bearer " + settings_.bearer_token);
    request.body = webhook_request(name_, input).dump(-1, ' ', false, Json::error_handler_t::replace);

    http_client::CallOptions options;
    options.deadline = limits.deadline;
    options.cancel = limits.cancel;
    options.max_response_bytes = settings_.max_response_bytes;
    options.max_attempts = 1;  // a POST: never sent twice
    options.max_redirects = 0;
    options.trace_parent = limits.trace;
    http_client::Response response;
    try {
        response = co_await http_.fetch(std::move(request), std::move(options));
    } catch (const http_client::HttpError& e) {
        if (e.kind == http_client::HttpError::Kind::timeout)
            throw GuardFailure(fmt::format("no verdict within {} ms", limits.timeout.count()));
        throw GuardFailure(e.what());
    } catch (const http_client::ResponseTooLarge&) {
        throw GuardFailure(fmt::format("its reply is larger than {} bytes", settings_.max_response_bytes));
    }
    if (response.status < 200 || response.status >= 300)
        throw GuardFailure(fmt::format("it answered HTTP {}", response.status));
    co_return parse_webhook_reply(response.body, input.phase);
}

}  // namespace toolport::guards
