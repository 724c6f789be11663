// The OTLP exporter (telemetry/otlp_exporter.hpp) against a real HTTP receiver on loopback
// (test_support::ScriptedServer): batching by size and by time, the exact request it sends
// (URL, headers, content type, the encoder's bytes), the bounded queue's drops, retries
// (503 then 200, Retry-After, 400 not retried, a receiver that is down), flush at shutdown,
// and a receiver that never answers holding up neither on_end nor the destructor.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include <nlohmann/json.hpp>

#include "http_client/body_decoder.hpp"
#include "http_test_servers.hpp"
#include "observability/metrics.hpp"
#include "observability/otlp_protobuf.hpp"
#include "telemetry/otlp_exporter.hpp"

using namespace toolport;
using namespace toolport::telemetry;
using test_support::ScriptedReply;
using test_support::ScriptedServer;
using test_support::SeenRequest;
using namespace std::chrono_literals;

namespace {

http_client::ClientOptions no_proxy() {
    http_client::ClientOptions options;
    options.proxy = {};
    return options;
}

TelemetrySettings settings_for(const std::string& url) {
    TelemetrySettings s;
    s.traces_endpoint = url;
    s.schedule_delay = 60s;  // tests that want the timer set it
    s.max_queue_size = 1000;
    s.max_export_batch_size = 100;
    s.timeout = 5s;
    s.export_timeout = 10s;
    return s;
}

observability::SpanData span(int n) {
    observability::SpanData s;
    s.trace_id.fill(0x11);
    s.span_id.fill(static_cast<std::uint8_t>(n));
    s.flags = 1;
    s.name = "span " + std::to_string(n);
    s.kind = observability::SpanKind::server;
    s.start_unix_nano = 1000 + n;
    s.end_unix_nano = 2000 + n;
    return s;
}

// Waits (up to 10 s) for `done`.
bool eventually(const std::function<bool()>& done) {
    const auto until = std::chrono::steady_clock::now() + 10s;
    while (!done()) {
        if (std::chrono::steady_clock::now() > until) return false;
        std::this_thread::sleep_for(5ms);
    }
    return true;
}

// The span names of a JSON export request.
std::vector<std::string> names_in(const SeenRequest& request) {
    std::vector<std::string> names;
    const auto doc = nlohmann::json::parse(request.body);
    for (const auto& s : doc["resourceSpans"][0]["scopeSpans"][0]["spans"]) names.push_back(s["name"]);
    return names;
}

double metric(const std::string& name, const observability::Labels& labels = {}) {
    return observability::metrics().value(name, labels).value_or(0);
}

// A loopback port that nothing listens on.
unsigned short closed_port() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
}

}  // namespace

TEST(OtlpExporter, AFullBatchIsPostedAtOnceWithHeadersContentTypeAndTheEncodersBytes) {
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; });
    auto settings = settings_for(server.url("/v1/traces"));
    settings.max_export_batch_size = 3;
    settings.headers = {{"api-key", "secret"}};
    OtlpExporter exporter(settings, no_proxy());
    std::vector<observability::SpanData> sent;
    for (int i = 1; i <= 3; ++i) {
        sent.push_back(span(i));
        exporter.on_end(span(i));
    }
    // The schedule delay is a minute: only the full batch can have sent it.
    ASSERT_TRUE(eventually([&] { return exporter.stats().spans_exported == 3; }));
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].method, "POST");
    EXPECT_EQ(requests[0].target, "/v1/traces");
    EXPECT_EQ(requests[0].header("Content-Type"), "application/x-protobuf");
    EXPECT_EQ(requests[0].header("api-key"), "secret");
    EXPECT_EQ(requests[0].body,
              observability::encode_otlp_protobuf(settings.resource(), observability::toolport_scope(), sent));
}

