// The call pipeline: every tools/call, whatever its source (built-in pack, REST catalog,
// upstream MCP server), passes through the same ordered chain of stages before and after
// the tool's handler: validation, cache, rate limits, timeouts, budgets, breakers, size
// caps, accounting. A stage is a small class with one method; configuration decides which
// stages run, in what order, per tool or per source.
//
//   Pipeline p;
//   p.add(std::make_shared<MetaAccounting>());
//   server.set_tool_invoker(p.invoker());
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/server.hpp"

namespace toolport::pipeline {

// Whether a result came from the cache (reported in result._meta.cache_status).
enum class CacheStatus { hit, miss, partial, bypass };
std::string_view to_string(CacheStatus status);

// One tool call on its way through the stages.
struct Call {
    RequestContext& ctx;
    std::shared_ptr<const ToolSpec> tool;
    const Json& arguments;
    // The downstream service the tool talks to (rate limits and breakers are per service);
    // empty for tools that call nothing outside the process.
    std::string service;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    // Accounting filled in by stages and sources, reported in result._meta.
    std::optional<int> downstream_api_calls;
    CacheStatus cache_status = CacheStatus::bypass;
};

using Next = std::function<Task<ToolResult>(Call&)>;

class Stage {
public:
    virtual ~Stage() = default;
    virtual std::string_view name() const = 0;
    // Does its part and calls `next` (or answers without it: a cache hit, a refusal).
    virtual Task<ToolResult> handle(Call& call, const Next& next) = 0;
};

class Pipeline {
public:
    // Stages run in the order they are added; the tool's handler runs last.
    void add(std::shared_ptr<Stage> stage) { stages_.push_back(std::move(stage)); }
    const std::vector<std::shared_ptr<Stage>>& stages() const { return stages_; }

    Task<ToolResult> run(Call& call) const;
    // The McpServer hook that sends every tools/call through this pipeline. The pipeline
    // must outlive the server's use of it.
    ToolInvoker invoker() const;

private:
    Task<ToolResult> run_from(std::size_t index, Call& call) const;
    std::vector<std::shared_ptr<Stage>> stages_;
};

}  // namespace toolport::pipeline
