// `auth:` under the sources that reach services over HTTP (providers/upstream_auth_settings.hpp,
// auth/upstream_credentials.hpp): the section's own checks, and how gateway upstreams, REST
// catalogs and OpenAPI sources read it and refuse what cannot work together (another
// Authorization header, a transport without per-request authorization, a stdio upstream).
#include <gtest/gtest.h>

#include "error_of.hpp"
#include "providers/gateway/gateway_settings.hpp"
#include "providers/openapi/openapi_settings.hpp"
#include "providers/rest/catalog_settings.hpp"
#include "providers/upstream_auth_settings.hpp"
#include "util/json.hpp"

using namespace toolport;
using providers::SourceSettings;
using test_support::error_of;

namespace {

Json exchange_auth() {
    return {{"type", "token_exchange"},
            {"token_endpoint", "https://as.example.test/token"},
            {"client_id", "toolport"},
            {"client_secret", "gateway-secret"},
            {"audience", "https://files.example.test"}};
}

gateway::GatewaySettings gateway_with(Json upstream) {
    return gateway::GatewaySettings::from(
        SourceSettings(Json{{"upstreams", {{"files", std::move(upstream)}}}}, "gateway"));
}

}  // namespace

TEST(UpstreamAuthSettingsSources, AGatewayUpstreamReadsAuth) {
    auto g = gateway_with({{"url", "https://files.example.test/mcp"}, {"auth", exchange_auth()}});
    ASSERT_TRUE(g.upstreams.at(0).auth);
    EXPECT_TRUE(g.upstreams[0].auth->exchanges());
    EXPECT_EQ(g.upstreams[0].auth->audience, "https://files.example.test");
    // The client secret is redacted from messages like the other secrets.
    auto secrets = g.upstreams[0].secrets();
    EXPECT_NE(std::find(secrets.begin(), secrets.end(), "gateway-secret"), secrets.end());
    // Without auth: nothing changes.
    EXPECT_FALSE(gateway_with({{"url", "https://files.example.test/mcp"}}).upstreams.at(0).auth);
}

TEST(UpstreamAuthSettingsSources, AGatewayUpstreamRefusesAuthWhereItCannotWork) {
    auto refused = [](Json upstream) { return error_of([&] { gateway_with(std::move(upstream)); }); };
    EXPECT_NE(refused({{"command", "node server.js"}, {"auth", exchange_auth()}}).find("auth: applies to HTTP upstreams"),
              std::string::npos);
    EXPECT_NE(refused({{"url", "https://f.example.test/sse"}, {"transport", "sse"}, {"auth", exchange_auth()}})
                  .find("Streamable HTTP upstreams only"),
              std::string::npos);
    EXPECT_NE(refused({{"url", "https://f.example.test/mcp"},
                       {"headers", {{"authorization", "Bearer x"}}},
                       {"auth", exchange_auth()}})
                  .find("headers: auth: gives this upstream its Authorization header"),
              std::string::npos);
    // Other headers (an API key) stay allowed beside it.
    EXPECT_NO_THROW(gateway_with(
        {{"url", "https://f.example.test/mcp"}, {"headers", {{"X-Api-Key", "k"}}}, {"auth", exchange_auth()}}));
    auto bad = exchange_auth();
    bad.erase("client_id");
    EXPECT_NE(refused({{"url", "https://f.example.test/mcp"}, {"auth", bad}}).find("upstreams.files.auth.client_id"),
              std::string::npos);
}

TEST(UpstreamAuthSettingsSources, ARestCatalogReadsAuthAndRefusesAnotherAuthorizationHeader) {
    Json base = {{"base_url", "https://api.example.test"}, {"auth", exchange_auth()}};
    auto s = rest::CatalogSettings::from(SourceSettings(base, "rest.api"));
    ASSERT_TRUE(s.auth);
    EXPECT_EQ(s.auth->client.client_id, "toolport");
    for (const char* key : {"headers", "headers_from_env"}) {
        Json with = base;
        with[key] = {{"Authorization", "X"}};
        EXPECT_NE(error_of([&] {
                      rest::CatalogSettings::from(SourceSettings(with, "rest.api"));
                  }).find(std::string(key) + ": auth: gives the catalog its Authorization header"),
                  std::string::npos)
            << key;
    }
    Json forwarded = base;
    forwarded["forward_headers"] = {"authorization"};
    EXPECT_NE(error_of([&] {
                  rest::CatalogSettings::from(SourceSettings(forwarded, "rest.api"));
              }).find("the caller's own token is never forwarded"),
              std::string::npos);
}

