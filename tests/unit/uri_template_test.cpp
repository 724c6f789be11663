// UriTemplate: RFC 6570 expansion (the RFC's own examples, section 3.2), matching a URI back
// to its variables for every operator, round trips, and hostile templates and URIs.
#include <gtest/gtest.h>

#include <chrono>
#include <random>
#include <string>
#include <vector>

#include "server/uri_template.hpp"
#include "util/json.hpp"

using toolport::Json;
using toolport::UriTemplate;

namespace {

// The variables of RFC 6570 section 3.2. `keys` is an ordered associative array in the RFC;
// a JSON object here, so its pairs come in key order (comma, dot, semi) below.
const Json& rfc_variables() {
    static const Json vars = Json::parse(R"({
        "count": ["one", "two", "three"], "dom": ["example", "com"], "dub": "me/too",
        "hello": "Hello World!", "half": "50%", "var": "value", "who": "fred",
        "base": "http://example.com/home/", "path": "/foo/bar", "list": ["red", "green", "blue"],
        "keys": {"semi": ";", "dot": ".", "comma": ","}, "v": "6", "x": "1024", "y": "768",
        "empty": "", "empty_keys": {}, "undef": null})");
    return vars;
}

std::optional<Json> match(const std::string& pattern, const std::string& uri) {
    return UriTemplate(pattern).match(uri);
}

void expect_match(const std::string& pattern, const std::string& uri, const char* variables) {
    auto m = match(pattern, uri);
    ASSERT_TRUE(m.has_value()) << pattern << " on " << uri;
    EXPECT_EQ(*m, Json::parse(variables)) << pattern << " on " << uri;
}

void expect_no_match(const std::string& pattern, const std::string& uri) {
    EXPECT_FALSE(match(pattern, uri).has_value()) << pattern << " on " << uri << ": " << match(pattern, uri)->dump();
}

struct Example {
    const char* pattern;
    const char* expansion;
};

void expect_expansions(const std::vector<Example>& examples) {
    for (const auto& e : examples) {
        UriTemplate t(e.pattern);
        EXPECT_TRUE(t.valid()) << e.pattern;
        EXPECT_EQ(t.expand(rfc_variables()), e.expansion) << e.pattern;
    }
}

}  // namespace

// ---- expansion: RFC 6570 section 3.2 --------------------------------------------------------

