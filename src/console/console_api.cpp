#include "console/console_api.hpp"

#include <map>
#include <set>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "console/console_reply.hpp"
#include "console/page.hpp"
#include "console/playground.hpp"
#include "console/query_string.hpp"
#include "console/tool_catalog.hpp"
#include "server/server.hpp"
#include "server/tasks.hpp"
#include "stores/audit_feed.hpp"
#include "stores/audit_record.hpp"
#include "async/executor.hpp"
#include "transports/sse_stream.hpp"
#include "util/closest_name.hpp"

namespace toolport::console {

namespace {

using Verdict = ConsoleAccess::Verdict;

// The refusal of a caller the endpoint did not let in, as the API words it.
HttpAnswer api_refusal(const HttpRequestView& req, const ConsoleAccess& access) {
    std::vector<HttpHeader> challenge;
    if (!access.challenge.empty()) challenge.push_back({"WWW-Authenticate", access.challenge});
    switch (access.verdict) {
        case Verdict::needs_credential:
            return error_answer(req, 401, "unauthorized", "Unauthorized: " + access.why,
                                "send Authorization: Bearer <token> with one of the server's bearer tokens or an "
                                "OAuth access token with the operator scope",
                                challenge);
        case Verdict::insufficient_scope:
            return error_answer(req, 403, "insufficient_scope", "Forbidden: " + access.why,
                                "ask the authorization server for a token with the operator scope "
                                "(console.operator_scope), or use one of the server's own bearer tokens",
                                challenge);
        case Verdict::not_operator:
            return error_answer(req, 403, "not_operator", "Forbidden: " + access.why,
                                "use one of the server's own bearer tokens (http.bearer_tokens) or an OAuth access "
                                "token with the operator scope");
        case Verdict::open_off_loopback:
            return error_answer(req, 403, "loopback_only", "Forbidden: " + access.why,
                                "configure authentication (http.bearer_tokens or auth:) or listen on a loopback "
                                "address (http.listen: 127.0.0.1:PORT)");
        case Verdict::allowed: break;
    }
    return error_answer(req, 500, "internal_error", "the access check gave no verdict", "report this as a bug");
}

// The API's routes: the first segment after api/ names the resource.
constexpr std::string_view kResources[] = {"me",    "overview", "tools",  "calls", "sessions",
                                           "tasks", "reload",   "config", "call",  "pins"};

std::vector<std::string_view> segments(std::string_view route) {
    std::vector<std::string_view> parts;
    while (true) {
        auto slash = route.find('/');
        parts.push_back(route.substr(0, slash));
        if (slash == std::string_view::npos) return parts;
        route = route.substr(slash + 1);
    }
}

// The served tools by source, each by name with its definition: what a reload is judged by.
using Catalog = std::map<std::string, std::map<std::string, Json>>;
Catalog catalog_of(const McpServer& server) {
    Catalog catalog;
    for (const auto& [name, tool] : server.registry().tools()) catalog[tool->source][name] = tool->definition();
    return catalog;
}

std::string_view query_of(const HttpRequestView& req) {
    auto target = req.target();
    auto at = target.find('?');
    return at == std::string_view::npos ? std::string_view() : target.substr(at + 1);
}

// A request's query parameters, each one of `known` (else a 400 that says which are).
struct Parameters {
    std::optional<QueryParameters> pairs;
    std::optional<HttpAnswer> refusal;
};
Parameters parameters_of(const HttpRequestView& req, std::initializer_list<std::string_view> known) {
    Parameters p;
    p.pairs = parse_query(query_of(req));
    std::string names;
    for (auto k : known) names += (names.empty() ? "" : ", ") + std::string(k);
    if (!p.pairs) {
        p.refusal = error_answer(req, 400, "bad_request",
                                 "Bad Request: a query parameter is not percent-encoded correctly",
                                 "encode the query with encodeURIComponent or URLSearchParams");
        return p;
    }
    for (const auto& [name, value] : *p.pairs) {
        if (std::find(known.begin(), known.end(), name) == known.end()) {
            p.refusal = error_answer(req, 400, "bad_request",
                                     fmt::format("Bad Request: no query parameter \"{}\"", name),
                                     known.size() ? "the parameters are: " + names : std::string("send none"));
            return p;
        }
    }
    return p;
}

std::string parameter(const QueryParameters& pairs, std::string_view name) {
    for (const auto& [n, v] : pairs) {
        if (n == name) return v;
    }
    return {};
}

// The open streams of one live view. Each has its own bounded log (console_reply.hpp:
// make_stream), so a subscriber that reads slowly loses its oldest events and never holds
// up the others or the publisher.
class Subscribers {
public:
    std::uint64_t add(std::shared_ptr<OutStream> out) {
        streams_.emplace(++next_, std::move(out));
        return next_;
    }
    void remove(std::uint64_t id) { streams_.erase(id); }
    bool empty() const { return streams_.empty(); }
    void publish(const std::string& event) {
        for (auto& [id, out] : streams_) out->push(event, nullptr);
    }
    void end_all() {
        for (auto& [id, out] : streams_) out->end();
        streams_.clear();
    }

private:
    std::map<std::uint64_t, std::shared_ptr<OutStream>> streams_;
    std::uint64_t next_ = 0;
};

}  // namespace

struct ConsoleApi::Impl : std::enable_shared_from_this<Impl> {
    explicit Impl(ConsoleContext c) : context(std::move(c)) {}
    ConsoleContext context;
    Subscribers overview_subscribers;
    std::function<void()> cancel_overview_tick;
    std::unique_ptr<ToolCatalog> catalog;    // made on the first GET tools
    std::shared_ptr<ConsoleHost> host;       // the HTTP endpoint, while it runs
    std::unique_ptr<Playground> playground;  // made on the first POST call

