// JSON-RPC 2.0 framing: parse_payload, classify, the wire builders and the depth scanner.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "protocol/jsonrpc.hpp"
#include "util/json.hpp"

using namespace toolport::protocol;
using toolport::Json;

namespace {

// Parses a payload that must hold exactly one (non-batch) message and returns it.
Message parse_one(std::string_view bytes) {
    auto p = parse_payload(bytes);
    EXPECT_FALSE(p.fatal) << (p.fatal ? p.fatal->message : "");
    EXPECT_FALSE(p.is_batch);
    EXPECT_EQ(p.items.size(), 1u);
    if (p.items.size() != 1 || !std::holds_alternative<Message>(p.items[0])) {
        ADD_FAILURE() << "expected one Message for: " << bytes;
        return Notification{"<missing>", nullptr};
    }
    return std::get<Message>(p.items[0]);
}

// Parses a payload that must hold exactly one malformed (non-fatal) message.
ProtocolError parse_bad(std::string_view bytes) {
    auto p = parse_payload(bytes);
    EXPECT_FALSE(p.fatal) << (p.fatal ? p.fatal->message : "");
    EXPECT_EQ(p.items.size(), 1u);
    if (p.items.size() != 1 || !std::holds_alternative<ProtocolError>(p.items[0])) {
        ADD_FAILURE() << "expected one ProtocolError for: " << bytes;
        return ProtocolError{};
    }
    return std::get<ProtocolError>(p.items[0]);
}

ProtocolError parse_fatal(std::string_view bytes, const ParseLimits& limits = {}) {
    auto p = parse_payload(bytes, limits);
    EXPECT_TRUE(p.items.empty());
    if (!p.fatal) {
        ADD_FAILURE() << "expected a fatal error for: " << bytes.substr(0, 200);
        return ProtocolError{};
    }
    return *p.fatal;
}

// A request whose total array/object nesting depth is exactly `depth` (>= 2).
std::string request_with_depth(std::size_t depth) {
    std::string params;
    for (std::size_t i = 2; i < depth; ++i) params += "{\"a\":";
    params += "{}";
    for (std::size_t i = 2; i < depth; ++i) params += "}";
    return R"({"jsonrpc":"2.0","id":1,"method":"deep","params":)" + params + "}";
}

}  // namespace

// ---- requests and their ids ---------------------------------------------------------------

TEST(JsonRpcFraming, StringIdIsKeptAndEchoedUnchanged) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":"req-\u00e9-1","method":"tools/list","params":{"cursor":"x"}})");
    const auto& r = std::get<Request>(m);
    EXPECT_TRUE(r.id.is_string());
    EXPECT_EQ(r.id, Json("req-\xc3\xa9-1"));
    EXPECT_EQ(r.method, "tools/list");
    EXPECT_EQ(r.params, Json({{"cursor", "x"}}));
    auto reply = make_response(r.id, Json::object());
    EXPECT_EQ(reply["id"], Json("req-\xc3\xa9-1"));
    EXPECT_EQ(reply["id"].dump(), r.id.dump());
}

TEST(JsonRpcFraming, IntegerIdIsKeptAsIntegerAndEchoedUnchanged) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":42,"method":"ping"})");
    const auto& r = std::get<Request>(m);
    EXPECT_TRUE(r.id.is_number_integer());
    EXPECT_EQ(r.id.dump(), "42");
    EXPECT_TRUE(r.params.is_null());
    auto wire = serialize(make_response(r.id, Json::object()));
    EXPECT_NE(wire.find(R"("id":42)"), std::string::npos) << wire;
    EXPECT_EQ(wire.find(R"("id":"42")"), std::string::npos) << wire;
}

TEST(JsonRpcFraming, NegativeAndLargeIntegerIdsAreEchoedUnchanged) {
    for (std::string id : {"-7", "0", "9007199254740993", "18446744073709551615"}) {
        auto m = parse_one(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
        const auto& r = std::get<Request>(m);
        EXPECT_EQ(make_response(r.id, nullptr)["id"].dump(), id);
    }
}

TEST(JsonRpcFraming, FractionalIdIsKeptAsNumberAndEchoedUnchanged) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})");
    const auto& r = std::get<Request>(m);
    EXPECT_TRUE(r.id.is_number_float());
    EXPECT_EQ(r.id.dump(), "1.5");
    auto reply = make_response(r.id, Json::object());
    EXPECT_EQ(reply["id"].dump(), "1.5");
    auto err = make_error(r.id, error_code::kMethodNotFound, "nope");
    EXPECT_EQ(err["id"].dump(), "1.5");
}

