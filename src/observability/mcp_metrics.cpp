#include "observability/mcp_metrics.hpp"

#include "observability/metrics.hpp"

namespace toolport::observability {
namespace {

constexpr std::string_view kServer = "mcp_server_operation_duration_seconds";
constexpr std::string_view kClient = "mcp_client_operation_duration_seconds";

Labels operation_labels(const std::string& method, const std::string* tool, std::string_view error_type) {
    Labels labels{{"mcp_method_name", method}};
    if (tool) labels.emplace_back("gen_ai_tool_name", *tool);
    if (!error_type.empty()) labels.emplace_back("error_type", std::string(error_type));
    return labels;
}

// Successful operations by method (or by tool, for tools/call): the common case, one hash
// lookup. Failures build their key: they are rarer, and their labels vary more. The key is
// assembled in a buffer kept per thread and the labels only for a series not seen yet: a
// call that finds its series allocates nothing.
struct OperationHandles {
    HandleCache<Histogram> by_method;
    HandleCache<Histogram> by_tool;
    HandleCache<Histogram> failures;
    std::string key;
};

// `upstream` names the client side's upstream (its label and part of the key); empty on the
// server side.
Histogram& handle_for(OperationHandles& cache, std::string_view family, const std::string& upstream,
                      const std::string& method, const std::string* tool, std::string_view error_type) {
    auto make = [&] {
        Labels labels = operation_labels(method, tool, error_type);
        if (!upstream.empty()) labels.emplace_back("toolport_upstream", upstream);
        return metrics().histogram(family, labels);
    };
    if (error_type.empty() && upstream.empty())
        return tool ? cache.by_tool.get(*tool, make) : cache.by_method.get(method, make);
    std::string& key = cache.key;
    key.assign(upstream).append(1, '\n').append(method).append(1, '\n');
    if (tool) key.append(*tool);
    if (error_type.empty()) return cache.by_method.get(key, make);
    key.append(1, '\n').append(error_type);
    return cache.failures.get(key, make);
}

}  // namespace

void record_server_operation(const std::string& method, const std::string* tool, std::string_view error_type,
                             double seconds) {
    thread_local OperationHandles cache;
    static const std::string no_upstream;
    handle_for(cache, kServer, no_upstream, method, tool, error_type).observe(seconds);
}

void record_client_operation(const std::string& upstream, const std::string& method, const std::string* tool,
                             std::string_view error_type, double seconds) {
    thread_local OperationHandles cache;
    handle_for(cache, kClient, upstream, method, tool, error_type).observe(seconds);
}

void record_server_session(std::string_view protocol_version, double seconds) {
    metrics().observe("mcp_server_session_duration_seconds", {{"mcp_protocol_version", std::string(protocol_version)}},
                      seconds);
}

}  // namespace toolport::observability