    // A request's JSON body (an object), or the refusal of it.
    std::variant<Json, HttpAnswer> json_body(const HttpRequestView& req);
    HttpAnswer call(const HttpRequestView& req, const ConsoleAccess& access);
    HttpAnswer call_action(const HttpRequestView& req, const std::vector<std::string_view>& parts,
                           const ConsoleAccess& access);

    // The audit record of an operator's action, and its log line.
    void record_action(const ConsoleAccess& access, std::string action, std::string target, std::string outcome,
                       std::string code = {});
    HttpAnswer sessions(const HttpRequestView& req);
    HttpAnswer reload(const HttpRequestView& req, const ConsoleAccess& access);
    struct ReloadWait {
        std::shared_ptr<DeferredReply> deferred;
        std::shared_ptr<OwnedHttpRequest> req;
        ConsoleAccess access;
        Catalog before;
        std::chrono::steady_clock::time_point deadline;
    };
    void watch_reload(std::shared_ptr<ReloadWait> wait);
    void answer_reload(ReloadWait& wait, bool done);
    HttpAnswer tasks(const HttpRequestView& req);
    static Task<void> answer_tasks(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                   std::shared_ptr<OwnedHttpRequest> req, std::shared_ptr<TaskEngine> engine);
    HttpAnswer cancel_task(const HttpRequestView& req, std::string_view id, const ConsoleAccess& access);
    static Task<void> answer_cancel_task(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                         std::shared_ptr<OwnedHttpRequest> req, std::shared_ptr<TaskEngine> engine,
                                         std::string id, ConsoleAccess access);
    HttpAnswer end_session(const HttpRequestView& req, std::string_view id, const ConsoleAccess& access);
    HttpAnswer pins(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access);
    static Task<void> answer_pins(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                  std::shared_ptr<OwnedHttpRequest> req, std::string method, std::string path,
                                  std::string body, std::string who);

