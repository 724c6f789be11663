// Arguments → HTTP requests: path templating with hostile values, query arrays in both
// styles, headers, bodies, and each kind of credential (and which alternative is sent).
#include <gtest/gtest.h>

#include "openapi_test_support.hpp"
#include "providers/openapi/request_builder.hpp"

using namespace toolport;
using namespace toolport::openapi;
using namespace toolport::openapi::test;

namespace {

const char* kDocument = R"(openapi: 3.0.3
info: {title: t, version: '1'}
security: [{key_header: []}]
paths:
  /files/{dir}/{name}.txt:
    get:
      operationId: getFile
      parameters:
        - {name: dir, in: path, required: true, schema: {type: string}}
        - {name: name, in: path, required: true, schema: {type: string}}
        - {name: tag, in: query, schema: {type: array, items: {type: string}}}
        - {name: ids, in: query, explode: false, schema: {type: array, items: {type: integer}}}
        - {name: pipes, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: filter, in: query, style: deepObject, schema: {type: object}}
        - {name: q, in: query, schema: {type: string}}
        - {name: X-Trace, in: header, schema: {type: string}}
        - {name: X-Flags, in: header, schema: {type: array, items: {type: string}}}
        - {name: session, in: cookie, schema: {type: string}}
      responses: {'200': {description: ok, content: {text/plain: {schema: {type: string}}}}}
  /things:
    post:
      operationId: createThing
      security: [{key_query: []}, {bearer: []}]
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {name: {type: string}, size: {type: integer}}}}}
      responses: {'200': {description: ok}}
    put:
      operationId: replaceThings
      security: [{basic: []}, {}]
      requestBody:
        content: {application/json: {schema: {type: array, items: {type: string}}}}
      responses: {'200': {description: ok}}
    delete:
      operationId: clearThings
      security: [{key_header: [], key_cookie: []}]
      responses: {'200': {description: ok}}
    patch:
      operationId: patchThings
      security: [{oauth: []}]
      responses: {'200': {description: ok}}
components:
  securitySchemes:
    key_header: {type: apiKey, in: header, name: X-API-Key}
    key_query: {type: apiKey, in: query, name: api_key}
    key_cookie: {type: apiKey, in: cookie, name: sid}
    bearer: {type: http, scheme: bearer}
    basic: {type: http, scheme: basic}
    oauth: {type: oauth2, flows: {}}
    mtls: {type: mutualTLS}
)";

class OpenApiRequest : public ::testing::Test {
protected:
    OpenApiRequest() {
        DocumentFolder folder;
        auto docs = load_file_document(folder.write("api.yaml", kDocument));
        list = read_operations(docs, {}, "");
        schemes = read_security_schemes(docs, "my-api", {{"bearer", "MY_TOKEN"}}, warnings);
    }

    BuiltRequest build(const std::string& tool, const Json& args) {
        return build_request(named(list, tool), args, "https://api.test/v1/", schemes, [this](const std::string& var) {
            auto it = env.find(var);
            return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
        });
    }

    std::string header(const BuiltRequest& built, const std::string& name) {
        for (const auto& [k, v] : built.request.headers) {
            if (k == name) return v;
        }
        return "(absent)";
    }

    OperationList list;
    SecuritySchemes schemes;
    std::vector<std::string> warnings;
    std::map<std::string, std::string> env = {{"MY_API_KEY_HEADER", "hdr-secret"}};
};

TEST_F(OpenApiRequest, SchemesAndTheirVariables) {
    EXPECT_EQ(default_credential_env("petstore", "api_key"), "PETSTORE_API_KEY");
    EXPECT_EQ(default_credential_env("my-api", "key.header"), "MY_API_KEY_HEADER");
    EXPECT_EQ(schemes.at("key_header").env_var, "MY_API_KEY_HEADER");
    EXPECT_EQ(schemes.at("bearer").env_var, "MY_TOKEN");  // named under credentials:
    EXPECT_EQ(schemes.at("oauth").kind, SecurityScheme::Kind::bearer);
    EXPECT_FALSE(schemes.count("mtls"));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("mutualTLS"), std::string::npos);
}

TEST_F(OpenApiRequest, PathValuesCannotLeaveTheirSegment) {
    auto built = build("getFile", {{"dir", "../x?y#z"}, {"name", ".."}});
    EXPECT_EQ(built.request.method, "GET");
    EXPECT_EQ(built.request.url, "https://api.test/v1/files/..%2Fx%3Fy%23z/%2E%2E.txt");
    built = build("getFile", {{"dir", "a b/ü%"}, {"name", "."}});
    EXPECT_EQ(built.request.url, "https://api.test/v1/files/a%20b%2F%C3%BC%25/%2E.txt");
    built = build("getFile", {{"dir", "//evil.test"}, {"name", "@evil.test"}});
    EXPECT_EQ(built.request.url, "https://api.test/v1/files/%2F%2Fevil.test/%40evil.test.txt");
    // A missing path value (validation normally refuses it first).
    auto error = error_of([&] { build("getFile", {{"dir", "a"}}); });
    EXPECT_EQ(error["error_code"], "MISSING_PARAMETER");
}

