// TelemetrySettings (telemetry/telemetry_settings.hpp): the `telemetry:` section of the
// configuration file, every OTEL_* variable on top of it (an environment given as a map),
// their precedence, the resource, and the refusal of every value that cannot be used.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "app/config.hpp"
#include "telemetry/telemetry_settings.hpp"
#include "toolport_version.hpp"

using namespace toolport;
using namespace toolport::telemetry;
namespace fs = std::filesystem;

namespace {

Environment env_of(std::map<std::string, std::string> vars) {
    return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end() || it->second.empty()) return std::nullopt;
        return it->second;
    };
}

TelemetrySettings from_env(std::map<std::string, std::string> vars, TelemetrySettings base = {}) {
    apply_telemetry_environment(base, env_of(std::move(vars)));
    return base;
}

std::string env_error(std::map<std::string, std::string> vars) {
    try {
        (void)from_env(std::move(vars));
    } catch (const TelemetrySettingsError& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected TelemetrySettingsError";
    return {};
}

class TelemetryConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("toolport-telemetry-test-" + std::to_string(::getpid()));
        fs::create_directories(dir_);
    }
    void TearDown() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    Config load(const std::string& yaml) {
        const auto path = (dir_ / "toolport.yaml").string();
        std::ofstream(path) << yaml;
        return load_config(path);
    }
    std::string error_of(const std::string& yaml) {
        try {
            (void)load(yaml);
        } catch (const ConfigError& e) {
            return e.what();
        }
        ADD_FAILURE() << "expected ConfigError for:\n" << yaml;
        return {};
    }
    fs::path dir_;
};

std::string value_of(const observability::Attributes& attributes, const std::string& key) {
    for (const auto& a : attributes) {
        if (a.key != key) continue;
        if (auto* s = std::get_if<std::string>(&a.value)) return *s;
        if (auto* i = std::get_if<std::int64_t>(&a.value)) return std::to_string(*i);
    }
    return "<absent>";
}

}  // namespace

TEST(TelemetrySettings, DefaultsExportNothingAndFollowTheSpecification) {
    const auto s = from_env({});
    EXPECT_FALSE(s.enabled());
    EXPECT_EQ(s.traces_endpoint, "");
    EXPECT_EQ(s.protocol, OtlpProtocol::http_protobuf);
    EXPECT_STREQ(s.content_type(), "application/x-protobuf");
    EXPECT_EQ(s.sampler, SamplerKind::parentbased_always_on);
    EXPECT_EQ(s.sampler_ratio, 1.0);
    EXPECT_EQ(s.timeout.count(), 10000);
    EXPECT_EQ(s.schedule_delay.count(), 5000);
    EXPECT_EQ(s.max_queue_size, 2048u);
    EXPECT_EQ(s.max_export_batch_size, 512u);
    EXPECT_EQ(s.export_timeout.count(), 30000);
    EXPECT_EQ(s.service_name, "toolport");
    EXPECT_FALSE(s.capture_payloads);
    EXPECT_TRUE(s.headers.empty());
}

TEST(TelemetrySettings, TheBaseEndpointGetsV1TracesAndTheTracesEndpointIsUsedAsIs) {
    EXPECT_EQ(from_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"}}).traces_endpoint,
              "http://collector:4318/v1/traces");
    EXPECT_EQ(from_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "https://otel.example/prefix/"}}).traces_endpoint,
              "https://otel.example/prefix/v1/traces");
    const auto both = from_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://base:4318"},
                                {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:9999/custom"}});
    EXPECT_EQ(both.traces_endpoint, "http://traces:9999/custom");
    EXPECT_TRUE(both.enabled());
    EXPECT_EQ(env_error({{"OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"}})
                  .find("environment variable OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL"),
              0u);
    EXPECT_NE(env_error({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "ftp://x/v1/traces"}})
                  .find("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
              std::string::npos);
}

