// The one rule for reading YAML scalars (src/document/document.hpp), the lines every
// value is found at, strict JSON, and the size cap on files read.
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "document/document.hpp"
#include "error_of.hpp"

using namespace toolport::document;
using toolport::Json;
using toolport::test_support::error_of;

namespace {

namespace fs = std::filesystem;

// The value of `key: <text>` read as YAML.
Json scalar(const std::string& text) { return parse_yaml("key: " + text + "\n").value["key"]; }

// The error of reading `key: <text>`, with its line.
std::string scalar_error(const std::string& text) {
    try {
        parse_yaml("key: " + text + "\n");
    } catch (const DocumentError& e) {
        return std::to_string(e.line()) + ": " + e.what();
    }
    return "(no error)";
}

}  // namespace

TEST(DocumentYamlRule, NullSpellings) {
    for (const char* text : {"", "~", "null", "Null", "NULL"}) EXPECT_TRUE(scalar(text).is_null()) << text;
    EXPECT_EQ(scalar("nULL"), "nULL");
    EXPECT_EQ(scalar("\"null\""), "null");
}

TEST(DocumentYamlRule, BooleansAreTrueAndFalseOnly) {
    for (const char* text : {"true", "True", "TRUE"}) EXPECT_EQ(scalar(text), Json(true)) << text;
    for (const char* text : {"false", "False", "FALSE"}) EXPECT_EQ(scalar(text), Json(false)) << text;
    // YAML 1.1's other booleans are strings in 1.2 (a country code `no`, a switch `on`).
    for (const char* text : {"yes", "no", "on", "off", "y", "n", "Yes", "ON", "tRUE"}) {
        EXPECT_EQ(scalar(text), Json(text)) << text;
    }
    EXPECT_EQ(scalar("'true'"), "true");
}

TEST(DocumentYamlRule, Integers) {
    EXPECT_EQ(scalar("42"), 42);
    EXPECT_TRUE(scalar("42").is_number_integer());
    EXPECT_EQ(scalar("-7"), -7);
    EXPECT_EQ(scalar("+7"), 7);
    EXPECT_EQ(scalar("0123"), 123) << "decimal, not YAML 1.1's octal";
    EXPECT_EQ(scalar("0o17"), 15);
    EXPECT_EQ(scalar("0x1F"), 31);
    EXPECT_EQ(scalar("9223372036854775807"), INT64_MAX);
    EXPECT_EQ(scalar("-9223372036854775808"), INT64_MIN);
    EXPECT_TRUE(scalar("18446744073709551615").is_number_unsigned());
    // Past 64 bits a decimal is a double, as JavaScript reads it; octal and hex are refused.
    EXPECT_TRUE(scalar("123456789012345678901234").is_number_float());
    EXPECT_EQ(scalar_error("0x1FFFFFFFFFFFFFFFFF"), "1: the number 0x1FFFFFFFFFFFFFFFFF does not fit in 64 bits");
}

TEST(DocumentYamlRule, Floats) {
    EXPECT_EQ(scalar("1.5"), 1.5);
    EXPECT_EQ(scalar(".5"), 0.5);
    EXPECT_EQ(scalar("1."), 1.0);
    EXPECT_TRUE(scalar("1.").is_number_float());
    EXPECT_EQ(scalar("1e3"), 1000.0);
    EXPECT_EQ(scalar("-2.5E-1"), -0.25);
    EXPECT_EQ(scalar_error("1e999"), "1: the number 1e999 is too large for JSON");
    for (const char* text : {".inf", "-.Inf", ".nan", ".NaN"}) {
        EXPECT_NE(scalar_error(text).find("cannot be represented in JSON"), std::string::npos) << text;
    }
}

