// The operator console's handler (transports' ConsoleHandler): the page's files, and the
// JSON API under <console.path>/api/ (docs/console.md) with its live streams. The endpoint
// has already decided who asks and whether they may (ConsoleAccess); this words refusals
// and answers what is allowed. Runs on the engine's loop.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "async/task.hpp"
#include "console/overview.hpp"
#include "transports/http_options.hpp"
#include "util/json.hpp"

namespace toolport {
class Executor;
namespace stores {
class AuditFeed;
struct AuditRecord;
}  // namespace stores
}  // namespace toolport

namespace toolport::console {

// What a reload request got (app's Runtime::reload): one started now, the running one, or
// none because the last started too recently (retry after `wait`).
struct ReloadStart {
    bool started = false;
    bool running = false;
    std::chrono::milliseconds wait{0};
};

// What the console reads and drives, handed over by the application (app/serve.cpp).
struct ConsoleContext {
    Executor* executor = nullptr;
    std::string trace_viewer_url;          // console.trace_viewer_url
    std::size_t max_body_bytes = 1 << 20;  // the largest API request body taken
    OverviewSources overview;
    // GET /audit's query (stores::audit_http_query off the loop): {status, body}. Unset
    // while the audit log is off.
    std::function<Task<std::pair<int, std::string>>(std::string query)> audit_query;
    // The records as they are made (the live Calls view), with or without the log.
    stores::AuditFeed* audit_feed = nullptr;
    // Writes the record of an operator's action (to the audit log when it is on, and to the
    // feed). Unset: actions are logged only.
    std::function<void(stores::AuditRecord record)> record_action;
    // POST reload: starts a reload (SIGHUP's, POST /admin/reload's), and whether one still
    // fetches. Unset: no reload is offered.
    std::function<ReloadStart()> reload;
    std::function<bool()> reloading;
    std::chrono::milliseconds reload_wait{30000};  // how long POST reload waits for the outcome
    // GET config: {"effective": {...}, "check": {"ok", "findings"}}, secrets redacted. Unset:
    // not offered.
    std::function<Json()> config;
    // Tool-definition pinning's API (providers/pin_api.hpp, what /admin/pins answers): method,
    // its path (/admin/pins, /admin/pins/approve, /admin/pins/reset), the JSON body and who
    // asks (the approver its audit record names) -> {status, body}. Unset: pinning is off.
    std::function<Task<std::pair<int, std::string>>(std::string method, std::string path, std::string body, std::string who)>
        pins;
    // How often the overview stream sends the overview again.
    std::chrono::milliseconds overview_interval{2000};
};

class ConsoleApi final : public ConsoleHandler {
public:
    explicit ConsoleApi(ConsoleContext context);
    ~ConsoleApi() override;
    ConsoleApi(const ConsoleApi&) = delete;
    ConsoleApi& operator=(const ConsoleApi&) = delete;

    HttpAnswer answer(const HttpRequestView& request, std::string_view subpath, const ConsoleAccess& access) override;
    void attach(std::shared_ptr<ConsoleHost> host) override;

private:
    struct Impl;
    std::shared_ptr<Impl> impl_;
};

}  // namespace toolport::console
