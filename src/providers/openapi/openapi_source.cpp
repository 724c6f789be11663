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
#include <mutex>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "async/cancel_token.hpp"
#include "async/completion.hpp"
#include "async/executor.hpp"
#include "observability/health.hpp"
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

// Everything the background loop touches, shared with it: the source may be destroyed
// while a fetch or a wait is still to resume (after stop(), which makes it end at once).
struct Loader {
    Loader(SourceContext& context, OpenApiSettings settings) : context(context), settings(std::move(settings)), tools(context) {}

    SourceContext& context;
    OpenApiSettings settings;
    ToolSet tools;
    std::shared_ptr<HealthState> health = std::make_shared<HealthState>();
    http_client::HttpClient* http = nullptr;
    bool loaded = false;
    bool stopped = false;
    bool loading = false;
    bool reload_requested = false;
    bool loop_running = false;
    CancelToken stop_token;             // fired by stop(): ends a fetch under way
    std::shared_ptr<CancelToken> wake;  // the loop's current wait; fired by reload() and stop()
    std::string last_warnings;
    std::string last_base_url;

    const std::string& name() const { return context.source_name(); }
    bool from_url() const { return openapi::is_url(settings.document); }
};

// Turns a loaded document into the source's tools. Throws DocumentError.
void apply(Loader& l, const openapi::DocumentSet& docs) {
    std::vector<std::string> warnings;
    auto api = std::make_shared<openapi::Api>();
    api->http = l.http;
    api->base_url = openapi::server_url(docs, l.settings.base_url);
    api->name = l.name();
    api->secret_of = environment_secret;
    api->schemes = openapi::read_security_schemes(docs, l.name(), l.settings.credentials, warnings);
    auto operations = openapi::read_operations(docs, l.settings.filter, l.settings.tool_prefix);
    warnings.insert(warnings.end(), operations.warnings.begin(), operations.warnings.end());
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
                     l.name(), count, l.tools.size(), util::sanitize_for_message(api->base_url.substr(0, api->base_url.find('?')), 200),
                     changes.added, changes.changed, changes.removed, changes.refused);
    }
    l.last_base_url = api->base_url;
    l.loaded = true;
    l.health->set(fmt::format("available ({} tools)", l.tools.size()), observability::Severity::ok);
}

void report_failure(Loader& l, const std::string& why, std::chrono::milliseconds retry_in) {
    const std::string reason = util::sanitize_for_message(why, 400);
    spdlog::warn("openapi {}: the document could not be used ({}); {}; next attempt in {} s", l.name(), reason,
                 l.loaded ? "serving the tools of the last good read" : "its tools appear when it can be read",
                 (retry_in.count() + 999) / 1000);
    l.health->set(l.loaded ? "stale (the last read failed: " + reason + ")" : "unavailable: " + reason,
                  observability::Severity::degraded);
}

// One read of the document; false when it failed (reported) or the source stopped.
Task<bool> load_once(std::shared_ptr<Loader> l, std::chrono::milliseconds retry_in) {
    std::string failure;
    l->loading = true;
    try {
        if (l->from_url()) {
            if (!l->http) throw openapi::DocumentError("this process has no HTTP client to fetch the document with");
            auto docs = co_await openapi::load_url_document(*l->http, l->settings.document, &l->stop_token);
            if (!l->stopped) apply(*l, docs);
        } else {
            apply(*l, openapi::load_file_document(l->settings.document));
        }
    } catch (const OperationCancelled&) {
        failure = "cancelled";
    } catch (const std::exception& e) {
        failure = e.what();
    }
    l->loading = false;
    if (l->stopped) co_return false;
    if (!failure.empty()) report_failure(*l, failure, retry_in);
    co_return failure.empty();
}

// Reads the document after `delay`, then again on reload(), every refresh interval, or
// with backoff after a failure, until stop().
Task<void> run(std::shared_ptr<Loader> l, std::chrono::milliseconds delay) {
    auto backoff = kFirstRetry;
    for (;;) {
        if (delay.count() > 0 && !l->reload_requested) {
            l->wake = std::make_shared<CancelToken>();
            auto wake = l->wake;
            try {
                co_await l->context.executor().sleep(delay, wake.get());
            } catch (const OperationCancelled&) {
            }
            if (l->stopped) break;
        }
        l->reload_requested = false;
        const bool ok = co_await load_once(l, backoff);
        if (l->stopped) break;
        if (ok) {
            backoff = kFirstRetry;
            if (l->settings.refresh_interval.count() == 0 && !l->reload_requested) break;
            delay = l->settings.refresh_interval;
        } else {
            delay = backoff;
            backoff = std::min(backoff * 2, kLastRetry);
        }
    }
    l->loop_running = false;
}

void start_loop(const std::shared_ptr<Loader>& l, std::chrono::milliseconds delay) {
    l->loop_running = true;
    spawn(run(l, delay), [l](std::exception_ptr error) {
        l->loop_running = false;
        if (!error) return;
        try {
            std::rethrow_exception(error);
        } catch (const std::exception& e) {
            spdlog::error("openapi {}: the loading loop ended: {}", l->name(), e.what());
        } catch (...) {
        }
    });
}

class OpenApiSource final : public Source {
public:
    explicit OpenApiSource(const SourceSettings& settings) : settings_(OpenApiSettings::from(settings)) {}

    void start(SourceContext& context) override {
        loader_ = std::make_shared<Loader>(context, settings_);
        if (context.has_http()) loader_->http = &context.http();
        context.add_health(context.source_name(), [health = loader_->health] { return health->get(); });
        if (loader_->from_url()) {
            start_loop(loader_, std::chrono::milliseconds(0));
            return;
        }
        // A file is read now, so that the tools are there when start() returns.
        std::string failure;
        try {
            apply(*loader_, openapi::load_file_document(settings_.document));
        } catch (const std::exception& e) {
            failure = e.what();
        }
        if (!failure.empty()) {
            report_failure(*loader_, failure, kFirstRetry);
            start_loop(loader_, kFirstRetry);
        } else if (settings_.refresh_interval.count() > 0) {
            start_loop(loader_, settings_.refresh_interval);
        }
    }

    void reload() override {
        if (!loader_) return;
        // On the loop, whichever thread asked: the loader is the loop's alone.
        loader_->context.executor().post([l = loader_] {
            if (l->stopped) return;
            if (!l->loop_running) return start_loop(l, std::chrono::milliseconds(0));
            l->reload_requested = true;
            if (!l->loading && l->wake) l->wake->cancel("reload");
        });
    }

    bool reloads() const override { return true; }

    void stop() override {
        if (!loader_) return;
        loader_->stopped = true;
        loader_->stop_token.cancel("stopping");
        if (loader_->wake) loader_->wake->cancel("stopping");
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