TEST(JsonRpcFraming, ParamsArrayIsAcceptedExplicitNullIsNot) {
    auto a = std::get<Request>(parse_one(R"({"jsonrpc":"2.0","id":1,"method":"m","params":[1,2]})"));
    EXPECT_EQ(a.params, Json::array({1, 2}));
    // JSON-RPC 2.0 §4.2: params, when present, MUST be an object or an array.
    auto e = parse_bad(R"({"jsonrpc":"2.0","id":1,"method":"m","params":null})");
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_EQ(e.id, Json(1));
    EXPECT_NE(e.message.find("\"params\" must be an object or an array"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("got null"), std::string::npos) << e.message;
}

TEST(JsonRpcFraming, NotificationHasNoId) {
    auto m = parse_one(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    ASSERT_TRUE(std::holds_alternative<Notification>(m));
    const auto& n = std::get<Notification>(m);
    EXPECT_EQ(n.method, "notifications/initialized");
    EXPECT_TRUE(n.params.is_null());

    auto m2 = parse_one(R"({"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}})");
    EXPECT_EQ(std::get<Notification>(m2).params, Json({{"progress", 1}}));
}

// ---- responses --------------------------------------------------------------------------------

TEST(JsonRpcFraming, ResponseIsClassified) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":"s1","result":{"roots":[]}})");
    ASSERT_TRUE(std::holds_alternative<Response>(m));
    const auto& r = std::get<Response>(m);
    EXPECT_EQ(r.id, Json("s1"));
    EXPECT_EQ(r.result, Json({{"roots", Json::array()}}));
}

TEST(JsonRpcFraming, ResponseWithNullResultIsStillAResponse) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":3,"result":null})");
    ASSERT_TRUE(std::holds_alternative<Response>(m));
    EXPECT_TRUE(std::get<Response>(m).result.is_null());
}

TEST(JsonRpcFraming, ErrorResponseWithData) {
    auto m = parse_one(R"({"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"bad","data":{"field":"x"}}})");
    ASSERT_TRUE(std::holds_alternative<ErrorResponse>(m));
    const auto& e = std::get<ErrorResponse>(m);
    EXPECT_EQ(e.id, Json(9));
    EXPECT_EQ(e.code, -32602);
    EXPECT_EQ(e.message, "bad");
    EXPECT_EQ(e.data, Json({{"field", "x"}}));
}

TEST(JsonRpcFraming, ErrorResponseWithoutDataOrId) {
    auto m = parse_one(R"({"jsonrpc":"2.0","error":{"code":-1,"message":"m"}})");
    const auto& e = std::get<ErrorResponse>(m);
    EXPECT_TRUE(e.id.is_null());
    EXPECT_EQ(e.code, -1);
    EXPECT_TRUE(e.data.is_null());
}

TEST(JsonRpcFraming, ResultWithoutIdIsInvalid) {
    auto e = parse_bad(R"({"jsonrpc":"2.0","result":{}})");
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_TRUE(e.id.is_null());
    EXPECT_NE(e.message.find("id"), std::string::npos) << e.message;
}

TEST(JsonRpcFraming, BothResultAndErrorIsInvalid) {
    auto e = parse_bad(R"({"jsonrpc":"2.0","id":5,"result":{},"error":{"code":1,"message":"x"}})");
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_EQ(e.id, Json(5));
    EXPECT_NE(e.message.find("not both"), std::string::npos) << e.message;
}

TEST(JsonRpcFraming, ErrorWithoutIntegerCodeIsInvalid) {
    for (const char* err : {R"({"message":"x"})", R"({"code":"1","message":"x"})", R"({"code":1.5,"message":"x"})",
                            R"({"code":1})", R"({"code":1,"message":7})", R"("oops")", R"(null)"}) {
        auto e = parse_bad(std::string(R"({"jsonrpc":"2.0","id":"e","error":)") + err + "}");
        EXPECT_EQ(e.code, error_code::kInvalidRequest) << err;
        EXPECT_EQ(e.id, Json("e")) << err;
        EXPECT_NE(e.message.find("\"error\""), std::string::npos) << e.message;
    }
}

