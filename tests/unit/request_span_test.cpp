// The SERVER span of an inbound MCP request (server/request_span.hpp) as the OpenTelemetry
// MCP conventions describe it, its parent from params._meta, its error marks, and the
// conventions' operation metric.
#include <gtest/gtest.h>

#include <mutex>

#include "manual_executor.hpp"
#include "observability/metrics.hpp"
#include "observability/tracer.hpp"
#include "server/session.hpp"
#include "server/tool_error.hpp"
#include "util/json.hpp"

using namespace toolport;
using observability::SpanData;

namespace {

constexpr const char* kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

struct Collector : observability::SpanProcessor {
    std::vector<SpanData> spans;
    void on_end(SpanData&& span) override { spans.push_back(std::move(span)); }
    void flush(int) override {}
};

const observability::AttributeValue* attribute(const SpanData& span, std::string_view key) {
    for (const auto& a : span.attributes) {
        if (a.key == key) return &a.value;
    }
    return nullptr;
}

std::string text_attribute(const SpanData& span, std::string_view key) {
    const auto* value = attribute(span, key);
    return value && std::holds_alternative<std::string>(*value) ? std::get<std::string>(*value) : "<none>";
}

class RequestSpanTest : public ::testing::Test {
protected:
    RequestSpanTest() {
        observability::tracer().configure(observability::Sampler(), collector);
        server = std::make_unique<McpServer>(exec, ServerOptions{});
        ToolSpec echo;
        echo.name = "echo_span";
        echo.description = "echo";
        echo.input_schema = Json{{"type", "object"}};
        echo.handler = [](RequestContext&, const Json&) -> Task<ToolResult> { co_return ToolResult::text("hi"); };
        server->registry().add_tool(std::move(echo));
        ToolSpec failing;
        failing.name = "fails_span";
        failing.description = "fails";
        failing.input_schema = Json{{"type", "object"}};
        failing.handler = [](RequestContext&, const Json&) -> Task<ToolResult> {
            co_return ToolResult::error("it failed");
        };
        server->registry().add_tool(std::move(failing));
        session = server->open_session([this](const Json& m, const protocol::RequestId*) { out.push_back(m); },
                                       CallerIdentity{.session_id = "session-1"});
        call(0, "initialize",
             {{"protocolVersion", "2025-11-25"},
              {"capabilities", Json::object()},
              {"clientInfo", {{"name", "t"}, {"version", "1"}}}});
        session->receive(std::get<protocol::Message>(
            protocol::classify(Json{{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}})));
        exec.run();
        collector->spans.clear();
    }
    ~RequestSpanTest() override { observability::tracer().configure(observability::Sampler(), nullptr); }

    void call(int id, const std::string& method, Json params) {
        session->receive(std::get<protocol::Message>(protocol::classify(protocol::make_request(id, method, params))));
        exec.run();
    }

    std::shared_ptr<Collector> collector = std::make_shared<Collector>();
    test_support::ManualExecutor exec;
    std::unique_ptr<McpServer> server;
    std::shared_ptr<ServerSession> session;
    std::vector<Json> out;
};

}  // namespace

