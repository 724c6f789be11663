#include "providers/rest/rest_catalog.hpp"

#include <algorithm>
#include <cstdlib>

#include <malloc.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "async/executor.hpp"
#include "http_client/response_too_large.hpp"
#include "http_client/url.hpp"
#include "observability/health.hpp"
#include "pipeline/policy.hpp"
#include "providers/downstream_errors.hpp"
#include "providers/rest/execute_answer.hpp"
#include "providers/rest/schema_repair.hpp"
#include "providers/rest/tool_names.hpp"
#include "providers/secret_redaction.hpp"
#include "providers/source.hpp"
#include "auth/upstream_credentials.hpp"
#include "server/request_context.hpp"
#include "server/tool_error.hpp"
#include "util/ascii.hpp"
#include "util/sanitize.hpp"
#include "providers/credentials_tool_error.hpp"

namespace toolport::rest {

using namespace std::chrono_literals;

namespace {

bool is_absolute(const std::string& url) { return url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0; }

std::optional<bool> hint(const Json& annotations, const char* key) {
    auto it = annotations.find(key);
    if (it == annotations.end() || !it->is_boolean()) return std::nullopt;
    return it->get<bool>();
}

}  // namespace

RestCatalog::RestCatalog(CatalogSettings settings, providers::SourceContext& context)
    : settings_(std::move(settings)), context_(context), tools_(context) {}

void RestCatalog::start() {
    http_ = &context_.http();
    context_.set_strict_arguments(settings_.strict_arguments);
    // The API's answers are not Toolport's to know fresh: not cached unless the operator
    // turns it on (`sources: {<name>: {cache: {mode: read_only}}}`), and then per caller.
    pipeline::PolicyOverride call_defaults;
    call_defaults.cache_mode = pipeline::CacheMode::off;
    call_defaults.cache_per_user = true;
    context_.set_call_defaults(call_defaults);
    for (const auto& [name, value] : settings_.headers) {
        credentials_.emplace_back(name, value);
        secrets_.push_back(value);
        // "Bearer <token>": an API echoing the token echoes it without its scheme.
        if (auto space = value.find(' '); space != std::string::npos) secrets_.push_back(value.substr(space + 1));
    }
    std::vector<std::string> sources;
    for (const auto& [header, variable] : settings_.headers_from_env) {
        const char* value = std::getenv(variable.c_str());
        sources.push_back(fmt::format("{} from {}", header, variable));
        if (!value || !*value) {
            spdlog::warn("catalog {}: {} is not set; requests go without the {} header", context_.source_name(),
                         variable, header);
            continue;
        }
        credentials_.emplace_back(header, value);
        secrets_.push_back(value);
    }
    for (const auto& [name, value] : settings_.headers) sources.push_back(name + " from the configuration");
    if (settings_.auth) {
        tokens_ = std::make_shared<auth::UpstreamCredentials>("catalog " + context_.source_name(), *settings_.auth,
                                                              *http_);
        if (!settings_.auth->client.client_secret.empty()) secrets_.push_back(settings_.auth->client.client_secret);
        sources.push_back(
            fmt::format("Authorization from the authorization server ({})", auth::type_name(settings_.auth->type)));
    }
    for (const auto& header : settings_.forward_headers) {
        context_.forward_client_header(header);
        sources.push_back(header + " from the calling client when it sends one");
    }
    credential_sources_ = sources.empty() ? "none are configured" : fmt::format("{}", fmt::join(sources, ", "));

    std::weak_ptr<RestCatalog> weak = weak_from_this();
    context_.add_health(context_.source_name(), [weak]() -> observability::ComponentHealth {
        auto self = weak.lock();
        if (!self) return {"stopped", observability::Severity::degraded};
        std::lock_guard lock(self->state_mutex_);
        switch (self->state_) {
            case State::loading: return {"loading", observability::Severity::degraded};
            case State::available: return {"available", observability::Severity::ok};
            case State::stale: return {"stale (the last refresh failed)", observability::Severity::degraded};
            case State::unreachable: return {"unreachable", observability::Severity::degraded};
        }
        return {"unknown", observability::Severity::degraded};
    });
    fetch_now();
}

// The waits between fetches are executor timers holding a weak pointer, not a coroutine
// asleep: a timer dropped at shutdown goes with its callback, a suspended frame whose
// resumption never runs would stay allocated (and keep the catalog alive).
void RestCatalog::fetch_now() {
    if (stopped_ || fetching_) return;
    if (cancel_timer_) {
        cancel_timer_();
        cancel_timer_ = nullptr;
    }
    fetching_ = true;
    reload_requested_ = false;
    auto self = shared_from_this();
    spawn(fetch_once(), [self](std::exception_ptr error) {
        self->fetching_ = false;
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const std::exception& e) {
                spdlog::error("catalog {}: {}", self->context_.source_name(), e.what());
            } catch (...) {}
        }
        if (self->stopped_) return;
        if (self->reload_requested_) return self->fetch_now();
        self->wait_for_next(self->next_wait_);
    });
}