TEST(UriTemplateExpand, SimpleAndReserved) {
    expect_expansions({
        {"{var}", "value"},
        {"{hello}", "Hello%20World%21"},
        {"{half}", "50%25"},
        {"O{empty}X", "OX"},
        {"O{undef}X", "OX"},
        {"{x,y}", "1024,768"},
        {"{x,hello,y}", "1024,Hello%20World%21,768"},
        {"?{x,empty}", "?1024,"},
        {"?{x,undef}", "?1024"},
        {"?{undef,y}", "?768"},
        {"{var:3}", "val"},
        {"{var:30}", "value"},
        {"{list}", "red,green,blue"},
        {"{list*}", "red,green,blue"},
        {"{keys}", "comma,%2C,dot,.,semi,%3B"},
        {"{keys*}", "comma=%2C,dot=.,semi=%3B"},
        {"{+var}", "value"},
        {"{+hello}", "Hello%20World!"},
        {"{+half}", "50%25"},
        {"{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
        {"{+base}index", "http://example.com/home/index"},
        {"O{+empty}X", "OX"},
        {"{+path}/here", "/foo/bar/here"},
        {"here?ref={+path}", "here?ref=/foo/bar"},
        {"up{+path}{var}/here", "up/foo/barvalue/here"},
        {"{+x,hello,y}", "1024,Hello%20World!,768"},
        {"{+path,x}/here", "/foo/bar,1024/here"},
        {"{+path:6}/here", "/foo/b/here"},
        {"{+list*}", "red,green,blue"},
        {"{+keys}", "comma,,,dot,.,semi,;"},
        {"{+keys*}", "comma=,,dot=.,semi=;"},
    });
}

TEST(UriTemplateExpand, FragmentLabelAndPath) {
    expect_expansions({
        {"{#var}", "#value"},
        {"{#hello}", "#Hello%20World!"},
        {"{#half}", "#50%25"},
        {"foo{#empty}", "foo#"},
        {"foo{#undef}", "foo"},
        {"{#x,hello,y}", "#1024,Hello%20World!,768"},
        {"{#path,x}/here", "#/foo/bar,1024/here"},
        {"{#path:6}/here", "#/foo/b/here"},
        {"{#list*}", "#red,green,blue"},
        {"{#keys*}", "#comma=,,dot=.,semi=;"},
        {"{.who}", ".fred"},
        {"{.who,who}", ".fred.fred"},
        {"{.half,who}", ".50%25.fred"},
        {"www{.dom*}", "www.example.com"},
        {"X{.var}", "X.value"},
        {"X{.empty}", "X."},
        {"X{.undef}", "X"},
        {"X{.var:3}", "X.val"},
        {"X{.list}", "X.red,green,blue"},
        {"X{.list*}", "X.red.green.blue"},
        {"X{.keys*}", "X.comma=%2C.dot=..semi=%3B"},
        {"X{.empty_keys}", "X"},
        {"X{.empty_keys*}", "X"},
        {"{/who}", "/fred"},
        {"{/who,who}", "/fred/fred"},
        {"{/half,who}", "/50%25/fred"},
        {"{/who,dub}", "/fred/me%2Ftoo"},
        {"{/var}", "/value"},
        {"{/var,empty}", "/value/"},
        {"{/var,undef}", "/value"},
        {"{/var,x}/here", "/value/1024/here"},
        {"{/var:1,var}", "/v/value"},
        {"{/list}", "/red,green,blue"},
        {"{/list*}", "/red/green/blue"},
        {"{/list*,path:4}", "/red/green/blue/%2Ffoo"},
        {"{/keys*}", "/comma=%2C/dot=./semi=%3B"},
    });
}

TEST(UriTemplateExpand, ParametersQueryAndContinuation) {
    expect_expansions({
        {"{;who}", ";who=fred"},
        {"{;half}", ";half=50%25"},
        {"{;empty}", ";empty"},
        {"{;v,empty,who}", ";v=6;empty;who=fred"},
        {"{;v,bar,who}", ";v=6;who=fred"},
        {"{;x,y}", ";x=1024;y=768"},
        {"{;x,y,empty}", ";x=1024;y=768;empty"},
        {"{;x,y,undef}", ";x=1024;y=768"},
        {"{;hello:5}", ";hello=Hello"},
        {"{;list}", ";list=red,green,blue"},
        {"{;list*}", ";list=red;list=green;list=blue"},
        {"{;keys}", ";keys=comma,%2C,dot,.,semi,%3B"},
        {"{;keys*}", ";comma=%2C;dot=.;semi=%3B"},
        {"{?who}", "?who=fred"},
        {"{?half}", "?half=50%25"},
        {"{?x,y}", "?x=1024&y=768"},
        {"{?x,y,empty}", "?x=1024&y=768&empty="},
        {"{?x,y,undef}", "?x=1024&y=768"},
        {"{?var:3}", "?var=val"},
        {"{?list}", "?list=red,green,blue"},
        {"{?list*}", "?list=red&list=green&list=blue"},
        {"{?keys}", "?keys=comma,%2C,dot,.,semi,%3B"},
        {"{?keys*}", "?comma=%2C&dot=.&semi=%3B"},
        {"{&who}", "&who=fred"},
        {"{&half}", "&half=50%25"},
        {"?fixed=yes{&x}", "?fixed=yes&x=1024"},
        {"{&x,y,empty}", "&x=1024&y=768&empty="},
        {"{&var:3}", "&var=val"},
        {"{&list*}", "&list=red&list=green&list=blue"},
        {"{&keys*}", "&comma=%2C&dot=.&semi=%3B"},
    });
}

// ---- matching: the RFC's expansions read back ------------------------------------------------

TEST(UriTemplateMatch, SimpleExpressions) {
    expect_match("{var}", "value", R"({"var":"value"})");
    expect_match("{hello}", "Hello%20World%21", R"({"hello":"Hello World!"})");
    expect_match("{half}", "50%25", R"({"half":"50%"})");
    expect_match("{x,y}", "1024,768", R"({"x":"1024","y":"768"})");
    expect_match("{x,hello,y}", "1024,Hello%20World%21,768", R"({"x":"1024","hello":"Hello World!","y":"768"})");
    expect_match("?{x,empty}", "?1024,", R"({"x":"1024","empty":""})");
    expect_match("?{x,undef}", "?1024", R"({"x":"1024"})");
    // Undefined variables leave no trace: the first variables take the values there are.
    expect_match("?{undef,y}", "?768", R"({"undef":"768"})");
    expect_match("{var:3}", "val", R"({"var":"val"})");
    expect_no_match("{var:3}", "value");
    expect_match("{var:3}", "%C3%A9t%C3%A9", R"({"var":"été"})");  // three characters, eight bytes
    // A list that is not exploded stays one string; an exploded one is an array.
    expect_match("{list}", "red,green,blue", R"({"list":"red,green,blue"})");
    expect_match("{list*}", "red,green,blue", R"({"list":["red","green","blue"]})");
    expect_match("{keys*}", "comma=%2C,dot=.,semi=%3B", R"({"keys":["comma=,","dot=.","semi=;"]})");
    expect_match("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex", R"({"base":"http://example.com/home/"})");
    // Empty simple expressions do not match (they could be anywhere).
    expect_no_match("O{empty}X", "OX");
}

TEST(UriTemplateMatch, ReservedAndFragment) {
    expect_match("{+hello}", "Hello%20World!", R"({"hello":"Hello World!"})");
    expect_match("{+half}", "50%25", R"({"half":"50%"})");
    expect_match("{+base}index", "http://example.com/home/index", R"({"base":"http://example.com/home/"})");
    expect_match("{+path}/here", "/foo/bar/here", R"({"path":"/foo/bar"})");
    expect_match("here?ref={+path}", "here?ref=/foo/bar", R"({"path":"/foo/bar"})");
    expect_match("{+path,x}/here", "/foo/bar,1024/here", R"({"path":"/foo/bar","x":"1024"})");
    expect_match("{+path:6}/here", "/foo/b/here", R"({"path":"/foo/b"})");
    // Shortest first: up{+path}{var}/here cannot know where path ended.
    expect_match("up{+path}{var}/here", "up/foo/barvalue/here", R"({"path":"/foo/","var":"barvalue"})");
    // An escaped reserved character stays escaped: a '/' inside a name is not a separator.
    expect_match("file:///{+path}", "file:///docs/a%2Fb%20c.md", R"({"path":"docs/a%2Fb c.md"})");
    expect_match("{#var}", "#value", R"({"var":"value"})");
    expect_match("foo{#empty}", "foo#", R"({"empty":""})");
    expect_match("foo{#undef}", "foo", R"({})");
    expect_match("{#x,hello,y}", "#1024,Hello%20World!,768", R"({"x":"1024","hello":"Hello World!","y":"768"})");
    expect_match("{#path,x}/here", "#/foo/bar,1024/here", R"({"path":"/foo/bar","x":"1024"})");
    expect_match("{#list*}", "#red,green,blue", R"({"list":["red","green","blue"]})");
    expect_no_match("{+var}", "");  // never empty
}

TEST(UriTemplateMatch, LabelsAndPathSegments) {
    expect_match("{.who}", ".fred", R"({"who":"fred"})");
    expect_match("www{.dom*}", "www.example.com", R"({"dom":["example","com"]})");
    expect_match("X{.var}", "X.value", R"({"var":"value"})");
    expect_match("X{.empty}", "X.", R"({"empty":""})");
    expect_match("X{.undef}", "X", R"({})");
    expect_match("X{.list*}", "X.red.green.blue", R"({"list":["red","green","blue"]})");
    expect_match("x://file{.ext}", "x://file.tar.gz", R"({"ext":"tar.gz"})");  // a value may hold dots
    expect_no_match("X{.var:3}", "X.value");
    expect_match("{/who}", "/fred", R"({"who":"fred"})");
    expect_match("{/who,dub}", "/fred/me%2Ftoo", R"({"who":"fred","dub":"me/too"})");
    expect_match("{/var,empty}", "/value/", R"({"var":"value","empty":""})");
    expect_match("{/var,undef}", "/value", R"({"var":"value"})");
    expect_match("{/var,x}/here", "/value/1024/here", R"({"var":"value","x":"1024"})");
    expect_match("{/list}", "/red,green,blue", R"({"list":"red,green,blue"})");
    // A name twice, once with a prefix: the prefix must begin the full value.
    expect_match("{/var:1,var}", "/v/value", R"({"var":"value"})");
    expect_no_match("{/var:1,var}", "/x/value");
    expect_match("x://{a:2}/{a}", "x://ab/abc", R"({"a":"abc"})");
    expect_match("x://{a:5}/{a}", "x://abc/abc", R"({"a":"abc"})");
    expect_no_match("x://{a:5}/{a}", "x://ab/abc");  // "abc" cut to 5 is not "ab"
    expect_match("{/list*}", "/red/green/blue", R"({"list":["red","green","blue"]})");
    expect_match("{/list*,path:4}", "/red/green/blue/%2Ffoo", R"({"list":["red","green","blue"],"path":"/foo"})");
    // A value's '/' is encoded in a path segment: more segments than variables refuse.
    expect_no_match("{/var}", "/a/b");
    expect_no_match("{/var}", "/a?b");
}

TEST(UriTemplateMatch, PathParameters) {
    expect_match("{;who}", ";who=fred", R"({"who":"fred"})");
    expect_match("{;half}", ";half=50%25", R"({"half":"50%"})");
    expect_match("{;empty}", ";empty", R"({"empty":""})");
    expect_match("{;v,empty,who}", ";v=6;empty;who=fred", R"({"v":"6","empty":"","who":"fred"})");
    expect_match("{;v,bar,who}", ";v=6;who=fred", R"({"v":"6","who":"fred"})");
    expect_match("{;x,y}", ";y=768;x=1024", R"({"x":"1024","y":"768"})");  // by name
    expect_match("{;hello:5}", ";hello=Hello", R"({"hello":"Hello"})");
    expect_no_match("{;hello:5}", ";hello=Hello%20World");
    expect_match("{;list*}", ";list=red;list=green;list=blue", R"({"list":["red","green","blue"]})");
    expect_no_match("{;x}", ";x=1;other=2");  // an unknown path parameter refuses
    expect_no_match("{;x}", ";x=1;x=2");
    expect_match("{;x}", ";x=1;x=1", R"({"x":"1"})");  // twice alike is harmless
    expect_no_match("{x,x}", "1,2");
    expect_match("x://a{;x}/b", "x://a;x=1/b", R"({"x":"1"})");
}

TEST(UriTemplateMatch, QueryAnyOrderMissingAndUnknown) {
    expect_match("{?x,y}", "?x=1024&y=768", R"({"x":"1024","y":"768"})");
    expect_match("{?x,y}", "?y=768&x=1024", R"({"x":"1024","y":"768"})");
    expect_match("{?x,y,empty}", "?x=1024&y=768&empty=", R"({"x":"1024","y":"768","empty":""})");
    expect_match("{?list}", "?list=red,green,blue", R"({"list":"red,green,blue"})");
    expect_match("{?list*}", "?list=red&list=green&list=blue", R"({"list":["red","green","blue"]})");
    expect_match("{&who}", "&who=fred", R"({"who":"fred"})");
    expect_match("?fixed=yes{&x}", "?fixed=yes&x=1024", R"({"x":"1024"})");
    expect_no_match("?fixed=yes{&x}", "?fixed=no&x=1024");
    expect_match("{&x,y,empty}", "&x=1024&y=768&empty=", R"({"x":"1024","y":"768","empty":""})");

    expect_match("search://items{?q,limit}", "search://items?q=caf%C3%A9+au+lait&limit=5",
                 R"({"q":"café+au+lait","limit":"5"})");  // '+' is not a space in RFC 3986
    expect_match("search://items{?q,limit}", "search://items?limit=5", R"({"limit":"5"})");
    expect_match("search://items{?q,limit}", "search://items", R"({})");
    expect_match("search://items{?q,limit}", "search://items?", R"({})");
    // Parameters the template does not name are ignored (see the header for why).
    expect_match("search://items{?q,limit}", "search://items?utm_source=x&q=a", R"({"q":"a"})");
    expect_no_match("search://items{?q,limit}", "search://items?q=a&q=b");  // q twice, two values
    expect_no_match("search://items{?q,limit}", "search://items?q=a#top");
    expect_no_match("search://items{?q,limit}", "search://itemsq=a");
    expect_no_match("search://items{?q:2}", "search://items?q=abc");
    // {?a}{&b} is one query: any order too.
    expect_match("x://s{?a}{&b}", "x://s?b=2&a=1", R"({"a":"1","b":"2"})");
    expect_match("x://s{?a}{#f}", "x://s?a=1#frag", R"({"a":"1","f":"frag"})");
}

// ---- the templates of the brief, and level 1 as it always was -------------------------------

TEST(UriTemplateMatch, TemplatesUpstreamsServe) {
    expect_match("file:///{+path}", "file:///home/ada/notes/todo.md", R"({"path":"home/ada/notes/todo.md"})");
    expect_no_match("file:///{+path}", "file:///");
    expect_match("repo://{owner}/{repo}{/path*}", "repo://octo/hello/src/main.cpp",
                 R"({"owner":"octo","repo":"hello","path":["src","main.cpp"]})");
    expect_match("repo://{owner}/{repo}{/path*}", "repo://octo/hello", R"({"owner":"octo","repo":"hello"})");
    expect_no_match("repo://{owner}/{repo}{/path*}", "repo://octo");
    expect_match("x://{a}.{b}", "x://1.2", R"({"a":"1","b":"2"})");
    expect_match("x://{a}.{b}", "x://1.2.3", R"({"a":"1","b":"2.3"})");  // the shortest a
    expect_no_match("x://{a}.{b}", "x://12");
}

TEST(UriTemplateMatch, LevelOneAsBefore) {
    // A {var} is one path segment, never empty; a trailing one stops at '/'.
    expect_match("test://item/{name}", "test://item/x.txt", R"({"name":"x.txt"})");
    expect_no_match("test://item/{name}", "test://item/");
    expect_no_match("test://item/{name}", "test://item/a/b");
    expect_match("db://{table}/rows/{row}.json", "db://users/rows/17.json", R"({"table":"users","row":"17"})");
    expect_match("skill://{category}/{skill}/{file}", "skill://writing/tone/SKILL.md",
                 R"({"category":"writing","skill":"tone","file":"SKILL.md"})");
    expect_no_match("skill://{category}/{skill}/{file}", "skill://writing/tone/scripts/x.py");
    // Names outside RFC 6570's grammar that templates in the wild use still work.
    expect_match("x://{user-id}", "x://7", R"({"user-id":"7"})");
    expect_match("test://fixed", "test://fixed", R"({})");
    expect_no_match("test://fixed", "test://fixed2");
}

TEST(UriTemplateMatch, DecodingNeverYieldsInvalidUtf8) {
    // %FF alone is no UTF-8: the value is the URI's text, so the result always serialises.
    auto m = match("x://{id}", "x://a%FFb");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ((*m)["id"], "a%FFb");
    EXPECT_NO_THROW((void)m->dump());
    expect_match("x://{id}", "x://%00", "{\"id\":\"\\u0000\"}");
    expect_match("x://{id}", "x://50%", R"({"id":"50%"})");  // a '%' that starts no triplet
    expect_match("x://{id}", "x://%e2%82%ac", R"({"id":"€"})");
    // Values never end inside a character, even where any end would do.
    expect_match("x://{a}{b}", "x://éé", R"({"a":"é","b":"é"})");
    // Names are object keys: a template whose name is not UTF-8 is malformed.
    EXPECT_FALSE(UriTemplate("x://{a\xFF}").valid());
}

TEST(UriTemplateMatch, SameNameTwiceMustAgree) {
    expect_match("x://{a}/{a}", "x://1/1", R"({"a":"1"})");
    expect_no_match("x://{a}/{a}", "x://1/2");
}

// ---- round trips ------------------------------------------------------------------------------

TEST(UriTemplateRoundTrip, ExpandThenMatchGivesTheVariablesBack) {
    struct Case {
        const char* pattern;
        const char* variables;
    };
    const std::vector<Case> cases = {
        {"file:///{+path}", R"({"path":"docs/read me/€uro (1).md"})"},
        {"search://items{?q,limit}", R"({"q":"a&b=c #1 100%","limit":"10"})"},
        {"search://items{?q,limit}", R"({"limit":"3"})"},
        {"repo://{owner}/{repo}{/path*}", R"({"owner":"o w","repo":"r/x","path":["a","b c","%2F"]})"},
        {"x://{a}.{b}", R"({"a":"1","b":"2.3"})"},
        {"x://{a}/{b}{;p,q}{?list*}{#frag}", R"({"a":"?","b":"#","p":"","q":"1;2","list":["x","y"],"frag":"f,g"})"},
        {"map://{x,y}{.fmt}", R"({"x":"-15","y":"2","fmt":"png"})"},
    };
    for (const auto& c : cases) {
        UriTemplate t(c.pattern);
        const Json vars = Json::parse(c.variables);
        const std::string uri = t.expand(vars);
        auto m = t.match(uri);
        ASSERT_TRUE(m.has_value()) << c.pattern << " -> " << uri;
        EXPECT_EQ(*m, vars) << c.pattern << " -> " << uri;
    }
}

TEST(UriTemplateRoundTrip, RandomValues) {
    // Values from every kind of byte that survives as UTF-8, on templates where every value
    // is delimited by something its expansion encodes.
    std::mt19937 rng(6570);
    const std::vector<std::string> alphabet = {"a", "Z", "0", "-", ".", "_", "~", " ", "/", "?", "#", "&",
                                               "=", ",", ";", "+", "%", "é", "€", "😀", ":", "@", "!", "'"};
    auto value = [&](bool allow_empty) {
        std::string s;
        const int n = static_cast<int>(rng() % 8) + (allow_empty ? 0 : 1);
        for (int i = 0; i < n; ++i) s += alphabet[rng() % alphabet.size()];
        return s;
    };
    UriTemplate path_and_query("x://{a}/{b}{/rest*}{?q,n}");
    UriTemplate labels("x://host{.ext}{;p}");
    for (int round = 0; round < 500; ++round) {
        Json vars = {{"a", value(false)}, {"b", value(false)}, {"q", value(true)}};
        if (rng() % 2) vars["rest"] = Json::array({value(true), value(true)});
        if (rng() % 2) vars["n"] = std::to_string(rng() % 1000);
        const auto uri = path_and_query.expand(vars);
        auto m = path_and_query.match(uri);
        ASSERT_TRUE(m.has_value()) << uri;
        EXPECT_EQ(*m, vars) << uri;

        std::string ext = value(true);
        std::erase(ext, '.');  // a label's dots are its separators
        Json label_vars = {{"ext", ext}, {"p", value(true)}};
        const auto label_uri = labels.expand(label_vars);
        auto lm = labels.match(label_uri);
        ASSERT_TRUE(lm.has_value()) << label_uri;
        EXPECT_EQ(*lm, label_vars) << label_uri;
    }
}

// ---- malformed templates and hostile URIs ---------------------------------------------------

TEST(UriTemplateHostile, MalformedTemplatesMatchNothing) {
    for (const char* pattern :
         {"x://{a",     "x://{",       "x://}",      "x://a}b",    "x://{a}{",      "x://{}",
          "x://{+}",    "x://{a,}",    "x://{,a}",   "x://{a:0}",  "x://{a:10000}", "x://{a:x}",
          "x://{a:3*}", "x://{=a}",    "x://{!a}",   "x://{@a}",   "x://{|a}",      "x://{a b}",
          "x://{{a}}",  "x://{a{b}c}", "x://{?a=b}", "x://{;x;y}", "x://{a/b}",     "x://{a&b}"}) {
        UriTemplate t(pattern);
        EXPECT_FALSE(t.valid()) << pattern;
        EXPECT_FALSE(t.match("x://a").has_value()) << pattern;
        EXPECT_FALSE(t.match(pattern).has_value()) << pattern;
        EXPECT_EQ(t.expand(Json{{"a", "1"}}), "") << pattern;
    }
    EXPECT_TRUE(UriTemplate("").valid());
    EXPECT_TRUE(UriTemplate("").match("").has_value());
    EXPECT_TRUE(UriTemplate("x://{a:9999}").valid());
}

TEST(UriTemplateHostile, ManyBraces) {
    EXPECT_FALSE(UriTemplate(std::string(100000, '{')).valid());
    EXPECT_FALSE(UriTemplate(std::string(100000, '}')).valid());
    std::string many;
    for (int i = 0; i < 10000; ++i) many += "{a}";
    EXPECT_FALSE(UriTemplate(many).valid());  // over kMaxExpressions
    std::string most;
    for (std::size_t i = 0; i < UriTemplate::kMaxExpressions; ++i) most += "{+a" + std::to_string(i) + "}x";
    UriTemplate t(most);
    EXPECT_TRUE(t.valid());
    // Everything before the last "x" goes to the first variables, one character each.
    std::string uri;
    for (std::size_t i = 0; i < UriTemplate::kMaxExpressions; ++i) uri += "yx";
    auto m = t.match(uri);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->size(), UriTemplate::kMaxExpressions);
}

TEST(UriTemplateHostile, LongUrisMatchInLinearTime) {
    const std::string long_path(1 << 20, 'a');
    auto started = std::chrono::steady_clock::now();
    auto m = match("file:///{+path}{?v}", "file:///" + long_path + "?v=1");
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ((*m)["path"].get<std::string>().size(), long_path.size());
    m = match("repo://{owner}/{repo}{/path*}", "repo://o/r/" + long_path + "/" + long_path);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ((*m)["path"].size(), 2u);
    m = match("x://{a}.{b}", "x://" + long_path + "." + long_path);
    ASSERT_TRUE(m.has_value());
    std::string query = "search://items?";
    for (int i = 0; i < 20000; ++i) query += "p" + std::to_string(i) + "=v&";
    query += "q=found";
    m = match("search://items{?q,limit}", query);
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(*m, Json({{"q", "found"}}));
    const auto elapsed = std::chrono::steady_clock::now() - started;
    EXPECT_LT(elapsed, std::chrono::seconds(5));  // milliseconds in a release build
}

TEST(UriTemplateHostile, BacktrackingIsBounded) {
    // Adjacent expressions of reserved values, each followed by the same literal: a naive
    // backtracking matcher tries exponentially many splits of a long run of that literal.
    std::string pattern = "x://";
    for (int i = 0; i < 20; ++i) pattern += "{+v" + std::to_string(i) + "}b";
    pattern += "c";
    const std::string hostile = "x://" + std::string(50000, 'b');  // no final "c": never matches
    auto started = std::chrono::steady_clock::now();
    EXPECT_FALSE(match(pattern, hostile).has_value());
    std::string adjacent = "x://";
    for (int i = 0; i < 30; ++i) adjacent += "{v" + std::to_string(i) + "}";
    adjacent += "!";
    EXPECT_FALSE(match(adjacent, "x://" + std::string(100000, 'a')).has_value());
    EXPECT_FALSE(match("x://{+a}{+b}{+c}{+d}z", "x://" + std::string(200000, 'y')).has_value());
    EXPECT_FALSE(match("x://{?a}{/b*}{.c*}{;d}q", "x://" + std::string(200000, '/')).has_value());
    EXPECT_FALSE(match("x://{/a*}{/b*}{/c*}{/d*}q", "x://" + std::string(200000, '/')).has_value());
    const auto elapsed = std::chrono::steady_clock::now() - started;
    EXPECT_LT(elapsed, std::chrono::seconds(5));
    // The same templates still match what they should.
    EXPECT_TRUE(match(pattern, "x://" + std::string(40, 'b') + "c").has_value());
    EXPECT_TRUE(match("x://{+a}{+b}{+c}{+d}z", "x://abcdz").has_value());
}

TEST(UriTemplateHostile, SaysWhenItGaveUp) {
    UriTemplate adjacent("x://{+a}{+b}{+c}{+d}z");
    bool gave_up = false;
    EXPECT_FALSE(adjacent.match("x://" + std::string(200000, 'y'), &gave_up).has_value());
    EXPECT_TRUE(gave_up);
    EXPECT_TRUE(adjacent.match("x://abcdz", &gave_up).has_value());
    EXPECT_FALSE(gave_up);
    // Such a template costs work quadratic in the URI's length: the fixed allowance searches
    // a short URI in full.
    EXPECT_FALSE(adjacent.match("x://" + std::string(150, 'y'), &gave_up).has_value());
    EXPECT_FALSE(gave_up);
    // Ordinary templates never get near the cap, however long the URI.
    const std::string long_text(1 << 20, 'a');
    UriTemplate files("file:///{+path}{?v}");
    EXPECT_TRUE(files.match("file:///" + long_text + "#", &gave_up).has_value());
    EXPECT_FALSE(gave_up);
    UriTemplate repo("repo://{owner}/{repo}{/path*}");
    EXPECT_FALSE(repo.match("repo://o/r/" + long_text + "/" + long_text + "?x", &gave_up).has_value());
    EXPECT_FALSE(gave_up);
    EXPECT_FALSE(repo.match("repo://" + long_text + "/" + long_text + "?x", &gave_up).has_value());
    EXPECT_FALSE(gave_up);
}

TEST(UriTemplateHostile, RandomTemplatesAndUrisNeverThrow) {
    std::mt19937 rng(1);
    const std::string pieces[] = {"{",    "}",     "{a}", "{+b}", "{#c}", "{.d*}", "{/e*}", "{;f}", "{?g,h}",
                                  "{&i}", "{j:2}", "x",   "/",    ".",    "?",     "&",     "=",    ";",
                                  ",",    "#",     "%",   "%41",  "%FF",  "*",     ":",     "é"};
    for (int round = 0; round < 3000; ++round) {
        std::string pattern, uri;
        for (int i = static_cast<int>(rng() % 8); i > 0; --i) pattern += pieces[rng() % std::size(pieces)];
        for (int i = static_cast<int>(rng() % 12); i > 0; --i) uri += pieces[rng() % std::size(pieces)];
        UriTemplate t(pattern);
        std::optional<Json> m;
        ASSERT_NO_THROW(m = t.match(uri)) << pattern << " on " << uri;
        if (m) {
            EXPECT_NO_THROW((void)m->dump()) << pattern << " on " << uri;
        }
        EXPECT_NO_THROW((void)t.expand(Json{{"a", "1"}, {"e", {"x", "y"}}, {"g", ""}})) << pattern;
    }
}