    HttpAnswer api(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access);
    HttpAnswer me(const HttpRequestView& req, const ConsoleAccess& access);
    HttpAnswer overview_stream(const HttpRequestView& req);
    HttpAnswer tools(const HttpRequestView& req);
    HttpAnswer calls(const HttpRequestView& req);
    static Task<void> answer_calls(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                   std::shared_ptr<OwnedHttpRequest> req, std::string query);
    HttpAnswer calls_stream(const HttpRequestView& req);
    void overview_tick();
    void stop() {
        playground.reset();
        if (cancel_overview_tick) std::exchange(cancel_overview_tick, nullptr)();
        overview_subscribers.end_all();
    }
};

ConsoleApi::ConsoleApi(ConsoleContext context) : impl_(std::make_shared<Impl>(std::move(context))) {}

ConsoleApi::~ConsoleApi() { impl_->stop(); }

void ConsoleApi::attach(std::shared_ptr<ConsoleHost> host) { impl_->host = std::move(host); }

HttpAnswer ConsoleApi::answer(const HttpRequestView& req, std::string_view subpath, const ConsoleAccess& access) {
    if (subpath == "/api" || subpath.rfind("/api/", 0) == 0) {
        if (access.verdict != Verdict::allowed) return api_refusal(req, access);
        return impl_->api(req, subpath.size() > 5 ? subpath.substr(5) : std::string_view{}, access);
    }
    // The page: its files need no credential (it asks for one); only an open console off
    // loopback is refused here too.
    if (access.verdict == Verdict::open_off_loopback) {
        return html_answer(req, 403, "Forbidden",
                           "The console is served without authentication only on a loopback listener. Configure "
                           "bearer tokens (http.bearer_tokens) or OAuth (auth:), or listen on 127.0.0.1.");
    }
    if (req.method() != HttpMethod::get && req.method() != HttpMethod::head) {
        return error_answer(req, 405, "method_not_allowed", "Method Not Allowed: the console's page is read with GET",
                            "use GET", {{"Allow", "GET, HEAD"}});
    }
    return serve_static(subpath, req);
}

HttpAnswer ConsoleApi::Impl::api(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access) {
    auto method_not_allowed = [&](std::string_view allow) {
        return error_answer(req, 405, "method_not_allowed",
                            fmt::format("Method Not Allowed: {} takes {}", route.empty() ? "api/" : route, allow),
                            fmt::format("use {}", allow), {{"Allow", allow}});
    };
    if (route == "me") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return me(req, access);
    }
    if (route == "overview") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return json_answer(req, 200,
                           overview_json(context.overview).dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    if (route == "overview/stream") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return overview_stream(req);
    }
    if (route == "calls") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return calls(req);
    }
    if (route == "calls/stream") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return calls_stream(req);
    }
    if (route == "sessions") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return sessions(req);
    }
    if (route.rfind("sessions/", 0) == 0 && route.size() > 9 && route.find('/', 9) == std::string_view::npos) {
        if (req.method() != HttpMethod::delete_) return method_not_allowed("DELETE");
        return end_session(req, route.substr(9), access);
    }
    if (route == "call") {
        if (req.method() != HttpMethod::post) return method_not_allowed("POST");
        return call(req, access);
    }
    if (route.rfind("call/", 0) == 0) {
        auto parts = segments(route);
        const bool cancel = parts.size() == 3 && parts[2] == "cancel" && !parts[1].empty();
        const bool answer = parts.size() == 4 && parts[2] == "elicitation" && !parts[1].empty() && !parts[3].empty();
        if (cancel || answer) {
            if (req.method() != HttpMethod::post) return method_not_allowed("POST");
            return call_action(req, parts, access);
        }
    }
    if (route == "config") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        auto params = parameters_of(req, {});
        if (params.refusal) return std::move(*params.refusal);
        if (!context.config) {
            return error_answer(req, 503, "unavailable", "Service Unavailable: this server offers no configuration",
                                "report this as a bug");
        }
        return json_answer(req, 200, context.config().dump(-1, ' ', false, Json::error_handler_t::replace));
    }
    if (route == "reload") {
        if (req.method() != HttpMethod::post) return method_not_allowed("POST");
        return reload(req, access);
    }
    if (route == "tasks") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return tasks(req);
    }
    if (route.rfind("tasks/", 0) == 0 && route.size() > 13 && route.substr(route.size() - 7) == "/cancel" &&
        route.find('/', 6) == route.size() - 7) {
        if (req.method() != HttpMethod::post) return method_not_allowed("POST");
        return cancel_task(req, route.substr(6, route.size() - 13), access);
    }
    if (route == "tools") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return tools(req);
    }
    if (route == "pins") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return pins(req, route, access);
    }
    if (route == "pins/approve" || route == "pins/reset") {
        if (req.method() != HttpMethod::post) return method_not_allowed("POST");
        return pins(req, route, access);
    }
    std::vector<std::string> names(std::begin(kResources), std::end(kResources));
    auto first = route.substr(0, route.find('/'));
    auto near = util::closest_name(first, names);
    return error_answer(req, 404, "not_found", fmt::format("Not Found: the console's API has no {}", route),
                        near ? fmt::format("did you mean api/{}? (docs/console.md lists the endpoints)", *near)
                             : std::string("see docs/console.md for the API's endpoints"));
}

HttpAnswer ConsoleApi::Impl::me(const HttpRequestView& req, const ConsoleAccess& access) {
    Json body{{"principal", access.principal},
              {"scopes", access.scopes},
              {"auth", access.auth},
              {"trace_viewer_url", context.trace_viewer_url}};
    return json_answer(req, 200, body.dump());
}

HttpAnswer ConsoleApi::Impl::tools(const HttpRequestView& req) {
    auto params = parameters_of(req, {"q", "profile", "source"});
    if (params.refusal) return std::move(*params.refusal);
    McpServer* server = context.overview.server;
    if (!server) {
        return error_answer(req, 503, "unavailable", "Service Unavailable: this console has no server to list",
                            "report this as a bug");
    }
    ToolCatalog::Query query{parameter(*params.pairs, "q"), parameter(*params.pairs, "profile"),
                             parameter(*params.pairs, "source")};
    if (!query.profile.empty() && !server->has_view(query.profile)) {
        auto near = util::closest_name(query.profile, server->view_names());
        return error_answer(req, 404, "not_found", fmt::format("Not Found: no gateway profile \"{}\"", query.profile),
                            near ? fmt::format("did you mean \"{}\"?", *near)
                                 : std::string("the profiles are listed under \"profiles\" of api/tools"));
    }
    if (!catalog) catalog = std::make_unique<ToolCatalog>(*server, context.overview.stats);
    return json_answer(req, 200, catalog->list(query).dump(-1, ' ', false, Json::error_handler_t::replace));
}

