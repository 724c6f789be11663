#include "telemetry/telemetry_settings.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "config/settings.hpp"
#include "http_client/url.hpp"
#include "telemetry/telemetry_keys.hpp"
#include "toolport_version.hpp"
#include "util/percent.hpp"

namespace toolport::telemetry {

namespace {

constexpr std::pair<SamplerKind, const char*> kSamplers[] = {
    {SamplerKind::always_on, "always_on"},
    {SamplerKind::always_off, "always_off"},
    {SamplerKind::traceidratio, "traceidratio"},
    {SamplerKind::parentbased_always_on, "parentbased_always_on"},
    {SamplerKind::parentbased_always_off, "parentbased_always_off"},
    {SamplerKind::parentbased_traceidratio, "parentbased_traceidratio"},
};

std::optional<SamplerKind> sampler_named(const std::string& name) {
    for (const auto& [kind, text] : kSamplers) {
        if (name == text) return kind;
    }
    return std::nullopt;
}

std::string trim(std::string_view s) {
    const auto first = s.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    const auto last = s.find_last_not_of(" \t");
    return std::string(s.substr(first, last - first + 1));
}

// Why `url` cannot be an export endpoint, or "" when it can.
std::string endpoint_problem(const std::string& url) {
    try {
        (void)http_client::parse_url(url);
        return {};
    } catch (const std::invalid_argument& e) {
        return fmt::format("must be an http:// or https:// URL ({})", e.what());
    }
}

// <base>/v1/traces, with one slash between.
std::string traces_url(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/v1/traces";
}

bool token_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// Why a header cannot be sent as given, or "" (the value is not repeated: it may be a key).
std::string header_problem(const std::string& name, const std::string& value) {
    if (name.empty() || !std::all_of(name.begin(), name.end(), token_char))
        return fmt::format("\"{}\" is not a header name", name);
    for (char c : value) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7F)
            return fmt::format("the value of header {} holds a control character", name);
    }
    return {};
}

// key=value,key=value with percent-encoded keys and values (W3C baggage's form, as
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_RESOURCE_ATTRIBUTES are written).
std::vector<std::pair<std::string, std::string>> key_values(const std::string& variable, const std::string& text) {
    std::vector<std::pair<std::string, std::string>> out;
    std::size_t index = 0;
    for (std::size_t start = 0; start <= text.size(); ++index) {
        auto end = text.find(',', start);
        if (end == std::string::npos) end = text.size();
        const std::string_view item(text.data() + start, end - start);
        start = end + 1;
        if (trim(item).empty()) continue;
        const auto equals = item.find('=');
        if (equals == std::string_view::npos) {
            throw TelemetrySettingsError(
                fmt::format("environment variable {}: entry {} is not key=value", variable, index + 1));
        }
        auto key = util::percent_decode(trim(item.substr(0, equals)));
        auto value = util::percent_decode(trim(item.substr(equals + 1)));
        if (!key || !value || key->empty()) {
            throw TelemetrySettingsError(
                fmt::format("environment variable {}: entry {} is not key=value with percent-encoding (%XX)", variable,
                            index + 1));
        }
        out.emplace_back(std::move(*key), std::move(*value));
    }
    return out;
}

long long env_integer(const std::string& variable, const std::string& text, long long min, long long max) {
    errno = 0;
    char* end = nullptr;
    const long long n = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || n < min || n > max) {
        throw TelemetrySettingsError(fmt::format("environment variable {} must be an integer from {} to {}, got \"{}\"",
                                                 variable, min, max, text));
    }
    return n;
}

std::optional<OtlpProtocol> protocol_named(const std::string& text) {
    if (text == "http/protobuf") return OtlpProtocol::http_protobuf;
    if (text == "http/json") return OtlpProtocol::http_json;
    return std::nullopt;
}

const char* kGrpcRefused =
    "grpc is not supported: Toolport exports OTLP over HTTP; use http/protobuf (or http/json) and the "
    "collector's OTLP/HTTP port (4318 by default)";

void set_service_name_from(std::vector<std::pair<std::string, std::string>>& attributes, std::string& service_name) {
    for (auto it = attributes.begin(); it != attributes.end();) {
        if (it->first == "service.name") {
            service_name = it->second;
            it = attributes.erase(it);
        } else {
            ++it;
        }
    }
}

void merge_attributes(std::vector<std::pair<std::string, std::string>>& into,
                      std::vector<std::pair<std::string, std::string>> more) {
    for (auto& attribute : more) {
        const std::string& key = attribute.first;
        auto it = std::find_if(into.begin(), into.end(), [&key](const auto& kv) { return kv.first == key; });
        if (it != into.end()) it->second = std::move(attribute.second);
        else into.push_back(std::move(attribute));
    }
}

