// Property-style tests of classify: every member of every kind of message set to every JSON
// type (or left out), alone and as a batch member. An oracle written from JSON-RPC 2.0
// itself says what the verdict must be; the error's id must be null exactly when the
// message's id is unusable, and the error must name the member that is wrong.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "util/json.hpp"

using namespace toolport::protocol;
using toolport::Json;

namespace {

struct Sample {
    const char* name;
    std::optional<std::string> text;  // none: the member is left out
};

const std::vector<Sample> kSamples = {
    {"missing", std::nullopt},
    {"null", "null"},
    {"true", "true"},
    {"false", "false"},
    {"integer", "7"},
    {"negative integer", "-3"},
    {"integer beyond 32 bits", "4294967296"},
    {"integer beyond 64 bits", "123456789012345678901234567890"},
    {"float", "2.5"},
    {"string \"2.0\"", "\"2.0\""},
    {"string", "\"x\""},
    {"empty string", "\"\""},
    {"array", "[1]"},
    {"empty array", "[]"},
    {"object", R"({"a":1})"},
    {"empty object", "{}"},
};

const std::vector<std::string> kMembers = {"jsonrpc", "id", "method", "params", "result", "error"};

using Envelope = std::vector<std::pair<std::string, std::string>>;  // member, JSON text

struct Base {
    const char* kind;
    Envelope members;
};

const std::vector<Base> kBases = {
    {"request", {{"jsonrpc", "\"2.0\""}, {"id", "1"}, {"method", "\"ping\""}, {"params", "{}"}}},
    {"notification", {{"jsonrpc", "\"2.0\""}, {"method", "\"notifications/x\""}, {"params", "{}"}}},
    {"response", {{"jsonrpc", "\"2.0\""}, {"id", "1"}, {"result", "{}"}}},
    {"error response", {{"jsonrpc", "\"2.0\""}, {"id", "1"}, {"error", R"({"code":-32000,"message":"m"})"}}},
};

// `base` with `member` set to `value` (added when absent, removed when value is none).
Envelope with(Envelope base, const std::string& member, const std::optional<std::string>& value) {
    Envelope out;
    bool placed = false;
    for (auto& [name, text] : base) {
        if (name != member) {
            out.emplace_back(name, text);
        } else if (value) {
            out.emplace_back(name, *value);
            placed = true;
        } else {
            placed = true;
        }
    }
    if (!placed && value) out.emplace_back(member, *value);
    return out;
}

std::string text_of(const Envelope& e) {
    std::string text = "{";
    for (const auto& [name, value] : e) {
        if (text.size() > 1) text += ',';
        text += '"' + name + "\":" + value;
    }
    return text + "}";
}

// ---- the oracle: JSON-RPC 2.0 read literally, on plain nlohmann values -------------------------

enum class Kind { request, notification, response, error_response, invalid };

bool is_int32(const Json& v) {
    if (!v.is_number_integer()) return false;
    if (v.is_number_unsigned()) return v.get<std::uint64_t>() <= 2147483647u;
    return v.get<std::int64_t>() >= -2147483648LL && v.get<std::int64_t>() <= 2147483647LL;
}

struct Verdict {
    Kind kind;
    bool id_usable;
};

Verdict oracle(const Json& m) {
    const bool has_id = m.contains("id");
    const bool id_usable = has_id && (m["id"].is_string() || m["id"].is_number());
    auto verdict = [&](bool ok, Kind kind) { return Verdict{ok ? kind : Kind::invalid, id_usable}; };
    const bool version_ok = m.contains("jsonrpc") && m["jsonrpc"] == "2.0";
    if (m.contains("method")) {
        bool ok = version_ok && m["method"].is_string() && !m.contains("result") && !m.contains("error");
        if (m.contains("params")) ok = ok && (m["params"].is_object() || m["params"].is_array());
        if (has_id) ok = ok && id_usable;
        return verdict(ok, has_id ? Kind::request : Kind::notification);
    }
    if (m.contains("result") && m.contains("error")) return verdict(false, Kind::invalid);
    if (m.contains("result")) return verdict(version_ok && id_usable, Kind::response);
    if (m.contains("error")) {
        const Json& e = m["error"];
        bool ok = version_ok && e.is_object() && e.contains("code") && is_int32(e["code"]) && e.contains("message") &&
                  e["message"].is_string();
        // The id may be left out or null on an error (about a request whose id was unreadable).
        if (has_id) ok = ok && (id_usable || m["id"].is_null());
        return verdict(ok, Kind::error_response);
    }
    return verdict(false, Kind::invalid);
}

Kind kind_of(const Message& m) {
    if (std::holds_alternative<Request>(m)) return Kind::request;
    if (std::holds_alternative<Notification>(m)) return Kind::notification;
    if (std::holds_alternative<Response>(m)) return Kind::response;
    return Kind::error_response;
}

// Checks one classified item against the oracle's verdict on `text`.
void check(const std::variant<Message, ProtocolError>& item, const std::string& text, const std::string& member,
           const std::string& where) {
    const Json plain = Json::parse(text);
    const Verdict expected = oracle(plain);
    SCOPED_TRACE(where + ": " + text);
    if (expected.kind != Kind::invalid) {
        ASSERT_TRUE(std::holds_alternative<Message>(item)) << std::get<ProtocolError>(item).message;
        EXPECT_EQ(kind_of(std::get<Message>(item)), expected.kind);
        return;
    }
    ASSERT_TRUE(std::holds_alternative<ProtocolError>(item)) << "accepted an invalid message";
    const auto& error = std::get<ProtocolError>(item);
    EXPECT_EQ(error.code, error_code::kInvalidRequest);
    EXPECT_EQ(error.id.is_null(), !expected.id_usable) << "error id: " << error.id.dump();
    if (expected.id_usable) {
        // The very id that was sent (digit for digit, for an integer beyond 64 bits too).
        const std::string sent = plain["id"].is_string() ? plain["id"].dump() : text.substr(text.find("\"id\":") + 5);
        EXPECT_EQ(sent.rfind(id_text(error.id), 0), 0u) << id_text(error.id) << " vs " << sent;
    }
    EXPECT_NE(error.message.find('"' + member + '"'), std::string::npos) << "names the member: " << error.message;
    EXPECT_EQ(error.message.rfind("Invalid Request: ", 0), 0u) << error.message;
}

// Checks `text` alone, as the only member of a batch, and as the second of two.
void check_everywhere(const std::string& text, const std::string& member) {
    {
        auto p = parse_payload(text);
        ASSERT_FALSE(p.fatal) << text << ": " << p.fatal->message;
        ASSERT_EQ(p.items.size(), 1u);
        EXPECT_FALSE(p.is_batch);
        check(p.items[0], text, member, "alone");
    }
    {
        auto p = parse_payload("[" + text + "]");
        ASSERT_FALSE(p.fatal);
        ASSERT_EQ(p.items.size(), 1u);
        EXPECT_TRUE(p.is_batch);
        check(p.items[0], text, member, "in a batch of one");
    }
    {
        auto p = parse_payload(R"([{"jsonrpc":"2.0","method":"notifications/x"},)" + text + "]");
        ASSERT_FALSE(p.fatal);
        ASSERT_EQ(p.items.size(), 2u);
        EXPECT_TRUE(std::holds_alternative<Message>(p.items[0]));
        check(p.items[1], text, member, "second in a batch");
    }
}

}  // namespace

