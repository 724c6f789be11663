#include "pipeline/stages/cache.hpp"

#include "observability/metrics.hpp"
#include "pipeline/stages/rate_limit.hpp"
#include "util/digest.hpp"

namespace toolport::pipeline {

namespace {

bool read_only(const ToolSpec& tool) {
    if (!tool.annotations.is_object()) return false;
    auto hint = tool.annotations.find("readOnlyHint");
    return hint != tool.annotations.end() && hint->is_boolean() && hint->get<bool>();
}

bool bypass_requested(const RequestContext& ctx) {
    const Json* meta = ctx.meta();
    if (!meta) return false;
    auto flag = meta->find(CacheStage::kBypassMetaKey);
    return flag != meta->end() && flag->is_string() && *flag == "bypass";
}

}  // namespace

void CacheStage::count(const Call& call, Outcome outcome) {
    static constexpr const char* kNames[] = {"hit", "miss", "bypass"};
    const auto index = static_cast<std::size_t>(outcome);
    const std::string& tool = call.tool->name;
    // Each series is made on its first use, as before: /metrics shows no outcome that
    // never happened.
    auto& counter = counters_.get(tool, [] { return std::array<observability::Counter, 3>{}; })[index];
    if (!counter) {
        counter = observability::metrics().counter("toolport_cache_requests_total",
                                                   {{"tool", tool}, {"result", kNames[index]}});
    }
    counter.increment();
    // On the request's span too (tracing on): where the result came from.
    static constexpr std::string_view kEvents[] = {"cache.hit", "cache.miss", "cache.bypass"};
    if (auto& span = call.ctx.span(); span.recording()) span.add_event(kEvents[index]);
}

bool CacheStage::cacheable(const ToolSpec& tool, const CachePolicy& policy) {
    if (policy.enabled) return *policy.enabled;
    switch (policy.mode) {
        case CacheMode::off: return false;
        case CacheMode::all: return true;
        case CacheMode::read_only: return read_only(tool);
    }
    return false;
}

std::string CacheStage::key(const Call& call, const std::string& generation) {
    // nlohmann's objects are ordered maps, so dump() is the canonical sorted-key form.
    std::string canonical = call.arguments.dump(-1, ' ', false, Json::error_handler_t::replace);
    const std::string digest = util::sha256_hex(canonical);
    // One allocation for the key instead of one per concatenation.
    std::string key;
    key.reserve(6 + call.tool->source.size() + 1 + call.tool->name.size() + 1 + digest.size());
    key.append("cache:").append(call.tool->source).append(":");
    if (!generation.empty()) key.append("g").append(generation).append(":");
    key.append(call.tool->name).append(":").append(digest);
    if (call.policy->cache.per_user) {
        auto identity = ClientQuotaStage::client_identity(call.ctx.caller());
        key += ":" + (identity.empty() ? std::string("anonymous") : identity);
    }
    // Credentials the client sent in headers (a per-user API key) may change the answer:
    // one cache per set of them, keyed by their digest, never by the values.
    const auto& headers = call.ctx.caller().client_headers;
    if (!headers.empty()) {
        std::string credentials;
        for (const auto& [name, value] : headers)
            credentials.append(name).append(1, '\0').append(value).append(1, '\0');
        key += ":h" + util::sha256_hex(credentials).substr(0, 24);
    }
    return key;
}

Task<ToolResult> CacheStage::handle(Call& call, const Next& next) {
    if (!cacheable(*call.tool, call.policy->cache)) {
        if (read_only(*call.tool)) co_return co_await next(call);
        // It may change what its source's reads answer: their cached results are stale
        // once it has run (or failed half-way), on every replica.
        ToolResult result = unassigned_result();
        std::exception_ptr failure;
        try {
            result = co_await next(call);
        } catch (...) {
            failure = std::current_exception();
        }
        co_await store_.invalidate(call.tool->source);
        invalidations_
            .get(call.tool->source,
                 [&] {
                     return observability::metrics().counter("toolport_cache_invalidations_total",
                                                             {{"source", call.tool->source}});
                 })
            .increment();
        if (failure) std::rethrow_exception(failure);
        co_return result;
    }
    // Results per user, and no user to key them by: not shared with anyone, not cached.
    if (call.policy->cache.per_user && ClientQuotaStage::client_identity(call.ctx.caller()).empty()) {
        co_return co_await next(call);
    }

    const std::string k = key(call, co_await store_.generation(call.tool->source));
    const bool bypass = bypass_requested(call.ctx);
    if (!bypass) {
        if (auto cached = co_await store_.get(k)) {
            try {
                ToolResult result = ToolResult::from_json(Json::parse(*cached));
                if (call.tool->on_cache_hit) call.tool->on_cache_hit(result);
                call.cache_status = CacheStatus::hit;
                call.downstream_api_calls = 0;
                count(call, Outcome::hit);
                co_return result;
            } catch (const std::exception&) {
                // An entry we cannot read (another version wrote it): treat as a miss.
            }
        }
        call.cache_status = CacheStatus::miss;
        count(call, Outcome::miss);
    } else {
        call.cache_status = CacheStatus::bypass;
        count(call, Outcome::bypass);
    }

    ToolResult result = co_await next(call);
    if (!result.is_error) {
        // Serialized from the parts: building to_json() first would copy the whole result.
        co_await store_.put(k, result.dump(),
                            std::chrono::duration_cast<std::chrono::milliseconds>(call.policy->cache.ttl));
    }
    co_return result;
}

}  // namespace toolport::pipeline