TEST(OtlpExporter, TheScheduleDelaySendsAPartialBatchAsJson) {
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; });
    auto settings = settings_for(server.url("/custom/path"));
    settings.schedule_delay = 50ms;
    settings.protocol = OtlpProtocol::http_json;
    OtlpExporter exporter(settings, no_proxy());
    exporter.on_end(span(1));
    exporter.on_end(span(2));
    ASSERT_TRUE(eventually([&] { return exporter.stats().spans_exported == 2; }));
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].target, "/custom/path");
    EXPECT_EQ(requests[0].header("Content-Type"), "application/json");
    EXPECT_EQ(names_in(requests[0]), (std::vector<std::string>{"span 1", "span 2"}));
}

TEST(OtlpExporter, FlushSendsEverythingQueuedInBatches) {
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; });
    auto settings = settings_for(server.url("/v1/traces"));
    settings.max_export_batch_size = 10;
    settings.protocol = OtlpProtocol::http_json;
    OtlpExporter exporter(settings, no_proxy());
    for (int i = 0; i < 25; ++i) exporter.on_end(span(i));
    exporter.flush(10000);
    EXPECT_EQ(exporter.stats().spans_exported, 25u);
    std::vector<std::size_t> sizes;
    std::vector<std::string> names;
    for (const auto& r : server.requests()) {
        auto batch = names_in(r);
        sizes.push_back(batch.size());
        names.insert(names.end(), batch.begin(), batch.end());
    }
    EXPECT_EQ(sizes, (std::vector<std::size_t>{10, 10, 5}));
    ASSERT_EQ(names.size(), 25u);
    EXPECT_EQ(names.front(), "span 0");
    EXPECT_EQ(names.back(), "span 24");
}

TEST(OtlpExporter, A503IsRetriedAndThenSucceeds) {
    std::atomic<int> calls{0};
    ScriptedServer server([&](const SeenRequest&) { return ScriptedReply{.status = ++calls == 1 ? 503u : 200u}; });
    const double failed_before = metric("toolport_trace_export_requests_failed_total", {{"reason", "http_503"}});
    OtlpExporter exporter(settings_for(server.url("/v1/traces")), no_proxy());
    exporter.on_end(span(1));
    exporter.flush(10000);
    const auto stats = exporter.stats();
    EXPECT_EQ(stats.spans_exported, 1u);
    EXPECT_EQ(stats.requests_sent, 2u);
    EXPECT_EQ(stats.requests_failed, 1u);
    EXPECT_EQ(stats.dropped_export_failed, 0u);
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[0].body, requests[1].body);
    EXPECT_EQ(metric("toolport_trace_export_requests_failed_total", {{"reason", "http_503"}}), failed_before + 1);
}

TEST(OtlpExporter, RetryAfterIsHonoured) {
    std::atomic<int> calls{0};
    ScriptedServer server([&](const SeenRequest&) {
        if (++calls == 1) return ScriptedReply{.status = 429, .headers = {{"Retry-After", "1"}}};
        return ScriptedReply{.status = 200};
    });
    OtlpExporter exporter(settings_for(server.url("/v1/traces")), no_proxy());
    exporter.on_end(span(1));
    exporter.flush(10000);
    EXPECT_EQ(exporter.stats().spans_exported, 1u);
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 2u);
    // Without Retry-After the first retry waits 100-200 ms.
    EXPECT_GE(requests[1].at - requests[0].at, 950ms);
}

TEST(OtlpExporter, A400IsNotRetriedAndItsSpansAreCountedAsDropped) {
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 400, .body = "bad span"}; });
    const double dropped_before = metric("toolport_trace_spans_dropped_total", {{"reason", "export_failed"}});
    OtlpExporter exporter(settings_for(server.url("/v1/traces")), no_proxy());
    exporter.on_end(span(1));
    exporter.on_end(span(2));
    exporter.flush(10000);
    const auto stats = exporter.stats();
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(stats.requests_sent, 1u);
    EXPECT_EQ(stats.spans_exported, 0u);
    EXPECT_EQ(stats.dropped_export_failed, 2u);
    EXPECT_EQ(metric("toolport_trace_spans_dropped_total", {{"reason", "export_failed"}}), dropped_before + 2);
}