TEST(JsonRpcMemberTypes, EveryMemberOfEveryKindSetToEveryType) {
    int invalid = 0, valid = 0;
    for (const auto& base : kBases) {
        ASSERT_NE(oracle(Json::parse(text_of(base.members))).kind, Kind::invalid) << base.kind;
        for (const auto& member : kMembers) {
            for (const auto& sample : kSamples) {
                const std::string text = text_of(with(base.members, member, sample.text));
                SCOPED_TRACE(std::string(base.kind) + ", " + member + " = " + sample.name);
                check_everywhere(text, member);
                (oracle(Json::parse(text)).kind == Kind::invalid ? invalid : valid)++;
            }
        }
    }
    // The generator really covers both outcomes (and does not drift into testing nothing).
    EXPECT_GT(invalid, 200);
    EXPECT_GT(valid, 50);
}

TEST(JsonRpcMemberTypes, EveryMemberOfTheErrorObjectSetToEveryType) {
    const Envelope error_fields = {{"code", "-32000"}, {"message", "\"m\""}, {"data", "{}"}};
    for (const std::string field : {"code", "message", "data"}) {
        for (const auto& sample : kSamples) {
            const std::string error = text_of(with(error_fields, field, sample.text));
            const std::string text = R"({"jsonrpc":"2.0","id":"e","error":)" + error + "}";
            SCOPED_TRACE(field + " = " + sample.name);
            check_everywhere(text, "error");
            // And the error names the field inside "error" that is wrong.
            auto p = parse_payload(text);
            if (auto* e = std::get_if<ProtocolError>(&p.items.at(0))) {
                EXPECT_NE(e->message.find('"' + field + '"'), std::string::npos) << e->message;
                EXPECT_EQ(e->id, Json("e"));
            }
        }
    }
}