void RestCatalog::wait_for_next(std::chrono::milliseconds wait) {
    if (stopped_ || wait.count() == 0) return;  // no refresh interval: only reloads fetch
    std::weak_ptr<RestCatalog> weak = weak_from_this();
    cancel_timer_ = context_.executor().schedule_after(wait, [weak] {
        if (auto self = weak.lock()) {
            self->cancel_timer_ = nullptr;
            self->fetch_now();
        }
    });
}

void RestCatalog::reload() {
    if (stopped_) return;
    if (fetching_) reload_requested_ = true;
    else fetch_now();
}

void RestCatalog::stop() {
    stopped_ = true;
    fetch_cancel_.cancel("stopping");
    if (cancel_timer_) {
        cancel_timer_();
        cancel_timer_ = nullptr;
    }
}

void RestCatalog::set_state(State state) {
    std::lock_guard lock(state_mutex_);
    state_ = state;
}

void RestCatalog::warn_once(const std::string& message) {
    if (warned_.insert(message).second) spdlog::warn("catalog {}: {}", context_.source_name(), message);
}

// One fetch and what follows it: the tools applied and the next wait chosen (the refresh
// interval after a success, the backoff after a failure).
Task<void> RestCatalog::fetch_once() {
    next_wait_ = settings_.refresh_interval;
    std::string failure;
    try {
        auto started = context_.executor().now();
        auto tools = co_await fetch_catalog();
        if (stopped_) co_return;
        const std::size_t listed = tools.size();
        auto answered = context_.executor().now();
        auto changes = apply(std::move(tools));
        // The pages, their parse trees and the schemas compiled to check them are freed by
        // now; glibc would keep those pages, so the server's resident size would be its
        // largest catalog fetch instead of what it holds. Hand them back, once the loop
        // has sent the news (trimming takes a few milliseconds).
        if (changes.any()) context_.executor().post([] { malloc_trim(0); });
        loaded_ = true;
        set_state(State::available);
        backoff_ = 1000ms;
        // Fetching is the API's time; registering (repair, names, declarations) is ours.
        auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
        if (changes.any() || changes.refused) {
            spdlog::info(
                "catalog {}: {} tools listed, {} served ({} added, {} changed, {} removed, {} left out); "
                "fetched in {:.1f} ms, registered in {:.1f} ms",
                context_.source_name(), listed, tool_count(), changes.added, changes.changed, changes.removed,
                changes.refused, ms(answered - started), ms(context_.executor().now() - answered));
        }
    } catch (const OperationCancelled&) {
        if (stopped_) co_return;
        failure = "cancelled";
    } catch (const std::exception& e) {
        failure = e.what();
    }
    settled_ = true;
    if (stopped_ || failure.empty()) co_return;
    failure = util::sanitize_for_message(providers::redact_text(failure, secrets_), 300);
    set_state(loaded_ ? State::stale : State::unreachable);
    spdlog::warn("catalog {}: fetching the catalog failed ({}); {}; next attempt in {} s", context_.source_name(),
                 failure, loaded_ ? "serving the tools of the last fetch" : "its tools appear when it answers",
                 (backoff_.count() + 999) / 1000);
    next_wait_ = backoff_;
    backoff_ = std::min<std::chrono::milliseconds>(backoff_ * 2, settings_.retry_max);
}

