// protocol::write_json / json_size: byte for byte what nlohmann's dump() writes (with
// invalid UTF-8 replaced), big integer ids as digits.
#include "protocol/json_writer.hpp"

#include <random>

#include <gtest/gtest.h>

#include "protocol/json_text.hpp"
#include "schema_suite_files.hpp"

namespace toolport::protocol {
namespace {

std::string nlohmann_text(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string written(const Json& value) {
    std::string out = "prefix:";  // appends, never replaces
    write_json(value, out);
    EXPECT_EQ(out.rfind("prefix:", 0), 0u);
    return out.substr(7);
}

void expect_same_as_nlohmann(const Json& value) {
    const std::string expected = nlohmann_text(value);
    EXPECT_EQ(written(value), expected);
    EXPECT_EQ(json_size(value), expected.size()) << expected;
}

TEST(JsonWriter, ScalarsAndContainers) {
    for (const Json& v : {Json(nullptr), Json(true), Json(false), Json(0), Json(-1), Json(INT64_MIN), Json(INT64_MAX),
                          Json(UINT64_MAX), Json(""), Json("plain"), Json::array(), Json::object(),
                          Json::parse(R"({"b":[1,{"z":null,"a":"x"}],"a":{},"c":[[]]})")}) {
        expect_same_as_nlohmann(v);
    }
}

TEST(JsonWriter, FloatsAreNlohmannsOwn) {
    for (double d : {0.0, -0.0, 1.0, 0.1, 1e300, -2.5e-300, 123456789.125, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
        expect_same_as_nlohmann(Json(d));
        expect_same_as_nlohmann(Json{{"progress", d}});
    }
}

TEST(JsonWriter, EveryControlCharacterAndEscape) {
    std::string all;
    for (int c = 0; c < 0x80; ++c) all.push_back(static_cast<char>(c));
    expect_same_as_nlohmann(Json(all));
    expect_same_as_nlohmann(Json{{all, all}});  // keys are escaped the same way
    expect_same_as_nlohmann(Json("quote \" backslash \\ slash / del \x7f"));
}

TEST(JsonWriter, ValidUtf8IsCopied) {
    for (const char* s : {"caf\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xEF\xBF\xBF", "\xF4\x8F\xBF\xBF",
                          "\xC2\x80", "\xE0\xA0\x80", "\xF0\x90\x80\x80", "\xED\x9F\xBF"}) {
        expect_same_as_nlohmann(Json(s));
        EXPECT_EQ(written(Json(s)), std::string("\"") + s + "\"");
    }
}

TEST(JsonWriter, InvalidUtf8IsReplacedAsNlohmannDoes) {
    for (const char* s : {"\x80", "a\xBFz", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80",
                          "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82", "\xF0\x9F\x98",
                          "ok \xE2\x82 then \xC3\xA9 \"q\" \n"}) {
        expect_same_as_nlohmann(Json(s));
        expect_same_as_nlohmann(Json{{"k", {s, 1}}});
    }
}

TEST(JsonWriter, RandomStringsMatchNlohmann) {
    std::mt19937 random(20261125);
    std::uniform_int_distribution<int> length(0, 24), byte(0, 255), kind(0, 3);
    for (int n = 0; n < 20000; ++n) {
        std::string s;
        const int k = kind(random);
        for (int i = length(random); i > 0; --i) {
            int b = byte(random);
            if (k == 0) b &= 0x7F;              // ASCII with controls
            if (k == 1 && b < 0x80) b |= 0x80;  // high bytes only: mostly invalid
            s.push_back(static_cast<char>(b));
        }
        if (k == 3) s += "\xE2\x82\xAC\xF0\x9F\x98\x80";
        const Json v(s);
        ASSERT_EQ(written(v), nlohmann_text(v)) << Json::binary(std::vector<std::uint8_t>(s.begin(), s.end())).dump();
        ASSERT_EQ(json_size(v), nlohmann_text(v).size());
    }
}

// Plain bytes are passed over eight at a time: a byte that needs a look of its own is seen
// wherever it falls in a word, and the bytes after it are still written.
TEST(JsonWriter, EveryByteAtEveryOffsetOfALongString) {
    const std::string plain = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int b = 0; b < 256; ++b) {
        for (std::size_t at = 0; at < plain.size(); ++at) {
            std::string s = plain;
            s[at] = static_cast<char>(b);
            const Json v(s);
            ASSERT_EQ(written(v), nlohmann_text(v)) << "byte " << b << " at " << at;
            ASSERT_EQ(json_size(v), nlohmann_text(v).size()) << "byte " << b << " at " << at;
        }
    }
}

TEST(JsonWriter, BigIntegerIdsAreWrittenAsTheirDigits) {
    const std::string text = R"({"id":123456789012345678901234567890,"jsonrpc":"2.0","result":{}})";
    const Json message = parse_json_keeping_ids(text);
    ASSERT_TRUE(is_big_integer_id(message["id"]));
    EXPECT_EQ(written(message), text);
    EXPECT_EQ(json_size(message), text.size());
    EXPECT_EQ(serialize(Json::array({message, message})), "[" + text + "," + text + "]");
    // Another binary value is nlohmann's business.
    expect_same_as_nlohmann(Json::binary({1, 2, 3}, 7));
}

// Every document of the JSON-Schema-Test-Suite (thousands of schemas and instances, with
// unicode, floats, deep nesting): as nlohmann writes it.
TEST(JsonWriter, TheSchemaSuiteDocumentsMatchNlohmann) {
    const auto files = test_support::schema_suite_files();
    ASSERT_GT(files.size(), 100u) << "the JSON-Schema-Test-Suite is missing";
    for (const auto& file : files) {
        const Json document = Json::parse(file.text);
        ASSERT_EQ(written(document), nlohmann_text(document)) << file.path;
        ASSERT_EQ(json_size(document), nlohmann_text(document).size()) << file.path;
    }
}

}  // namespace
}  // namespace toolport::protocol

// write_json_string: the same text as write_json of the string, on the fast path (nothing
// to escape) and off it (escapes, UTF-8, invalid UTF-8).
TEST(JsonWriterString, WritesWhatWriteJsonWritesForAString) {
    for (std::string text : {std::string(""), std::string("plain text, twenty-four"), std::string("a\"b\\c\n\t"),
                             std::string("caf\xc3\xa9 and more than eight bytes"), std::string("bad \xff utf8 here"),
                             std::string(1, '\x01'), std::string("exactly8")}) {
        std::string out = "x";
        toolport::protocol::write_json_string(text, out);
        std::string expected = "x";
        toolport::protocol::write_json(toolport::Json(text), expected);
        EXPECT_EQ(out, expected) << text;
    }
}
