// The OAuth scope and introspection settings of the configuration (src/app/config.cpp):
// tools.<name>.scopes, sources.<name>.scopes, auth.profiles.<name>.scopes, auth.introspection
// and auth.token_format; their errors name the file, the line and the key.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "app/config.hpp"

using namespace toolport;
namespace fs = std::filesystem;

namespace {

class AuthScopesConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() / ("toolport-auth-scopes-" + std::to_string(::getpid()) + "-" + info->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override {
        ::unsetenv("TP_TEST_INTROSPECTION_SECRET");
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    Config load(const std::string& text) {
        auto path = (dir_ / "toolport.yaml").string();
        std::ofstream(path, std::ios::binary) << text;
        return load_config(path);
    }
    std::string error_of(const std::string& text) {
        try {
            load(text);
        } catch (const ConfigError& e) {
            return e.what();
        }
        ADD_FAILURE() << "no error for:\n" << text;
        return {};
    }

    fs::path dir_;
};

const std::string kAuth = "auth:\n  issuer: https://auth.example.com\n";
const std::string kGateway = "gateway:\n  profiles:\n    small: {tools: [\"a*\"]}\n";

}  // namespace

TEST_F(AuthScopesConfigTest, ScopesPerToolSourceAndProfileAreReadAndPublished) {
    Config c = load(kAuth + R"(  required_scopes: [mcp:tools]
  profiles:
    small: {scopes: [p:small]}
)" + kGateway + R"(tools:
  deploy: {scopes: [ops:write, ops:read], timeout_ms: 5000}
sources:
  github: {scopes: [repo:read]}
)");
    const auto& o = c.http.oauth;
    EXPECT_EQ(o.scopes.for_tool("deploy", "github"), (std::vector<std::string>{"ops:write", "ops:read", "repo:read"}));
    EXPECT_EQ(o.scopes.for_profile("small"), (std::vector<std::string>{"p:small"}));
    // The pipeline still reads the rest of the tool's section.
    ASSERT_TRUE(c.pipeline.tools.count("deploy"));
    // Without scopes_supported, every configured scope is published.
    EXPECT_EQ(o.scopes_supported,
              (std::vector<std::string>{"mcp:tools", "ops:write", "ops:read", "repo:read", "p:small"}));
}

TEST_F(AuthScopesConfigTest, ScopeErrorsNameTheKey) {
    auto msg = error_of(kAuth + "  scopes_supported: [a]\ntools:\n  deploy: {scopes: [b]}\n");
    EXPECT_NE(msg.find("toolport.yaml:5: tools.deploy.scopes: \"b\" is not in auth.scopes_supported"), std::string::npos)
        << msg;
    msg = error_of(kAuth + "sources:\n  github:\n    scopes: [\"two words\"]\n");
    EXPECT_NE(msg.find("sources.github.scopes: \"two words\" is not a scope"), std::string::npos) << msg;
    msg = error_of("tools:\n  deploy: {scopes: [a]}\n");
    EXPECT_NE(msg.find("tools.deploy.scopes: scopes are asked of OAuth access tokens"), std::string::npos) << msg;
    msg = error_of(kAuth + "  profiles:\n    big: {scopes: [a]}\n" + kGateway);
    EXPECT_NE(msg.find("auth.profiles.big: is not a profile of the gateway"), std::string::npos) << msg;
    msg = error_of(kAuth + "  profiles:\n    small: {tools: [a]}\n" + kGateway);
    EXPECT_NE(msg.find("auth.profiles.small.tools: unknown key"), std::string::npos) << msg;
    msg = error_of(kAuth + "  scopes_supported: [a]\n  profiles:\n    small: {scopes: [b]}\n" + kGateway);
    EXPECT_NE(msg.find("auth.profiles.small.scopes: \"b\" is not in auth.scopes_supported"), std::string::npos) << msg;
}

TEST_F(AuthScopesConfigTest, IntrospectionSettings) {
    ::setenv("TP_TEST_INTROSPECTION_SECRET", "s3cret", 1);
    Config c = load(kAuth + R"(  introspection:
    endpoint: https://auth.example.com/introspect
    client_id: toolport
    client_secret_env: TP_TEST_INTROSPECTION_SECRET
    auth_method: client_secret_post
    cache_max_s: 60
    negative_cache_s: 5
  token_format: opaque
)");
    const auto& i = c.http.oauth.introspection;
    EXPECT_TRUE(i.enabled);
    EXPECT_EQ(i.endpoint, "https://auth.example.com/introspect");
    EXPECT_EQ(i.client_id, "toolport");
    EXPECT_EQ(i.client_secret, "s3cret");
    EXPECT_EQ(i.auth_method, "client_secret_post");
    EXPECT_EQ(i.cache_max, std::chrono::seconds(60));
    EXPECT_EQ(i.negative_cache, std::chrono::seconds(5));
    EXPECT_TRUE(c.http.oauth.opaque_tokens);

    // `introspection:` alone: the discovered endpoint, no client authentication.
    Config bare = load(kAuth + "  introspection:\n");
    EXPECT_TRUE(bare.http.oauth.introspection.enabled);
    EXPECT_EQ(bare.http.oauth.introspection.auth_method, "none");
    EXPECT_FALSE(bare.http.oauth.opaque_tokens);
    // A client id without a method: client_secret_basic.
    Config basic = load(kAuth + "  introspection:\n    client_id: a\n    client_secret: b\n");
    EXPECT_EQ(basic.http.oauth.introspection.auth_method, "client_secret_basic");
}

TEST_F(AuthScopesConfigTest, IntrospectionErrors) {
    auto msg = error_of(kAuth + "  token_format: opaque\n");
    EXPECT_NE(msg.find("auth.token_format: opaque tokens need auth.introspection"), std::string::npos) << msg;
    msg = error_of(kAuth + "  token_format: paseto\n");
    EXPECT_NE(msg.find("auth.token_format: must be jwt or opaque"), std::string::npos) << msg;
    msg = error_of(kAuth + "  introspection:\n    endpoint: http://auth.example.com/introspect\n");
    EXPECT_NE(msg.find("auth.introspection.endpoint: must be an https:// URL"), std::string::npos) << msg;
    msg = error_of(kAuth + "  introspection:\n    client_id: a\n");
    EXPECT_NE(msg.find("client_secret_basic needs client_id and client_secret"), std::string::npos) << msg;
    msg = error_of(kAuth +
                   "  introspection:\n    client_id: a\n    client_secret: b\n    auth_method: private_key_jwt\n");
    EXPECT_NE(msg.find("auth.introspection.auth_method: must be"), std::string::npos) << msg;
    msg = error_of(kAuth + "  introspection:\n    client_id: a\n    client_secret_env: TP_TEST_INTROSPECTION_SECRET\n");
    EXPECT_NE(msg.find("environment variable TP_TEST_INTROSPECTION_SECRET is not set"), std::string::npos) << msg;
    msg = error_of(kAuth + "  introspection:\n    url: x\n");
    EXPECT_NE(msg.find("auth.introspection.url: unknown key"), std::string::npos) << msg;
}
