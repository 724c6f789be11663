// Registry: the catalogue of tools, resources, resource templates and prompts a server
// offers. Providers (built-in packs, REST catalogs, upstream MCP servers) add and remove
// entries at any time; every change is reported to listeners so sessions can send
// notifications/*/list_changed.
//
// Lists are kept in name (or URI) order so tools/list is deterministic, which keeps
// clients' prompt caches warm (a 2026-07-28 recommendation) and makes cursors stable.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "async/task.hpp"
#include "server/content.hpp"

namespace toolport {

class RequestContext;
class ToolError;
class UriTemplate;
namespace schema {
class CompiledSchema;
}

using ToolHandler = std::function<Task<ToolResult>(RequestContext&, const Json& arguments)>;
// Returns the `contents` array of a ReadResourceResult.
using ResourceReader = std::function<Task<Json>(RequestContext&, const std::string& uri, const Json& variables)>;
// Returns a GetPromptResult (`description?`, `messages`).
using PromptHandler = std::function<Task<Json>(RequestContext&, const Json& arguments)>;
// Returns the `completion` object ({values, total?, hasMore?}) for one argument.
using Completer = std::function<Task<Json>(RequestContext&, const std::string& argument, const std::string& value,
                                           const Json& context_arguments)>;

struct ToolSpec {
    std::string name;
    std::string title;
    std::string description;
    Json input_schema = Json{{"type", "object"}};
    Json output_schema;  // null when the tool has no structured output
    Json annotations;    // {title?, readOnlyHint?, destructiveHint?, idempotentHint?, openWorldHint?}
    Json icons;          // [{src, mimeType?, sizes?}]
    Json meta;           // _meta
    Json execution;      // {taskSupport?}
    ToolHandler handler;
    // Which provider registered the tool (a pack's or catalog's name, an upstream server's
    // id): per-source pipeline settings apply to it. Not sent to clients.
    std::string source;
    // The downstream service the tool calls (rate limits and circuit breakers are per
    // service); empty for tools that call nothing outside the process. Configuration may
    // assign one. Not sent to clients.
    std::string service;
    // input_schema compiled when the tool was declared (providers/tool_declaration.hpp),
    // so a schema that cannot compile is reported at start; null: the validation stage
    // compiles it on first use (tools of upstream servers, tests).
    std::shared_ptr<const schema::CompiledSchema> compiled_input_schema;
    // output_schema compiled when the tool was declared (null: compiled when needed). The
    // engine checks an error result's structuredContent against it (error_result_guard.hpp).
    std::shared_ptr<const schema::CompiledSchema> compiled_output_schema;
    // Arguments the inputSchema does not name are refused (INVALID_ARGUMENT naming them and
    // the closest accepted name) even where the schema would allow them: every tool of a
    // pack Toolport owns, and of a source configured with `strict_arguments: true`. Without
    // it, the schema decides (additionalProperties: false refuses, with the same error).
    bool strict_arguments = false;
    // Adjusts a result served from the cache, e.g. a source's own envelope that says
    // whether the answer was cached (execution.cached). Optional.
    std::function<void(ToolResult& result)> on_cache_hit;
    // Renders a failure the tool did not produce itself (arguments refused by the schema,
    // a timeout, a budget) in the tool's own result shape, e.g. a source's envelope.
    // Optional: without it the failure is ToolError::to_result().
    std::function<ToolResult(const ToolError& error)> on_error;
    // The handler calls RequestContext::pace_downstream_request before each request it
    // sends: the rate limit stage then takes no slot up front, so a call refused by the
    // handler's own checks costs no slot and waits for none.
    bool paces_downstream = false;

    Json definition() const;  // the Tool object for tools/list
    // `error` as this tool's result (on_error, else the standard error result), never with
    // structuredContent that breaks the outputSchema (error_result_guard.hpp).
    ToolResult error_result(const ToolError& error) const;
};

struct ResourceSpec {
    std::string uri;
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    std::optional<long long> size;
    Json annotations;
    Json icons;
    ResourceReader reader;
    // Which provider registered it (as ToolSpec::source): views and scopes judge it by
    // its source (McpServer::visible). Empty: the server's own, served to every caller.
    std::string source;

