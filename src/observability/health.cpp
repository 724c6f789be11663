#include "observability/health.hpp"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "observability/iso_time.hpp"
#include "toolport_version.hpp"
#include "util/sanitize.hpp"

namespace toolport::observability {

namespace {

// Taken while the program's statics are initialised, before main(): the process start,
// as far as uptime is concerned.
const auto kProcessStart = std::chrono::steady_clock::now();

std::string_view status_name(Severity severity) {
    switch (severity) {
        case Severity::ok: return "healthy";
        case Severity::degraded: return "degraded";
        case Severity::unhealthy: return "unhealthy";
    }
    return "unhealthy";
}

ComponentHealth run_probe(const std::string& name, const HealthRegistry::Probe& probe) {
    try {
        return probe();
    } catch (const std::exception& e) {
        spdlog::warn("health probe {} failed: {}", name, util::sanitize_for_message(e.what()));
    } catch (...) {
        spdlog::warn("health probe {} failed with a non-standard exception", name);
    }
    return {"error", Severity::unhealthy};
}

}  // namespace

namespace {

// Registers (or replaces) `name`'s probe in `probes`.
void put(std::vector<std::pair<std::string, HealthRegistry::Probe>>& probes, std::string name,
         HealthRegistry::Probe probe) {
    for (auto& [existing, p] : probes) {
        if (existing == name) {
            p = std::move(probe);
            return;
        }
    }
    probes.emplace_back(std::move(name), std::move(probe));
}

}  // namespace

void HealthRegistry::add(std::string name, Probe probe) {
    std::lock_guard lock(mutex_);
    put(probes_, std::move(name), std::move(probe));
}

void HealthRegistry::add_breaker(std::string name, Probe probe) {
    std::lock_guard lock(mutex_);
    put(breakers_, std::move(name), std::move(probe));
}

void HealthRegistry::remove(const std::string& name) {
    std::lock_guard lock(mutex_);
    std::erase_if(probes_, [&](const auto& entry) { return entry.first == name; });
}

bool HealthRegistry::contains(const std::string& name) const {
    std::lock_guard lock(mutex_);
    const auto named = [&](const auto& entry) { return entry.first == name; };
    return std::any_of(probes_.begin(), probes_.end(), named) || std::any_of(breakers_.begin(), breakers_.end(), named);
}

std::vector<std::pair<std::string, ComponentHealth>> HealthRegistry::components() const {
    // Copied so that the probes run without the lock: a slow probe does not hold up
    // add()/remove(), and a probe that calls them does not deadlock.
    std::vector<std::pair<std::string, Probe>> probes, breakers;
    {
        std::lock_guard lock(mutex_);
        probes = probes_;
        breakers = breakers_;
    }
    const auto evaluate = [](const std::string& name, const Probe& probe) {
        return probe ? run_probe(name, probe) : ComponentHealth{"error", Severity::unhealthy};
    };
    std::vector<std::pair<std::string, ComponentHealth>> out;
    out.reserve(probes.size() + breakers.size());
    for (const auto& entry : probes) {
        const std::string& name = entry.first;
        ComponentHealth health = evaluate(name, entry.second);
        auto breaker = std::find_if(breakers.begin(), breakers.end(), [&](const auto& b) { return b.first == name; });
        if (breaker != breakers.end()) {
            // One state for the source and its service: a closed breaker adds nothing, an
            // open one is the news unless the source is worse off already.
            ComponentHealth service = evaluate(name, breaker->second);
            if (service.severity != Severity::ok && service.severity >= health.severity) health = service;
            breakers.erase(breaker);
        }
        out.emplace_back(name, std::move(health));
    }
    for (const auto& [name, probe] : breakers) out.emplace_back(name, evaluate(name, probe));
    return out;
}

nlohmann::json HealthRegistry::report() const {
    Severity worst = Severity::ok;
    nlohmann::json services = nlohmann::json::object();
    for (auto& [name, health] : components()) {
        worst = std::max(worst, health.severity);
        services[name] = std::move(health.state);
    }
    auto uptime = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - kProcessStart);
    return {
        {"status", status_name(worst)},    {"timestamp", iso8601_utc(std::chrono::system_clock::now(), false)},
        {"version", kToolportVersion},     {"uptime_s", uptime.count()},
        {"services", std::move(services)},
    };
}

int HealthRegistry::http_status_of(const nlohmann::json& report) {
    auto it = report.find("status");
    return it != report.end() && it->is_string() && *it == "unhealthy" ? 503 : 200;
}

int HealthRegistry::http_status() const { return http_status_of(report()); }

std::pair<int, std::string> HealthRegistry::http_response() const {
    auto r = report();
    // Probe states are free text: replace invalid UTF-8 rather than fail to serialise.
    return {http_status_of(r), r.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)};
}

}  // namespace toolport::observability