Task<std::vector<CatalogTool>> RestCatalog::fetch_catalog() {
    const std::string first_url = is_absolute(settings_.list.url) ? settings_.list.url
                                                                  : settings_.base_url + settings_.list.url;
    const auto origin = http_client::parse_url(first_url).origin();
    std::vector<CatalogTool> tools;
    std::string url = first_url;
    int page_number = settings_.list.first_page;
    for (int pages = 0;; ++pages) {
        if (pages == settings_.list.max_pages) {
            warn_once(fmt::format("the catalog has more than {} pages; the rest are left out (list.max_pages)", pages));
            break;
        }
        http_client::Request request;
        request.method = settings_.list.method;
        request.url = url;
        if (settings_.list.pagination == Pagination::page) {
            request.url += fmt::format("{}{}={}&{}={}", url.find('?') == std::string::npos ? "?" : "&",
                                       settings_.list.page_param, page_number, settings_.list.page_size_param,
                                       settings_.list.page_size);
        }
        request.headers = request_headers(nullptr);
        http_client::CallOptions options;
        options.deadline = context_.executor().now() + settings_.request_timeout;
        options.cancel = &fetch_cancel_;
        // A page is read no further than the catalog's own cap: a page of tens of megabytes
        // would otherwise be held, then parsed into a tree several times its size.
        options.max_response_bytes = settings_.max_response_bytes;
        http_client::Response response;
        // A 401 to a token from the authorization server: a new one, once.
        for (int attempt = 0; attempt < 2; ++attempt) {
            auto sent = request;
            std::string authorization = co_await this->authorization(nullptr);
            if (!authorization.empty()) sent.headers.emplace_back("Authorization", authorization);
            try {
                response = co_await http_->fetch(std::move(sent), options);
            } catch (const http_client::ResponseTooLarge& e) {
                throw CatalogError(
                    fmt::format("page {} of the catalog is over {} bytes (max_response_bytes); it was not "
                                "read further",
                                pages + 1, e.limit));
            }
            if (response.status != 401 || authorization.empty() || attempt == 1) break;
            tokens_->rejected(authorization);
        }
        if (response.status < 200 || response.status > 299) {
            auto error = error_for_status(response.status, response.header("Retry-After"), response.body, secrets_,
                                          credential_sources_);
            throw CatalogError(fmt::format("the catalog API answered HTTP {}: {}", response.status, error.what()));
        }
        auto answer = Json::parse(response.body, nullptr, false);
        if (answer.is_discarded()) throw CatalogError("the catalog API answered with something that is not JSON");
        auto page = parse_catalog_page(std::move(answer), settings_.list);
        for (const auto& skipped : page.skipped) warn_once("skipped " + skipped);
        const bool empty = page.tools.empty();
        for (auto& tool : page.tools) tools.push_back(std::move(tool));
        if (settings_.list.pagination == Pagination::page) {
            if (!page.has_next || empty) break;
            ++page_number;
        } else if (settings_.list.pagination == Pagination::next) {
            if (page.next_url.empty()) break;
            auto next = http_client::resolve_location(http_client::parse_url(url), page.next_url);
            // The catalog's answers must not steer Toolport (and its keys) to another host.
            if (!next || next->origin() != origin) {
                throw CatalogError("the catalog's next-page link points to another host; refused");
            }
            url = next->origin() + next->target;
        } else {
            break;
        }
        if (tools.size() > settings_.max_tools) break;
    }
    co_return tools;
}