TEST(UpstreamAuthSettingsSources, AnOpenApiSourceReadsAuth) {
    Json values = {{"document", "./pets.yaml"}, {"auth", exchange_auth()}};
    values["auth"]["type"] = "client_credentials";
    auto s = openapi::OpenApiSettings::from(SourceSettings(values, "openapi.pets"));
    ASSERT_TRUE(s.auth);
    EXPECT_FALSE(s.auth->exchanges());
    values["auth"]["type"] = "bearer";
    EXPECT_NE(error_of([&] {
                  openapi::OpenApiSettings::from(SourceSettings(values, "openapi.pets"));
              }).find("openapi.pets.auth.type: must be client_credentials or token_exchange"),
              std::string::npos);
}

// auth: {type: login}: the tokens of `toolport login`, for a gateway's Streamable HTTP upstream only.
TEST(UpstreamAuthSettingsSources, AGatewayUpstreamReadsLoginAuth) {
    auto g = gateway_with({{"url", "https://files.example.test/mcp"}, {"auth", {{"type", "login"}}}});
    ASSERT_TRUE(g.upstreams.at(0).auth);
    EXPECT_EQ(g.upstreams[0].auth->type, auth::UpstreamAuthSettings::Type::login);
    EXPECT_EQ(auth::type_name(g.upstreams[0].auth->type), "login");
    EXPECT_EQ(g.upstreams[0].auth->token_store, "");  // the CLI's default store
    EXPECT_FALSE(g.upstreams[0].auth->exchanges());
    auto with_store = gateway_with({{"url", "https://files.example.test/mcp"},
                                    {"auth", {{"type", "login"}, {"token_store", "/srv/toolport/tokens.json"}}}});
    EXPECT_EQ(with_store.upstreams.at(0).auth->token_store, "/srv/toolport/tokens.json");

    auto refused = [](Json upstream) { return error_of([&] { gateway_with(std::move(upstream)); }); };
    // What the login discovered is not configured here.
    EXPECT_NE(refused({{"url", "https://f.example.test/mcp"}, {"auth", {{"type", "login"}, {"client_id", "x"}}}})
                  .find("client_id"),
              std::string::npos);
    EXPECT_NE(refused({{"url", "https://f.example.test/mcp"}, {"auth", {{"type", "login"}, {"token_store", ""}}}})
                  .find("token_store: must be a file path"),
              std::string::npos);
    EXPECT_NE(refused({{"url", "https://f.example.test/sse"}, {"transport", "sse"}, {"auth", {{"type", "login"}}}})
                  .find("Streamable HTTP upstreams only"),
              std::string::npos);
    EXPECT_NE(refused({{"url", "https://f.example.test/mcp"}, {"auth", {{"type", "oauth"}}}})
                  .find("must be client_credentials, token_exchange or login"),
              std::string::npos);
}

TEST(UpstreamAuthSettingsSources, LoginAuthIsRefusedOutsideGatewayUpstreams) {
    Json rest = {{"base_url", "https://api.example.test"}, {"auth", {{"type", "login"}}}};
    EXPECT_NE(error_of([&] {
                  rest::CatalogSettings::from(SourceSettings(rest, "rest.api"));
              }).find("login applies to gateway upstreams"),
              std::string::npos);
    Json openapi = {{"document", "./pets.yaml"}, {"auth", {{"type", "login"}}}};
    EXPECT_NE(error_of([&] {
                  openapi::OpenApiSettings::from(SourceSettings(openapi, "openapi.pets"));
              }).find("login applies to gateway upstreams"),
              std::string::npos);
}

// ---- the section itself (read_upstream_auth) -------------------------------------------

