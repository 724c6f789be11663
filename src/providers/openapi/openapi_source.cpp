// The `openapi` source: each operation of an OpenAPI 3.0/3.1 document as a tool (see
// operations.hpp for the naming and schema rules, request_builder.hpp for the requests,
// response_mapping.hpp for the answers, openapi_settings.hpp for the settings).
//
// A document in a file is read in start(), so `toolport list --config` sees its tools; one
// at a URL is fetched in the background and its tools appear (list_changed) when it
// answers. Either way a document that cannot be read or used never stops the server: a
// warning, /health says degraded, and it is tried again after 1 s, 2 s, ... up to 60 s.
// reload() (SIGHUP, `toolport reload`) reads it again at once; refresh_interval_s
// periodically. ToolSet keeps the registry equal to the latest document, so clients hear
// list_changed only when something changed.
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "async/executor.hpp"
#include "http_client/url.hpp"
#include "observability/health.hpp"
#include "pipeline/policy.hpp"
#include "providers/openapi/openapi_document.hpp"
#include "providers/openapi/openapi_settings.hpp"
#include "providers/openapi/openapi_tools.hpp"
#include "providers/source.hpp"
#include "util/sanitize.hpp"

namespace toolport::providers {

namespace {

using namespace std::chrono_literals;
using openapi::OpenApiSettings;

constexpr std::chrono::milliseconds kFirstRetry = 1s;
constexpr std::chrono::milliseconds kLastRetry = 60s;

std::optional<std::string> environment_secret(const std::string& variable) {
    const char* value = std::getenv(variable.c_str());
    if (!value) return std::nullopt;
    return std::string(value);
}

// What GET /health shows for the source; read from whichever thread serves /health.
struct HealthState {
    std::mutex mutex;
    observability::ComponentHealth health{"loading", observability::Severity::degraded};

    void set(std::string state, observability::Severity severity) {
        std::lock_guard lock(mutex);
        health = {std::move(state), severity};
    }
    observability::ComponentHealth get() {
        std::lock_guard lock(mutex);
        return health;
    }
};

// Everything the loading touches, shared with the timer and the fetch under way: the
// source may be destroyed while either is still to run (after stop(), which makes them
// end at once).
//
// The waits between reads are executor timers, not a coroutine asleep: a timer the loop
// never runs again (the server shutting down) is dropped with its callback, where a
// suspended coroutine's frame would be lost.
struct Loader {
    Loader(SourceContext& context, OpenApiSettings settings)
        : context(context), settings(std::move(settings)), tools(context) {}

    SourceContext& context;
    OpenApiSettings settings;
    ToolSet tools;
    std::shared_ptr<HealthState> health = std::make_shared<HealthState>();
    http_client::HttpClient* http = nullptr;
    bool loaded = false;
    bool first_read_over = false;  // succeeded or failed once: settled()
    bool stopped = false;
    bool loading = false;           // a URL fetch is under way
    bool reload_requested = false;  // reload() during a fetch: read again when it ends
    std::chrono::milliseconds backoff = kFirstRetry;
    std::function<void()> cancel_timer;  // the wait for the next read, if one is scheduled
    CancelToken stop_token;              // fired by stop(): ends a fetch under way
    std::string last_warnings;
    std::string last_base_url;
    std::set<std::string> warned_hosts;                 // servers on another host than the document's, warned once each
    std::shared_ptr<auth::UpstreamCredentials> tokens;  // auth:, made on the first apply

