#include "console/console_api.hpp"

#include <map>
#include <vector>

#include <fmt/format.h>

#include "console/console_reply.hpp"
#include "console/page.hpp"
#include "console/query_string.hpp"
#include "console/tool_catalog.hpp"
#include "server/server.hpp"
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
constexpr std::string_view kResources[] = {"me", "overview", "tools"};

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
    std::unique_ptr<ToolCatalog> catalog;  // made on the first GET tools

    HttpAnswer api(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access);
    HttpAnswer me(const HttpRequestView& req, const ConsoleAccess& access);
    HttpAnswer overview_stream(const HttpRequestView& req);
    HttpAnswer tools(const HttpRequestView& req);
    void overview_tick();
    void stop() {
        if (cancel_overview_tick) std::exchange(cancel_overview_tick, nullptr)();
        overview_subscribers.end_all();
    }
};

ConsoleApi::ConsoleApi(ConsoleContext context) : impl_(std::make_shared<Impl>(std::move(context))) {}

ConsoleApi::~ConsoleApi() { impl_->stop(); }

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
    if (route == "tools") {
        if (req.method() != HttpMethod::get) return method_not_allowed("GET");
        return tools(req);
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