namespace {

using json = nlohmann::json;
using auth::ClientAuthentication;
using auth::UpstreamAuthSettings;
using providers::read_upstream_auth;

providers::SourceSettings auth_section(json values) {
    return providers::SourceSettings(std::move(values), "upstreams.files.auth", "toolport.yaml");
}

json valid_exchange() {
    return {{"type", "token_exchange"},
            {"token_endpoint", "https://as.example.test/token"},
            {"client_id", "toolport"},
            {"client_secret", "s"},
            {"audience", "https://files.example.test"}};
}

std::string settings_error(json values) {
    return error_of([&] { read_upstream_auth(auth_section(std::move(values))); });
}

}  // namespace

TEST(UpstreamAuthSettingsTest, ReadsAValidSection) {
    auto s = read_upstream_auth(auth_section(valid_exchange()));
    EXPECT_EQ(s.type, UpstreamAuthSettings::Type::token_exchange);
    EXPECT_EQ(s.client.method, ClientAuthentication::Method::client_secret_basic);  // a secret implies it
    EXPECT_EQ(s.audience, "https://files.example.test");
    EXPECT_TRUE(s.own_requests_authorized);

    auto j = valid_exchange();
    j["auth_method"] = "client_secret_post";
    j["own_requests"] = "none";
    j["scope"] = "a b";
    j["issuer"] = "https://as.example.test";
    j.erase("token_endpoint");
    s = read_upstream_auth(auth_section(j));
    EXPECT_EQ(s.client.method, ClientAuthentication::Method::client_secret_post);
    EXPECT_FALSE(s.own_requests_authorized);
    EXPECT_EQ(s.issuer, "https://as.example.test");
    EXPECT_EQ(s.scope, "a b");
}

TEST(UpstreamAuthSettingsTest, RefusesWhatCannotWork) {
    auto with = [](std::initializer_list<std::pair<const char*, json>> changes, std::vector<const char*> removed = {}) {
        auto j = valid_exchange();
        for (auto& [k, v] : changes) j[k] = v;
        for (auto* k : removed) j.erase(k);
        return j;
    };
    EXPECT_NE(settings_error(with({}, {"type"})).find("type: is required"), std::string::npos);
    EXPECT_NE(settings_error(with({{"type", "magic"}})).find("must be client_credentials or token_exchange"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"type", "headers"}})).find("static headers"), std::string::npos);
    EXPECT_NE(settings_error(with({}, {"token_endpoint"})).find("give either token_endpoint or issuer"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"issuer", "https://as.example.test"}})).find("give either"), std::string::npos);
    EXPECT_NE(settings_error(with({{"token_endpoint", "http://as.example.test/token"}})).find("https://"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"token_endpoint", "as.example.test/token"}})).find("not an absolute"),
              std::string::npos);
    EXPECT_NE(settings_error(with({}, {"client_id"})).find("client_id: is required"), std::string::npos);
    EXPECT_NE(settings_error(with({{"auth_method", "client_secret_jwt"}})).find("auth_method: must be"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"auth_method", "none"}})).find("client_secret: is not used with auth_method none"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"auth_method", "client_secret_post"}}, {"client_secret"}))
                  .find("client_secret_post needs a client_secret"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"auth_method", "private_key_jwt"}, {"private_key", "not pem"}}, {"client_secret"}))
                  .find("private_key: private_key_jwt: the private key is not an unencrypted PEM private key"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"key_id", "k"}})).find("key_id: applies to auth_method private_key_jwt only"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"own_requests", "sometimes"}})).find("must be client_credentials or none"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"type", "client_credentials"}, {"own_requests", "none"}}))
                  .find("applies to token_exchange only"),
              std::string::npos);
    EXPECT_NE(settings_error(with({{"surprise", true}})).find("surprise"), std::string::npos);
    EXPECT_NE(settings_error(with({{"private_key_file", "/nonexistent/key.pem"}, {"auth_method", "private_key_jwt"}},
                                  {"client_secret"}))
                  .find("cannot read /nonexistent/key.pem"),
              std::string::npos);
    // Messages name where the key is.
    EXPECT_NE(settings_error(with({}, {"client_id"})).find("upstreams.files.auth"), std::string::npos);
}