providers::ToolSetChanges RestCatalog::apply(std::vector<CatalogTool> tools) {
    // One entry per catalog name (the first), at most max_tools.
    std::vector<CatalogTool> kept;
    kept.reserve(tools.size());
    std::set<std::string> seen;
    for (auto& tool : tools) {
        if (!seen.insert(tool.name).second) {
            warn_once(fmt::format("tool \"{}\" is listed twice; the first is served",
                                  util::sanitize_for_message(tool.name, 80)));
            continue;
        }
        if (kept.size() == settings_.max_tools) {
            warn_once(fmt::format("the catalog lists more than {} tools; the rest are left out (max_tools)",
                                  settings_.max_tools));
            break;
        }
        kept.push_back(std::move(tool));
    }
    std::vector<Json> schemas(kept.size());
    std::vector<std::string> wanted, catalog_names;
    std::vector<std::size_t> offered;  // indexes into kept
    const std::size_t room = kMaxToolName - std::min(settings_.tool_prefix.size(), kMaxToolName - 8);
    for (std::size_t i = 0; i < kept.size(); ++i) {
        auto& tool = kept[i];
        auto repair = repair_input_schema(std::move(tool.input_schema));
        // "Cache Entry" (5f3a...) : the display name people know, the id the API knows.
        const std::string shown = tool.title.empty()
                                      ? fmt::format("\"{}\"", util::sanitize_for_message(tool.name, 80))
                                      : fmt::format("\"{}\" ({})", util::sanitize_for_message(tool.title, 80),
                                                    util::sanitize_for_message(tool.name, 80));
        if (!repair.unrepairable.empty()) {
            warn_once(fmt::format("tool {} left out: {}", shown, repair.unrepairable));
            continue;
        }
        for (const auto& line : repair.repairs) {
            warn_once(fmt::format("tool {} schema repaired: {}", shown, line));
        }
        schemas[i] = std::move(repair.schema);
        std::string base = settings_.name_from == NameFrom::title && !tool.title.empty()
                               ? name_from_title(tool.title, room)
                               : safe_tool_name(tool.name, room);
        wanted.push_back(settings_.tool_prefix.substr(0, kMaxToolName - room) + base);
        catalog_names.push_back(tool.name);
        offered.push_back(i);
    }
    auto names = unique_tool_names(wanted, catalog_names);
    std::vector<providers::SyncedTool> declarations;
    declarations.reserve(offered.size());
    for (std::size_t k = 0; k < offered.size(); ++k) {
        auto& tool = kept[offered[k]];
        declarations.push_back({declare(tool, names[k], std::move(schemas[offered[k]])), tool.name});
    }
    return tools_.replace(std::move(declarations));
}

providers::ToolDeclaration RestCatalog::declare(const CatalogTool& tool, std::string name, Json input_schema) {
    providers::ToolDeclaration d;
    d.name = std::move(name);
    d.title = tool.title;
    // The display name stays in the description too ("Weather Check — current conditions"):
    // many hosts show a tool's name and description only, and the name is a slug.
    if (tool.title.empty() || tool.description.rfind(tool.title, 0) == 0) d.description = tool.description;
    else if (tool.description.empty()) d.description = tool.title;
    else d.description = tool.title + " \u2014 " + tool.description;
    d.input_schema = std::move(input_schema);
    if (tool.output_schema.is_object() && tool.output_schema.value("type", Json()) == "object")
        d.output_schema = tool.output_schema;
    // The catalog's own hints when it gives them (MCP format); a call always reaches the
    // API, a world outside the server.
    d.annotations.read_only = hint(tool.annotations, "readOnlyHint");
    d.annotations.destructive = hint(tool.annotations, "destructiveHint");
    d.annotations.idempotent = hint(tool.annotations, "idempotentHint");
    d.annotations.open_world = hint(tool.annotations, "openWorldHint").value_or(true);
    d.service = context_.source_name();
    d.paces_downstream = true;
    d.compile_on_first_call = true;
    std::weak_ptr<RestCatalog> weak = weak_from_this();
    auto output_schema = d.output_schema.is_null() ? nullptr : std::make_shared<const Json>(d.output_schema);
    d.handler = [weak, catalog_name = tool.name, output_schema](RequestContext& ctx,
                                                                const Json& arguments) -> Task<ToolResult> {
        auto self = weak.lock();
        if (!self) throw ToolError(ToolErrorCode::server_unhealthy, "the catalog has been stopped");
        co_return co_await self->call(ctx, catalog_name, arguments, output_schema);
    };
    return d;
}

