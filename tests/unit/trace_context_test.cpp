// W3C trace context (observability/trace_context.hpp), the samplers, the tracer's span
// life cycle (off, on, sampled or not) and trace context in params._meta.
#include <gtest/gtest.h>

#include <mutex>
#include <vector>

#include "observability/sampler.hpp"
#include "observability/trace_context.hpp"
#include "observability/trace_propagation.hpp"
#include "observability/tracer.hpp"

using namespace toolport::observability;
using toolport::Json;

namespace {

constexpr const char* kParent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

struct Collector : SpanProcessor {
    std::mutex mutex;
    std::vector<SpanData> spans;
    int flushes = 0;
    void on_end(SpanData&& span) override {
        std::lock_guard lock(mutex);
        spans.push_back(std::move(span));
    }
    void flush(int) override { ++flushes; }
};

// Each test configures the process-wide tracer and leaves it off again.
struct TracerOn {
    std::shared_ptr<Collector> collector = std::make_shared<Collector>();
    explicit TracerOn(Sampler sampler = Sampler()) { tracer().configure(sampler, collector); }
    ~TracerOn() { tracer().configure(Sampler(), nullptr); }
};

}  // namespace

TEST(TraceContext, ReadsAndWritesTraceparent) {
    auto context = parse_traceparent(kParent);
    ASSERT_TRUE(context);
    EXPECT_EQ(to_hex(context->trace_id), "4bf92f3577b34da6a3ce929d0e0e4736");
    EXPECT_EQ(to_hex(context->span_id), "00f067aa0ba902b7");
    EXPECT_TRUE(context->sampled());
    EXPECT_EQ(format_traceparent(*context), kParent);
    context->flags = 0;
    EXPECT_EQ(format_traceparent(*context), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00");
}

TEST(TraceContext, RefusesMalformedTraceparents) {
    for (const char* bad : {
             "",
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",           // no flags
             "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",        // upper case
             "00-00000000000000000000000000000000-00f067aa0ba902b7-01",        // zero trace id
             "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",        // zero span id
             "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",        // version ff
             "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // 00 is exactly 55
             "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",       // later version, bad tail
             "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
             "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01",
         }) {
        EXPECT_FALSE(parse_traceparent(bad)) << bad;
    }
    // A later version is read by its first four fields.
    EXPECT_TRUE(parse_traceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"));
}

TEST(TraceContext, ChecksTracestateAndBaggageBeforePassingThemOn) {
    EXPECT_TRUE(valid_tracestate("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
    EXPECT_TRUE(valid_tracestate("a=1, ,b=2"));
    EXPECT_FALSE(valid_tracestate(""));
    EXPECT_FALSE(valid_tracestate("novalue"));
    EXPECT_FALSE(valid_tracestate("=x"));
    EXPECT_FALSE(valid_tracestate("a=1\nb=2"));
    EXPECT_FALSE(valid_tracestate(std::string(513, 'a')));
    std::string many;
    for (int i = 0; i < 33; ++i) many += (i ? "," : "") + std::string("k") + std::to_string(i) + "=v";
    EXPECT_FALSE(valid_tracestate(many));
    EXPECT_TRUE(valid_baggage("userId=alice,serverNode=DF%2028;prop=1"));
    EXPECT_FALSE(valid_baggage(std::string(8193, 'a') + "=1"));
    EXPECT_FALSE(valid_baggage("caf\xc3\xa9=1"));
}

TEST(TraceContext, NewIdsAreNonZeroAndDiffer) {
    auto a = new_trace_id(), b = new_trace_id();
    EXPECT_NE(a, b);
    EXPECT_NE(to_hex(a), std::string(32, '0'));
    EXPECT_NE(new_span_id(), new_span_id());
}

TEST(Sampler, ParentBasedFollowsTheParentAndDecidesRootsByItsRoot) {
    auto parent = *parse_traceparent(kParent);
    auto unsampled = parent;
    unsampled.flags = 0;
    auto on = *Sampler::named("parentbased_always_on");
    auto off = *Sampler::named("parentbased_always_off");
    EXPECT_TRUE(on.sample(&parent, parent.trace_id));
    EXPECT_FALSE(on.sample(&unsampled, parent.trace_id));
    EXPECT_TRUE(off.sample(&parent, parent.trace_id));
    EXPECT_TRUE(on.sample(nullptr, parent.trace_id));
    EXPECT_FALSE(off.sample(nullptr, parent.trace_id));
    // Not parent-based: the parent's flag is not asked.
    EXPECT_TRUE(Sampler::named("always_on")->sample(&unsampled, parent.trace_id));
    EXPECT_FALSE(Sampler::named("always_off")->sample(&parent, parent.trace_id));
}

TEST(Sampler, RatioSamplesThatShareOfTraceIdsTheSameEverywhere) {
    auto half = *Sampler::named("traceidratio", 0.5);
    int sampled = 0;
    for (int i = 0; i < 4000; ++i) {
        auto id = new_trace_id();
        const bool first = half.sample(nullptr, id);
        EXPECT_EQ(first, half.sample(nullptr, id));  // the same decision for the same trace
        sampled += first;
    }
    EXPECT_GT(sampled, 1700);
    EXPECT_LT(sampled, 2300);
    EXPECT_FALSE(Sampler::named("traceidratio", 0.0)->sample(nullptr, new_trace_id()));
    EXPECT_TRUE(Sampler::named("traceidratio", 1.0)->sample(nullptr, new_trace_id()));
    EXPECT_FALSE(Sampler::named("traceidratio", 1.5));
    EXPECT_FALSE(Sampler::named("traceidratio", -0.1));
    EXPECT_FALSE(Sampler::named("sometimes"));
}

TEST(Tracer, OffRecordsNothingAndPassesTheParentOn) {
    ASSERT_FALSE(tracer().enabled());
    auto parent = *parse_traceparent(kParent);
    Span span = tracer().start_span("tools/call echo", SpanKind::server, &parent, true);
    EXPECT_FALSE(span.recording());
    EXPECT_EQ(format_traceparent(span.context()), kParent);
    span.set_attribute("mcp.method.name", "tools/call");  // harmless
    Span root = tracer().start_span("x", SpanKind::server, nullptr);
    EXPECT_FALSE(root.context().valid());
}

TEST(Tracer, RecordsASampledSpanUnderItsRemoteParent) {
    TracerOn on;
    auto parent = *parse_traceparent(kParent);
    parent.trace_state = "rojo=1";
    {
        Span span = tracer().start_span("tools/call", SpanKind::server, &parent, true);
        ASSERT_TRUE(span.recording());
        EXPECT_EQ(span.context().trace_id, parent.trace_id);
        EXPECT_NE(span.context().span_id, parent.span_id);
        EXPECT_TRUE(span.context().sampled());
        EXPECT_EQ(span.context().trace_state, "rojo=1");
        span.set_name("tools/call echo");
        span.set_attribute("gen_ai.tool.name", "echo");
        span.set_attribute("jsonrpc.request.id", "7");
        span.set_attribute("jsonrpc.request.id", "8");  // replaced, not repeated
        span.add_event("cache.miss");
        span.set_error("tool_error", "the tool failed");
    }  // ended by its destructor
    ASSERT_EQ(on.collector->spans.size(), 1u);
    const SpanData& data = on.collector->spans[0];
    EXPECT_EQ(data.name, "tools/call echo");
    EXPECT_EQ(data.kind, SpanKind::server);
    EXPECT_EQ(data.parent_span_id, parent.span_id);
    EXPECT_TRUE(data.parent_is_remote);
    EXPECT_EQ(data.trace_state, "rojo=1");
    EXPECT_LE(data.start_unix_nano, data.end_unix_nano);
    ASSERT_EQ(data.events.size(), 1u);
    EXPECT_EQ(data.events[0].name, "cache.miss");
    EXPECT_EQ(data.status, SpanStatusCode::error);
    EXPECT_EQ(data.status_message, "the tool failed");
    int ids = 0;
    for (const auto& a : data.attributes) {
        if (a.key == "jsonrpc.request.id") {
            ++ids;
            EXPECT_EQ(std::get<std::string>(a.value), "8");
        }
        if (a.key == "error.type") EXPECT_EQ(std::get<std::string>(a.value), "tool_error");
    }
    EXPECT_EQ(ids, 1);
}

TEST(Tracer, AnUnsampledSpanGetsItsOwnIdWithTheFlagClear) {
    TracerOn on(*Sampler::named("parentbased_always_on"));
    auto parent = *parse_traceparent(kParent);
    parent.flags = 0;
    Span span = tracer().start_span("tools/call", SpanKind::server, &parent, true);
    EXPECT_FALSE(span.recording());
    EXPECT_EQ(span.context().trace_id, parent.trace_id);
    EXPECT_NE(span.context().span_id, parent.span_id);
    EXPECT_FALSE(span.context().sampled());
    span.end();
    EXPECT_TRUE(on.collector->spans.empty());
}

TEST(Tracer, EndsOnceAndMovesWithoutEnding) {
    TracerOn on;
    Span a = tracer().start_span("a", SpanKind::internal, nullptr);
    Span b = std::move(a);
    EXPECT_TRUE(on.collector->spans.empty());
    b.end();
    b.end();
    EXPECT_EQ(on.collector->spans.size(), 1u);
    Span c = tracer().start_span("c", SpanKind::client, nullptr);
    c = tracer().start_span("d", SpanKind::client, nullptr);  // the assigned-over span ends
    EXPECT_EQ(on.collector->spans.size(), 2u);
    EXPECT_EQ(on.collector->spans[1].name, "c");
    EXPECT_TRUE(on.collector->spans[1].parent_span_id == SpanId{});
    tracer().flush(10);
    EXPECT_EQ(on.collector->flushes, 1);
}

TEST(TracePropagation, ReadsMetaAndIgnoresWhatIsMalformed) {
    auto trace = read_trace_meta(Json::parse(R"({"_meta":{"traceparent":")" + std::string(kParent) +
                                             R"(","tracestate":"a=1","baggage":"user=alice"}})"));
    ASSERT_TRUE(trace.parent);
    EXPECT_EQ(trace.parent->trace_state, "a=1");
    EXPECT_EQ(trace.baggage, "user=alice");
    auto bad = read_trace_meta(Json::parse(R"({"_meta":{"traceparent":"nope","tracestate":"a=1","baggage":"x"}})"));
    EXPECT_FALSE(bad.parent);
    EXPECT_EQ(bad.baggage, "");
    EXPECT_FALSE(read_trace_meta(Json::parse(R"({"_meta":{"traceparent":7}})")).parent);
    EXPECT_FALSE(read_trace_meta(Json::parse(R"({"_meta":"x"})")).parent);
    EXPECT_FALSE(read_trace_meta(Json()).parent);
}

TEST(TracePropagation, WritesThisHopsContextOverTheCallers) {
    Json params = Json::parse(
        R"({"name":"echo","_meta":{"traceparent":"00-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-bbbbbbbbbbbbbbbb-01","tracestate":"old=1","progressToken":3}})");
    auto context = *parse_traceparent(kParent);
    write_trace_meta(params, context, "user=alice");
    EXPECT_EQ(params["_meta"]["traceparent"], kParent);
    EXPECT_FALSE(params["_meta"].contains("tracestate"));
    EXPECT_EQ(params["_meta"]["baggage"], "user=alice");
    EXPECT_EQ(params["_meta"]["progressToken"], 3);
    Json empty;
    context.trace_state = "rojo=1";
    write_trace_meta(empty, context, "");
    EXPECT_EQ(empty["_meta"]["tracestate"], "rojo=1");
    EXPECT_FALSE(empty["_meta"].contains("baggage"));
    Json array = Json::array();
    write_trace_meta(array, context, "");
    EXPECT_TRUE(array.empty());
}
