// The OTLP trace encoders (observability/otlp_protobuf.hpp, otlp_json.hpp): the protobuf
// bytes of small messages checked byte by byte against field numbers and wire types read
// from opentelemetry-proto, the JSON mapping's keys and value forms, UTF-8 repair, and the
// committed sample request (tests/fixtures/otlp/) that tests/integration/otlp_wire.test.mjs
// decodes with the official definitions.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "observability/otlp_json.hpp"
#include "observability/otlp_protobuf.hpp"
#include "util/utf8.hpp"

using namespace toolport::observability;
using nlohmann::json;

namespace {

std::string bytes(std::initializer_list<unsigned> list) {
    std::string out;
    for (auto b : list) out.push_back(static_cast<char>(b));
    return out;
}

// A length-delimited field: tag byte(s), length (one byte: the pieces here are short), content.
std::string ld(unsigned tag, const std::string& content) {
    EXPECT_LT(content.size(), 128u);
    return bytes({tag, static_cast<unsigned>(content.size())}) + content;
}

SpanData small_span() {
    SpanData span;
    for (int i = 0; i < 16; ++i) span.trace_id[i] = static_cast<std::uint8_t>(i + 1);
    for (int i = 0; i < 8; ++i) span.span_id[i] = static_cast<std::uint8_t>(0x11 + i);
    span.flags = 1;
    span.name = "n";
    span.kind = SpanKind::server;
    span.start_unix_nano = 1;
    span.end_unix_nano = 2;
    return span;
}

std::string fixed64(std::uint64_t v) {
    std::string out;
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
    return out;
}

// The Span message of small_span(), field by field (trace/v1/trace.proto).
std::string small_span_bytes(unsigned flags_low = 0x01, unsigned flags_high = 0x01) {
    std::string trace_id, span_id;
    for (int i = 0; i < 16; ++i) trace_id.push_back(static_cast<char>(i + 1));
    for (int i = 0; i < 8; ++i) span_id.push_back(static_cast<char>(0x11 + i));
    return ld(0x0A, trace_id)                                         // 1 trace_id, bytes
           + ld(0x12, span_id)                                        // 2 span_id, bytes
           + ld(0x2A, "n")                                            // 5 name, string
           + bytes({0x30, 0x02})                                      // 6 kind, varint: SPAN_KIND_SERVER
           + bytes({0x39}) + fixed64(1)                               // 7 start_time_unix_nano, fixed64
           + bytes({0x41}) + fixed64(2)                               // 8 end_time_unix_nano, fixed64
           + bytes({0x85, 0x01, flags_low, flags_high, 0x00, 0x00});  // 16 flags, fixed32
}

// ExportTraceServiceRequest{resource_spans: [{resource, scope_spans: [{scope, spans}]}]}.
std::string request_bytes(const std::string& resource_attributes, const std::string& spans) {
    const std::string scope = ld(0x0A, "t") + ld(0x12, "1");  // InstrumentationScope name 1, version 2
    const std::string scope_spans = ld(0x0A, scope) + spans;  // ScopeSpans scope 1, spans 2
    const std::string resource_spans = ld(0x0A, resource_attributes) + ld(0x12, scope_spans);
    return ld(0x0A, resource_spans);
}

std::string encode_one(const SpanData& span, const Attributes& resource = {}) {
    return encode_otlp_protobuf(resource, {"t", "1"}, std::span<const SpanData>(&span, 1));
}

// The bytes of the one span in a request encoded by encode_one with no resource attributes.
std::string span_of(const std::string& request) {
    // 0A len [0A 00 (resource) 12 len [0A 06 scope, SPAN FIELD]]: every length one byte
    // only for small spans; this helper is for those.
    const std::size_t prefix = 2 + 2 + 2 + 8;
    EXPECT_GT(request.size(), prefix);
    return request.substr(prefix);
}

}  // namespace

