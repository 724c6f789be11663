// protocol::read_json: the same document nlohmann's Json::parse builds (same values, same
// types), and the same refusals, for every input.
#include "protocol/json_reader.hpp"

#include <cstring>
#include <optional>
#include <random>

#include <gtest/gtest.h>

#include "json_test_support.hpp"
#include "schema_suite_files.hpp"

namespace toolport::protocol {
namespace {

using test_support::identical;

// Both accept `text` and build identical documents, or both refuse it.
void expect_like_nlohmann(std::string_view text) {
    std::optional<Json> theirs;
    try {
        theirs = Json::parse(text);
    } catch (const Json::exception&) {}
    std::optional<Json> ours;
    std::string error;
    try {
        ours = read_json(text);
    } catch (const Json::parse_error& e) {
        error = e.what();
    }
    if (theirs) {
        ASSERT_TRUE(ours.has_value()) << "refused what nlohmann reads: " << text << "\n" << error;
        EXPECT_TRUE(identical(*ours, *theirs)) << text << "\nours:   " << ours->dump() << "\ntheirs: " << theirs->dump();
    } else {
        EXPECT_FALSE(ours.has_value()) << "read what nlohmann refuses: " << text;
        EXPECT_NE(error.find("syntax error"), std::string::npos) << error;
    }
}

TEST(JsonReader, ScalarsHaveNlohmannsTypes) {
    for (const char* text : {"0",
                             "-0",
                             "1",
                             "-1",
                             "18446744073709551615",
                             "18446744073709551616",
                             "-9223372036854775808",
                             "-9223372036854775809",
                             "1.5",
                             "-0.0",
                             "1e5",
                             "1E+5",
                             "1e-5",
                             "0.1",
                             "2.2250738585072014e-308",
                             "4.9e-324",
                             "1e-400",
                             "-1e-400",
                             "1.7976931348623157e308",
                             "123456789012345678901234567890",
                             "true",
                             "false",
                             "null",
                             "\"\"",
                             "\"x\"",
                             " \t\r\n 7 \n"}) {
        SCOPED_TRACE(text);
        expect_like_nlohmann(text);
    }
    EXPECT_TRUE(read_json("18446744073709551615").is_number_unsigned());
    EXPECT_TRUE(read_json("-1").is_number_integer());
    EXPECT_TRUE(read_json("18446744073709551616").is_number_float());
}

TEST(JsonReader, ContainersAndDuplicates) {
    for (const char* text :
         {"[]", "{}", "[1,[2,[3]],{}]", R"({"a":1,"b":[true,null],"c":{"d":"e"}})", R"({"a":1,"a":2})",
          R"({"a":{"x":1},"a":[2]})", R"([{"":0}])", " [ 1 , 2 ] ", R"({ "k" : "v" })"}) {
        SCOPED_TRACE(text);
        expect_like_nlohmann(text);
    }
    EXPECT_EQ(read_json(R"({"a":1,"a":2})")["a"], 2);  // the last one wins
}

TEST(JsonReader, StringsEscapesAndUtf8) {
    for (const char* text :
         {R"("\" \\ \/ \b \f \n \r \t")", R"("\u0000")", R"("\u00e9\u20AC")", R"("\ud83d\ude00")", "\"caf\xC3\xA9\"",
          "\"\xE2\x82\xAC\"", "\"\xF0\x9F\x98\x80\"", "\"\xF4\x8F\xBF\xBF\"", "\"\xED\x9F\xBF\"", "\"\xEF\xBB\xBF\"",
          "\xEF\xBB\xBF{}",  // a byte order mark before the document
          // refused: bad escapes, lone surrogates, invalid UTF-8, raw control characters
          R"("\x")", R"("\u12")", R"("\u12G4")", R"("\ud83d")", R"("\ud83dx")", R"("\ud83d\u0041")", R"("\ude00")",
          "\"\xC0\xAF\"", "\"\xC1\xBF\"", "\"\xE0\x80\xAF\"", "\"\xED\xA0\x80\"", "\"\xF4\x90\x80\x80\"",
          "\"\xF5\x80\x80\x80\"", "\"\xFF\"", "\"\x80\"", "\"\xC3\"", "\"\xE2\x82\"", "\"a\x01\"", "\"tab\tin\"",
          "\"unterminated", "\xEF\xBB"}) {
        SCOPED_TRACE(text);
        expect_like_nlohmann(text);
    }
}

// Plain bytes are passed over eight at a time: a byte that needs a look of its own (the
// quote, a backslash, a control byte, UTF-8) is seen wherever it falls in a word.
TEST(JsonReader, EveryByteAtEveryOffsetOfALongString) {
    const std::string plain = "abcdefghijklmnopqrstuvwxyz0123456789";
    for (int b = 0; b < 256; ++b) {
        for (std::size_t at = 0; at < plain.size(); ++at) {
            std::string s = plain;
            s[at] = static_cast<char>(b);
            SCOPED_TRACE("byte " + std::to_string(b) + " at " + std::to_string(at));
            expect_like_nlohmann("\"" + s + "\"");
            expect_like_nlohmann("{\"" + s + "\":1}");
            if (b == 0x80) expect_like_nlohmann("\"" + s.substr(0, at) + "\xC3\xA9" + s.substr(at + 1) + "\"");
        }
    }
}

TEST(JsonReader, RefusesWhatIsNotJson) {
    for (const char* text :
         {"",           " ",         "[",      "]",         "{",        "{\"a\"",  "{\"a\":",    "{\"a\":1",
          "{\"a\":1,}", "[1,]",      "[,1]",   "{,}",       "{1:2}",    "{'a':1}", "01",         "-",
          "-a",         "1.",        ".5",     "1e",        "1e+",      "+1",      "0x10",       "NaN",
          "Infinity",   "1e999",     "-1e999", "tru",       "nul",      "falsey",  "true false", "[1] x",
          "{} {}",      "/* c */ 1", "[1 2]",  "{\"a\" 1}", "\"a\" : 1"}) {
        SCOPED_TRACE(text);
        expect_like_nlohmann(text);
    }
}

TEST(JsonReader, ANulByteAfterTheValueIsTrailingText) {
    // nlohmann stops at the NUL and accepts; a message with bytes after it is refused here.
    const std::string text("{\"a\":1} \0\0junk", 15);
    EXPECT_NO_THROW((void)Json::parse(text));
    EXPECT_THROW(read_json(text), Json::parse_error);
}

TEST(JsonReader, TheMessageNamesTheByteAndWhatWasExpected) {
    try {
        read_json(R"({"a": tru})");
        FAIL() << "accepted";
    } catch (const Json::parse_error& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("at byte 7"), std::string::npos) << what;
        EXPECT_NE(what.find("true, false or null"), std::string::npos) << what;
    }
}

