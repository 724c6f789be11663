// TelemetrySettings: where and how traces are exported, from the `telemetry:` section of the
// configuration file (telemetry_keys.hpp) with the standard OpenTelemetry environment
// variables on top:
//
//   OTEL_SDK_DISABLED=true                  nothing is exported (telemetry.enabled: false)
//   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT      the full traces URL, used as is
//   OTEL_EXPORTER_OTLP_ENDPOINT             a base URL: traces go to <base>/v1/traces
//   OTEL_EXPORTER_OTLP_(TRACES_)HEADERS     key=value,key=value (percent-encoded)
//   OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL    http/protobuf (default) or http/json; grpc is refused
//   OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT     ms per export request
//   OTEL_EXPORTER_OTLP_(TRACES_)COMPRESSION gzip or none
//   OTEL_EXPORTER_OTLP_(TRACES_)CERTIFICATE CA file for an https collector
//   OTEL_SERVICE_NAME                       service.name (over OTEL_RESOURCE_ATTRIBUTES')
//   OTEL_RESOURCE_ATTRIBUTES                key=value,... (percent-encoded)
//   OTEL_TRACES_SAMPLER / _ARG              always_on, always_off, traceidratio,
//                                           parentbased_always_on (default),
//                                           parentbased_always_off, parentbased_traceidratio
//   OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE,
//   OTEL_BSP_EXPORT_TIMEOUT                 the batching (ms, spans, spans, ms)
//
// A variable that is set (and not empty) wins over the file; a TRACES_ variable wins over
// its generic one. Every value that cannot be used is refused naming the key or the
// variable (header values are never repeated in messages: they hold keys).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "http_client/http_client.hpp"
#include "observability/span_data.hpp"

namespace toolport::config {
class Settings;
}

namespace toolport::telemetry {

struct TelemetrySettingsError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

enum class OtlpProtocol { http_protobuf, http_json };

// OTEL_TRACES_SAMPLER's values. The parentbased_* ones follow the caller's sampled flag when
// a request carries a traceparent, and apply the named rule to requests without one.
enum class SamplerKind {
    always_on,
    always_off,
    traceidratio,
    parentbased_always_on,
    parentbased_always_off,
    parentbased_traceidratio
};

// The sampler's name as OTEL_TRACES_SAMPLER writes it.
const char* sampler_name(SamplerKind kind);

struct TelemetrySettings {
    bool disabled = false;        // telemetry.enabled: false, or OTEL_SDK_DISABLED=true
    std::string traces_endpoint;  // the full URL spans are POSTed to; empty: no export
    OtlpProtocol protocol = OtlpProtocol::http_protobuf;
    http_client::Headers headers;              // sent with every export (may hold keys: never logged)
    std::chrono::milliseconds timeout{10000};  // one export request
    bool gzip = false;                         // requests compressed (Content-Encoding: gzip)
    std::string certificate;                   // CA file for the collector; empty: downstream.ca_file
    std::string service_name = "toolport";
    // Besides service.name (which service_name holds), in the order given.
    std::vector<std::pair<std::string, std::string>> resource_attributes;
    SamplerKind sampler = SamplerKind::parentbased_always_on;
    double sampler_ratio = 1.0;  // for traceidratio and parentbased_traceidratio
    // Tool arguments and results on spans (after redaction) only when true.
    bool capture_payloads = false;
    // The batching span processor's (OTEL_BSP_*).
    std::chrono::milliseconds schedule_delay{5000};
    std::size_t max_queue_size = 2048;
    std::size_t max_export_batch_size = 512;
    std::chrono::milliseconds export_timeout{30000};  // one batch, retries included

    // Spans are exported: an endpoint is set and telemetry is not disabled.
    bool enabled() const { return !disabled && !traces_endpoint.empty(); }
    // application/x-protobuf or application/json.
    const char* content_type() const;
    // The resource every exported span names: service.name, service.version,
    // telemetry.sdk.name/language/version, host.name, process.pid, then resource_attributes
    // (which may replace service.version and host.name, not the rest).
    // Keys from resource_attributes are views of this object's strings: keep it alive, and
    // in place, as long as the attributes.
    observability::Attributes resource() const;
};

// Reads an environment variable; nullopt when unset (an empty value counts as unset, as
// the OpenTelemetry specification says).
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment process_environment();

// The `telemetry:` section (its keys checked); throws config::SettingsError naming
// FILE:LINE: telemetry.key.
TelemetrySettings read_telemetry_section(const config::Settings& section);

// The OTEL_* variables over `settings`; throws TelemetrySettingsError naming the variable.
// Also checks what only the combination can say (batch size within the queue size).
void apply_telemetry_environment(TelemetrySettings& settings, const Environment& env = process_environment());

}  // namespace toolport::telemetry
