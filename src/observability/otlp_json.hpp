// OTLP/HTTP with JSON (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=http/json): the same
// ExportTraceServiceRequest as otlp_protobuf.hpp, in the OTLP specification's JSON mapping
// of protobuf: lowerCamelCase keys, trace and span ids as lowercase hex (not base64), enums
// as integers, 64-bit integers (int64 values, fixed64 times) as decimal strings, and
// defaults left out as the protobuf encoding leaves them out.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "observability/otlp_protobuf.hpp"
#include "observability/span_data.hpp"

namespace toolport::observability {

// The partialSuccess of a JSON ExportTraceServiceResponse; nullopt when the response has
// none (full success) or cannot be read.
std::optional<PartialSuccess> decode_otlp_json_partial_success(std::string_view response);

std::string encode_otlp_json(const Attributes& resource, const InstrumentationScope& scope,
                             std::span<const SpanData> spans);

}  // namespace toolport::observability