TEST(JsonReader, NestingBeyondTheLimitIsRefusedNotRecursedInto) {
    JsonReadOptions options;
    options.max_depth = 10;
    EXPECT_NO_THROW(read_json(std::string(10, '[') + std::string(10, ']'), options));
    EXPECT_THROW(read_json(std::string(11, '[') + std::string(11, ']'), options), JsonTooDeep);
    EXPECT_THROW(read_json(R"({"a":)" + std::string(10, '[') + std::string(10, ']') + "}", options), JsonTooDeep);
    // The default limit stops a hostile document long before the stack would.
    EXPECT_THROW(read_json(std::string(100000, '[')), JsonTooDeep);
}

TEST(JsonReader, BigIntegerIdsAreKeptOnlyWhereIdsLie) {
    JsonReadOptions keep;
    keep.keep_big_integer_ids = true;
    const std::string big = "123456789012345678901234567890";
    const Json message = read_json(R"({"jsonrpc":"2.0","id":)" + big + R"(,"method":"x","params":{"id":)" + big + "}}",
                                   keep);
    EXPECT_TRUE(is_big_integer_id(message["id"]));
    EXPECT_EQ(big_integer_id_digits(message["id"]), big);
    EXPECT_TRUE(message["params"]["id"].is_number_float());  // not an id position

    const Json batch = read_json("[{\"id\":" + big + "},{\"id\":-" + big + "},[{\"id\":" + big + "}]]", keep);
    EXPECT_TRUE(is_big_integer_id(batch[0]["id"]));
    EXPECT_EQ(big_integer_id_digits(batch[1]["id"]), "-" + big);
    EXPECT_TRUE(batch[2][0]["id"].is_number_float());  // three levels down: not a message

    const Json cancelled = read_json(R"({"method":"notifications/cancelled","params":{"requestId":)" + big + "}}", keep);
    EXPECT_TRUE(is_big_integer_id(cancelled["params"]["requestId"]));
    const Json other = read_json(R"({"method":"tools/call","params":{"requestId":)" + big + "}}", keep);
    EXPECT_TRUE(other["params"]["requestId"].is_number_float());
    // Without the option, every big integer is a double, as nlohmann reads it.
    EXPECT_TRUE(read_json("{\"id\":" + big + "}")["id"].is_number_float());
    // A fraction or exponent is a float even at an id position.
    EXPECT_TRUE(read_json("{\"id\":1" + big + ".5}", keep)["id"].is_number_float());
}

// Random mutations of valid documents: truncations, flipped bytes, inserted delimiters.
TEST(JsonReader, MutatedDocumentsAgreeWithNlohmann) {
    const std::vector<std::string> seeds = {
        R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"h\u00e9llo","n":-2.5e3,"list":[1,2,{"deep":[null,true,false]}]}}})",
        R"([{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"caf)"
        "\xC3\xA9"
        R"( \ud83d\ude00"}],"isError":false}}])"};
    std::mt19937 rng(20261125);
    for (const auto& seed : seeds) {
        expect_like_nlohmann(seed);
        for (int round = 0; round < 4000; ++round) {
            const std::string text = test_support::mutated(seed, rng);
            SCOPED_TRACE(text);
            expect_like_nlohmann(text);
            if (HasFailure()) return;
        }
    }
}

// Every document of the JSON-Schema-Test-Suite (unicode, floats, big numbers, nesting).
TEST(JsonReader, TheSchemaSuiteDocumentsMatchNlohmann) {
    const auto files = test_support::schema_suite_files();
    ASSERT_GT(files.size(), 100u) << "the JSON-Schema-Test-Suite is missing";
    for (const auto& file : files) ASSERT_TRUE(identical(read_json(file.text), Json::parse(file.text))) << file.path;
}

}  // namespace
}  // namespace toolport::protocol
