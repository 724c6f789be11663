#include "pipeline/stages/meta_accounting.hpp"

#include "pipeline/result_size.hpp"
#include "server/tool_error.hpp"

namespace toolport::pipeline {

long long MetaAccounting::tokens_estimate(std::size_t chars) {
    // Integer form of ceil(chars / 4 * 1.1) = ceil(chars * 11 / 40), exact for any size.
    return static_cast<long long>((chars * 11 + 39) / 40);
}

namespace {

// meta[key] = value, without the key string operator[] builds for every lookup (nlohmann's
// object map compares transparently): a found member is overwritten, a new one goes where
// the lookup ended. Every call writes five members (measured: ~2,200 instructions by
// operator[]).
template <typename Value>
void set_member(Json::object_t& members, std::string_view key, Value&& value) {
    auto it = members.lower_bound(key);
    if (it != members.end() && it->first == key) {
        it->second = std::forward<Value>(value);
    } else {
        members.emplace_hint(it, std::string(key), std::forward<Value>(value));
    }
}

}  // namespace

Task<ToolResult> MetaAccounting::handle(Call& call, const Next& next) {
    ToolResult result = unassigned_result();
    try {
        result = co_await next(call);
    } catch (const ToolError& e) {
        // Account for refusals and failures too (they are the calls an agent retries).
        result = call.tool->error_result(e);
    }
    // Sizes are of the result as the client gets it, without its _meta (not the model's to
    // read, and a gateway's upstream has put its own accounting there).
    const std::size_t size = result_size_without_meta(result);
    // Filled in place: a copy of the source's _meta would only be thrown away.
    if (!result.meta.is_object()) result.meta = Json::object();
    auto& meta = result.meta.get_ref<Json::object_t&>();
    // Written in key order (the map's), so that each new member goes in after one comparison.
    set_member(meta, "cache_status", std::string(to_string(call.cache_status)));
    // A source may report its own count in _meta (the downstream contract); a stage that
    // knows better (a cache hit: none) overrides it.
    // A call that failed after sending requests counts them too (from the pacing).
    if (call.downstream_api_calls) {
        set_member(meta, "downstream_api_calls", *call.downstream_api_calls);
    } else if (auto reported = meta.find(std::string_view("downstream_api_calls"));
               reported == meta.end() || !reported->second.is_number_integer()) {
        set_member(meta, "downstream_api_calls", call.ctx.downstream_requests());
    }
    set_member(meta, "duration_ms",
               std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - call.started).count());
    set_member(meta, "response_size_bytes", size);
    set_member(meta, "tokens_estimate", tokens_estimate(size));
    co_return result;
}

}  // namespace toolport::pipeline