TEST(OtlpProtobuf, ASmallRequestIsEncodedFieldByField) {
    const Attributes resource{{"service.name", std::string("s")}};
    // KeyValue{key: 1, value: 2 AnyValue{string_value: 1}} inside Resource.attributes (1).
    const std::string key_value = ld(0x0A, "service.name") + ld(0x12, ld(0x0A, "s"));
    const std::string expected = request_bytes(ld(0x0A, key_value), ld(0x12, small_span_bytes()));
    EXPECT_EQ(encode_one(small_span(), resource), expected);
}

TEST(OtlpProtobuf, ParentTraceStateEventsAndStatusHaveTheirFieldNumbers) {
    SpanData span = small_span();
    for (auto& b : span.parent_span_id) b = 0xAB;
    span.parent_is_remote = true;
    span.trace_state = "k=v";
    span.events.push_back({"e", 7, {}});
    span.status = SpanStatusCode::error;
    span.status_message = "bad";
    std::string trace_id, span_id;
    for (int i = 0; i < 16; ++i) trace_id.push_back(static_cast<char>(i + 1));
    for (int i = 0; i < 8; ++i) span_id.push_back(static_cast<char>(0x11 + i));
    const std::string expected = ld(0x0A, trace_id) + ld(0x12, span_id) + ld(0x1A, "k=v")  // 3 trace_state
                                 + ld(0x22, std::string(8, '\xAB'))                        // 4 parent_span_id
                                 + ld(0x2A, "n") + bytes({0x30, 0x02}) + bytes({0x39}) + fixed64(1) + bytes({0x41}) +
                                 fixed64(2) +
                                 ld(0x5A, bytes({0x09}) + fixed64(7) + ld(0x12, "e"))  // 11 events: time 1, name 2
                                 + ld(0x7A, ld(0x12, "bad") + bytes({0x18, 0x02}))     // 15 status: message 2, code 3
                                 + bytes({0x85, 0x01, 0x01, 0x03, 0x00, 0x00});        // flags: sampled, remote parent
    EXPECT_EQ(span_of(encode_one(span)), ld(0x12, expected));
}

TEST(OtlpProtobuf, AttributeValuesOfEveryTypeAreEncodedAsAnyValue) {
    SpanData span = small_span();
    span.attributes = {{"s", std::string("")},
                       {"b", false},
                       {"i", std::int64_t{-1}},
                       {"d", 1.5},
                       {"p", std::int64_t{300}}};
    const std::string encoded = span_of(encode_one(span));
    // Each oneof member is written even at its type's default (it is what is set).
    const std::string attributes =
        ld(0x4A, ld(0x0A, "s") + ld(0x12, ld(0x0A, ""))) + ld(0x4A, ld(0x0A, "b") + ld(0x12, bytes({0x10, 0x00}))) +
        ld(0x4A, ld(0x0A, "i") + ld(0x12, bytes({0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}))) +
        ld(0x4A, ld(0x0A, "d") + ld(0x12, bytes({0x21}) + fixed64(0x3FF8000000000000ull))) +
        ld(0x4A, ld(0x0A, "p") + ld(0x12, bytes({0x18, 0xAC, 0x02})));
    EXPECT_NE(encoded.find(attributes), std::string::npos);
}

TEST(OtlpProtobuf, LongFieldsGetMultiByteLengthsAndNestedLengthsFollow) {
    SpanData span = small_span();
    span.name = std::string(200, 'x');
    const std::string encoded = encode_one(span);
    // name: tag 0x2A, length 200 = 0xC8 0x01.
    EXPECT_NE(encoded.find(bytes({0x2A, 0xC8, 0x01}) + std::string(200, 'x')), std::string::npos);
    // The request's own length covers the rest exactly: 0A, varint length, content.
    ASSERT_GE(encoded.size(), 3u);
    EXPECT_EQ(static_cast<unsigned char>(encoded[0]), 0x0A);
    const std::size_t length = (static_cast<unsigned char>(encoded[1]) & 0x7F) |
                               (static_cast<std::size_t>(static_cast<unsigned char>(encoded[2])) << 7);
    EXPECT_EQ(length, encoded.size() - 3);
}