TEST(JsonRpcFraming, ObjectWithoutMethodResultOrErrorIsInvalid) {
    auto e = parse_bad(R"({"jsonrpc":"2.0","id":1})");
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_EQ(e.id, Json(1));
    EXPECT_NE(e.message.find("method"), std::string::npos);
}

// ---- fatal payload errors -----------------------------------------------------------------------

TEST(JsonRpcFraming, TruncatedJsonIsParseError) {
    auto e = parse_fatal(R"({"jsonrpc":"2.0","id":1,"method":"pi)");
    EXPECT_EQ(e.code, error_code::kParseError);
    EXPECT_TRUE(e.id.is_null());
    EXPECT_EQ(e.message.rfind("Parse error: ", 0), 0u) << e.message;
    // The nlohmann "[json.exception...]" prefix is stripped.
    EXPECT_EQ(e.message.find("[json.exception"), std::string::npos) << e.message;
}

TEST(JsonRpcFraming, EmptyAndGarbagePayloadsAreParseErrors) {
    for (std::string_view bytes : {std::string_view(""), std::string_view("   "), std::string_view("{} x"),
                                   std::string_view("{'a':1}"), std::string_view("nul")}) {
        auto e = parse_fatal(bytes);
        EXPECT_EQ(e.code, error_code::kParseError) << bytes;
    }
}

TEST(JsonRpcFraming, InvalidUtf8InsideStringIsParseError) {
    std::string bytes =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\xff"
        "b\"}";
    auto e = parse_fatal(bytes);
    EXPECT_EQ(e.code, error_code::kParseError);
    EXPECT_TRUE(e.id.is_null());
    // The error message itself must be serialisable.
    EXPECT_NO_THROW((void)serialize(make_error(e.id, e.code, e.message)));
}

