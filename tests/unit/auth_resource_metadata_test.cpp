// Protected Resource Metadata (RFC 9728) and the Bearer challenges of
// src/auth/resource_metadata.hpp.
#include <gtest/gtest.h>

#include "auth/resource_metadata.hpp"

using namespace toolport::auth;
using json = nlohmann::json;

TEST(ResourceMetadata, UrlInsertsTheWellKnownSegmentBeforeThePath) {
    EXPECT_EQ(resource_metadata_url("https://mcp.example.com/mcp"),
              "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
    EXPECT_EQ(resource_metadata_path("https://mcp.example.com/mcp"), "/.well-known/oauth-protected-resource/mcp");
    EXPECT_EQ(resource_metadata_url("https://mcp.example.com/tenant/a/mcp/"),
              "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/a/mcp");
    // A resource at the root: the bare well-known URL.
    EXPECT_EQ(resource_metadata_url("https://mcp.example.com"),
              "https://mcp.example.com/.well-known/oauth-protected-resource");
    EXPECT_EQ(resource_metadata_url("https://mcp.example.com/"),
              "https://mcp.example.com/.well-known/oauth-protected-resource");
    // Ports are kept, default ones are not written.
    EXPECT_EQ(resource_metadata_url("http://127.0.0.1:8080/mcp"),
              "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp");
    EXPECT_EQ(resource_metadata_url("https://mcp.example.com:443/mcp"),
              "https://mcp.example.com/.well-known/oauth-protected-resource/mcp");
}

TEST(ResourceMetadata, RefusesResourcesThatAreNotAbsoluteUrlsOrHaveAQueryOrFragment) {
    EXPECT_THROW(resource_metadata_url("mcp.example.com/mcp"), std::invalid_argument);
    EXPECT_THROW(resource_metadata_url("/mcp"), std::invalid_argument);
    EXPECT_THROW(resource_metadata_url("ftp://mcp.example.com/mcp"), std::invalid_argument);
    EXPECT_THROW(resource_metadata_url("https://mcp.example.com/mcp?x=1"), std::invalid_argument);
    EXPECT_THROW(resource_metadata_path("https://mcp.example.com/mcp#frag"), std::invalid_argument);
}

TEST(ResourceMetadata, DocumentHasTheFieldsClientsRead) {
    auto doc = protected_resource_metadata("https://mcp.example.com/mcp", {"https://auth.example.com"},
                                           {"mcp:tools", "mcp:admin"});
    EXPECT_EQ(doc, json::parse(R"({
        "resource": "https://mcp.example.com/mcp",
        "authorization_servers": ["https://auth.example.com"],
        "scopes_supported": ["mcp:tools", "mcp:admin"],
        "bearer_methods_supported": ["header"]
    })"));
    // No scopes configured: the member is left out rather than published empty.
    auto bare = protected_resource_metadata("https://mcp.example.com/mcp", {"https://auth.example.com"}, {});
    EXPECT_FALSE(bare.contains("scopes_supported"));
    EXPECT_EQ(bare["bearer_methods_supported"], json::array({"header"}));
}

TEST(ResourceMetadata, ChallengeNamesTheMetadataTheScopesAndTheError) {
    const std::string url = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp";
    EXPECT_EQ(bearer_challenge(url, {"mcp:tools"}), "Bearer resource_metadata=\"" + url + "\", scope=\"mcp:tools\"");
    EXPECT_EQ(bearer_challenge(url, {"a", "b"}, "invalid_token"),
              "Bearer error=\"invalid_token\", resource_metadata=\"" + url + "\", scope=\"a b\"");
    EXPECT_EQ(bearer_challenge(url, {}, "insufficient_scope"),
              "Bearer error=\"insufficient_scope\", resource_metadata=\"" + url + "\"");
    EXPECT_EQ(bearer_challenge("", {}), "Bearer");
    // Nothing can break out of the quoted strings.
    EXPECT_EQ(bearer_challenge("x\"y\\z\r\n", {}), "Bearer resource_metadata=\"xyz\"");
}

TEST(ResourceMetadata, ScopeTokens) {
    EXPECT_TRUE(valid_scope_token("mcp:tools"));
    EXPECT_TRUE(valid_scope_token("https://api.example.com/read"));
    EXPECT_FALSE(valid_scope_token(""));
    EXPECT_FALSE(valid_scope_token("two words"));
    EXPECT_FALSE(valid_scope_token("quote\""));
    EXPECT_FALSE(valid_scope_token("back\\slash"));
    EXPECT_FALSE(valid_scope_token("tab\t"));
    EXPECT_FALSE(valid_scope_token("caf\xc3\xa9"));
}
