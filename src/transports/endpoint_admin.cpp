// The operator's endpoints: GET /metrics (Prometheus), GET /health (the health report,
// scrubbed when public) and POST /admin/reload. Who may reach them is decided in routing
// (http_endpoint.cpp) and endpoint_auth.cpp (admin_refusal, profile_refusal).
#include "transports/endpoint_state.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/task.hpp"
#include "observability/metrics.hpp"
#include "auth/jwt.hpp"
#include "transports/http_policy.hpp"
#include "util/sanitize.hpp"

namespace toolport {

namespace ec = protocol::error_code;

// GET /metrics (Prometheus text format 0.0.4) and GET /health (the health report).
HttpAnswer HttpEndpoint::State::observability_answer(const HttpRequestView& req, bool metrics) {
    if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    // Both describe this moment: a cached copy would be wrong.
    if (metrics) {
        // OpenMetrics when the scraper asks for it (Prometheus does): it carries exemplars.
        if (req.header("Accept").find("application/openmetrics-text") != std::string_view::npos) {
            return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                                 {{"Content-Type",
                                                   "application/openmetrics-text; version=1.0.0; charset=utf-8"},
                                                  {"Cache-Control", "no-store"}},
                                                 observability::metrics().render_openmetrics()));
        }
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                             {{"Content-Type", "text/plain; version=0.0.4; charset=utf-8"},
                                              {"Cache-Control", "no-store"}},
                                             observability::metrics().render()));
    }
    auto [status, body] = health_response();
    return answer_with(req, format_reply(req.version(), req.keep_alive(), static_cast<unsigned>(status),
                                         {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                         std::move(body)));
}

// POST /admin/reload. Without authentication the check above let everyone in: then only
// a loopback listener serves it, so an open port is never an unauthenticated admin door.
// 202 when this request started a reload; 200 with Retry-After when it was answered with
// the running (or last) one's outcome instead (reload.min_interval_s).
HttpAnswer HttpEndpoint::State::reload_answer(const HttpRequestView& req) {
    if (req.method() != HttpMethod::post) return method_not_allowed(req, "Method Not Allowed: use POST", "POST");
    if (!auth_on() && !http_policy::is_loopback_host(opts.host)) {
        return rpc_error(req, 403, ec::kInvalidRequest,
                         "Forbidden: /admin/reload needs bearer authentication when not listening on loopback");
    }
    AdminReload outcome;
    try {
        outcome = opts.reload();
    } catch (const std::exception& e) {
        spdlog::error("reload failed: {}", util::sanitize_for_message(e.what()));
        return rpc_error(req, 500, ec::kInternalError, "the reload could not be started");
    }
    if (outcome.started) {
        return answer_with(req, format_reply(req.version(), req.keep_alive(), 202,
                                             {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                             std::move(outcome.body)));
    }
    const auto retry_after = std::to_string(std::max<long long>(outcome.retry_after.count(), 1));
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                         {{"Content-Type", "application/json"},
                                          {"Cache-Control", "no-store"},
                                          {"Retry-After", retry_after}},
                                         std::move(outcome.body)));
}

// Without authentication, the operator's reading endpoints are served only on a loopback
// listener, as /admin/reload is: the audit log names callers and what they called.
std::optional<HttpAnswer> HttpEndpoint::State::open_admin_refusal(const HttpRequestView& req, std::string_view path) {
    if (auth_on() || http_policy::is_loopback_host(opts.host)) return std::nullopt;
    return rpc_error(req, 403, ec::kInvalidRequest,
                     fmt::format("Forbidden: {} needs bearer authentication when not listening on loopback", path));
}

