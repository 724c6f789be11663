// Source: a provider of tools (and resources and prompts) behind one name — a built-in
// pack (conformance, testing, tango, context), a REST catalog, an OpenAPI document, or the
// gateway's upstream MCP servers (the kinds are listed in source_table.cpp). The runtime creates each configured source from the table (source_table.hpp)
// with its settings, gives it a SourceContext, and calls start(); from then on the
// source may add and remove tools at any time (clients hear of it through list_changed),
// and every call of its tools runs through the pipeline.
//
//   class WeatherSource final : public Source {
//   public:
//       explicit WeatherSource(const SourceSettings& settings);  // reads and checks settings only
//       void start(SourceContext& context) override {            // registers, may start work
//           context.add_tool({.name = "get_weather", ...});
//       }
//   };
//
// Construction reads settings and nothing else (the configuration check builds sources to
// validate their sections); start() is where a source touches the world.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "providers/source_settings.hpp"
#include "providers/tool_declaration.hpp"
#include "server/extension.hpp"
#include "server/view.hpp"

namespace toolport {
enum class ToolErrorCode;
class AsioExecutor;
class Executor;
class McpServer;
class Registry;
namespace observability {
class HealthRegistry;
struct ComponentHealth;
}  // namespace observability
namespace http_client {
class HttpClient;
}
namespace pins {
class PinGuard;
}
namespace pipeline {
class PolicyResolver;
struct ContentScanPolicy;
struct ServicePolicy;
struct PolicyOverride;
}  // namespace pipeline
}  // namespace toolport

namespace toolport::providers {

// The runtime's shared parts a source may use; each may be absent (unit tests).
struct SourceServices {
    observability::HealthRegistry* health = nullptr;
    http_client::HttpClient* http = nullptr;
    pipeline::PolicyResolver* policies = nullptr;
    // The network event loop (the same loop as the engine's), for sources that open
    // connections of their own (the gateway's upstream MCP clients).
    AsioExecutor* network = nullptr;
    // Tool-definition pinning (providers/pin_guard.hpp): the sources' listings are
    // checked against the approved definitions before they are served.
    pins::PinGuard* pins = nullptr;
};

// What a source is given by the runtime. It outlives the source's use of it.
class SourceContext {
public:
    SourceContext(std::string source_name, McpServer& server, SourceServices services = {});

    const std::string& source_name() const { return source_name_; }
    Executor& executor() const;
    // A context for one part of this source that registers under a name of its own (each
    // of the gateway's upstreams is its tools' source and service): same server, same
    // services.
    std::unique_ptr<SourceContext> part(std::string name) const;
    // For resources, prompts and batched changes (Registry::batch).
    Registry& registry() const;

    // Lets this source's tools read the client's `name` request header over HTTP
    // (RequestContext::caller().client_headers): for per-user credentials. Cached results
    // are then scoped by the values.
    void forward_client_header(const std::string& name);

    // Arguments the tools added from now on do not define are refused even where their
    // inputSchema allows them (ToolSpec::strict_arguments): set for the packs Toolport owns,
    // and by REST, OpenAPI and gateway sources configured with `strict_arguments: true`.
    void set_strict_arguments(bool strict) { strict_arguments_ = strict; }
    bool strict_arguments() const { return strict_arguments_; }
    // A source Toolport does not own (REST, OpenAPI, the gateway and its upstreams): its
    // results are scanned for prompt-injection markers unless configured otherwise
    // (pipeline/stages/content_scan.hpp). Set before start(); its parts inherit it.
    void set_untrusted();
    // The content scan this source's resources and prompts get (pipeline/result_scan.hpp's
    // scan_read_result): its policy as a tool of it would have it (`sources.<name>.redact`,
    // `injection_scan`; labelled by default when untrusted).
    pipeline::ContentScanPolicy read_scan_policy() const;

    // Adds (or replaces) a tool of this source. Throws SourceError (bad name, schema that
    // does not compile).
    void add_tool(ToolDeclaration declaration);
    bool remove_tool(const std::string& name);
    // A tool kept from clients (a pinning quarantine): not listed; a call of `name` gets a
    // tool error with `code` and `message` (McpServer::withhold_tool). release_withheld
    // ends that.
    void withhold_tool(const std::string& name, ToolErrorCode code, std::string message, std::string suggestion);
    bool release_withheld(const std::string& name);
    // A prompt or resource template kept from clients the same way (McpServer::
    // withhold_prompt, withhold_template), under this source: prompts/get of `name`, or a
    // resources/read that only `uri_template` matches, answers a JSON-RPC error (invalid
    // params) with `message`, and `suggestion` in its data.
    void withhold_prompt(const std::string& name, std::string message, std::string suggestion);
    bool release_withheld_prompt(const std::string& name);
    void withhold_template(const std::string& uri_template, std::string message, std::string suggestion);
    bool release_withheld_template(const std::string& uri_template);
    pins::PinGuard* pins() const { return services_.pins; }

