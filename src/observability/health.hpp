// Health: what GET /health reports. Components (stores, downstream services' breakers)
// register a probe; the report aggregates them:
//   {status: healthy|degraded|unhealthy, timestamp, version, uptime_s,
//    services: {<name>: reachable|unreachable|open-circuit|degraded|available|...}}
// HTTP 200 for healthy and degraded, 503 for unhealthy.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::observability {

enum class Severity { ok, degraded, unhealthy };

struct ComponentHealth {
    std::string state;  // what the report shows, e.g. "reachable", "open-circuit"
    Severity severity = Severity::ok;
};

class HealthRegistry {
public:
    using Probe = std::function<ComponentHealth()>;
    // Registers (or replaces) the probe for `name`.
    void add(std::string name, Probe probe);
    void remove(const std::string& name);
    // The report and the HTTP status it goes with.
    nlohmann::json report() const;
    int http_status() const;

private:
    std::vector<std::pair<std::string, Probe>> probes_;
};

}  // namespace toolport::observability