std::string host_name() {
    char name[HOST_NAME_MAX + 1] = {};
    if (gethostname(name, sizeof name - 1) != 0) return {};
    return name;
}

}  // namespace

const char* sampler_name(SamplerKind kind) {
    for (const auto& [k, text] : kSamplers) {
        if (k == kind) return text;
    }
    return "parentbased_always_on";
}

const char* TelemetrySettings::content_type() const {
    return protocol == OtlpProtocol::http_json ? "application/json" : "application/x-protobuf";
}

observability::Attributes TelemetrySettings::resource() const {
    observability::Attributes out{{"service.name", service_name},
                                  {"service.version", std::string(kToolportVersion)},
                                  {"telemetry.sdk.name", std::string("toolport")},
                                  {"telemetry.sdk.language", std::string("cpp")},
                                  {"telemetry.sdk.version", std::string(kToolportVersion)},
                                  {"host.name", host_name()},
                                  {"process.pid", static_cast<std::int64_t>(getpid())}};
    for (const auto& attribute : resource_attributes) {
        const std::string& key = attribute.first;
        if (key == "service.name" || key.rfind("telemetry.sdk.", 0) == 0 || key == "process.pid") continue;
        auto it = std::find_if(out.begin(), out.end(), [&key](const auto& a) { return a.key == key; });
        if (it != out.end()) it->value = attribute.second;
        else out.push_back({observability::AttributeKey::viewing(key), attribute.second});
    }
    return out;
}

Environment process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* value = std::getenv(name.c_str());
        if (!value || !*value) return std::nullopt;
        return std::string(value);
    };
}

TelemetrySettings read_telemetry_section(const config::Settings& t) {
    namespace k = keys;
    TelemetrySettings s;
    t.check_keys(k::section);
    if (auto v = t.boolean(k::enabled)) s.disabled = !*v;
    if (auto v = t.string(k::endpoint)) {
        if (auto problem = endpoint_problem(*v); !problem.empty()) t.fail(k::endpoint, problem);
        s.traces_endpoint = traces_url(*v);
    }
    if (t.has(k::protocol)) {
        if (t.string(k::protocol) == "grpc") t.fail(k::protocol, kGrpcRefused);
        s.protocol = *protocol_named(*t.one_of(k::protocol));
    }
    if (auto v = t.string_map(k::headers)) {
        for (auto& [name, value] : *v) {
            if (auto problem = header_problem(name, value); !problem.empty()) t.fail(k::headers, problem);
            s.headers.emplace_back(name, value);
        }
    }
    if (auto v = t.one_of(k::compression)) s.gzip = *v == "gzip";
    if (auto v = t.string(k::certificate)) s.certificate = *v;
    if (auto v = t.duration<std::chrono::milliseconds>(k::timeout_ms)) s.timeout = *v;
    if (auto v = t.string_map(k::resource_attributes)) {
        for (auto& [key, value] : *v) s.resource_attributes.emplace_back(key, value);
        set_service_name_from(s.resource_attributes, s.service_name);
    }
    if (auto v = t.string(k::service_name)) {
        if (v->empty()) t.fail(k::service_name, "must not be empty");
        s.service_name = *v;
    }
    if (t.has(k::traces_key)) {
        namespace kt = k::traces;
        auto tr = t.section(k::traces_key);
        tr.check_keys(kt::section);
        if (auto v = tr.string(kt::endpoint)) {
            if (auto problem = endpoint_problem(*v); !problem.empty()) tr.fail(kt::endpoint, problem);
            s.traces_endpoint = *v;
        }
        if (auto v = tr.one_of(kt::sampler)) s.sampler = *sampler_named(*v);
        if (auto v = tr.number(kt::sampler_arg)) s.sampler_ratio = *v;
        if (auto v = tr.boolean(kt::capture_payloads)) s.capture_payloads = *v;
        if (auto v = tr.duration<std::chrono::milliseconds>(kt::schedule_delay_ms)) s.schedule_delay = *v;
        if (auto v = tr.integer(kt::max_queue_size)) s.max_queue_size = static_cast<std::size_t>(*v);
        if (auto v = tr.integer(kt::max_export_batch_size)) s.max_export_batch_size = static_cast<std::size_t>(*v);
        if (auto v = tr.duration<std::chrono::milliseconds>(kt::export_timeout_ms)) s.export_timeout = *v;
        if (s.max_export_batch_size > s.max_queue_size) {
            tr.fail(kt::max_export_batch_size,
                    fmt::format("({}) must not exceed max_queue_size ({})", s.max_export_batch_size, s.max_queue_size));
        }
    }
    return s;
}