void ConsoleApi::Impl::record_action(const ConsoleAccess& access, std::string action, std::string target,
                                     std::string outcome, std::string code) {
    spdlog::info("console: {} {} by {}: {}{}", action, target,
                 access.principal.empty() ? "(no auth)" : access.principal, outcome, code.empty() ? "" : " " + code);
    if (!context.record_action) return;
    stores::AuditRecord r;
    r.time = std::chrono::system_clock::now();
    r.method = "console/" + std::move(action);
    r.target = std::move(target);
    r.principal = access.principal;
    r.session = "console";
    r.outcome = std::move(outcome);
    r.code = std::move(code);
    context.record_action(std::move(r));
}

// GET sessions: the HTTP sessions this replica holds.
HttpAnswer ConsoleApi::Impl::sessions(const HttpRequestView& req) {
    auto params = parameters_of(req, {});
    if (params.refusal) return std::move(*params.refusal);
    Json list = Json::array();
    if (host) {
        for (const auto& s : host->sessions()) {
            list.push_back({{"id", s.id},
                            {"transport", s.transport},
                            {"client", {{"name", s.client_name}, {"version", s.client_version}}},
                            {"protocol_version", s.protocol_version},
                            {"principal", s.principal},
                            {"profile", s.profile},
                            {"age_s", std::chrono::duration_cast<std::chrono::seconds>(s.age).count()},
                            {"idle_s", std::chrono::duration_cast<std::chrono::seconds>(s.idle).count()},
                            {"replica", context.overview.replica}});
        }
    }
    return json_answer(req, 200,
                       Json{{"sessions", std::move(list)}}.dump(-1, ' ', false, Json::error_handler_t::replace));
}

// DELETE sessions/{id}: ends it as the client's own DELETE would.
HttpAnswer ConsoleApi::Impl::end_session(const HttpRequestView& req, std::string_view id, const ConsoleAccess& access) {
    if (!host || !host->end_session(id, "ended by an operator in the console")) {
        record_action(access, "end_session", std::string(id), "tool_error", "NOT_FOUND");
        return error_answer(req, 404, "not_found", "Not Found: this replica holds no session with that id",
                            "list the sessions with GET api/sessions; a session may have ended meanwhile");
    }
    record_action(access, "end_session", std::string(id), "ok");
    return empty_answer(req, 204);
}

std::variant<Json, HttpAnswer> ConsoleApi::Impl::json_body(const HttpRequestView& req) {
    auto type = req.header("Content-Type");
    if (type.substr(0, type.find(';')).find("application/json") == std::string_view::npos) {
        return error_answer(req, 415, "unsupported_media_type",
                            "Unsupported Media Type: the body must be JSON (Content-Type: application/json)",
                            "send Content-Type: application/json");
    }
    if (req.body().size() > context.max_body_bytes) {
        return error_answer(req, 413, "body_too_large",
                            fmt::format("Payload Too Large: the body has {} bytes, more than the {} taken",
                                        req.body().size(), context.max_body_bytes),
                            "send smaller arguments");
    }
    auto body = Json::parse(req.body(), nullptr, false);
    if (body.is_discarded() || !body.is_object()) {
        return error_answer(req, 400, "bad_request", "Bad Request: the body is not a JSON object",
                            "send a JSON object, e.g. {\"tool\":\"greet\",\"arguments\":{}}");
    }
    return body;
}

// POST call: the call's events as they come (playground.hpp).
HttpAnswer ConsoleApi::Impl::call(const HttpRequestView& req, const ConsoleAccess& access) {
    auto parsed = json_body(req);
    if (auto* refusal = std::get_if<HttpAnswer>(&parsed)) return std::move(*refusal);
    auto& body = std::get<Json>(parsed);
    auto tool = body.find("tool");
    if (tool == body.end() || !tool->is_string() || tool->get_ref<const std::string&>().empty()) {
        return error_answer(req, 400, "bad_request", "Bad Request: \"tool\" must be the name of a tool",
                            "send {\"tool\":\"name\",\"arguments\":{...}}");
    }
    Json arguments = body.value("arguments", Json::object());
    if (!arguments.is_object()) {
        return error_answer(req, 400, "bad_request", "Bad Request: \"arguments\" must be an object",
                            "send the tool's arguments as a JSON object");
    }
    if (!context.overview.server) {
        return error_answer(req, 503, "unavailable", "Service Unavailable: this console has no server to call",
                            "report this as a bug");
    }
    if (!playground) playground = std::make_unique<Playground>(*context.overview.server);
    CallerIdentity caller;
    caller.principal = access.principal;
    if (access.auth == "oauth") caller.scopes = access.scopes;
    auto out = make_stream(1024);
    const auto id = playground->start(tool->get<std::string>(), std::move(arguments), std::move(caller), out);
    return stream_answer(req, std::move(out), [weak = weak_from_this(), id] {
        if (auto self = weak.lock(); self && self->playground) self->playground->abandon(id);
    });
}

