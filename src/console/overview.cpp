#include "console/overview.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "server/server.hpp"

namespace toolport::console {

namespace {

using observability::CallSeries;
using observability::LatencyBins;
using observability::Severity;
using observability::StepCounts;

constexpr int kRecentSteps = 60 / CallSeries::kStepSeconds;  // the last minute

bool starts_with(const std::string& text, std::string_view prefix) { return text.rfind(prefix, 0) == 0; }

Json optional_ms(const std::optional<double>& ms) {
    if (!ms) return nullptr;
    return std::round(*ms * 1000.0) / 1000.0;
}

// Budget pressure: the highest share of its budget a request reached in the last minute
// and the calls refused in the last hour; null when no budget was kept in the last hour.
Json budgets_json(const OverviewSources& in, std::int64_t step) {
    if (!in.stats) return nullptr;
    const auto reading = in.stats->budgets().read(step);
    if (!reading.any) return nullptr;
    return {{"peak", std::round(reading.peak * 1000.0) / 1000.0}, {"refused_last_hour", reading.refused}};
}

}  // namespace

std::string source_state(const std::optional<observability::ComponentHealth>& health, const std::string& breaker) {
    if (breaker == "open") return "down";
    if (health) {
        if (health->severity == Severity::unhealthy) return "down";
        if (health->severity == Severity::degraded) {
            // Not serving at all, as opposed to serving less well.
            for (std::string_view gone : {"reconnecting", "stopped", "unreachable", "open-circuit", "failed", "error"}) {
                if (starts_with(health->state, gone)) return "down";
            }
            return "degraded";
        }
    }
    if (breaker == "half_open") return "degraded";
    return "healthy";
}

Json series_json(const std::vector<StepCounts>& steps, long long end_unix) {
    Json calls = Json::array(), errors = Json::array(), p50 = Json::array(), p99 = Json::array();
    for (const auto& s : steps) {
        calls.push_back(s.calls);
        errors.push_back(s.errors);
        p50.push_back(optional_ms(LatencyBins::quantile(s.latency, 0.5)));
        p99.push_back(optional_ms(LatencyBins::quantile(s.latency, 0.99)));
    }
    return {{"step_s", CallSeries::kStepSeconds}, {"end", end_unix},          {"calls", std::move(calls)},
            {"errors", std::move(errors)},        {"p50_ms", std::move(p50)}, {"p99_ms", std::move(p99)}};
}

void recent_numbers(const std::vector<StepCounts>& steps, Json& out) {
    StepCounts recent;
    const std::size_t from = steps.size() > kRecentSteps ? steps.size() - kRecentSteps : 0;
    for (std::size_t i = from; i < steps.size(); ++i) recent += steps[i];
    out["calls_per_s"] = std::round(static_cast<double>(recent.calls) / 60.0 * 1000.0) / 1000.0;
    out["p50_ms"] = optional_ms(LatencyBins::quantile(recent.latency, 0.5));
    out["p99_ms"] = optional_ms(LatencyBins::quantile(recent.latency, 0.99));
    out["error_rate"] = recent.calls
                            ? std::round(static_cast<double>(recent.errors) / static_cast<double>(recent.calls) * 1e4) /
                                  1e4
                            : 0.0;
}

Json overview_json(const OverviewSources& in) {
    const auto steady_now = std::chrono::steady_clock::now();
    const auto system_now = std::chrono::system_clock::now();
    const auto step = CallSeries::step_of(steady_now);
    // The series ends where the current step ends, in Unix seconds.
    const auto steady_s = std::chrono::duration_cast<std::chrono::milliseconds>(steady_now.time_since_epoch()).count();
    const auto system_s = std::chrono::duration_cast<std::chrono::milliseconds>(system_now.time_since_epoch()).count();
    const long long end_unix = (system_s + (step + 1) * CallSeries::kStepSeconds * 1000 - steady_s) / 1000;

    // Every source: those the application started, and any other a tool names.
    std::vector<SourceInfo> sources = in.sources ? in.sources() : std::vector<SourceInfo>{};
    std::map<std::string, long long> tools;
    if (in.server) {
        for (const auto& [name, tool] : in.server->registry().tools()) {
            if (!tool->source.empty()) ++tools[tool->source];
        }
    }
    std::set<std::string> known;
    for (const auto& s : sources) known.insert(s.name);
    for (const auto& [name, count] : tools) {
        if (known.insert(name).second) sources.push_back({name, "upstream"});
    }
    std::map<std::string, observability::ComponentHealth> health;
    if (in.health) {
        for (auto& [name, h] : in.health->components()) health.emplace(name, std::move(h));
    }
    std::map<std::string, BreakerInfo> breakers;
    if (in.breakers) {
        for (auto& b : in.breakers()) breakers.emplace(b.service, std::move(b));
    }

    const std::set<std::string> quarantined = in.quarantined ? in.quarantined() : std::set<std::string>{};
    Json list = Json::array();
    std::vector<StepCounts> total_steps(CallSeries::kSteps);
    for (const auto& source : sources) {
        std::optional<observability::ComponentHealth> h;
        if (auto it = health.find(source.name); it != health.end()) h = it->second;
        auto b = breakers.find(source.name);
        const std::string breaker = b != breakers.end() ? b->second.state : "none";
        std::string state = source_state(h, breaker);
        if (state != "down" && quarantined.count(source.name)) state = "quarantined";
        Json entry = {{"name", source.name},
                      {"kind", source.kind},
                      {"state", std::move(state)},
                      {"breaker", breaker},
                      {"tools", tools.count(source.name) ? tools[source.name] : 0}};
        Json last_error = nullptr;
        if (in.stats) {
            if (auto e = in.stats->last_error(source.name)) {
                last_error = {{"message", e->message},
                              {"at", std::chrono::duration_cast<std::chrono::seconds>(e->at.time_since_epoch()).count()}};
            }
        }
        if (b != breakers.end() && !b->second.last_error.empty() && !last_error.is_null()) {
            last_error["message"] = b->second.last_error;
        }
        entry["last_error"] = std::move(last_error);
        const auto* series = in.stats ? in.stats->find_source(source.name) : nullptr;
        auto steps = series ? series->read(step) : std::vector<StepCounts>(CallSeries::kSteps);
        for (std::size_t i = 0; i < steps.size(); ++i) total_steps[i] += steps[i];
        recent_numbers(steps, entry);
        entry["series"] = series_json(steps, end_unix);
        list.push_back(std::move(entry));
    }
    Json totals = Json::object();
    recent_numbers(total_steps, totals);
    totals["series"] = series_json(total_steps, end_unix);

    Json rate_limits = Json::array();
    if (in.rate_limits) {
        for (const auto& r : in.rate_limits()) {
            if (r.rate_per_s <= 0) continue;
            const auto* series = in.stats ? in.stats->find_service(r.service) : nullptr;
            if (!series && in.stats) series = in.stats->find_source(r.service);
            StepCounts recent;
            if (series) {
                auto steps = series->read(step);
                for (std::size_t i = steps.size() - kRecentSteps; i < steps.size(); ++i) recent += steps[i];
            }
            const double per_s = static_cast<double>(recent.calls) / 60.0;
            rate_limits.push_back(
                {{"name", r.service}, {"pressure", std::round(std::min(1.0, per_s / r.rate_per_s) * 1000.0) / 1000.0}});
        }
    }
    const auto uptime = std::chrono::duration_cast<std::chrono::seconds>(steady_now - in.started).count();
    Json server = {{"name", in.name},
                   {"version", in.version},
                   {"uptime_s", uptime},
                   {"transport", in.transport},
                   {"replicas", in.replicas ? in.replicas()
                                            : Json::array({{{"id", in.replica}, {"self", true}, {"last_seen_s", 0}}})}};
    return {{"server", std::move(server)},
            {"sources", std::move(list)},
            {"totals", std::move(totals)},
            {"budgets", budgets_json(in, step)},
            {"rate_limits", std::move(rate_limits)}};
}

}  // namespace toolport::console
