// RestCatalog: one REST tool catalog while it serves. It fetches the catalog (every page)
// in the background, registers each tool with its repaired schema through a ToolSet,
// proxies every call to the execute endpoint, and fetches again on a timer, on reload()
// and, while the catalog is down, with backoff (1 s doubling to retry_max): the rest of
// Toolport serves meanwhile, and /health says the catalog is degraded.
//
// Shared (std::shared_ptr) between the source, its tools' handlers and a fetch in flight,
// so neither outlives what it uses; after stop() nothing touches what is outside this
// object. The waits between fetches are timers holding a weak pointer.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "async/cancel_token.hpp"
#include "async/task.hpp"
#include "http_client/http_client.hpp"
#include "providers/rest/catalog_listing.hpp"
#include "providers/rest/catalog_settings.hpp"
#include "providers/tool_set.hpp"

namespace toolport {
class RequestContext;
}  // namespace toolport
namespace toolport::auth {
class UpstreamCredentials;
}

namespace toolport::rest {

class RestCatalog : public std::enable_shared_from_this<RestCatalog> {
public:
    RestCatalog(CatalogSettings settings, providers::SourceContext& context);

    // Reads the credentials, reports health, starts the first fetch.
    void start();
    void reload();
    void stop();

    // One page after another until the catalog says there are no more. Throws
    // CatalogError, http_client::HttpError, http_client::ResponseTooLarge.
    Task<std::vector<CatalogTool>> fetch_catalog();
    // Makes the registered tools those of `tools` (repaired, named, only real changes).
    providers::ToolSetChanges apply(std::vector<CatalogTool> tools);
    // A tool call, proxied to the execute endpoint. `output_schema`: the tool's (null: none),
    // which a redacted answer must still match.
    Task<ToolResult> call(RequestContext& ctx, std::string catalog_name, const Json& arguments,
                          std::shared_ptr<const Json> output_schema = nullptr);

    std::size_t tool_count() const { return tools_.size(); }
    bool settled() const { return settled_; }
    // A fetch is under way, or another is asked for after it.
    bool fetching() const { return fetching_ || reload_requested_; }

private:
    enum class State { loading, available, stale, unreachable };

    void fetch_now();
    Task<void> fetch_once();
    void wait_for_next(std::chrono::milliseconds wait);
    providers::ToolDeclaration declare(const CatalogTool& tool, std::string name, Json input_schema);
    http_client::Headers request_headers(const RequestContext* ctx) const;
    // auth: the Authorization header for a request of `ctx`'s caller (nullptr: the
    // catalog's own); "" without auth:. Throws ToolError (the caller's call fails with it)
    // or, for the catalog's own, CatalogError.
    Task<std::string> authorization(const RequestContext* ctx);
    void warn_once(const std::string& message);
    void set_state(State state);

    CatalogSettings settings_;
    providers::SourceContext& context_;
    http_client::HttpClient* http_ = nullptr;
    providers::ToolSet tools_;
    http_client::Headers credentials_;                   // sent with every request
    std::shared_ptr<auth::UpstreamCredentials> tokens_;  // auth:, from start()
    std::vector<std::string> secrets_;                   // their values, redacted from every message
    std::string credential_sources_;                     // "X-API-Key from AGENT_PAYMENT_API_KEY, ..." for suggestions
    std::set<std::string> warned_;                       // repairs and skips are warned once, not on every refresh

    bool stopped_ = false;
    bool settled_ = false;  // the first fetch is over, served or failed
    bool fetching_ = false;
    bool reload_requested_ = false;  // asked during a fetch: fetch again when it ends
    bool loaded_ = false;            // a fetch has succeeded (later failures leave its tools)
    std::chrono::milliseconds backoff_{1000};
    std::chrono::milliseconds next_wait_{0};
    CancelToken fetch_cancel_;            // fired by stop(): ends a fetch in flight
    std::function<void()> cancel_timer_;  // the wait for the next fetch, when one is set

    mutable std::mutex state_mutex_;  // the health probe may run on another thread
    State state_ = State::loading;
};

}  // namespace toolport::rest