    // Declares a protocol extension of the server (capabilities.extensions[id]) and the
    // methods it adds, as this source's: served only to callers that see the source.
    // Throws when a method is the protocol's own.
    void add_extension(const std::string& id, Json settings, std::map<std::string, ExtensionMethod> methods);
    // The method an extension of the server (any source's) serves now, if any: the gateway
    // serves the Skills extension of the server's other sources together with its upstreams'.
    std::optional<ExtensionMethod> extension_method(const std::string& method) const;
    // Whether `caller` sees what `source` offers (its view, access rules and scopes).
    bool source_visible(const CallerIdentity& caller, const std::string& source) const;

    // A component of GET /health (ignored when the runtime reports no health, as in tests).
    void add_health(const std::string& component, std::function<observability::ComponentHealth()> probe);

    // The source's defaults for a downstream service it calls (spacing, breaker), used
    // unless the configuration's `services:` has that service. Call before adding the
    // service's tools.
    void set_service_defaults(const std::string& service, const pipeline::ServicePolicy& policy);
    // The source's defaults for its own tools' calls (e.g. no caching), under the
    // configuration's `sources:` entry for it. Call before adding tools.
    void set_call_defaults(const pipeline::PolicyOverride& layer);

    // The downstream HTTP client shared by every source that calls a web API (TLS, pool,
    // proxies, retries). Throws SourceError when the runtime has none (unit tests that run
    // without a network loop).
    http_client::HttpClient& http() const;
    bool has_http() const { return services_.http != nullptr; }
    // The network event loop; throws SourceError when the runtime has none.
    AsioExecutor& network() const;

    // Runs `tool` (registered or not) through the call pipeline as a call of its own, on
    // behalf of the request `ctx`: a meta-tool that calls other tools (the gateway's
    // call_tool) gets their validation, limits and accounting.
    Task<ToolResult> invoke_tool(RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                                 const Json& arguments);

    // A named subset of the server's catalogue (its tools, and the resources, templates,
    // prompts and extensions of the sources it names) that clients choose with the URL path
    // /mcp/<name> or with one of `tokens` (McpServer::add_view): the gateway's profiles.
    void add_view(const std::string& name, ViewSpec view, std::vector<std::string> tokens = {});

    // Tells the clients subscribed to `uri` that it changed (notifications/resources/updated).
    void resource_updated(const std::string& uri);
    // Told when a client subscribes to a resource (`subscribed` true) and when the last
    // subscriber of one has left (false): for sources that must subscribe upstream.
    void on_subscription(std::function<void(const std::string& uri, bool subscribed)> listener);

private:
    std::string source_name_;
    McpServer& server_;
    SourceServices services_;
    bool strict_arguments_ = false;
    bool untrusted_ = false;
};

class Source {
public:
    virtual ~Source() = default;
    // Registers what the source offers; may start background work on the executor. Throws
    // SourceError when it cannot.
    virtual void start(SourceContext& context) = 0;
    // Fetches the source's definitions again (SIGHUP, `toolport reload`, POST
    // /admin/reload). Returns at once: the work runs on the executor, and only real changes
    // reach clients (ToolSet). Sources with nothing to fetch ignore it.
    virtual void reload() {}
    // Whether reload() fetches anything (what `toolport reload` reports as reloading).
    virtual bool reloads() const { return false; }
    // Whether a fetch of its definitions is under way or asked for (the runtime's reload
    // counts as running until none of its sources is fetching). Read on the engine's loop.
    virtual bool fetching() const { return false; }
    // Whether the first attempt to load what the source serves in the background is over
    // (a catalog fetched, or failed once). The CLI's in-process commands (`toolport list
    // --config`) wait for it a while, so they see the tools a server would soon serve.
    virtual bool settled() const { return true; }
    // Before the runtime is torn down: ends background work. The tools stay registered
    // (the server goes away with them).
    virtual void stop() {}
};

}  // namespace toolport::providers