void apply_telemetry_environment(TelemetrySettings& s, const Environment& env) {
    // The first of the variables that is set: the TRACES_ one before the generic one.
    auto first = [&env](std::initializer_list<const char*> names) -> std::optional<std::pair<std::string, std::string>> {
        for (const char* name : names) {
            if (auto value = env(name)) return std::pair<std::string, std::string>(name, *value);
        }
        return std::nullopt;
    };

    if (auto v = env("OTEL_SDK_DISABLED")) {
        std::string lower;
        for (char c : *v) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        if (lower != "true" && lower != "false") {
            throw TelemetrySettingsError(
                fmt::format("environment variable OTEL_SDK_DISABLED must be true or false, got \"{}\"", *v));
        }
        s.disabled = lower == "true";
    }
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"})) {
        if (auto problem = endpoint_problem(v->second); !problem.empty())
            throw TelemetrySettingsError(fmt::format("environment variable {} {}", v->first, problem));
        s.traces_endpoint = v->first == "OTEL_EXPORTER_OTLP_ENDPOINT" ? traces_url(v->second) : v->second;
    }
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_HEADERS"})) {
        s.headers.clear();
        for (auto& [name, value] : key_values(v->first, v->second)) {
            if (auto problem = header_problem(name, value); !problem.empty())
                throw TelemetrySettingsError(fmt::format("environment variable {}: {}", v->first, problem));
            s.headers.emplace_back(std::move(name), std::move(value));
        }
    }
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"})) {
        if (v->second == "grpc")
            throw TelemetrySettingsError(fmt::format("environment variable {}: {}", v->first, kGrpcRefused));
        auto protocol = protocol_named(v->second);
        if (!protocol) {
            throw TelemetrySettingsError(
                fmt::format("environment variable {} must be http/protobuf or http/json, got \"{}\"", v->first,
                            v->second));
        }
        s.protocol = *protocol;
    }
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"})) {
        if (v->second != "gzip" && v->second != "none") {
            throw TelemetrySettingsError(
                fmt::format("environment variable {} must be gzip or none, got \"{}\"", v->first, v->second));
        }
        s.gzip = v->second == "gzip";
    }
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE"}))
        s.certificate = v->second;
    if (auto v = first({"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"}))
        s.timeout = std::chrono::milliseconds(env_integer(v->first, v->second, 1, 600000));
    if (auto v = env("OTEL_RESOURCE_ATTRIBUTES")) {
        auto attributes = key_values("OTEL_RESOURCE_ATTRIBUTES", *v);
        set_service_name_from(attributes, s.service_name);
        merge_attributes(s.resource_attributes, std::move(attributes));
    }
    if (auto v = env("OTEL_SERVICE_NAME")) s.service_name = *v;
    if (auto v = env("OTEL_TRACES_SAMPLER")) {
        auto kind = sampler_named(*v);
        if (!kind) {
            throw TelemetrySettingsError(
                fmt::format("environment variable OTEL_TRACES_SAMPLER must be always_on, always_off, traceidratio, "
                            "parentbased_always_on, parentbased_always_off or parentbased_traceidratio, got \"{}\"",
                            *v));
        }
        s.sampler = *kind;
    }
    if (auto v = env("OTEL_TRACES_SAMPLER_ARG")) {
        char* end = nullptr;
        const double ratio = std::strtod(v->c_str(), &end);
        if (*end != '\0' || !(ratio >= 0 && ratio <= 1)) {
            throw TelemetrySettingsError(
                fmt::format("environment variable OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got \"{}\"", *v));
        }
        s.sampler_ratio = ratio;
    }
    if (auto v = env("OTEL_BSP_SCHEDULE_DELAY"))
        s.schedule_delay = std::chrono::milliseconds(env_integer("OTEL_BSP_SCHEDULE_DELAY", *v, 1, 3600000));
    if (auto v = env("OTEL_BSP_MAX_QUEUE_SIZE"))
        s.max_queue_size = static_cast<std::size_t>(env_integer("OTEL_BSP_MAX_QUEUE_SIZE", *v, 1, 10000000));
    if (auto v = env("OTEL_BSP_MAX_EXPORT_BATCH_SIZE")) {
        s.max_export_batch_size = static_cast<std::size_t>(
            env_integer("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", *v, 1, 10000000));
    }
    if (auto v = env("OTEL_BSP_EXPORT_TIMEOUT"))
        s.export_timeout = std::chrono::milliseconds(env_integer("OTEL_BSP_EXPORT_TIMEOUT", *v, 1, 3600000));
    if (s.max_export_batch_size > s.max_queue_size) {
        throw TelemetrySettingsError(fmt::format(
            "the export batch size ({}, OTEL_BSP_MAX_EXPORT_BATCH_SIZE or telemetry.traces.max_export_batch_size) "
            "must not exceed the queue size ({}, OTEL_BSP_MAX_QUEUE_SIZE or telemetry.traces.max_queue_size)",
            s.max_export_batch_size, s.max_queue_size));
    }
}

}  // namespace toolport::telemetry