// GET /audit: read off the engine's loop (the query reads files or Redis), answered when done.
HttpAnswer HttpEndpoint::State::audit_answer(const HttpRequestView& req, std::string_view query) {
    if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    if (auto refusal = open_admin_refusal(req, "/audit")) return std::move(*refusal);
    auto deferred = make_deferred();
    auto request = std::make_shared<endpoint::OwnedRequest>(req);
    auto work = [self = shared_from_this(), q = std::string(query.empty() ? query : query.substr(1))]() {
        return self->opts.audit_query(q);
    };
    spawn(answer_json_later(shared_from_this(), deferred, std::move(request), std::move(work), "audit query",
                            R"({"error":"the audit query failed"})"),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

Task<void> HttpEndpoint::State::answer_json_later(std::shared_ptr<State> self,
                                                  std::shared_ptr<endpoint::DeferredAnswer> deferred,
                                                  std::shared_ptr<endpoint::OwnedRequest> req,
                                                  std::function<Task<std::pair<int, std::string>>()> work,
                                                  std::string what, std::string failure_body) {
    std::pair<int, std::string> result;
    try {
        result = co_await work();
    } catch (const std::exception& e) {
        spdlog::error("{} failed: {}", what, util::sanitize_for_message(e.what()));
        result = {500, std::move(failure_body)};
    }
    if (self->stopping) {
        deferred->resolve({});
        co_return;
    }
    deferred->resolve(
        self->answer_with(*req, format_reply(req->version(), req->keep_alive(), static_cast<unsigned>(result.first),
                                             {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                             std::move(result.second))));
}

// /admin/pins: pinning's API (HttpOptions::pins), answered when the store has answered.
// Only POST changes anything; without authentication only on a loopback listener.
HttpAnswer HttpEndpoint::State::pins_answer(const HttpRequestView& req, std::string_view path,
                                            const Credential& credential) {
    const bool read = path == "/admin/pins";
    if (read && req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    if (!read && req.method() != HttpMethod::post) {
        return method_not_allowed(req, "Method Not Allowed: use POST", "POST");
    }
    if (auto refusal = open_admin_refusal(req, "/admin/pins")) return std::move(*refusal);
    std::string who = credential.oauth ? "oauth:" + credential.oauth->subject : auth_on() ? "bearer" : "loopback";
    auto deferred = make_deferred();
    auto request = std::make_shared<endpoint::OwnedRequest>(req);
    auto work = [self = shared_from_this(), request, path = std::string(path), who = std::move(who)]() {
        return self->opts.pins(request->method() == HttpMethod::get ? "GET" : "POST", path, request->body(), who);
    };
    spawn(answer_json_later(shared_from_this(), deferred, std::move(request), std::move(work), "pins request",
                            R"({"error":"the pins store could not be reached"})"),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return deferred_answer(deferred);
}

// GET /orchestration: the orchestration summary, now.
HttpAnswer HttpEndpoint::State::orchestration_answer(const HttpRequestView& req) {
    if (req.method() != HttpMethod::get) return method_not_allowed(req, "Method Not Allowed: use GET", "GET");
    if (auto refusal = open_admin_refusal(req, "/orchestration")) return std::move(*refusal);
    return answer_with(req, format_reply(req.version(), req.keep_alive(), 200,
                                         {{"Content-Type", "application/json"}, {"Cache-Control", "no-store"}},
                                         opts.orchestration()));
}

// /health is public (http.public_health): the states sources report are free text, and a
// URL in one (an upstream's, a document's) loses its userinfo and query, where keys go.
std::string HttpEndpoint::State::public_report(std::string body) {
    auto report = Json::parse(body, nullptr, false);
    if (report.is_discarded()) return body;
    auto scrub = [](auto& self, Json& value) -> void {
        if (value.is_string()) value = http_policy::public_text(value.get_ref<const std::string&>());
        else if (value.is_structured())
            for (auto& child : value) self(self, child);
    };
    scrub(scrub, report);
    return report.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// The health report from the application; a report that cannot be made is itself a
// sign of trouble (500), never a reason to drop the connection.
std::pair<int, std::string> HttpEndpoint::State::health_response() {
    try {
        auto [status, body] = opts.health_report();
        if (status < 100 || status > 599) throw std::runtime_error(fmt::format("HTTP status {} out of range", status));
        return {status, public_report(std::move(body))};
    } catch (const std::exception& e) {
        spdlog::error("health report failed: {}", util::sanitize_for_message(e.what()));
    } catch (...) {
        spdlog::error("health report failed with a non-standard exception");
    }
    return {500, R"({"status":"unhealthy","error":"the health report failed"})"};
}

}  // namespace toolport