    Json definition() const;
};

struct ResourceTemplateSpec {
    std::string uri_template;  // RFC 6570, levels 1 to 4 (server/uri_template.hpp)
    std::string name;
    std::string title;
    std::string description;
    std::string mime_type;
    Json annotations;
    Json icons;
    ResourceReader reader;
    Completer completer;  // optional: completion/complete for template variables
    std::string source;   // as ResourceSpec::source
    // uri_template parsed once, by Registry::add_resource_template; match() parses
    // uri_template itself when this is absent or was parsed from another pattern.
    std::shared_ptr<const UriTemplate> parsed_template;

    Json definition() const;
    // Matches `uri` against the template; returns the variables on success.
    std::optional<Json> match(const std::string& uri) const;
};

struct PromptSpec {
    struct Argument {
        std::string name;
        std::string title;
        std::string description;
        bool required = false;
    };
    std::string name;
    std::string title;
    std::string description;
    std::vector<Argument> arguments;
    Json icons;
    PromptHandler handler;
    Completer completer;  // optional: completion/complete for prompt arguments
    std::string source;   // as ResourceSpec::source

    Json definition() const;
};

enum class CatalogKind { tools, resources, prompts };

// What one change (or one batch of changes) of a kind touched: every entry added, replaced
// (the old and the new one) or removed. A listener tells from it who could see the change,
// so a client never hears of a list_changed that concerns only what it cannot see.
struct CatalogChange {
    CatalogKind kind = CatalogKind::tools;
    std::vector<std::shared_ptr<const ToolSpec>> tools;
    std::vector<std::shared_ptr<const ResourceSpec>> resources;
    std::vector<std::shared_ptr<const ResourceTemplateSpec>> templates;
    std::vector<std::shared_ptr<const PromptSpec>> prompts;
};

class Registry {
public:
    using Listener = std::function<void(CatalogKind)>;
    using ChangeListener = std::function<void(const CatalogChange&)>;

    // Adding an entry with an existing name replaces it.
    void add_tool(ToolSpec spec);
    bool remove_tool(const std::string& name);
    void add_resource(ResourceSpec spec);
    bool remove_resource(const std::string& uri);
    void add_resource_template(ResourceTemplateSpec spec);
    bool remove_resource_template(const std::string& uri_template);
    void add_prompt(PromptSpec spec);
    bool remove_prompt(const std::string& name);

    const ToolSpec* find_tool(const std::string& name) const;
    const ResourceSpec* find_resource(const std::string& uri) const;
    // The first template (in registration order) whose pattern matches, with its variables.
    std::optional<std::pair<std::shared_ptr<const ResourceTemplateSpec>, Json>> match_template(
        const std::string& uri) const;
    // The same among the templates `accept` takes (those a caller may see).
    std::optional<std::pair<std::shared_ptr<const ResourceTemplateSpec>, Json>> match_template(
        const std::string& uri, const std::function<bool(const ResourceTemplateSpec&)>& accept) const;
    const ResourceTemplateSpec* find_template(const std::string& uri_template) const;
    const PromptSpec* find_prompt(const std::string& name) const;

    // Ordered views for the list methods. The shared_ptr keeps an entry alive while a
    // call that found it is still running, even if a provider removes it meanwhile.
    const std::map<std::string, std::shared_ptr<const ToolSpec>>& tools() const { return tools_; }
    const std::map<std::string, std::shared_ptr<const ResourceSpec>>& resources() const { return resources_; }
    const std::vector<std::shared_ptr<const ResourceTemplateSpec>>& resource_templates() const { return templates_; }
    const std::map<std::string, std::shared_ptr<const PromptSpec>>& prompts() const { return prompts_; }

    std::shared_ptr<const ToolSpec> tool_ptr(const std::string& name) const;

    // Listeners run after every change. Returns an id for remove_listener.
    int add_listener(Listener listener);
    // The same, told what changed.
    int add_change_listener(ChangeListener listener);
    void remove_listener(int id);

    // Sends each change to listeners once after `fn` returns (a provider loading many tools
    // at start-up causes one list_changed, not hundreds).
    void batch(const std::function<void()>& fn);

private:
    void changed(CatalogChange change);

    std::map<std::string, std::shared_ptr<const ToolSpec>> tools_;
    std::map<std::string, std::shared_ptr<const ResourceSpec>> resources_;
    std::vector<std::shared_ptr<const ResourceTemplateSpec>> templates_;
    std::map<std::string, std::shared_ptr<const PromptSpec>> prompts_;
    std::map<int, ChangeListener> listeners_;
    int next_listener_ = 0;
    int batch_depth_ = 0;
    // Per kind, what the running batch changed (announced once when it ends).
    std::optional<CatalogChange> pending_[3];
};

}  // namespace toolport
