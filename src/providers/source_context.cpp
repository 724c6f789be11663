#include "providers/source.hpp"

#include "observability/health.hpp"
#include "pipeline/policy.hpp"
#include "protocol/jsonrpc.hpp"
#include "protocol/rpc_error.hpp"
#include "server/server.hpp"
#include "server/tool_error.hpp"

namespace toolport::providers {

namespace {

// The stand-in's answer, thrown from inside the task (as any handler's failure).
Task<ToolResult> refuse(ToolError error) {
    throw error;
    co_return ToolResult{};
}

// The answer of a withheld prompt or template: what it is, why, and how to release it.
Task<Json> refuse_request(std::string kind, std::string name, std::string source, std::string message,
                          std::string suggestion) {
    throw protocol::RpcError(protocol::error_code::kInvalidParams, message,
                             Json{{"quarantined", true},
                                  {"kind", std::move(kind)},
                                  {"name", std::move(name)},
                                  {"source", std::move(source)},
                                  {"suggestion", std::move(suggestion)}});
    co_return Json();
}

}  // namespace

SourceContext::SourceContext(std::string source_name, McpServer& server, SourceServices services)
    : source_name_(std::move(source_name)), server_(server), services_(services) {}

Executor& SourceContext::executor() const { return server_.executor(); }

std::unique_ptr<SourceContext> SourceContext::part(std::string name) const {
    auto context = std::make_unique<SourceContext>(std::move(name), server_, services_);
    context->set_strict_arguments(strict_arguments_);
    if (untrusted_) context->set_untrusted();
    return context;
}

AsioExecutor& SourceContext::network() const {
    if (!services_.network) {
        throw SourceError("source " + source_name_ +
                          " opens network connections, but this runtime has no network event loop");
    }
    return *services_.network;
}

Task<ToolResult> SourceContext::invoke_tool(RequestContext& ctx, const std::shared_ptr<const ToolSpec>& tool,
                                            const Json& arguments) {
    return server_.invoke_tool(ctx, tool, arguments);
}

void SourceContext::add_view(const std::string& name, ViewSpec view, std::vector<std::string> tokens) {
    server_.add_view(name, std::move(view), std::move(tokens));
}

void SourceContext::resource_updated(const std::string& uri) { server_.resource_updated(uri); }

void SourceContext::on_subscription(std::function<void(const std::string& uri, bool subscribed)> listener) {
    server_.add_subscription_listener(std::move(listener));
}
Registry& SourceContext::registry() const { return server_.registry(); }

void SourceContext::forward_client_header(const std::string& name) { server_.forward_client_header(name); }

void SourceContext::add_extension(const std::string& id, Json settings, std::map<std::string, ExtensionMethod> methods) {
    server_.add_extension(id, std::move(settings), std::move(methods), source_name_);
}

std::optional<ExtensionMethod> SourceContext::extension_method(const std::string& method) const {
    const ExtensionMethod* found = server_.extension_method(method);
    if (!found) return std::nullopt;
    return *found;
}

bool SourceContext::source_visible(const CallerIdentity& caller, const std::string& source) const {
    return server_.source_visible(caller, source);
}

void SourceContext::add_tool(ToolDeclaration declaration) {
    // `tools: {<name>: {task_support: ...}}` replaces what the tool declares itself.
    if (services_.policies) {
        const auto& tools = services_.policies->config().tools;
        if (auto it = tools.find(declaration.name); it != tools.end() && it->second.task_support) {
            Json& execution = declaration.execution;
            if (!execution.is_object()) execution = Json::object();
            if (*it->second.task_support == "forbidden") execution.erase("taskSupport");
            else execution["taskSupport"] = *it->second.task_support;
            if (execution.empty()) execution = Json();
        }
    }
    ToolSpec spec = make_tool_spec(std::move(declaration), source_name_);
    spec.strict_arguments = strict_arguments_;
    registry().add_tool(std::move(spec));
}

bool SourceContext::remove_tool(const std::string& name) {
    // Only this source's own tools: a name another source registered is not ours to drop.
    auto tool = registry().tool_ptr(name);
    if (!tool || tool->source != source_name_) return false;
    return registry().remove_tool(name);
}

void SourceContext::withhold_tool(const std::string& name, ToolErrorCode code, std::string message,
                                  std::string suggestion) {
    // A stand-in under the tool's name and source (so views and scopes judge it as the
    // tool), whose every call is refused with the reason; its arguments are not checked.
    auto spec = std::make_shared<ToolSpec>();
    spec->name = name;
    spec->source = source_name_;
    spec->input_schema = Json{{"type", "object"}};
    spec->handler = [code, message = std::move(message), suggestion = std::move(suggestion)](RequestContext&,
                                                                                             const Json&) {
        return refuse(ToolError(code, message).suggest(suggestion));
    };
    server_.withhold_tool(std::move(spec));
}

bool SourceContext::release_withheld(const std::string& name) { return server_.release_tool(name); }

void SourceContext::withhold_prompt(const std::string& name, std::string message, std::string suggestion) {
    auto spec = std::make_shared<PromptSpec>();
    spec->name = name;
    spec->source = source_name_;
    spec->handler = [name, source = source_name_, message = std::move(message),
                     suggestion = std::move(suggestion)](RequestContext&, const Json&) {
        return refuse_request("prompt", name, source, message, suggestion);
    };
    server_.withhold_prompt(std::move(spec));
}

bool SourceContext::release_withheld_prompt(const std::string& name) { return server_.release_prompt(name); }

void SourceContext::withhold_template(const std::string& uri_template, std::string message, std::string suggestion) {
    auto spec = std::make_shared<ResourceTemplateSpec>();
    spec->uri_template = uri_template;
    spec->source = source_name_;
    spec->reader = [uri_template, source = source_name_, message = std::move(message),
                    suggestion = std::move(suggestion)](RequestContext&, const std::string&, const Json&) {
        return refuse_request("template", uri_template, source, message, suggestion);
    };
    server_.withhold_template(std::move(spec));
}

bool SourceContext::release_withheld_template(const std::string& uri_template) {
    return server_.release_template(uri_template);
}

void SourceContext::add_health(const std::string& component, std::function<observability::ComponentHealth()> probe) {
    if (services_.health) services_.health->add(component, std::move(probe));
}

void SourceContext::set_service_defaults(const std::string& service, const pipeline::ServicePolicy& policy) {
    if (services_.policies) services_.policies->add_service_default(service, policy);
}

pipeline::ContentScanPolicy SourceContext::read_scan_policy() const {
    if (!services_.policies) return {};
    ToolSpec probe;  // no tool's name: the source's layers only
    probe.source = source_name_;
    return services_.policies->resolve(probe)->content_scan;
}

void SourceContext::set_untrusted() {
    untrusted_ = true;
    if (services_.policies) services_.policies->add_untrusted_source(source_name_);
}

void SourceContext::set_call_defaults(const pipeline::PolicyOverride& layer) {
    if (services_.policies) services_.policies->add_source_default(source_name_, layer);
}

http_client::HttpClient& SourceContext::http() const {
    if (!services_.http) {
        throw SourceError("source " + source_name_ +
                          " calls a web API, but this runtime has no downstream HTTP client (no network event loop)");
    }
    return *services_.http;
}

}  // namespace toolport::providers
