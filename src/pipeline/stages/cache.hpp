// CacheStage ("cache"): cache-aside for successful tool results, in the shared CacheStore
// (process memory, or Redis shared by replicas). The key is the tool's source and name +
// SHA-256 of the canonical (sorted-key) JSON of the arguments [+ the caller's identity
// when the policy says results are per user]. TTL per tool (default 300 s).
//
// Which tools: by default those whose annotations say readOnlyHint: true (caching a tool
// with side effects would skip the side effect); `cache.mode: all | off` and a per-tool
// `cache.enabled` change that. The sources Toolport does not own (REST catalogs, OpenAPI
// documents, gateway upstreams) default to off, and to per-user keys. A caller skips the
// cache for one call (and refreshes it) with `_meta: {"toolport/cache": "bypass"}` in the
// tools/call params.
//
// Freshness: a call of a tool that is not read-only (it may change what the source's
// reads answer: createItem after listItems) starts a new generation of its source's
// entries in the store (CacheStore::invalidate), which every replica sharing the store
// sees; the generation is part of every key. A per-user result for a caller with no
// identity (no token, no session) is not cached at all.
#pragma once

#include <array>

#include "observability/metrics.hpp"
#include "pipeline/pipeline.hpp"
#include "stores/cache_store.hpp"

namespace toolport::pipeline {

class CacheStage final : public Stage {
public:
    static constexpr const char* kBypassMetaKey = "toolport/cache";

    explicit CacheStage(stores::CacheStore& store) : store_(store) {}
    std::string_view name() const override { return "cache"; }
    Task<ToolResult> handle(Call& call, const Next& next) override;

    static bool cacheable(const ToolSpec& tool, const CachePolicy& policy);
    // `generation`: the source's (CacheStore::generation); empty: none.
    static std::string key(const Call& call, const std::string& generation = {});

private:
    enum class Outcome { hit, miss, bypass };
    void count(const Call& call, Outcome outcome);

    stores::CacheStore& store_;
    // toolport_cache_requests_total by tool, one series per outcome, resolved once per tool.
    observability::HandleCache<std::array<observability::Counter, 3>> counters_;
    // toolport_cache_invalidations_total by source.
    observability::HandleCache<observability::Counter> invalidations_;
};

}  // namespace toolport::pipeline