// POST call/{id}/cancel and POST call/{id}/elicitation/{eid}.
HttpAnswer ConsoleApi::Impl::call_action(const HttpRequestView& req, const std::vector<std::string_view>& parts,
                                         const ConsoleAccess& access) {
    const std::string id(parts[1]);
    auto no_call = [&](const char* action) {
        record_action(access, action, id, "tool_error", "NOT_FOUND");
        return error_answer(req, 404, "not_found", "Not Found: no console call with that id is running",
                            "a call ends with its result; start another with POST api/call");
    };
    if (parts.size() == 3) {
        if (!playground || !playground->cancel(id)) return no_call("cancel_call");
        record_action(access, "cancel_call", id, "ok");
        return empty_answer(req, 202);
    }
    auto parsed = json_body(req);
    if (auto* refusal = std::get_if<HttpAnswer>(&parsed)) return std::move(*refusal);
    auto& body = std::get<Json>(parsed);
    const auto action = body.value("action", std::string());
    if (action != "accept" && action != "decline" && action != "cancel") {
        return error_answer(req, 400, "bad_request", "Bad Request: \"action\" must be accept, decline or cancel",
                            "send {\"action\":\"accept\",\"content\":{...}}");
    }
    Json result = {{"action", action}};
    if (action == "accept") {
        Json content = body.value("content", Json::object());
        if (!content.is_object()) {
            return error_answer(req, 400, "bad_request", "Bad Request: \"content\" must be an object",
                                "send the answers as an object matching the question's requestedSchema");
        }
        result["content"] = std::move(content);
    }
    if (!playground) return no_call("answer_elicitation");
    switch (playground->answer(id, std::string(parts[3]), std::move(result))) {
        case Playground::Answered::no_call: return no_call("answer_elicitation");
        case Playground::Answered::no_question:
            record_action(access, "answer_elicitation", id, "tool_error", "NOT_FOUND");
            return error_answer(req, 404, "not_found", "Not Found: this call asks no question with that id",
                                "answer the elicitation_id of the call's elicitation event, once");
        case Playground::Answered::ok: break;
    }
    record_action(access, "answer_elicitation", id, "ok");
    return empty_answer(req, 202);
}

// POST reload: starts a reload (or joins the running one), waits for it (reload_wait at
// most), then says what changed per source.
HttpAnswer ConsoleApi::Impl::reload(const HttpRequestView& req, const ConsoleAccess& access) {
    if (!context.reload || !context.reloading || !context.overview.server || !context.executor) {
        return error_answer(req, 503, "unavailable", "Service Unavailable: this server offers no reload",
                            "report this as a bug");
    }
    auto wait = std::make_shared<ReloadWait>();
    wait->before = catalog_of(*context.overview.server);
    ReloadStart start;
    try {
        start = context.reload();
    } catch (const std::exception& e) {
        spdlog::error("console: reload failed: {}", e.what());
        record_action(access, "reload", "", "tool_error", "INTERNAL_ERROR");
        return error_answer(req, 500, "internal_error", "the reload could not be started", "see the server's log");
    }
    if (!start.started && !start.running) {
        record_action(access, "reload", "", "tool_error", "TOO_SOON");
        const auto seconds = std::max<long long>(1, (start.wait.count() + 999) / 1000);
        return error_answer(req, 429, "too_soon",
                            fmt::format("Too Many Requests: the last reload started less than "
                                        "reload.min_interval_s ago; another may start in {} s",
                                        seconds),
                            fmt::format("retry in {} s", seconds), {{"Retry-After", std::to_string(seconds)}});
    }
    wait->deferred = std::make_shared<DeferredReply>();
    wait->req = std::make_shared<OwnedHttpRequest>(req);
    wait->access = access;
    wait->deadline = std::chrono::steady_clock::now() + context.reload_wait;
    auto deferred = wait->deferred;
    watch_reload(std::move(wait));
    return pending_answer(deferred);
}

void ConsoleApi::Impl::watch_reload(std::shared_ptr<ReloadWait> wait) {
    const bool done = !context.reloading();
    if (done || wait->deferred->gone() || std::chrono::steady_clock::now() >= wait->deadline) {
        answer_reload(*wait, done);
        return;
    }
    context.executor->schedule_after(std::chrono::milliseconds(100), [weak = weak_from_this(), wait] {
        if (auto self = weak.lock()) self->watch_reload(wait);
        else wait->deferred->resolve({});
    });
}