http_client::Headers RestCatalog::request_headers(const RequestContext* ctx) const {
    http_client::Headers headers;
    headers.reserve(credentials_.size() + 3);
    for (const auto& [name, value] : credentials_) {
        // A per-user key of the calling client replaces the server's.
        if (ctx && std::find(settings_.forward_headers.begin(), settings_.forward_headers.end(), name) !=
                       settings_.forward_headers.end()) {
            const auto& sent = ctx->caller().client_headers;
            if (auto it = sent.find(util::to_lower_ascii(name)); it != sent.end() && !it->second.empty()) continue;
        }
        headers.emplace_back(name, value);
    }
    if (ctx) {
        for (const auto& name : settings_.forward_headers) {
            const auto& sent = ctx->caller().client_headers;
            if (auto it = sent.find(util::to_lower_ascii(name)); it != sent.end() && !it->second.empty())
                headers.emplace_back(name, it->second);
        }
    }
    headers.emplace_back("Accept", "application/json");
    return headers;
}

Task<std::string> RestCatalog::authorization(const RequestContext* ctx) {
    if (!tokens_) co_return std::string();
    try {
        co_return ctx ? co_await tokens_->for_caller(ctx->caller().access_token) : co_await tokens_->for_source();
    } catch (const auth::UpstreamCredentialsError& e) {
        if (ctx) throw providers::credentials_tool_error(e);
        throw CatalogError(e.what());
    }
}