    const std::string& name() const { return context.source_name(); }
    bool from_url() const { return openapi::is_url(settings.document); }
};

std::string host_of(const std::string& url) {
    try {
        return http_client::parse_url(url).host;
    } catch (const std::invalid_argument&) {
        return {};
    }
}

// A document fetched from one host whose server URL is on another: the document decides
// where the calls, and the credentials they carry, go. Allowed (an API's documents are
// often served elsewhere), but the operator hears of it, once per host; a base_url in the
// settings is the operator's own choice and says nothing.
void warn_if_elsewhere(Loader& l, const std::string& base_url) {
    if (!l.from_url() || !l.settings.base_url.empty()) return;
    const std::string document_host = host_of(l.settings.document);
    const std::string api_host = host_of(base_url);
    if (api_host.empty() || api_host == document_host || !l.warned_hosts.insert(api_host).second) return;
    spdlog::warn(
        "openapi {}: the document, served by {}, sends its calls and their credentials to another host, {}; "
        "set base_url to confirm it",
        l.name(), util::sanitize_for_message(document_host, 100), util::sanitize_for_message(api_host, 100));
}

// Turns a loaded document into the source's tools. Throws DocumentError.
void apply(Loader& l, const openapi::DocumentSet& docs) {
    std::vector<std::string> warnings;
    auto api = std::make_shared<openapi::Api>();
    api->http = l.http;
    api->base_url = openapi::server_url(docs, l.settings.base_url);
    warn_if_elsewhere(l, api->base_url);
    api->name = l.name();
    api->secret_of = environment_secret;
    api->max_response_bytes = l.settings.max_response_bytes;
    api->schemes = openapi::read_security_schemes(docs, l.name(), l.settings.credentials, warnings);
    if (l.settings.auth && l.http && !l.tokens) {
        l.tokens = std::make_shared<auth::UpstreamCredentials>("openapi " + l.name(), *l.settings.auth, *l.http);
    }
    api->tokens = l.tokens;
    auto operations = openapi::read_operations(docs, l.settings.filter, l.settings.tool_prefix);
    warnings.insert(warnings.end(), operations.warnings.begin(), operations.warnings.end());
    // A credential variable that is not set is said at start-up, not first at a call.
    std::map<std::string, std::size_t> needing;  // scheme → operations that name it
    for (const auto& op : operations.operations) {
        std::set<std::string> named;
        for (const auto& alternative : op.security) named.insert(alternative.begin(), alternative.end());
        for (const auto& scheme : named) ++needing[scheme];
    }
    for (const auto& [scheme, count] : needing) {
        auto s = api->schemes.find(scheme);
        if (s == api->schemes.end()) continue;  // unsupported: read_security_schemes said so
        if (auto secret = environment_secret(s->second.env_var); secret && !secret->empty()) continue;
        warnings.push_back(
            fmt::format("the environment variable {} (security scheme {}) is not set: {} operation{} "
                        "that need{} it answer MISSING_API_KEY until it is set (or name another "
                        "variable under credentials:)",
                        s->second.env_var, scheme, count, count == 1 ? "" : "s", count == 1 ? "s" : ""));
    }
    const std::size_t count = operations.operations.size();
    auto changes = l.tools.replace(openapi::make_tools(operations.operations, api));

    // A periodic refresh of the same document says nothing new.
    std::string joined;
    for (const auto& w : warnings) joined += w + "\n";
    if (joined != l.last_warnings) {
        for (const auto& w : warnings) spdlog::warn("openapi {}: {}", l.name(), util::sanitize_for_message(w, 500));
        l.last_warnings = std::move(joined);
    }
    if (changes.any() || changes.refused || api->base_url != l.last_base_url) {
        spdlog::info("openapi {}: {} operations → {} tools on {} ({} added, {} changed, {} removed, {} refused)",
                     l.name(), count, l.tools.size(),
                     util::sanitize_for_message(api->base_url.substr(0, api->base_url.find('?')), 200), changes.added,
                     changes.changed, changes.removed, changes.refused);
    }
    l.last_base_url = api->base_url;
    l.loaded = true;
    l.health->set(fmt::format("available ({} tools)", l.tools.size()), observability::Severity::ok);
}

void report_failure(const Loader& l, const std::string& why, std::chrono::milliseconds retry_in) {
    const std::string reason = util::sanitize_for_message(why, 400);
    spdlog::warn("openapi {}: the document could not be used ({}); {}; next attempt in {} s", l.name(), reason,
                 l.loaded ? "serving the tools of the last good read" : "its tools appear when it can be read",
                 (retry_in.count() + 999) / 1000);
    l.health->set(l.loaded ? "stale (the last read failed: " + reason + ")" : "unavailable: " + reason,
                  observability::Severity::degraded);
}

void read_document(const std::shared_ptr<Loader>& l);

void schedule_read(const std::shared_ptr<Loader>& l, std::chrono::milliseconds delay) {
    if (l->cancel_timer) l->cancel_timer();
    l->cancel_timer = l->context.executor().schedule_after(delay, [l] {
        l->cancel_timer = nullptr;
        read_document(l);
    });
}

// After a read: again at once when a reload came meanwhile, else after the refresh
// interval (none: only on reload), or after the backoff when it failed.
void after_read(const std::shared_ptr<Loader>& l, const std::string& failure) {
    l->loading = false;
    l->first_read_over = true;
    if (l->stopped) return;
    if (!failure.empty()) report_failure(*l, failure, l->backoff);
    if (l->reload_requested) {
        l->reload_requested = false;
        schedule_read(l, std::chrono::milliseconds(0));
    } else if (failure.empty()) {
        l->backoff = kFirstRetry;
        if (l->settings.refresh_interval.count() > 0) schedule_read(l, l->settings.refresh_interval);
    } else {
        schedule_read(l, l->backoff);
        l->backoff = std::min(l->backoff * 2, kLastRetry);
    }
}

Task<void> fetch_and_apply(std::shared_ptr<Loader> l) {
    auto docs = co_await openapi::load_url_document(*l->http, l->settings.document, &l->stop_token);
    if (!l->stopped) apply(*l, docs);
}

void read_document(const std::shared_ptr<Loader>& l) {
    if (l->stopped || l->loading) return;
    if (!l->from_url()) {
        std::string failure;
        try {
            apply(*l, openapi::load_file_document(l->settings.document));
        } catch (const std::exception& e) {
            failure = e.what();
        }
        return after_read(l, failure);
    }
    if (!l->http) return after_read(l, "this process has no HTTP client to fetch the document with");
    l->loading = true;
    spawn(fetch_and_apply(l), [l](std::exception_ptr error) {
        std::string failure;
        if (error) {
            try {
                std::rethrow_exception(error);
            } catch (const OperationCancelled&) {
                failure = "cancelled";
            } catch (const std::exception& e) {
                failure = e.what();
            } catch (...) {
                failure = "unknown error";
            }
        }
        after_read(l, failure);
    });
}

class OpenApiSource final : public Source {
public:
    explicit OpenApiSource(const SourceSettings& settings) : settings_(OpenApiSettings::from(settings)) {}