TEST_F(RequestSpanTest, AToolCallIsAServerSpanUnderTheCallersTraceContext) {
    call(7, "tools/call",
         {{"name", "echo_span"},
          {"arguments", Json::object()},
          {"_meta", {{"traceparent", kParent}, {"tracestate", "rojo=1"}}}});
    ASSERT_EQ(collector->spans.size(), 1u);
    const SpanData& span = collector->spans[0];
    EXPECT_EQ(span.name, "tools/call echo_span");
    EXPECT_EQ(span.kind, observability::SpanKind::server);
    EXPECT_EQ(observability::to_hex(span.trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(observability::to_hex(span.parent_span_id), "00f067aa0ba902b7");
    EXPECT_TRUE(span.parent_is_remote);
    EXPECT_EQ(span.trace_state, "rojo=1");
    EXPECT_EQ(text_attribute(span, "mcp.method.name"), "tools/call");
    EXPECT_EQ(text_attribute(span, "gen_ai.tool.name"), "echo_span");
    EXPECT_EQ(text_attribute(span, "gen_ai.operation.name"), "execute_tool");
    EXPECT_EQ(text_attribute(span, "jsonrpc.request.id"), "7");
    EXPECT_EQ(text_attribute(span, "mcp.session.id"), "session-1");
    EXPECT_EQ(text_attribute(span, "mcp.protocol.version"), "2025-11-25");
    EXPECT_EQ(text_attribute(span, "network.transport"), "tcp");
    EXPECT_EQ(attribute(span, "error.type"), nullptr);
    EXPECT_EQ(span.status, observability::SpanStatusCode::unset);
}

TEST_F(RequestSpanTest, WithoutTraceContextARequestStartsATrace) {
    call(8, "tools/list", Json::object());
    ASSERT_EQ(collector->spans.size(), 1u);
    EXPECT_EQ(collector->spans[0].name, "tools/list");
    EXPECT_TRUE(collector->spans[0].parent_span_id == observability::SpanId{});
    // The session records the operation metric of every method but a tools/call answered
    // with a result (the pipeline's observe stage records those).
    EXPECT_GE(observability::metrics()
                  .value("mcp_server_operation_duration_seconds", {{"mcp_method_name", "tools/list"}})
                  .value_or(0),
              1);
}

TEST_F(RequestSpanTest, AToolErrorAndAJsonRpcErrorMarkTheSpan) {
    call(9, "tools/call", {{"name", "fails_span"}, {"arguments", Json::object()}});
    call(10, "resources/read", {{"uri", "nothing://here"}});
    ASSERT_EQ(collector->spans.size(), 2u);
    EXPECT_EQ(text_attribute(collector->spans[0], "error.type"), "tool_error");
    EXPECT_EQ(collector->spans[0].status, observability::SpanStatusCode::error);
    const SpanData& read = collector->spans[1];
    EXPECT_EQ(read.name, "resources/read");
    EXPECT_EQ(text_attribute(read, "mcp.resource.uri"), "nothing://here");
    const std::string code = text_attribute(read, "error.type");
    EXPECT_EQ(code.front(), '-') << code;
    EXPECT_EQ(text_attribute(read, "rpc.response.status_code"), code);
    EXPECT_GE(observability::metrics()
                  .value("mcp_server_operation_duration_seconds",
                         {{"mcp_method_name", "resources/read"}, {"error_type", code}})
                  .value_or(0),
              1);
}

TEST_F(RequestSpanTest, TracingOffRecordsNothing) {
    observability::tracer().configure(observability::Sampler(), nullptr);
    call(11, "tools/call",
         {{"name", "echo_span"}, {"arguments", Json::object()}, {"_meta", {{"traceparent", kParent}}}});
    EXPECT_TRUE(collector->spans.empty());
}

TEST_F(RequestSpanTest, ArgumentsAndResultsOnlyWhenOptedInAndRedacted) {
    call(12, "tools/call", {{"name", "echo_span"}, {"arguments", {{"city", "Oslo"}, {"api_key", "sk-secret-1"}}}});
    ASSERT_EQ(collector->spans.size(), 1u);
    EXPECT_EQ(attribute(collector->spans[0], "gen_ai.tool.call.arguments"), nullptr);
    EXPECT_EQ(attribute(collector->spans[0], "gen_ai.tool.call.result"), nullptr);

    observability::tracer().configure(observability::Sampler(), collector, /*capture_payloads=*/true);
    call(13, "tools/call",
         {{"name", "echo_span"},
          {"arguments", {{"city", "Oslo"}, {"api_key", "sk-secret-1"}, {"contact", "ann@example.com"}}}});
    ASSERT_EQ(collector->spans.size(), 2u);
    const std::string arguments = text_attribute(collector->spans[1], "gen_ai.tool.call.arguments");
    EXPECT_NE(arguments.find("Oslo"), std::string::npos) << arguments;
    EXPECT_EQ(arguments.find("sk-secret-1"), std::string::npos) << arguments;
    // The payload detectors (util/redaction/) too, all of them by default.
    EXPECT_NE(arguments.find("\"contact\":\"[REDACTED:email]\""), std::string::npos) << arguments;
    const std::string result = text_attribute(collector->spans[1], "gen_ai.tool.call.result");
    EXPECT_NE(result.find("\"hi\""), std::string::npos) << result;
}

TEST_F(RequestSpanTest, OverStdioTheTransportIsAPipeAndThereIsNoSessionId) {
    auto stdio = server->open_session([](const Json&, const protocol::RequestId*) {},
                                      CallerIdentity{.session_id = "stdio"});
    stdio->receive(std::get<protocol::Message>(
        protocol::classify(protocol::make_request(1, "initialize",
                                                  {{"protocolVersion", "2025-06-18"},
                                                   {"capabilities", Json::object()},
                                                   {"clientInfo", {{"name", "t"}, {"version", "1"}}}}))));
    stdio->receive(
        std::get<protocol::Message>(protocol::classify(protocol::make_request(2, "tools/list", Json::object()))));
    exec.run();
    ASSERT_EQ(collector->spans.size(), 2u);
    EXPECT_EQ(collector->spans[0].name, "initialize");
    EXPECT_EQ(text_attribute(collector->spans[0], "mcp.protocol.version"), "2025-06-18");  // as negotiated
    EXPECT_EQ(collector->spans[1].name, "tools/list");
    EXPECT_EQ(text_attribute(collector->spans[1], "network.transport"), "pipe");
    EXPECT_EQ(text_attribute(collector->spans[1], "mcp.protocol.version"), "2025-06-18");
    EXPECT_EQ(attribute(collector->spans[1], "mcp.session.id"), nullptr);
}

TEST_F(RequestSpanTest, ARequestRefusedBeforeAnyHandlerIsASpanToo) {
    call(14, "tools/nonexistent", Json::object());
    ASSERT_EQ(collector->spans.size(), 1u);
    EXPECT_EQ(collector->spans[0].name, "tools/nonexistent");
    EXPECT_EQ(text_attribute(collector->spans[0], "error.type"), "-32601");
    EXPECT_EQ(collector->spans[0].status, observability::SpanStatusCode::error);
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back()["error"]["code"], -32601);  // and it is still answered
}