TEST(OtlpExporter, AReceiverThatIsDownIsRetriedUntilTheExportTimeoutThenDropped) {
    auto settings = settings_for("http://127.0.0.1:" + std::to_string(closed_port()) + "/v1/traces");
    settings.export_timeout = 600ms;
    OtlpExporter exporter(settings, no_proxy());
    for (int i = 0; i < 5; ++i) exporter.on_end(span(i));
    exporter.flush(10000);
    const auto stats = exporter.stats();
    EXPECT_EQ(stats.dropped_export_failed, 5u);
    EXPECT_GE(stats.requests_failed, 2u) << "a refused connection is retried";
    EXPECT_EQ(stats.requests_failed, stats.requests_sent);
}

TEST(OtlpExporter, AReceiverThatNeverAnswersBlocksNeitherOnEndNorShutdownAndAFullQueueDrops) {
    std::atomic<int> calls{0};
    ScriptedServer server([&](const SeenRequest&) {
        ++calls;
        return ScriptedReply{.status = 200, .delay_ms = 60000};
    });
    auto settings = settings_for(server.url("/v1/traces"));
    settings.max_queue_size = 10;
    settings.max_export_batch_size = 5;
    settings.timeout = 60s;
    settings.export_timeout = 60s;
    const double dropped_before = metric("toolport_trace_spans_dropped_total", {{"reason", "queue_full"}});
    const auto started = std::chrono::steady_clock::now();
    {
        OtlpExporter exporter(settings, no_proxy());
        for (int i = 0; i < 5; ++i) exporter.on_end(span(i));
        ASSERT_TRUE(eventually([&] { return calls.load() == 1; }));  // the first batch is on its way, unanswered
        for (int i = 0; i < 100; ++i) exporter.on_end(span(i));      // 10 queue, 90 are dropped
        const auto stats = exporter.stats();
        EXPECT_EQ(stats.dropped_queue_full, 90u);
        EXPECT_EQ(stats.spans_exported, 0u);
        EXPECT_EQ(metric("toolport_trace_spans_dropped_total", {{"reason", "queue_full"}}), dropped_before + 90);
        exporter.flush(100);  // gives up after its timeout: the receiver still has not answered
        EXPECT_EQ(exporter.stats().spans_exported, 0u);
    }  // the destructor cancels the request under way instead of waiting for its minute
    EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);
}

TEST(OtlpExporter, TheFactoryMakesNoneWithoutAnEndpointAndRefusesABadCaFile) {
    TelemetrySettings off;
    EXPECT_EQ(make_otlp_exporter(off, no_proxy()), nullptr);
    auto disabled = settings_for("http://127.0.0.1:4318/v1/traces");
    disabled.disabled = true;
    EXPECT_EQ(make_otlp_exporter(disabled, no_proxy()), nullptr);
    auto options = no_proxy();
    options.ca_file = "/nonexistent/toolport-test-ca.pem";
    EXPECT_THROW(make_otlp_exporter(settings_for("https://127.0.0.1:4318/v1/traces"), options), TelemetrySettingsError);
    auto exporter = make_otlp_exporter(settings_for("http://127.0.0.1:4318/v1/traces"), no_proxy());
    ASSERT_NE(exporter, nullptr);
    exporter->flush(0);  // nothing queued: returns at once
}

TEST(OtlpExporter, ExportsOverHttpsWithTheDownstreamClientsTrustedCa) {
    test_support::TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; }, &leaf);
    auto options = no_proxy();
    options.ca_file = ca.write_cert_file("otlp_exporter_ca.pem");
    OtlpExporter exporter(settings_for("https://localhost:" + std::to_string(server.port()) + "/v1/traces"), options);
    exporter.on_end(span(1));
    exporter.flush(10000);
    EXPECT_EQ(exporter.stats().spans_exported, 1u);
    EXPECT_EQ(server.requests().size(), 1u);
}

