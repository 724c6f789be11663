// GET api/overview: every source with one state, its breaker, last error, tools and its
// calls over the last hour (observability/call_series.hpp), the totals, rate-limit
// pressure and the server itself (docs/console.md has the JSON).
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "observability/call_series.hpp"
#include "observability/health.hpp"
#include "util/json.hpp"

namespace toolport {
class McpServer;
}

namespace toolport::console {

// A source as the application knows it: its name and kind (pack, rest, openapi, upstream).
struct SourceInfo {
    std::string name;
    std::string kind;
};

// A downstream service's circuit breaker: closed, open or half_open, and its last error.
struct BreakerInfo {
    std::string service;
    std::string state;
    std::string last_error;
};

// A service's rate limit (token bucket rate, calls a second).
struct RateLimitInfo {
    std::string service;
    double rate_per_s = 0;
};

// What the overview reads, handed over by the application (app/console_setup.cpp).
struct OverviewSources {
    std::string name;       // serverInfo.name
    std::string version;    // Toolport's
    std::string transport;  // "http"
    std::string replica;    // this process (host:pid)
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    McpServer* server = nullptr;
    const observability::HealthRegistry* health = nullptr;
    const observability::CallStats* stats = &observability::call_stats();
    std::function<std::vector<SourceInfo>()> sources;
    std::function<std::vector<BreakerInfo>()> breakers;
    std::function<std::vector<RateLimitInfo>()> rate_limits;
    // The sources whose changed tool definitions their pinning policy withholds until an
    // operator approves them (quarantine, block-source): shown as quarantined.
    std::function<std::set<std::string>()> quarantined;
    // The replicas seen ([{id, self, last_seen_s, ...}]); unset: this one alone.
    std::function<Json()> replicas;
};

// One state for a source from its health component (if it has one) and its breaker:
// down (unhealthy, disconnected, stopped, the breaker open), degraded (loading, connecting,
// half-open), healthy otherwise.
std::string source_state(const std::optional<observability::ComponentHealth>& health, const std::string& breaker);

// The numbers and series of a run of steps (oldest first) ending at `end_unix`.
Json series_json(const std::vector<observability::StepCounts>& steps, long long end_unix);
// calls_per_s, p50_ms, p99_ms and error_rate over the last minute of `steps`, into `out`.
void recent_numbers(const std::vector<observability::StepCounts>& steps, Json& out);

Json overview_json(const OverviewSources& in);

}  // namespace toolport::console
