// Raw JSON (protocol/raw_json.hpp): a reply's result.content and result.structuredContent
// read as checked text. The reader accepts and refuses exactly what it does without the
// option, the text expands to the document it would have built, and the writer passes the
// text on as it came.
#include "protocol/raw_json.hpp"

#include <cstring>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "client/wire_payload.hpp"
#include "pipeline/result_size.hpp"
#include "protocol/json_reader.hpp"
#include "protocol/json_writer.hpp"
#include "json_test_support.hpp"
#include "schema_suite_files.hpp"
#include "server/content.hpp"

namespace toolport::protocol {
namespace {

using test_support::identical;

JsonReadOptions raw_options() {
    JsonReadOptions options;
    options.keep_big_integer_ids = true;
    options.raw_result_parts = true;
    return options;
}

JsonReadOptions full_options() {
    JsonReadOptions options;
    options.keep_big_integer_ids = true;
    return options;
}

// Every raw part of a message (or of the messages of a batch) expanded.
Json expanded(Json document) {
    if (document.is_array()) {
        for (auto& message : document)
            if (message.is_object() && message.contains("result")) expand_raw_result_parts(message["result"]);
    } else if (document.is_object() && document.contains("result")) {
        expand_raw_result_parts(document["result"]);
    }
    return document;
}

// Read with and without raw parts: both refuse, or both accept and agree once expanded.
void expect_same_as_full_read(std::string_view text, JsonReadOptions raw = raw_options(),
                              JsonReadOptions full = full_options()) {
    std::optional<Json> whole, with_raw;
    std::string whole_error, raw_error;
    try {
        whole = read_json(text, full);
    } catch (const std::exception& e) {
        whole_error = e.what();
    }
    try {
        with_raw = read_json(text, raw);
    } catch (const std::exception& e) {
        raw_error = e.what();
    }
    ASSERT_EQ(whole.has_value(), with_raw.has_value()) << text << "\nfull: " << whole_error << "\nraw: " << raw_error;
    if (!whole) {
        // The same refusal, at the same byte.
        EXPECT_EQ(raw_error, whole_error) << text;
        return;
    }
    const Json expanded_raw = expanded(*with_raw);
    EXPECT_TRUE(identical(expanded_raw, *whole)) << text;
}

TEST(RawJson, OnlyAReplysResultContentAndStructuredContentStayRaw) {
    const Json reply = read_json(R"({"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}],)"
                                 R"("structuredContent":{"a":[1, 2]},"isError":false,"_meta":{"content":[1]}}})",
                                 raw_options());
    const Json& result = reply["result"];
    EXPECT_EQ(raw_json_text(result["content"]), R"([{"type":"text","text":"hi"}])");
    EXPECT_EQ(raw_json_text(result["structuredContent"]), R"({"a":[1, 2]})");  // as it came, spaces too
    EXPECT_TRUE(result["isError"].is_boolean());
    EXPECT_TRUE(result["_meta"].is_object());
    EXPECT_TRUE(result["_meta"]["content"].is_array());  // not a result's member

    // A batch's replies too.
    const Json batch = read_json(R"([{"id":1,"result":{"content":[]}},{"id":2,"result":{"content":[1]}}])",
                                 raw_options());
    EXPECT_TRUE(is_raw_json(batch[0]["result"]["content"]));
    EXPECT_TRUE(is_raw_json(batch[1]["result"]["content"]));

    // Nowhere else: a request's params, deeper results, a scalar, and without the option.
    EXPECT_TRUE(
        read_json(R"({"id":1,"method":"m","params":{"content":[1]}})", raw_options())["params"]["content"].is_array());
    EXPECT_TRUE(
        read_json(R"({"id":1,"result":{"x":{"content":[1]}}})", raw_options())["result"]["x"]["content"].is_array());
    EXPECT_TRUE(
        read_json(R"([[{"id":1,"result":{"content":[1]}}]])", raw_options())[0][0]["result"]["content"].is_array());
    const Json scalars = read_json(R"({"id":1,"result":{"content":"x","structuredContent":null}})", raw_options());
    EXPECT_TRUE(scalars["result"]["content"].is_string());
    EXPECT_TRUE(scalars["result"]["structuredContent"].is_null());
    EXPECT_TRUE(read_json(R"({"id":1,"result":{"content":[1]}})", full_options())["result"]["content"].is_array());
}

TEST(RawJson, TheLastOfDuplicateMembersWins) {
    const Json reply = read_json(R"({"id":1,"result":{"content":[1],"content":[2]}})", raw_options());
    EXPECT_EQ(raw_json_text(reply["result"]["content"]), "[2]");
    const Json mixed = read_json(R"({"id":1,"result":{"content":[1],"content":"s"}})", raw_options());
    EXPECT_TRUE(mixed["result"]["content"].is_string());
}

TEST(RawJson, ARawPartIsCheckedAsEverythingElse) {
    for (const char* bad : {
             R"({"id":1,"result":{"content":[1,]}})",
             R"({"id":1,"result":{"content":[{"a" 1}]}})",
             R"({"id":1,"result":{"content":["\x"]}})",
             R"({"id":1,"result":{"content":["\ud800"]}})",
             R"({"id":1,"result":{"content":[1e999]}})",
             R"({"id":1,"result":{"content":[01]}})",
             R"({"id":1,"result":{"content":[tru]}})",
             R"({"id":1,"result":{"content":["a)"
             "\x01"
             R"("]}})",
             R"({"id":1,"result":{"content":[")"
             "\xC3\x28"
             R"("]}})",
             R"({"id":1,"result":{"content":[1})",
             R"({"id":1,"result":{"structuredContent":{"a":1,}}})",
         }) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(read_json(bad, raw_options()), Json::parse_error);
        expect_same_as_full_read(bad);
    }
}

