// OTLP/HTTP with protobuf: a batch of ended spans as one ExportTraceServiceRequest
// (opentelemetry-proto, collector/trace/v1/trace_service.proto), the body of a POST to
// /v1/traces with Content-Type application/x-protobuf.
//
// Written by hand (no protobuf library is linked): the few messages a trace export needs,
// each field in field-number order and proto3 defaults left out, as protobuf's own encoders
// do, so the bytes equal what an official encoder writes for the same message
// (tests/integration/otlp_wire.test.mjs checks them with the official definitions).
// Text that is not valid UTF-8 is repaired (U+FFFD): receivers refuse such `string` fields.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "observability/span_data.hpp"

namespace toolport::observability {

// Who produced the spans: InstrumentationScope's name and version.
struct InstrumentationScope {
    std::string name;
    std::string version;
};

// {"toolport", the build's version}.
InstrumentationScope toolport_scope();

// Span.flags as OTLP sends them: the W3C trace flags in bits 0-7, and bits 8 and 9 saying
// that whether the parent is remote is known (always, here) and whether it is.
std::uint32_t otlp_span_flags(const SpanData& span);

// One ResourceSpans holding one ScopeSpans with `spans`.
std::string encode_otlp_protobuf(const Attributes& resource, const InstrumentationScope& scope,
                                 std::span<const SpanData> spans);
// The same, written into `room`, a buffer the caller keeps from one batch to the next (its
// size is the room, grown as needed, never shrunk): the bytes are the returned view of it,
// valid until `room` is used again. An exporter thus encodes each batch without allocating
// and zero-filling a fresh buffer of a few hundred kilobytes.
std::string_view encode_otlp_protobuf(const Attributes& resource, const InstrumentationScope& scope,
                                      std::span<const SpanData> spans, std::string& room);

// ExportTraceServiceResponse.partial_success: spans the collector accepted the request but
// not kept (it answered 200; the request must not be sent again).
struct PartialSuccess {
    std::int64_t rejected_spans = 0;
    std::string error_message;
};

// The partial_success of a protobuf ExportTraceServiceResponse; nullopt when the response
// has none (full success) or cannot be read.
std::optional<PartialSuccess> decode_otlp_partial_success(std::string_view response);

}  // namespace toolport::observability
