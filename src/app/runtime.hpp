// Runtime: the server as the configuration describes it, ready for a transport: the
// event loop's executor, the shared stores, the call pipeline with its stages, the MCP
// server with its sources (packs). `toolport serve` puts a transport in front of it; the CLI
// client's in-process mode (`toolport list --config FILE`) talks to it directly.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "app/config.hpp"
#include "observability/health.hpp"
#include "pipeline/pipeline.hpp"
#include "providers/source_table.hpp"
#include "server/server.hpp"
#include "stores/stores.hpp"

namespace toolport {

class AsioExecutor;
class Executor;
namespace http_client {
class HttpClient;
}

class Runtime {
public:
    // Throws ConfigError (unknown pack, a pack that cannot start, bad store URL, ...).
    // On a network event loop the runtime has the downstream HTTP client sources need to
    // call web APIs; on any other executor (unit tests) it has none.
    Runtime(const Config& config, AsioExecutor& executor);
    Runtime(const Config& config, Executor& executor);
    ~Runtime();
    // Ends every source's background work now (upstream processes killed and reaped), for
    // a shutdown that will not run the destructors (serve --stdio exits at once on a
    // signal).
    void stop_sources();
    Runtime(const Runtime&) = delete;
    Runtime& operator=(const Runtime&) = delete;

    McpServer& server() { return *server_; }
    pipeline::Pipeline& pipeline() { return pipeline_; }
    stores::Stores& stores() { return *stores_; }
    // What GET /health reports: a "server" probe, plus one per store and downstream service.
    observability::HealthRegistry& health() { return health_; }
    // Asks the sources that fetch definitions (REST catalogs, OpenAPI documents) to fetch
    // them again; returns at once with their names. SIGHUP, POST /admin/reload.
    std::vector<std::string> reload();
    // The names reload() would report, without reloading (safe from any thread: the
    // sources do not change after start).
    std::vector<std::string> reloading_sources() const;
    // Every source has settled (Source::settled): its first background load is over.
    bool sources_settled();
    // The downstream HTTP client (on the network event loop), or null on another executor.
    http_client::HttpClient* downstream() { return downstream_.get(); }

private:
    Runtime(const Config& config, Executor& executor, AsioExecutor* network);

    observability::HealthRegistry health_;
    std::set<std::string> service_probes_;  // the /health components named after a service's breaker
    std::unique_ptr<http_client::HttpClient> downstream_;  // before the sources that use it
    // In dependency order: the stages use the stores, the server's tool invoker points
    // into the pipeline.
    std::unique_ptr<stores::Stores> stores_;
    pipeline::Pipeline pipeline_;
    std::unique_ptr<McpServer> server_;
    // After the server: stopped and destroyed before it.
    std::vector<providers::RunningSource> sources_;
};

}  // namespace toolport
