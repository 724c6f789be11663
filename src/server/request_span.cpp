#include "server/request_span.hpp"

#include "observability/trace_propagation.hpp"
#include "protocol/raw_json.hpp"
#include "server/request_context.hpp"

namespace toolport {
namespace {

const std::string* string_param(const Json& params, std::string_view key) {
    if (!params.is_object()) return nullptr;
    auto it = params.find(key);
    return it != params.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

}  // namespace

const std::string* tool_name_of(const std::string& method, const Json& params) {
    return method == "tools/call" ? string_param(params, "name") : nullptr;
}

bool is_tool_error_result(const Json& result) {
    if (!result.is_object()) return false;
    auto it = result.find(std::string_view("isError"));
    return it != result.end() && it->is_boolean() && it->get<bool>();
}

RequestTrace start_request_span(const std::string& method, const Json& params, const protocol::RequestId& id,
                                const CallerIdentity& caller, protocol::Revision revision) {
    auto propagated = observability::read_trace_meta(params);
    const auto* parent = propagated.parent ? &*propagated.parent : nullptr;
    // The target: the tool or prompt name (low cardinality); a resource URI is an attribute
    // only, as the conventions advise.
    const std::string* tool = method == "tools/call" ? string_param(params, "name") : nullptr;
    const std::string* prompt = method == "prompts/get" ? string_param(params, "name") : nullptr;
    const std::string* target = tool ? tool : prompt;
    // Tracing off: no name to build; the span only carries the caller's context on.
    std::string name;
    if (observability::tracer().enabled()) name = target ? method + " " + *target : method;

    RequestTrace trace{observability::tracer().start_span(std::move(name), observability::SpanKind::server, parent, true),
                       std::move(propagated.baggage)};
    auto& span = trace.span;
    if (!span.recording()) return trace;
    // A new span: each key below is set once (add_attribute, no look-up).
    span.add_attribute("mcp.method.name", method);
    if (tool) {
        span.add_attribute("gen_ai.tool.name", *tool);
        span.add_attribute("gen_ai.operation.name", "execute_tool");
        if (observability::tracer().captures_payloads()) {
            if (auto args = params.find("arguments"); args != params.end()) {
                span.add_attribute("gen_ai.tool.call.arguments", observability::payload_attribute(*args));
            }
        }
    }
    if (prompt) span.add_attribute("gen_ai.prompt.name", *prompt);
    if (method == "resources/read") {
        if (const auto* uri = string_param(params, "uri")) span.add_attribute("mcp.resource.uri", *uri);
    }
    if (id.is_string()) span.add_attribute("jsonrpc.request.id", id.get_ref<const std::string&>());
    else span.add_attribute("jsonrpc.request.id", protocol::id_text(id));
    span.add_attribute("mcp.protocol.version", protocol::name(revision));
    if (caller.session_id == "stdio") {
        span.add_attribute("network.transport", "pipe");
    } else if (caller.session_id != "in-process") {
        span.add_attribute("network.transport", "tcp");
        span.add_attribute("network.protocol.name", "http");
        if (!caller.session_id.empty()) span.add_attribute("mcp.session.id", caller.session_id);
    }
    return trace;
}

void end_request_span_with_result(observability::Span& span, const Json& result) {
    if (!span.recording()) return;
    if (is_tool_error_result(result)) span.set_error("tool_error", "the tool answered with isError");
    if (observability::tracer().captures_payloads() && result.is_object() &&
        (result.contains("content") || result.contains("structuredContent"))) {
        // A tool result's content (raw JSON from a gateway's upstream is expanded on the way).
        Json shown = Json::object();
        for (const char* key : {"content", "structuredContent"}) {
            if (auto it = result.find(key); it != result.end()) {
                Json part = *it;
                protocol::expand_raw_json(part);
                shown[key] = std::move(part);
            }
        }
        span.set_attribute("gen_ai.tool.call.result", observability::payload_attribute(shown));
    }
    span.end();
}

void end_request_span_with_error(observability::Span& span, int code, const std::string& message) {
    if (!span.recording()) return;
    const std::string text = std::to_string(code);
    span.set_attribute("rpc.response.status_code", text);
    span.set_error(text, message);
    span.end();
}

}  // namespace toolport
