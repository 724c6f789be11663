// Health: what GET /health reports. Components (stores, downstream services' breakers)
// register a probe; the report aggregates them:
//   {status: healthy|degraded|unhealthy, timestamp, version, uptime_s,
//    services: {<name>: reachable|unreachable|open-circuit|degraded|available|...}}
// HTTP 200 for healthy and degraded, 503 for unhealthy.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::observability {

enum class Severity { ok, degraded, unhealthy };

struct ComponentHealth {
    std::string state;  // what the report shows, e.g. "reachable", "open-circuit"
    Severity severity = Severity::ok;
};

// Thread-safe. Probes run outside the registry's lock (a probe may add or remove probes);
// a probe that throws shows as {state: "error", severity: unhealthy}.
class HealthRegistry {
public:
    using Probe = std::function<ComponentHealth()>;
    // Registers (or replaces) the probe for `name`.
    void add(std::string name, Probe probe);
    // A downstream service's circuit breaker. Where a component has the same name (a REST
    // catalog, an OpenAPI document, a gateway upstream: the source and the service it calls
    // are one thing to an operator), the report shows one state for both: the breaker's
    // when it is the worse or equally bad and not closed, the component's otherwise.
    // Alone, it is a component of its own.
    void add_breaker(std::string name, Probe probe);
    void remove(const std::string& name);
    bool contains(const std::string& name) const;
    // Every component's state now, one per name (a source and its breaker as one, as in
    // the report), in the order they were added.
    std::vector<std::pair<std::string, ComponentHealth>> components() const;
    // The report and the HTTP status it goes with.
    nlohmann::json report() const;
    int http_status() const;

    // The HTTP status that goes with a report: 503 when unhealthy, 200 otherwise.
    static int http_status_of(const nlohmann::json& report);
    // One evaluation of the probes as what GET /health answers: status and JSON body
    // (report() and http_status() separately would run every probe twice).
    std::pair<int, std::string> http_response() const;

private:
    mutable std::mutex mutex_;
    std::vector<std::pair<std::string, Probe>> probes_;
    std::vector<std::pair<std::string, Probe>> breakers_;
};

}  // namespace toolport::observability