TEST(DocumentYamlRule, StringsThatLookLikeOtherThings) {
    for (const char* text : {"3.0.3", "1_000", "0b101", "0O17", "0X1F", "2024-01-01", "12:30", "1e", "e3", ".",
                             "${PORT}", "${TOKEN:-none}", "0x", "+-1"}) {
        EXPECT_EQ(scalar(text), Json(text)) << text;
    }
    // Quoted and block scalars, and !!str, are strings whatever they spell.
    EXPECT_EQ(scalar("\"123\""), "123");
    EXPECT_EQ(scalar("'1.5'"), "1.5");
    EXPECT_EQ(scalar("!!str 123"), "123");
    EXPECT_EQ(parse_yaml("key: |\n  42\n").value["key"], "42\n");
    EXPECT_EQ(parse_yaml("key: >-\n  true\n").value["key"], "true");
}

TEST(DocumentYamlRule, TagsAreCheckedAgainstTheRule) {
    EXPECT_EQ(scalar("!!int 7"), 7);
    EXPECT_TRUE(scalar("!!float 7").is_number_float());
    EXPECT_EQ(scalar("!!bool true"), true);
    EXPECT_TRUE(scalar("!!null null").is_null());
    EXPECT_EQ(scalar_error("!!int 1.5"), "1: \"1.5\" is not a valid !!int");
    EXPECT_EQ(scalar_error("!!bool yes"), "1: \"yes\" is not a valid !!bool");
    EXPECT_EQ(scalar_error("!custom x"), "1: unsupported YAML tag \"!custom\"");
}

TEST(DocumentYamlRule, KeysAreTheirTextAndTypedScalarsKeepTheirSpelling) {
    auto doc = parse_yaml("1: a\nyes: b\nid: 0123\nversion: 1.10\nflag: True\nname: x\nlist: [0x1F, y]\n");
    EXPECT_EQ(doc.value, (Json{{"1", "a"},
                               {"yes", "b"},
                               {"id", 123},
                               {"version", 1.1},
                               {"flag", true},
                               {"name", "x"},
                               {"list", {31, "y"}}}));
    EXPECT_EQ(doc.spelling("/id"), "0123");
    EXPECT_EQ(doc.spelling("/version"), "1.10");
    EXPECT_EQ(doc.spelling("/flag"), "True");
    EXPECT_EQ(doc.spelling("/list/0"), "0x1F");
    EXPECT_EQ(doc.spelling("/name"), std::nullopt) << "strings are not repeated";
    EXPECT_EQ(doc.spelling("/list/1"), std::nullopt);
    EXPECT_EQ(doc.spelling("/absent"), std::nullopt);
    EXPECT_TRUE(parse_json("{\"id\": 123}").spellings.empty());
}

TEST(DocumentYaml, LinesOfKeysAndItems) {
    auto doc = parse_yaml("# a comment\nname: t\nitems:\n  - one\n  -\n    deep: 1\nlast: {a: 1}\n");
    EXPECT_EQ(doc.line_of(""), 2);
    EXPECT_EQ(doc.line_of("/name"), 2);
    EXPECT_EQ(doc.line_of("/items"), 3);
    EXPECT_EQ(doc.line_of("/items/0"), 4);
    EXPECT_EQ(doc.line_of("/items/1/deep"), 6);
    EXPECT_EQ(doc.line_of("/last/a"), 7);
    EXPECT_EQ(doc.line_of("/items/1/deep/absent"), 6) << "the nearest ancestor's line";
    EXPECT_EQ(doc.line_of("/a~1b"), 2) << "the root's line for a member that is not there";
    EXPECT_EQ(pointer_append("/x", "a/b~c"), "/x/a~1b~0c");
    EXPECT_EQ(pointer_append("/x", std::size_t{3}), "/x/3");
}