void ConsoleApi::Impl::answer_reload(ReloadWait& wait, bool done) {
    const Catalog after = catalog_of(*context.overview.server);
    std::map<std::string, observability::ComponentHealth> health;
    if (context.overview.health) {
        for (auto& [name, h] : context.overview.health->components()) health.emplace(name, std::move(h));
    }
    std::set<std::string> names;
    for (const auto& [source, tools] : wait.before) names.insert(source);
    for (const auto& [source, tools] : after) names.insert(source);
    const std::map<std::string, Json> none;
    Json sources = Json::array();
    bool failed = false;
    for (const auto& name : names) {
        if (name.empty()) continue;  // the server's own tools
        const auto b = wait.before.find(name);
        const auto a = after.find(name);
        const auto& old_tools = b != wait.before.end() ? b->second : none;
        const auto& new_tools = a != after.end() ? a->second : none;
        Json added = Json::array(), changed = Json::array(), removed = Json::array();
        for (const auto& [tool, definition] : new_tools) {
            auto it = old_tools.find(tool);
            if (it == old_tools.end()) added.push_back(tool);
            else if (it->second != definition) changed.push_back(tool);
        }
        for (const auto& [tool, definition] : old_tools) {
            if (!new_tools.count(tool)) removed.push_back(tool);
        }
        Json error = nullptr;
        if (auto h = health.find(name); h != health.end() && h->second.severity != observability::Severity::ok) {
            error = h->second.state;
            failed = true;
        }
        sources.push_back({{"name", name},
                           {"added", std::move(added)},
                           {"changed", std::move(changed)},
                           {"removed", std::move(removed)},
                           {"error", std::move(error)}});
    }
    const char* status = !done ? "started" : failed ? "failed" : "done";
    record_action(wait.access, "reload", "", failed ? "tool_error" : "ok", failed ? "RELOAD_FAILED" : "");
    if (wait.deferred->gone()) {
        wait.deferred->resolve({});
        return;
    }
    wait.deferred->resolve(
        json_answer(*wait.req, 200,
                    Json{{"status", status}, {"sources", std::move(sources)}}.dump(-1, ' ', false,
                                                                                   Json::error_handler_t::replace)));
}