TEST_F(OpenApiRequest, QueryArraysObjectsHeadersAndCookies) {
    auto built = build("getFile", {{"dir", "d"},
                                   {"name", "n"},
                                   {"tag", {"a b", "c&d"}},
                                   {"ids", {1, 2, 3}},
                                   {"pipes", {"x", "y"}},
                                   {"filter", {{"color", "red"}, {"size", 2}}},
                                   {"q", "x=1"},
                                   {"X-Trace", "t-1"},
                                   {"X-Flags", {"f1", "f2"}},
                                   {"session", "s 1"}});
    const std::string url = built.request.url;
    EXPECT_EQ(url.substr(url.find('?') + 1),
              "tag=a%20b&tag=c%26d&ids=1,2,3&pipes=x|y&filter[color]=red&filter[size]=2&q=x%3D1");
    EXPECT_EQ(header(built, "X-Trace"), "t-1");
    EXPECT_EQ(header(built, "X-Flags"), "f1,f2");
    EXPECT_EQ(header(built, "Cookie"), "session=s%201");
    EXPECT_EQ(header(built, "X-API-Key"), "hdr-secret");  // the document's default security
    EXPECT_EQ(header(built, "Accept"), "*/*");            // the operation answers text
    EXPECT_TRUE(built.request.body.empty());
    EXPECT_EQ(built.secrets, (std::vector<std::string>{"hdr-secret"}));

    // A header value may not smuggle in another header.
    auto error = error_of([&] { build("getFile", {{"dir", "d"}, {"name", "n"}, {"X-Trace", "a\r\nX-Evil: 1"}}); });
    EXPECT_EQ(error["error_code"], "INVALID_ARGUMENT");
    EXPECT_EQ(error["parameter"], "X-Trace");
}

TEST_F(OpenApiRequest, BodiesAndTheFirstAlternativeWithItsSecrets) {
    // No query key: the second alternative, the bearer token.
    env["MY_TOKEN"] = "tok-123";
    auto built = build("createThing", {{"name", "box"}, {"size", 3}});
    EXPECT_EQ(Json::parse(build("createThing", {{"name", nullptr}}).request.body), Json({{"name", nullptr}}));
    EXPECT_EQ(built.request.method, "POST");
    EXPECT_EQ(built.request.url, "https://api.test/v1/things");
    EXPECT_EQ(Json::parse(built.request.body), Json({{"name", "box"}, {"size", 3}}));
    EXPECT_EQ(header(built, "Content-Type"), "application/json");
    EXPECT_EQ(header(built, "Authorization"), "Bearer tok-123");
    EXPECT_EQ(built.env_vars, (std::vector<std::string>{"MY_TOKEN"}));

    // With the query key set, the first alternative wins.
    env["MY_API_KEY_QUERY"] = "q&key";
    built = build("createThing", {{"name", "box"}});
    EXPECT_EQ(built.request.url, "https://api.test/v1/things?api_key=q%26key");
    EXPECT_EQ(header(built, "Authorization"), "(absent)");
}

TEST_F(OpenApiRequest, BasicAnonymousCookieAndOauth) {
    // Basic when set; the empty alternative (no credentials) when not.
    auto anonymous = build("replaceThings", {{"body", {"a", "b"}}});
    EXPECT_EQ(header(anonymous, "Authorization"), "(absent)");
    EXPECT_EQ(anonymous.request.body, R"(["a","b"])");
    env["MY_API_BASIC"] = "user:pa55word";
    auto basic = build("replaceThings", {});
    EXPECT_EQ(header(basic, "Authorization"), "Basic dXNlcjpwYTU1d29yZA==");
    EXPECT_TRUE(basic.request.body.empty());  // optional body, not given
    EXPECT_NE(std::find(basic.secrets.begin(), basic.secrets.end(), "pa55word"), basic.secrets.end());

    // Two schemes together: both sent.
    env["MY_API_KEY_COOKIE"] = "cookie-secret";
    auto both = build("clearThings", {});
    EXPECT_EQ(header(both, "X-API-Key"), "hdr-secret");
    EXPECT_EQ(header(both, "Cookie"), "sid=cookie-secret");

    env["MY_API_OAUTH"] = "oauth-token";
    EXPECT_EQ(header(build("patchThings", {}), "Authorization"), "Bearer oauth-token");
}

TEST_F(OpenApiRequest, MissingCredentialsNameTheirVariable) {
    env.clear();
    auto error = error_of([&] { build("clearThings", {}); });
    EXPECT_EQ(error["error_code"], "MISSING_API_KEY");
    EXPECT_NE(error["error"].get<std::string>().find("MY_API_KEY_COOKIE, MY_API_KEY_HEADER"), std::string::npos);
    error = error_of([&] { build("createThing", {{"name", "x"}}); });
    EXPECT_NE(error["error"].get<std::string>().find("MY_API_KEY_QUERY"), std::string::npos);
}

}  // namespace