Task<ToolResult> RestCatalog::call(RequestContext& ctx, std::string catalog_name, const Json& arguments,
                                   std::shared_ptr<const Json> output_schema) {
    const bool streaming = wants_stream(settings_.execute, arguments);
    http_client::Request request;
    request.method = settings_.execute.method;
    request.url = execute_url(settings_, catalog_name, streaming);
    request.headers = request_headers(&ctx);
    if (streaming) request.headers.back().second = "text/event-stream, application/json";
    // The operator's credentials leave no answer, a successful one included. With the
    // calling client's own forwarded keys, they are also kept out of error messages (a
    // successful answer may show a client its own key).
    std::vector<std::string> operator_secrets = secrets_;
    std::vector<std::string> secrets = secrets_;
    for (const auto& [name, value] : request.headers) {
        if (std::find(settings_.forward_headers.begin(), settings_.forward_headers.end(), name) !=
            settings_.forward_headers.end()) {
            secrets.push_back(value);
        }
    }
    if (request.method != "GET") {
        request.headers.emplace_back("Content-Type", "application/json");
        request.body = execute_body(settings_.execute.body, catalog_name, arguments)
                           .dump(-1, ' ', false, Json::error_handler_t::replace);
    }
    http_client::StreamOptions options;
    // The shorter of the call's deadline (the pipeline's timeout) and the catalog's own
    // request_timeout_ms: either bounds the request.
    options.deadline = ctx.executor().now() + settings_.request_timeout;
    if (auto call_deadline = ctx.deadline(); call_deadline && *call_deadline < *options.deadline) {
        options.deadline = call_deadline;
    }
    options.body_deadline = options.deadline;
    options.cancel = &ctx.cancel_token();
    options.trace_parent = &ctx.trace_context();
    options.baggage = ctx.baggage();

    std::unique_ptr<http_client::ResponseStream> stream;
    // A 401 to a token from the authorization server: a new one, once.
    for (int attempt = 0; attempt < 2; ++attempt) {
        auto sent = request;
        std::string authorization = co_await this->authorization(&ctx);
        if (!authorization.empty()) {
            sent.headers.emplace_back("Authorization", authorization);
            // The token itself, without its scheme, is a secret the answer may echo too.
            operator_secrets.push_back(authorization.substr(authorization.find(' ') + 1));
            secrets.push_back(operator_secrets.back());
        }
        co_await ctx.pace_downstream_request();
        try {
            stream = co_await http_->open(std::move(sent), options);
        } catch (const http_client::HttpError& e) {
            throw providers::unreachable_error(e, "the catalog API", "the catalog's base_url and the network settings");
        }
        if (stream->head().status != 401 || authorization.empty() || attempt == 1) break;
        tokens_->rejected(authorization);
        stream.reset();  // its body is not read: the connection closes
    }
    const auto& head = stream->head();
    try {
        if (head.status < 200 || head.status > 299) {
            std::string body;
            try {
                body = co_await stream->read_all(64 * 1024);
            } catch (const http_client::ResponseTooLarge&) {
                body = "(an error body too large to read)";
            }
            throw error_for_status(head.status, head.header("Retry-After"), body, secrets, credential_sources_);
        }
        const std::string type = util::to_lower_ascii(head.header("Content-Type").value_or(""));
        ToolResult result;
        if (type.rfind("text/event-stream", 0) == 0) {
            StreamedOutput output(operator_secrets, settings_.max_response_bytes);
            // The output is capped by StreamedOutput; the stream's bytes (events, framing,
            // heartbeats, JSON wrappers) by four times that, so a stream that never ends in
            // output (or one gzip piece inflating to gigabytes) is not read for ever.
            stream->limit(4 * settings_.max_response_bytes + 65536);
            while (!output.done()) {
                auto bytes = co_await stream->read_some();
                if (!bytes) break;
                // Each chunk's progress number is its position in the output.
                auto chunks = output.feed(*bytes);
                const std::size_t first = output.chunks() - chunks.size();
                for (std::size_t i = 0; i < chunks.size(); ++i) {
                    ctx.progress(static_cast<double>(first + i + 1), std::nullopt, std::move(chunks[i]));
                }
            }
            if (output.error()) throw *output.error();
            result = output.result();
        } else {
            std::string body = co_await stream->read_all(settings_.max_response_bytes);
            auto answer = Json::parse(body, nullptr, false);
            if (!answer.is_discarded()) {
                result = read_execute_answer(answer, settings_.execute, operator_secrets,
                                             output_schema ? *output_schema : Json());
            } else if (type.rfind("text/", 0) == 0) {
                result = ToolResult::text(providers::redact_text(std::move(body), operator_secrets));
            } else {
                throw ToolError(ToolErrorCode::upstream_error,
                                fmt::format("The API answered with {} that is not JSON",
                                            type.empty() ? std::string("a body") : util::sanitize_for_message(type, 60)))
                    .transient(true)
                    .suggest("Retry in a moment; if it persists the API has changed its answers.");
            }
        }
        if (result.meta.is_null()) result.meta = Json::object();
        result.meta["downstream_api_calls"] = ctx.downstream_requests();
        co_return result;
    } catch (const http_client::HttpError& e) {
        throw providers::unreachable_error(e, "the catalog API", "the catalog's base_url and the network settings");
    } catch (const http_client::ResponseTooLarge& e) {
        throw providers::too_large_error(
            e.limit, "The API",
            "Ask for less output (narrower arguments); the catalog's max_response_bytes sets the limit.");
    }
}

}  // namespace toolport::rest