TEST(OtlpExporter, AnUntrustedCertificateIsAFailedExportNotASpanSent) {
    test_support::TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; }, &leaf);
    auto settings = settings_for("https://localhost:" + std::to_string(server.port()) + "/v1/traces");
    settings.export_timeout = 2s;
    OtlpExporter exporter(settings, no_proxy());  // the test CA is not trusted
    exporter.on_end(span(1));
    exporter.flush(10000);
    const auto stats = exporter.stats();
    EXPECT_EQ(stats.spans_exported, 0u);
    EXPECT_EQ(stats.dropped_export_failed, 1u);
    EXPECT_EQ(stats.requests_failed, 1u) << "a certificate that is not trusted is not retried";
    EXPECT_TRUE(server.requests().empty());
}

TEST(OtlpExporter, GzipCompressesTheBodyAndSaysSo) {
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; });
    auto settings = settings_for(server.url("/v1/traces"));
    settings.gzip = true;
    OtlpExporter exporter(settings, no_proxy());
    std::vector<observability::SpanData> sent;
    for (int i = 0; i < 20; ++i) {
        sent.push_back(span(i));
        exporter.on_end(span(i));
    }
    exporter.flush(10000);
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].header("Content-Encoding"), "gzip");
    const auto plain = observability::encode_otlp_protobuf(settings.resource(), observability::toolport_scope(), sent);
    EXPECT_LT(requests[0].body.size(), plain.size() / 2);
    http_client::BodyDecoder decoder("gzip", 1 << 20);
    std::string inflated;
    ASSERT_TRUE(decoder.feed(requests[0].body, inflated));
    decoder.finish();
    EXPECT_EQ(inflated, plain);
}

TEST(OtlpExporter, TheCollectorsOwnCertificateIsTrustedWithoutTheDownstreamCaFile) {
    test_support::TestCa ca;
    auto leaf = ca.leaf({"localhost"});
    ScriptedServer server([](const SeenRequest&) { return ScriptedReply{.status = 200}; }, &leaf);
    auto settings = settings_for("https://localhost:" + std::to_string(server.port()) + "/v1/traces");
    settings.certificate = ca.write_cert_file("otlp_collector_ca.pem");
    auto exporter = make_otlp_exporter(settings, no_proxy());
    ASSERT_NE(exporter, nullptr);
    exporter->on_end(span(1));
    exporter->flush(10000);
    EXPECT_EQ(exporter->stats().spans_exported, 1u);
    settings.certificate = "/nonexistent/collector-ca.pem";
    EXPECT_THROW(make_otlp_exporter(settings, no_proxy()), TelemetrySettingsError);
}

TEST(OtlpExporter, APartialSuccessIsNotResentAndItsRejectedSpansAreCounted) {
    // ExportTraceServiceResponse{partial_success: {rejected_spans: 2, error_message: "too old"}}
    const std::string partial = std::string("\x0A\x0B\x08\x02\x12\x07", 6) + "too old";
    ScriptedServer server([&](const SeenRequest&) {
        return ScriptedReply{.status = 200, .headers = {{"Content-Type", "application/x-protobuf"}}, .body = partial};
    });
    const double rejected_before = metric("toolport_trace_spans_dropped_total", {{"reason", "rejected"}});
    OtlpExporter exporter(settings_for(server.url("/v1/traces")), no_proxy());
    for (int i = 0; i < 5; ++i) exporter.on_end(span(i));
    exporter.flush(10000);
    const auto stats = exporter.stats();
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_EQ(stats.spans_exported, 3u);
    EXPECT_EQ(stats.dropped_rejected, 2u);
    EXPECT_EQ(metric("toolport_trace_spans_dropped_total", {{"reason", "rejected"}}), rejected_before + 2);
}
