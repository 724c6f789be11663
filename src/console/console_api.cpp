#include "console/console_api.hpp"

#include <vector>

#include <fmt/format.h>

#include "console/console_reply.hpp"
#include "console/page.hpp"
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
constexpr std::string_view kResources[] = {"me"};

}  // namespace

struct ConsoleApi::Impl : std::enable_shared_from_this<Impl> {
    explicit Impl(ConsoleContext c) : context(std::move(c)) {}
    ConsoleContext context;

    HttpAnswer api(const HttpRequestView& req, std::string_view route, const ConsoleAccess& access);
    HttpAnswer me(const HttpRequestView& req, const ConsoleAccess& access);
};

ConsoleApi::ConsoleApi(ConsoleContext context) : impl_(std::make_shared<Impl>(std::move(context))) {}

ConsoleApi::~ConsoleApi() = default;

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

}  // namespace toolport::console