TEST(OtlpProtobuf, InvalidUtf8IsRepairedSoReceiversAcceptTheMessage) {
    SpanData span = small_span();
    span.name =
        "a\xFF"
        "b";
    const std::string encoded = encode_one(span);
    EXPECT_NE(encoded.find(ld(0x2A,
                              "a\xEF\xBF\xBD"
                              "b")),
              std::string::npos);
}

TEST(OtlpProtobuf, AnEmptyBatchIsAValidRequestWithItsResourceAndScope) {
    const std::string encoded = encode_otlp_protobuf({}, {"t", "1"}, {});
    EXPECT_EQ(encoded, request_bytes("", ""));
}

TEST(OtlpJson, UsesTheOtlpJsonMapping) {
    SpanData span = small_span();
    for (auto& b : span.parent_span_id) b = 0xAB;
    span.trace_state = "k=v";
    span.start_unix_nano = 1700000000123456789ull;
    span.attributes = {{"s", std::string("x")},
                       {"b", true},
                       {"i", std::int64_t{-9007199254740993}},
                       {"d", 0.25},
                       {"n", std::numeric_limits<double>::quiet_NaN()}};
    span.events.push_back({"e", 5, {{"k", std::int64_t{1}}}});
    span.status = SpanStatusCode::error;
    span.status_message = "bad";
    const auto doc = json::parse(encode_otlp_json({{"service.name", std::string("svc")}}, {"toolport", "9.9"},
                                                  std::span<const SpanData>(&span, 1)));
    const json expected = json::parse(R"({
      "resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
        "scopeSpans": [{
          "scope": {"name": "toolport", "version": "9.9"},
          "spans": [{
            "traceId": "0102030405060708090a0b0c0d0e0f10",
            "spanId": "1112131415161718",
            "traceState": "k=v",
            "parentSpanId": "abababababababab",
            "name": "n",
            "kind": 2,
            "startTimeUnixNano": "1700000000123456789",
            "endTimeUnixNano": "2",
            "attributes": [
              {"key": "s", "value": {"stringValue": "x"}},
              {"key": "b", "value": {"boolValue": true}},
              {"key": "i", "value": {"intValue": "-9007199254740993"}},
              {"key": "d", "value": {"doubleValue": 0.25}},
              {"key": "n", "value": {"doubleValue": "NaN"}}
            ],
            "events": [{"timeUnixNano": "5", "name": "e",
                        "attributes": [{"key": "k", "value": {"intValue": "1"}}]}],
            "status": {"message": "bad", "code": 2},
            "flags": 257
          }]
        }]
      }]
    })");
    EXPECT_EQ(doc, expected) << doc.dump(2);
}

TEST(OtlpJson, InvalidUtf8IsRepairedAndDefaultsAreLeftOut) {
    SpanData span = small_span();
    span.name = "a\xC0";
    const auto doc = json::parse(encode_otlp_json({}, {"t", ""}, std::span<const SpanData>(&span, 1)));
    const auto& s = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    EXPECT_EQ(s["name"], "a\xEF\xBF\xBD");
    EXPECT_FALSE(s.contains("parentSpanId"));
    EXPECT_FALSE(s.contains("traceState"));
    EXPECT_FALSE(s.contains("status"));
    EXPECT_FALSE(s.contains("attributes"));
    EXPECT_EQ(doc["resourceSpans"][0]["resource"], json::object());
    EXPECT_EQ(doc["resourceSpans"][0]["scopeSpans"][0]["scope"], (json{{"name", "t"}}));
}

