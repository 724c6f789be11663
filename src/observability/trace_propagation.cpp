#include "observability/trace_propagation.hpp"

namespace toolport::observability {
namespace {

const std::string* string_member(const Json& object, std::string_view key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

}  // namespace

PropagatedTrace read_trace_meta(const Json& params) {
    if (!params.is_object()) return {};
    auto meta = params.find(std::string_view("_meta"));
    if (meta == params.end()) return {};
    return read_trace_meta_members(*meta);
}

PropagatedTrace read_trace_meta_members(const Json& meta) {
    PropagatedTrace trace;
    if (!meta.is_object()) return trace;
    if (const auto* traceparent = string_member(meta, "traceparent")) {
        trace.parent = parse_traceparent(*traceparent);
        if (trace.parent) {
            if (const auto* state = string_member(meta, "tracestate"); state && valid_tracestate(*state)) {
                trace.parent->trace_state = *state;
            }
        }
    }
    if (const auto* baggage = string_member(meta, "baggage"); baggage && valid_baggage(*baggage)) {
        trace.baggage = *baggage;
    }
    return trace;
}

void write_trace_meta(Json& params, const TraceContext& context, std::string_view baggage) {
    if (!context.valid()) return;
    if (params.is_null()) params = Json::object();
    if (!params.is_object()) return;
    Json& meta = params["_meta"];
    if (meta.is_null()) meta = Json::object();
    if (!meta.is_object()) return;
    meta["traceparent"] = format_traceparent(context);
    if (!context.trace_state.empty()) {
        meta["tracestate"] = context.trace_state;
    } else {
        meta.erase("tracestate");
    }
    if (!baggage.empty()) meta["baggage"] = std::string(baggage);
}

}  // namespace toolport::observability