TEST(RawJson, NestingCountsFromTheMessageAsInAFullRead) {
    JsonReadOptions raw = raw_options(), full = full_options();
    raw.max_depth = full.max_depth = 10;
    // The message, its result and the content are three levels: seven more fit.
    const std::string fits = R"({"id":1,"result":{"content":)" + std::string(8, '[') + std::string(8, ']') + "}}";
    const std::string deep = R"({"id":1,"result":{"content":)" + std::string(9, '[') + std::string(9, ']') + "}}";
    EXPECT_NO_THROW(read_json(fits, raw));
    EXPECT_THROW(read_json(deep, raw), JsonTooDeep);
    EXPECT_THROW(read_json(deep, full), JsonTooDeep);
}

TEST(RawJson, ExpandedPartsAreWhatAFullReadBuilds) {
    expect_same_as_full_read(
        R"({"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/"},)"
        R"({"type":"image","data":"AAAA","mimeType":"image/png"}],"structuredContent":{"n":-0,"f":1.5e300,)"
        R"("big":123456789012345678901234567890,"u":18446744073709551615,"i":-9223372036854775808,)"
        R"("empty":{},"list":[],"t":true,"nul":null}}})");
}

// Random mutations of a reply: whatever the reader makes of them, it makes the same of them
// with raw parts (once expanded), or refuses both at the same byte.
TEST(RawJson, MutatedRepliesAgreeWithAFullRead) {
    const std::string seed =
        R"({"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"caf)"
        "\xC3\xA9"
        R"( \ud83d\ude00"},{"n":[1,-2.5e3,{"deep":[null,true,false]}]}],"structuredContent":{"k":"v","x":[0.5]},"isError":false}})";
    std::mt19937 rng(20261128);
    expect_same_as_full_read(seed);
    for (int round = 0; round < 4000; ++round) {
        const std::string text = test_support::mutated(seed, rng);
        SCOPED_TRACE(text);
        expect_same_as_full_read(text);
        if (HasFailure()) return;
    }
}

// Every document of the JSON-Schema-Test-Suite as a result's content and structuredContent.
TEST(RawJson, TheSchemaSuiteDocumentsAsContent) {
    const auto files = test_support::schema_suite_files();
    ASSERT_GT(files.size(), 100u) << "the JSON-Schema-Test-Suite is missing";
    for (const auto& file : files) {
        SCOPED_TRACE(file.path.string());
        const std::string reply = R"({"jsonrpc":"2.0","id":1,"result":{"content":)" + file.text +
                                  R"(,"structuredContent":)" + file.text + "}}";
        expect_same_as_full_read(reply);
        // Written out, the raw text is the source's own; read again it is the same document.
        const Json raw = read_json(reply, raw_options());
        std::string written;
        write_json(raw, written);
        EXPECT_EQ(json_size(raw), written.size());
        EXPECT_TRUE(identical(read_json(written, full_options()), read_json(reply, full_options())));
        if (HasFailure()) return;
    }
}

TEST(RawJson, TheWriterPassesTheTextOnAsItCame) {
    const Json reply = read_json(R"({"id":1,"result":{"content":[ {"text" : "a\u0041"} ]}})", raw_options());
    std::string out;
    write_json(reply, out);
    EXPECT_EQ(out, R"({"id":1,"result":{"content":[ {"text" : "a\u0041"} ]}})");
    EXPECT_EQ(json_size(reply), out.size());
    // What is not raw JSON is not written as text: a big integer id, other binary values.
    EXPECT_FALSE(is_raw_json(make_big_integer_id("12345678901234567890123")));
    EXPECT_FALSE(is_raw_json(Json::binary({'[', ']'})));
    EXPECT_TRUE(raw_json_text(Json::array()).empty());
}

TEST(RawJson, TheWirePayloadKeepsResultContentRaw) {
    auto payload = client::decode_wire_payload(R"({"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text"}]}})");
    ASSERT_TRUE(payload.error.empty()) << payload.error;
    ASSERT_EQ(payload.messages.size(), 1u);
    EXPECT_TRUE(is_raw_json(payload.messages[0]["result"]["content"]));
}

TEST(RawJson, AToolResultWithRawParts) {
    // Members in nlohmann's (sorted) order, so that the dump is the same expanded or not.
    Json reply = read_json(R"({"id":1,"result":{"content":[{"text":"x","type":"text"}],"structuredContent":{"a":1},)"
                           R"("_meta":{"m":1}}})",
                           raw_options());
    ToolResult result = ToolResult::from_json(std::move(reply["result"]));
    EXPECT_TRUE(is_raw_json(result.content));
    // Measured and dumped as the text it holds (a cache stores the dump).
    const std::string dumped = result.dump();
    EXPECT_EQ(dumped, R"({"_meta":{"m":1},"content":[{"text":"x","type":"text"}],"structuredContent":{"a":1}})");
    EXPECT_EQ(pipeline::result_size(result), dumped.size());
    EXPECT_GE(pipeline::result_size_upper_bound(result), dumped.size());
    result.expand_raw_parts();
    ASSERT_TRUE(result.content.is_array());
    EXPECT_EQ(result.content[0]["text"], "x");
    EXPECT_EQ(result.structured_content["a"], 1);
    EXPECT_EQ(result.dump(), dumped);
    // Raw content that is not an array is refused as content that is not an array is.
    Json not_array = Json::object();
    not_array["content"] = make_raw_json(R"({"type":"text"})");
    EXPECT_THROW(ToolResult::from_json(std::move(not_array)), std::invalid_argument);
}

}  // namespace
}  // namespace toolport::protocol