TEST(TelemetrySettings, DisabledWinsOverAnEndpoint) {
    EXPECT_FALSE(from_env({{"OTEL_SDK_DISABLED", "TRUE"}, {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}).enabled());
    EXPECT_TRUE(from_env({{"OTEL_SDK_DISABLED", "false"}, {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318"}}).enabled());
    EXPECT_EQ(env_error({{"OTEL_SDK_DISABLED", "yes please"}}),
              "environment variable OTEL_SDK_DISABLED must be true or false, got \"yes please\"");
}

TEST(TelemetrySettings, HeadersArePercentDecodedAndTheTracesVariableWins) {
    const auto s = from_env({{"OTEL_EXPORTER_OTLP_HEADERS", " api-key = secret%20one , x-tenant=a%2Cb,"}});
    EXPECT_EQ(s.headers, (http_client::Headers{{"api-key", "secret one"}, {"x-tenant", "a,b"}}));
    const auto traces = from_env({{"OTEL_EXPORTER_OTLP_HEADERS", "a=1"}, {"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "b=2"}});
    EXPECT_EQ(traces.headers, (http_client::Headers{{"b", "2"}}));
}

TEST(TelemetrySettings, BadHeadersAreRefusedWithoutRepeatingTheirValues) {
    EXPECT_EQ(env_error({{"OTEL_EXPORTER_OTLP_HEADERS", "a=1,novalue"}}),
              "environment variable OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value");
    const auto bad_escape = env_error({{"OTEL_EXPORTER_OTLP_HEADERS", "k=sec%zzret"}});
    EXPECT_NE(bad_escape.find("percent-encoding"), std::string::npos);
    EXPECT_EQ(bad_escape.find("sec"), std::string::npos) << bad_escape;
    // A decoded line break would end the header and start another: refused.
    const auto injection = env_error({{"OTEL_EXPORTER_OTLP_TRACES_HEADERS", "k=secret%0D%0AHost:%20evil"}});
    EXPECT_EQ(injection,
              "environment variable OTEL_EXPORTER_OTLP_TRACES_HEADERS: the value of header k holds a control "
              "character");
    EXPECT_NE(env_error({{"OTEL_EXPORTER_OTLP_HEADERS", "bad name=1"}}).find("\"bad name\" is not a header name"),
              std::string::npos);
}

TEST(TelemetrySettings, ProtocolJsonIsTakenAndGrpcIsRefusedClearly) {
    const auto json = from_env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"}});
    EXPECT_EQ(json.protocol, OtlpProtocol::http_json);
    EXPECT_STREQ(json.content_type(), "application/json");
    EXPECT_EQ(from_env({{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"},
                        {"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"}})
                  .protocol,
              OtlpProtocol::http_protobuf);
    const auto grpc = env_error({{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"}});
    EXPECT_EQ(grpc.find("environment variable OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: grpc is not supported"), 0u) << grpc;
    EXPECT_NE(grpc.find("4318"), std::string::npos);
    EXPECT_EQ(env_error({{"OTEL_EXPORTER_OTLP_PROTOCOL", "thrift"}}),
              "environment variable OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, got \"thrift\"");
}

TEST(TelemetrySettings, TimeoutsAndBatchingComeFromTheirVariables) {
    const auto s = from_env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "2500"},
                             {"OTEL_BSP_SCHEDULE_DELAY", "200"},
                             {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
                             {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "10"},
                             {"OTEL_BSP_EXPORT_TIMEOUT", "7000"}});
    EXPECT_EQ(s.timeout.count(), 2500);
    EXPECT_EQ(s.schedule_delay.count(), 200);
    EXPECT_EQ(s.max_queue_size, 100u);
    EXPECT_EQ(s.max_export_batch_size, 10u);
    EXPECT_EQ(s.export_timeout.count(), 7000);
    EXPECT_EQ(from_env({{"OTEL_EXPORTER_OTLP_TIMEOUT", "1"}, {"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "3"}}).timeout.count(),
              3);
    EXPECT_EQ(env_error({{"OTEL_EXPORTER_OTLP_TIMEOUT", "10s"}}),
              "environment variable OTEL_EXPORTER_OTLP_TIMEOUT must be an integer from 1 to 600000, got \"10s\"");
    EXPECT_EQ(env_error({{"OTEL_BSP_MAX_QUEUE_SIZE", "0"}}),
              "environment variable OTEL_BSP_MAX_QUEUE_SIZE must be an integer from 1 to 10000000, got \"0\"");
    EXPECT_EQ(env_error({{"OTEL_BSP_SCHEDULE_DELAY", "-5"}}).find("OTEL_BSP_SCHEDULE_DELAY"), 21u);
    EXPECT_NE(env_error({{"OTEL_BSP_EXPORT_TIMEOUT", "99999999999999999999999"}}).find("OTEL_BSP_EXPORT_TIMEOUT"),
              std::string::npos);
    const auto batch = env_error({{"OTEL_BSP_MAX_QUEUE_SIZE", "10"}, {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "11"}});
    EXPECT_NE(batch.find("must not exceed the queue size (10"), std::string::npos) << batch;
}

TEST(TelemetrySettings, CompressionAndTheCollectorsCertificate) {
    EXPECT_FALSE(from_env({}).gzip);
    EXPECT_TRUE(from_env({{"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"}}).gzip);
    EXPECT_FALSE(
        from_env({{"OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"}, {"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "none"}}).gzip);
    EXPECT_EQ(env_error({{"OTEL_EXPORTER_OTLP_COMPRESSION", "zstd"}}),
              "environment variable OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none, got \"zstd\"");
    EXPECT_EQ(from_env({{"OTEL_EXPORTER_OTLP_CERTIFICATE", "/etc/a.pem"},
                        {"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "/etc/b.pem"}})
                  .certificate,
              "/etc/b.pem");
}

TEST(TelemetrySettings, SamplerAndItsArgument) {
    const auto s = from_env({{"OTEL_TRACES_SAMPLER", "parentbased_traceidratio"}, {"OTEL_TRACES_SAMPLER_ARG", "0.25"}});
    EXPECT_EQ(s.sampler, SamplerKind::parentbased_traceidratio);
    EXPECT_EQ(s.sampler_ratio, 0.25);
    EXPECT_EQ(from_env({{"OTEL_TRACES_SAMPLER", "always_off"}}).sampler, SamplerKind::always_off);
    EXPECT_EQ(from_env({{"OTEL_TRACES_SAMPLER", "always_on"}}).sampler, SamplerKind::always_on);
    EXPECT_EQ(from_env({{"OTEL_TRACES_SAMPLER", "traceidratio"}}).sampler, SamplerKind::traceidratio);
    EXPECT_EQ(from_env({{"OTEL_TRACES_SAMPLER", "parentbased_always_off"}}).sampler,
              SamplerKind::parentbased_always_off);
    EXPECT_NE(env_error({{"OTEL_TRACES_SAMPLER", "jaeger_remote"}}).find("got \"jaeger_remote\""), std::string::npos);
    EXPECT_EQ(env_error({{"OTEL_TRACES_SAMPLER_ARG", "1.5"}}),
              "environment variable OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got \"1.5\"");
    EXPECT_NE(env_error({{"OTEL_TRACES_SAMPLER_ARG", "half"}}).find("got \"half\""), std::string::npos);
}

TEST(TelemetrySettings, ServiceNameVariableWinsOverResourceAttributes) {
    const auto s = from_env({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=from-attrs,deployment.environment=prod%20eu"}});
    EXPECT_EQ(s.service_name, "from-attrs");
    const auto resource = s.resource();
    EXPECT_EQ(value_of(resource, "service.name"), "from-attrs");
    EXPECT_EQ(value_of(resource, "deployment.environment"), "prod eu");
    EXPECT_EQ(from_env({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=a"}, {"OTEL_SERVICE_NAME", "b"}}).service_name, "b");
    EXPECT_EQ(env_error({{"OTEL_RESOURCE_ATTRIBUTES", "=x"}}).find("OTEL_RESOURCE_ATTRIBUTES: entry 1"), 21u);
}

TEST(TelemetrySettings, TheResourceAlwaysNamesServiceSdkHostAndProcess) {
    TelemetrySettings s;
    s.resource_attributes = {{"host.name", "pod-7"}, {"telemetry.sdk.name", "spoofed"}, {"k8s.namespace", "tp"}};
    const auto resource = s.resource();
    EXPECT_EQ(value_of(resource, "service.name"), "toolport");
    EXPECT_EQ(value_of(resource, "service.version"), toolport::kToolportVersion);
    EXPECT_EQ(value_of(resource, "telemetry.sdk.name"), "toolport");
    EXPECT_EQ(value_of(resource, "telemetry.sdk.language"), "cpp");
    EXPECT_EQ(value_of(resource, "telemetry.sdk.version"), toolport::kToolportVersion);
    EXPECT_EQ(value_of(resource, "host.name"), "pod-7");
    EXPECT_EQ(value_of(resource, "process.pid"), std::to_string(::getpid()));
    EXPECT_EQ(value_of(resource, "k8s.namespace"), "tp");
    EXPECT_EQ(value_of(TelemetrySettings{}.resource(), "host.name").empty(), false);
}

TEST_F(TelemetryConfigTest, TheFileSectionSetsEveryKey) {
    const auto config = load(R"(
telemetry:
  endpoint: http://collector:4318/
  protocol: http/json
  headers:
    api-key: k1
  timeout_ms: 1500
  compression: gzip
  certificate: /etc/collector-ca.pem
  service_name: gateway-eu
  resource_attributes:
    deployment.environment: staging
  traces:
    sampler: traceidratio
    sampler_arg: 0.5
    capture_payloads: true
    schedule_delay_ms: 100
    max_queue_size: 64
    max_export_batch_size: 8
    export_timeout_ms: 4000
)");
    const auto& t = config.telemetry;
    EXPECT_TRUE(t.enabled());
    EXPECT_EQ(t.traces_endpoint, "http://collector:4318/v1/traces");
    EXPECT_EQ(t.protocol, OtlpProtocol::http_json);
    EXPECT_EQ(t.headers, (http_client::Headers{{"api-key", "k1"}}));
    EXPECT_EQ(t.timeout.count(), 1500);
    EXPECT_TRUE(t.gzip);
    EXPECT_EQ(t.certificate, "/etc/collector-ca.pem");
    EXPECT_EQ(t.service_name, "gateway-eu");
    EXPECT_EQ(t.resource_attributes,
              (std::vector<std::pair<std::string, std::string>>{{"deployment.environment", "staging"}}));
    EXPECT_EQ(t.sampler, SamplerKind::traceidratio);
    EXPECT_EQ(t.sampler_ratio, 0.5);
    EXPECT_TRUE(t.capture_payloads);
    EXPECT_EQ(t.schedule_delay.count(), 100);
    EXPECT_EQ(t.max_queue_size, 64u);
    EXPECT_EQ(t.max_export_batch_size, 8u);
    EXPECT_EQ(t.export_timeout.count(), 4000);
}

TEST_F(TelemetryConfigTest, TheTracesEndpointWinsInTheFileAndVariablesWinOverTheFile) {
    const auto config = load(R"(
telemetry:
  endpoint: http://base:4318
  enabled: false
  traces:
    endpoint: http://traces:4318/otlp/spans
)");
    EXPECT_EQ(config.telemetry.traces_endpoint, "http://traces:4318/otlp/spans");
    EXPECT_FALSE(config.telemetry.enabled());
    const auto over = from_env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://env:4318"}, {"OTEL_SDK_DISABLED", "false"}},
                               config.telemetry);
    EXPECT_EQ(over.traces_endpoint, "http://env:4318/v1/traces");
    EXPECT_TRUE(over.enabled());
    // The file's service_name, then OTEL_RESOURCE_ATTRIBUTES' service.name, then OTEL_SERVICE_NAME.
    TelemetrySettings named;
    named.service_name = "from-file";
    EXPECT_EQ(from_env({{"OTEL_RESOURCE_ATTRIBUTES", "a=1"}}, named).service_name, "from-file");
    EXPECT_EQ(from_env({{"OTEL_RESOURCE_ATTRIBUTES", "service.name=env"}}, named).service_name, "env");
}

TEST_F(TelemetryConfigTest, BadValuesInTheFileNameTheirKey) {
    EXPECT_NE(error_of("telemetry:\n  endpoint: collector:4318\n")
                  .find(":2: telemetry.endpoint: must be an http:// or https:// URL"),
              std::string::npos);
    const auto grpc = error_of("telemetry:\n  protocol: grpc\n");
    EXPECT_NE(grpc.find("telemetry.protocol: grpc is not supported"), std::string::npos) << grpc;
    EXPECT_NE(error_of("telemetry:\n  traces:\n    sampler_arg: 2\n")
                  .find("telemetry.traces.sampler_arg: must be between 0 and 1"),
              std::string::npos);
    EXPECT_NE(error_of("telemetry:\n  traces:\n    sampler: sometimes\n").find("telemetry.traces.sampler: must be"),
              std::string::npos);
    const auto unknown = error_of("telemetry:\n  trace:\n    sampler: always_on\n");
    EXPECT_NE(unknown.find("telemetry.trace: unknown key"), std::string::npos) << unknown;
    EXPECT_NE(unknown.find("traces"), std::string::npos) << unknown;
    const auto batch = error_of("telemetry:\n  traces:\n    max_queue_size: 4\n    max_export_batch_size: 5\n");
    EXPECT_NE(batch.find("telemetry.traces.max_export_batch_size: (5) must not exceed max_queue_size (4)"),
              std::string::npos)
        << batch;
    const auto header = error_of("telemetry:\n  headers:\n    \"a b\": x\n");
    EXPECT_NE(header.find("telemetry.headers: \"a b\" is not a header name"), std::string::npos) << header;
}