    void start(SourceContext& context) override {
        loader_ = std::make_shared<Loader>(context, settings_);
        if (context.has_http()) loader_->http = &context.http();
        context.set_strict_arguments(settings_.strict_arguments);
        // The API's answers are not Toolport's to know fresh (a createItem changes what
        // listItems answers): not cached unless the operator turns it on (`sources:
        // {<name>: {cache: {mode: read_only}}}`), and then per caller, since each caller
        // may reach the API as itself (token_exchange) or with its own headers.
        pipeline::PolicyOverride call_defaults;
        call_defaults.cache_mode = pipeline::CacheMode::off;
        call_defaults.cache_per_user = true;
        context.set_call_defaults(call_defaults);
        context.add_health(context.source_name(), [health = loader_->health] { return health->get(); });
        // A file is read now, so that its tools are there when start() returns (`toolport
        // list --config`); a URL is fetched in the background.
        read_document(loader_);
    }

    void reload() override {
        if (!loader_) return;
        // On the loop, whichever thread asked: the loader is the loop's alone.
        loader_->context.executor().post([l = loader_] {
            if (l->stopped) return;
            if (l->loading) {
                l->reload_requested = true;
                return;
            }
            if (l->cancel_timer) {
                l->cancel_timer();
                l->cancel_timer = nullptr;
            }
            read_document(l);
        });
    }

    bool reloads() const override { return true; }
    bool fetching() const override { return loader_ && (loader_->loading || loader_->reload_requested); }
    bool settled() const override { return !loader_ || loader_->first_read_over; }

    void stop() override {
        if (!loader_) return;
        loader_->stopped = true;
        loader_->stop_token.cancel("stopping");
        if (loader_->cancel_timer) {
            loader_->cancel_timer();
            loader_->cancel_timer = nullptr;
        }
    }

private:
    OpenApiSettings settings_;
    std::shared_ptr<Loader> loader_;
};

}  // namespace

std::unique_ptr<Source> make_openapi_source(const SourceSettings& settings) {
    return std::make_unique<OpenApiSource>(settings);
}

}  // namespace toolport::providers
