#include "guards/interceptor_guard.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/asio_executor.hpp"
#include "client/client_transport.hpp"
#include "client/mcp_client.hpp"
#include "observability/iso_time.hpp"
#include "server/request_context.hpp"

namespace toolport::guards {

using namespace std::chrono;
using pipeline::GuardFailure;
using pipeline::GuardPhase;
using pipeline::GuardVerdict;

namespace {

constexpr const char* kEvent = "tools/call";
// A connection (a child to start, a handshake, the discovery) may take longer than one
// check; it is made at start, so calls rarely wait for it.
constexpr milliseconds kMinConnectWait{10000};
// After a connection failed, calls fail at once for this long rather than each starting one.
constexpr seconds kReconnectPause{1};

bool hooks_event(const Json& events) {
    if (!events.is_array()) return false;
    return std::any_of(events.begin(), events.end(),
                       [](const Json& e) { return e.is_string() && (e == kEvent || e == "*"); });
}

void read_hook(const Json& hook, InterceptorInfo& info) {
    if (!hook.is_object() || !hooks_event(hook.value("events", Json()))) return;
    const std::string phase = hook.value("phase", std::string());
    // "both" is an earlier draft's.
    if (phase == "request" || phase == "both") info.request = true;
    if (phase == "response" || phase == "both") info.response = true;
}

std::string phase_name(GuardPhase phase) { return phase == GuardPhase::before ? "request" : "response"; }

}  // namespace

std::vector<InterceptorInfo> parse_interceptors(const Json& list_result) {
    if (!list_result.is_object() || !list_result.contains("interceptors") || !list_result["interceptors"].is_array())
        throw GuardFailure("its interceptors/list result has no interceptors array");
    std::vector<InterceptorInfo> out;
    for (const auto& d : list_result["interceptors"]) {
        if (!d.is_object() || !d.contains("name") || !d["name"].is_string()) continue;
        InterceptorInfo info;
        info.name = d["name"].get<std::string>();
        const std::string type = d.value("type", std::string());
        if (type != "validation" && type != "mutation") continue;  // a type of a later revision: not used
        info.mutation = type == "mutation";
        const Json mode = d.value("mode", Json());
        if (mode.is_string()) {
            // "enforce" is an earlier draft's name of active.
            if (mode == "audit") info.audit = true;
            else if (mode != "active" && mode != "enforce") continue;
        } else if (!mode.is_null()) {
            continue;
        }
        if (auto f = d.find("failOpen"); f != d.end() && f->is_boolean()) info.fail_open = f->get<bool>();
        if (auto hooks = d.find("hooks"); hooks != d.end() && hooks->is_array()) {
            for (const auto& hook : *hooks) read_hook(hook, info);
        }
        if (auto hook = d.find("hook"); hook != d.end()) read_hook(*hook, info);  // an earlier draft's single hook
        if (auto p = d.find("priorityHint"); p != d.end()) {
            if (p->is_number()) {
                info.priority_request = info.priority_response = p->get<double>();
            } else if (p->is_object()) {
                info.priority_request = p->value("request", 0.0);
                info.priority_response = p->value("response", 0.0);
            }
        }
        out.push_back(std::move(info));
    }
    return out;
}

InterceptorGuard::InterceptorGuard(AsioExecutor& executor, pipeline::GuardSettings settings)
    : executor_(executor), settings_(std::move(settings)) {}

InterceptorGuard::~InterceptorGuard() {
    if (client_) client_->terminate();
}

void InterceptorGuard::terminate() {
    terminated_ = true;
    if (client_) client_->terminate();
}

void InterceptorGuard::start() {
    std::weak_ptr<InterceptorGuard> weak = shared_from_this();
    executor_.post([weak] {
        auto self = weak.lock();
        if (!self || self->client_ || self->connecting_) return;
        spawn(self->connect(std::max(self->settings_.timeout, kMinConnectWait)), [self](std::exception_ptr error) {
            if (!error) return;
            spdlog::warn("guard {}: {}", self->settings_.name, self->last_error_);
        });
    });
}

bool InterceptorGuard::fails_open(const InterceptorInfo& interceptor) const {
    if (settings_.failure_mode) return *settings_.failure_mode == pipeline::FailureMode::open;
    return interceptor.fail_open.value_or(false);
}

Task<void> InterceptorGuard::connect(milliseconds wait) {
    auto self = shared_from_this();
    connecting_ = true;
    std::string error;
    if (client_) {
        client_->terminate();  // the one that ended; its child, if any, goes with it
        client_.reset();
    }
    try {
        const auto& s = *settings_.interceptors;
        std::unique_ptr<client::ClientTransport> transport;
        if (s.url.empty()) {
            client::StdioClientOptions o;
            o.argv = s.argv;
            o.env = s.env;
            const std::string name = settings_.name;
            o.on_stderr_line = [name](std::string_view line) { spdlog::info("guard {}: {}", name, line); };
            transport = client::make_stdio_transport(executor_, std::move(o));
        } else {
            client::HttpClientOptions o;
            o.url = s.url;
            o.headers = s.headers;
            o.bearer_token = s.bearer_token;
            o.listen = false;
            transport = client::make_http_transport(executor_, std::move(o));
        }
        client::ClientOptions options;
        options.client_name = "toolport-guard";
        options.request_timeout = wait;
        auto connection = std::make_shared<client::McpClient>(executor_, std::move(transport), options);
        co_await connection->connect();
        client::RequestOptions list_options;
        list_options.timeout = wait;
        Json listed = co_await connection->request("interceptors/list", Json::object(), list_options);
        interceptors_ = parse_interceptors(listed);
        client_ = std::move(connection);
        spdlog::info("guard {}: connected; {} interceptors offered", settings_.name, interceptors_.size());
    } catch (const std::exception& e) {
        error = e.what();
    }
    connecting_ = false;
    if (!error.empty()) {
        last_error_ = fmt::format("its MCP server cannot be used: {}", error);
        retry_at_ = steady_clock::now() + kReconnectPause;
    }
    auto waiting = std::move(waiting_);
    waiting_.clear();
    for (auto& w : waiting) w.set_value(error.empty());
    if (!error.empty()) throw GuardFailure(last_error_);
}

Task<std::shared_ptr<client::McpClient>> InterceptorGuard::connection(milliseconds wait) {
    if (terminated_) throw GuardFailure("it is shut down");
    if (client_ && client_->is_open()) co_return client_;
    if (connecting_) {
        Completion<bool> done;
        waiting_.push_back(done);
        co_await done;
        if (client_ && client_->is_open()) co_return client_;
        throw GuardFailure(last_error_);
    }
    if (steady_clock::now() < retry_at_) throw GuardFailure(last_error_);
    co_await connect(wait);
    co_return client_;
}

Task<Json> InterceptorGuard::invoke(client::McpClient& client, const InterceptorInfo& interceptor,
                                    const pipeline::GuardInput& input, const Json& payload,
                                    const pipeline::GuardCallLimits& limits) {
    const auto left = duration_cast<milliseconds>(limits.deadline - steady_clock::now());
    if (left.count() <= 0) throw GuardFailure(fmt::format("no verdict within {} ms", limits.timeout.count()));
    Json params = {{"name", interceptor.name},
                   {"event", kEvent},
                   {"phase", phase_name(input.phase)},
                   {"payload", payload},
                   {"timeoutMs", left.count()}};
    const auto& s = *settings_.interceptors;
    if (!s.config.is_null()) params["config"] = s.config;
    const auto& caller = input.caller;
    const std::string& id = caller.subject.empty() ? caller.principal : caller.subject;
    Json context = {{"timestamp", observability::iso8601_utc(system_clock::now(), true)}};
    context["principal"] = id.empty() ? Json{{"type", "anonymous"}} : Json{{"type", "user"}, {"id", id}};
    if (!caller.trace_id.empty()) context["traceId"] = caller.trace_id;
    params["context"] = std::move(context);
    client::RequestOptions options;
    options.timeout = left;
    options.cancel = limits.cancel;
    co_return co_await client.request("interceptor/invoke", std::move(params), options);
}

namespace {

// The result echoes the invocation (SEP-2624 M1): otherwise it is malformed.
void check_echo(const Json& result, const InterceptorInfo& interceptor, const std::string& phase) {
    if (!result.is_object() || result.value("interceptor", std::string()) != interceptor.name ||
        result.value("type", std::string()) != (interceptor.mutation ? "mutation" : "validation") ||
        result.value("phase", std::string()) != phase) {
        throw GuardFailure("its result does not name the interceptor, type and phase invoked");
    }
}

std::string messages_of(const Json& result) {
    std::string text;
    if (auto m = result.find("messages"); m != result.end() && m->is_array()) {
        for (const auto& message : *m) {
            if (!message.is_object() || !message.contains("message") || !message["message"].is_string()) continue;
            if (!text.empty()) text += "; ";
            text += message["message"].get<std::string>();
        }
    }
    return text;
}

}  // namespace

Task<std::optional<std::string>> InterceptorGuard::validation_pass(client::McpClient& client,
                                                                   const std::vector<InterceptorInfo>& validators,
                                                                   const pipeline::GuardInput& input,
                                                                   const Json& payload,
                                                                   const pipeline::GuardCallLimits& limits) {
    const std::string phase = phase_name(input.phase);
    std::optional<std::string> denied;
    std::string blocking_failure;
    // Every validator runs, whatever an earlier one decided (the SEP's complete pass).
    for (const auto& v : validators) {
        std::string failure;
        try {
            Json result = co_await invoke(client, v, input, payload, limits);
            check_echo(result, v, phase);
            if (!result.contains("valid") || !result["valid"].is_boolean())
                throw GuardFailure("its validation result has no boolean \"valid\"");
            if (result["valid"].get<bool>() || v.audit) continue;
            const Json severity = result.value("severity", Json());
            if (severity == "info" || severity == "warn") {
                spdlog::info("guard {}: interceptor {} ({}): {}", settings_.name, v.name, severity.get<std::string>(),
                             messages_of(result));
                continue;
            }
            if (!denied) {
                std::string why = messages_of(result);
                denied = fmt::format("interceptor {}: {}", v.name, why.empty() ? "the input is not valid" : why);
            }
        } catch (const std::exception& e) {
            failure = e.what();
        }
        if (failure.empty()) continue;
        if (v.audit || fails_open(v)) {
            spdlog::warn("guard {}: interceptor {} failed ({}); it fails open", settings_.name, v.name, failure);
        } else if (blocking_failure.empty()) {
            blocking_failure = fmt::format("interceptor {} failed: {}", v.name, failure);
        }
    }
    if (denied) co_return denied;
    if (!blocking_failure.empty()) throw GuardFailure(blocking_failure);
    co_return std::nullopt;
}

Task<std::optional<Json>> InterceptorGuard::mutation_pass(client::McpClient& client,
                                                          const std::vector<InterceptorInfo>& mutators,
                                                          const pipeline::GuardInput& input, const Json& payload,
                                                          const pipeline::GuardCallLimits& limits) {
    const std::string phase = phase_name(input.phase);
    Json current = payload;
    bool changed = false;
    for (const auto& m : mutators) {
        std::string failure;
        try {
            Json result = co_await invoke(client, m, input, current, limits);
            check_echo(result, m, phase);
            if (!result.contains("modified") || !result["modified"].is_boolean() || !result.contains("payload"))
                throw GuardFailure("its mutation result has no boolean \"modified\" and \"payload\"");
            const bool modified = result["modified"].get<bool>();
            if (!modified && result["payload"] != current)
                throw GuardFailure("its result says it did not modify the payload but returns another one");
            if (modified && input.phase == GuardPhase::before) {
                const Json& p = result["payload"];
                if (!p.is_object() || !p.contains("params") || !p["params"].is_object() ||
                    !p["params"].contains("arguments") || !p["params"]["arguments"].is_object())
                    throw GuardFailure("its mutated payload has no params.arguments object");
            }
            if (modified && !m.audit) {  // audit: a shadow mutation, recorded only
                current = std::move(result["payload"]);
                changed = true;
            }
        } catch (const std::exception& e) {
            failure = e.what();
        }
        if (failure.empty()) continue;
        if (m.audit || fails_open(m)) {
            spdlog::warn("guard {}: interceptor {} failed ({}); it fails open", settings_.name, m.name, failure);
            continue;
        }
        throw GuardFailure(fmt::format("interceptor {} failed: {}", m.name, failure));
    }
    if (!changed) co_return std::nullopt;
    co_return current;
}

Task<GuardVerdict> InterceptorGuard::check(const pipeline::GuardInput& input, const pipeline::GuardCallLimits& limits) {
    auto self = shared_from_this();
    auto client = co_await connection(std::max(limits.timeout, kMinConnectWait));
    const bool request = input.phase == GuardPhase::before;
    auto hooked = [&](const InterceptorInfo& i) { return request ? i.request : i.response; };

    std::vector<InterceptorInfo> validators;
    std::vector<InterceptorInfo> mutators;
    auto add = [&](const InterceptorInfo& i) { (i.mutation ? mutators : validators).push_back(i); };
    const auto& names = settings_.interceptors->names;
    if (!names.empty()) {
        for (const auto& name : names) {
            auto it = std::find_if(interceptors_.begin(), interceptors_.end(),
                                   [&](const InterceptorInfo& i) { return i.name == name; });
            if (it == interceptors_.end())
                throw GuardFailure(fmt::format("its MCP server offers no interceptor \"{}\"", name));
            if (hooked(*it)) add(*it);
        }
    } else {
        for (const auto& i : interceptors_) {
            if (hooked(i)) add(i);
        }
    }
    std::sort(mutators.begin(), mutators.end(), [&](const InterceptorInfo& a, const InterceptorInfo& b) {
        const double pa = request ? a.priority_request : a.priority_response;
        const double pb = request ? b.priority_request : b.priority_response;
        return pa != pb ? pa < pb : a.name < b.name;
    });

    Json payload = request ? Json{{"method", kEvent}, {"params", {{"name", input.tool}, {"arguments", input.arguments}}}}
                           : (input.result ? *input.result : Json::object());
    GuardVerdict verdict;
    std::optional<Json> mutated;
    if (request) {
        // Toolport receives the request: validate what came, then transform it.
        if (auto denied = co_await validation_pass(*client, validators, input, payload, limits)) {
            verdict.allow = false;
            verdict.reason = std::move(*denied);
            co_return verdict;
        }
        mutated = co_await mutation_pass(*client, mutators, input, payload, limits);
        if (mutated) verdict.replacement = std::move((*mutated)["params"]["arguments"]);
        co_return verdict;
    }
    // Toolport emits the response: transform it, then validate what will go out.
    mutated = co_await mutation_pass(*client, mutators, input, payload, limits);
    if (auto denied = co_await validation_pass(*client, validators, input, mutated ? *mutated : payload, limits)) {
        verdict.allow = false;
        verdict.reason = std::move(*denied);
        co_return verdict;
    }
    if (mutated) verdict.replacement = std::move(*mutated);
    co_return verdict;
}

}  // namespace toolport::guards