TEST(JsonRpcFraming, NestingDeeperThanLimitIsInvalidRequest) {
    ParseLimits limits;
    limits.max_depth = 8;
    auto e = parse_fatal(request_with_depth(9), limits);
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_TRUE(e.id.is_null());
    EXPECT_NE(e.message.find("depth 9"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("limit of 8"), std::string::npos) << e.message;
}

TEST(JsonRpcFraming, NestingExactlyAtLimitIsAccepted) {
    ParseLimits limits;
    limits.max_depth = 8;
    auto body = request_with_depth(8);
    ASSERT_EQ(max_nesting_depth(body), 8u);
    auto p = parse_payload(body, limits);
    ASSERT_FALSE(p.fatal) << p.fatal->message;
    ASSERT_EQ(p.items.size(), 1u);
    EXPECT_EQ(std::get<Request>(std::get<Message>(p.items[0])).method, "deep");

    // And with the default limit of 64.
    auto body64 = request_with_depth(64);
    ASSERT_EQ(max_nesting_depth(body64), 64u);
    EXPECT_FALSE(parse_payload(body64).fatal);
    auto e = parse_fatal(request_with_depth(65));
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
}

TEST(JsonRpcFraming, TenThousandOpenBracketsAreRefusedQuickly) {
    std::string bytes(10000, '[');
    auto start = std::chrono::steady_clock::now();
    auto e = parse_fatal(bytes);
    auto elapsed = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_NE(e.message.find("10000"), std::string::npos) << e.message;
    EXPECT_LT(elapsed, std::chrono::milliseconds(500));

    std::string objects;
    for (int i = 0; i < 10000; ++i) objects += "{\"a\":";
    EXPECT_EQ(parse_fatal(objects).code, error_code::kInvalidRequest);
}

TEST(JsonRpcFraming, MaxNestingDepthCountsOnlyStructure) {
    EXPECT_EQ(max_nesting_depth(""), 0u);
    EXPECT_EQ(max_nesting_depth("42"), 0u);
    EXPECT_EQ(max_nesting_depth("[]"), 1u);
    EXPECT_EQ(max_nesting_depth("[[],[[]]]"), 3u);
    EXPECT_EQ(max_nesting_depth(R"({"a":[{"b":1}]})"), 3u);
    // Brackets inside strings are ignored.
    EXPECT_EQ(max_nesting_depth(R"(["[[[[{{{{"])"), 1u);
    // An escaped quote does not end the string.
    EXPECT_EQ(max_nesting_depth(R"(["a\"[[[[", 1])"), 1u);
    // An escaped backslash does end the string before the quote.
    EXPECT_EQ(max_nesting_depth(R"(["a\\", [[1]]])"), 3u);
    // Unbalanced closers do not underflow.
    EXPECT_EQ(max_nesting_depth("]]]]["), 1u);
}

TEST(JsonRpcFraming, BracketsInsideStringsDoNotTripTheLimit) {
    std::string inner(1000, '[');
    auto m = parse_one(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":")" + inner + R"("}})");
    EXPECT_EQ(std::get<Request>(m).params["text"], Json(inner));
}

// ---- invalid requests ---------------------------------------------------------------------------

TEST(JsonRpcFraming, NonObjectMessageIsInvalidWithNullId) {
    for (std::string_view bytes :
         {std::string_view("42"), std::string_view("\"hi\""), std::string_view("null"), std::string_view("true")}) {
        auto e = parse_bad(bytes);
        EXPECT_EQ(e.code, error_code::kInvalidRequest) << bytes;
        EXPECT_TRUE(e.id.is_null()) << bytes;
        EXPECT_NE(e.message.find("must be an object"), std::string::npos) << e.message;
    }
    EXPECT_NE(parse_bad("42").message.find("got number"), std::string::npos);
    EXPECT_NE(parse_bad("\"x\"").message.find("got string"), std::string::npos);
}

TEST(JsonRpcFraming, WrongJsonrpcVersionRecoversValidId) {
    auto e1 = parse_bad(R"({"jsonrpc":"1.0","id":7,"method":"ping"})");
    EXPECT_EQ(e1.code, error_code::kInvalidRequest);
    EXPECT_EQ(e1.id, Json(7));
    EXPECT_NE(e1.message.find("\"jsonrpc\" must be exactly \"2.0\""), std::string::npos) << e1.message;

    auto e2 = parse_bad(R"({"id":"abc","method":"ping"})");
    EXPECT_EQ(e2.code, error_code::kInvalidRequest);
    EXPECT_EQ(e2.id, Json("abc"));

    auto e3 = parse_bad(R"({"jsonrpc":2.0,"id":1.25,"method":"ping"})");
    EXPECT_EQ(e3.code, error_code::kInvalidRequest);
    EXPECT_EQ(e3.id.dump(), "1.25");
}

TEST(JsonRpcFraming, WrongJsonrpcVersionWithInvalidIdGivesNullId) {
    auto e1 = parse_bad(R"({"jsonrpc":"1.0","id":{"x":1},"method":"ping"})");
    EXPECT_EQ(e1.code, error_code::kInvalidRequest);
    EXPECT_TRUE(e1.id.is_null());
    auto e2 = parse_bad(R"({"jsonrpc":"1.0","id":true,"method":"ping"})");
    EXPECT_TRUE(e2.id.is_null());
    auto e3 = parse_bad(R"({"jsonrpc":"1.0","method":"ping"})");
    EXPECT_TRUE(e3.id.is_null());
}

TEST(JsonRpcFraming, InvalidIdTypesAreRefused) {
    struct Case {
        const char* id;
        const char* type;
    };
    for (auto c : {Case{"null", "null"}, Case{"true", "boolean"}, Case{"false", "boolean"},
                   Case{R"({"a":1})", "object"}, Case{"[1]", "array"}}) {
        auto e = parse_bad(std::string(R"({"jsonrpc":"2.0","id":)") + c.id + R"(,"method":"ping"})");
        EXPECT_EQ(e.code, error_code::kInvalidRequest) << c.id;
        EXPECT_TRUE(e.id.is_null()) << c.id;
        EXPECT_NE(e.message.find(std::string("got ") + c.type), std::string::npos) << e.message;
    }
}

TEST(JsonRpcFraming, MethodMustBeAString) {
    for (const char* method : {"1", "null", "[\"a\"]", "{}", "true"}) {
        auto e = parse_bad(std::string(R"({"jsonrpc":"2.0","id":"q","method":)") + method + "}");
        EXPECT_EQ(e.code, error_code::kInvalidRequest) << method;
        EXPECT_EQ(e.id, Json("q")) << method;
        EXPECT_NE(e.message.find("\"method\" must be a string"), std::string::npos) << e.message;
    }
}

TEST(JsonRpcFraming, ScalarParamsAreRefused) {
    for (const char* params : {"\"str\"", "1", "true"}) {
        auto e = parse_bad(std::string(R"({"jsonrpc":"2.0","id":3,"method":"m","params":)") + params + "}");
        EXPECT_EQ(e.code, error_code::kInvalidRequest) << params;
        EXPECT_EQ(e.id, Json(3));
        EXPECT_NE(e.message.find("\"params\""), std::string::npos) << e.message;
    }
    // Also for notifications (no id to recover).
    auto e = parse_bad(R"({"jsonrpc":"2.0","method":"n","params":"str"})");
    EXPECT_EQ(e.code, error_code::kInvalidRequest);
    EXPECT_TRUE(e.id.is_null());
}

// ---- batches ----------------------------------------------------------------------------------

TEST(JsonRpcFraming, EmptyBatchIsFatalInvalidRequest) {
    auto p = parse_payload("[]");
    EXPECT_TRUE(p.is_batch);
    ASSERT_TRUE(p.fatal);
    EXPECT_EQ(p.fatal->code, error_code::kInvalidRequest);
    EXPECT_TRUE(p.fatal->id.is_null());
    EXPECT_NE(p.fatal->message.find("empty batch"), std::string::npos);
    EXPECT_TRUE(p.items.empty());
    // Whitespace inside does not change anything.
    auto p2 = parse_payload(" [ \n ] ");
    ASSERT_TRUE(p2.fatal);
    EXPECT_EQ(p2.fatal->code, error_code::kInvalidRequest);
}

TEST(JsonRpcFraming, BatchWithValidAndInvalidMembers) {
    auto p = parse_payload(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}, 17])");
    EXPECT_TRUE(p.is_batch);
    ASSERT_FALSE(p.fatal);
    ASSERT_EQ(p.items.size(), 2u);
    ASSERT_TRUE(std::holds_alternative<Message>(p.items[0]));
    EXPECT_EQ(std::get<Request>(std::get<Message>(p.items[0])).id, Json(1));
    ASSERT_TRUE(std::holds_alternative<ProtocolError>(p.items[1]));
    EXPECT_EQ(std::get<ProtocolError>(p.items[1]).code, error_code::kInvalidRequest);
    EXPECT_TRUE(std::get<ProtocolError>(p.items[1]).id.is_null());
}

TEST(JsonRpcFraming, BatchKeepsOrderAndKinds) {
    auto p = parse_payload(R"([
        {"jsonrpc":"2.0","method":"n"},
        {"jsonrpc":"2.0","id":"r","result":{}},
        {"jsonrpc":"1.0","id":"bad","method":"x"},
        {"jsonrpc":"2.0","id":2,"method":"m"}
    ])");
    ASSERT_FALSE(p.fatal);
    ASSERT_EQ(p.items.size(), 4u);
    EXPECT_TRUE(std::holds_alternative<Notification>(std::get<Message>(p.items[0])));
    EXPECT_TRUE(std::holds_alternative<Response>(std::get<Message>(p.items[1])));
    EXPECT_EQ(std::get<ProtocolError>(p.items[2]).id, Json("bad"));
    EXPECT_EQ(std::get<Request>(std::get<Message>(p.items[3])).id, Json(2));
}

TEST(JsonRpcFraming, SingleMessageIsNotABatch) {
    auto p = parse_payload(R"({"jsonrpc":"2.0","id":1,"method":"ping"})");
    EXPECT_FALSE(p.is_batch);
    auto b = parse_payload(R"([{"jsonrpc":"2.0","id":1,"method":"ping"}])");
    EXPECT_TRUE(b.is_batch);
    EXPECT_EQ(b.items.size(), 1u);
}

// ---- builders and round trips -----------------------------------------------------------------

TEST(JsonRpcFraming, BuildersProduceWireShapes) {
    EXPECT_EQ(make_response(1, {{"a", 1}}), Json::parse(R"({"jsonrpc":"2.0","id":1,"result":{"a":1}})"));
    EXPECT_EQ(make_error("x", -32601, "Method not found"),
              Json::parse(R"({"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"Method not found"}})"));
    EXPECT_EQ(make_error(nullptr, -32700, "p", Json{{"k", "v"}}),
              Json::parse(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"p","data":{"k":"v"}}})"));
    EXPECT_EQ(make_request(5, "ping", nullptr), Json::parse(R"({"jsonrpc":"2.0","id":5,"method":"ping"})"));
    EXPECT_EQ(make_notification("n", Json{{"p", 1}}), Json::parse(R"({"jsonrpc":"2.0","method":"n","params":{"p":1}})"));
    EXPECT_FALSE(make_notification("n", nullptr).contains("params"));
}

namespace {
void expect_round_trip(const Message& original) {
    Json wire = to_json(original);
    auto again = classify(Json::parse(serialize(wire)));
    ASSERT_TRUE(std::holds_alternative<Message>(again)) << wire.dump();
    const auto& m = std::get<Message>(again);
    ASSERT_EQ(m.index(), original.index()) << wire.dump();
    EXPECT_EQ(to_json(m), wire);
}
}  // namespace

TEST(JsonRpcFraming, ToJsonRoundTripsEveryKind) {
    expect_round_trip(Request{Json(1.5), "tools/call", Json{{"name", "echo"}, {"arguments", {{"x", 1}}}}});
    expect_round_trip(Request{Json("id"), "ping", nullptr});
    expect_round_trip(Notification{"notifications/cancelled", Json{{"requestId", 3}}});
    expect_round_trip(Notification{"notifications/initialized", nullptr});
    expect_round_trip(Response{Json(-4), Json{{"tools", Json::array()}}});
    expect_round_trip(ErrorResponse{Json("e"), -32602, "Invalid params", Json{{"detail", "x"}}});
    expect_round_trip(ErrorResponse{Json(0), -32700, "Parse error", nullptr});

    auto classified = classify(to_json(Request{Json(7), "m", Json{{"a", 1}}}));
    const auto& r = std::get<Request>(std::get<Message>(classified));
    EXPECT_EQ(r.id, Json(7));
    EXPECT_EQ(r.method, "m");
    EXPECT_EQ(r.params, Json({{"a", 1}}));
    auto classified_error = classify(to_json(ErrorResponse{Json(2), -5, "msg", Json::array({1})}));
    const auto& e = std::get<ErrorResponse>(std::get<Message>(classified_error));
    EXPECT_EQ(e.code, -5);
    EXPECT_EQ(e.message, "msg");
    EXPECT_EQ(e.data, Json::array({1}));
}

TEST(JsonRpcFraming, ErrorResponseWithNullIdIsAccepted) {
    // JSON-RPC 2.0 section 5: when the id of the request could not be determined (parse error,
    // invalid request) the error response's id MUST be null. Toolport itself sends such
    // replies (make_error(nullptr, ...)), so it must be able to read them back.
    Json wire = to_json(ErrorResponse{Json(nullptr), -32700, "Parse error", nullptr});
    ASSERT_TRUE(wire.contains("id"));
    ASSERT_TRUE(wire["id"].is_null());
    auto classified = classify(wire);
    const auto& e = std::get<ErrorResponse>(std::get<Message>(classified));
    EXPECT_TRUE(e.id.is_null());
    EXPECT_EQ(e.code, -32700);
    EXPECT_EQ(to_json(Message{e}), wire);
}

TEST(JsonRpcFraming, SerializeReplacesInvalidUtf8InsteadOfThrowing) {
    Json j = make_error(1, -32603, std::string("bad \xff\xfe bytes"));
    std::string out;
    ASSERT_NO_THROW(out = serialize(j));
    EXPECT_NE(out.find("\xef\xbf\xbd"), std::string::npos) << out;  // U+FFFD
    // And the output is valid JSON again.
    EXPECT_NO_THROW((void)Json::parse(out));
    // Compact output without spaces.
    EXPECT_EQ(serialize(Json{{"a", 1}}), R"({"a":1})");
}