// GET tasks: the unfinished tasks, this replica's and (with a shared store) the others'.
HttpAnswer ConsoleApi::Impl::tasks(const HttpRequestView& req) {
    auto params = parameters_of(req, {});
    if (params.refusal) return std::move(*params.refusal);
    auto* engine = context.overview.server ? context.overview.server->tasks() : nullptr;
    if (!engine) return json_answer(req, 200, R"({"tasks":[]})");
    auto deferred = std::make_shared<DeferredReply>();
    spawn(answer_tasks(shared_from_this(), deferred, std::make_shared<OwnedHttpRequest>(req), engine->shared_from_this()),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return pending_answer(deferred);
}

Task<void> ConsoleApi::Impl::answer_tasks(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                          std::shared_ptr<OwnedHttpRequest> req, std::shared_ptr<TaskEngine> engine) {
    std::vector<TaskEngine::Live> live;
    try {
        live = co_await engine->live();
    } catch (const std::exception&) {
        deferred->resolve(error_answer(*req, 503, "unavailable",
                                       "Service Unavailable: the task store cannot be read now",
                                       "retry in a moment; with a redis:// store, check that Redis is reachable"));
        co_return;
    }
    auto iso = [](std::int64_t ms) {
        return stores::iso_time(std::chrono::system_clock::time_point(std::chrono::milliseconds(ms)));
    };
    Json list = Json::array();
    for (const auto& t : live) {
        list.push_back({{"id", t.record.id},
                        {"status", std::string(to_string(t.record.status))},
                        {"tool", t.tool},
                        {"session", t.session},
                        {"replica", t.here ? "this" : "another"},
                        {"created_at", iso(t.record.created_at_ms)},
                        {"updated_at", iso(t.record.last_updated_at_ms)},
                        {"status_message", t.record.status_message}});
    }
    deferred->resolve(
        json_answer(*req, 200, Json{{"tasks", std::move(list)}}.dump(-1, ' ', false, Json::error_handler_t::replace)));
}

// POST tasks/{id}/cancel: as its client's tasks/cancel would, whoever owns it.
HttpAnswer ConsoleApi::Impl::cancel_task(const HttpRequestView& req, std::string_view id, const ConsoleAccess& access) {
    auto* engine = context.overview.server ? context.overview.server->tasks() : nullptr;
    if (!engine) {
        return error_answer(req, 404, "not_found", "Not Found: this server runs no tasks",
                            "list the tasks with GET api/tasks");
    }
    auto deferred = std::make_shared<DeferredReply>();
    spawn(answer_cancel_task(shared_from_this(), deferred, std::make_shared<OwnedHttpRequest>(req),
                             engine->shared_from_this(), std::string(id), access),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return pending_answer(deferred);
}

Task<void> ConsoleApi::Impl::answer_cancel_task(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                                std::shared_ptr<OwnedHttpRequest> req,
                                                std::shared_ptr<TaskEngine> engine, std::string id,
                                                ConsoleAccess access) {
    bool cancelled = false;
    bool failed = false;
    try {
        cancelled = co_await engine->cancel_as_operator(id);
    } catch (const std::exception&) {
        failed = true;
    }
    if (failed) {
        self->record_action(access, "cancel_task", id, "tool_error", "UNAVAILABLE");
        deferred->resolve(error_answer(*req, 503, "unavailable",
                                       "Service Unavailable: the task store cannot be "
                                       "changed now",
                                       "retry in a moment"));
        co_return;
    }
    if (!cancelled) {
        self->record_action(access, "cancel_task", id, "tool_error", "NOT_FOUND");
        deferred->resolve(error_answer(*req, 404, "not_found",
                                       "Not Found: no task with that id is working or waiting on this replica",
                                       "list the tasks with GET api/tasks; a task may have ended meanwhile"));
        co_return;
    }
    self->record_action(access, "cancel_task", id, "ok");
    deferred->resolve(empty_answer(*req, 202));
}

// GET pins, POST pins/approve and POST pins/reset: what /admin/pins answers (pin_api.hpp),
// asked as the console's operator, so that the pin guard's audit record of an approval or
// a reset names the same principal as the console's other actions.
HttpAnswer ConsoleApi::Impl::pins(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access) {
    auto params = parameters_of(req, {});
    if (params.refusal) return std::move(*params.refusal);
    if (!context.pins) {
        // As GET calls with the audit log off: an answer the page can show, not a failure.
        if (req.method() == HttpMethod::get) return json_answer(req, 200, R"({"pinning":"off","sources":[]})");
        return error_answer(req, 404, "not_found", "Not Found: tool-definition pinning is off on this server",
                            "pinning is on unless pinning.default is off for every source (docs/pinning.md)");
    }
    std::string body;
    if (req.method() == HttpMethod::post) {
        auto parsed = json_body(req);
        if (auto* refusal = std::get_if<HttpAnswer>(&parsed)) return std::move(*refusal);
        body = std::get<Json>(parsed).dump();
    }
    // Without authentication (loopback only) the caller has no principal; /admin/pins names
    // such an approver the same way.
    std::string who = access.principal.empty() ? std::string("loopback") : access.principal;
    auto deferred = std::make_shared<DeferredReply>();
    spawn(answer_pins(shared_from_this(), deferred, std::make_shared<OwnedHttpRequest>(req),
                      req.method() == HttpMethod::post ? "POST" : "GET", "/admin/" + std::string(route),
                      std::move(body), std::move(who)),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return pending_answer(deferred);
}

Task<void> ConsoleApi::Impl::answer_pins(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                         std::shared_ptr<OwnedHttpRequest> req, std::string method, std::string path,
                                         std::string body, std::string who) {
    std::pair<int, std::string> result{503, {}};
    try {
        result = co_await self->context.pins(std::move(method), std::move(path), std::move(body), std::move(who));
    } catch (const std::exception& e) {
        spdlog::warn("console: the pins store could not be reached: {}", e.what());
        result = {503, {}};
    }
    if (result.first == 200) {
        deferred->resolve(json_answer(*req, 200, result.second));
        co_return;
    }
    const auto answer = Json::parse(result.second, nullptr, false);
    std::string message = answer.is_object() && answer.contains("error") && answer["error"].is_string()
                              ? answer["error"].get<std::string>()
                              : std::string("the pins store could not be reached");
    switch (result.first) {
        case 400:
            deferred->resolve(error_answer(*req, 400, "bad_request", "Bad Request: " + message,
                                           "send {\"source\":\"name\",\"name\":\"tool\",\"digest\":\"sha256...\"}"));
            break;
        case 404:
            deferred->resolve(error_answer(*req, 404, "not_found", "Not Found: " + message,
                                           "list what waits for approval with GET api/pins"));
            break;
        case 409:
            deferred->resolve(error_answer(*req, 409, "conflict", "Conflict: " + message,
                                           "review the definition pending now (GET api/pins) and approve that"));
            break;
        default:
            deferred->resolve(
                error_answer(*req, 503, "unavailable", "Service Unavailable: " + message,
                             "retry in a moment; with a redis:// pin store, check that Redis is reachable"));
    }
}

// GET calls: GET /audit's query (same filters, same records), newest first.
HttpAnswer ConsoleApi::Impl::calls(const HttpRequestView& req) {
    auto params = parameters_of(req, {"principal", "tool", "source", "outcome", "since", "until", "limit"});
    if (params.refusal) return std::move(*params.refusal);
    if (!context.audit_query) {
        // No file or stream to read: only the live view (calls/stream) shows calls.
        return json_answer(req, 200, R"({"audit":"off","records":[]})");
    }
    auto deferred = std::make_shared<DeferredReply>();
    spawn(answer_calls(shared_from_this(), deferred, std::make_shared<OwnedHttpRequest>(req), std::string(query_of(req))),
          [deferred](std::exception_ptr error) {
              if (error) deferred->resolve({});
          });
    return pending_answer(deferred);
}

Task<void> ConsoleApi::Impl::answer_calls(std::shared_ptr<Impl> self, std::shared_ptr<DeferredReply> deferred,
                                          std::shared_ptr<OwnedHttpRequest> req, std::string query) {
    std::pair<int, std::string> result{500, {}};
    try {
        result = co_await self->context.audit_query(std::move(query));
    } catch (const std::exception&) {
        result = {500, {}};
    }
    auto body = Json::parse(result.second, nullptr, false);
    const std::string message = body.is_object() && body.contains("error") && body["error"].is_string()
                                    ? body["error"].get<std::string>()
                                    : "";
    if (result.first == 400) {
        deferred->resolve(
            error_answer(*req, 400, "bad_request", message,
                         "filters: principal, tool, source, outcome (ok, tool_error, protocol_error, "
                         "cancelled, denied, error), since and until (ISO-8601 UTC or an age: 90s, 15m, 2h, "
                         "7d), limit (0-1000000)"));
        co_return;
    }
    if (result.first != 200 || !body.is_object() || !body.contains("records") || !body["records"].is_array()) {
        deferred->resolve(error_answer(*req, 503, "unavailable",
                                       message.empty() ? "Service Unavailable: the audit log cannot be read" : message,
                                       "see the server's log; the live view (calls/stream) still shows new calls"));
        co_return;
    }
    Json records = Json::array();
    auto& oldest_first = body["records"];
    for (auto it = oldest_first.rbegin(); it != oldest_first.rend(); ++it) records.push_back(std::move(*it));
    Json answer = {{"records", std::move(records)},
                   {"audit", body.value("source", "file")},
                   {"skipped_lines", body.value("skipped_lines", 0)}};
    deferred->resolve(json_answer(*req, 200, answer.dump(-1, ' ', false, Json::error_handler_t::replace)));
}

// GET calls/stream: every audit record as it is made, from the in-memory feed (the file, if
// any, is not read: a record is here before the writer thread has written it).
HttpAnswer ConsoleApi::Impl::calls_stream(const HttpRequestView& req) {
    auto params = parameters_of(req, {});
    if (params.refusal) return std::move(*params.refusal);
    if (!context.audit_feed) {
        return error_answer(req, 503, "unavailable", "Service Unavailable: this server has no record feed",
                            "report this as a bug");
    }
    auto out = make_stream(1024);
    std::weak_ptr<OutStream> weak_out = out;
    const auto id = context.audit_feed->subscribe([weak_out](const std::string& record) {
        if (auto stream = weak_out.lock()) stream->push(sse_event("call", record), nullptr);
    });
    return stream_answer(req, std::move(out), [weak = weak_from_this(), id] {
        if (auto self = weak.lock(); self && self->context.audit_feed) self->context.audit_feed->unsubscribe(id);
    });
}

// The overview at once, then every overview_interval while anyone watches: one overview
// made per tick for every subscriber.
HttpAnswer ConsoleApi::Impl::overview_stream(const HttpRequestView& req) {
    auto out = make_stream(16);
    out->push(sse_event("overview", overview_json(context.overview).dump(-1, ' ', false, Json::error_handler_t::replace)),
              nullptr);
    const auto id = overview_subscribers.add(out);
    if (!cancel_overview_tick && context.executor) {
        cancel_overview_tick = context.executor->schedule_after(context.overview_interval, [weak = weak_from_this()] {
            if (auto self = weak.lock()) self->overview_tick();
        });
    }
    return stream_answer(req, std::move(out), [weak = weak_from_this(), id] {
        if (auto self = weak.lock()) self->overview_subscribers.remove(id);
    });
}

void ConsoleApi::Impl::overview_tick() {
    cancel_overview_tick = nullptr;
    if (overview_subscribers.empty()) return;  // nobody watches: no more ticks until someone does
    overview_subscribers.publish(
        sse_event("overview", overview_json(context.overview).dump(-1, ' ', false, Json::error_handler_t::replace)));
    cancel_overview_tick = context.executor->schedule_after(context.overview_interval, [weak = weak_from_this()] {
        if (auto self = weak.lock()) self->overview_tick();
    });
}

}  // namespace toolport::console