TEST(JsonRpcMemberTypes, StdioExamplesAllGetAnErrorWithNullId) {
    // A scalar, a batch holding a non-object, and ids no reply could carry.
    auto scalar = parse_payload("42");
    EXPECT_TRUE(std::get<ProtocolError>(scalar.items.at(0)).id.is_null());
    auto nested = parse_payload("[[1]]");
    ASSERT_FALSE(nested.fatal);
    EXPECT_TRUE(std::get<ProtocolError>(nested.items.at(0)).id.is_null());
    for (std::string id : {"true", "null", "[]", "{}"}) {
        auto p = parse_payload(R"({"jsonrpc":"2.0","id":)" + id + R"(,"method":"ping"})");
        const auto& e = std::get<ProtocolError>(p.items.at(0));
        EXPECT_TRUE(e.id.is_null()) << id;
        EXPECT_NE(e.message.find("\"id\" must be a string or a number"), std::string::npos) << e.message;
    }
}

TEST(JsonRpcMemberTypes, MessagesNameTheWrongTypeAndValue) {
    auto message_of = [](const std::string& text) {
        return std::get<ProtocolError>(parse_payload(text).items.at(0)).message;
    };
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":true,"method":"ping"})"),
              "Invalid Request: \"id\" must be a string or a number, got boolean true");
    EXPECT_EQ(message_of(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"),
              "Invalid Request: \"jsonrpc\" must be exactly \"2.0\", got string \"1.0\"");
    EXPECT_EQ(message_of(R"({"id":1,"method":"ping"})"),
              "Invalid Request: \"jsonrpc\" must be exactly \"2.0\"; it is missing");
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":1,"method":["ping"]})"),
              "Invalid Request: \"method\" must be a string, got array");
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":1,"method":"m","params":7})"),
              "Invalid Request: \"params\" must be an object or an array (or absent), got number 7");
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":1,"method":"m","result":{}})"),
              "Invalid Request: a message with \"method\" is a request or a notification and must not carry "
              "\"result\"; only a response does");
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}})"),
              "Invalid Request: \"error\" needs an integer \"code\", got number 1.5");
    EXPECT_EQ(message_of(R"({"jsonrpc":"2.0","id":1,"error":{"code":4294967296,"message":"m"}})"),
              "Invalid Request: \"error\" needs a \"code\" that fits in 32 bits, got number 4294967296");
    // A long string value is cut short, and control characters are escaped.
    auto long_version = message_of(R"({"jsonrpc":")" + std::string(500, 'v') + "\\n\"}");
    EXPECT_LT(long_version.size(), 150u) << long_version;
}