TEST(DocumentYaml, WhatIsNotWellFormed) {
    auto error = [](const std::string& text) {
        try {
            parse_yaml(text);
        } catch (const DocumentError& e) {
            return std::to_string(e.line()) + ": " + e.what();
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(error("a: 1\nb: 2\na: 3\n"), "3: duplicate key \"a\"");
    EXPECT_NE(error("a: [1,\n").find("YAML syntax error"), std::string::npos);
    EXPECT_NE(error("a: 1\n---\nb: 2\n").find("holds 2 YAML documents"), std::string::npos);
    EXPECT_EQ(error("? [a]\n: 1\n"), "1: mapping keys must be plain strings");
    EXPECT_EQ(error("a: 1\nnull: 2\n"), "2: mapping keys must be plain strings") << "a key spelled null";
    // Aliases that expand a few lines into more than 100,000 values (a "billion laughs").
    std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
    for (char name : std::string("bcde")) {
        laughs += std::string(1, name) + ": &" + name + " [";
        for (int i = 0; i < 10; ++i) laughs += std::string(i ? ", *" : "*") + static_cast<char>(name - 1);
        laughs += "]\n";
    }
    EXPECT_NE(error(laughs).find("more than 100000 values"), std::string::npos) << error(laughs);
    std::string deep = "a: " + std::string(300, '[') + std::string(300, ']') + "\n";
    EXPECT_NE(error(deep).find("nested more than 256 deep"), std::string::npos);
    EXPECT_TRUE(parse_yaml("").value.is_null());
    EXPECT_EQ(parse_yaml("\xEF\xBB\xBFk: v\n").value, (Json{{"k", "v"}})) << "a byte order mark is skipped";
}

TEST(DocumentJson, StrictWithLinesAndNoDuplicateKeys) {
    auto doc = parse_json("{\n  \"a\": 1,\n  \"b\": [\n    true,\n    \"x\"\n  ]\n}");
    EXPECT_EQ(doc.value, (Json{{"a", 1}, {"b", {true, "x"}}}));
    EXPECT_EQ(doc.line_of("/a"), 2);
    EXPECT_EQ(doc.line_of("/b/1"), 5);
    EXPECT_EQ(error_of([] { parse_json("{\"a\": 1,\n\"a\": 2}"); }), "duplicate key \"a\"");
    EXPECT_EQ(parse_json_value("{\"a\": 1, \"a\": 2}"), (Json{{"a", 2}})) << "values alone allow them (responses)";
    EXPECT_EQ(error_of([] { parse_json("{\"a\": 1,}"); }).rfind("JSON parse error at line 1", 0), 0u);
    EXPECT_EQ(error_of([] { parse_json("// no comments\n{}"); }).rfind("JSON parse error", 0), 0u);
}

TEST(DocumentFiles, ByExtensionAndCappedInSize) {
    const fs::path dir = fs::path(::testing::TempDir()) / "document_test";
    fs::create_directories(dir);
    EXPECT_EQ(parse_document("a: yes\n", dir / "x.YML").value, (Json{{"a", "yes"}}));
    EXPECT_EQ(parse_document("{\"a\": 1}", dir / "x.json").value, (Json{{"a", 1}}));
    EXPECT_EQ(error_of([&] { parse_document("a: 1", dir / "x.txt"); }),
              "unsupported file type \".txt\" (use .yaml, .yml or .json)");

    const fs::path at_cap = dir / "at_cap.yaml";
    std::ofstream(at_cap, std::ios::binary) << std::string(kMaxDocumentBytes, 'a');
    EXPECT_EQ(read_text_file(at_cap).size(), kMaxDocumentBytes);
    const fs::path over = dir / "over.yaml";
    std::ofstream(over, std::ios::binary) << std::string(kMaxDocumentBytes + 1, 'a');
    EXPECT_EQ(error_of([&] { read_text_file(over); }), "is larger than 4 MiB");
    EXPECT_EQ(error_of([&] { read_text_file(dir / "absent.yaml"); }), "cannot be read (missing or not permitted)");
    EXPECT_EQ(error_of([&] { read_text_file(dir); }), "is a directory, not a file");
    fs::remove_all(dir);
}