TEST(Utf8, ValidatesAndRepairsLikeRfc3629) {
    using toolport::util::to_valid_utf8;
    using toolport::util::valid_utf8;
    EXPECT_TRUE(valid_utf8(""));
    EXPECT_TRUE(valid_utf8("plain ascii"));
    EXPECT_TRUE(valid_utf8("\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));  // é € 😀
    EXPECT_FALSE(valid_utf8("\xC0\xAF"));                             // overlong '/'
    EXPECT_FALSE(valid_utf8("\xED\xA0\x80"));                         // a surrogate
    EXPECT_FALSE(valid_utf8("\xF4\x90\x80\x80"));                     // above U+10FFFF
    EXPECT_FALSE(valid_utf8("\xE2\x82"));                             // cut short
    EXPECT_EQ(to_valid_utf8("a\xE2\x82z"), "a\xEF\xBF\xBD\xEF\xBF\xBDz");
    EXPECT_EQ(to_valid_utf8("\xC3\xA9"), "\xC3\xA9");
}

// ---- The sample request the integration test decodes with the official definitions ----

namespace {

std::filesystem::path fixture_dir() {
    return std::filesystem::path(__FILE__).parent_path().parent_path() / "fixtures" / "otlp";
}

// Every field the encoders write, in one batch: a root SERVER span with events and
// attributes of each type, a CLIENT child with an error status, a span whose parent is
// remote with a tracestate, and text that needs repair.
std::vector<SpanData> sample_spans() {
    std::vector<SpanData> spans(3);
    auto id = [](auto& bytes, std::uint8_t seed) {
        for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>(seed + 17 * i);
    };
    auto& server = spans[0];
    id(server.trace_id, 0x4B);
    id(server.span_id, 0x01);
    server.flags = 1;
    server.name = "tools/call get_weather";
    server.kind = SpanKind::server;
    server.start_unix_nano = 1764300000000000000ull;
    server.end_unix_nano = 1764300000012345678ull;
    server.attributes = {{"mcp.method.name", std::string("tools/call")},
                         {"gen_ai.tool.name", std::string("get_weather")},
                         {"jsonrpc.request.id", std::string("7")},
                         {"rpc.response.status_code", std::int64_t{-32602}},
                         {"toolport.cache.hit", false},
                         {"toolport.budget.share", 0.125},
                         {"toolport.note", std::string("caf\xC3\xA9 \xFF")}};
    server.events = {{"validation", 1764300000000100000ull, {}},
                     {"budget.reserve", 1764300000000200000ull, {{"toolport.budget.reserved", std::int64_t{12}}}}};
    server.status = SpanStatusCode::ok;

    auto& client = spans[1];
    client.trace_id = server.trace_id;
    id(client.span_id, 0x02);
    client.parent_span_id = server.span_id;
    client.flags = 1;
    client.name = "GET";
    client.kind = SpanKind::client;
    client.start_unix_nano = 1764300000001000000ull;
    client.end_unix_nano = 1764300000011000000ull;
    client.attributes = {{"server.address", std::string("api.example.test")}, {"server.port", std::int64_t{443}}};
    client.status = SpanStatusCode::error;
    client.status_message = "HTTP 503";

    auto& remote = spans[2];
    id(remote.trace_id, 0x9C);
    id(remote.span_id, 0x03);
    id(remote.parent_span_id, 0x04);
    remote.parent_is_remote = true;
    remote.trace_state = "vendor=abc,other=1";
    remote.flags = 1;
    remote.name = "prompts/get";
    remote.kind = SpanKind::internal;
    remote.start_unix_nano = 1764300001000000000ull;
    remote.end_unix_nano = 1764300001000000001ull;
    return spans;
}

Attributes sample_resource() {
    return {{"service.name", std::string("toolport")},
            {"service.version", std::string("0.1.0")},
            {"telemetry.sdk.name", std::string("toolport")},
            {"telemetry.sdk.language", std::string("cpp")},
            {"process.pid", std::int64_t{4242}}};
}

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

// TOOLPORT_UPDATE_OTLP_FIXTURES=1 writes them anew (after a deliberate change of the encoders).
TEST(OtlpSample, TheEncodersStillWriteTheCommittedSampleRequest) {
    const auto spans = sample_spans();
    const std::string protobuf = encode_otlp_protobuf(sample_resource(), {"toolport", "0.1.0"}, spans);
    const std::string json_text = encode_otlp_json(sample_resource(), {"toolport", "0.1.0"}, spans) + "\n";
    if (std::getenv("TOOLPORT_UPDATE_OTLP_FIXTURES")) {
        std::filesystem::create_directories(fixture_dir());
        std::ofstream(fixture_dir() / "sample_request.binpb", std::ios::binary) << protobuf;
        std::ofstream(fixture_dir() / "sample_request.json", std::ios::binary) << json_text;
    }
    EXPECT_EQ(protobuf, read_file(fixture_dir() / "sample_request.binpb"));
    EXPECT_EQ(json_text, read_file(fixture_dir() / "sample_request.json"));
}

TEST(OtlpJson, StringsAreEscapedSoAnyTextSurvivesTheRoundTrip) {
    SpanData span = small_span();
    span.name =
        "q\"b\\s/n\nr\rt\tc\x01\x1f"
        "d\x7f";
    span.attributes = {{"k\"ey", std::string("caf\xC3\xA9 \xF0\x9F\x98\x80")}};
    const auto text = encode_otlp_json({}, {"t", "1"}, std::span<const SpanData>(&span, 1));
    EXPECT_NE(text.find(R"("name":"q\"b\\s/n\nr\rt\tc\u0001\u001fd)"), std::string::npos) << text;
    const auto doc = json::parse(text);
    const auto& s = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    EXPECT_EQ(s["name"], span.name);
    EXPECT_EQ(s["attributes"][0]["key"], "k\"ey");
    EXPECT_EQ(s["attributes"][0]["value"]["stringValue"], "caf\xC3\xA9 \xF0\x9F\x98\x80");
}

TEST(OtlpResponse, PartialSuccessIsReadFromProtobufAndJson) {
    // ExportTraceServiceResponse{partial_success (1): {rejected_spans (1): 2, error_message (2): "too old"}}
    const auto partial = decode_otlp_partial_success(ld(0x0A, bytes({0x08, 0x02}) + ld(0x12, "too old")));
    ASSERT_TRUE(partial.has_value());
    EXPECT_EQ(partial->rejected_spans, 2);
    EXPECT_EQ(partial->error_message, "too old");
    EXPECT_FALSE(decode_otlp_partial_success("").has_value()) << "an empty response is a full success";
    // Unknown fields are skipped; a truncated message is unreadable.
    const auto with_unknown = decode_otlp_partial_success(bytes({0x18, 0x05}) + ld(0x0A, bytes({0x08, 0x07})));
    ASSERT_TRUE(with_unknown.has_value());
    EXPECT_EQ(with_unknown->rejected_spans, 7);
    EXPECT_FALSE(decode_otlp_partial_success(bytes({0x0A, 0x05, 0x08})).has_value());
    EXPECT_FALSE(decode_otlp_partial_success(bytes({0x0A, 0x02, 0x08, 0xFF})).has_value());

    const auto json_partial = decode_otlp_json_partial_success(
        R"({"partialSuccess":{"rejectedSpans":"3","errorMessage":"x"}})");
    ASSERT_TRUE(json_partial.has_value());
    EXPECT_EQ(json_partial->rejected_spans, 3);
    EXPECT_EQ(json_partial->error_message, "x");
    EXPECT_EQ(decode_otlp_json_partial_success(R"({"partialSuccess":{"rejectedSpans":4}})")->rejected_spans, 4);
    EXPECT_FALSE(decode_otlp_json_partial_success("{}").has_value());
    EXPECT_FALSE(decode_otlp_json_partial_success("not json").has_value());
    EXPECT_FALSE(decode_otlp_json_partial_success(R"({"partialSuccess":{"rejectedSpans":"3x"}})").has_value());
}
