// The `telemetry:` section of the configuration file, declared once (config/declaration.hpp)
// in the folder that reads it, as the sources declare theirs; app/config_table.hpp puts it
// in the file's table (so `toolport config schema` and `config docs` list it).
//
// Each key's environment variable is the standard OpenTelemetry one; set, it wins over the
// file (telemetry_settings.hpp says how the variables combine).
#pragma once

#include "config/declaration.hpp"

namespace toolport::telemetry::keys {

using namespace toolport::config;

namespace traces {
inline const Key endpoint = with_env(
    string_key("endpoint",
               "The full URL spans are POSTed to, used as is (wins over telemetry.endpoint, and its variable over "
               "OTEL_EXPORTER_OTLP_ENDPOINT)."),
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
inline const Key sampler = with_env(
    one_of_key("sampler",
               {"always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off",
                "parentbased_traceidratio"},
               "Which requests are traced: all, none, a share of trace ids, or as the caller's traceparent says "
               "(parentbased_*: what applies to requests without one).",
               "parentbased_always_on"),
    "OTEL_TRACES_SAMPLER");
inline const Key sampler_arg = with_env(number_key("sampler_arg", 0, 1,
                                                   "The share of traces kept by traceidratio and "
                                                   "parentbased_traceidratio (0 to 1).",
                                                   "1"),
                                        "OTEL_TRACES_SAMPLER_ARG");
inline const Key capture_payloads = boolean_key("capture_payloads",
                                                "Put tool arguments and results on spans (after redaction); off, "
                                                "spans carry names, ids and outcomes only.",
                                                "false");
inline const Key schedule_delay_ms = with_env(duration_key("schedule_delay_ms", "ms", 1, 3600000,
                                                           "Longest wait before queued spans are sent.", "5000"),
                                              "OTEL_BSP_SCHEDULE_DELAY");
inline const Key max_queue_size = with_env(integer_key("max_queue_size", 1, 10000000,
                                                       "Spans queued for export at most; more are dropped "
                                                       "(toolport_trace_spans_dropped_total).",
                                                       "2048"),
                                           "OTEL_BSP_MAX_QUEUE_SIZE");
inline const Key max_export_batch_size = with_env(integer_key("max_export_batch_size", 1, 10000000,
                                                              "Spans in one export request at most (no more than "
                                                              "max_queue_size).",
                                                              "512"),
                                                  "OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
inline const Key export_timeout_ms = with_env(duration_key("export_timeout_ms", "ms", 1, 3600000,
                                                           "How long one batch may take with its retries before it "
                                                           "is dropped.",
                                                           "30000"),
                                              "OTEL_BSP_EXPORT_TIMEOUT");
inline const Section section{"traces",
                             "Traces: where they go, which requests are traced, what spans carry, how they are "
                             "batched.",
                             {&endpoint, &sampler, &sampler_arg, &capture_payloads, &schedule_delay_ms, &max_queue_size,
                              &max_export_batch_size, &export_timeout_ms},
                             true,
                             true};
}  // namespace traces

inline const Key enabled =
    boolean_key("enabled",
                "false: nothing is exported even with an endpoint. OTEL_SDK_DISABLED=true (or false) wins "
                "over the file.",
                "true");
inline const Key endpoint = with_env(string_key("endpoint",
                                                "The OTLP/HTTP collector's base URL: spans go to "
                                                "<endpoint>/v1/traces. None: no export."),
                                     "OTEL_EXPORTER_OTLP_ENDPOINT");
inline const Key protocol = with_env(one_of_key("protocol", {"http/protobuf", "http/json"},
                                                "OTLP over HTTP as protobuf or JSON (gRPC is not supported). "
                                                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL wins over the variable below.",
                                                "http/protobuf"),
                                     "OTEL_EXPORTER_OTLP_PROTOCOL");
inline const Key headers = with_env(map_key("headers",
                                            "Headers sent with every export (an API key: write its value as "
                                            "${VAR}). The variables hold key=value,... (percent-encoded); "
                                            "OTEL_EXPORTER_OTLP_TRACES_HEADERS wins over the one below."),
                                    "OTEL_EXPORTER_OTLP_HEADERS");
inline const Key compression = with_env(one_of_key("compression", {"gzip", "none"},
                                                   "Compress export requests (Content-Encoding: gzip). "
                                                   "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION wins over the variable "
                                                   "below.",
                                                   "none"),
                                        "OTEL_EXPORTER_OTLP_COMPRESSION");
inline const Key certificate = with_env(string_key("certificate",
                                                   "CA certificates (PEM) to trust for an https collector, instead "
                                                   "of downstream.ca_file. OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE "
                                                   "wins over the variable below."),
                                        "OTEL_EXPORTER_OTLP_CERTIFICATE");
inline const Key timeout_ms = with_env(duration_key("timeout_ms", "ms", 1, 600000,
                                                    "How long one export request may take. "
                                                    "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT wins over the variable below.",
                                                    "10000"),
                                       "OTEL_EXPORTER_OTLP_TIMEOUT");
inline const Key service_name = with_env(string_key("service_name", "The resource's service.name.", "toolport"),
                                         "OTEL_SERVICE_NAME");
inline const Key resource_attributes = with_env(map_key("resource_attributes",
                                                        "More resource attributes (deployment.environment, ...). The "
                                                        "variable holds key=value,... (percent-encoded)."),
                                                "OTEL_RESOURCE_ATTRIBUTES");
inline const Key traces_key = section_key("traces", traces::section, traces::section.doc);
inline const Section section{"telemetry",
                             "OpenTelemetry: traces exported over OTLP/HTTP to a collector (the standard OTEL_* "
                             "variables apply too).",
                             {&enabled, &endpoint, &protocol, &headers, &compression, &certificate, &timeout_ms,
                              &service_name, &resource_attributes, &traces_key},
                             true,
                             true};

}  // namespace toolport::telemetry::keys
