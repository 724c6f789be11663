#include "providers/gateway/upstream_span.hpp"

#include "async/completion.hpp"
#include "client/client_errors.hpp"
#include "client/mcp_client.hpp"
#include "http_client/url.hpp"
#include "observability/mcp_metrics.hpp"
#include "observability/trace_propagation.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "server/request_context.hpp"
#include "server/request_span.hpp"

namespace toolport::gateway {
namespace {

const std::string* string_param(const Json& params, std::string_view key) {
    if (!params.is_object()) return nullptr;
    auto it = params.find(key);
    return it != params.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

void describe_upstream(observability::Span& span, const UpstreamSettings& upstream) {
    span.set_attribute("toolport.upstream", upstream.name);
    if (upstream.transport == UpstreamTransport::stdio) {
        span.set_attribute("network.transport", "pipe");
        return;
    }
    span.set_attribute("network.transport", "tcp");
    span.set_attribute("network.protocol.name", "http");
    try {
        const auto url = http_client::parse_url(upstream.url);
        span.set_attribute("server.address", url.host);
        span.set_attribute("server.port", static_cast<std::int64_t>(url.port));
    } catch (const std::exception&) {
        // An upstream URL that does not parse never got this far; nothing to describe.
    }
}

}  // namespace

UpstreamRequestTrace::UpstreamRequestTrace(const UpstreamSettings& upstream, const std::string& method, Json& params,
                                           const RequestContext& ctx)
    : upstream_(upstream), method_(method) {
    const std::string* tool = method == "tools/call" ? string_param(params, "name") : nullptr;
    if (tool) tool_ = *tool;
    if (!observability::tracer().enabled()) {
        // Tracing off: the caller's context (if any) goes on as it came.
        if (!ctx.meta()) return;
        auto incoming = observability::read_trace_meta_members(*ctx.meta());
        if (incoming.parent) observability::write_trace_meta(params, *incoming.parent, incoming.baggage);
        return;
    }
    const std::string* prompt = method == "prompts/get" ? string_param(params, "name") : nullptr;
    const std::string* target = tool ? tool : prompt;
    const auto& parent = ctx.trace_context();
    span_ = observability::tracer().start_span(target ? method + " " + *target : method,
                                               observability::SpanKind::client, &parent);
    if (span_.recording()) {
        span_.set_attribute("mcp.method.name", method);
        if (tool) {
            span_.set_attribute("gen_ai.tool.name", *tool);
            span_.set_attribute("gen_ai.operation.name", "execute_tool");
        }
        if (prompt) span_.set_attribute("gen_ai.prompt.name", *prompt);
        if (method == "resources/read") {
            if (const auto* uri = string_param(params, "uri")) span_.set_attribute("mcp.resource.uri", *uri);
        }
        describe_upstream(span_, upstream);
    }
    observability::write_trace_meta(params, span_.context(), ctx.baggage());
}

void UpstreamRequestTrace::record(std::string_view error_type) {
    observability::record_client_operation(
        upstream_.name, method_, method_ == "tools/call" ? &tool_ : nullptr, error_type,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
}

void UpstreamRequestTrace::succeeded(const Json& result) {
    const bool tool_error = is_tool_error_result(result);
    record(tool_error ? "tool_error" : "");
    if (!span_.recording()) return;
    if (tool_error) span_.set_error("tool_error", "the upstream's tool answered with isError");
    span_.end();
}

void UpstreamRequestTrace::failed(std::exception_ptr error) {
    std::string type, message;
    try {
        std::rethrow_exception(error);
    } catch (const protocol::RpcError& e) {
        type = std::to_string(e.code);
        message = e.from_peer ? "the upstream answered with an error" : "refused by the gateway";
        span_.set_attribute("rpc.response.status_code", type);
    } catch (const client::RequestTimeout&) {
        type = "timeout", message = "the upstream did not answer in time";
    } catch (const client::ResponseTooLarge&) {
        type = "response_too_large", message = "the upstream's answer passed max_response_bytes";
    } catch (const client::TransportError&) {
        type = "transport_error", message = "the upstream went away";
    } catch (const OperationCancelled&) {
        type = "cancelled", message = "the call was cancelled";
    } catch (...) {
        type = "_OTHER", message = "the request failed";
    }
    record(type);
    span_.set_error(type, message);
    span_.end();
}

}  // namespace toolport::gateway
