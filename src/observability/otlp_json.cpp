#include "observability/otlp_json.hpp"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "util/utf8.hpp"

namespace toolport::observability {

namespace {

using nlohmann::json;

std::string text(std::string_view s) { return util::valid_utf8(s) ? std::string(s) : util::to_valid_utf8(s); }

template <std::size_t N>
std::string hex(const std::array<std::uint8_t, N>& id) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * N);
    for (auto b : id) {
        out += kDigits[b >> 4];
        out += kDigits[b & 15];
    }
    return out;
}

template <std::size_t N>
bool all_zero(const std::array<std::uint8_t, N>& id) {
    return std::all_of(id.begin(), id.end(), [](std::uint8_t b) { return b == 0; });
}

json any_value(const AttributeValue& value) {
    return std::visit(
        [](const auto& v) -> json {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, std::string>) {
                return {{"stringValue", text(v)}};
            } else if constexpr (std::is_same_v<T, bool>) {
                return {{"boolValue", v}};
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                return {{"intValue", std::to_string(v)}};
            } else {
                // JSON has no NaN or infinities: the protobuf JSON mapping writes them as strings.
                if (std::isnan(v)) return {{"doubleValue", "NaN"}};
                if (std::isinf(v)) return {{"doubleValue", v > 0 ? "Infinity" : "-Infinity"}};
                return {{"doubleValue", v}};
            }
        },
        value);
}

json attributes(const Attributes& list) {
    json out = json::array();
    for (const auto& attribute : list) {
        json kv = json::object();
        if (!attribute.key.empty()) kv["key"] = text(attribute.key);
        kv["value"] = any_value(attribute.value);
        out.push_back(std::move(kv));
    }
    return out;
}

json span_json(const SpanData& span) {
    json s{{"traceId", hex(span.trace_id)}, {"spanId", hex(span.span_id)}};
    if (!span.trace_state.empty()) s["traceState"] = text(span.trace_state);
    if (!all_zero(span.parent_span_id)) s["parentSpanId"] = hex(span.parent_span_id);
    if (!span.name.empty()) s["name"] = text(span.name);
    s["kind"] = static_cast<int>(span.kind);
    if (span.start_unix_nano != 0) s["startTimeUnixNano"] = std::to_string(span.start_unix_nano);
    if (span.end_unix_nano != 0) s["endTimeUnixNano"] = std::to_string(span.end_unix_nano);
    if (!span.attributes.empty()) s["attributes"] = attributes(span.attributes);
    if (!span.events.empty()) {
        json events = json::array();
        for (const auto& event : span.events) {
            json e = json::object();
            if (event.time_unix_nano != 0) e["timeUnixNano"] = std::to_string(event.time_unix_nano);
            if (!event.name.empty()) e["name"] = text(event.name);
            if (!event.attributes.empty()) e["attributes"] = attributes(event.attributes);
            events.push_back(std::move(e));
        }
        s["events"] = std::move(events);
    }
    if (span.status != SpanStatusCode::unset || !span.status_message.empty()) {
        json status = json::object();
        if (!span.status_message.empty()) status["message"] = text(span.status_message);
        if (span.status != SpanStatusCode::unset) status["code"] = static_cast<int>(span.status);
        s["status"] = std::move(status);
    }
    s["flags"] = otlp_span_flags(span);
    return s;
}

}  // namespace

std::string encode_otlp_json(const Attributes& resource, const InstrumentationScope& scope,
                             std::span<const SpanData> spans) {
    json scope_json = json::object();
    if (!scope.name.empty()) scope_json["name"] = text(scope.name);
    if (!scope.version.empty()) scope_json["version"] = text(scope.version);
    json span_list = json::array();
    for (const auto& span : spans) span_list.push_back(span_json(span));
    json resource_json = json::object();
    if (!resource.empty()) resource_json["attributes"] = attributes(resource);
    json scope_spans = json::object();
    scope_spans["scope"] = std::move(scope_json);
    scope_spans["spans"] = std::move(span_list);
    json resource_spans = json::object();
    resource_spans["resource"] = std::move(resource_json);
    resource_spans["scopeSpans"] = json::array();
    resource_spans["scopeSpans"].push_back(std::move(scope_spans));
    json request = json::object();
    request["resourceSpans"] = json::array();
    request["resourceSpans"].push_back(std::move(resource_spans));
    return request.dump();
}

}  // namespace toolport::observability
